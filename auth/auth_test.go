package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firebase/genkit/go/core"
	"github.com/golang-jwt/jwt/v5"
)

const (
	aliceKey = "alice-0123456789-secret"
	bobKey   = "bob-abcdefghijklmnop-secret"
	issuer   = "https://issuer.example"
	audience = "genui"
)

var keyShape = regexp.MustCompile(`^[A-Za-z0-9_-]{16}$`)

func hashOf(key string) string {
	sum := sha256.Sum256([]byte(key))
	return hex.EncodeToString(sum[:])
}

func mustNew(t *testing.T, opts ...Option) *Authenticator {
	t.Helper()
	a, err := New(opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

// request returns a GET request with the given headers (name, value, …).
func request(target string, headers ...string) *http.Request {
	r := httptest.NewRequest(http.MethodGet, target, nil)
	for i := 0; i+1 < len(headers); i += 2 {
		r.Header.Set(headers[i], headers[i+1])
	}
	return r
}

// refused checks that err wraps ErrBadCredentials, says reason, and repeats none of the
// secrets.
func refused(t *testing.T, c Caller, err error, reason string, secrets ...string) {
	t.Helper()
	if err == nil {
		t.Fatalf("accepted as %+v, want refused", c)
	}
	if !errors.Is(err, ErrBadCredentials) {
		t.Fatalf("error %q does not wrap ErrBadCredentials", err)
	}
	if errors.Is(err, ErrNoCredentials) {
		t.Fatalf("error %q wraps ErrNoCredentials too", err)
	}
	if !strings.Contains(err.Error(), reason) {
		t.Errorf("error %q does not say %q", err, reason)
	}
	for _, s := range secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("error %q repeats the credential %q", err, s)
		}
	}
	if c != (Caller{}) {
		t.Errorf("refused request has caller %+v, want the zero caller", c)
	}
}

func TestWithAPIKeyHash(t *testing.T) {
	good := hashOf(aliceKey)
	a := mustNew(t, WithAPIKeyHash("alice", good))
	c, err := a.Check(aliceKey)
	if err != nil || c.ID != "key:alice" {
		t.Fatalf("Check = %+v, %v; want key:alice", c, err)
	}

	// Upper-case hex and surrounding spaces are accepted.
	a = mustNew(t, WithAPIKeyHash("bob.b_b@x-y", "  "+strings.ToUpper(hashOf(bobKey))+"\t"))
	if c, err := a.Check(bobKey); err != nil || c.ID != "key:bob.b_b@x-y" {
		t.Fatalf("Check = %+v, %v; want key:bob.b_b@x-y", c, err)
	}

	badNames := []string{"", "has space", "a/b", "a:b", "ключ", "a\nb", strings.Repeat("n", 65)}
	for _, name := range badNames {
		if _, err := New(WithAPIKeyHash(name, good)); err == nil {
			t.Errorf("name %q accepted", name)
		} else if !strings.Contains(err.Error(), "name") {
			t.Errorf("name %q: error %q does not mention the name", name, err)
		}
	}
	if _, err := New(WithAPIKeyHash(strings.Repeat("n", 64), good)); err != nil {
		t.Errorf("64-character name refused: %v", err)
	}

	badHashes := map[string]string{
		"not hex":      strings.Repeat("z", 64),
		"empty":        "",
		"short":        good[:62],
		"long":         good + "00",
		"odd":          good[:63],
		"inner spaces": good[:32] + " " + good[32:],
	}
	for what, h := range badHashes {
		_, err := New(WithAPIKeyHash("alice", h))
		if err == nil {
			t.Errorf("%s hash %q accepted", what, h)
			continue
		}
		if !strings.Contains(err.Error(), "64 hex digits") {
			t.Errorf("%s hash: error %q does not say what a hash is", what, err)
		}
	}

	_, err = New(WithAPIKeyHash("alice", good), WithAPIKeyHash("alice", hashOf(bobKey)))
	if err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("duplicate name: err = %v, want an error saying the name is used twice", err)
	}
	// The same hash under two names is not refused (the names are what must differ).
	if _, err := New(WithAPIKeyHash("alice", good), WithAPIKeyHash("bob", good)); err != nil {
		t.Errorf("two names, one hash: %v", err)
	}
}

func TestWithAPIKey(t *testing.T) {
	for _, key := range []string{"", "short", strings.Repeat("k", 15)} {
		_, err := New(WithAPIKey("alice", key))
		if err == nil {
			t.Errorf("key of %d characters accepted", len(key))
			continue
		}
		if !strings.Contains(err.Error(), "16") {
			t.Errorf("error %q does not say the minimum length", err)
		}
		if key != "" && strings.Contains(err.Error(), key) {
			t.Errorf("error %q repeats the key", err)
		}
	}
	key16 := strings.Repeat("k", 16)
	a := mustNew(t, WithAPIKey("alice", key16))
	if c, err := a.Check(key16); err != nil || c.ID != "key:alice" {
		t.Fatalf("16-character key: %+v, %v", c, err)
	}
	if _, err := New(WithAPIKey("bad name", aliceKey)); err == nil {
		t.Error("bad name accepted by WithAPIKey")
	}
	// Only the hash is kept.
	if got := hex.EncodeToString(a.keys[0].hash[:]); got != hashOf(key16) {
		t.Errorf("kept hash %s, want %s", got, hashOf(key16))
	}
}

