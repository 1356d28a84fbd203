package genui

import (
	"encoding/json"
	"testing"

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
		msgs, err := toMessages(conv)
		if err != nil {
			t.Fatalf("validated conversation failed to map: %v", err)
		}
		if len(msgs) < len(conv) {
			t.Fatalf("%d messages mapped to %d", len(conv), len(msgs))
		}
	})
}
