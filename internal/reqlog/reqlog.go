package reqlog

import (
	"context"
	"log/slog"

	"github.com/genuiserver/genui/internal/ids"
)

// Info is what a request's log lines say of it.
type Info struct {
	ID        string // the request id
	Route     string // the route pattern, e.g. /generateUi
	Transport string // ndjson, sse, json, a2a, agui, ws, …; set once known
}

type ctxKey struct{}

// NewContext returns ctx carrying info.
func NewContext(ctx context.Context, info *Info) context.Context {
	return context.WithValue(ctx, ctxKey{}, info)
}

// FromContext returns the request info ctx carries, or nil.
func FromContext(ctx context.Context) *Info {
	i, _ := ctx.Value(ctxKey{}).(*Info)
	return i
}

// ID returns an incoming request id when it is 1 to 64 printable ASCII characters, else a
// new one.
func ID(incoming string) string {
	if n := len(incoming); n > 0 && n <= 64 {
		ok := true
		for i := 0; i < n; i++ {
			if c := incoming[i]; c < 0x21 || c > 0x7e {
				ok = false
				break
			}
		}
		if ok {
			return incoming
		}
	}
	return ids.New()
}

// Handler wraps h: a record logged with a context that carries request info gets its
// request_id (and route) attributes.
func Handler(h slog.Handler) slog.Handler { return &handler{h} }

type handler struct{ slog.Handler }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	if i := FromContext(ctx); i != nil {
		// r is this handler's copy; AddAttrs never writes into attributes a copy shares.
		r.AddAttrs(slog.String("request_id", i.ID))
		if i.Route != "" {
			r.AddAttrs(slog.String("route", i.Route))
		}
	}
	return h.Handler.Handle(ctx, r)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler { return &handler{h.Handler.WithAttrs(as)} }
func (h *handler) WithGroup(name string) slog.Handler    { return &handler{h.Handler.WithGroup(name)} }
