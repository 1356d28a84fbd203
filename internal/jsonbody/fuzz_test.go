package jsonbody

import (
	"testing"
	"unicode/utf8"
)

// FuzzDecode feeds arbitrary bodies to Decode: it never panics, and fails with a
// structured INVALID_ARGUMENT error; a body whose bytes are not UTF-8 gets one naming the
// field that holds them.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"a":[1,{"b":"c"}]}`, `{`, `[]`, `null`, `{"a":5}`,
		"{\"a\":[\"caf\xe9\"]}", "{\"\xff\":1}", "\xff",
	} {
		f.Add([]byte(s))
	}
	type doc struct {
		A []any `json:"a"`
	}
	s := NewSchema(doc{})
	f.Fuzz(func(t *testing.T, body []byte) {
		var d doc
		err := Decode(body, &d, s)
		if err == nil {
			return
		}
		if err.Status != "INVALID_ARGUMENT" || err.Message == "" {
			t.Fatalf("unstructured error %+v", err)
		}
		if !utf8.Valid(body) {
			if d, _ := err.Details.(map[string]any); d["field"] == nil {
				t.Fatalf("bytes not UTF-8, no field named: %+v", err)
			}
		}
	})
}
