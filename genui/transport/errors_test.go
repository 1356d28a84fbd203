package transport_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/transport"
)

// The HTTP JSON table: every status has its own HTTP status, and Retry-After, in whole
// seconds and at least 1, goes with the statuses a retry may cure.
func TestJSONErrorTable(t *testing.T) {
	codes := map[int]genui.Status{}
	for _, st := range genui.Statuses {
		for _, wait := range []time.Duration{0, time.Millisecond, 1500 * time.Millisecond} {
			w := httptest.NewRecorder()
			transport.JSON.WriteError(w, httptest.NewRequest(http.MethodPost, "/", nil), &genui.Error{Status: st, Message: "m", Details: map[string]any{"field": "f"}, RetryAfter: wait})
			var body struct {
				Error struct {
					Status, Message string
					Details         map[string]any
				}
			}
			if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.Error.Status != string(st) || body.Error.Details["field"] != "f" {
				t.Errorf("%s: %s (%v)", st, w.Body, err)
			}
			if w.Header().Get("Content-Type") != "application/json" {
				t.Errorf("%s: Content-Type %q", st, w.Header().Get("Content-Type"))
			}
			if prev, ok := codes[w.Code]; ok && prev != st && !(w.Code == 400) {
				t.Errorf("%s and %s share HTTP %d", st, prev, w.Code)
			}
			codes[w.Code] = st
			ra := w.Header().Get("Retry-After")
			retryable := st == genui.StatusResourceExhausted || st == genui.StatusUnavailable
			switch {
			case wait == 0 || !retryable:
				if ra != "" {
					t.Errorf("%s, wait %v: Retry-After %q", st, wait, ra)
				}
			default:
				if n, err := strconv.Atoi(ra); err != nil || n < 1 || n != (&genui.Error{RetryAfter: wait}).RetryAfterSeconds() {
					t.Errorf("%s, wait %v: Retry-After %q", st, wait, ra)
				}
			}
		}
	}
	if len(codes) != len(genui.Statuses)-1 { // INVALID_ARGUMENT and FAILED_PRECONDITION are both 400
		t.Errorf("%d HTTP statuses for %d statuses", len(codes), len(genui.Statuses))
	}
}

// The JSON-RPC table of the middleware stack's refusals: every status is a JSON-RPC error
// object with a code, id null, and its status (and field) in data.
func TestJSONRPCErrorTable(t *testing.T) {
	for _, st := range genui.Statuses {
		w := httptest.NewRecorder()
		transport.JSONRPC.WriteError(w, httptest.NewRequest(http.MethodPost, "/", nil), &genui.Error{Status: st, Message: "m", Details: map[string]any{"field": "Authorization"}})
		var body struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Error   struct {
				Code    int
				Message string
				Data    map[string]string
			}
		}
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || body.JSONRPC != "2.0" || string(body.ID) != "null" || body.Error.Code == 0 || body.Error.Data["status"] != string(st) || body.Error.Data["field"] != "Authorization" {
			t.Errorf("%s: %s (%v)", st, w.Body, err)
		}
		if w.Code != transport.HTTPStatus(&genui.Error{Status: st}) {
			t.Errorf("%s: HTTP %d", st, w.Code)
		}
	}
	w := httptest.NewRecorder()
	transport.JSONRPC.WriteError(w, httptest.NewRequest(http.MethodPost, "/", nil), &genui.Error{Status: genui.StatusUnauthenticated, Message: "credentials required", Details: map[string]any{"field": "Authorization"}})
	if got, want := w.Body.String(), `{"jsonrpc":"2.0","id":null,"error":{"code":-31401,"message":"credentials required","data":{"status":"UNAUTHENTICATED","field":"Authorization"}}}`; got != want {
		t.Errorf("the refusal of missing credentials:\n got %s\nwant %s", got, want)
	}
}
