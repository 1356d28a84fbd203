package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/genui/transport"
	"github.com/genuiserver/genui/internal/jsonbody"
	"github.com/genuiserver/genui/internal/rediserr"
	"github.com/genuiserver/genui/internal/reqlog"
	"github.com/genuiserver/genui/internal/streamresp"
	"github.com/genuiserver/genui/metrics"
	"github.com/genuiserver/genui/schemas"
)

// Option configures the HTTP API.
type Option func(*server)

// WithBodyLimit sets the largest accepted request body (default 20 MiB).
func WithBodyLimit(n int64) Option { return func(s *server) { s.bodyLimit = n } }

// WithAllowOrigins sets the origins CORS allows (default "*": any; none: same-origin
// only, without CORS headers).
func WithAllowOrigins(origins ...string) Option {
	return func(s *server) { s.origins = origins }
}

// WithRoutes mounts the routes of other transports (a2aapi, aguiapi, mcpapi, wsapi) behind
// the server's middleware stack, as its own routes are.
func WithRoutes(routes ...transport.Route) Option {
	return func(s *server) { s.routes = append(s.routes, routes...) }
}

// WithPage serves h (the browser playground) for GET requests to paths no API route
// takes, "/" included.
func WithPage(h http.Handler) Option { return func(s *server) { s.page = h } }

// WithKeepalive sets the interval of {"type":"keepalive"} lines in NDJSON streams while
// the model is silent (default 15 s; 0 disables).
func WithKeepalive(d time.Duration) Option { return func(s *server) { s.keepalive = d } }

// WithSSEKeepalive enables ": keepalive" comment events in SSE streams at the given
// interval. Off by default: the Dart and Genkit JS clients cannot parse comments.
func WithSSEKeepalive(d time.Duration) Option { return func(s *server) { s.sseKeepalive = d } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *server) { s.log = l } }

// WithModels sets the names of the models /readyz lists, in the order a fallback chain
// tries them (default: the service's one model).
func WithModels(names ...string) Option { return func(s *server) { s.models = names } }

// WithReadiness adds a check to /readyz (the store of another transport, say), beside
// the service's own.
func WithReadiness(check func(context.Context) error) Option {
	return func(s *server) { s.ready = append(s.ready, check) }
}

type server struct {
	svc          *genui.Service
	keepalive    time.Duration
	sseKeepalive time.Duration
	bodyLimit    int64
	origins      []string
	log          *slog.Logger
	page         http.Handler
	ready        []func(context.Context) error
	authn        *auth.Authenticator
	proxies      []netip.Prefix
	routes       []transport.Route
	mounted      map[routeKey]*transport.Route
	metrics      *metrics.Metrics
	serveMetrics bool
	models       []string
}

var (
	startSessionSchema = jsonbody.NewSchema(schemas.StartSessionRequest{})
	generateSchema     = jsonbody.NewSchema(schemas.GenerateRequest{})
	generateA2UISchema = jsonbody.NewSchema(schemas.GenerateA2UIRequest{})
)

// New returns an Echo instance serving the genui_server contract with svc.
func New(svc *genui.Service, opts ...Option) *echo.Echo {
	s := &server{svc: svc, bodyLimit: 20 << 20, origins: []string{"*"}, log: slog.Default(), keepalive: 15 * time.Second, mounted: map[routeKey]*transport.Route{}}
	for _, o := range opts {
		o(s)
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.Use(s.requestInfo)
	e.Use(secureHeaders)
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisableStackAll: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			s.log.Error("panic", "path", c.Request().URL.Path, "err", err, "stack", string(stack))
			return &genui.Error{Status: genui.StatusInternal, Message: "internal error"}
		},
	}))
	if len(s.origins) > 0 {
		e.Use(middleware.CORSWithConfig(middleware.CORSConfig{
			AllowOrigins: s.origins,
			AllowMethods: []string{http.MethodGet, http.MethodPost, http.MethodOptions},
			// A2A clients read which extensions a response activated.
			ExposeHeaders: []string{"X-Genkit-Stream-Id", "X-Genkit-Trace-Id", "X-A2A-Extensions", "A2A-Extensions", "X-Request-Id", "Retry-After"},
		}))
	}
	e.Use(s.guard)
	e.POST("/startSession", s.startSession)
	e.POST("/generateUi", s.generateUI)
	e.POST("/generateUi/cancel", s.cancel)
	e.POST("/generateA2ui", s.generateA2UI)
	e.POST("/generateA2ui/cancel", s.cancel)
	e.GET("/healthz", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.GET("/readyz", s.readyz)
	e.GET("/usage", s.usage)
	e.GET("/models", s.modelsOf)
	if s.metrics != nil && s.serveMetrics {
		e.GET("/metrics", echo.WrapHandler(s.metrics.Handler()))
	}
	e.GET("/catalogs", s.catalogs)
	e.GET("/catalogs/:name", s.catalog)
	for i := range s.routes {
		s.mount(e, &s.routes[i])
	}
	if s.page != nil {
		e.GET("/*", echo.WrapHandler(s.page))
	}
	return e
}

