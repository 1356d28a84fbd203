package a2aapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	legacy "github.com/a2aproject/a2a-go/a2a"
	legacysrv "github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/a2ui/spec"
	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/transport"
)

// Paths of the A2A endpoints, under the agent's path (default /a2a): A2A v0.3 JSON-RPC at
// the path itself (the card's url), A2A 1.0 JSON-RPC at <path>/v1, A2A 1.0 HTTP+JSON at
// <path>/v1/rest. The agent card is at /.well-known/agent-card.json and at
// <path>/.well-known/agent-card.json.
const (
	pathV1     = "/v1"
	pathV1REST = "/v1/rest"
)

// Server serves the A2A agent of a genui Service.
type Server struct {
	schemes   []auth.Scheme
	svc       *genui.Service
	tasks     TaskStore
	path      string
	publicURL string
	name      string
	version   string
	keepalive time.Duration
	bodyLimit int64
	log       *slog.Logger
}

// Option configures a Server.
type Option func(*Server)

// WithTaskStore sets where tasks are kept (default: in memory, 10,000 tasks expiring an
// hour after their last use).
func WithTaskStore(t TaskStore) Option { return func(s *Server) { s.tasks = t } }

// WithPath sets the path of the agent's A2A v0.3 JSON-RPC endpoint (default "/a2a").
func WithPath(p string) Option {
	return func(s *Server) { s.path = "/" + strings.Trim(p, "/") }
}

// WithPublicURL sets the URL clients reach the server at (e.g. https://ui.example.com,
// behind a proxy), of which the card's URLs are made; default: the scheme and Host of
// each card request.
func WithPublicURL(u string) Option {
	return func(s *Server) { s.publicURL = strings.TrimRight(u, "/") }
}

// WithSecuritySchemes advertises on the card the security schemes requests must use (see
// auth.Authenticator.Schemes); none: the agent is open.
func WithSecuritySchemes(schemes ...auth.Scheme) Option {
	return func(s *Server) { s.schemes = schemes }
}

// WithVersion sets the agent's version on its card (default "1.0.0").
func WithVersion(v string) Option { return func(s *Server) { s.version = v } }

// WithKeepalive sets the interval of SSE keep-alive comments while a stream is silent
// (default 15 s; 0: off).
func WithKeepalive(d time.Duration) Option { return func(s *Server) { s.keepalive = d } }

