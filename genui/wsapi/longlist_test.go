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

// A prompt that writes a 2,000-row list sends the client at most three times the bytes of
// the list's final state, every message valid; a runaway list of 20,000 rows ends the
// prompt at the components limit.
func TestLongLists(t *testing.T) {
	fake := fakegemini.New()
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	s := newServerWith(t, config{model: "googleai/gemini-2.5-flash", window: time.Minute,
		svc: []genui.Option{genui.WithLimits(genui.DefaultLimits())}})
	c := dial(t, s.URL)
	res, _ := c.call(1, "new_session", `{"a2uiVersion":"v0.9"}`)
	sid, _ := res.Result["session_id"].(string)

	fake.Enqueue(fakegemini.Respond(fakegemini.TextChunks(longlist.Text(2000), 4000)...))
	res, before := c.call(2, "prompt", `{"session_id":"`+sid+`","prompt":[{"type":"text","text":"my contacts"}]}`)
	if res.raw != `{"jsonrpc":"2.0","id":2,"result":{"stop_reason":"end_turn"}}` {
		t.Fatalf("prompt: %.300s", res.raw)
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
	began := time.Now()
	res, _ = c.call(3, "prompt", `{"session_id":"`+sid+`","prompt":[{"type":"text","text":"everything"}]}`)
	if res.Error == nil || !strings.Contains(res.raw, "components") {
		t.Fatalf("the runaway prompt: %.400s", res.raw)
	}
	t.Logf("20,000 rows: stopped after %v: %.300s", time.Since(began).Round(time.Millisecond), res.raw)
}