func writeFile(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "keys.txt")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestWithAPIKeysFile(t *testing.T) {
	p := writeFile(t, "# API keys\n\n  alice:"+hashOf(aliceKey)+"  \n\t# bob below\r\nbob : "+hashOf(bobKey)+"\r\n\n")
	a := mustNew(t, WithAPIKeysFile(p))
	for key, id := range map[string]string{aliceKey: "key:alice", bobKey: "key:bob"} {
		c, err := a.Check(key)
		if err != nil || c.ID != id || c.Method != MethodAPIKey {
			t.Errorf("Check = %+v, %v; want %s", c, err, id)
		}
	}
	if len(a.keys) != 2 {
		t.Errorf("%d keys, want 2", len(a.keys))
	}

	t.Run("malformed line", func(t *testing.T) {
		p := writeFile(t, "# keys\nalice:"+hashOf(aliceKey)+"\n\nno-colon-here\n")
		_, err := New(WithAPIKeysFile(p))
		if err == nil || !strings.Contains(err.Error(), p+":4") {
			t.Fatalf("err = %v, want one naming %s:4", err, p)
		}
	})
	t.Run("bad hash", func(t *testing.T) {
		p := writeFile(t, "alice:"+hashOf(aliceKey)+"\nbob:xyz\n")
		_, err := New(WithAPIKeysFile(p))
		if err == nil || !strings.Contains(err.Error(), p+":2") || !strings.Contains(err.Error(), "64 hex digits") {
			t.Fatalf("err = %v, want one naming %s:2 and the hash", err, p)
		}
	})
	t.Run("bad name", func(t *testing.T) {
		p := writeFile(t, "al ice:"+hashOf(aliceKey)+"\n")
		_, err := New(WithAPIKeysFile(p))
		if err == nil || !strings.Contains(err.Error(), p+":1") {
			t.Fatalf("err = %v, want one naming %s:1", err, p)
		}
	})
	t.Run("duplicate", func(t *testing.T) {
		p := writeFile(t, "alice:"+hashOf(aliceKey)+"\nalice:"+hashOf(bobKey)+"\n")
		_, err := New(WithAPIKeysFile(p))
		if err == nil || !strings.Contains(err.Error(), p+":2") {
			t.Fatalf("err = %v, want one naming %s:2", err, p)
		}
	})
	t.Run("missing file", func(t *testing.T) {
		p := filepath.Join(t.TempDir(), "absent.txt")
		_, err := New(WithAPIKeysFile(p))
		if err == nil || !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "API keys file") {
			t.Fatalf("err = %v, want a not-exist error about the API keys file", err)
		}
	})
	t.Run("no keys", func(t *testing.T) {
		for _, content := range []string{"", "\n\n", "# only\n# comments\n"} {
			p := writeFile(t, content)
			_, err := New(WithAPIKeysFile(p))
			if err == nil || !strings.Contains(err.Error(), "no keys") {
				t.Errorf("content %q: err = %v, want 'no keys'", content, err)
			}
		}
	})
}

func TestWithAPIKeysList(t *testing.T) {
	a := mustNew(t, WithAPIKeysList(" alice:"+aliceKey+" ,, bob:"+bobKey+",key:with:colons-"+aliceKey+","))
	for key, id := range map[string]string{aliceKey: "key:alice", bobKey: "key:bob", "with:colons-" + aliceKey: "key:key"} {
		if c, err := a.Check(key); err != nil || c.ID != id {
			t.Errorf("Check(%q) = %+v, %v; want %s", key, c, err, id)
		}
	}

	// An empty list adds no key: authentication stays off.
	if a := mustNew(t, WithAPIKeysList(" , ")); a.Enabled() {
		t.Error("empty list turned authentication on")
	}

	for list, want := range map[string]string{
		"alice" + aliceKey:                       "item 1",
		"alice:" + aliceKey + ",bob:":            "item 2",
		"alice:" + aliceKey + ",bob:short":       "16",
		"alice:" + aliceKey + ",alice:" + bobKey: "twice",
	} {
		_, err := New(WithAPIKeysList(list))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("list %q: err = %v, want one saying %q", list, err, want)
			continue
		}
		for _, secret := range []string{aliceKey, bobKey, "short"} {
			if strings.Contains(err.Error(), secret) {
				t.Errorf("list %q: error %q repeats a key", list, err)
			}
		}
	}
}

