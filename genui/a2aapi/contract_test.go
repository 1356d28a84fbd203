package a2aapi

import (
	"context"
	"encoding/json"
	"iter"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	legacysrv "github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// What this package relies on of a2a-go (github.com/a2aproject/a2a-go/v2 v2.4.0 and its v0.3
// line, github.com/a2aproject/a2a-go v0.3.15, pinned in go.mod), or works around because
// a2a-go offers no option for it. A test here fails when an upgrade changes that: then
// read the comment it names, and drop what a2a-go now does itself.

// The card: a2av0's producer makes the card's JSON itself (cardHandler writes it), the
// A2A 1.0 card with the v0.3 fields. a2a-go's card handler sets CORS headers of its own,
// whatever the server allows, which is why cardHandler serves the card.
func TestA2AGoCard(t *testing.T) {
	card := &a2a.AgentCard{Name: "n", Version: "1", SupportedInterfaces: []*a2a.AgentInterface{
		{URL: "http://h/a2a", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: "0.3"}}}
	p := a2av0.NewAgentCardProducer(a2asrv.AgentCardProducerFn(func(context.Context) (*a2a.AgentCard, error) { return card, nil }))
	if _, ok := p.(a2asrv.AgentCardJSONProducer); !ok {
		t.Fatal("a2av0's card producer no longer makes the card's JSON: cardHandler marshals the A2A 1.0 card, without v0.3's fields")
	}
	b, err := cardJSON(context.Background(), p)
	var got map[string]any
	if err != nil || json.Unmarshal(b, &got) != nil || got["url"] != "http://h/a2a" || got["protocolVersion"] != "0.3" || got["supportedInterfaces"] == nil {
		t.Fatalf("a2av0's card: %s %v", b, err)
	}
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodGet, "/.well-known/agent-card.json", nil)
	req.Header.Set("Origin", "http://evil.example")
	a2asrv.NewAgentCardHandler(p).ServeHTTP(rec, req)
	if rec.Header().Get("Access-Control-Allow-Origin") != "http://evil.example" {
		t.Errorf("a2a-go's card handler no longer allows any origin (%q): it could serve the card (see cardHandler)", rec.Header().Get("Access-Control-Allow-Origin"))
	}
}

// v0.3 errors: a2av0's JSON-RPC handler writes data as A2A 1.0's list of typed details,
// which is why v0.3 is served by a2a-go's v0.3 line (see v03), whose data is the error's
// details, one object.
func TestA2AGoV03ErrorData(t *testing.T) {
	err := a2a.NewError(a2a.ErrInvalidParams, "bad").WithDetails(map[string]any{"field": "f"})
	get := `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"t"}}`
	_, _, data := rpcErrorOf(t, a2av0.NewJSONRPCHandler(failing{err: err}), get)
	if !strings.HasPrefix(string(data), "[") {
		t.Errorf("a2av0 writes v0.3 error data as %s, no longer a list: it could serve v0.3 (see v03)", data)
	}
	code, _, data := rpcErrorOf(t, legacysrv.NewJSONRPCHandler(failingV03{err: err}), get)
	if code != -32602 || string(data) != `{"field":"f","reason":"INVALID_PARAMS"}` {
		t.Errorf("a2a-go v0.3: %d %s", code, data)
	}
}

// v0.3 requests a2a-go's v0.3 handler answers otherwise than JSON-RPC has it, which is
// why wrapV03 answers them first (see v03Refusal): message params it cannot decode other
// than for a type are a parse error, a method that is not a string invalid params.
func TestA2AGoV03Refusals(t *testing.T) {
	h := legacysrv.NewJSONRPCHandler(failingV03{})
	for _, tc := range []struct {
		body string
		code int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","kind":"message","messageId":"m","parts":[{"kind":"nothing"}]}}}`, -32700},
		{`{"jsonrpc":"2.0","id":1,"method":5}`, -32602},
	} {
		if code, _, _ := rpcErrorOf(t, h, tc.body); code != tc.code {
			t.Errorf("a2a-go v0.3 answers %s with %d, no longer %d: see v03Refusal", tc.body, code, tc.code)
		}
		if _, code, _, refused := v03Refusal([]byte(tc.body)); !refused || code == tc.code {
			t.Errorf("v03Refusal(%s): %v %d", tc.body, refused, code)
		}
	}
}

// streaming answers its stream with its error.
type streaming struct {
	a2asrv.RequestHandler
	err error
}

func (s streaming) SubscribeToTask(context.Context, *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if yield(&a2a.Task{ID: "t", ContextID: "c", Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}, nil) {
			yield(nil, s.err)
		}
	}
}

// writes records each Write of a response.
type writes struct {
	*httptest.ResponseRecorder
	each []string
}

func (w *writes) Write(b []byte) (int, error) {
	w.each = append(w.each, string(b))
	return w.ResponseRecorder.Write(b)
}

// HTTP+JSON stream errors: a2a-go writes an error as a plain data event, with no event
// type, each line of an event in one Write, which is why restErrors marks it (see
// wrapREST).
func TestA2AGoRESTStreamError(t *testing.T) {
	h := a2asrv.NewRESTHandler(streaming{err: a2a.NewError(a2a.ErrTaskNotFound, "gone")})
	w := &writes{ResponseRecorder: httptest.NewRecorder()}
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/tasks/t:subscribe", nil))
	var data []string
	for _, b := range w.each {
		if strings.HasPrefix(b, "event:") {
			t.Errorf("a2a-go writes an event type (%q): restErrors may go", b)
		}
		if strings.HasPrefix(b, "data:") {
			data = append(data, b)
		}
	}
	if len(data) != 2 || strings.HasPrefix(data[0], string(errorData)) || !strings.HasPrefix(data[1], string(errorData)) || strings.Count(data[1], "\n") != 2 {
		t.Fatalf("a2a-go's stream: %q", w.each)
	}
	// Through restErrors, the error event has its type.
	w = &writes{ResponseRecorder: httptest.NewRecorder()}
	h.ServeHTTP(&restErrors{ResponseWriter: w}, httptest.NewRequest(http.MethodGet, "/tasks/t:subscribe", nil))
	if body := w.Body.String(); strings.Count(body, "event: error\n"+string(errorData)) != 1 || strings.Count(body, "event:") != 1 {
		t.Fatalf("marked: %s", body)
	}
}