// WithBodyLimit sets the largest accepted request body (default 20 MiB).
func WithBodyLimit(n int64) Option { return func(s *Server) { s.bodyLimit = n } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// New returns the A2A agent of svc.
func New(svc *genui.Service, opts ...Option) *Server {
	s := &Server{svc: svc, path: "/a2a", name: "genui", version: "1.0.0", keepalive: 15 * time.Second, bodyLimit: 20 << 20, log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	if s.tasks == nil {
		s.tasks = NewMemoryTasks(10000, time.Hour)
	}
	return s
}

// Routes are the agent's routes: the card, A2A v0.3 JSON-RPC (also at "/", for clients
// handed the server's bare URL, as Flutter's examples are), A2A 1.0 JSON-RPC and
// HTTP+JSON. The server mounts them behind its middleware stack (httpapi.WithRoutes).
//
// A client handed the agent's URL with a trailing slash (http://host/a2a/) posts to
// <path>/ and looks for the card at <path>//.well-known/agent-card.json (genui_a2a joins
// the two strings) or <path>/.well-known/agent-card.json: all are served. A GET of the
// agent's path answers with the card.
func (s *Server) Routes() []transport.Route {
	var routes []transport.Route
	card := s.cardHandler()
	for _, p := range s.cardPaths() {
		routes = append(routes, transport.Route{Method: http.MethodGet, Pattern: p, Handler: card, Open: true, Name: "a2a", Errors: transport.JSONRPC})
	}
	// A GET of the agent's URL itself reads its card too (the A2A TCK asks for it there).
	for _, p := range s.v03Paths() {
		if p != "/" {
			routes = append(routes, transport.Route{Method: http.MethodGet, Pattern: p, Handler: card, Open: true, Name: "a2a", Errors: transport.JSONRPC})
		}
	}
	opts := []a2asrv.TransportOption{a2asrv.WithTransportKeepAlive(s.keepalive), a2asrv.WithTransportPanicHandler(func(r any) error {
		s.log.Error("panic in an A2A call", "err", r)
		return a2a.NewError(a2a.ErrInternalError, "internal error")
	})}
	legacyRPC := s.wrapV03(legacysrv.NewJSONRPCHandler(v03{&agent{Server: s, legacy: true}}, legacysrv.WithKeepAlive(s.keepalive),
		legacysrv.WithPanicHandler(func(r any) error {
			s.log.Error("panic in an A2A call", "err", r)
			return legacy.NewError(legacy.ErrInternalError, "internal error")
		})))
	for _, p := range s.v03Paths() {
		routes = append(routes, transport.Route{Method: http.MethodPost, Pattern: p, Handler: legacyRPC, Name: "a2a", Errors: transport.JSONRPC})
	}
	modern := &agent{Server: s}
	routes = append(routes, transport.Route{Method: http.MethodPost, Pattern: s.path + pathV1, Handler: s.wrap(a2asrv.NewJSONRPCHandler(modern, opts...)), Name: "a2a", Errors: transport.JSONRPC})
	rest := s.wrapREST(http.StripPrefix(s.path+pathV1REST, a2asrv.NewRESTHandler(modern, opts...)))
	routes = append(routes, transport.Route{Pattern: s.path + pathV1REST + "/{rest...}", Handler: rest, Name: "a2a", Errors: restErrorWriter})
	return routes
}

// cardHandler serves the agent card, under the server's CORS policy (its middleware's).
// The card is the server's own data; a2a-go's v0.3 producer makes its JSON, the A2A 1.0
// card with the v0.3 fields (url, preferredTransport, additionalInterfaces) that v0.3
// clients read. a2a-go's card handler is not used: as of v2.4.0 it sets CORS headers of
// its own (any Origin, reflected, with credentials), whatever the server allows, and has
// no option to leave them out.
func (s *Server) cardHandler() http.Handler {
	producer := a2av0.NewAgentCardProducer(a2asrv.AgentCardProducerFn(s.card))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), baseURLKey{}, baseURL(r))
		b, err := cardJSON(ctx, producer)
		if err != nil {
			s.log.ErrorContext(ctx, "making the agent card failed", "err", err)
			transport.JSONRPC.WriteError(w, r, &genui.Error{Status: genui.StatusInternal, Message: "internal error"})
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	})
}

// cardJSON is a card producer's JSON: its own, if it makes it (a2av0's does), else the
// card marshalled.
func cardJSON(ctx context.Context, p a2asrv.AgentCardProducer) ([]byte, error) {
	if jp, ok := p.(a2asrv.AgentCardJSONProducer); ok {
		return jp.CardJSON(ctx)
	}
	card, err := p.Card(ctx)
	if err != nil {
		return nil, err
	}
	return json.Marshal(card)
}

// v03Paths are the paths of A2A v0.3 JSON-RPC: the agent's path, with a trailing slash
// too, and "/".
func (s *Server) v03Paths() []string {
	return uniq(s.path, strings.TrimSuffix(s.path, "/")+"/", "/")
}

// cardPaths are the paths of the agent card: the well-known one and the one under the
// agent's path, each also as a client asks for it that joins a URL ending in a slash
// with the well-known path (a double slash).
func (s *Server) cardPaths() []string {
	prefix := strings.TrimSuffix(s.path, "/")
	return uniq(a2asrv.WellKnownAgentCardPath, "/"+a2asrv.WellKnownAgentCardPath,
		prefix+a2asrv.WellKnownAgentCardPath, prefix+"/"+a2asrv.WellKnownAgentCardPath)
}

