package wsapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/offline"
)

// The rest of seed 003's methods: authenticate (the credentials came with the upgrade),
// set_session_mode (no modes), set_session_model (the server's one model), fork_session
// (not available), in both spellings.
func TestSeed003Methods(t *testing.T) {
	s := newServer(t, offline.Name, time.Minute, nil)
	c := dial(t, s.URL)
	sid := c.newSession(1, `{}`)
	model := s.svc.Model()
	for _, tc := range []struct {
		name, method, params string
		want                 string // the result, or
		code                 int    // the error's code, its message starting with msg
		msg                  string
	}{
		{"authenticate", "authenticate", `{}`, `{}`, 0, ""},
		{"authenticate with ACP's methodId", "authenticate", `{"methodId":"api-key"}`, `{}`, 0, ""},
		{"authenticate, a bad param", "authenticate", `{"methodId":5}`, "", -32602, "params.methodId: got number, want string"},
		{"set_session_model to the server's model", "set_session_model", `{"session_id":"` + sid + `","model_id":"` + model + `"}`, `{}`, 0, ""},
		{"session/set_model, ACP's spelling", "session/set_model", `{"sessionId":"` + sid + `","modelId":"` + model + `"}`, `{}`, 0, ""},
		{"set_session_model to another model", "set_session_model", `{"session_id":"` + sid + `","model_id":"gpt-9"}`, "", -32602, `params.model_id: "gpt-9" is not a model this server lets you choose; expected one of: ` + model},
		{"session/set_model to another model", "session/set_model", `{"sessionId":"` + sid + `","modelId":"gpt-9"}`, "", -32602, `params.modelId: "gpt-9" is not a model this server lets you choose`},
		{"set_session_model without a model", "set_session_model", `{"session_id":"` + sid + `"}`, "", -32602, "params.model_id: required"},
		{"set_session_model without a session", "set_session_model", `{"model_id":"` + model + `"}`, "", -32602, "params.session_id: required"},
		{"set_session_model of an unknown session", "set_session_model", `{"session_id":"nope-nope-nope","model_id":"` + model + `"}`, "", -32001, "session not found"},
		{"set_session_mode", "set_session_mode", `{"session_id":"` + sid + `","mode_id":"code"}`, "", -32602, `params.mode_id: unknown mode "code": this agent has no session modes`},
		{"session/set_mode", "session/set_mode", `{"sessionId":"` + sid + `","modeId":"ask"}`, "", -32602, `params.modeId: unknown mode "ask"`},
		{"set_session_mode without a mode", "set_session_mode", `{"session_id":"` + sid + `"}`, "", -32602, "params.mode_id: required"},
		{"set_session_mode of an unknown session", "set_session_mode", `{"session_id":"nope-nope-nope","mode_id":"code"}`, "", -32001, "session not found"},
		{"fork_session", "fork_session", `{"session_id":"` + sid + `"}`, "", -32601, "fork_session is not available"},
		{"session/fork", "session/fork", `{"sessionId":"` + sid + `"}`, "", -32601, "fork_session is not available"},
		{"fork_session without a session", "fork_session", `{}`, "", -32602, "params.session_id: required"},
		{"fork_session of an unknown session", "fork_session", `{"session_id":"nope-nope-nope"}`, "", -32001, "session not found"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, before := c.call(1, tc.method, tc.params)
			if len(before) > 0 {
				t.Fatalf("before the response: %s", before[0].raw)
			}
			if tc.code == 0 {
				if res.raw != `{"jsonrpc":"2.0","id":1,"result":`+tc.want+`}` {
					t.Fatalf("got %s, want the result %s", res.raw, tc.want)
				}
				return
			}
			if res.Error == nil || res.Error.Code != tc.code || !strings.HasPrefix(res.Error.Message, tc.msg) {
				t.Fatalf("got %s, want code %d with %q", res.raw, tc.code, tc.msg)
			}
			if tc.code == -32601 && res.Error.Data["status"] != "UNIMPLEMENTED" {
				t.Fatalf("data: %s", res.raw)
			}
		})
	}
	// The session is intact.
	res, _ := c.call(2, "prompt", `{"session_id":"`+sid+`","prompt":[{"type":"text","text":"Hello"}]}`)
	if res.Error != nil {
		t.Fatal(res.raw)
	}
}

// A stored session that cannot be read (seed 004's "session state inconsistent"): an
// internal error, and the session is deleted, not kept as this connection's.
func TestInconsistentSession(t *testing.T) {
	convs := conversation.NewMemory(100, 1<<20, time.Hour)
	const corrupt = "corrupt-session-1"
	_, hold, err := convs.Begin(context.Background(), corrupt)
	if err != nil {
		t.Fatal(err)
	}
	if err := hold.Commit(context.Background(), conversation.Update{Kind: "a2ui", Session: []byte("{not json")}); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, offline.Name, time.Minute, nil, genui.WithConversations(convs))
	c := dial(t, s.URL)
	res, _ := c.call(0, "load_session", `{"session_id":"`+corrupt+`"}`)
	if res.Error == nil || res.Error.Code != -32603 || res.Error.Message != "session: the stored session cannot be read" {
		t.Fatalf("load_session: %s", res.raw)
	}
	// It is deleted: the next load finds no session.
	if res, _ := c.call(1, "resume_session", `{"session_id":"`+corrupt+`"}`); res.Error == nil || res.Error.Code != -32001 {
		t.Fatalf("resume_session: %s", res.raw)
	}
	if st, _ := convs.Peek(context.Background(), corrupt); st != nil && st.Session != nil {
		t.Fatalf("the store still holds the session: %q", st.Session)
	}
	res, _ = c.call(9, "list_sessions", `{}`)
	if res.raw != `{"jsonrpc":"2.0","id":9,"result":{"sessions":[]}}` {
		t.Fatalf("list_sessions: %s", res.raw)
	}
	if n := s.hub.Len(); n != 0 {
		t.Fatalf("%d sessions in the hub", n)
	}
}
