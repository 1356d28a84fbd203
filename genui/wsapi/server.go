package wsapi

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/transport"
	"github.com/genuiserver/genui/internal/sessionhub"
	"github.com/genuiserver/genui/internal/wsutil"
)

// Server is the /ws endpoint of a service.
type Server struct {
	svc          *genui.Service
	hub          *sessionhub.Hub
	path         string
	readLimit    int64
	maxSessions  int
	maxTurns     int
	maxBatch     int
	writeTimeout time.Duration
	origins      []string
	version      string
	log          *slog.Logger

	conns wsutil.Conns
}

// Option configures a Server.
type Option func(*Server)

// WithPath sets the endpoint's path (default "/ws").
func WithPath(p string) Option { return func(s *Server) { s.path = "/" + strings.Trim(p, "/") } }

// WithHub sets the hub of sessions, shared with the server's other WebSocket transports
// (default: a hub of its own, with a 5-minute reconnect window).
func WithHub(h *sessionhub.Hub) Option { return func(s *Server) { s.hub = h } }

// WithReadLimit sets the largest message a client may send (default 4 MiB); a larger one
// closes the connection with status 1009.
func WithReadLimit(n int64) Option { return func(s *Server) { s.readLimit = n } }

// WithLimits sets a connection's limits: sessions attached to it (default 64), turns
// running at once (default 16) and requests in one batch (default 64).
func WithLimits(sessions, turns, batch int) Option {
	return func(s *Server) { s.maxSessions, s.maxTurns, s.maxBatch = sessions, turns, batch }
}

// WithOrigins sets the origins (host patterns, as coder/websocket matches them; "*": any)
// allowed besides the server's own host (default: the same host only, and clients that
// send no Origin).
func WithOrigins(patterns ...string) Option { return func(s *Server) { s.origins = patterns } }

// WithVersion sets the version initialize reports (default "1.0.0", as the A2A card).
func WithVersion(v string) Option { return func(s *Server) { s.version = v } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithKeepalive sets how long a connection may be idle before the server pings it
// (default 30 s; negative: never) and how long the pong may take (default 10 s): a
// connection that does not answer is closed, and its sessions are let go as when it
// closes. load_session pings the connection holding a session the same way before it
// takes the session over.
func WithKeepalive(interval, timeout time.Duration) Option {
	return func(s *Server) { s.conns.PingInterval, s.conns.PingTimeout = interval, timeout }
}

// New returns the /ws endpoint of svc.
func New(svc *genui.Service, opts ...Option) *Server {
	s := &Server{svc: svc, path: "/ws", readLimit: 4 << 20, maxSessions: 64, maxTurns: 16, maxBatch: 64,
		writeTimeout: 10 * time.Second, version: "1.0.0", log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	if s.hub == nil {
		s.hub = sessionhub.New(svc, 5*time.Minute, s.log)
	}
	return s
}

// Routes is the endpoint's route, for the server to mount behind its middleware stack
// (httpapi.WithRoutes).
func (s *Server) Routes() []transport.Route {
	return []transport.Route{{Method: http.MethodGet, Pattern: s.path, Handler: s, Name: "websocket", Errors: transport.JSON}}
}

// ServeHTTP upgrades the request to a WebSocket and serves its JSON-RPC messages until
// it closes. It authenticates no one: serve it through Routes, behind the server's
// middleware stack. A request that is not a WebSocket upgrade gets a JSON error.
//
// The connection is read on a goroutine of its own, and ServeHTTP returns: an idle
// connection then holds one shallow goroutine and no request (see wsutil.Conns.Serve).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ws, ok := wsutil.Accept(w, r, s.origins, s.path+" is a WebSocket endpoint of JSON-RPC 2.0: connect with a WebSocket client")
	if !ok {
		return
	}
	ws.SetReadLimit(s.readLimit)
	s.conns.Serve(r, ws, s.log, func(ctx context.Context) (func(websocket.MessageType, []byte), func(context.Context)) {
		c := &conn{s: s, ws: ws, ctx: ctx}
		return c.handle1, func(ctx context.Context) { s.hub.Detach(ctx, c) }
	})
}

// Alive reports whether the connection answers a ping in time (sessionhub.Prober).
func (c *conn) Alive(ctx context.Context) bool { return wsutil.Alive(ctx, c.ws, c.s.conns.Timeout()) }

// Drop closes the connection (sessionhub.Prober).
func (c *conn) Drop() { c.ws.CloseNow() }

// conn is one client's connection.
type conn struct {
	s   *Server
	ws  *websocket.Conn
	ctx context.Context // cancelled when the connection closes

	mu    sync.Mutex
	turns int
}

// handle1 handles one message the client sent.
func (c *conn) handle1(typ websocket.MessageType, data []byte) {
	if typ != websocket.MessageText {
		c.write(appendResponse(nil, nil, nil, errorf(codeInvalidRequest, "binary frames are not JSON-RPC: send each message as a text frame")))
		return
	}
	c.dispatch(data)
}

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

// dispatch handles one frame: a message or a batch of them.
func (c *conn) dispatch(data []byte) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(data, &batch); err != nil {
			c.write(appendResponse(nil, nil, nil, errorf(codeParse, "parse error: "+err.Error())))
			return
		}
		if len(batch) == 0 {
			c.write(appendResponse(nil, nil, nil, errorf(codeInvalidRequest, "an empty batch: send at least one request")))
			return
		}
		if len(batch) > c.s.maxBatch {
			c.write(appendResponse(nil, nil, nil, &rpcError{Code: codeLimit, Message: "a batch of " + itoa(len(batch)) + " messages: at most " + itoa(c.s.maxBatch) + " per batch"}))
			return
		}
		b := &batchReply{c: c, waiting: 1} // the guard, released when every request is in
		for _, raw := range batch {
			c.handle(raw, b)
		}
		b.add(nil)
		return
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		c.write(appendResponse(nil, nil, nil, errorf(codeParse, "parse error: "+err.Error())))
		return
	}
	c.handle(data, nil)
}

