package a2aapi

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	legacy "github.com/a2aproject/a2a-go/a2a"
	legacysrv "github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/genuiserver/genui/genui"
)

// failing answers GetTask with its error; a2a-go's handlers call nothing else here.
type failing struct {
	a2asrv.RequestHandler
	err error
}

func (f failing) GetTask(context.Context, *a2a.GetTaskRequest) (*a2a.Task, error) {
	return nil, f.err
}

// failingV03 answers tasks/get with its error, as v03 does.
type failingV03 struct {
	legacysrv.RequestHandler
	err error
}

func (f failingV03) OnGetTask(context.Context, *legacy.TaskQueryParams) (*legacy.Task, error) {
	return nil, v03Error(f.err)
}

// rpcErrorOf posts body to h and returns the JSON-RPC error it answers.
func rpcErrorOf(t *testing.T, h http.Handler, body string) (code int, msg string, data json.RawMessage) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body)))
	var out struct {
		Error *struct {
			Code    int             `json:"code"`
			Message string          `json:"message"`
			Data    json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil || out.Error == nil {
		t.Fatalf("%s: %v", rec.Body, err)
	}
	return out.Error.Code, out.Error.Message, out.Error.Data
}

// The A2A error of every canonical status, on each binding: the JSON-RPC code (the same
// on A2A 1.0 and v0.3), v0.3's data one object holding the details and the reason, the
// HTTP status of HTTP+JSON; a server error says its status and, whenever the error asks
// for a wait, after how many whole seconds to retry, at least 1.
func TestErrorTable(t *testing.T) {
	want := map[genui.Status]struct {
		code, http int
		reason     string
	}{
		genui.StatusInvalidArgument:    {-32602, 400, "INVALID_PARAMS"},
		genui.StatusFailedPrecondition: {-32602, 400, "INVALID_PARAMS"},
		genui.StatusNotFound:           {-32602, 400, "INVALID_PARAMS"},
		genui.StatusAborted:            {-32004, 400, "UNSUPPORTED_OPERATION"},
		genui.StatusResourceExhausted:  {-32000, 500, "SERVER_ERROR"},
		genui.StatusUnavailable:        {-32000, 500, "SERVER_ERROR"},
		genui.StatusDeadlineExceeded:   {-32603, 500, "INTERNAL_ERROR"},
		genui.StatusCancelled:          {-32603, 500, "INTERNAL_ERROR"},
		genui.StatusInternal:           {-32603, 500, "INTERNAL_ERROR"},
		genui.StatusUnauthenticated:    {-31401, 401, "UNAUTHENTICATED"},
		genui.StatusPermissionDenied:   {-31403, 403, "UNAUTHORIZED"},
		genui.StatusUnimplemented:      {-32004, 400, "UNSUPPORTED_OPERATION"},
	}
	v1 := func(err error) http.Handler { return a2asrv.NewJSONRPCHandler(failing{err: err}) }
	v03 := func(err error) http.Handler { return legacysrv.NewJSONRPCHandler(failingV03{err: err}) }
	rest := func(err error) http.Handler { return a2asrv.NewRESTHandler(failing{err: err}) }
	for _, st := range genui.Statuses {
		w, ok := want[st]
		if _, mapped := sentinels[st]; !ok || !mapped {
			t.Errorf("%s: no A2A error", st)
			continue
		}
		for _, wait := range []time.Duration{0, time.Millisecond, 2500 * time.Millisecond} {
			e := &genui.Error{Status: st, Message: "the problem", RetryAfter: wait, Details: map[string]any{"field": "messages", "limit": "rate"}}
			ae := errorOf(e, "message.parts: the problem", "message.parts")
			server := errors.Is(ae, a2a.ErrServerError)
			retry, _ := ae.Details["retryAfter"].(int)
			switch {
			case server && (ae.Details["status"] != string(st) || ae.Details["limit"] != "rate" || retry != e.RetryAfterSeconds() || wait > 0 && retry < 1):
				t.Errorf("%s, wait %v: details %v", st, wait, ae.Details)
			case !server && (ae.Details["field"] != "message.parts" || ae.Details["retryAfter"] != nil):
				t.Errorf("%s, wait %v: details %v", st, wait, ae.Details)
			}

			get := `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}`
			if code, msg, _ := rpcErrorOf(t, v1(ae), get); code != w.code || msg != "message.parts: the problem" {
				t.Errorf("%s: A2A 1.0 JSON-RPC %d %q, want %d", st, code, msg, w.code)
			}
			code, msg, raw := rpcErrorOf(t, v03(ae), strings.Replace(get, "GetTask", "tasks/get", 1))
			var data map[string]any
			if err := json.Unmarshal(raw, &data); err != nil || code != w.code || msg != "message.parts: the problem" || data["reason"] != w.reason {
				t.Errorf("%s: A2A v0.3 JSON-RPC %d %q %s (%v), want %d", st, code, msg, raw, err, w.code)
			}
			if r, _ := data["retryAfter"].(float64); server && int(r) != e.RetryAfterSeconds() || !server && data["field"] != "message.parts" {
				t.Errorf("%s, wait %v: A2A v0.3 data %s", st, wait, raw)
			}
			rec := httptest.NewRecorder()
			rest(ae).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/tasks/t", nil))
			if rec.Code != w.http || !strings.Contains(rec.Body.String(), `"message":"message.parts: the problem"`) {
				t.Errorf("%s: HTTP+JSON %d %s, want %d", st, rec.Code, rec.Body, w.http)
			}
		}
	}
}

// An error that is not the agent's own (a2a-go's, or a plain one) is internal on v0.3
// too, its data an object.
func TestV03ErrorOfAPlainError(t *testing.T) {
	err := v03Error(errors.New("boom"))
	var le *legacy.Error
	if !errors.As(err, &le) || !errors.Is(err, legacy.ErrInternalError) || le.Details["reason"] != "INTERNAL_ERROR" || le.Message != "boom" {
		t.Fatalf("%#v", err)
	}
	err = v03Error(a2a.ErrTaskNotFound)
	if !errors.Is(err, legacy.ErrTaskNotFound) || !errors.As(err, &le) || le.Details["reason"] != "TASK_NOT_FOUND" {
		t.Fatalf("%#v", err)
	}
}
