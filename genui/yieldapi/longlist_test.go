package yieldapi_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/a2uitest"
	"github.com/genuiserver/genui/internal/fakegemini"
)

// An interaction that writes a 2,000-row list sends the client at most three times the
// bytes of the list's final state, every message valid; a runaway list of 20,000 rows
// yields the failed model call with the components limit.
func TestLongLists(t *testing.T) {
	fake := fakegemini.New()
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	s := newServerWith(t, config{model: "googleai/gemini-2.5-flash", window: time.Minute,
		svc: []genui.Option{genui.WithLimits(genui.DefaultLimits())}})

	fake.Enqueue(fakegemini.Respond(fakegemini.TextChunks(a2uitest.LongList(2000), 4000)...))
	c := dial(t, s.URL, "long-list")
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
	raw := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		raw[i] = m
	}
	final, rows := 0, 0
	for _, m := range a2ui.Final(a2ui.V09, raw) {
		final += len(m)
		rows += strings.Count(string(m), `"component":"Text"`)
	}
	if rows != 2000 || received > 3*final {
		t.Fatalf("%d rows; %d bytes received for a final state of %d", rows, received, final)
	}
	t.Logf("2,000 rows: %d bytes received in %d frames for a final state of %d (%.2f×)", received, len(before), final, float64(received)/float64(final))
	a2uitest.New(t, "v0.9", nil).CheckAll(t, msgs...)

	fake.Enqueue(fakegemini.Respond(fakegemini.TextChunks(a2uitest.LongList(20000), 20000)...))
	c2 := dial(t, s.URL, "runaway-list")
	c2.send(`{"type":"init","graphId":"generateA2ui","input":{"version":"v0.9","conversation":[{"role":"user","parts":[{"type":"text","text":"everything"}]}]}}`)
	end, _ = c2.until("done", "error", "yield")
	// The model call failed: the interaction yields it, with the limit it reached.
	if end.Type != "yield" || !strings.Contains(end.raw, `"status":"RESOURCE_EXHAUSTED"`) || !strings.Contains(end.raw, `"limit":"components"`) {
		t.Fatalf("the runaway interaction ended with %.400s", end.raw)
	}
	t.Logf("20,000 rows: %.300s", end.raw)
}