func TestAuthenticateAPIKey(t *testing.T) {
	a := mustNew(t, WithAPIKey("alice", aliceKey), WithAPIKey("bob", bobKey))

	accepted := []struct {
		name  string
		r     *http.Request
		query bool
		id    string
	}{
		{"Bearer", request("/", "Authorization", "Bearer "+aliceKey), false, "key:alice"},
		{"lowercase bearer", request("/", "Authorization", "bearer "+aliceKey), false, "key:alice"},
		{"upper-case BEARER", request("/", "Authorization", "BEARER "+bobKey), false, "key:bob"},
		{"Bearer with spaces", request("/", "Authorization", "Bearer   "+bobKey+"  "), false, "key:bob"},
		{"X-API-Key", request("/", "X-API-Key", bobKey), false, "key:bob"},
		{"X-API-Key with spaces", request("/", "X-API-Key", " "+aliceKey+" "), false, "key:alice"},
		{"access_token when allowed", request("/ws?access_token=" + aliceKey), true, "key:alice"},
		{"header before query", request("/ws?access_token="+aliceKey, "X-API-Key", bobKey), true, "key:bob"},
		{"header with query allowed", request("/ws", "Authorization", "Bearer "+bobKey), true, "key:bob"},
	}
	for _, tc := range accepted {
		t.Run(tc.name, func(t *testing.T) {
			c, err := a.Authenticate(tc.r, tc.query)
			if err != nil {
				t.Fatalf("Authenticate: %v", err)
			}
			if c.ID != tc.id || c.Method != MethodAPIKey || c.Anonymous() {
				t.Fatalf("caller %+v, want %s by api_key", c, tc.id)
			}
			if !keyShape.MatchString(c.Key()) {
				t.Errorf("Key() = %q, want 16 of [A-Za-z0-9_-]", c.Key())
			}
		})
	}

	t.Run("no credentials", func(t *testing.T) {
		for name, r := range map[string]*http.Request{
			"nothing":                 request("/"),
			"access_token disallowed": request("/ws?access_token=" + aliceKey),
			"empty Bearer":            request("/", "Authorization", "Bearer "),
			"empty access_token":      request("/ws?access_token="),
		} {
			c, err := a.Authenticate(r, strings.Contains(name, "empty access"))
			if err != ErrNoCredentials || !errors.Is(err, ErrNoCredentials) {
				t.Errorf("%s: err = %v, want ErrNoCredentials", name, err)
			}
			if errors.Is(err, ErrBadCredentials) {
				t.Errorf("%s: ErrNoCredentials wraps ErrBadCredentials", name)
			}
			if c != (Caller{}) {
				t.Errorf("%s: caller %+v", name, c)
			}
		}
	})

	t.Run("refused", func(t *testing.T) {
		wrong := "wrong-key-0123456789"
		basic := base64.StdEncoding.EncodeToString([]byte("alice:" + aliceKey))
		cases := []struct {
			name   string
			r      *http.Request
			reason string
		}{
			{"unknown key", request("/", "Authorization", "Bearer "+wrong), "unknown API key"},
			{"unknown X-API-Key", request("/", "X-API-Key", wrong), "unknown API key"},
			{"Basic", request("/", "Authorization", "Basic "+basic), "Bearer"},
			{"key without scheme", request("/", "Authorization", aliceKey), "Bearer"},
			{"other scheme with key", request("/", "Authorization", "Token "+aliceKey), "Bearer"},
			// The Authorization header is the credential when present, even beside a good
			// X-API-Key.
			{"Authorization before X-API-Key", request("/", "Authorization", "Bearer "+wrong, "X-API-Key", aliceKey), "unknown API key"},
			{"Basic beside X-API-Key", request("/", "Authorization", "Basic "+basic, "X-API-Key", aliceKey), "Bearer"},
			{"key prefix", request("/", "X-API-Key", aliceKey[:len(aliceKey)-1]), "unknown API key"},
			{"key with suffix", request("/", "X-API-Key", aliceKey+"x"), "unknown API key"},
			{"three dots JWT-like", request("/", "X-API-Key", "a.b.c"), "unknown API key"},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				c, err := a.Authenticate(tc.r, true)
				refused(t, c, err, tc.reason, wrong, basic, aliceKey, bobKey)
			})
		}
	})
}

func TestCallerKey(t *testing.T) {
	a := mustNew(t, WithAPIKey("alice", aliceKey), WithAPIKey("bob", bobKey))
	c1, err := a.Check(aliceKey)
	if err != nil {
		t.Fatal(err)
	}
	c2, err := a.Check(aliceKey)
	if err != nil {
		t.Fatal(err)
	}
	b, err := a.Check(bobKey)
	if err != nil {
		t.Fatal(err)
	}
	if !keyShape.MatchString(c1.Key()) || !keyShape.MatchString(b.Key()) {
		t.Fatalf("keys %q, %q: want 16 of [A-Za-z0-9_-]", c1.Key(), b.Key())
	}
	if c1.Key() != c2.Key() {
		t.Errorf("same caller, keys %q and %q", c1.Key(), c2.Key())
	}
	if c1.Key() == b.Key() {
		t.Errorf("alice and bob share key %q", b.Key())
	}
	// The key derives from the ID alone.
	if k := (Caller{ID: "key:alice"}).Key(); k != c1.Key() {
		t.Errorf("Caller{ID: key:alice}.Key() = %q, want %q", k, c1.Key())
	}
	if k := (Caller{ID: "key:alice", Method: MethodJWT, Addr: "10.0.0.1"}).Key(); k != c1.Key() {
		t.Errorf("key depends on more than ID: %q vs %q", k, c1.Key())
	}
	if k := (Caller{}).Key(); k != "" {
		t.Errorf("anonymous Key() = %q, want empty", k)
	}
	if k := (Caller{Addr: "1.2.3.4"}).Key(); k != "" {
		t.Errorf("anonymous Key() with Addr = %q, want empty", k)
	}

	seen := map[string]string{}
	for i := range 1000 {
		id := fmt.Sprintf("jwt:https://issuer|user-%d", i)
		k := Caller{ID: id}.Key()
		if !keyShape.MatchString(k) {
			t.Fatalf("Key(%q) = %q", id, k)
		}
		if other, dup := seen[k]; dup {
			t.Fatalf("%q and %q share key %q", other, id, k)
		}
		seen[k] = id
	}
}

func TestLimitKey(t *testing.T) {
	if got := (Caller{Addr: "192.0.2.7"}).LimitKey(); got != "addr:192.0.2.7" {
		t.Errorf("anonymous LimitKey = %q, want addr:192.0.2.7", got)
	}
	if got := (Caller{}).LimitKey(); got != "addr:" {
		t.Errorf("anonymous LimitKey without Addr = %q, want addr:", got)
	}
	c := Caller{ID: "key:alice", Method: MethodAPIKey, Addr: "192.0.2.7"}
	if got := c.LimitKey(); got != c.Key() || got == "" {
		t.Errorf("LimitKey = %q, want Key %q", got, c.Key())
	}
	if (Caller{ID: "key:alice", Addr: "a"}).LimitKey() != (Caller{ID: "key:alice", Addr: "b"}).LimitKey() {
		t.Error("a known caller's LimitKey depends on its address")
	}
}

