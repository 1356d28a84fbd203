package fakeollama

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/genuiserver/genui/internal/testkit/pacing"
	"github.com/genuiserver/genui/internal/testkit/script"
)

// Responder decides the reply to a chat request for which no reply was
// enqueued. It may be called concurrently.
type Responder func(req *Request) Reply

// Option configures a Server.
type Option func(*Server)

// WithResponder sets the Responder used when the Enqueue FIFO is empty.
func WithResponder(r Responder) Option { return func(s *Server) { s.responder = r } }

// WithLatency delays the first line (or the HTTP error) of every reply.
func WithLatency(d time.Duration) Option { return func(s *Server) { s.latency = d } }

// WithPacing delays every line after the first.
func WithPacing(d time.Duration) Option { return func(s *Server) { s.pacing = d } }

// WithModels sets the models listed and accepted, with or without their tag
// (a name without one is "name:latest"). Default: llama3.2, qwen2.5:7b.
func WithModels(names ...string) Option {
	return func(s *Server) {
		s.models = nil
		for _, n := range names {
			s.models = append(s.models, tagged(n))
		}
	}
}

func tagged(name string) string {
	if strings.Contains(name, ":") {
		return name
	}
	return name + ":latest"
}

// Server is a running fake Ollama server on 127.0.0.1.
type Server struct {
	ts              *httptest.Server
	responder       Responder
	latency, pacing time.Duration
	models          []string
	script          *script.Script[*Request, Reply]
}

// New starts a server on a free port of 127.0.0.1.
func New(opts ...Option) *Server {
	s := &Server{
		responder: func(*Request) Reply { return Respond(Text("ok")) },
		models:    []string{"llama3.2:latest", "qwen2.5:7b"},
		script:    script.New[*Request, Reply]("fakeollama"),
	}
	for _, o := range opts {
		o(s)
	}
	s.ts = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL returns the server's address, e.g. "http://127.0.0.1:40123", for
// OLLAMA_HOST.
func (s *Server) URL() string { return s.ts.URL }

// Close aborts replies in progress (marking them cancelled), stops the
// server and waits for its handlers to return. It may be called twice.
func (s *Server) Close() {
	s.script.Stop()
	s.ts.Close()
}

// Enqueue appends replies to the FIFO script; each chat request takes the
// first one, and the Responder is used once it is empty.
func (s *Server) Enqueue(replies ...Reply) { s.script.Enqueue(replies...) }

// Requests returns the captured chat requests in arrival order. Requests
// rejected before reaching the script (unknown model, malformed body) are
// not captured.
func (s *Server) Requests() []*Request { return s.script.Requests() }

// WaitRequests blocks until at least n chat requests were captured, ctx is
// done or the server is closed.
func (s *Server) WaitRequests(ctx context.Context, n int) error { return s.script.WaitRequests(ctx, n) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.URL.Path == "/api/chat" && r.Method == http.MethodPost:
		s.chat(w, r)
	case r.URL.Path == "/api/tags" && r.Method == http.MethodGet:
		list := []map[string]any{}
		for _, m := range s.models {
			list = append(list, map[string]any{"name": m, "model": m, "modified_at": "2026-01-01T00:00:00Z",
				"size": 2019393189, "digest": digest(m), "details": details()})
		}
		writeJSON(w, map[string]any{"models": list})
	case r.URL.Path == "/api/show" && r.Method == http.MethodPost:
		var body struct{ Model, Name string }
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
			writeError(w, &APIError{Status: http.StatusBadRequest, Message: err.Error()})
			return
		}
		name := body.Model
		if name == "" {
			name = body.Name
		}
		if !slices.Contains(s.models, tagged(name)) {
			writeError(w, notFound(name))
			return
		}
		writeJSON(w, map[string]any{"modelfile": "FROM " + tagged(name), "template": "{{ .Prompt }}",
			"details": details(), "model_info": map[string]any{"general.architecture": "llama"},
			"capabilities": []string{"completion", "tools"}, "modified_at": "2026-01-01T00:00:00Z"})
	default:
		writeError(w, &APIError{Status: http.StatusNotFound, Message: "404 page not found"})
	}
}

func digest(name string) string { return fmt.Sprintf("%064x", len(name)) }

func details() map[string]any {
	return map[string]any{"format": "gguf", "family": "llama", "families": []string{"llama"},
		"parameter_size": "3.2B", "quantization_level": "Q4_K_M"}
}

func notFound(model string) *APIError {
	return &APIError{Status: http.StatusNotFound, Message: fmt.Sprintf("model %q not found, try pulling it first", model)}
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_, _ = w.Write(b)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	req := &Request{Header: r.Header.Clone(), Raw: raw}
	err = json.Unmarshal(raw, &req.Body)
	if err == nil {
		err = json.Unmarshal(raw, &req.parsed)
	}
	switch {
	case err != nil:
		writeError(w, &APIError{Status: http.StatusBadRequest, Message: err.Error()})
		return
	case req.parsed.Model == "":
		writeError(w, &APIError{Status: http.StatusBadRequest, Message: "model is required"})
		return
	case !slices.Contains(s.models, tagged(req.parsed.Model)):
		writeError(w, notFound(req.parsed.Model))
		return
	}
	req.Model = req.parsed.Model
	req.Stream = req.parsed.Stream == nil || *req.parsed.Stream
	defer req.call.Finish()
	reply := s.script.Next(req, s.responder)
	s.write(w, r.Context(), req, reply)
}

// write sends the reply: NDJSON lines, or a single JSON body.
func (s *Server) write(w http.ResponseWriter, ctx context.Context, req *Request, reply Reply) {
	latency, gap := pacing.Pick(reply.Latency, s.latency), pacing.Pick(reply.Pacing, s.pacing)
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
		writeJSON(w, reply.whole(req))
		return
	}
	lines := reply.lines(req)
	n := len(lines)
	if fail != nil {
		n = min(max(fail.After, 0), n)
	}
	frames := make([][]byte, 0, n+1)
	for _, l := range lines[:n] {
		b, _ := json.Marshal(l)
		frames = append(frames, append(b, '\n'))
	}
	if fail != nil {
		var last []byte // nil cuts the connection
		if fail.Err != nil {
			b, _ := json.Marshal(map[string]string{"error": fail.Err.Message})
			last = append(b, '\n')
		}
		frames = append(frames, last)
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	req.call.Stream(ctx, w, s.script.Stopped(), gap, frames)
}

// APIError is an error answer in Ollama's format, {"error":"…"}.
type APIError struct {
	// Status is the HTTP status, e.g. 503.
	Status  int
	Message string
	// RetryAfter, if positive, is sent as the Retry-After header, in whole
	// seconds (at least 1).
	RetryAfter time.Duration
}

// Busy returns a 503 "server busy" error with Retry-After, as Ollama answers
// when its queue is full (OLLAMA_MAX_QUEUE).
func Busy(retryAfter time.Duration) *APIError {
	return &APIError{Status: http.StatusServiceUnavailable, Message: "server busy, please try again.  maximum pending requests exceeded",
		RetryAfter: retryAfter}
}

// Error implements error.
func (e *APIError) Error() string { return fmt.Sprintf("fakeollama: %d: %s", e.Status, e.Message) }

func writeError(w http.ResponseWriter, e *APIError) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(max((e.RetryAfter+time.Second-1)/time.Second, 1))))
	}
	w.WriteHeader(e.Status)
	b, _ := json.Marshal(map[string]string{"error": e.Message})
	_, _ = w.Write(b)
}
