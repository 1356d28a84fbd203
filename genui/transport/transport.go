package transport

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/genuiserver/genui/genui"
)

// A Route is one endpoint of a transport.
type Route struct {
	// Method is the HTTP method it answers ("" for any).
	Method string
	// Pattern is its path, in net/http's syntax: "/a2a", "/session/{id}",
	// "/a2a/v1/rest/{rest...}". A handler reads a wildcard with r.PathValue.
	Pattern string
	// Handler serves it, behind the server's middleware stack.
	Handler http.Handler
	// Open routes need no credentials: an agent card, a health check.
	Open bool
	// Name is the transport in metrics and logs ("a2a", "agui", "mcp", "websocket").
	Name string
	// Errors writes the refusals of the middleware stack (no credentials, a body over the
	// limit, a panic) as the route's protocol writes its own errors.
	Errors ErrorWriter
}

// An ErrorWriter writes an error as a protocol answers one: its status, headers and body.
type ErrorWriter interface {
	WriteError(w http.ResponseWriter, r *http.Request, e *genui.Error)
}

// ErrorWriterFunc is an ErrorWriter of a function.
type ErrorWriterFunc func(w http.ResponseWriter, r *http.Request, e *genui.Error)

// WriteError calls f.
func (f ErrorWriterFunc) WriteError(w http.ResponseWriter, r *http.Request, e *genui.Error) {
	f(w, r, e)
}

type markKey struct{}

// Mark returns ctx marked as passed through the server's middleware stack. Only the stack
// calls it.
func Mark(ctx context.Context) context.Context { return context.WithValue(ctx, markKey{}, true) }

// Marked reports whether ctx passed through the middleware stack.
func Marked(ctx context.Context) bool { return ctx.Value(markKey{}) != nil }

// ServeHTTP serves the route's handler, if the request passed through the middleware
// stack: a route mounted without it (and so without authentication) answers 500.
func (rt Route) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !Marked(r.Context()) {
		slog.ErrorContext(r.Context(), "a route is mounted without the middleware stack: refusing its request", "pattern", rt.Pattern)
		e := &genui.Error{Status: genui.StatusInternal, Message: "internal error"}
		if rt.Errors != nil {
			rt.Errors.WriteError(w, r, e)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusInternalServerError)
		_, _ = w.Write([]byte(`{"error":{"status":"INTERNAL","message":"internal error"}}` + "\n"))
		return
	}
	rt.Handler.ServeHTTP(w, r)
}
