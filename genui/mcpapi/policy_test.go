package mcpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/mcpapi"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/policytest"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

// received records every byte a client's transport reads from the server, and the
// notifications its session is sent.
type received struct {
	mu            sync.Mutex
	body          bytes.Buffer
	notifications []any
}

func (r *received) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.body.Write(p)
}

func (r *received) notify(params any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notifications = append(r.notifications, params)
}

// all is what was received so far: the response bodies, then each notification as JSON.
func (r *received) all() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	b.Write(r.body.Bytes())
	for _, n := range r.notifications {
		j, _ := json.Marshal(n)
		b.WriteString("\n")
		b.Write(j)
	}
	return b.String()
}

// recordingTransport tees every response body into a received.
type recordingTransport struct{ r *received }

func (rt recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	res, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	res.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(res.Body, rt.r), res.Body}
	return res, nil
}

// connectRecording is connect, at the latest protocol version, with everything the
// client receives recorded.
func connectRecording(t *testing.T, url string) (*mcp.ClientSession, *received) {
	t.Helper()
	r := &received{}
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { r.notify(req.Params) },
		LoggingMessageHandler:       func(_ context.Context, req *mcp.LoggingMessageRequest) { r.notify(req.Params) },
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", DisableStandaloneSSE: true,
		HTTPClient: &http.Client{Transport: recordingTransport{r}}}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs, r
}

// streamed reads the whole stream of a finished generate_ui call through ui_stream, as
// its app does.
func streamed(t *testing.T, cs *mcp.ClientSession, prompt string) []json.RawMessage {
	t.Helper()
	var msgs []json.RawMessage
	cursor := 0
	for polls := 0; ; polls++ {
		if polls > 50 {
			t.Fatal("ui_stream never said the turn was done")
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpapi.UIStream,
			Arguments: map[string]any{"prompt": prompt, "after": cursor, "waitMs": 5000}})
		if err != nil || res.IsError {
			t.Fatalf("ui_stream: %v %s", err, text(res))
		}
		var out struct {
			StreamID string            `json:"streamId"`
			Messages []json.RawMessage `json:"messages"`
			Cursor   int               `json:"cursor"`
			Done     bool              `json:"done"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		if out.StreamID == "" {
			t.Fatalf("ui_stream found no turn for %q", prompt)
		}
		msgs = append(msgs, out.Messages...)
		cursor = out.Cursor
		if out.Done {
			return msgs
		}
	}
}

// Every A2UI vector of the hostile corpus, written by the model in a generate_ui turn:
// what the policy refuses never reaches the client (the tool's result, its embedded
// A2UI, the turn's stream through ui_stream, any notification), the model is asked once
// to repair it, naming the violation, and the repair is shown. The MCP turns are A2UI
// v0.9 only: the v0.8 vectors do not apply.
func TestPolicyCorpus(t *testing.T) {
	fake := fakegemini.New()
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	svc := servetest.Service(t, servetest.PacedModel, genui.WithPolicy(policytest.Policy()))
	srv := servetest.Serve(t, svc, mcpapi.New(svc, mcpapi.WithLogger(servetest.Quiet)).Routes()...)
	// A host that renders A2UI itself: the messages come as an embedded resource too.
	a2uiMeta := mcp.Meta{"a2ui": map[string]any{"clientCapabilities": map[string]any{"v0.9": map[string]any{"supportedCatalogIds": []string{a2uitest.BasicCatalogID}}}}}

	start := time.Now()
	n := 0
	for _, v := range policytest.Corpus() {
		if !v.A2UI() || v.Version != "v0.9" {
			continue
		}
		n++
		before := len(fake.Requests())
		fake.Enqueue(v.Replies()...)
		ok := t.Run(v.Name, func(t *testing.T) {
			cs, got := connectRecording(t, srv.URL)
			prompt := "show vector " + v.Name
			res, out := callMeta(t, cs, mcpapi.GenerateUI, map[string]any{"prompt": prompt}, a2uiMeta)
			if res.IsError {
				t.Fatalf("isError: %s", text(res))
			}
			whole, err := json.Marshal(res)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(string(whole), policytest.Needle) {
				t.Errorf("the result holds %q: %s", policytest.Needle, whole)
			}
			var shown []byte
			for _, m := range out.Messages {
				shown = append(append(shown, m...), '\n')
			}
			if !strings.Contains(string(shown), policytest.Safe) {
				t.Errorf("the repair (%s) was not shown: %s", policytest.Safe, shown)
			}
			var embedded bool
			for _, c := range res.Content {
				if er, ok := c.(*mcp.EmbeddedResource); ok && er.Resource != nil && er.Resource.MIMEType == mcpapi.A2UIMimeType {
					embedded = true
					if !strings.Contains(er.Resource.Text, policytest.Safe) {
						t.Errorf("the embedded A2UI lacks the repair: %s", er.Resource.Text)
					}
				}
			}
			if !embedded {
				t.Error("no embedded A2UI for a host that renders it")
			}
			val := a2uitest.New(t, "v0.9", nil)
			for _, m := range out.Messages {
				val.CheckAll(t, m)
			}
			// The turn's stream, as the app reads it.
			live := streamed(t, cs, prompt)
			if final := a2ui.Final(a2ui.V09, live); !sameJSON(mustJSON(final), mustJSON(out.Messages)) {
				t.Errorf("the result is not the final state of what ui_stream gave:\n%s\n%s", mustJSON(final), mustJSON(out.Messages))
			}
			for _, m := range live {
				if strings.Contains(string(m), policytest.Needle) {
					t.Errorf("ui_stream gave %q: %s", policytest.Needle, m)
				}
			}
			// Every byte received, and every notification.
			if all := got.all(); strings.Contains(all, policytest.Needle) {
				i := strings.Index(all, policytest.Needle)
				t.Errorf("the client received %q: …%s…", policytest.Needle, all[max(i-300, 0):min(i+100, len(all))])
			} else if !strings.Contains(all, policytest.Safe) {
				t.Errorf("the client never received %s", policytest.Safe)
			}
			if err := v.CheckRepair(fake.Requests()[before:]); err != nil {
				t.Error(err)
			}
		})
		if !ok && len(fake.Requests()) != before+2 {
			t.Fatalf("%s: the model's script is out of step; stopping", v.Name)
		}
	}
	t.Logf("%d vectors over MCP", n)
	if n < 36 {
		t.Fatalf("%d vectors ran, want at least 36", n)
	}
	if took := time.Since(start); took > 20*time.Second {
		t.Errorf("the corpus took %v", took)
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// sameJSON reports whether two JSON documents hold the same values.
func sameJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
