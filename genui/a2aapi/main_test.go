package a2aapi_test

import (
	"bufio"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/a2aapi"
	"github.com/genuiserver/genui/internal/testkit/leaktest"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

const (
	extV09  = "https://a2ui.org/a2a-extension/a2ui/v0.9"
	extV08  = "https://a2ui.org/a2a-extension/a2ui/v0.8"
	extV091 = "https://a2ui.org/a2a-extension/a2ui/v0.9.1"
)

// newAgent serves the API and the A2A agent with the named model over real HTTP.
func newAgent(t testing.TB, model string, gopts []genui.Option, aopts ...a2aapi.Option) (*httptest.Server, *genui.Service) {
	t.Helper()
	svc := servetest.Service(t, model, gopts...)
	return servetest.Serve(t, svc, a2aapi.New(svc, append([]a2aapi.Option{a2aapi.WithLogger(quiet)}, aopts...)...).Routes()...), svc
}

// rpc posts one JSON-RPC request and returns the HTTP status and the decoded response.
func rpc(t testing.TB, url, method string, params any, header map[string]string) (int, map[string]any) {
	t.Helper()
	res := send(t, url, method, params, header)
	defer res.Body.Close()
	var out map[string]any
	b, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s: not JSON (%s): %s", method, res.Header.Get("Content-Type"), b)
	}
	return res.StatusCode, out
}

func send(t testing.TB, url, method string, params any, header map[string]string) *http.Response {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 7, "method": method, "params": params})
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// event is one SSE event of a stream: its JSON-RPC response.
type event struct {
	Raw    string
	Result map[string]any
	Error  map[string]any
}

// readEvents reads the SSE events of a stream, at most n of them (n < 0: to its end).
func readEvents(t testing.TB, r *bufio.Reader, n int) []event {
	t.Helper()
	var out []event
	var data strings.Builder
	for n < 0 || len(out) < n {
		line, err := r.ReadString('\n')
		if err != nil {
			if err != io.EOF {
				t.Fatal(err)
			}
			return out
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "data:"):
			data.WriteString(strings.TrimPrefix(strings.TrimPrefix(line, "data:"), " "))
		case line == "" && data.Len() > 0:
			var resp struct {
				ID     any            `json:"id"`
				Result map[string]any `json:"result"`
				Error  map[string]any `json:"error"`
			}
			if err := json.Unmarshal([]byte(data.String()), &resp); err != nil {
				t.Fatalf("event %q: %v", data.String(), err)
			}
			if resp.ID != float64(7) {
				t.Fatalf("event id %v, want the request's", resp.ID)
			}
			out = append(out, event{Raw: data.String(), Result: resp.Result, Error: resp.Error})
			data.Reset()
		}
	}
	return out
}

// stream sends a streaming request and reads all its events.
func stream(t testing.TB, url, method string, params any, header map[string]string) (*http.Response, []event) {
	t.Helper()
	res := send(t, url, method, params, header)
	defer res.Body.Close()
	return res, readEvents(t, bufio.NewReader(res.Body), -1)
}

// message is an A2A v0.3 user message.
func message(parts ...map[string]any) map[string]any {
	return map[string]any{"role": "user", "kind": "message", "messageId": "m-" + strings.Repeat("1", 8), "parts": parts}
}

func text(s string) map[string]any { return map[string]any{"kind": "text", "text": s} }

// dataParts returns the data of every DataPart of the events' status messages.
func dataParts(evs []event) []map[string]any {
	var out []map[string]any
	for _, ev := range evs {
		for _, p := range statusParts(ev.Result) {
			if p["kind"] == "data" {
				if d, ok := p["data"].(map[string]any); ok {
					out = append(out, d)
				}
			}
		}
	}
	return out
}

func statusParts(r map[string]any) []map[string]any {
	st, _ := r["status"].(map[string]any)
	msg, _ := st["message"].(map[string]any)
	ps, _ := msg["parts"].([]any)
	out := make([]map[string]any, 0, len(ps))
	for _, p := range ps {
		if m, ok := p.(map[string]any); ok {
			out = append(out, m)
		}
	}
	return out
}

func state(r map[string]any) string {
	st, _ := r["status"].(map[string]any)
	s, _ := st["state"].(string)
	return s
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// What a model writes for a small form, one JSON message per line.
const formResponse = "Here is the form.\n```a2ui\n" +
	`{"createSurface":{"surfaceId":"form","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}` + "\n" +
	`{"updateComponents":{"surfaceId":"form","components":[` + "\n" +
	`{"id":"root","component":"Column","children":["title","email","submit"]},` + "\n" +
	`{"id":"title","component":"Text","text":"Join us","variant":"h2"},` + "\n" +
	`{"id":"email","component":"TextField","label":"Email","value":{"path":"/form/email"},"placeholder":"you@example.com"},` + "\n" +
	`{"id":"submit","component":"Button","child":"submit-label","action":{"event":{"name":"join","context":{"email":{"path":"/form/email"}}}}},` + "\n" +
	`{"id":"submit-label","component":"Text","text":"Join"}` + "\n" +
	"]}}\n```\n"
