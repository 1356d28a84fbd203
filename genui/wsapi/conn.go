package wsapi

import (
	"context"
	"net/http"

	"github.com/coder/websocket"
)

// A dialect is the protocol of one endpoint: JSON-RPC 2.0 (protocol_jsonrpc.go) or yield
// and resume (protocol_yield.go). The runtime accepts, reads, writes, pings, counts and
// closes its connections; the dialect reads their messages.
type dialect struct {
	id endpointID
	// pattern is the endpoint's path, in net/http's syntax.
	pattern string
	// notUpgrade answers a request that is not a WebSocket upgrade.
	notUpgrade string
	// admit, when set, checks a request before the upgrade: it writes the refusal and
	// reports false.
	admit func(w http.ResponseWriter, r *http.Request) bool
	// open returns the handler of c, a connection accepted for r.
	open func(c conn, r *http.Request) handler
}

// A handler reads the messages of one connection, in order, in its dialect. It owns the
// connection's sessions in the hub: a sessionhub.Prober, through the conn it embeds.
type handler interface {
	handle(typ websocket.MessageType, data []byte)
}

// conn is one client's connection, as every dialect has it.
type conn struct {
	s   *Server
	ws  *websocket.Conn
	ctx context.Context // cancelled when the connection closes
}

// handler serves d's endpoint.
func (s *Server) handler(d *dialect) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, d) })
}

// serve upgrades the request to a WebSocket and serves its messages in d until it
// closes. It authenticates no one: serve it through Routes, behind the server's
// middleware stack. A request that is not a WebSocket upgrade gets a JSON error.
//
// The connection is read on a goroutine of its own, and serve returns: an idle
// connection then holds one shallow goroutine and no request (see conns.serve).
func (s *Server) serve(w http.ResponseWriter, r *http.Request, d *dialect) {
	if d.admit != nil && !d.admit(w, r) {
		return
	}
	ws, ok := accept(w, r, s.origins, d.notUpgrade)
	if !ok {
		return
	}
	ws.SetReadLimit(s.readLimit)
	s.conns.serve(r, ws, d.id, s.log,
		func(ctx context.Context) handler { return d.open(conn{s: s, ws: ws, ctx: ctx}, r) },
		s.detach)
}

// detach lets go of the sessions of a connection that closed.
func (s *Server) detach(ctx context.Context, h handler) { s.hub.Detach(ctx, h) }

// write sends one message; it reports false when the connection failed.
func (c *conn) write(b []byte) bool {
	ctx, cancel := context.WithTimeout(c.ctx, c.s.writeTimeout)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		c.ws.CloseNow()
		return false
	}
	return true
}

// Alive reports whether the connection answers a ping in time (sessionhub.Prober).
func (c *conn) Alive(ctx context.Context) bool { return c.s.conns.alive(ctx, c.ws) }

// Drop closes the connection (sessionhub.Prober).
func (c *conn) Drop() { c.ws.CloseNow() }
