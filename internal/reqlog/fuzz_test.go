package reqlog

import "testing"

// FuzzID: an incoming request id is kept only when it is 1 to 64 printable ASCII
// characters; anything else becomes a fresh id, which is always such an id.
func FuzzID(f *testing.F) {
	for _, s := range []string{"", "abc", "has space", "\x00", "é", string(make([]byte, 65))} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		id := ID(in)
		if len(id) == 0 || len(id) > 64 {
			t.Fatalf("id %q", id)
		}
		for i := 0; i < len(id); i++ {
			if id[i] < 0x21 || id[i] > 0x7e {
				t.Fatalf("id %q of %q has a byte that is not printable", id, in)
			}
		}
		if id != in && len(in) > 0 && len(in) <= 64 && printable(in) {
			t.Fatalf("a good id %q was replaced", in)
		}
	})
}

func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}
