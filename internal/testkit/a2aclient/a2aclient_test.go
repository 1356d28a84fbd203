package a2aclient

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui/a2aapi"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/leaktest"
	"github.com/genuiserver/genui/internal/testkit/nodetest"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// pacedForm is what the fake Gemini writes for every request, in 20 chunks, one every
// 50 ms (a turn of about a second, long enough to be cancelled or dropped mid-stream).
const pacedForm = a2uitest.FormResponse

// newAgent serves the API and the A2A agent with the named model over real HTTP.
func newAgent(t *testing.T, model string) *httptest.Server {
	t.Helper()
	svc := servetest.Service(t, model)
	return servetest.Serve(t, svc, a2aapi.New(svc, a2aapi.WithLogger(quiet)).Routes()...)
}

// capture is what the node tests recorded of one conversation (an A2A context): every
// A2UI message the client received in it, in order, as the client read it.
type capture struct {
	Name     string            `json:"name"`
	Messages []json.RawMessage `json:"messages"`
	// CreateSurfaces, when set, is how many createSurface messages the conversation must
	// hold (a resubscription after a dropped stream must not repeat one).
	CreateSurfaces *int `json:"createSurfaces"`
	// Components are ids of components the surfaces must have got, all told.
	Components []string `json:"components"`
}

// TestA2AJSSDK runs the node tests, which drive the agent with the official JavaScript
// A2A SDK (@a2a-js/sdk 0.3.x and 1.x), then validates every A2UI message they received
// against the A2UI specification.
func TestA2AJSSDK(t *testing.T) {
	node := nodetest.Require(t, "a2a-v03", "a2a-v1")

	offlineSrv := newAgent(t, offline.Name)
	fake := fakegemini.New(fakegemini.WithPacing(50*time.Millisecond), fakegemini.WithResponder(func(*fakegemini.Request) fakegemini.Reply {
		return fakegemini.Reply{Chunks: fakegemini.TextChunks(pacedForm, 20)}
	}))
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	pacedSrv := newAgent(t, "googleai/gemini-2.5-flash")

	captures := t.TempDir()
	nodetest.Run(t, node, []string{"GENUI_URL=" + offlineSrv.URL, "GENUI_PACED_URL=" + pacedSrv.URL, "A2UI_CAPTURE_DIR=" + captures},
		"v03.test.mjs", "v1.test.mjs")

	// Cancelling a running turn stops its model call: the three turns cancelled mid-turn
	// (one per A2A interface) at least; and no model call goes on.
	cancelled := 0
	wait := time.After(5 * time.Second)
	for i, r := range fake.Requests() {
		select {
		case <-r.Done():
		case <-wait:
			t.Fatalf("model call %d goes on after the tests", i)
		}
		if r.Cancelled() {
			cancelled++
		}
	}
	if cancelled < 3 {
		t.Errorf("%d of %d model calls were cancelled, want at least 3", cancelled, len(fake.Requests()))
	}

	// Each test file wrote what it captured; every SDK line must have captured A2UI.
	var all []capture
	for _, line := range []string{"v03", "v1"} {
		b, err := os.ReadFile(filepath.Join(captures, line+".json"))
		if err != nil {
			t.Fatalf("the %s tests wrote no capture: %v", line, err)
		}
		var cs []capture
		if err := json.Unmarshal(b, &cs); err != nil {
			t.Fatalf("%s capture: %v", line, err)
		}
		if len(cs) == 0 {
			t.Fatalf("the %s tests captured no conversation", line)
		}
		all = append(all, cs...)
	}
	total := 0
	for _, c := range all {
		t.Run(c.Name, func(t *testing.T) { checkCapture(t, c) })
		total += len(c.Messages)
	}
	t.Logf("validated %d A2UI messages of %d conversations", total, len(all))
}

// checkCapture validates the A2UI messages of one conversation, in order, against the
// specification and the catalogs their surfaces name.
func checkCapture(t *testing.T, c capture) {
	if len(c.Messages) == 0 {
		t.Fatal("no A2UI message")
	}
	msgs := make([][]byte, len(c.Messages))
	creates := 0
	ids := map[string]bool{}
	for i, m := range c.Messages {
		msgs[i] = m
		var d struct {
			Version          string          `json:"version"`
			CreateSurface    json.RawMessage `json:"createSurface"`
			UpdateComponents *struct {
				Components []struct {
					ID string `json:"id"`
				} `json:"components"`
			} `json:"updateComponents"`
		}
		if err := json.Unmarshal(m, &d); err != nil {
			t.Fatalf("message %d is not an object: %v: %s", i, err, m)
		}
		if d.Version != "v0.9" {
			t.Errorf("message %d: version %q, want v0.9: %s", i, d.Version, m)
		}
		if d.CreateSurface != nil {
			creates++
		}
		if d.UpdateComponents != nil {
			for _, c := range d.UpdateComponents.Components {
				ids[c.ID] = true
			}
		}
	}
	a2uitest.New(t, "v0.9", nil).CheckAll(t, msgs...)
	if c.CreateSurfaces != nil && creates != *c.CreateSurfaces {
		t.Errorf("%d createSurface messages, want %d: %s", creates, *c.CreateSurfaces, strings.Join(strs(msgs), "\n"))
	}
	for _, id := range c.Components {
		if !ids[id] {
			have := make([]string, 0, len(ids))
			for id := range ids {
				have = append(have, id)
			}
			slices.Sort(have)
			t.Errorf("component %q never came; the surfaces have %v", id, have)
		}
	}
}

func strs(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}