// uniq returns the strings in order, each once.
func uniq(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// Ready reports whether the task store can serve requests.
func (s *Server) Ready(ctx context.Context) error { return s.tasks.Ready(ctx) }

type baseURLKey struct{}

// card returns the agent card, its URLs made of the public URL.
func (s *Server) card(ctx context.Context) (*a2a.AgentCard, error) {
	base := s.publicURL
	if base == "" {
		base, _ = ctx.Value(baseURLKey{}).(string)
	}
	base += s.path
	params := func(ids ...string) map[string]any {
		out := make([]any, len(ids))
		for i, id := range ids {
			out[i] = id
		}
		return map[string]any{"supportedCatalogIds": out, "acceptsInlineCatalogs": true}
	}
	v09 := []string{spec.BasicCatalogID, spec.FlutterBasicCatalogID, spec.MinimalCatalogID}
	return &a2a.AgentCard{
		Name:        s.name,
		Description: "Composes user interfaces with an LLM from the client's A2UI catalog, streamed component by component as the model writes them, every message valid A2UI. Speaks A2UI v0.8, v0.9 and v0.9.1; the client's actions and the results of its tools continue the conversation of the context.",
		Version:     s.version,
		SupportedInterfaces: []*a2a.AgentInterface{
			{URL: base, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3"},
			{URL: base + pathV1, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version},
			{URL: base + pathV1REST, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: a2a.Version},
		},
		Capabilities: a2a.AgentCapabilities{
			Streaming: true,
			Extensions: []a2a.AgentExtension{
				{URI: ExtensionV091, Description: "A2UI v0.9.1: A2UI messages in DataParts of MIME type " + MIMEv091, Params: params(v09...)},
				{URI: ExtensionV09, Description: "A2UI v0.9: A2UI messages in DataParts of MIME type " + MIMEv09, Params: params(v09...)},
				{URI: ExtensionV08, Description: "A2UI v0.8: A2UI messages in DataParts of MIME type " + MIMEv09, Params: params(a2ui.BuiltinIDs(a2ui.V08)...)},
			},
		},
		SecuritySchemes:      s.securitySchemes(),
		SecurityRequirements: s.securityRequirements(),
		DefaultInputModes:    []string{"text/plain", "application/json", MIMEv09, MIMEv091},
		DefaultOutputModes:   []string{"text/plain", MIMEv09, MIMEv091},
		Skills: []a2a.AgentSkill{{
			ID:          "compose-ui",
			Name:        "Compose a user interface",
			Description: "Answers the user with a surface built from the client's catalog (forms, cards, lists, buttons), streamed as the model writes it, and updates it when the user acts on it.",
			Tags:        []string{"ui", "a2ui", "generative-ui", "forms"},
			Examples:    []string{"Book a table for two at 7pm", "Show me a form to report a bug", "Compare these three phones side by side"},
			InputModes:  []string{"text/plain", MIMEv09, MIMEv091},
			OutputModes: []string{"text/plain", MIMEv09, MIMEv091},
		}},
	}, nil
}

// wrap prepares a request for a2a-go's handlers: the base URL of the card, the
// extensions its headers ask for, those the response activates (echoed, as A2A asks),
// and a JSON content type for answers that set none (a2a-go's v0.3 JSON-RPC errors; its
// streams set their own).
func (s *Server) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx := context.WithValue(r.Context(), baseURLKey{}, baseURL(r))
		ctx = context.WithValue(ctx, extensionsKey{}, headerExtensions(r.Header))
		if strings.HasPrefix(r.Header.Get("User-Agent"), "Dart/") {
			ctx = context.WithValue(ctx, dartKey{}, true)
		}
		if ext := activated(r.Header); ext != "" {
			w.Header().Set("X-A2A-Extensions", ext)
			w.Header().Set("A2A-Extensions", ext)
		}
		w.Header().Set("Content-Type", "application/json")
		r = r.WithContext(ctx) // a copy: net/http reads what is left of its own Body
		if r.Body != nil {
			r.Body = http.MaxBytesReader(w, r.Body, s.bodyLimit)
		}
		h.ServeHTTP(w, r)
	})
}