// handle handles one message; its response goes to b when it is part of a batch.
func (c *conn) handle(raw []byte, b *batchReply) {
	var m message
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		b.reply(c, nil).send(nil, errorf(codeInvalidRequest, "invalid request: a message must be a JSON object"))
		return
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		b.reply(c, nil).send(nil, errorf(codeInvalidRequest, "invalid request: "+err.Error()))
		return
	}
	id := m.ID
	if len(id) > 0 && !validID(id) {
		b.reply(c, nil).send(nil, errorf(codeInvalidRequest, "invalid request: id must be a string, a number or null"))
		return
	}
	if m.JSONRPC != "2.0" {
		b.reply(c, id).send(nil, errorf(codeInvalidRequest, `invalid request: jsonrpc must be "2.0"`))
		return
	}
	if len(m.Method) == 0 {
		if len(id) > 0 && (m.Result != nil || m.Error != nil) {
			c.answer(id, m.Result, m.Error)
			return
		}
		b.reply(c, id).send(nil, errorf(codeInvalidRequest, "invalid request: method is missing"))
		return
	}
	var method string
	if err := json.Unmarshal(m.Method, &method); err != nil {
		b.reply(c, id).send(nil, errorf(codeInvalidRequest, "invalid request: method must be a string"))
		return
	}
	if p := bytes.TrimSpace(m.Params); len(p) > 0 && p[0] != '{' && !isNull(p) {
		b.reply(c, id).send(nil, errorf(codeInvalidParams, "params: expected an object"))
		return
	}
	var r *reply
	if len(id) > 0 {
		r = b.reply(c, id)
	}
	c.call(method, m.Params, r)
}

func validID(id json.RawMessage) bool {
	switch id[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

// reply is where the response to one request goes: the connection, or a batch's slot.
// A notification has none (nil, or a reply without a connection when it must hold a
// session's place): its response goes nowhere.
type reply struct {
	c    *conn
	id   json.RawMessage
	b    *batchReply
	once sync.Once
}

func (r *reply) send(result []byte, err *rpcError) {
	if r == nil || r.c == nil {
		return
	}
	r.once.Do(func() {
		msg := appendResponse(nil, r.id, result, err)
		if r.b != nil {
			r.b.add(msg)
			return
		}
		r.c.write(msg)
	})
}

// batchReply gathers a batch's responses and sends them as one array when each request
// has been answered (a prompt's when its turn ends).
type batchReply struct {
	c       *conn
	mu      sync.Mutex
	slots   [][]byte
	waiting int
}

func (b *batchReply) reply(c *conn, id json.RawMessage) *reply {
	if b == nil {
		return &reply{c: c, id: id}
	}
	b.mu.Lock()
	b.waiting++
	b.mu.Unlock()
	return &reply{c: c, id: id, b: b}
}

// add adds a response (nil: releases the guard). A batch of notifications only is
// answered with nothing.
func (b *batchReply) add(msg []byte) {
	b.mu.Lock()
	if msg != nil {
		b.slots = append(b.slots, msg)
	}
	b.waiting--
	done := b.waiting == 0 && len(b.slots) > 0
	b.mu.Unlock()
	if done {
		out := append([]byte{'['}, bytes.Join(b.slots, []byte{','})...)
		b.c.write(append(out, ']'))
	}
}

// Shutdown closes every connection with status 1001 (going away) and refuses new ones;
// the sessions they held wait for their clients to reconnect (to another replica).
// net/http's Server.Shutdown does not close hijacked connections: register it with
// RegisterOnShutdown.
func (s *Server) Shutdown() { s.conns.Shutdown() }

// Conns returns the number of open connections.
func (s *Server) Conns() int { return s.conns.Len() }
