package httpapi

import (
	"encoding/json"
	"testing"

	"github.com/genuiserver/genui/schemas"
)

// FuzzDecode feeds arbitrary bodies to the request decoders: they must never panic, and
// must either decode or return a structured INVALID_ARGUMENT error.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"data":{"sessionId":"abc","conversation":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}}`,
		`{"catalog":{"type":"object"},"conversation":[]}`,
		`{"data":{"protocolVersion":"0.1.0","catalog":{"anyOf":[{"type":"object"}]}}}`,
		`{"data":"x"}`, `[]`, `{`, `{"data":{"conversation":[{"parts":[{"text":5}]}]}}`, `null`, ` `,
		`{"data":{"conversation":[{"role":"user","parts":[{"type":"uiEvent","event":{"value":[1,{"a":null}]}}]}]}}`,
		"{\"data\":{\"sessionId\":\"a\",\"conversation\":[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"caf\xe9\"}]}]}}",
		"{\"catalog\":{\"\xff\":1},\"protocolVersion\":\"0.1.0\"}",
		`{"conversationId":"conv-12345","clientTools":[{"name":"getLocation","inputSchema":{"type":"object"}}],"conversation":[{"role":"model","parts":[{"type":"toolCall","callId":"c","name":"getLocation","input":{}}]},{"role":"user","parts":[{"type":"toolResult","callId":"c","name":"getLocation","output":[1,{"a":null}]}]}]}`,
		`{"clientTools":[{"name":5}],"conversation":[{"role":"user","parts":[{"type":"toolResult","output":null,"error":"e"}]}]}`,
		`{"version":"v0.9","a2uiClientCapabilities":{"v0.9":{"supportedCatalogIds":["x"]}},"conversationId":"conv-12345","conversation":[{"role":"model","parts":[{"type":"a2ui","message":{"version":"v0.9","deleteSurface":{"surfaceId":"s"}}}]},{"role":"user","parts":[{"type":"a2ui","message":{"version":"v0.9","action":{"name":"a"}}}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var g schemas.GenerateRequest
		if err := decode(body, &g, generateSchema); err != nil {
			if err.Status != "INVALID_ARGUMENT" || err.Message == "" {
				t.Fatalf("unstructured error %+v", err)
			}
		}
		var s schemas.StartSessionRequest
		if err := decode(body, &s, startSessionSchema); err != nil {
			if err.Status != "INVALID_ARGUMENT" || err.Message == "" {
				t.Fatalf("unstructured error %+v", err)
			}
		}
		var a schemas.GenerateA2UIRequest
		if err := decode(body, &a, generateA2UISchema); err != nil {
			if err.Status != "INVALID_ARGUMENT" || err.Message == "" {
				t.Fatalf("unstructured error %+v", err)
			}
		}
		// Anything that decoded must encode again.
		if _, err := json.Marshal(&g); err != nil {
			t.Fatal(err)
		}
		if _, err := json.Marshal(&a); err != nil {
			t.Fatal(err)
		}
	})
}