// handleError answers every error as {"error":{"status","message","details"}} with the
// matching HTTP status (or in the protocol of the transport whose route it is), unless the
// response is already streaming.
func (s *server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var he *echo.HTTPError
	if errors.As(err, &he) {
		status := genui.StatusInvalidArgument
		switch he.Code {
		case http.StatusNotFound:
			status = genui.StatusNotFound
		case http.StatusMethodNotAllowed:
			status = genui.StatusUnimplemented
		case http.StatusInternalServerError:
			status = genui.StatusInternal
		}
		err = &jsonbody.StatusError{Code: he.Code, Err: &genui.Error{Status: status, Message: fmt.Sprintf("%s %s: %v", c.Request().Method, c.Request().URL.Path, he.Message)}}
	}
	if rt := s.route(c); rt != nil && rt.Errors != nil {
		rt.Errors.WriteError(c.Response(), c.Request(), genui.AsError(err))
		return
	}
	transport.WriteJSONError(c.Response(), err)
}

func (s *server) startSession(c echo.Context) error {
	r := c.Request()
	body, e := jsonbody.Read(c.Response(), r, s.bodyLimit)
	if e != nil {
		return e
	}
	var req schemas.StartSessionRequest
	if e := decode(body, &req, startSessionSchema); e != nil {
		return e
	}
	id, err := s.svc.StartSession(r.Context(), &req)
	if err != nil {
		return err
	}
	b, _ := appendResultString(id)
	return c.JSONBlob(http.StatusOK, b)
}

func appendResultString(id string) ([]byte, error) {
	b := append([]byte(`{"result":`), '"')
	b = append(b, id...) // session ids are URL-safe base64
	return append(b, "\"}\n"...), nil
}

func (s *server) generateUI(c echo.Context) error {
	var req schemas.GenerateRequest
	return s.generate(c, &req, generateSchema, func(ctx context.Context) (*schemas.Result, error) {
		return s.svc.Generate(ctx, &req)
	}, func(ctx context.Context) (*genui.Stream, error) {
		return s.svc.Stream(ctx, &req)
	})
}

// generateA2UI serves /generateA2ui: as /generateUi, for a turn whose UI is A2UI. Its
// NDJSON stream carries each A2UI message bare, one per line; its SSE stream carries
// them in Genkit's A2UI data part.
func (s *server) generateA2UI(c echo.Context) error {
	var req schemas.GenerateA2UIRequest
	return s.generate(c, &req, generateA2UISchema, func(ctx context.Context) (*schemas.Result, error) {
		return s.svc.GenerateA2UI(ctx, &req)
	}, func(ctx context.Context) (*genui.Stream, error) {
		return s.svc.StreamA2UI(ctx, &req)
	})
}

// generate serves a turn: it negotiates the framing, resumes a durable stream the
// request names, or decodes the request into req and runs the turn, whole (JSON) or
// streamed.
func (s *server) generate(c echo.Context, req any, schema *jsonbody.Schema, whole func(context.Context) (*schemas.Result, error), stream func(context.Context) (*genui.Stream, error)) error {
	r := c.Request()
	f := negotiate(r)
	if i := reqlog.FromContext(r.Context()); i != nil {
		i.Transport = f.String()
	}
	body, e := jsonbody.Read(c.Response(), r, s.bodyLimit)
	if e != nil {
		return e
	}
	if id := streamID(r); id != "" {
		after, e := afterParam(r)
		if e != nil {
			return e
		}
		return s.resume(c, f, id, after)
	}
	if e := decode(body, req, schema); e != nil {
		return e
	}
	if f == formatJSON {
		// Not streamed, so not durable: the turn ends with the request.
		res, err := whole(r.Context())
		if err != nil {
			return err
		}
		b, err := appendResultJSON(nil, res)
		if err != nil {
			return err
		}
		return c.JSONBlob(http.StatusOK, b)
	}
	st, err := stream(r.Context())
	if err != nil {
		return err
	}
	return s.pump(c, f, st)
}

