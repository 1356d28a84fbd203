package genui

import (
	"encoding/json"
	"testing"

	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/schemas"
)

// FuzzConversation validates and maps arbitrary conversations: no panic, and every
// validated conversation maps to model messages.
func FuzzConversation(f *testing.F) {
	for _, s := range []string{
		`[{"role":"user","parts":[{"type":"text","text":"hi"}]}]`,
		`[{"role":"model","parts":[{"type":"ui","definition":{"surfaceId":"s","root":"r","widgets":[{"id":"r","widget":{"Text":{"text":"a"}}}]}}]},{"role":"user","parts":[{"type":"uiEvent","event":{"surfaceId":"s","widgetId":"b","eventType":"onTap","isAction":true,"value":{"x":[1,2]}}},{"type":"text","text":"and"}]}]`,
		`[{"role":"user","parts":[{"type":"image","url":"https://x.test/a.png"},{"type":"image","base64":"aGk=","mimeType":"image/png"}]}]`,
		`[{"role":"user","parts":[]}]`,
		`[{"role":"user","parts":[{"type":"text","text":"hi"}]},{"role":"model","parts":[{"type":"toolCall","callId":"c1","name":"getLocation","input":{"a":1},"signature":"c2ln"},{"type":"ui","definition":{"surfaceId":"s","root":"r","widgets":[]}}]},{"role":"user","parts":[{"type":"toolResult","callId":"c1","name":"getLocation","output":{"city":"x"}},{"type":"text","text":"and"}]}]`,
		`[{"role":"user","parts":[{"type":"toolResult","callId":"p1","name":"confirm","error":"no"}]}]`,
		`[{"role":"user","parts":[{"type":"toolResult","callId":"c1","name":"a","output":1},{"type":"toolResult","callId":"c1","name":"a","output":2}]}]`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var conv []schemas.Message
		if json.Unmarshal(b, &conv) != nil {
			return
		}
		req := &schemas.GenerateRequest{SessionID: "s", Conversation: conv}
		if err := validateGenerate(req); err != nil {
			if err.Status != StatusInvalidArgument || err.Message == "" {
				t.Fatalf("unstructured error %+v", err)
			}
			return
		}
		// As the continuation of a held conversation waiting for two calls, one of
		// them answered already.
		h := &held{tag: callTag("fuzz-conv"), pending: []pendingCall{{ID: "p1", Name: "confirm"}, {ID: "p2", Name: "getLocation",
			Result: &schemas.Part{Type: schemas.PartToolResult, CallID: "p2", Name: "getLocation", Output: json.RawMessage(`1`)}}}}
		if err := checkCalls(conv, h.rules()); err != nil {
			if (err.Status != StatusInvalidArgument && err.Status != StatusAborted) || err.Details.(map[string]any)["field"] == "" {
				t.Fatalf("unstructured error %+v", err)
			}
		} else if full := h.merge(conv); h.waiting == nil {
			if _, err := toMessages(full); err != nil {
				t.Fatalf("a merged conversation failed to map: %v", err)
			}
		}
		if err := checkCalls(conv, callRules{}); err != nil {
			if err.Status != StatusInvalidArgument || err.Details.(map[string]any)["field"] == "" {
				t.Fatalf("unstructured error %+v", err)
			}
			return
		}
		msgs, err := toMessages(conv)
		if err != nil {
			t.Fatalf("validated conversation failed to map: %v", err)
		}
		if len(msgs) < len(conv) {
			t.Fatalf("%d messages mapped to %d", len(conv), len(msgs))
		}
	})
}

// FuzzHeldState: what a store holds of a conversation (read back from Redis, which other
// replicas and other versions write) is decoded into an error or into a history the
// model can read, never a panic.
func FuzzHeldState(f *testing.F) {
	for _, s := range [][3]string{
		{`{"role":"user","parts":[{"type":"text","text":"hi"}]}` + "\n" + `{"role":"model","parts":[{"type":"text","text":"Here."},{"type":"ui","definition":{"surfaceId":"s1","root":"t","widgets":[{"id":"t","widget":{"Text":{"text":"a"}}}]}}]}` + "\n", ``, ``},
		{`{"role":"model","parts":[{"type":"uiDeleted","definition":{"surfaceId":"s1"}},{"type":"toolCall","callId":"c1","name":"getLocation","input":{}}]}` + "\n", `[{"callId":"c1","name":"getLocation"}]`, `{"generate":{"catalog":{"type":"object"}}}`},
		{`{"role":"model","parts":[{"type":"ui"},{"type":"uiDeleted"}]}` + "\n", `[{"callId":"c1","name":"x","result":{"type":"toolResult","callId":"c1","name":"x","output":1}}]`, `{}`},
		{"{\n", `[`, `{`},
	} {
		f.Add([]byte(s[0]), []byte(s[1]), []byte(s[2]))
	}
	f.Fuzz(func(t *testing.T, history, pending, session []byte) {
		st := &conversation.State{Kind: "genui", History: history, Pending: pending}
		if len(session) > 0 {
			st.Session = session
		}
		if _, err := readSession("fuzz-conv", st); err != nil && AsError(err).Message == "" {
			t.Fatalf("unstructured error %+v", err)
		}
		h := &held{id: "fuzz-conv", tag: callTag("fuzz-conv"), kind: "genui"}
		if err := h.decode(st); err != nil {
			return
		}
		conv := []schemas.Message{{Role: "user", Parts: []schemas.Part{{Type: schemas.PartText, Text: "next"}}}}
		if e := checkCalls(conv, h.rules()); e != nil {
			return
		}
		full := h.merge(conv)
		_, _ = toMessages(full)
		_ = h.output()
		_ = h.liveSurfaces()
		_ = h.waitingCalls()
	})
}
