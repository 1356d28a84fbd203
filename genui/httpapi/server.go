package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/firebase/genkit/go/core"
	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/schemas"
)

// Option configures the HTTP API.
type Option func(*server)

// WithBodyLimit sets the largest accepted request body (default 20 MiB).
func WithBodyLimit(n int64) Option { return func(s *server) { s.bodyLimit = n } }

// WithAllowOrigins sets the CORS origins (default "*").
func WithAllowOrigins(origins ...string) Option {
	return func(s *server) { s.origins = origins }
}

// WithPage serves h (the browser playground) for GET requests to paths no API route
// takes, "/" included.
func WithPage(h http.Handler) Option { return func(s *server) { s.page = h } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *server) { s.log = l } }

type server struct {
	svc       *genui.Service
	bodyLimit int64
	origins   []string
	log       *slog.Logger
	page      http.Handler
}

var (
	startSessionSchema = &requestSchema{sample: schemas.StartSessionRequest{}}
	generateSchema     = &requestSchema{sample: schemas.GenerateRequest{}}
)

// New returns an Echo instance serving the genui_server contract with svc.
func New(svc *genui.Service, opts ...Option) *echo.Echo {
	s := &server{svc: svc, bodyLimit: 20 << 20, origins: []string{"*"}, log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = s.handleError
	e.Use(middleware.RecoverWithConfig(middleware.RecoverConfig{
		DisableStackAll: true,
		LogErrorFunc: func(c echo.Context, err error, stack []byte) error {
			s.log.Error("panic", "path", c.Request().URL.Path, "err", err, "stack", string(stack))
			return &genui.Error{Status: genui.StatusInternal, Message: "internal error"}
		},
	}))
	e.Use(middleware.CORSWithConfig(middleware.CORSConfig{
		AllowOrigins:  s.origins,
		AllowMethods:  []string{http.MethodGet, http.MethodPost, http.MethodOptions},
		ExposeHeaders: []string{"X-Genkit-Stream-Id", "X-Genkit-Trace-Id"},
	}))
	e.POST("/startSession", s.startSession)
	e.POST("/generateUi", s.generateUI)
	e.GET("/healthz", func(c echo.Context) error {
		return c.JSON(http.StatusOK, map[string]string{"status": "ok"})
	})
	e.GET("/readyz", s.readyz)
	e.GET("/catalogs", s.catalogs)
	e.GET("/catalogs/:name", s.catalog)
	if s.page != nil {
		e.GET("/*", echo.WrapHandler(s.page))
	}
	return e
}

// handleError answers every error as {"error":{"status","message","details"}} with the
// matching HTTP status, unless the response is already streaming.
func (s *server) handleError(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	var he *echo.HTTPError
	var ge *genui.Error
	switch {
	case errors.As(err, &ge):
	case errors.As(err, &he):
		status := genui.StatusInvalidArgument
		switch he.Code {
		case http.StatusNotFound:
			status = genui.StatusNotFound
		case http.StatusMethodNotAllowed:
			status = genui.StatusUnimplemented
		case http.StatusInternalServerError:
			status = genui.StatusInternal
		}
		ge = &genui.Error{Status: status, HTTP: he.Code, Message: fmt.Sprintf("%s %s: %v", c.Request().Method, c.Request().URL.Path, he.Message)}
	default:
		ge = genui.AsError(err)
	}
	s.writeError(c, ge)
}

func (s *server) writeError(c echo.Context, e *genui.Error) {
	w := c.Response()
	w.Header().Set(echo.HeaderContentType, "application/json")
	w.WriteHeader(e.HTTPStatus())
	_, _ = w.Write(appendError(nil, formatJSON, e.Wire()))
}

func (s *server) startSession(c echo.Context) error {
	r := c.Request()
	body, e := readBody(c.Response(), r, s.bodyLimit)
	if e != nil {
		return e
	}
	var req schemas.StartSessionRequest
	if e := decode(body, &req, startSessionSchema); e != nil {
		return e
	}
	if req.Catalog == nil {
		return &genui.Error{Status: genui.StatusInvalidArgument, Message: "catalog: required: the JSON Schema of the widgets the client can render", Details: map[string]any{"field": "catalog"}}
	}
	id, err := s.svc.StartSession.Run(r.Context(), &req)
	if err != nil {
		return genui.AsError(err)
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
	r := c.Request()
	f := negotiate(r)
	body, e := readBody(c.Response(), r, s.bodyLimit)
	if e != nil {
		return e
	}
	var req schemas.GenerateRequest
	if e := decode(body, &req, generateSchema); e != nil {
		return e
	}
	ctx := r.Context()
	turn, err := s.svc.Prepare(ctx, &req)
	if err != nil {
		return genui.AsError(err)
	}
	ctx = genui.WithTurn(ctx, turn)
	run := (*core.ActionDef[*schemas.GenerateRequest, *schemas.Result, schemas.Event])(s.svc.GenerateUI).Run

	if f == formatJSON {
		res, err := run(ctx, &req, nil)
		if err != nil {
			return genui.AsError(err)
		}
		b, err := appendResult(nil, formatJSON, res)
		if err != nil {
			return err
		}
		return c.JSONBlob(http.StatusOK, b)
	}
	return s.stream(c, f, ctx, &req, run)
}

type runFunc func(context.Context, *schemas.GenerateRequest, core.StreamCallback[schemas.Event]) (*schemas.Result, error)

// stream answers with a stream: headers first, then each event in one write and flush,
// then exactly one result or error event.
func (s *server) stream(c echo.Context, f format, ctx context.Context, req *schemas.GenerateRequest, run runFunc) (err error) {
	w := c.Response()
	rc := http.NewResponseController(w.Writer)
	h := w.Header()
	h.Set(echo.HeaderContentType, f.contentType())
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()

	// The write that failed, if any: the client is gone and the turn must stop.
	var writeErr error
	buf := make([]byte, 0, 4096)
	write := func(b []byte) error {
		if writeErr != nil {
			return writeErr
		}
		if _, err := w.Write(b); err != nil {
			writeErr = err
			return err
		}
		if err := rc.Flush(); err != nil {
			writeErr = err
			return err
		}
		return nil
	}
	ended := false
	defer func() {
		if p := recover(); p != nil {
			s.log.Error("panic", "path", c.Request().URL.Path, "err", p, "stack", string(debug.Stack()))
			if !ended {
				_ = write(appendError(buf[:0], f, &schemas.Error{Status: genui.StatusInternal, Message: "internal error"}))
			}
			err = nil
		}
	}()
	start := time.Now()
	res, runErr := run(ctx, req, func(ctx context.Context, ev schemas.Event) error {
		buf = appendEvent(buf[:0], f, &ev)
		return write(buf)
	})
	if runErr == nil {
		buf, runErr = appendResult(buf[:0], f, res)
	}
	if runErr != nil {
		ge := genui.AsError(runErr)
		if writeErr != nil || ctx.Err() != nil {
			s.log.Info("client went away", "path", c.Request().URL.Path, "after", time.Since(start), "status", ge.Status)
			return nil
		}
		buf = appendError(buf[:0], f, ge.Wire())
	}
	ended = true
	_ = write(buf)
	return nil
}

func (s *server) readyz(c echo.Context) error {
	model := s.svc.Model()
	st := s.svc.Stats()
	body := map[string]any{
		"ready": true,
		"model": model,
		"llm":   model != genui.OfflineModel,
		"surfaces": map[string]int64{
			"streamed": st.Streamed.Load(), "rejected": st.Rejected.Load(),
			"repaired": st.Repaired.Load(), "failed": st.Failed.Load(),
		},
	}
	if model == genui.OfflineModel {
		body["note"] = "offline is a deterministic generator, not an LLM; set GEMINI_API_KEY (or GENUI_MODEL) to use a real model"
	}
	ctx, cancel := context.WithTimeout(c.Request().Context(), 2*time.Second)
	defer cancel()
	if err := s.svc.Store().Ready(ctx); err != nil {
		body["ready"] = false
		body["store"] = err.Error()
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
