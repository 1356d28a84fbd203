package wsapi_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui/offline"
)

// FuzzJSONRPCMessage: whatever a client sends, every message it gets back is JSON-RPC 2.0 (a
// response, a notification or a request of the server), and the connection goes on.
func FuzzJSONRPCMessage(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocol_version":1}}`,
		`{"jsonrpc":"2.0","id":2,"method":"new_session","params":{"cwd":"/tmp","mcp_servers":[]}}`,
		`{"jsonrpc":"2.0","id":3,"method":"prompt","params":{"session_id":"abcdefgh","prompt":[{"type":"text","text":"hi"}]}}`,
		`[{"jsonrpc":"2.0","id":1,"method":"list_sessions"},{"jsonrpc":"2.0","method":"cancel","params":{}}]`,
		`{"jsonrpc":"2.0","id":"call:x","result":{}}`,
		`{"jsonrpc":"2.0","id":1,"method":"load_session","params":{"session_id":"abcdefgh","after":-1}}`,
		`{`, `[]`, `[1]`, `null`, `"x"`, `{"jsonrpc":"2.0","id":[],"method":"x"}`,
	} {
		f.Add(seed)
	}
	s := newServer(f, offline.Name, time.Minute, nil)
	c := dial(f, s.URL)
	f.Fuzz(func(t *testing.T, in string) {
		c.t = t
		if len(in) == 0 {
			return
		}
		c.send(in)
		c.send(`{"jsonrpc":"2.0","id":"sentinel","method":"list_sessions"}`)
		for {
			raw := c.read()
			var batch []json.RawMessage
			msgs := []json.RawMessage{json.RawMessage(raw)}
			if raw[0] == '[' {
				if err := json.Unmarshal([]byte(raw), &batch); err != nil {
					t.Fatalf("not JSON: %s", raw)
				}
				msgs = batch
			}
			done := false
			for _, m := range msgs {
				var v struct {
					JSONRPC string          `json:"jsonrpc"`
					ID      json.RawMessage `json:"id"`
				}
				if err := json.Unmarshal(m, &v); err != nil || v.JSONRPC != "2.0" {
					t.Fatalf("not JSON-RPC 2.0: %s", m)
				}
				done = done || string(v.ID) == `"sentinel"`
			}
			if done {
				return
			}
		}
	})
}
