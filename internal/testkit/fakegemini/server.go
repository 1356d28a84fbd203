package fakegemini

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/genuiserver/genui/internal/testkit/pacing"
	"github.com/genuiserver/genui/internal/testkit/script"
)

// Responder decides the reply to a generate request for which no reply was
// enqueued. It may be called concurrently.
type Responder func(req *Request) Reply

// Option configures a Server.
type Option func(*Server)

// WithResponder sets the Responder used when the Enqueue FIFO is empty.
func WithResponder(r Responder) Option { return func(s *Server) { s.responder = r } }

// WithLatency delays the first event (or the HTTP error) of every reply.
func WithLatency(d time.Duration) Option { return func(s *Server) { s.latency = d } }

// WithPacing delays every event after the first.
func WithPacing(d time.Duration) Option { return func(s *Server) { s.pacing = d } }

// WithModels sets the models listed and accepted (with or without the
// "models/" prefix). Generating with an unlisted model gives 404 NOT_FOUND.
// Default: gemini-2.5-flash, gemini-2.5-pro, gemini-2.5-flash-lite,
// gemini-2.0-flash.
func WithModels(names ...string) Option {
	return func(s *Server) {
		s.models = nil
		for _, n := range names {
			s.models = append(s.models, strings.TrimPrefix(n, "models/"))
		}
	}
}

// WithAPIKey makes the server accept only this API key; any other non-empty
// key gives 400 INVALID_ARGUMENT (API_KEY_INVALID). By default any
// non-empty key is accepted.
func WithAPIKey(key string) Option { return func(s *Server) { s.apiKey = key } }

// Server is a running fake Gemini API on 127.0.0.1.
type Server struct {
	ts              *httptest.Server
	responder       Responder
	latency, pacing time.Duration
	models          []string
	apiKey          string
	ids             atomic.Int64
	conns           atomic.Int64
	script          *script.Script[*Request, Reply]
}

// New starts a server on a free port of 127.0.0.1.
func New(opts ...Option) *Server {
	s := &Server{
		responder: func(*Request) Reply { return Respond(Text("ok")) },
		models:    []string{"gemini-2.5-flash", "gemini-2.5-pro", "gemini-2.5-flash-lite", "gemini-2.0-flash"},
		script:    script.New[*Request, Reply]("fakegemini"),
	}
	for _, o := range opts {
		o(s)
	}
	s.ts = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	// HTTP/1.1, and HTTP/2 without TLS for clients that speak it (h2c, prior knowledge).
	s.ts.Config.Protocols = new(http.Protocols)
	s.ts.Config.Protocols.SetHTTP1(true)
	s.ts.Config.Protocols.SetUnencryptedHTTP2(true)
	s.ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateNew {
			s.conns.Add(1)
		}
	}
	s.ts.Start()
	return s
}

// Connections returns how many connections clients have opened so far.
func (s *Server) Connections() int { return int(s.conns.Load()) }

// URL returns the base URL, e.g. "http://127.0.0.1:40123", for
// genai.HTTPOptions.BaseURL or GOOGLE_GEMINI_BASE_URL.
func (s *Server) URL() string { return s.ts.URL }

// Close aborts replies in progress (marking them cancelled), stops the
// server and waits for its handlers to return. It may be called twice.
func (s *Server) Close() {
	s.script.Stop()
	s.ts.Close()
}

// Enqueue appends replies to the FIFO script; each generate request takes
// the first one, and the Responder is used once it is empty.
func (s *Server) Enqueue(replies ...Reply) { s.script.Enqueue(replies...) }

// Requests returns the captured generate requests in arrival order.
// Requests rejected before reaching the script (bad key, unknown model,
// malformed body) are not captured.
func (s *Server) Requests() []*Request { return s.script.Requests() }

