package mcpapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/mcpapi"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/longlist"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

// A tool result hands the turn's UI over whole: a 2,000-row list comes as its final
// state, one createSurface and one update of its 2,001 components, not the updates that
// streamed it; a runaway list of 20,000 rows ends the call at the components limit.
func TestLongLists(t *testing.T) {
	fake := fakegemini.New()
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	svc := servetest.Service(t, servetest.PacedModel, genui.WithLimits(genui.DefaultLimits()))
	srv := servetest.Serve(t, svc, mcpapi.New(svc, mcpapi.WithLogger(servetest.Quiet)).Routes()...)
	cs, _ := connectRecording(t, srv.URL)

	fake.Enqueue(fakegemini.Respond(fakegemini.TextChunks(longlist.Text(2000), 4000)...))
	res, out := call(t, cs, mcpapi.GenerateUI, map[string]any{"prompt": "my contacts"})
	if res.IsError {
		t.Fatalf("isError: %.300s", text(res))
	}
	whole, _ := json.Marshal(res)
	if len(out.Messages) != 2 || strings.Count(string(out.Messages[1]), `"component":"Text"`) != 2000 {
		t.Fatalf("%d messages in the result", len(out.Messages))
	}
	final := len(out.Messages[0]) + len(out.Messages[1])
	// The result carries the messages twice (content's text summary aside): as
	// structuredContent, and nothing else for a host that does not render A2UI.
	if len(whole) > 2*final {
		t.Fatalf("a result of %d bytes for a final state of %d", len(whole), final)
	}
	t.Logf("2,000 rows: a result of %d bytes for a final state of %d", len(whole), final)
	a2uitest.New(t, "v0.9", nil).CheckAll(t, out.Messages[0], out.Messages[1])

	fake.Enqueue(fakegemini.Respond(fakegemini.TextChunks(longlist.Text(20000), 2000)...))
	began := time.Now()
	r, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: mcpapi.GenerateUI, Arguments: map[string]any{"prompt": "everything"}})
	if err != nil {
		t.Fatal(err)
	}
	if !r.IsError || !strings.Contains(text(r), "components") || !strings.Contains(text(r), "10000") {
		t.Fatalf("the runaway turn: isError %v, %.300s", r.IsError, text(r))
	}
	t.Logf("20,000 rows: stopped after %v: %s", time.Since(began).Round(time.Millisecond), text(r))
}
