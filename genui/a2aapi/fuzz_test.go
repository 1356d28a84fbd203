package a2aapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui/offline"
)

// FuzzRequest sends any body to the A2A JSON-RPC endpoints (v0.3 and 1.0): every answer
// is JSON-RPC (a JSON body, or SSE events of it) with a result or a known error code,
// never a panic the transport recovered (-32603), nor a body that is not JSON.
func FuzzRequest(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","kind":"message","messageId":"m","parts":[{"kind":"text","text":"hi"}]}}}`,
		`{"jsonrpc":"2.0","id":"a","method":"message/stream","params":{"message":{"role":"user","kind":"message","messageId":"m","parts":[{"kind":"data","data":{"version":"v0.9","action":{"name":"send","surfaceId":"s","sourceComponentId":"b","timestamp":"2026-01-01T00:00:00Z","context":{}}}}],"metadata":{"a2uiClientCapabilities":{"v0.9":{"supportedCatalogIds":["https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"]}}}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","kind":"message","messageId":"m","parts":[{"kind":"data","data":{"toolResult":{"id":"c1","output":{}}}}],"metadata":{"clientTools":[{"name":"getLocation","inputSchema":{"type":"object"}}]}}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x","historyLength":2}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tasks/resubscribe","params":{"id":"x"}}`,
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"hi"}]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"data":[{"version":"v0.9","action":{"name":"x"}}],"mediaType":"application/json+a2ui"}]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":5}`,
		`{`,
	} {
		f.Add("/a2a", s)
		f.Add("/a2a/v1", s)
	}
	srv, _ := newAgent(f, offline.Name, nil)
	known := map[float64]bool{-32700: true, -32600: true, -32601: true, -32602: true,
		-32001: true, -32002: true, -32003: true, -32004: true, -32005: true, -32006: true, -32007: true, -32009: true}
	check := func(t *testing.T, body []byte) {
		t.Helper()
		var out struct {
			JSONRPC string          `json:"jsonrpc"`
			Result  json.RawMessage `json:"result"`
			Error   *struct {
				Code float64 `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatalf("not JSON: %v: %s", err, body)
		}
		if out.JSONRPC != "2.0" || (out.Error == nil) == (out.Result == nil) {
			t.Fatalf("not a JSON-RPC response: %s", body)
		}
		if out.Error != nil && !known[out.Error.Code] {
			t.Fatalf("code %v: %s", out.Error.Code, body)
		}
	}
	f.Fuzz(func(t *testing.T, path, body string) {
		if path != "/a2a" && path != "/a2a/v1" {
			return
		}
		start := time.Now()
		defer func() {
			if d := time.Since(start); d > 5*time.Second {
				t.Fatalf("took %v", d)
			}
		}()
		res, err := http.Post(srv.URL+path, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
			sc := bufio.NewScanner(res.Body)
			sc.Buffer(nil, 1<<24)
			for sc.Scan() {
				if data, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok {
					check(t, data)
				}
			}
			return
		}
		var buf bytes.Buffer
		buf.ReadFrom(res.Body)
		if res.Header.Get("Content-Type") != "application/json" {
			t.Fatalf("%d %s: %s", res.StatusCode, res.Header.Get("Content-Type"), buf.Bytes())
		}
		check(t, buf.Bytes())
	})
}
