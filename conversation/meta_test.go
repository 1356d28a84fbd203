package conversation

import "testing"

func TestMetaKeepsTheModel(t *testing.T) {
	for _, c := range []struct {
		meta, kind, model, pending string
	}{
		{"genui\n", "genui", "", ""},
		{"genui\n[{\"callId\":\"c\"}]", "genui", "", "[{\"callId\":\"c\"}]"}, // stored before the model was kept
		{"a2ui/v0.9\topenai/gpt-4.1-mini\n", "a2ui/v0.9", "openai/gpt-4.1-mini", ""},
		{"genui\tgoogleai/gemini-2.5-flash\n[1]", "genui", "googleai/gemini-2.5-flash", "[1]"},
	} {
		kind, model, pending := decodeMeta(c.meta)
		if kind != c.kind || model != c.model || string(pending) != c.pending {
			t.Errorf("decodeMeta(%q) = %q, %q, %q; want %q, %q, %q", c.meta, kind, model, pending, c.kind, c.model, c.pending)
		}
		if c.pending == "" || c.model != "" {
			if got := encodeMeta(c.kind, c.model, []byte(c.pending)); got != c.meta {
				t.Errorf("encodeMeta(%q, %q, %q) = %q; want %q", c.kind, c.model, c.pending, got, c.meta)
			}
		}
	}
}