// WaitRequests blocks until at least n generate requests were captured, ctx
// is done or the server is closed.
func (s *Server) WaitRequests(ctx context.Context, n int) error { return s.script.WaitRequests(ctx, n) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	ver, rest, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	name, isModel := strings.CutPrefix(rest, "models/")
	model, method, hasMethod := strings.Cut(name, ":")
	var handle func()
	switch {
	case ver != "v1beta" && ver != "v1" && ver != "v1alpha":
	case rest == "models" && r.Method == http.MethodGet:
		handle = func() {
			list := []map[string]any{}
			for _, m := range s.models {
				list = append(list, modelJSON(m))
			}
			writeJSON(w, map[string]any{"models": list})
		}
	case isModel && !hasMethod && r.Method == http.MethodGet:
		handle = func() {
			if !slices.Contains(s.models, model) {
				writeError(w, &APIError{Code: 404, Message: fmt.Sprintf("models/%s is not found for API version %s", model, ver)})
				return
			}
			writeJSON(w, modelJSON(model))
		}
	case isModel && r.Method == http.MethodPost && (method == "generateContent" || method == "streamGenerateContent"):
		handle = func() { s.generate(w, r, model, method, ver) }
	}
	key := r.Header.Get("x-goog-api-key")
	if key == "" {
		key = r.URL.Query().Get("key")
	}
	switch {
	case handle == nil:
		writeError(w, &APIError{Code: http.StatusNotFound, Message: "Method not found."})
	case key == "":
		writeError(w, &APIError{Code: http.StatusForbidden, Message: "Method doesn't allow unregistered callers " +
			"(callers without established identity). Please use API Key or other form of API consumer identity to call this API."})
	case s.apiKey != "" && key != s.apiKey:
		writeError(w, &APIError{Code: http.StatusBadRequest, Message: "API key not valid. Please pass a valid API key.",
			Details: []map[string]any{{"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": "API_KEY_INVALID",
				"domain": "googleapis.com", "metadata": map[string]any{"service": "generativelanguage.googleapis.com"}}}})
	default:
		handle()
	}
}

func modelJSON(name string) map[string]any {
	return map[string]any{
		"name": "models/" + name, "version": "001", "displayName": name,
		"description": "Fake " + name + " served by fakegemini.", "inputTokenLimit": 1048576, "outputTokenLimit": 65536,
		"supportedGenerationMethods": []string{"generateContent", "streamGenerateContent", "countTokens"},
		"temperature":                1, "topP": 0.95, "topK": 64, "maxTemperature": 2,
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_, _ = w.Write(b)
}

func (s *Server) generate(w http.ResponseWriter, r *http.Request, model, method, ver string) {
	if !slices.Contains(s.models, model) {
		writeError(w, &APIError{Code: 404, Message: fmt.Sprintf("models/%s is not found for API version %s, "+
			"or is not supported for %s. Call ListModels to see the list of available models and their "+
			"supported methods.", model, ver, method)})
		return
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req := &Request{Model: model, Stream: method == "streamGenerateContent", Header: r.Header.Clone(),
		Proto: r.Proto, Raw: raw}
	err = json.Unmarshal(raw, &req.Body)
	if err == nil {
		err = json.Unmarshal(raw, &req.parsed)
	}
	if err != nil {
		writeError(w, &APIError{Code: 400, Message: "Invalid JSON payload received. " + err.Error()})
		return
	}
	if len(req.parsed.Contents) == 0 {
		writeError(w, &APIError{Code: 400, Message: "* GenerateContentRequest.contents: contents is not specified\n"})
		return
	}
	defer req.call.Finish()
	reply := s.script.Next(req, s.responder)
	s.write(w, r.Context(), req, reply)
}

// write sends the reply: one SSE event per chunk, or a single JSON body.
func (s *Server) write(w http.ResponseWriter, ctx context.Context, req *Request, reply Reply) {
	latency, gap := pacing.Pick(reply.Latency, s.latency), pacing.Pick(reply.Pacing, s.pacing)
	events := reply.build(req, fmt.Sprintf("fake-%06d", s.ids.Add(1)), !req.Stream)
	fail := reply.MidStream
	if !req.Stream {
		latency += gap * time.Duration(max(len(reply.Chunks), 1)-1)
	}
	if !pacing.Pause(ctx, s.script.Stopped(), latency) {
		req.call.Abort()
	}
	if !req.Stream && fail != nil && reply.Err == nil {
		if reply.Err = fail.Err; fail.Err == nil {
			panic(http.ErrAbortHandler) // cut the connection
		}
	}
	if reply.Err != nil {
		writeError(w, reply.Err)
		return
	}
	if !req.Stream {
		writeJSON(w, events[0])
		return
	}
	n := len(events)
	if fail != nil {
		n = min(max(fail.After, 0), n)
	}
	frames := make([][]byte, 0, n+1)
	for _, e := range events[:n] {
		b, _ := json.Marshal(e)
		frames = append(frames, append(append([]byte("data: "), b...), "\n\n"...))
	}
	if fail != nil {
		var last []byte // nil cuts the connection
		if fail.Err != nil {
			// A bare error object line: genai reports it as an APIError.
			last = append(fail.Err.body(), "\n\n"...)
		}
		frames = append(frames, last)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	req.call.Stream(ctx, w, s.script.Stopped(), gap, frames)
}