func TestDisabled(t *testing.T) {
	a := mustNew(t)
	if a.Enabled() {
		t.Fatal("Enabled() with no options")
	}
	if s := a.Schemes(); s != nil {
		t.Errorf("Schemes() = %+v, want nil", s)
	}
	for _, r := range []*http.Request{
		request("/"),
		request("/", "Authorization", "Bearer whatever"),
		request("/", "Authorization", "Basic Zm9vOmJhcg=="),
		request("/?access_token=x"),
	} {
		c, err := a.Authenticate(r, true)
		if err != nil || c != (Caller{}) || !c.Anonymous() {
			t.Errorf("Authenticate = %+v, %v; want the anonymous caller", c, err)
		}
	}
	var nilA *Authenticator
	if nilA.Enabled() {
		t.Error("nil Authenticator enabled")
	}
	if c, err := nilA.Authenticate(request("/"), false); err != nil || !c.Anonymous() {
		t.Errorf("nil Authenticator: %+v, %v", c, err)
	}
	if nilA.Schemes() != nil {
		t.Error("nil Authenticator has schemes")
	}
	// Options that add no verifier leave it off.
	if mustNew(t, WithLeeway(time.Minute)).Enabled() {
		t.Error("WithLeeway alone turned authentication on")
	}
}

func TestEnabledAndSchemes(t *testing.T) {
	secret := []byte(strings.Repeat("s", 32))
	cases := []struct {
		name string
		opts []Option
		want []Scheme
	}{
		{"keys", []Option{WithAPIKey("alice", aliceKey)}, []Scheme{{Name: "apiKey", Kind: "apiKey"}, {Name: "bearer", Kind: "http"}}},
		{"secret", []Option{WithJWTSecret(secret)}, []Scheme{{Name: "bearer", Kind: "http", BearerFormat: "JWT"}}},
		{"both", []Option{WithAPIKey("alice", aliceKey), WithJWTSecret(secret)}, []Scheme{{Name: "apiKey", Kind: "apiKey"}, {Name: "bearer", Kind: "http", BearerFormat: "JWT"}}},
		{"public key", []Option{WithJWTPublicKey(pemOf(t, &testKeys().rsa.PublicKey))}, []Scheme{{Name: "bearer", Kind: "http", BearerFormat: "JWT"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := mustNew(t, tc.opts...)
			if !a.Enabled() {
				t.Fatal("not enabled")
			}
			if got := a.Schemes(); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Schemes() = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// JWT.

type keys struct {
	rsa, rsa2   *rsa.PrivateKey
	ec, ec2     *ecdsa.PrivateKey
	ed, ed2     ed25519.PrivateKey
	ecP384      *ecdsa.PrivateKey
	generateErr error
}

var testKeys = sync.OnceValue(func() *keys {
	k := &keys{}
	var errs []error
	add := func(err error) { errs = append(errs, err) }
	var err error
	k.rsa, err = rsa.GenerateKey(rand.Reader, 2048)
	add(err)
	k.rsa2, err = rsa.GenerateKey(rand.Reader, 2048)
	add(err)
	k.ec, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	add(err)
	k.ec2, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	add(err)
	k.ecP384, err = ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	add(err)
	_, k.ed, err = ed25519.GenerateKey(rand.Reader)
	add(err)
	_, k.ed2, err = ed25519.GenerateKey(rand.Reader)
	add(err)
	k.generateErr = errors.Join(errs...)
	return k
})

func pemOf(t *testing.T, pub any) []byte {
	t.Helper()
	if err := testKeys().generateErr; err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
}

func sign(t *testing.T, m jwt.SigningMethod, key any, claims jwt.MapClaims, kid string) string {
	t.Helper()
	tok := jwt.NewWithClaims(m, claims)
	if kid != "" {
		tok.Header["kid"] = kid
	}
	s, err := tok.SignedString(key)
	if err != nil {
		t.Fatalf("signing with %s: %v", m.Alg(), err)
	}
	return s
}

// claims returns valid claims, then applies the edits: a nil value deletes a claim.
func claims(edits ...any) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{
		"iss": issuer,
		"sub": "user-1",
		"aud": audience,
		"iat": now.Unix(),
		"nbf": now.Add(-time.Minute).Unix(),
		"exp": now.Add(time.Hour).Unix(),
	}
	for i := 0; i+1 < len(edits); i += 2 {
		k := edits[i].(string)
		if edits[i+1] == nil {
			delete(c, k)
		} else {
			c[k] = edits[i+1]
		}
	}
	return c
}

func bearer(tok string) *http.Request { return request("/", "Authorization", "Bearer "+tok) }

func TestJWTSecret(t *testing.T) {
	secret := []byte("0123456789abcdef0123456789abcdef")
	for _, s := range [][]byte{nil, []byte("short"), secret[:31], append([]byte(string(secret[:31])), '\r', '\n')} {
		if _, err := New(WithJWTSecret(s)); err == nil || !strings.Contains(err.Error(), "32 bytes") {
			t.Errorf("secret of %d bytes: err = %v, want refused", len(s), err)
		}
	}
	// A trailing newline (as a secret file has) is not part of the secret.
	a := mustNew(t, WithJWTSecret(append([]byte(string(secret)), '\n')))
	c, err := a.Authenticate(bearer(sign(t, jwt.SigningMethodHS256, secret, claims(), "")), false)
	if err != nil || c.ID != "jwt:"+issuer+"|user-1" || c.Method != MethodJWT {
		t.Fatalf("HS256 = %+v, %v; want jwt:%s|user-1", c, err, issuer)
	}
	if !keyShape.MatchString(c.Key()) {
		t.Errorf("Key() = %q", c.Key())
	}

	for _, m := range []jwt.SigningMethod{jwt.SigningMethodHS384, jwt.SigningMethodHS512} {
		if c, err := a.Check(sign(t, m, secret, claims(), "")); err != nil || c.ID != "jwt:"+issuer+"|user-1" {
			t.Errorf("%s: %+v, %v", m.Alg(), c, err)
		}
	}

	// Without WithIssuer, any issuer (or none) is accepted, and becomes part of the ID.
	if c, err := a.Check(sign(t, jwt.SigningMethodHS256, secret, claims("iss", "other"), "")); err != nil || c.ID != "jwt:other|user-1" {
		t.Errorf("other issuer: %+v, %v", c, err)
	}
	if c, err := a.Check(sign(t, jwt.SigningMethodHS256, secret, claims("iss", nil), "")); err != nil || c.ID != "jwt:|user-1" {
		t.Errorf("no issuer: %+v, %v", c, err)
	}
	// Different subjects are different callers, with different keys.
	c1, _ := a.Check(sign(t, jwt.SigningMethodHS256, secret, claims("sub", "u1"), ""))
	c2, _ := a.Check(sign(t, jwt.SigningMethodHS256, secret, claims("sub", "u2"), ""))
	if c1.ID == c2.ID || c1.Key() == c2.Key() || c1.Key() == "" {
		t.Errorf("callers %+v and %+v not told apart", c1, c2)
	}

	other := sign(t, jwt.SigningMethodHS256, []byte("another-secret-another-secret-xx"), claims(), "")
	c, err = a.Check(other)
	refused(t, c, err, "signature is not valid", other, string(secret))

	// With only a JWT verifier, a credential that is not a JWT is refused as such.
	c, err = a.Check(aliceKey)
	refused(t, c, err, "not a JWT", aliceKey)
}

func TestJWTPublicKeys(t *testing.T) {
	k := testKeys()
	if k.generateErr != nil {
		t.Fatal(k.generateErr)
	}
	type kind struct {
		name   string
		method jwt.SigningMethod
		others []jwt.SigningMethod // other accepted methods with the same key
		priv   any
		wrong  any // another key of the same type
		pub    any
	}
	kinds := []kind{
		{"RSA", jwt.SigningMethodRS256, []jwt.SigningMethod{jwt.SigningMethodRS384, jwt.SigningMethodRS512, jwt.SigningMethodPS256, jwt.SigningMethodPS512}, k.rsa, k.rsa2, &k.rsa.PublicKey},
		{"ECDSA", jwt.SigningMethodES256, nil, k.ec, k.ec2, &k.ec.PublicKey},
		{"Ed25519", jwt.SigningMethodEdDSA, nil, k.ed, k.ed2, k.ed.Public()},
	}
	for _, kd := range kinds {
		t.Run(kd.name, func(t *testing.T) {
			pemKey := pemOf(t, kd.pub)
			a := mustNew(t, WithJWTPublicKey(pemKey), WithIssuer(issuer), WithAudience(audience))
			if !a.Enabled() {
				t.Fatal("not enabled")
			}
			wantID := "jwt:" + issuer + "|user-1"

			t.Run("valid", func(t *testing.T) {
				for _, m := range append([]jwt.SigningMethod{kd.method}, kd.others...) {
					tok := sign(t, m, kd.priv, claims(), "")
					c, err := a.Authenticate(bearer(tok), false)
					if err != nil {
						t.Fatalf("%s: %v", m.Alg(), err)
					}
					if c.ID != wantID || c.Method != MethodJWT || c.Anonymous() {
						t.Fatalf("%s: caller %+v, want %s by jwt", m.Alg(), c, wantID)
					}
				}
				// X-API-Key and access_token carry tokens too.
				tok := sign(t, kd.method, kd.priv, claims(), "")
				if c, err := a.Authenticate(request("/", "X-API-Key", tok), false); err != nil || c.ID != wantID {
					t.Errorf("X-API-Key: %+v, %v", c, err)
				}
				if c, err := a.Authenticate(request("/ws?access_token="+tok), true); err != nil || c.ID != wantID {
					t.Errorf("access_token: %+v, %v", c, err)
				}
				if _, err := a.Authenticate(request("/ws?access_token="+tok), false); err != ErrNoCredentials {
					t.Errorf("access_token not allowed: err = %v, want ErrNoCredentials", err)
				}
				// aud may be a list that includes the audience.
				tok = sign(t, kd.method, kd.priv, claims("aud", []string{"other", audience}), "")
				if c, err := a.Check(tok); err != nil || c.ID != wantID {
					t.Errorf("aud list: %+v, %v", c, err)
				}
				// Within the default leeway of 30s.
				tok = sign(t, kd.method, kd.priv, claims("exp", time.Now().Add(-10*time.Second).Unix()), "")
				if _, err := a.Check(tok); err != nil {
					t.Errorf("expired 10s ago, within leeway: %v", err)
				}
			})

			bad := []struct {
				name   string
				tok    string
				reason string
			}{
				{"expired", sign(t, kd.method, kd.priv, claims("exp", time.Now().Add(-time.Hour).Unix()), ""), "expired"},
				{"not yet valid", sign(t, kd.method, kd.priv, claims("nbf", time.Now().Add(time.Hour).Unix()), ""), "not valid yet"},
				{"no exp", sign(t, kd.method, kd.priv, claims("exp", nil), ""), "lacks a required claim (exp)"},
				{"wrong issuer", sign(t, kd.method, kd.priv, claims("iss", "https://evil.example"), ""), "wrong issuer"},
				{"no issuer", sign(t, kd.method, kd.priv, claims("iss", nil), ""), "lacks a required claim (iss)"},
				{"wrong audience", sign(t, kd.method, kd.priv, claims("aud", "other"), ""), "wrong audience"},
				{"no audience", sign(t, kd.method, kd.priv, claims("aud", nil), ""), "lacks a required claim (aud)"},
				{"no exp, no issuer", sign(t, kd.method, kd.priv, claims("exp", nil, "iss", nil), ""), "lacks a required claim (exp, iss)"},
				{"bad signature", sign(t, kd.method, kd.wrong, claims(), ""), "signature is not valid"},
				{"tampered payload", tamper(t, sign(t, kd.method, kd.priv, claims(), "")), "signature is not valid"},
				{"alg none", signNone(t, claims()), "signature is not valid"},
				// Algorithm confusion: the public key, known to all, used as an HMAC secret.
				{"HS256 with the public key", sign(t, jwt.SigningMethodHS256, pemKey, claims(), ""), "signature is not valid"},
				{"no sub", sign(t, kd.method, kd.priv, claims("sub", nil), ""), "no sub"},
				{"empty sub", sign(t, kd.method, kd.priv, claims("sub", ""), ""), "no sub"},
				{"malformed", "abc.def.ghi", "malformed"},
			}
			for _, tc := range bad {
				t.Run(tc.name, func(t *testing.T) {
					c, err := a.Authenticate(bearer(tc.tok), false)
					parts := strings.Split(tc.tok, ".")
					refused(t, c, err, tc.reason, append(parts[:2:2], tc.tok)...)
					if !strings.Contains(err.Error(), "token") {
						t.Errorf("error %q does not say a token was refused", err)
					}
				})
			}
		})
	}

	t.Run("key of another type", func(t *testing.T) {
		// An RSA-configured authenticator refuses ECDSA- and EdDSA-signed tokens.
		a := mustNew(t, WithJWTPublicKey(pemOf(t, &k.rsa.PublicKey)))
		for _, tok := range []string{
			sign(t, jwt.SigningMethodES256, k.ec, claims(), ""),
			sign(t, jwt.SigningMethodEdDSA, k.ed, claims(), ""),
		} {
			c, err := a.Check(tok)
			refused(t, c, err, "signature is not valid", tok)
		}
		// An ECDSA P-384 key with ES384.
		a = mustNew(t, WithJWTPublicKey(pemOf(t, &k.ecP384.PublicKey)))
		if c, err := a.Check(sign(t, jwt.SigningMethodES384, k.ecP384, claims(), "")); err != nil || c.Method != MethodJWT {
			t.Errorf("ES384: %+v, %v", c, err)
		}
	})

	t.Run("leeway", func(t *testing.T) {
		a := mustNew(t, WithJWTPublicKey(pemOf(t, k.ed.Public())), WithLeeway(0))
		tok := sign(t, jwt.SigningMethodEdDSA, k.ed, claims("exp", time.Now().Add(-10*time.Second).Unix()), "")
		c, err := a.Check(tok)
		refused(t, c, err, "expired", tok)
		a = mustNew(t, WithJWTPublicKey(pemOf(t, k.ed.Public())), WithLeeway(2*time.Hour))
		tok = sign(t, jwt.SigningMethodEdDSA, k.ed, claims("exp", time.Now().Add(-time.Hour).Unix()), "")
		if _, err := a.Check(tok); err != nil {
			t.Errorf("expired an hour ago with 2h leeway: %v", err)
		}
	})

	t.Run("keys and tokens together", func(t *testing.T) {
		a := mustNew(t, WithAPIKey("alice", aliceKey), WithJWTPublicKey(pemOf(t, &k.ec.PublicKey)))
		if c, err := a.Check(aliceKey); err != nil || c.ID != "key:alice" {
			t.Errorf("API key: %+v, %v", c, err)
		}
		if c, err := a.Check(sign(t, jwt.SigningMethodES256, k.ec, claims(), "")); err != nil || c.Method != MethodJWT {
			t.Errorf("JWT: %+v, %v", c, err)
		}
		c, err := a.Check("not-a-key-nor-a-token")
		refused(t, c, err, "unknown API key", "not-a-key-nor-a-token")
		tok := sign(t, jwt.SigningMethodES256, k.ec2, claims(), "")
		c, err = a.Check(tok)
		refused(t, c, err, "signature is not valid", tok)
	})
}

// tamper replaces the payload of tok by one naming another subject, keeping the signature.
func tamper(t *testing.T, tok string) string {
	t.Helper()
	parts := strings.Split(tok, ".")
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(payload, &m); err != nil {
		t.Fatal(err)
	}
	m["sub"] = "admin"
	payload, _ = json.Marshal(m)
	parts[1] = base64.RawURLEncoding.EncodeToString(payload)
	return strings.Join(parts, ".")
}

func signNone(t *testing.T, c jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodNone, c).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestJWTConfiguration(t *testing.T) {
	k := testKeys()
	secret := []byte(strings.Repeat("s", 32))
	rsaPEM := pemOf(t, &k.rsa.PublicKey)

	for name, opts := range map[string][]Option{
		"secret and public key": {WithJWTSecret(secret), WithJWTPublicKey(rsaPEM)},
		"two public keys":       {WithJWTPublicKey(rsaPEM), WithJWTPublicKey(pemOf(t, &k.ec.PublicKey))},
		"two secrets":           {WithJWTSecret(secret), WithJWTSecret(secret)},
	} {
		if _, err := New(opts...); err == nil || !strings.Contains(err.Error(), "one of") {
			t.Errorf("%s: err = %v, want refused", name, err)
		}
	}
	for name, opts := range map[string][]Option{
		"issuer":           {WithIssuer(issuer)},
		"audience":         {WithAudience(audience)},
		"issuer, API keys": {WithIssuer(issuer), WithAPIKey("alice", aliceKey)},
		"audience, leeway": {WithAudience(audience), WithLeeway(time.Second)},
	} {
		if _, err := New(opts...); err == nil || !strings.Contains(err.Error(), "without") {
			t.Errorf("%s without a verifier: err = %v, want refused", name, err)
		}
	}
	// The order of options does not matter.
	if _, err := New(WithIssuer(issuer), WithAudience(audience), WithJWTSecret(secret)); err != nil {
		t.Errorf("issuer before secret: %v", err)
	}

	for name, p := range map[string][]byte{
		"empty":                  nil,
		"garbage":                []byte("not a key"),
		"private key":            privatePEM(t, k.ec),
		"certificate-less block": pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: []byte{1, 2, 3}}),
	} {
		if _, err := New(WithJWTPublicKey(p)); err == nil || !strings.Contains(err.Error(), "public key") {
			t.Errorf("%s PEM: err = %v, want refused", name, err)
		}
	}
}

func privatePEM(t *testing.T, key any) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

func TestJWKS(t *testing.T) {
	k := testKeys()
	if k.generateErr != nil {
		t.Fatal(k.generateErr)
	}
	pub := &k.rsa.PublicKey
	set := map[string]any{"keys": []map[string]any{{
		"kty": "RSA",
		"kid": "key-1",
		"use": "sig",
		"alg": "RS256",
		"n":   base64.RawURLEncoding.EncodeToString(pub.N.Bytes()),
		"e":   base64.RawURLEncoding.EncodeToString(big.NewInt(int64(pub.E)).Bytes()),
	}}}
	body, err := json.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	hits := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	url := srv.URL + "/.well-known/jwks.json"

	a := mustNew(t, WithJWKS(t.Context(), url), WithIssuer(issuer), WithAudience(audience))
	mu.Lock()
	fetched := hits
	mu.Unlock()
	if fetched == 0 {
		t.Error("the JWKS was not fetched by New")
	}
	if !a.Enabled() {
		t.Fatal("not enabled")
	}
	if err := a.Ready(t.Context()); err != nil {
		t.Errorf("Ready with the JWKS fetched: %v", err)
	}
	// A JWKS that cannot be fetched: the authenticator is made, and says it is not ready.
	down := httptest.NewServer(http.NotFoundHandler())
	down.Close()
	if err := mustNew(t, WithJWKS(t.Context(), down.URL+"/jwks.json")).Ready(t.Context()); err == nil || !strings.Contains(err.Error(), "no keys fetched yet") {
		t.Errorf("Ready with a JWKS that cannot be fetched: %v", err)
	}
	if err := mustNew(t, WithAPIKey("alice", "alice-key-0123456789abcdef")).Ready(t.Context()); err != nil {
		t.Errorf("Ready with keys only: %v", err)
	}
	want := []Scheme{{Name: "bearer", Kind: "http", BearerFormat: "JWT", JWKSURL: url}}
	if got := a.Schemes(); !reflect.DeepEqual(got, want) {
		t.Errorf("Schemes() = %+v, want %+v", got, want)
	}

	tok := sign(t, jwt.SigningMethodRS256, k.rsa, claims(), "key-1")
	c, err := a.Authenticate(bearer(tok), false)
	if err != nil {
		t.Fatalf("Authenticate: %v", err)
	}
	if c.ID != "jwt:"+issuer+"|user-1" || c.Method != MethodJWT {
		t.Fatalf("caller %+v", c)
	}
	// A token without kid is checked against every key of the set.
	tok = sign(t, jwt.SigningMethodRS256, k.rsa, claims("sub", "user-2"), "")
	if c, err := a.Check(tok); err != nil || c.ID != "jwt:"+issuer+"|user-2" {
		t.Errorf("no kid: %+v, %v", c, err)
	}

	bad := []struct {
		name   string
		tok    string
		reason string
	}{
		{"expired", sign(t, jwt.SigningMethodRS256, k.rsa, claims("exp", time.Now().Add(-time.Hour).Unix()), "key-1"), "expired"},
		{"not yet valid", sign(t, jwt.SigningMethodRS256, k.rsa, claims("nbf", time.Now().Add(time.Hour).Unix()), "key-1"), "not valid yet"},
		{"no exp", sign(t, jwt.SigningMethodRS256, k.rsa, claims("exp", nil), "key-1"), "lacks a required claim (exp)"},
		{"wrong issuer", sign(t, jwt.SigningMethodRS256, k.rsa, claims("iss", "x"), "key-1"), "wrong issuer"},
		{"wrong audience", sign(t, jwt.SigningMethodRS256, k.rsa, claims("aud", "x"), "key-1"), "wrong audience"},
		{"bad signature", sign(t, jwt.SigningMethodRS256, k.rsa2, claims(), "key-1"), "signature is not valid"},
		{"alg none", signNoneKID(t, claims(), "key-1"), "signature is not valid"},
		{"HS256 with the JWK as secret", sign(t, jwt.SigningMethodHS256, body, claims(), "key-1"), "signature is not valid"},
		{"HS256 with the modulus as secret", sign(t, jwt.SigningMethodHS256, pub.N.Bytes(), claims(), "key-1"), "signature is not valid"},
		{"no sub", sign(t, jwt.SigningMethodRS256, k.rsa, claims("sub", nil), "key-1"), "no sub"},
		{"unknown kid", sign(t, jwt.SigningMethodRS256, k.rsa, claims(), "key-2"), ""},
		{"no kid, another key", sign(t, jwt.SigningMethodRS256, k.rsa2, claims(), ""), ""},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			c, err := a.Authenticate(bearer(tc.tok), false)
			parts := strings.Split(tc.tok, ".")
			refused(t, c, err, tc.reason, append(parts[:2:2], tc.tok)...)
		})
	}
}

