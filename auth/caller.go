package auth

import (
	"context"
	"crypto/sha256"
	"encoding/base64"

	"github.com/firebase/genkit/go/core"
)

// Method is how a caller proved who it is.
type Method string

// Methods.
const (
	MethodNone   Method = ""        // authentication is off: the anonymous caller
	MethodAPIKey Method = "api_key" // an API key
	MethodJWT    Method = "jwt"     // a JWT bearer token
)

// Caller is who sent a request.
type Caller struct {
	// ID names the caller: "key:<name>" for an API key, "jwt:<iss>|<sub>" for a token;
	// "" for the anonymous caller.
	ID string
	// Method is how the caller was authenticated.
	Method Method
	// Addr is the client's address, as the server sees it (behind trusted proxies, the
	// address they forwarded).
	Addr string
	// key is the caller's storage prefix, derived from ID.
	key string
}

// Anonymous reports whether c is the caller of a server without authentication.
func (c Caller) Anonymous() bool { return c.ID == "" }

// Key returns a short name of the caller fit for storage keys and limits: 16 characters of
// [A-Za-z0-9_-] derived from ID; "" for the anonymous caller.
func (c Caller) Key() string {
	if c.key != "" || c.ID == "" {
		return c.key
	}
	return keyOf(c.ID)
}

func keyOf(id string) string {
	sum := sha256.Sum256([]byte(id))
	return base64.RawURLEncoding.EncodeToString(sum[:12])
}

func newCaller(id string, m Method) Caller { return Caller{ID: id, Method: m, key: keyOf(id)} }

type ctxKey struct{}

// LimitKey is what the caller's limits are counted by: its Key, or, for the anonymous
// caller, its address.
func (c Caller) LimitKey() string {
	if c.ID == "" {
		return "addr:" + c.Addr
	}
	return c.Key()
}

// NewContext returns ctx carrying c, also as Genkit's action context
// ({"auth":{"caller":…,"method":…}}) so that flows and actions see it.
func NewContext(ctx context.Context, c Caller) context.Context {
	ctx = context.WithValue(ctx, ctxKey{}, c)
	if c.Anonymous() {
		return ctx
	}
	ac := core.ActionContext{}
	for k, v := range core.FromContext(ctx) {
		ac[k] = v
	}
	ac["auth"] = map[string]any{"caller": c.ID, "method": string(c.Method)}
	return core.WithActionContext(ctx, ac)
}

// FromContext returns the caller ctx carries: the anonymous caller when none.
func FromContext(ctx context.Context) Caller {
	c, _ := ctx.Value(ctxKey{}).(Caller)
	return c
}

// Scope returns the key under which the caller of ctx stores the thing named id: id
// itself for the anonymous caller, else the caller's key, "~" and id.
func Scope(ctx context.Context, id string) string {
	c, _ := ctx.Value(ctxKey{}).(Caller)
	if c.ID == "" {
		return id
	}
	return c.Key() + "~" + id
}
