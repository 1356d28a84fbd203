package wsapi

import (
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/transport"
	"github.com/genuiserver/genui/internal/sessionhub"
)

// Server is the WebSocket endpoints of a service: JSON-RPC 2.0 sessions on /ws, and
// interactions that yield and resume on /session/{id}.
type Server struct {
	svc          *genui.Service
	hub          *sessionhub.Hub
	path         string // of the JSON-RPC endpoint
	readLimit    int64
	maxSessions  int
	maxTurns     int
	maxBatch     int
	writeTimeout time.Duration
	origins      []string
	version      string
	log          *slog.Logger

	conns    conns
	dialects [endpoints]*dialect
}

// Option configures a Server.
type Option func(*Server)

// WithPath sets the path of the JSON-RPC endpoint (default "/ws").
func WithPath(p string) Option { return func(s *Server) { s.path = "/" + strings.Trim(p, "/") } }

// WithHub sets the hub of sessions, shared with the server's other transports that
// attach sessions to connections (default: a hub of its own, with a 5-minute reconnect
// window).
func WithHub(h *sessionhub.Hub) Option { return func(s *Server) { s.hub = h } }

// WithReadLimit sets the largest message a client may send (default 4 MiB); a larger one
// closes the connection with status 1009.
func WithReadLimit(n int64) Option { return func(s *Server) { s.readLimit = n } }

// WithLimits sets a JSON-RPC connection's limits: sessions attached to it (default 64),
// turns running at once (default 16) and requests in one batch (default 64).
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
// closes (a waiting one is kept for the reconnect window). load_session pings the
// connection holding a session the same way before it takes the session over.
func WithKeepalive(interval, timeout time.Duration) Option {
	return func(s *Server) { s.conns.pingInterval, s.conns.pingTimeout = interval, timeout }
}

// New returns the WebSocket endpoints of svc.
func New(svc *genui.Service, opts ...Option) *Server {
	s := &Server{svc: svc, path: "/ws", readLimit: 4 << 20, maxSessions: 64, maxTurns: 16, maxBatch: 64,
		writeTimeout: 10 * time.Second, version: "1.0.0", log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	if s.hub == nil {
		s.hub = sessionhub.New(svc, 5*time.Minute, s.log)
	}
	s.dialects = [endpoints]*dialect{jsonrpcEndpoint: jsonrpcDialect(s.path), yieldEndpoint: yieldDialect()}
	return s
}

// Routes is the endpoints' routes, GET /ws and GET /session/{id}, for the server to mount
// behind its middleware stack (httpapi.WithRoutes).
func (s *Server) Routes() []transport.Route {
	routes := make([]transport.Route, 0, len(s.dialects))
	for _, d := range s.dialects {
		routes = append(routes, transport.Route{Method: http.MethodGet, Pattern: d.pattern, Handler: s.handler(d),
			Name: "websocket", Errors: transport.JSON})
	}
	return routes
}

// Shutdown closes every connection with status 1001 (going away) and refuses new ones;
// the sessions they held wait for their clients to reconnect (to another replica).
// net/http's Server.Shutdown does not close hijacked connections: register it with
// RegisterOnShutdown.
func (s *Server) Shutdown() { s.conns.shutdown() }

// Conns returns the number of open connections, of both endpoints.
func (s *Server) Conns() int { return s.conns.len(endpoints) }

// JSONRPC is the /ws endpoint, whose connections it counts.
func (s *Server) JSONRPC() Endpoint { return Endpoint{s, jsonrpcEndpoint} }

// Yield is the /session/{id} endpoint, whose connections it counts.
func (s *Server) Yield() Endpoint { return Endpoint{s, yieldEndpoint} }

// Endpoint is one endpoint of a Server.
type Endpoint struct {
	s  *Server
	id endpointID
}

// Conns returns the number of the endpoint's open connections.
func (e Endpoint) Conns() int { return e.s.conns.len(e.id) }

// endpointID names an endpoint, and so the dialect its connections speak.
type endpointID int

const (
	jsonrpcEndpoint endpointID = iota // /ws
	yieldEndpoint                     // /session/{id}
	endpoints                         // the number of endpoints
)