// streamID is the durable stream a request re-attaches to: the X-Genkit-Stream-Id header
// (what the Genkit JS client sends) or the streamId query parameter.
func streamID(r *http.Request) string {
	if id := r.Header.Get("X-Genkit-Stream-Id"); id != "" {
		return id
	}
	return r.URL.Query().Get("streamId")
}

func afterParam(r *http.Request) (int, error) {
	v := r.URL.Query().Get("after")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, &genui.Error{Status: genui.StatusInvalidArgument, Message: fmt.Sprintf("after: must be a line number >= 0, got %q", v), Details: map[string]any{"field": "after"}}
	}
	return n, nil
}

// resume re-attaches a client to a durable stream: everything after the first after
// items, then the live tail. An unknown or expired stream answers 204, as the Genkit JS
// client expects.
func (s *server) resume(c echo.Context, f format, id string, after int) error {
	st, err := s.svc.Resume(c.Request().Context(), id, after)
	if err != nil && genui.AsError(err).Status == genui.StatusNotFound {
		return c.NoContent(http.StatusNoContent)
	}
	if err != nil {
		return err
	}
	if f == formatJSON {
		// The whole result: the tool requests the stream carried, then the result.
		defer st.Close()
		var trs []schemas.ToolRequest
		var a2uiMsgs []json.RawMessage
		var res schemas.Result
		var final error
		err := st.Each(c.Request().Context(), func(it genui.Item) error {
			switch {
			case it.Err != nil:
				final = it.Err
			case it.Event != nil && it.Event.ToolRequest != nil:
				trs = append(trs, *it.Event.ToolRequest)
			case it.Event != nil && it.Event.Type == schemas.EventA2UI:
				a2uiMsgs = append(a2uiMsgs, it.Event.A2UI)
			case it.Result != nil:
				final = json.Unmarshal(it.Result, &res)
			}
			return nil
		})
		if err == nil {
			err = final
		}
		if err != nil {
			return err
		}
		res.ToolRequests = trs
		if len(a2uiMsgs) > 0 {
			// Where the turn's own result has it: after the text, before the calls.
			at := len(res.Message.Content)
			for at > 0 && res.Message.Content[at-1].ToolRequest != nil {
				at--
			}
			res.Message.Content = slices.Insert(res.Message.Content, at, schemas.A2UIPart(a2ui.Final(a2uiVersion(a2uiMsgs), a2uiMsgs)))
		}
		b, err := appendResultJSON(nil, &res)
		if err != nil {
			return err
		}
		return c.JSONBlob(http.StatusOK, b)
	}
	return s.pump(c, f, st)
}

// pump answers with a stream: headers first, then each item in one write and flush,
// ending with exactly one result or error; keepalives while the stream is silent. For a
// new stream this runs its turn.
func (s *server) pump(c echo.Context, f format, st *genui.Stream) error {
	defer st.Close()
	w := c.Response()
	h := w.Header()
	h.Set(echo.HeaderContentType, f.contentType())
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Genkit-Stream-Id", st.ID())
	keepalive := s.keepalive
	if f == formatSSE {
		keepalive = s.sseKeepalive
	}
	sw, err := streamresp.Start(w.Writer, keepalive, keepaliveLine(f))
	if err != nil {
		return nil
	}
	ctx := c.Request().Context()
	err = st.Each(ctx, func(it genui.Item) error {
		bp := buffers.Get().(*[]byte)
		buf := (*bp)[:0]
		switch {
		case it.Event != nil:
			buf = appendEvent(buf, f, it.Event)
		case it.Result != nil:
			buf = appendResult(buf, f, it.Result)
		default:
			buf = appendError(buf, f, it.Err.Wire())
		}
		err := sw.Write(buf)
		if cap(buf) <= 64<<10 {
			*bp = buf[:0]
			buffers.Put(bp)
		}
		return err
	})
	var last []byte
	if err != nil && err != streamresp.ErrGone && ctx.Err() == nil {
		s.log.Warn("reading a stream failed", "stream", st.ID(), "err", err)
		last = appendError(nil, f, genui.AsError(err).Wire())
	}
	_ = sw.Close(last)
	return nil
}

