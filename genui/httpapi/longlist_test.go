package httpapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/longlist"
)

func sum(msgs [][]byte) int {
	n := 0
	for _, m := range msgs {
		n += len(m)
	}
	return n
}

// A list of 2,000 rows streams over NDJSON and Genkit SSE in at most three times the
// bytes of its final state, every message valid, all rows arriving; a runaway list of
// 20,000 rows ends at the components limit within seconds, with what was shown valid.
func TestLongLists(t *testing.T) {
	base, fake := newGeminiServer(t, nil)
	for _, c := range []struct {
		name   string
		header map[string]string
	}{{"ndjson", nil}, {"sse", map[string]string{"Accept": "text/event-stream"}}} {
		t.Run(c.name+" 2000 rows", func(t *testing.T) {
			fake.Enqueue(fakegemini.Respond(fakegemini.TextChunks(longlist.Text(2000), 4000)...))
			r := post(t, base+"/generateA2ui", c.header, `{"conversation":`+userText("my contacts")+`}`)
			msgs, end := a2uiLines(t, c.name, r.body)
			if r.status != 200 || !strings.Contains(end, `"result"`) {
				t.Fatalf("%d, ended with %.300s", r.status, end)
			}
			final, rows := longlist.Final(msgs)
			if rows != 2000 || sum(msgs) > 3*final {
				t.Fatalf("%d messages, %d bytes for a final state of %d bytes and %d rows", len(msgs), sum(msgs), final, rows)
			}
			t.Logf("%s: %d messages, %d bytes for a final state of %d bytes (%.2f×); body %d bytes", c.name, len(msgs), sum(msgs), final, float64(sum(msgs))/float64(final), len(r.body))
			a2uitest.New(t, "v0.9", nil).CheckAll(t, msgs...)
		})
		t.Run(c.name+" runaway", func(t *testing.T) {
			fake.Enqueue(fakegemini.Respond(fakegemini.TextChunks(longlist.Text(20000), 2000)...))
			began := time.Now()
			r := post(t, base+"/generateA2ui", c.header, `{"conversation":`+userText("everything")+`}`)
			msgs, end := a2uiLines(t, c.name, r.body)
			if !strings.Contains(end, `"RESOURCE_EXHAUSTED"`) || !strings.Contains(end, `"limit":"components"`) || !strings.Contains(end, `"value":10000`) {
				t.Fatalf("ended with %.300s", end)
			}
			final, rows := longlist.Final(msgs)
			if rows < 9000 || rows >= 10000 || sum(msgs) > 3*final {
				t.Fatalf("%d rows shown in %d bytes for a final state of %d", rows, sum(msgs), final)
			}
			t.Logf("%s runaway: stopped after %v, %d rows shown, %d bytes (%.2f× the final state)", c.name, time.Since(began).Round(time.Millisecond), rows, sum(msgs), float64(sum(msgs))/float64(final))
			a2uitest.New(t, "v0.9", nil).CheckAll(t, msgs...)
		})
	}
	t.Run("genui runaway", func(t *testing.T) {
		widgets := []any{map[string]any{"id": "root", "widget": map[string]any{"Column": map[string]any{"children": []any{}}}}}
		for i := range 20000 {
			widgets = append(widgets, map[string]any{"id": fmt.Sprint(i), "widget": map[string]any{"Text": map[string]any{"text": "row"}}})
		}
		fake.Enqueue(fakegemini.Respond(fakegemini.Text("Here."), fakegemini.FunctionCall("addOrUpdateSurface", map[string]any{"surfaceId": "s", "definition": map[string]any{"root": "root", "widgets": widgets}})))
		r := post(t, base+"/generateUi", nil, `{"catalog":`+mustJSON(t, basicCatalog(t))+`,"conversation":`+userText("everything")+`}`)
		if !strings.Contains(r.body, `"RESOURCE_EXHAUSTED"`) || !strings.Contains(r.body, `"limit":"components"`) || strings.Contains(r.body, `"toolRequest"`) {
			t.Fatalf("%.600s", r.body)
		}
	})
}

// a2uiLines returns the A2UI messages of a response, NDJSON or Genkit SSE, and its last
// line.
func a2uiLines(t *testing.T, format, body string) ([][]byte, string) {
	t.Helper()
	var msgs [][]byte
	var last string
	if format == "ndjson" {
		turn := parseA2UITurn(t, body)
		return turn.messages, turn.lines[len(turn.lines)-1]
	}
	for _, ev := range strings.Split(strings.TrimSpace(body), "\n\n") {
		last = ev
		var frame struct {
			Message struct {
				Content []struct {
					Data *struct {
						Envelopes []json.RawMessage `json:"envelopes"`
					} `json:"data"`
				} `json:"content"`
			} `json:"message"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &frame); err != nil {
			t.Fatalf("not an SSE event of JSON: %.200q", ev)
		}
		for _, c := range frame.Message.Content {
			if c.Data != nil {
				for _, m := range c.Data.Envelopes {
					msgs = append(msgs, m)
				}
			}
		}
	}
	return msgs, last
}
