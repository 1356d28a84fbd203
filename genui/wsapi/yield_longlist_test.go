package wsapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/longlist"
)

// An interaction that writes a 2,000-row list sends the client at most three times the
// bytes of the list's final state, every message valid; a runaway list of 20,000 rows
// yields the failed model call with the components limit.
func TestYieldLongLists(t *testing.T) {
	fake := fakegemini.New()
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	s := newYieldServerWith(t, yieldConfig{model: "googleai/gemini-2.5-flash", window: time.Minute,
		svc: []genui.Option{genui.WithLimits(genui.DefaultLimits())}})

	fake.Enqueue(fakegemini.Respond(fakegemini.TextChunks(longlist.Text(2000), 4000)...))
	c := dialYield(t, s.URL, "long-list")
	c.send(`{"type":"init","graphId":"generateA2ui","input":{"version":"v0.9","conversation":[{"role":"user","parts":[{"type":"text","text":"my contacts"}]}]}}`)
	end, before := c.until("done", "error", "yield")
	if end.Type != "done" {
		t.Fatalf("end: %.300s", end.raw)
	}
	var msgs [][]byte
	received := 0
	for _, m := range before {
		received += len(m.raw)
		msgs = append(msgs, a2uitest.Embedded([]byte(m.raw))...)
	}
	final, rows := longlist.Final(msgs)
	if rows != 2000 || received > 3*final {
		t.Fatalf("%d rows; %d bytes received for a final state of %d", rows, received, final)
	}
	t.Logf("2,000 rows: %d bytes received in %d frames for a final state of %d (%.2f×)", received, len(before), final, float64(received)/float64(final))
	a2uitest.New(t, "v0.9", nil).CheckAll(t, msgs...)

	fake.Enqueue(fakegemini.Respond(fakegemini.TextChunks(longlist.Text(20000), 2000)...))
	c2 := dialYield(t, s.URL, "runaway-list")
	c2.send(`{"type":"init","graphId":"generateA2ui","input":{"version":"v0.9","conversation":[{"role":"user","parts":[{"type":"text","text":"everything"}]}]}}`)
	end, _ = c2.until("done", "error", "yield")
	// The model call failed: the interaction yields it, with the limit it reached.
	if end.Type != "yield" || !strings.Contains(end.raw, `"status":"RESOURCE_EXHAUSTED"`) || !strings.Contains(end.raw, `"limit":"components"`) {
		t.Fatalf("the runaway interaction ended with %.400s", end.raw)
	}
	t.Logf("20,000 rows: %.300s", end.raw)
}
