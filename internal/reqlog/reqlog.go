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
// request_id (and route) attributes, at the top level even under a logger's groups.
func Handler(h slog.Handler) slog.Handler { return &handler{cur: h, base: h} }

type handler struct {
	cur  slog.Handler // base with the derivations applied
	base slog.Handler // the wrapped handler, before any WithAttrs or WithGroup
	// derive holds the WithAttrs and WithGroup calls made on the handler, once one of
	// them was a group; nil until then.
	derive []func(slog.Handler) slog.Handler
}

func (h *handler) Enabled(ctx context.Context, l slog.Level) bool { return h.cur.Enabled(ctx, l) }

func (h *handler) Handle(ctx context.Context, r slog.Record) error {
	i := FromContext(ctx)
	if i == nil {
		return h.cur.Handle(ctx, r)
	}
	attrs := []slog.Attr{slog.String("request_id", i.ID)}
	if i.Route != "" {
		attrs = append(attrs, slog.String("route", i.Route))
	}
	if h.derive == nil {
		// r is this handler's copy; AddAttrs never writes into attributes a copy shares.
		r.AddAttrs(attrs...)
		return h.cur.Handle(ctx, r)
	}
	// Under a group: the request's attributes go on the handler before its groups.
	out := h.base.WithAttrs(attrs)
	for _, d := range h.derive {
		out = d(out)
	}
	return out.Handle(ctx, r)
}

func (h *handler) WithAttrs(as []slog.Attr) slog.Handler {
	n := &handler{cur: h.cur.WithAttrs(as), base: h.base}
	if h.derive == nil {
		n.base = n.cur // no group yet: the attributes may go first
		return n
	}
	n.derive = append(h.derive[:len(h.derive):len(h.derive)], func(x slog.Handler) slog.Handler { return x.WithAttrs(as) })
	return n
}

func (h *handler) WithGroup(name string) slog.Handler {
	d := func(x slog.Handler) slog.Handler { return x.WithGroup(name) }
	return &handler{cur: h.cur.WithGroup(name), base: h.base, derive: append(h.derive[:len(h.derive):len(h.derive)], d)}
}
