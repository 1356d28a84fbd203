package httpapi

import (
	"errors"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/transport"
	"github.com/genuiserver/genui/internal/reqlog"
	"github.com/genuiserver/genui/metrics"
)

// WithAuth makes every route but the health checks, /metrics, the agent card and the
// playground's files require the credentials a checks; each request's caller goes into
// its context (auth.FromContext). Without it every request is the anonymous caller.
func WithAuth(a *auth.Authenticator) Option { return func(s *server) { s.authn = a } }

// WithTrustedProxies believes the X-Forwarded-For of requests from these addresses: the
// client address (what limits count without authentication) is the last one a trusted
// proxy did not add.
func WithTrustedProxies(prefixes ...netip.Prefix) Option {
	return func(s *server) { s.proxies = prefixes }
}

// WithMetrics counts every request in m (genui_http_requests_total and its duration);
// serve also serves m at GET /metrics, open like /healthz.
func WithMetrics(m *metrics.Metrics, serve bool) Option {
	return func(s *server) { s.metrics, s.serveMetrics = m, serve }
}

// Security headers, their values shared by every response (a response's header map
// holds them without an allocation of its own; nothing appends to them).
var (
	nosniff        = []string{"nosniff"}
	frameAncestors = []string{"frame-ancestors 'none'"}
	frameDeny      = []string{"DENY"}
	noReferrer     = []string{"no-referrer"}
	hsts           = []string{"max-age=31536000"}
)

// secureHeaders sets the security headers: on every response X-Content-Type-Options and
// Content-Security-Policy frame-ancestors (no page of the server is framed); on the
// playground's pages also X-Frame-Options, for browsers without CSP, and
// Referrer-Policy; Strict-Transport-Security behind TLS. API responses keep to few
// headers, so that their header map stays in one small allocation.
func secureHeaders(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h["X-Content-Type-Options"] = nosniff
		h["Content-Security-Policy"] = frameAncestors
		if c.Path() == "/*" {
			h["X-Frame-Options"] = frameDeny
			h["Referrer-Policy"] = noReferrer
		}
		if c.Request().TLS != nil || c.Request().Header.Get("X-Forwarded-Proto") == "https" {
			h["Strict-Transport-Security"] = hsts
		}
		return next(c)
	}
}

// openRoute reports whether route, as registered, needs no credentials: the health checks,
// /metrics, the playground's files and the transports' open routes (an agent card).
func (s *server) openRoute(c echo.Context) bool {
	switch c.Path() {
	case "/healthz", "/readyz", "/metrics", "/*":
		return true
	}
	rt := s.route(c)
	return rt != nil && rt.Open
}

// requestInfo names the request: its id in X-Request-Id and its context, so every line
// logged with the context carries it.
func (s *server) requestInfo(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		info := &reqlog.Info{ID: reqlog.ID(r.Header.Get("X-Request-Id")), Route: c.Path()}
		c.Response().Header()["X-Request-Id"] = []string{info.ID}
		// The anonymous caller, with the client's address, until guard authenticates one.
		ctx := auth.NewContext(reqlog.NewContext(r.Context(), info), auth.Caller{Addr: s.clientAddr(r)})
		c.SetRequest(r.WithContext(ctx))
		if s.metrics == nil {
			return next(c)
		}
		start := time.Now()
		err := next(c)
		if err != nil {
			// Answered here, so that the status counted is the one sent.
			c.Error(err)
			err = nil
		}
		route := info.Route
		if route == "" || route == "/*" {
			route = "other"
		}
		transport := info.Transport
		if transport == "" {
			transport = s.transportOf(c, r)
		}
		s.metrics.Request(route, transport, c.Response().Status, time.Since(start))
		return err
	}
}

// transportOf names the transport of a request whose handler did not: one refused before
// it (401) is labelled with the framing it asked for, as its handler would have.
func (s *server) transportOf(c echo.Context, r *http.Request) string {
	route := c.Path()
	if rt := s.route(c); rt != nil && rt.Name != "" {
		return rt.Name
	}
	switch {
	case strings.EqualFold(r.Header.Get("Upgrade"), "websocket"):
		return "websocket"
	case route == "/generateUi" || route == "/generateA2ui":
		return negotiate(r).String()
	}
	return "http"
}

// guard authenticates the request, unless its route is open or it is a CORS preflight,
// puts the caller, with the client's address, into its context, and limits its body to
// the server's limit. It runs after CORS, so that a refusal carries the CORS headers a
// browser needs to read it; it is the last of the stack, and marks the request as having
// passed it (transport.Mark).
func (s *server) guard(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		r := c.Request()
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = http.MaxBytesReader(c.Response(), r.Body, s.bodyLimit)
		}
		if r.Method == http.MethodOptions || s.openRoute(c) || !s.authn.Enabled() {
			if s.route(c) != nil { // only a transport's route asks for the mark
				c.SetRequest(r.WithContext(transport.Mark(r.Context())))
			}
			return next(c) // the anonymous caller requestInfo set
		}
		upgrade := strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
		caller, err := s.authn.Authenticate(r, upgrade)
		if err != nil {
			s.refuse(c, auth.CredentialField(r, upgrade), err)
			return nil
		}
		caller.Addr = s.clientAddr(r)
		ctx := auth.NewContext(r.Context(), caller)
		if s.route(c) != nil {
			ctx = transport.Mark(ctx)
		}
		c.SetRequest(r.WithContext(ctx))
		return next(c)
	}
}

// refuse answers a request without valid credentials: 401, WWW-Authenticate: Bearer, and
// the route's error object.
func (s *server) refuse(c echo.Context, field string, err error) {
	h := c.Response().Header()
	if errors.Is(err, auth.ErrNoCredentials) {
		h.Set("WWW-Authenticate", `Bearer realm="genui"`)
	} else {
		h.Set("WWW-Authenticate", `Bearer realm="genui", error="invalid_token"`)
	}
	msg := err.Error()
	s.writeError(c, &genui.Error{Status: genui.StatusUnauthenticated, Message: msg, Details: map[string]any{"field": field}})
	s.log.InfoContext(c.Request().Context(), "request refused: no valid credentials", "method", c.Request().Method, "addr", s.clientAddr(c.Request()), "reason", msg)
}

// clientAddr is the address of r's client: the connection's peer, or, when that peer is a
// trusted proxy, the last X-Forwarded-For address no trusted proxy added.
func (s *server) clientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	if len(s.proxies) == 0 {
		return host
	}
	peer, err := netip.ParseAddr(host)
	if err != nil || !s.trusted(peer) {
		return host
	}
	hops := strings.Split(strings.Join(r.Header.Values("X-Forwarded-For"), ","), ",")
	for i := len(hops) - 1; i >= 0; i-- {
		a, err := netip.ParseAddr(strings.TrimSpace(hops[i]))
		if err != nil {
			break
		}
		if !s.trusted(a) {
			return a.String()
		}
		host = a.String()
	}
	return host
}

func (s *server) trusted(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range s.proxies {
		if p.Contains(a) {
			return true
		}
	}
	return false
}
