package mcpapi

import (
	"context"
	"log/slog"
	"net/http"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/transport"
)

// Server is the MCP endpoint of a service.
type Server struct {
	svc     *genui.Service
	path    string
	version string
	log     *slog.Logger
	mcp     *mcp.Server
	handler http.Handler
	turns   Turns
	// appTools declares the app's tools to the conversations generate_ui opens.
	appTools bool
}

// Option configures a Server.
type Option func(*Server)

// WithPath sets the endpoint's path (default "/mcp").
func WithPath(p string) Option { return func(s *Server) { s.path = "/" + strings.Trim(p, "/") } }

// WithVersion sets the version the server gives in its serverInfo (default "1.0.0").
func WithVersion(v string) Option { return func(s *Server) { s.version = v } }

// WithTurns sets where the running turns are found by their app (default: in this
// process, [NewMemoryTurns]); replicas sharing a Redis share [NewRedisTurns].
func WithTurns(t Turns) Option { return func(s *Server) { s.turns = t } }

// WithoutAppTools leaves the app's tools (get_user_context, get_location) out of the
// conversations generate_ui opens: the model then never waits for the app to run one.
func WithoutAppTools() Option { return func(s *Server) { s.appTools = false } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// New returns the MCP endpoint of svc.
func New(svc *genui.Service, opts ...Option) *Server {
	s := &Server{svc: svc, path: "/mcp", version: "1.0.0", log: slog.Default(), appTools: true}
	for _, o := range opts {
		o(s)
	}
	if s.turns == nil {
		s.turns = NewMemoryTurns(10000)
	}
	// The SDK logs each stateless request's session at INFO: the service logs its turns.
	sdkLog := slog.New(warnings{s.log.Handler()})
	caps := &mcp.ServerCapabilities{}
	caps.AddExtension(uiExtension, nil) // MCP Apps
	s.mcp = mcp.NewServer(&mcp.Implementation{Name: "genui", Title: "GenUI", Version: s.version}, &mcp.ServerOptions{
		Capabilities: caps,
		Instructions: "generate_ui shows the user an interactive UI composed for their request; " +
			"continue a conversation with the conversationId a result gives.",
		Logger: sdkLog,
	})
	s.addTools()
	s.addApp()
	// Stateless: each request stands alone (the 2026-07-28 revision requires it, and any
	// replica then serves any call); what a conversation holds is in the service's store.
	s.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.mcp },
		&mcp.StreamableHTTPOptions{Stateless: true, Logger: sdkLog})
	return s
}

// Routes is the endpoint's route, for the server to mount behind its middleware stack
// (httpapi.WithRoutes): any method, as the Streamable HTTP transport answers POST, GET and
// DELETE itself.
func (s *Server) Routes() []transport.Route {
	return []transport.Route{{Pattern: s.path, Handler: s, Name: "mcp", Errors: transport.JSONRPC}}
}

// Path is the endpoint's path.
func (s *Server) Path() string { return s.path }

// ServeHTTP serves one request of MCP's Streamable HTTP transport. It authenticates no
// one: serve it through Routes, behind the server's middleware stack.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Responses may be SSE streams: no proxy may buffer them.
	w.Header().Set("X-Accel-Buffering", "no")
	s.handler.ServeHTTP(w, r)
}

// warnings passes on the records of WARN and above.
type warnings struct{ slog.Handler }

func (w warnings) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && w.Handler.Enabled(ctx, l)
}
func (w warnings) WithAttrs(a []slog.Attr) slog.Handler { return warnings{w.Handler.WithAttrs(a)} }
func (w warnings) WithGroup(n string) slog.Handler      { return warnings{w.Handler.WithGroup(n)} }
