package auth

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"strings"
	"time"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

// ErrNoCredentials reports a request that carries no credential.
var ErrNoCredentials = errors.New("credentials required: send Authorization: Bearer <key or token>, or X-API-Key")

// ErrBadCredentials reports a credential that is not accepted. The errors Authenticate
// returns wrap it, saying why, never repeating the credential.
var ErrBadCredentials = errors.New("invalid credentials")

// An Authenticator checks the credentials of requests. The zero of its options turns
// authentication off: every request is the anonymous caller.
type Authenticator struct {
	keys      []apiKey
	keyfunc   jwt.Keyfunc
	methods   []string // JWT signing methods accepted
	issuer    string
	audience  string
	jwksURL   string
	leeway    time.Duration
	jwtSource string // "jwks", "public_key" or "secret", for the agent card
	jwks      keyfunc.Keyfunc
}

type apiKey struct {
	name string
	hash [sha256.Size]byte
}

// Option configures an Authenticator.
type Option func(*Authenticator) error

var keyName = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,64}$`)

// WithAPIKeyHash accepts the API key whose SHA-256 is hexHash, as caller "key:<name>".
func WithAPIKeyHash(name, hexHash string) Option {
	return func(a *Authenticator) error {
		if !keyName.MatchString(name) {
			return fmt.Errorf("API key name %q: 1 to 64 of A-Z a-z 0-9 . _ @ -", name)
		}
		b, err := hex.DecodeString(strings.TrimSpace(hexHash))
		if err != nil || len(b) != sha256.Size {
			return fmt.Errorf("API key %q: the hash must be 64 hex digits of SHA-256", name)
		}
		k := apiKey{name: name}
		copy(k.hash[:], b)
		for _, o := range a.keys {
			if o.name == name {
				return fmt.Errorf("API key %q: the name is used twice", name)
			}
		}
		a.keys = append(a.keys, k)
		return nil
	}
}

// WithAPIKey accepts key itself (only its SHA-256 is kept), as caller "key:<name>".
func WithAPIKey(name, key string) Option {
	sum := sha256.Sum256([]byte(key))
	if len(key) < 16 {
		return func(*Authenticator) error { return fmt.Errorf("API key %q: at least 16 characters", name) }
	}
	return WithAPIKeyHash(name, hex.EncodeToString(sum[:]))
}

// WithAPIKeysFile accepts the keys of a file of "name:sha256-hex" lines; blank lines and
// lines starting with # are skipped.
func WithAPIKeysFile(path string) Option {
	return func(a *Authenticator) error {
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("API keys file: %w", err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		n, line := 0, 0
		for sc.Scan() {
			line++
			l := strings.TrimSpace(sc.Text())
			if l == "" || strings.HasPrefix(l, "#") {
				continue
			}
			name, hash, ok := strings.Cut(l, ":")
			if !ok {
				return fmt.Errorf("API keys file %s:%d: expected name:sha256-hex", path, line)
			}
			if err := WithAPIKeyHash(strings.TrimSpace(name), hash)(a); err != nil {
				return fmt.Errorf("API keys file %s:%d: %w", path, line, err)
			}
			n++
		}
		if n == 0 {
			return fmt.Errorf("API keys file %s: no keys", path)
		}
		return nil
	}
}

// WithAPIKeysList accepts the keys of a "name:key,name:key" list (as in GENUI_API_KEYS).
func WithAPIKeysList(list string) Option {
	return func(a *Authenticator) error {
		for i, item := range strings.Split(list, ",") {
			item = strings.TrimSpace(item)
			if item == "" {
				continue
			}
			name, key, ok := strings.Cut(item, ":")
			if !ok || key == "" {
				return fmt.Errorf("API keys list, item %d: expected name:key", i+1)
			}
			if err := WithAPIKey(name, key)(a); err != nil {
				return err
			}
		}
		return nil
	}
}

// WithJWKS verifies JWTs with the keys of the JWKS at url, fetched now, cached, refreshed
// hourly and when a token names an unknown key; ctx ends the refreshing.
func WithJWKS(ctx context.Context, url string) Option {
	return func(a *Authenticator) error {
		kf, err := keyfunc.NewDefaultOverrideCtx(ctx, []string{url}, keyfunc.Override{RefreshInterval: time.Hour})
		if err != nil {
			return fmt.Errorf("JWKS %s: %w", url, err)
		}
		a.jwks = kf
		return a.setJWT(kf.Keyfunc, "jwks", url, "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA")
	}
}

// WithJWTPublicKey verifies JWTs with a PEM public key: RSA, ECDSA or Ed25519.
func WithJWTPublicKey(pem []byte) Option {
	return func(a *Authenticator) error {
		if k, err := jwt.ParseRSAPublicKeyFromPEM(pem); err == nil {
			return a.setJWT(func(*jwt.Token) (any, error) { return k, nil }, "public_key", "", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
		}
		if k, err := jwt.ParseECPublicKeyFromPEM(pem); err == nil {
			return a.setJWT(func(*jwt.Token) (any, error) { return k, nil }, "public_key", "", "ES256", "ES384", "ES512")
		}
		if k, err := jwt.ParseEdPublicKeyFromPEM(pem); err == nil {
			return a.setJWT(func(*jwt.Token) (any, error) { return k, nil }, "public_key", "", "EdDSA")
		}
		return errors.New("JWT public key: not a PEM RSA, ECDSA or Ed25519 public key")
	}
}

// WithJWTSecret verifies JWTs signed with HMAC (HS256, HS384, HS512) and secret.
func WithJWTSecret(secret []byte) Option {
	return func(a *Authenticator) error {
		secret = bytes.TrimRight(secret, "\r\n")
		if len(secret) < 32 {
			return errors.New("JWT secret: at least 32 bytes")
		}
		return a.setJWT(func(*jwt.Token) (any, error) { return secret, nil }, "secret", "", "HS256", "HS384", "HS512")
	}
}

// WithIssuer requires JWTs to have iss issuer.
func WithIssuer(issuer string) Option {
	return func(a *Authenticator) error { a.issuer = issuer; return nil }
}

// WithAudience requires JWTs to have aud include audience.
func WithAudience(audience string) Option {
	return func(a *Authenticator) error { a.audience = audience; return nil }
}

// WithLeeway allows clocks to differ by d when checking exp and nbf (default 30s).
func WithLeeway(d time.Duration) Option {
	return func(a *Authenticator) error { a.leeway = d; return nil }
}

func (a *Authenticator) setJWT(kf jwt.Keyfunc, source, url string, methods ...string) error {
	if a.keyfunc != nil {
		return errors.New("JWT: configure one of a JWKS URL, a public key or a secret")
	}
	a.keyfunc, a.jwtSource, a.jwksURL, a.methods = kf, source, url, methods
	return nil
}

// New returns an Authenticator; with no key and no JWT verifier, authentication is off.
func New(opts ...Option) (*Authenticator, error) {
	a := &Authenticator{leeway: 30 * time.Second}
	for _, o := range opts {
		if err := o(a); err != nil {
			return nil, err
		}
	}
	if a.keyfunc == nil && (a.issuer != "" || a.audience != "") {
		return nil, errors.New("JWT issuer or audience set without a JWKS URL, public key or secret")
	}
	return a, nil
}

// Ready reports whether the authenticator can verify credentials: with a JWKS URL, that
// its keys were fetched (a JWKS that could not be fetched is fetched again when a token
// names a key, at most every five minutes, and hourly).
func (a *Authenticator) Ready(ctx context.Context) error {
	if a == nil || a.jwks == nil {
		return nil
	}
	keys, err := a.jwks.Storage().KeyReadAll(ctx)
	if err != nil {
		return fmt.Errorf("JWKS %s: %w", a.jwksURL, err)
	}
	if len(keys) == 0 {
		return fmt.Errorf("JWKS %s: no keys fetched yet; tokens are refused until it answers", a.jwksURL)
	}
	return nil
}

// Enabled reports whether requests must carry credentials.
func (a *Authenticator) Enabled() bool { return a != nil && (len(a.keys) > 0 || a.keyfunc != nil) }

// Credential returns the credential a request carries: the Authorization bearer value,
// else X-API-Key, else, when query is true, the access_token query parameter.
func Credential(r *http.Request, query bool) string {
	if h := r.Header.Get("Authorization"); h != "" {
		if scheme, v, ok := strings.Cut(h, " "); ok && strings.EqualFold(scheme, "Bearer") {
			return strings.TrimSpace(v)
		}
		return "\x00" // a scheme other than Bearer: never accepted
	}
	if v := r.Header.Get("X-API-Key"); v != "" {
		return strings.TrimSpace(v)
	}
	if query {
		return r.URL.Query().Get("access_token")
	}
	return ""
}

// CredentialField names where r's credential is (or should be): Authorization, X-API-Key
// or, when query is true and it is there, access_token.
func CredentialField(r *http.Request, query bool) string {
	switch {
	case r.Header.Get("Authorization") != "":
		return "Authorization"
	case r.Header.Get("X-API-Key") != "":
		return "X-API-Key"
	case query && r.URL.Query().Has("access_token"):
		return "access_token"
	}
	return "Authorization"
}

// Authenticate returns the caller of r. query says whether the access_token query
// parameter may carry the credential (endpoints that upgrade to WebSocket). With
// authentication off it returns the anonymous caller. Errors are ErrNoCredentials or wrap
// ErrBadCredentials.
func (a *Authenticator) Authenticate(r *http.Request, query bool) (Caller, error) {
	if !a.Enabled() {
		return Caller{}, nil
	}
	return a.Check(Credential(r, query))
}

// Check returns the caller whose credential cred is: an API key or a JWT.
func (a *Authenticator) Check(cred string) (Caller, error) {
	if cred == "" {
		return Caller{}, ErrNoCredentials
	}
	if cred == "\x00" {
		return Caller{}, fmt.Errorf("%w: the Authorization scheme must be Bearer", ErrBadCredentials)
	}
	if len(a.keys) > 0 {
		sum := sha256.Sum256([]byte(cred))
		found := -1
		for i := range a.keys {
			// Every key is compared, in constant time, whichever matches.
			if subtle.ConstantTimeCompare(sum[:], a.keys[i].hash[:]) == 1 {
				found = i
			}
		}
		if found >= 0 {
			return newCaller("key:"+a.keys[found].name, MethodAPIKey), nil
		}
	}
	if a.keyfunc != nil && strings.Count(cred, ".") == 2 {
		return a.checkJWT(cred)
	}
	if a.keyfunc != nil && len(a.keys) == 0 {
		return Caller{}, fmt.Errorf("%w: not a JWT", ErrBadCredentials)
	}
	return Caller{}, fmt.Errorf("%w: unknown API key", ErrBadCredentials)
}

func (a *Authenticator) checkJWT(tok string) (Caller, error) {
	opts := []jwt.ParserOption{jwt.WithValidMethods(a.methods), jwt.WithLeeway(a.leeway), jwt.WithExpirationRequired()}
	if a.issuer != "" {
		opts = append(opts, jwt.WithIssuer(a.issuer))
	}
	if a.audience != "" {
		opts = append(opts, jwt.WithAudience(a.audience))
	}
	var claims jwt.RegisteredClaims
	if _, err := jwt.ParseWithClaims(tok, &claims, a.keyfunc, opts...); err != nil {
		return Caller{}, fmt.Errorf("%w: token %s", ErrBadCredentials, jwtReason(err))
	}
	if claims.Subject == "" {
		return Caller{}, fmt.Errorf("%w: token has no sub", ErrBadCredentials)
	}
	return newCaller("jwt:"+claims.Issuer+"|"+claims.Subject, MethodJWT), nil
}

// jwtReason says why a token was refused, in words that never repeat it.
func jwtReason(err error) string {
	switch {
	case errors.Is(err, jwt.ErrTokenExpired):
		return "expired"
	case errors.Is(err, jwt.ErrTokenNotValidYet):
		return "not valid yet (nbf)"
	case errors.Is(err, jwt.ErrTokenRequiredClaimMissing):
		return "lacks a required claim" + missingClaims(err)
	case errors.Is(err, jwt.ErrTokenInvalidIssuer):
		return "has the wrong issuer"
	case errors.Is(err, jwt.ErrTokenInvalidAudience):
		return "has the wrong audience"
	case errors.Is(err, jwt.ErrTokenSignatureInvalid), errors.Is(err, jwt.ErrTokenUnverifiable):
		return "signature is not valid"
	case errors.Is(err, jwt.ErrTokenMalformed):
		return "is malformed"
	}
	return "is not valid"
}

// missingClaims names, as " (exp, iss)", the claims err says a token lacks: exp always
// required, iss and aud when an issuer or audience is. jwt's messages never repeat the
// token.
func missingClaims(err error) string {
	var missing []string
	for _, c := range []string{"exp", "iss", "aud"} {
		if strings.Contains(err.Error(), c+" claim is required") {
			missing = append(missing, c)
		}
	}
	if len(missing) == 0 {
		return ""
	}
	return " (" + strings.Join(missing, ", ") + ")"
}

// Scheme is a security scheme an agent card advertises.
type Scheme struct {
	Name string // "apiKey", "bearer"
	// Kind: "apiKey" (header X-API-Key) or "http" bearer (format JWT when tokens are
	// accepted).
	Kind         string
	BearerFormat string
	JWKSURL      string
}

// Schemes returns the security schemes in use: none when authentication is off.
func (a *Authenticator) Schemes() []Scheme {
	var out []Scheme
	if !a.Enabled() {
		return nil
	}
	if len(a.keys) > 0 {
		out = append(out, Scheme{Name: "apiKey", Kind: "apiKey"})
	}
	if a.keyfunc != nil {
		out = append(out, Scheme{Name: "bearer", Kind: "http", BearerFormat: "JWT", JWKSURL: a.jwksURL})
	} else {
		out = append(out, Scheme{Name: "bearer", Kind: "http"})
	}
	return out
}
