package auth

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// FuzzCheck feeds arbitrary credentials (API keys, JWTs, garbage) and headers to an
// authenticator with keys and an HMAC verifier: it never panics, accepts only the key or a
// token it signed, and its errors never repeat the credential.
func FuzzCheck(f *testing.F) {
	secret := []byte("a-secret-of-at-least-32-bytes-long!")
	tok, _ := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": "u", "iss": "i", "exp": 4102444800}).SignedString(secret)
	for _, s := range []string{"", "alice-key-0123456789abcdef", tok, "a.b.c", "Bearer x", "\x00", strings.Repeat(".", 3), tok[:len(tok)-2]} {
		f.Add(s, "Bearer "+s)
	}
	a, err := New(WithAPIKey("alice", "alice-key-0123456789abcdef"), WithJWTSecret(secret))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, cred, header string) {
		c, err := a.Check(cred)
		switch {
		case err == nil && cred == "alice-key-0123456789abcdef":
			if c.ID != "key:alice" {
				t.Fatalf("the key's caller: %+v", c)
			}
		case err == nil:
			if c.Method != MethodJWT || c.ID != "jwt:i|u" {
				t.Fatalf("accepted %q as %+v", cred, c)
			}
		case len(cred) >= 8 && strings.Contains(err.Error(), cred):
			t.Fatalf("the error repeats the credential: %v", err)
		}
		r := httptest.NewRequest("GET", "/ws", nil)
		r.Header["Authorization"] = []string{header}
		_, _ = a.Authenticate(r, true)
	})
}