// baseURL is the scheme and Host a request was sent to.
func baseURL(r *http.Request) string {
	if r.TLS != nil {
		return "https://" + r.Host
	}
	return "http://" + r.Host
}

// wrapREST is wrap for the HTTP+JSON binding, whose streams a2a-go (v2.4.0) ends with an
// error as a plain data event ({"error":{…}}), where A2A 1.0 clients (@a2a-js/sdk 1.x)
// look for an event of type error. a2a-go has no option for the event's type: this one
// shim, restErrors, writes "event: error" before the data line of such an event, and
// changes no byte a2a-go writes. contract_test.go pins what it relies on: a2a-go writes
// an event's data line in one Write, starting `data: {"error":` for an error and never
// otherwise, and no event type of its own.
func (s *Server) wrapREST(h http.Handler) http.Handler {
	return s.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.ServeHTTP(&restErrors{ResponseWriter: w}, r)
	}))
}

// restErrors marks the error events of an HTTP+JSON stream (see wrapREST).
type restErrors struct{ http.ResponseWriter }

var errorData = []byte(`data: {"error":`)

func (w *restErrors) Write(b []byte) (int, error) {
	if bytes.HasPrefix(b, errorData) && strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		if _, err := w.ResponseWriter.Write([]byte("event: error\n")); err != nil {
			return 0, err
		}
	}
	return w.ResponseWriter.Write(b)
}

func (w *restErrors) Flush() { http.NewResponseController(w.ResponseWriter).Flush() }

func (w *restErrors) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// wrapV03 is wrap for A2A v0.3 JSON-RPC. It reads the request first, for what a2a-go's
// v0.3 handler (v0.3.15) answers otherwise than JSON-RPC asks: a body over the limit is
// an invalid request (413); a method that is not a string an invalid request (a2a-go:
// invalid params); message params that a2a-go's v0.3 types refuse other than for a type
// (an unknown part kind) invalid params (a2a-go: a parse error, which JSON-RPC keeps for
// a body that is not JSON). contract_test.go fails when a2a-go answers these itself.
//
// It also recognises Dart's JSON (genui_a2a sends every unset field as null, where other
// clients leave it out): Flutter, in a browser too, knows the basic catalog by its own id.
func (s *Server) wrapV03(h http.Handler) http.Handler {
	return s.wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			h.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		var tooLarge *http.MaxBytesError
		switch {
		case errors.As(err, &tooLarge):
			w.Header().Set("Connection", "close") // the rest of the body is not read
			rpcError(w, http.StatusRequestEntityTooLarge, nil, -32600, fmt.Sprintf("the request body is over %d bytes", tooLarge.Limit))
			return
		case err != nil:
			rpcError(w, http.StatusBadRequest, nil, -32700, "reading the request body failed: "+err.Error())
			return
		}
		if id, code, msg, refused := v03Refusal(body); refused {
			rpcError(w, http.StatusOK, id, code, msg)
			return
		}
		if bytes.Contains(body, []byte(`"extensions":null`)) {
			r = r.WithContext(context.WithValue(r.Context(), dartKey{}, true))
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
}

// v03Refusal returns the JSON-RPC error of a v0.3 request that a2a-go would answer with
// another one (see wrapV03), if it is one. Message params are decoded as a2a-go will
// decode them, a second time.
func v03Refusal(body []byte) (id any, code int, msg string, refused bool) {
	var env struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Method  json.RawMessage `json:"method"`
		Params  json.RawMessage `json:"params"`
	}
	if json.Unmarshal(body, &env) != nil {
		return nil, 0, "", false // not JSON, or not an object: a2a-go answers
	}
	if json.Unmarshal(env.ID, &id) != nil {
		id = nil
	}
	switch id.(type) {
	case string, float64:
	default:
		id = nil
	}
	if len(env.Method) > 0 && env.Method[0] != '"' {
		return id, -32600, "method: must be a string", true
	}
	var method string
	_ = json.Unmarshal(env.Method, &method)
	if env.JSONRPC != "2.0" || (method != "message/send" && method != "message/stream") || len(env.Params) == 0 {
		return nil, 0, "", false
	}
	var params legacy.MessageSendParams
	err := json.Unmarshal(env.Params, &params)
	var typeErr *json.UnmarshalTypeError
	if err == nil || errors.As(err, &typeErr) {
		return nil, 0, "", false // decoded, or invalid params: a2a-go answers
	}
	return id, -32602, err.Error(), true
}