func signNoneKID(t *testing.T, c jwt.MapClaims, kid string) string {
	t.Helper()
	tok := jwt.NewWithClaims(jwt.SigningMethodNone, c)
	tok.Header["kid"] = kid
	s, err := tok.SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestErrorsNeverRepeatCredential(t *testing.T) {
	secret := []byte(strings.Repeat("q", 40))
	a := mustNew(t, WithAPIKey("alice", aliceKey), WithJWTSecret(secret))
	creds := []string{
		"unknown-credential-zzzz",
		"x.y.z",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl",
		sign(t, jwt.SigningMethodHS256, []byte(strings.Repeat("w", 40)), claims(), ""),
		sign(t, jwt.SigningMethodHS256, secret, claims("exp", time.Now().Add(-time.Hour).Unix()), ""),
		sign(t, jwt.SigningMethodHS256, secret, claims("sub", nil), ""),
	}
	for _, cred := range creds {
		for _, r := range []*http.Request{
			bearer(cred),
			request("/", "X-API-Key", cred),
			request("/ws?access_token=" + cred),
			request("/", "Authorization", "Basic "+cred),
		} {
			_, err := a.Authenticate(r, true)
			if !errors.Is(err, ErrBadCredentials) {
				t.Errorf("err = %v, want ErrBadCredentials", err)
				continue
			}
			for _, part := range append(strings.Split(cred, "."), cred) {
				if len(part) > 1 && strings.Contains(err.Error(), part) {
					t.Errorf("error %q repeats %q", err, part)
				}
			}
		}
	}
}

// Context.

func TestContext(t *testing.T) {
	bg := context.Background()
	if c := FromContext(bg); c != (Caller{}) || !c.Anonymous() {
		t.Errorf("FromContext(background) = %+v, want anonymous", c)
	}
	alice := newCaller("key:alice", MethodAPIKey)
	alice.Addr = "192.0.2.1"
	ctx := NewContext(bg, alice)
	if got := FromContext(ctx); got != alice {
		t.Errorf("FromContext = %+v, want %+v", got, alice)
	}
	anon := Caller{Addr: "192.0.2.2"}
	if got := FromContext(NewContext(bg, anon)); got != anon {
		t.Errorf("FromContext(anonymous) = %+v, want %+v", got, anon)
	}
	// The innermost caller wins.
	bob := newCaller("key:bob", MethodAPIKey)
	if got := FromContext(NewContext(ctx, bob)); got != bob {
		t.Errorf("nested FromContext = %+v, want bob", got)
	}
}

func TestActionContext(t *testing.T) {
	bg := context.Background()
	alice := newCaller("jwt:"+issuer+"|user-1", MethodJWT)
	ctx := NewContext(bg, alice)
	ac := core.FromContext(ctx)
	want := map[string]any{"caller": "jwt:" + issuer + "|user-1", "method": "jwt"}
	if got, ok := ac["auth"].(map[string]any); !ok || !reflect.DeepEqual(got, want) {
		t.Fatalf(`core.FromContext(ctx)["auth"] = %#v, want %#v`, ac["auth"], want)
	}

	// An action context already there is kept, and not modified.
	orig := core.ActionContext{"other": "value"}
	ctx = NewContext(core.WithActionContext(bg, orig), newCaller("key:alice", MethodAPIKey))
	ac = core.FromContext(ctx)
	if ac["other"] != "value" {
		t.Errorf("existing action context lost: %#v", ac)
	}
	if got := ac["auth"].(map[string]any); got["caller"] != "key:alice" || got["method"] != "api_key" {
		t.Errorf("auth = %#v", got)
	}
	if _, ok := orig["auth"]; ok {
		t.Error("NewContext modified the action context it was given")
	}

	// The anonymous caller sets no action context.
	if ac := core.FromContext(NewContext(bg, Caller{Addr: "x"})); ac != nil {
		if _, ok := ac["auth"]; ok {
			t.Errorf("anonymous caller set auth: %#v", ac)
		}
	}
	ctx = NewContext(core.WithActionContext(bg, orig), Caller{})
	if ac := core.FromContext(ctx); !reflect.DeepEqual(ac, orig) {
		t.Errorf("anonymous caller changed the action context: %#v", ac)
	}
}

func TestScope(t *testing.T) {
	bg := context.Background()
	if got := Scope(bg, "s1"); got != "s1" {
		t.Errorf("Scope without caller = %q, want s1", got)
	}
	if got := Scope(NewContext(bg, Caller{Addr: "192.0.2.1"}), "s1"); got != "s1" {
		t.Errorf("Scope of anonymous caller = %q, want s1", got)
	}
	alice := newCaller("key:alice", MethodAPIKey)
	bob := newCaller("key:bob", MethodAPIKey)
	sa := Scope(NewContext(bg, alice), "s1")
	sb := Scope(NewContext(bg, bob), "s1")
	if sa != alice.Key()+"~s1" {
		t.Errorf("Scope(alice) = %q, want %q", sa, alice.Key()+"~s1")
	}
	if sb != bob.Key()+"~s1" {
		t.Errorf("Scope(bob) = %q, want %q", sb, bob.Key()+"~s1")
	}
	if sa == sb || sa == "s1" {
		t.Errorf("scopes not apart: %q, %q", sa, sb)
	}
	if Scope(NewContext(bg, alice), "s2") == sa {
		t.Error("different ids, same scope")
	}
	// The scope depends on the ID, not on how the caller was made.
	if got := Scope(NewContext(bg, Caller{ID: "key:alice"}), "s1"); got != sa {
		t.Errorf("Scope(Caller{ID}) = %q, want %q", got, sa)
	}
	// Stable across contexts.
	if Scope(NewContext(bg, alice), "s1") != sa {
		t.Error("scope not stable")
	}
}