// buffers holds the buffers items are encoded into.
var buffers = sync.Pool{New: func() any {
	b := make([]byte, 0, 2048)
	return &b
}}

var (
	ndjsonKeepalive = []byte("{\"type\":\"keepalive\"}\n")
	sseKeepalive    = []byte(": keepalive\n\n")
)

func keepaliveLine(f format) []byte {
	if f == formatSSE {
		return sseKeepalive
	}
	return ndjsonKeepalive
}

// cancel stops a durable stream's turn now: POST /generateUi/cancel with
// {"streamId":"…"} (optionally in {"data":…}) or the X-Genkit-Stream-Id header.
func (s *server) cancel(c echo.Context) error {
	r := c.Request()
	body, e := jsonbody.Read(c.Response(), r, s.bodyLimit)
	if e != nil {
		return e
	}
	var req struct {
		StreamID string `json:"streamId"`
	}
	if len(bytes.TrimSpace(body)) > 0 {
		if e := decode(body, &req, nil); e != nil {
			return e
		}
	}
	if req.StreamID == "" {
		req.StreamID = streamID(r)
	}
	if req.StreamID == "" {
		return &genui.Error{Status: genui.StatusInvalidArgument, Message: "streamId: required (in the body or the X-Genkit-Stream-Id header)", Details: map[string]any{"field": "streamId"}}
	}
	if err := s.svc.Cancel(r.Context(), req.StreamID); err != nil {
		return err
	}
	return c.JSONBlob(http.StatusOK, []byte(`{"result":"cancelled"}`+"\n"))
}

func (s *server) readyz(c echo.Context) error {
	model := s.svc.Model()
	st := s.svc.Stats()
	names := s.models
	if len(names) == 0 {
		names = []string{model}
	}
	body := map[string]any{
		"ready":  true,
		"model":  model, // the first of the chain, as before chains
		"models": names,
		"llm":    model != offline.Name,
		"surfaces": map[string]int64{
			"streamed": st.Streamed.Load(), "rejected": st.Rejected.Load(),
			"repaired": st.Repaired.Load(), "failed": st.Failed.Load(),
		},
	}
	if n, b, ok := s.svc.Conversations(); ok {
		body["conversations"] = map[string]int{"held": n, "bytes": b}
	}
	if model == offline.Name {
		body["note"] = "offline is a deterministic generator, not an LLM; set GEMINI_API_KEY (or GENUI_MODEL) to use a real model"
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	err := s.svc.Ready(ctx)
	for _, check := range s.ready {
		if err == nil {
			err = check(ctx)
		}
	}
	if err != nil {
		// The probe is open: it names the store that is not ready, never the cause (a
		// Redis node's address); the log keeps it.
		s.log.Warn("not ready", "err", err)
		body["ready"] = false
		msg, ok := rediserr.Public(err)
		if !ok {
			msg = "a store is not ready"
		}
		body["store"] = msg
		return c.JSON(http.StatusServiceUnavailable, body)
	}
	body["store"] = "ok"
	return c.JSON(http.StatusOK, body)
}

// catalogs lists the sample catalogs: {"catalogs":["basic","rich"]}.
func (s *server) catalogs(c echo.Context) error {
	return c.JSON(http.StatusOK, map[string][]string{"catalogs": schemas.SampleCatalogNames()})
}

// catalog returns one sample catalog.
func (s *server) catalog(c echo.Context) error {
	cat, err := schemas.SampleCatalog(c.Param("name"))
	if err != nil {
		return &genui.Error{Status: genui.StatusNotFound, Message: fmt.Sprintf("no sample catalog %q; see GET /catalogs", c.Param("name"))}
	}
	return c.JSON(http.StatusOK, cat)
}

// a2uiVersion is the A2UI version of a stream's messages: v0.9 messages carry it.
func a2uiVersion(msgs []json.RawMessage) string {
	if len(msgs) > 0 && bytes.Contains(msgs[0], []byte(`"version":"v0.9"`)) {
		return a2ui.V09
	}
	return a2ui.V08
}