// rpcError writes a JSON-RPC error response.
func rpcError(w http.ResponseWriter, status int, id any, code int, msg string) {
	reason := map[int]string{-32700: "PARSE_ERROR", -32600: "INVALID_REQUEST", -32602: "INVALID_PARAMS"}[code]
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id,
		"error": map[string]any{"code": code, "message": msg, "data": map[string]any{"reason": reason}}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

type dartKey struct{}

type extensionsKey struct{}

// headerExtensions lists the extension URIs a request's headers ask for: the values of
// X-A2A-Extensions (A2A v0.3) and of A2A-Extensions (A2A 1.0) together, as a request may
// carry both, each value possibly a comma-separated list; in order, each once. (a2a-go
// keeps only one of the two names, which one by chance, and does not split the values.)
func headerExtensions(h http.Header) []string {
	var out []string
	for _, name := range []string{"X-A2A-Extensions", "A2A-Extensions"} {
		for _, v := range h.Values(name) {
			for u := range strings.SplitSeq(v, ",") {
				if u = strings.TrimSpace(u); u != "" && !slices.Contains(out, u) {
					out = append(out, u)
				}
			}
		}
	}
	return out
}

// activated lists the A2UI extensions the agent offers among those a request's headers
// ask for.
func activated(h http.Header) string {
	var out []string
	for _, u := range headerExtensions(h) {
		if u == ExtensionV08 || u == ExtensionV09 || u == ExtensionV091 {
			out = append(out, u)
		}
	}
	return strings.Join(out, ",")
}

// securitySchemes are the card's security schemes: an API key in X-API-Key, a bearer
// (an API key or a JWT) in Authorization.
func (s *Server) securitySchemes() a2a.NamedSecuritySchemes {
	if len(s.schemes) == 0 {
		return nil
	}
	out := a2a.NamedSecuritySchemes{}
	for _, sc := range s.schemes {
		switch sc.Kind {
		case "apiKey":
			out[a2a.SecuritySchemeName(sc.Name)] = a2a.APIKeySecurityScheme{Location: a2a.APIKeySecuritySchemeLocationHeader, Name: "X-API-Key",
				Description: "An API key, in X-API-Key (or as the bearer of Authorization)."}
		default:
			d := "An API key as the bearer token of Authorization."
			if sc.BearerFormat == "JWT" {
				d = "A JWT (or an API key, when keys are configured) as the bearer token of Authorization."
			}
			out[a2a.SecuritySchemeName(sc.Name)] = a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: sc.BearerFormat, Description: d}
		}
	}
	return out
}

// securityRequirements: any one of the schemes.
func (s *Server) securityRequirements() a2a.SecurityRequirementsOptions {
	var out a2a.SecurityRequirementsOptions
	for _, sc := range s.schemes {
		out = append(out, a2a.SecurityRequirements{a2a.SecuritySchemeName(sc.Name): a2a.SecuritySchemeScopes{}})
	}
	return out
}
