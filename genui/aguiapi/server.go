package aguiapi

import (
	"bytes"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/transport"
	"github.com/genuiserver/genui/internal/jsonbody"
	"github.com/genuiserver/genui/internal/streamresp"
)

// Server is the AG-UI endpoint of a service.
type Server struct {
	svc       *genui.Service
	path      string
	bodyLimit int64
	keepalive time.Duration
	log       *slog.Logger
}

// Option configures a Server.
type Option func(*Server)

// WithPath sets the endpoint's path (default "/ag-ui").
func WithPath(p string) Option { return func(s *Server) { s.path = "/" + strings.Trim(p, "/") } }

// WithBodyLimit sets the largest accepted request body (default 20 MiB).
func WithBodyLimit(n int64) Option { return func(s *Server) { s.bodyLimit = n } }

// WithKeepalive sets the interval of SSE keepalive comments while a run is silent
// (default 15 s; 0: off).
func WithKeepalive(d time.Duration) Option { return func(s *Server) { s.keepalive = d } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// New returns the AG-UI endpoint of svc.
func New(svc *genui.Service, opts ...Option) *Server {
	s := &Server{svc: svc, path: "/ag-ui", bodyLimit: 20 << 20, keepalive: 15 * time.Second, log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Routes is the endpoint's route, for the server to mount behind its middleware stack
// (httpapi.WithRoutes). An error before a run's stream starts is answered as JSON, a 400
// naming the field, say (transport.JSON).
func (s *Server) Routes() []transport.Route {
	return []transport.Route{{Method: http.MethodPost, Pattern: s.path, Handler: http.HandlerFunc(s.serve), Name: "agui", Errors: transport.JSON}}
}

// serve serves one run, answering an error before its stream starts as JSON.
func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	if err := s.run(w, r); err != nil {
		transport.WriteJSONError(w, err)
	}
}

var inputSchema = jsonbody.NewSchema(runInput{})

// run serves one run: RunAgentInput in, its AG-UI events out over SSE. With
// Last-Event-ID, it is the rest of a run whose connection dropped, read from the run's
// durable stream on any replica, without a second model call.
func (s *Server) run(w http.ResponseWriter, r *http.Request) error {
	body, err := jsonbody.Read(w, r, s.bodyLimit)
	if err != nil {
		return err
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return genui.Errorf(genui.StatusInvalidArgument, "request body is empty: send a RunAgentInput, {\"threadId\",\"runId\",\"messages\",…}")
	}
	if body[0] != '{' {
		return jsonbody.NotObject(body)
	}
	var in runInput
	if e := jsonbody.Decode(body, &in, inputSchema); e != nil {
		return e
	}
	if last := r.Header.Get("Last-Event-ID"); last != "" {
		return s.reconnect(w, r, &in, last)
	}
	t, e := in.toTurn()
	if e != nil {
		return e
	}
	st, err := s.svc.StreamA2UI(r.Context(), t.req)
	if err != nil {
		return t.inputError(err)
	}
	defer st.Close()
	enc := newEncoder(&in, st.ID(), st.Model(), t.shown)
	return s.stream(w, r, st, enc, 0)
}

// reconnect sends the events of a run after the one last names (<stream>.<n>).
func (s *Server) reconnect(w http.ResponseWriter, r *http.Request, in *runInput, last string) error {
	t, e := in.toTurn()
	if e != nil {
		return e
	}
	id, n, ok := strings.Cut(last, ".")
	after, err := strconv.Atoi(n)
	if !ok || id == "" || err != nil || after < 0 {
		return &genui.Error{Status: genui.StatusInvalidArgument, Message: "Last-Event-ID: " + strconv.Quote(last) + " is not the id of an event of this endpoint (<stream>.<n>)", Details: map[string]any{"field": "Last-Event-ID"}}
	}
	st, err := s.svc.Resume(r.Context(), id, 0)
	if err != nil {
		e := genui.AsError(err)
		if e.Status == genui.StatusNotFound {
			return &genui.Error{Status: genui.StatusNotFound, Message: "Last-Event-ID: the run's stream is unknown or expired: start the run again", Details: map[string]any{"field": "Last-Event-ID"}}
		}
		return err
	}
	defer st.Close()
	return s.stream(w, r, st, newEncoder(in, id, s.svc.Model(), t.shown), after)
}

// stream answers with the run's events, from after the first skip of them: RUN_STARTED,
// then the events of each item, ending with RUN_FINISHED or RUN_ERROR, and closes.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, st *genui.Stream, enc *encoder, skip int) error {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Accel-Buffering", "no")
	h.Set("X-Content-Type-Options", "nosniff")
	sw, err := streamresp.Start(w, s.keepalive, keepalive)
	if err != nil {
		return nil
	}
	// send writes the events of b made after the first skip; b holds those from the
	// event numbered from.
	send := func(b []byte, from int) error {
		if enc.n <= skip {
			return nil
		}
		if from <= skip {
			b = dropEvents(b, skip-from+1)
		}
		return sw.Write(b)
	}
	if err := send(enc.start(nil), 1); err != nil {
		return nil
	}
	ctx := r.Context()
	err = st.Each(ctx, func(it genui.Item) error {
		from := enc.n + 1
		return send(enc.item(nil, it), from)
	})
	var last []byte
	if !enc.done && err != streamresp.ErrGone && ctx.Err() == nil {
		if err == nil {
			err = genui.Errorf(genui.StatusUnavailable, "the run's stream ended before the run did")
		}
		s.log.Warn("reading a run's stream failed", "stream", st.ID(), "err", err)
		e := genui.AsError(err)
		last = enc.item(nil, genui.Item{Err: e})
	}
	_ = sw.Close(last)
	return nil
}

var keepalive = []byte(": keepalive\n\n")

// dropEvents drops the first n events of b.
func dropEvents(b []byte, n int) []byte {
	for ; n > 0; n-- {
		i := bytes.Index(b, []byte("\n\n"))
		if i < 0 {
			return nil
		}
		b = b[i+2:]
	}
	return b
}
