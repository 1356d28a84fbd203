package fakeopenai

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
	"sync/atomic"
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

// WithLatency delays the first event (or the HTTP error) of every reply.
func WithLatency(d time.Duration) Option { return func(s *Server) { s.latency = d } }

// WithPacing delays every event after the first.
func WithPacing(d time.Duration) Option { return func(s *Server) { s.pacing = d } }

// WithModels sets the models listed and accepted. Default: gpt-4o-mini,
// gpt-4o, gpt-4.1-mini.
func WithModels(names ...string) Option { return func(s *Server) { s.models = names } }

// WithAPIKey makes the server accept only this bearer token. By default any
// non-empty token is accepted.
func WithAPIKey(key string) Option { return func(s *Server) { s.apiKey = key } }

// Server is a running fake OpenAI API on 127.0.0.1.
type Server struct {
	ts              *httptest.Server
	responder       Responder
	latency, pacing time.Duration
	models          []string
	apiKey          string
	ids             atomic.Int64
	script          *script.Script[*Request, Reply]
}

// New starts a server on a free port of 127.0.0.1.
func New(opts ...Option) *Server {
	s := &Server{
		responder: func(*Request) Reply { return Respond(Text("ok")) },
		models:    []string{"gpt-4o-mini", "gpt-4o", "gpt-4.1-mini"},
		script:    script.New[*Request, Reply]("fakeopenai"),
	}
	for _, o := range opts {
		o(s)
	}
	s.ts = httptest.NewServer(http.HandlerFunc(s.serve))
	return s
}

// URL returns the base URL, e.g. "http://127.0.0.1:40123/v1", for
// OPENAI_BASE_URL.
func (s *Server) URL() string { return s.ts.URL + "/v1" }

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
// rejected before reaching the script (bad key, unknown model, malformed
// body) are not captured.
func (s *Server) Requests() []*Request { return s.script.Requests() }

// WaitRequests blocks until at least n chat requests were captured, ctx is
// done or the server is closed.
func (s *Server) WaitRequests(ctx context.Context, n int) error { return s.script.WaitRequests(ctx, n) }

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	path := strings.TrimPrefix(r.URL.Path, "/v1")
	var handle func()
	switch {
	case path == "/models" && r.Method == http.MethodGet:
		handle = func() {
			list := []map[string]any{}
			for _, m := range s.models {
				list = append(list, map[string]any{"id": m, "object": "model", "created": 1700000000, "owned_by": "fakeopenai"})
			}
			writeJSON(w, map[string]any{"object": "list", "data": list})
		}
	case path == "/chat/completions" && r.Method == http.MethodPost:
		handle = func() { s.chat(w, r) }
	}
	key, bearer := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	switch {
	case handle == nil:
		writeError(w, &APIError{Status: http.StatusNotFound, Type: "invalid_request_error",
			Message: fmt.Sprintf("Invalid URL (%s %s)", r.Method, r.URL.Path)})
	case !bearer || key == "":
		writeError(w, &APIError{Status: http.StatusUnauthorized, Type: "invalid_request_error",
			Message: "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY)."})
	case s.apiKey != "" && key != s.apiKey:
		writeError(w, &APIError{Status: http.StatusUnauthorized, Type: "invalid_request_error", Code: "invalid_api_key",
			Message: "Incorrect API key provided."})
	default:
		handle()
	}
}

func writeJSON(w http.ResponseWriter, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
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
		writeError(w, &APIError{Status: 400, Type: "invalid_request_error",
			Message: "We could not parse the JSON body of your request. " + err.Error()})
		return
	case req.parsed.Model == "":
		writeError(w, &APIError{Status: 400, Type: "invalid_request_error", Message: "you must provide a model parameter"})
		return
	case !slices.Contains(s.models, req.parsed.Model):
		writeError(w, &APIError{Status: 404, Type: "invalid_request_error", Code: "model_not_found",
			Message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", req.parsed.Model)})
		return
	case len(req.parsed.Messages) == 0:
		writeError(w, &APIError{Status: 400, Type: "invalid_request_error",
			Message: "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead."})
		return
	}
	req.Model, req.Stream = req.parsed.Model, req.parsed.Stream
	req.IncludeUsage = req.parsed.StreamOptions != nil && req.parsed.StreamOptions.IncludeUsage
	defer req.call.Finish()
	reply := s.script.Next(req, s.responder)
	s.write(w, r.Context(), req, reply)
}

// write sends the reply: server-sent events, or a single JSON body.
func (s *Server) write(w http.ResponseWriter, ctx context.Context, req *Request, reply Reply) {
	latency, gap := pacing.Pick(reply.Latency, s.latency), pacing.Pick(reply.Pacing, s.pacing)
	id := fmt.Sprintf("chatcmpl-fake%06d", s.ids.Add(1))
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
		writeJSON(w, reply.completion(req, id))
		return
	}
	events := reply.chunks(req, id)
	n := len(events)
	if fail != nil {
		n = min(max(fail.After, 0), n)
	}
	frames := make([][]byte, 0, n+1)
	for _, e := range events[:n] {
		b, _ := json.Marshal(e)
		frames = append(frames, append(append([]byte("data: "), b...), "\n\n"...))
	}
	switch {
	case fail == nil:
		frames = append(frames, []byte("data: [DONE]\n\n"))
	case fail.Err != nil:
		// An error event, as OpenAI sends when a stream fails part-way.
		frames = append(frames, append(append([]byte("data: "), fail.Err.body()...), "\n\n"...))
	default:
		frames = append(frames, nil) // cut the connection
	}
	w.Header().Set("Content-Type", "text/event-stream; charset=utf-8")
	req.call.Stream(ctx, w, s.script.Stopped(), gap, frames)
}

// APIError is an error answer in OpenAI's format.
type APIError struct {
	// Status is the HTTP status, e.g. 429.
	Status int
	// Message, Type (e.g. "rate_limit_exceeded", "server_error") and Code
	// (e.g. "rate_limit_exceeded"; "" sends null) are the error object's.
	Message, Type, Code string
	// RetryAfter, if positive, is sent as the Retry-After header, in whole
	// seconds (at least 1).
	RetryAfter time.Duration
}

// RateLimited returns a 429 rate_limit_exceeded error with Retry-After.
func RateLimited(retryAfter time.Duration) *APIError {
	return &APIError{Status: http.StatusTooManyRequests, Type: "requests", Code: "rate_limit_exceeded", RetryAfter: retryAfter,
		Message: "Rate limit reached for requests. Please try again later."}
}

// Unavailable returns a 503 "overloaded" server error.
func Unavailable() *APIError {
	return &APIError{Status: http.StatusServiceUnavailable, Type: "server_error",
		Message: "The engine is currently overloaded, please try again later."}
}

// Error implements error.
func (e *APIError) Error() string {
	return fmt.Sprintf("fakeopenai: %d %s: %s", e.Status, e.Type, e.Message)
}

// body renders {"error":{…}} on one line.
func (e *APIError) body() []byte {
	var code any
	if e.Code != "" {
		code = e.Code
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": e.Message, "type": e.Type, "param": nil, "code": code}})
	return b
}

func writeError(w http.ResponseWriter, e *APIError) {
	w.Header().Set("Content-Type", "application/json")
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(int(max((e.RetryAfter+time.Second-1)/time.Second, 1))))
	}
	w.WriteHeader(e.Status)
	_, _ = w.Write(e.body())
}
