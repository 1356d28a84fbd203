package wsapi_test

import (
	"encoding/json"
	"testing"
	"time"
)

// FuzzYieldMessage: whatever a client sends, every message it gets back is one of the
// protocol's, and the connection goes on.
func FuzzYieldMessage(f *testing.F) {
	for _, seed := range []string{
		initWithTool,
		`{"type":"resume","result":{"type":"success","value":{"city":"Lisbon"}}}`,
		`{"type":"resume","result":{"type":"error","message":"no"}}`,
		`{"type":"reconnect","sessionId":"fuzz-session-1"}`,
		`{"type":"init","graphId":"generateA2ui","input":{"conversation":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}}`,
		`{"type":"ping"}`, `{`, `[]`, `null`, `{"type":5}`,
	} {
		f.Add(seed)
	}
	s := newYieldServer(f, time.Minute)
	c := dialYield(f, s.URL, "fuzz-session-1")
	f.Fuzz(func(t *testing.T, in string) {
		c.t = t
		if len(in) == 0 {
			return
		}
		c.send(in)
		c.send(`{"type":"ping"}`)
		for {
			m := c.next()
			switch m.Type {
			case "pong":
				return
			case "progress", "yield", "done", "error":
			default:
				t.Fatalf("unknown message: %s", m.raw)
			}
			var v map[string]any
			if json.Unmarshal([]byte(m.raw), &v) != nil {
				t.Fatalf("not JSON: %s", m.raw)
			}
		}
	})
}
