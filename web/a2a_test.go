package web_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/a2aapi"
	"github.com/genuiserver/genui/genui/transport"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
)

const (
	a2uiExtensionV09 = "https://a2ui.org/a2a-extension/a2ui/v0.9"
	a2uiMIME         = "application/json+a2ui"
)

// TestA2UIOverA2AInChromium drives A2UI over A2A end to end (web/e2e/a2a.test.mjs): the
// official A2A JS SDK (@a2a-js/sdk, A2A v0.3 JSON-RPC, in node) streams a turn from the
// server's A2A agent on the offline model and hands each A2UI message to the official
// A2UI web renderer (the playground's bundle of @a2ui/lit) in headless Chromium; the
// action the rendered button emits goes back to the agent with the SDK, in the same
// context, and the agent's answer updates the surface. Every A2UI message node received
// and sent is then checked against the specification's schemas, and against what the
// server wrote and read.
func TestA2UIOverA2AInChromium(t *testing.T) {
	b := needBrowser(t)
	if _, err := os.Stat(filepath.Join(b.e2e, "node_modules", "@a2a-js", "sdk", "package.json")); err != nil {
		skipOrFail(t, "web/e2e/node_modules/@a2a-js/sdk is missing")
	}
	seen := exchanges{path: "/a2a"}
	srv := newE2EServer(t, b.e2e, &seen, func(svc *genui.Service) []transport.Route {
		return a2aapi.New(svc, a2aapi.WithLogger(quiet)).Routes()
	})
	recordFile := filepath.Join(t.TempDir(), "a2a-record.json")

	b.run(t, "a2a.test.mjs", "GENUI_URL="+srv.URL+"/", "A2A_RECORD="+recordFile)

	var rec struct {
		Received []json.RawMessage `json:"received"`
		Sent     []json.RawMessage `json:"sent"`
	}
	readRecord(t, recordFile, &rec)
	if len(rec.Received) == 0 || len(rec.Sent) == 0 {
		t.Fatalf("record: %d A2UI messages received, %d sent; the browser test should produce both", len(rec.Received), len(rec.Sent))
	}
	v := a2uitest.New(t, "v0.9", nil)
	received := make([][]byte, len(rec.Received))
	for i, m := range rec.Received {
		received[i] = m
	}
	v.CheckAll(t, received...)
	for i, m := range rec.Sent {
		if err := v.CheckClient(m); err != nil {
			t.Errorf("client A2UI message %d is not valid against the specification: %v\n%s", i, err, m)
		}
	}
	t.Logf("v0.9: %d server and %d client A2UI messages valid against the specification", len(rec.Received), len(rec.Sent))

	// What node received is what the server wrote, and what node sent is what the server read.
	wrote, read := seen.a2a(t)
	sameMessages(t, "the A2UI messages of the server's streams", wrote, rec.Received)
	sameMessages(t, "the A2UI messages of the client's requests", read, rec.Sent)
}

// sameMessages fails t unless got and want hold the same JSON values, in order.
func sameMessages(t *testing.T, what string, got, want []json.RawMessage) {
	t.Helper()
	norm := func(ms []json.RawMessage) []string {
		out := make([]string, len(ms))
		for i, m := range ms {
			var v any
			if err := json.Unmarshal(m, &v); err != nil {
				t.Errorf("%s: message %d is not JSON: %v\n%s", what, i, err, m)
			}
			b, _ := json.Marshal(v)
			out[i] = string(b)
		}
		return out
	}
	g, w := norm(got), norm(want)
	if strings.Join(g, "\n") != strings.Join(w, "\n") {
		t.Errorf("%s differ from what the browser test saw:\nserver: %s\nnode:   %s", what, strings.Join(g, "\n        "), strings.Join(w, "\n        "))
	}
}

// a2uiPart is a part of an A2A v0.3 message, as far as A2UI is concerned.
type a2uiPart struct {
	Kind     string          `json:"kind"`
	Data     json.RawMessage `json:"data"`
	Metadata struct {
		MIMEType string `json:"mimeType"`
	} `json:"metadata"`
}

// a2a returns the A2UI messages of the A2A exchanges: those the server wrote (the DataParts
// of the status messages of its message/stream events) and those it read (the DataParts
// of the requests' messages), each in order. It fails t when an exchange is not a
// message/stream call activating the A2UI v0.9 extension and answered with an SSE stream
// echoing it, or an event of a stream is not a JSON-RPC result.
func (e *exchanges) a2a(t *testing.T) (wrote, read []json.RawMessage) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.list) == 0 {
		t.Error("the server saw no A2A request")
	}
	for i, x := range e.list {
		var req struct {
			Method string `json:"method"`
			Params struct {
				Message struct {
					Parts []a2uiPart `json:"parts"`
				} `json:"message"`
			} `json:"params"`
		}
		if err := json.Unmarshal(x.request, &req); err != nil {
			t.Errorf("A2A request %d is not JSON: %v\n%s", i, err, x.request)
			continue
		}
		if ext := x.header.Get("X-A2A-Extensions"); req.Method != "message/stream" || ext != a2uiExtensionV09 {
			t.Errorf("A2A request %d: %s with X-A2A-Extensions %q, want message/stream with %s", i, req.Method, ext, a2uiExtensionV09)
		}
		for _, p := range req.Params.Message.Parts {
			if p.Kind == "data" {
				read = append(read, p.Data)
			}
		}
		answer, body := x.response()
		if ct, ext := answer.Get("Content-Type"), answer.Get("X-A2A-Extensions"); ct != "text/event-stream" || ext != a2uiExtensionV09 {
			t.Errorf("A2A request %d: answered with Content-Type %q and X-A2A-Extensions %q, want text/event-stream and %s", i, ct, ext, a2uiExtensionV09)
		}
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data:")
			if !ok {
				continue
			}
			var ev struct {
				Result *struct {
					Status struct {
						Message *struct {
							Parts []a2uiPart `json:"parts"`
						} `json:"message"`
					} `json:"status"`
				} `json:"result"`
				Error json.RawMessage `json:"error"`
			}
			if err := json.Unmarshal([]byte(strings.TrimSpace(data)), &ev); err != nil || ev.Result == nil {
				t.Errorf("A2A request %d: an SSE event is not a JSON-RPC result (%v): %s", i, err, data)
				continue
			}
			if ev.Result.Status.Message == nil {
				continue
			}
			for _, p := range ev.Result.Status.Message.Parts {
				if p.Kind != "data" {
					continue
				}
				if p.Metadata.MIMEType != a2uiMIME {
					t.Errorf("A2A request %d: a DataPart of MIME type %q, want %s: %s", i, p.Metadata.MIMEType, a2uiMIME, p.Data)
				}
				wrote = append(wrote, p.Data)
			}
		}
		if err := sc.Err(); err != nil {
			t.Errorf("A2A request %d: reading its stream: %v", i, err)
		}
	}
	return wrote, read
}
