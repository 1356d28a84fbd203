package jsonenc

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendString(t *testing.T) {
	for in, want := range map[string]string{
		"plain":        `"plain"`,
		`q"b\`:         `"q\"b\\"`,
		"<a&b>":        `"<a&b>"`,
		"nl\n\r\t\x01": `"nl\n\r\t\u0001"`,
		"é€😀":          `"é€😀"`,
		"bad\xffutf8":  `"bad\ufffdutf8"`,
	} {
		if got := string(AppendString(nil, in)); got != want {
			t.Errorf("AppendString(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestMarshalKeepsHTML(t *testing.T) {
	b, err := Marshal(map[string]any{"t": "<b>&"})
	if err != nil || string(b) != `{"t":"<b>&"}` {
		t.Fatalf("%s %v", b, err)
	}
}

// FuzzAppendString checks that every string encodes to valid JSON that decodes back to
// the same text (invalid UTF-8 replaced).
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a", "\"\\", "\x00\x1f", "\xff", "😀", "\u2028"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := AppendString(nil, s)
		var out string
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("invalid JSON %q: %v", b, err)
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if !utf8.ValidString(s) {
			// Each invalid byte becomes one U+FFFD.
			want = ""
			for i := 0; i < len(s); {
				r, n := utf8.DecodeRuneInString(s[i:])
				if r == utf8.RuneError && n == 1 {
					want += "\uFFFD"
				} else {
					want += s[i : i+n]
				}
				i += n
			}
		}
		if out != want {
			t.Fatalf("round trip %q -> %q, want %q", s, out, want)
		}
	})
}
