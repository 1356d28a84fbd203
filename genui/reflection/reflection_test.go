package reflection_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/genkit"
	"go.uber.org/goleak"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/models"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/genui/reflection"
	"github.com/genuiserver/genui/schemas"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// One per genkit.Init: it installs a signal context it never stops.
		goleak.IgnoreTopFunction("os/signal.NotifyContext.func1"),
		// Genkit's V1 reflection server (started by genkit.Init in dev mode, in
		// TestListActionsMatchesV1) leaves one goroutine waiting on its error channel for good.
		goleak.IgnoreTopFunction("github.com/firebase/genkit/go/genkit.Init.func1"),
		// The genui service's session store (an expirable LRU without a stop).
		goleak.IgnoreAnyFunction("github.com/hashicorp/golang-lru/v2/expirable.NewLRU[...].func1"),
	)
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// The test actions. block runs until its context ends and reports why.
var (
	blockStarted sync.Map // id -> chan struct{}
	blockEnded   sync.Map // id -> chan error (the context's cause)
)

func defineActions(g *genkit.Genkit) {
	genkit.DefineFlow(g, "echo", func(ctx context.Context, in any) (map[string]any, error) {
		return map[string]any{"input": in, "context": core.FromContext(ctx)}, nil
	})
	genkit.DefineStreamingFlow(g, "count", func(ctx context.Context, n int, cb func(context.Context, int) error) (int, error) {
		for i := 1; i <= n; i++ {
			if cb != nil {
				if err := cb(ctx, i); err != nil {
					return 0, err
				}
			}
		}
		return n, nil
	})
	genkit.DefineFlow(g, "fail", func(ctx context.Context, s string) (string, error) {
		return "", core.NewError(core.FAILED_PRECONDITION, "boom: %s", s)
	})
	genkit.DefineFlow(g, "block", func(ctx context.Context, id string) (string, error) {
		if ch, ok := blockStarted.Load(id); ok {
			close(ch.(chan struct{}))
		}
		<-ctx.Done()
		if ch, ok := blockEnded.Load(id); ok {
			ch.(chan error) <- context.Cause(ctx)
		}
		return "", ctx.Err()
	})
	// chat is bidirectional: it answers each input chunk with a stream chunk.
	genkit.DefineStreamingFlow(g, "chat", func(ctx context.Context, prefix string, cb func(context.Context, string) error) ([]string, error) {
		in, ok := reflection.InputStream(ctx)
		if !ok {
			return nil, errors.New("chat needs an input stream")
		}
		got := []string{}
		for raw := range in {
			var s string
			if err := json.Unmarshal(raw, &s); err != nil {
				return nil, err
			}
			got = append(got, s)
			if cb != nil {
				if err := cb(ctx, prefix+s); err != nil {
					return nil, err
				}
			}
		}
		return got, ctx.Err()
	})
	genkit.DefineFlow(g, "panics", func(ctx context.Context, s string) (string, error) {
		panic("kaboom")
	})
}

// dynPlugin resolves /custom/dyn/shout on demand, like a model plugin listing its models.
type dynPlugin struct{}

func (dynPlugin) Name() string                      { return "dyn" }
func (dynPlugin) Init(context.Context) []api.Action { return nil }
func (dynPlugin) ListActions(context.Context) []api.ActionDesc {
	return []api.ActionDesc{shout().Desc()}
}
func (dynPlugin) ResolveAction(t api.ActionType, name string) api.Action {
	if t == api.ActionTypeCustom && name == "shout" {
		return shout()
	}
	return nil
}

func shout() *core.ActionDef[string, string, struct{}] {
	return core.NewAction("dyn/shout", api.ActionTypeCustom, nil, nil, func(ctx context.Context, s string) (string, error) {
		return strings.ToUpper(s), nil
	})
}

var testGenkit = sync.OnceValue(func() *genkit.Genkit {
	g := genkit.Init(context.Background(), genkit.WithPlugins(dynPlugin{}), genkit.WithDefaultModel("dyn/model"))
	defineActions(g)
	return g
})

// connect starts a client of the test actions against m and waits for its registration.
func connect(t *testing.T, m *manager, opts ...reflection.Option) (*reflection.Client, registration) {
	t.Helper()
	opts = append([]reflection.Option{reflection.WithLogger(quiet), reflection.WithRuntimeID("rt-" + t.Name()),
		reflection.WithBackoff(20*time.Millisecond, 100*time.Millisecond)}, opts...)
	c, err := reflection.Connect(context.Background(), testGenkit(), m.url(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, m.nextRegister(t)
}

var traceIDRe = regexp.MustCompile(`^[0-9a-f]{32}$`)

type runState struct {
	RequestID string `json:"requestId"`
	State     struct {
		TraceID string `json:"traceId"`
	} `json:"state"`
}

type chunk struct {
	RequestID string          `json:"requestId"`
	Chunk     json.RawMessage `json:"chunk"`
}

type runResult struct {
	Result    json.RawMessage `json:"result"`
	Telemetry struct {
		TraceID string `json:"traceId"`
	} `json:"telemetry"`
}

func decode[T any](t testing.TB, raw json.RawMessage) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
	return v
}

// traceOf checks that the notification is runActionState for the call and returns the trace id.
func traceOf(t testing.TB, c *call, f frame) string {
	t.Helper()
	if f.Method != "runActionState" {
		t.Fatalf("want runActionState first, got %s", f.Raw)
	}
	st := decode[runState](t, f.Params)
	if st.RequestID != c.id || !traceIDRe.MatchString(st.State.TraceID) {
		t.Fatalf("runActionState %s for request %s", f.Raw, c.id)
	}
	return st.State.TraceID
}

func TestRegisterAndConfigure(t *testing.T) {
	m := newManager(t)
	m.telemetryURL = "http://127.0.0.1:4033"
	urls := make(chan string, 10)
	_, r := connect(t, m, reflection.WithName("genui-test"), reflection.WithRuntimeID("rt-1"),
		reflection.WithTelemetryHook(func(u string) { urls <- u }))

	var id string
	if err := json.Unmarshal(r.id, &id); err != nil || id == "" || id == "0" {
		t.Fatalf("register must be a request with a string id, got id %s", r.id)
	}
	p := r.params
	if p.ID != "rt-1" || p.PID == nil || *p.PID != os.Getpid() || p.Name != "genui-test" ||
		p.GenkitVersion != "go/1.4.0" || p.ReflectionAPISpecVersion != 1 || !reflect.DeepEqual(p.Envs, []string{"dev"}) {
		t.Fatalf("register params %+v", p)
	}
	if u := <-urls; u != m.telemetryURL {
		t.Fatalf("telemetry URL from register: %q", u)
	}
	r.peer.notify(t, "configure", map[string]any{"telemetryServerUrl": "http://127.0.0.1:4034"})
	if u := <-urls; u != "http://127.0.0.1:4034" {
		t.Fatalf("telemetry URL from configure: %q", u)
	}
	// An invalid configure is ignored; the connection goes on.
	r.peer.notify(t, "configure", map[string]any{"telemetryServerUrl": 5})
	result[map[string]any](t, r.peer.roundTrip(t, "listActions", nil))
	if len(urls) != 0 || len(r.peer.other) != 0 {
		t.Fatalf("invalid configure was not ignored: %d URLs, %d messages", len(urls), len(r.peer.other))
	}
}

func TestListActions(t *testing.T) {
	m := newManager(t)
	_, r := connect(t, m)
	res := result[struct {
		Actions map[string]struct {
			Key, Name, Type string
			InputSchema     map[string]any
		}
	}](t, r.peer.roundTrip(t, "listActions", nil))
	for _, k := range []string{"/flow/echo", "/flow/count", "/flow/chat", "/flow/block", "/custom/dyn/shout"} {
		a, ok := res.Actions[k]
		if !ok || a.Key != k || a.Name == "" {
			t.Errorf("action %s: %+v (listed: %d)", k, a, len(res.Actions))
		}
	}
	if s := res.Actions["/flow/count"].InputSchema; s["type"] != "integer" {
		t.Errorf("count input schema: %v", s)
	}
}

// TestListActionsMatchesV1 compares listActions with what Genkit's own V1 reflection server
// (GET /api/actions) serves for the same registry: the test actions with a dynamic plugin, and
// the genui service.
func TestListActionsMatchesV1(t *testing.T) {
	t.Setenv("GENKIT_ENV", "dev")
	hc := &http.Client{Timeout: wait}
	defer hc.CloseIdleConnections()
	for _, tc := range []struct {
		name string
		init func(context.Context) *genkit.Genkit
	}{
		{"test actions", func(ctx context.Context) *genkit.Genkit {
			g := genkit.Init(ctx, genkit.WithPlugins(dynPlugin{}))
			defineActions(g)
			return g
		}},
		{"genui", func(ctx context.Context) *genkit.Genkit {
			g := genkit.Init(ctx)
			m, err := models.Open(ctx, g, offline.Name, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := genui.New(g, m, genui.WithLogger(quiet)); err != nil {
				t.Fatal(err)
			}
			return g
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			t.Chdir(dir) // V1 writes a runtime file next to go.mod
			if err := os.WriteFile(dir+"/go.mod", []byte("module v1test\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer func() {
				// V1 stops with its context and then removes its runtime file.
				cancel()
				eventually(t, "V1 to stop", func() bool {
					files, _ := os.ReadDir(dir + "/.genkit/runtimes")
					return len(files) == 0
				})
			}()
			port := freePort(t)
			t.Setenv("GENKIT_REFLECTION_PORT", fmt.Sprint(port))
			g := tc.init(ctx)
			res, err := hc.Get(fmt.Sprintf("http://127.0.0.1:%d/api/actions", port))
			if err != nil {
				t.Fatal(err)
			}
			var v1 map[string]any
			err = json.NewDecoder(res.Body).Decode(&v1)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}

			m := newManager(t)
			c, err := reflection.Connect(ctx, g, m.url(), reflection.WithLogger(quiet))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			v2 := result[struct{ Actions map[string]any }](t, m.nextRegister(t).peer.roundTrip(t, "listActions", nil))
			if !reflect.DeepEqual(v1, v2.Actions) {
				a, _ := json.Marshal(v1)
				b, _ := json.Marshal(v2.Actions)
				t.Fatalf("V1 /api/actions:\n%s\nV2 listActions:\n%s", a, b)
			}
			if len(v1) < 3 {
				t.Fatalf("only %d actions", len(v1))
			}
		})
	}
}

func TestListValues(t *testing.T) {
	m := newManager(t)
	_, r := connect(t, m)
	type values struct{ Values map[string]any }
	if v := result[values](t, r.peer.roundTrip(t, "listValues", map[string]any{"type": "defaultModel"})); !reflect.DeepEqual(v.Values, map[string]any{"defaultModel": "dyn/model"}) {
		t.Errorf("defaultModel: %v", v.Values)
	}
	if v := result[values](t, r.peer.roundTrip(t, "listValues", map[string]any{"type": "middleware"})); v.Values == nil || len(v.Values) != 0 {
		t.Errorf("middleware: %v", v.Values)
	}
	wantError(t, r.peer.roundTrip(t, "listValues", map[string]any{"type": "prompts"}), -32602, 3)
	wantError(t, r.peer.roundTrip(t, "listValues", nil), -32602, 3)
	wantError(t, r.peer.roundTrip(t, "listValues", []any{"defaultModel"}), -32602, 3)
	wantError(t, r.peer.roundTrip(t, "listValues", map[string]any{"type": 1}), -32602, 3)
}

func TestRunActionUnary(t *testing.T) {
	m := newManager(t)
	_, r := connect(t, m)
	c := r.peer.request(t, "runAction", map[string]any{"key": "/flow/echo", "input": map[string]any{"a": 1},
		"context": map[string]any{"auth": map[string]any{"uid": "u1"}}, "telemetryLabels": map[string]string{"k": "v"},
		"runtimeId": "rt-" + t.Name(), "stream": false, "streamInput": false, "someFutureField": true})
	notes, res := c.wait()
	if len(notes) != 1 {
		t.Fatalf("want only runActionState before the response, got %d notifications", len(notes))
	}
	tid := traceOf(t, c, notes[0])
	out := result[runResult](t, res)
	if out.Telemetry.TraceID != tid || string(out.Result) != `{"context":{"auth":{"uid":"u1"}},"input":{"a":1}}` {
		t.Fatalf("echo: %s", res.Raw)
	}

	// A streaming action run without stream sends no chunks.
	c = r.peer.request(t, "runAction", map[string]any{"key": "/flow/count", "input": 3, "stream": false})
	notes, res = c.wait()
	if len(notes) != 1 || string(result[runResult](t, res).Result) != "3" {
		t.Fatalf("count without stream: %d notifications, %s", len(notes), res.Raw)
	}

	// An action only a dynamic plugin can resolve.
	if out := result[runResult](t, r.peer.roundTrip(t, "runAction", map[string]any{"key": "/custom/dyn/shout", "input": "hi"})); string(out.Result) != `"HI"` {
		t.Fatalf("shout: %s", out.Result)
	}
}

func TestRunActionStreaming(t *testing.T) {
	m := newManager(t)
	_, r := connect(t, m)
	c := r.peer.request(t, "runAction", map[string]any{"key": "/flow/count", "input": 3, "stream": true})
	notes, res := c.wait()
	if len(notes) != 4 {
		t.Fatalf("want runActionState and 3 chunks, got %d notifications", len(notes))
	}
	tid := traceOf(t, c, notes[0])
	for i, n := range notes[1:] {
		ch := decode[chunk](t, n.Params)
		if n.Method != "streamChunk" || ch.RequestID != c.id || string(ch.Chunk) != fmt.Sprint(i+1) {
			t.Fatalf("chunk %d: %s", i, n.Raw)
		}
	}
	if out := result[runResult](t, res); string(out.Result) != "3" || out.Telemetry.TraceID != tid {
		t.Fatalf("count: %s", res.Raw)
	}
}

// TestRunActionBidi feeds input chunks under the CLI's and the RFC's method names.
func TestRunActionBidi(t *testing.T) {
	m := newManager(t)
	_, r := connect(t, m)
	for _, names := range [][2]string{{"sendInputStreamChunk", "endInputStream"}, {"streamInputChunk", "endStreamInput"}} {
		t.Run(names[0], func(t *testing.T) {
			p := r.peer
			c := p.request(t, "runAction", map[string]any{"key": "/flow/chat", "input": "> ", "stream": true, "streamInput": true})
			// The first chunk goes out before the action has started: it must be buffered.
			p.notify(t, names[0], map[string]any{"requestId": c.id, "chunk": "a"})
			traceOf(t, c, c.next())
			for i, in := range []string{"a", "b", "c"} {
				if i > 0 {
					p.notify(t, names[0], map[string]any{"requestId": c.id, "chunk": in})
				}
				// Each answer arrives before the next input is sent: both directions are open.
				f := c.next()
				if ch := decode[chunk](t, f.Params); f.Method != "streamChunk" || decode[string](t, ch.Chunk) != "> "+in {
					t.Fatalf("answer to %s: %s", in, f.Raw)
				}
			}
			p.notify(t, names[1], map[string]any{"requestId": c.id})
			if f := c.next(); string(result[runResult](t, f).Result) != `["a","b","c"]` {
				t.Fatalf("chat result: %s", f.Raw)
			}
		})
	}
	// Input for no running request, or without a request id, is ignored.
	r.peer.notify(t, "sendInputStreamChunk", map[string]any{"requestId": "999", "chunk": "x"})
	r.peer.notify(t, "endInputStream", map[string]any{})
	// Without streamInput the action has no input stream.
	wantError(t, r.peer.roundTrip(t, "runAction", map[string]any{"key": "/flow/chat", "input": "> ", "stream": true}), -32000, 13)
	if len(r.peer.other) != 0 {
		t.Fatalf("unexpected message: %s", (<-r.peer.other).Raw)
	}
}

func TestRunActionErrors(t *testing.T) {
	m := newManager(t)
	_, r := connect(t, m)
	p := r.peer

	wantError(t, p.roundTrip(t, "runAction", map[string]any{"key": "/flow/nope", "input": 1}), -32001, 5)

	c := p.request(t, "runAction", map[string]any{"key": "/flow/fail", "input": "x"})
	notes, res := c.wait()
	wantError(t, res, -32000, 9)
	if d := res.Error.Data; res.Error.Message != "boom: x" || d.Message != "boom: x" || d.Details.Stack == "" ||
		len(notes) != 1 || d.Details.TraceID != traceOf(t, c, notes[0]) {
		t.Fatalf("action error: %s", res.Raw)
	}
	// Input the action's schema refuses.
	wantError(t, p.roundTrip(t, "runAction", map[string]any{"key": "/flow/count", "input": "three"}), -32000, 3)
	// Invalid params.
	wantError(t, p.roundTrip(t, "runAction", map[string]any{"input": 1}), -32602, 3)
	wantError(t, p.roundTrip(t, "runAction", nil), -32602, 3)
	wantError(t, p.roundTrip(t, "runAction", []any{"/flow/echo"}), -32602, 3)
	wantError(t, p.roundTrip(t, "runAction", map[string]any{"key": "/flow/echo", "stream": "yes"}), -32602, 3)
	wantError(t, p.roundTrip(t, "runAction", map[string]any{"key": "/flow/echo", "context": 5}), -32602, 3)
	// A panicking action is a fault of the runtime, not the end of it.
	wantError(t, p.roundTrip(t, "runAction", map[string]any{"key": "/flow/panics", "input": "x"}), -32603, 13)
	result[runResult](t, p.roundTrip(t, "runAction", map[string]any{"key": "/flow/echo", "input": 1}))
}

func TestCancelAction(t *testing.T) {
	m := newManager(t)
	_, r := connect(t, m)
	p := r.peer
	started, ended := make(chan struct{}), make(chan error, 1)
	blockStarted.Store(t.Name(), started)
	blockEnded.Store(t.Name(), ended)

	c := p.request(t, "runAction", map[string]any{"key": "/flow/block", "input": t.Name(), "stream": true})
	tid := traceOf(t, c, c.next())
	<-started
	if res := result[map[string]string](t, p.roundTrip(t, "cancelAction", map[string]any{"traceId": tid})); res["message"] != "Action cancelled" {
		t.Fatalf("cancelAction: %v", res)
	}
	if cause := <-ended; !errors.Is(cause, context.Canceled) && !strings.Contains(fmt.Sprint(cause), "cancelled") {
		t.Fatalf("the action ended with %v", cause)
	}
	res := c.next()
	wantError(t, res, -32000, 1)
	if res.Error.Data.Message != "Action was cancelled" || res.Error.Data.Details.TraceID != tid {
		t.Fatalf("cancelled run: %s", res.Raw)
	}
	wantError(t, p.roundTrip(t, "cancelAction", map[string]any{"traceId": tid}), -32002, 5)
	wantError(t, p.roundTrip(t, "cancelAction", map[string]any{"traceId": "0123456789abcdef0123456789abcdef"}), -32002, 5)
	wantError(t, p.roundTrip(t, "cancelAction", map[string]any{}), -32602, 3)
	wantError(t, p.roundTrip(t, "cancelAction", map[string]any{"traceId": 5}), -32602, 3)
}

// TestMalformedFrames sends frames that are not valid requests: each gets its error (or, for
// notifications, nothing) and the connection survives.
func TestMalformedFrames(t *testing.T) {
	m := newManager(t)
	_, r := connect(t, m)
	p := r.peer
	for _, tc := range []struct {
		frame string
		id    string // of the answer; "" for no answer
		code  int
	}{
		{`{`, "null", -32700},
		{`hello`, "null", -32700},
		{``, "null", -32700},
		{`{"jsonrpc":"2.0","id":"a","method":"listActions"`, "null", -32700},
		{`42`, "null", -32600},
		{`"listActions"`, "null", -32600},
		{`[]`, "null", -32600},
		{`[{"jsonrpc":"2.0","id":"b","method":"listActions"}]`, "null", -32600},
		{`{"id":"c","method":"listActions"}`, `"c"`, -32600},
		{`{"jsonrpc":"1.0","id":"d","method":"listActions"}`, `"d"`, -32600},
		{`{"jsonrpc":"2.0","id":{"x":1},"method":"listActions"}`, "null", -32600},
		{`{"jsonrpc":"2.0","id":true,"method":"listActions"}`, "null", -32600},
		{`{"jsonrpc":"2.0","id":"e","method":5}`, `"e"`, -32600},
		{`{"jsonrpc":"2.0","id":"f","method":""}`, `"f"`, -32600},
		{`{"jsonrpc":"2.0","id":"g","method":"listActions","params":"x"}`, `"g"`, -32600},
		{`{"jsonrpc":"2.0","id":"h"}`, `"h"`, -32600},
		{`{"jsonrpc":"2.0","id":"i","method":"nope"}`, `"i"`, -32601},
		{`{"jsonrpc":"2.0","id":7,"method":"nope"}`, `7`, -32601},
		{`{"jsonrpc":"2.0","method":"nope","params":{}}`, "", 0},
		{`{"jsonrpc":"2.0","method":"listActions"}`, "", 0},
		{`{"jsonrpc":"2.0","method":"runAction","params":{"key":"/flow/echo"}}`, "", 0},
	} {
		if err := p.writeRaw([]byte(tc.frame)); err != nil {
			t.Fatal(err)
		}
		if tc.id == "" {
			continue
		}
		f := p.nextOther(t)
		if f.Error == nil || f.Error.Code != tc.code || string(f.ID) != tc.id || f.Error.Data == nil || f.Error.Data.Message == "" {
			t.Errorf("%s: want error %d for id %s, got %s", tc.frame, tc.code, tc.id, f.Raw)
		}
	}
	wantError(t, p.roundTrip(t, "nope", nil), -32601, 12)
	// A numeric id is answered as it came.
	if err := p.writeRaw([]byte(`{"jsonrpc":"2.0","id":8,"method":"listActions"}`)); err != nil {
		t.Fatal(err)
	}
	if f := p.nextOther(t); string(f.ID) != "8" || f.Error != nil || !strings.Contains(string(f.Result), "/flow/echo") {
		t.Fatalf("numeric id: %.200s", f.Raw)
	}
	// Still the same connection, serving, and no notification was answered.
	result[runResult](t, p.roundTrip(t, "runAction", map[string]any{"key": "/flow/echo", "input": 1}))
	if len(p.other) != 0 || len(m.registers) != 0 || m.connections() != 1 {
		t.Fatalf("%d unexpected messages, %d registers, %d connections", len(p.other), len(m.registers), m.connections())
	}
}

func TestReconnectAfterManagerRestart(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	m := newManager(t)
	c, r1 := connect(t, m)
	result[map[string]any](t, r1.peer.roundTrip(t, "listActions", nil))

	for i := range 2 {
		m.stop()
		if i == 1 {
			time.Sleep(300 * time.Millisecond) // several failed attempts while the manager is down
		}
		m.restart()
		r2 := m.nextRegister(t)
		if r2.params.ID != r1.params.ID || r2.peer == r1.peer {
			t.Fatalf("re-registered as %q", r2.params.ID)
		}
		result[map[string]any](t, r2.peer.roundTrip(t, "listActions", nil))
		time.Sleep(200 * time.Millisecond) // longer than the backoff: no second connection follows
		if n, k := m.runtimeCount(), m.connections(); n != 1 || k != 1 || len(m.registers) != 0 {
			t.Fatalf("after restart %d: %d runtimes, %d connections, %d more registers", i, n, k, len(m.registers))
		}
	}
	c.Close()
	eventually(t, "the runtime to leave", func() bool { return m.runtimeCount() == 0 })
	m.stop()
	goleak.VerifyNone(t, ignore)
}

func TestDroppedConnectionAbortsActions(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	m := newManager(t)
	c, r := connect(t, m)
	started, ended := make(chan struct{}), make(chan error, 1)
	blockStarted.Store(t.Name(), started)
	blockEnded.Store(t.Name(), ended)
	run := r.peer.request(t, "runAction", map[string]any{"key": "/flow/block", "input": t.Name()})
	tid := traceOf(t, run, run.next())
	bidi := r.peer.request(t, "runAction", map[string]any{"key": "/flow/chat", "input": "", "stream": true, "streamInput": true})
	traceOf(t, bidi, bidi.next())
	<-started

	r.peer.ws.CloseNow() // the manager drops the connection
	select {
	case cause := <-ended:
		if !strings.Contains(fmt.Sprint(cause), "dropped") {
			t.Fatalf("the action ended with %v", cause)
		}
	case <-time.After(wait):
		t.Fatal("the running action was not aborted")
	}
	r2 := m.nextRegister(t)
	eventually(t, "one runtime", func() bool { return m.runtimeCount() == 1 && m.connections() == 1 })
	// Its trace id is gone with it.
	wantError(t, r2.peer.roundTrip(t, "cancelAction", map[string]any{"traceId": tid}), -32002, 5)
	c.Close()
	m.stop()
	goleak.VerifyNone(t, ignore)
}

func TestStart(t *testing.T) {
	t.Setenv(reflection.EnvServer, "")
	t.Setenv(reflection.EnvAPIURL, "")
	c, err := reflection.Start(context.Background(), testGenkit())
	if c != nil || err != nil {
		t.Fatalf("without a manager URL: %v, %v", c, err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	for _, u := range []string{"http://127.0.0.1:1", "localhost:3200", "ws://"} {
		t.Setenv(reflection.EnvServer, u)
		if _, err := reflection.Start(context.Background(), testGenkit()); err == nil {
			t.Errorf("%q accepted", u)
		}
	}

	// The RFC's variable, then the CLI's, which wins when both are set.
	rfc, cli := newManager(t), newManager(t)
	for _, tc := range []struct {
		server, api string
		want        *manager
	}{{"", rfc.url(), rfc}, {cli.url(), rfc.url(), cli}} {
		t.Setenv(reflection.EnvServer, tc.server)
		t.Setenv(reflection.EnvAPIURL, tc.api)
		c, err := reflection.Start(context.Background(), testGenkit(), reflection.WithLogger(quiet))
		if err != nil {
			t.Fatal(err)
		}
		tc.want.nextRegister(t)
		c.Close()
	}

	// Nothing listens: Start returns at once, and so does Close.
	t.Setenv(reflection.EnvServer, "ws://127.0.0.1:"+fmt.Sprint(freePort(t)))
	t0 := time.Now()
	c, err = reflection.Start(context.Background(), testGenkit(), reflection.WithLogger(quiet))
	if err != nil || time.Since(t0) > 100*time.Millisecond {
		t.Fatalf("Start took %v: %v", time.Since(t0), err)
	}
	time.Sleep(50 * time.Millisecond)
	t0 = time.Now()
	c.Close()
	if time.Since(t0) > time.Second {
		t.Fatalf("Close took %v", time.Since(t0))
	}

	// Cancelling the context stops the client too.
	ctx, cancel := context.WithCancel(context.Background())
	c, err = reflection.Connect(ctx, testGenkit(), rfc.url(), reflection.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	rfc.nextRegister(t)
	cancel()
	eventually(t, "the runtime to leave", func() bool { return rfc.runtimeCount() == 0 })
	c.Close()
}

func TestBackoff(t *testing.T) {
	lo, hi := 500*time.Millisecond, 30*time.Second
	mid := func() float64 { return 0.5 }
	var got []time.Duration
	for n := range 9 {
		got = append(got, reflection.Backoff(n, lo, hi, mid))
	}
	want := []time.Duration{lo, time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, hi, hi, hi}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("backoff: %v", got)
	}
	if d := reflection.Backoff(1000, lo, hi, mid); d != hi {
		t.Fatalf("attempt 1000: %v", d)
	}
	// Jitter of ±20%, kept within [lo, hi].
	for _, tc := range []struct {
		n    int
		r    float64
		want time.Duration
	}{{0, 0, lo}, {0, 0.75, 550 * time.Millisecond}, {3, 0, 3200 * time.Millisecond}, {3, 0.75, 4400 * time.Millisecond}, {10, 0, 24 * time.Second}, {10, 0.99, hi}} {
		if d := reflection.Backoff(tc.n, lo, hi, func() float64 { return tc.r }); d != tc.want {
			t.Errorf("attempt %d, random %v: %v, want %v", tc.n, tc.r, d, tc.want)
		}
	}
}

// TestGenerateUI runs the genui service's flows through the manager: generateUi streams its
// events as streamChunk notifications before the result.
func TestGenerateUI(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	g := genkit.Init(ctx, genkit.WithDefaultModel(offline.Name))
	model, err := models.Open(ctx, g, offline.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := genui.New(g, model, genui.WithLogger(quiet)); err != nil {
		t.Fatal(err)
	}
	m := newManager(t)
	c, err := reflection.Connect(ctx, g, m.url(), reflection.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	p := m.nextRegister(t).peer

	actions := result[struct{ Actions map[string]json.RawMessage }](t, p.roundTrip(t, "listActions", nil)).Actions
	for _, k := range []string{"/flow/generateUi", "/flow/startSession", "/model/genui/offline"} {
		if _, ok := actions[k]; !ok {
			t.Fatalf("%s not listed", k)
		}
	}
	if v := result[struct{ Values map[string]any }](t, p.roundTrip(t, "listValues", map[string]any{"type": "defaultModel"})); v.Values["defaultModel"] != offline.Name {
		t.Fatalf("default model: %v", v.Values)
	}
	catalog, _ := schemas.SampleCatalog("basic")
	session := result[runResult](t, p.roundTrip(t, "runAction", map[string]any{"key": "/flow/startSession",
		"input": map[string]any{"protocolVersion": "0.1.0", "catalog": catalog}}))
	call := p.request(t, "runAction", map[string]any{"key": "/flow/generateUi", "stream": true, "input": map[string]any{
		"sessionId":    decode[string](t, session.Result),
		"conversation": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "text": "Hello"}}}},
	}})
	notes, res := call.wait()
	tid := traceOf(t, call, notes[0])
	var types []string
	for _, n := range notes[1:] {
		var ev schemas.Event
		if err := json.Unmarshal(decode[chunk](t, n.Params).Chunk, &ev); err != nil {
			t.Fatal(err)
		}
		types = append(types, string(ev.Type))
	}
	out := result[runResult](t, res)
	if !strings.Contains(strings.Join(types, ","), "toolRequest") || !strings.Contains(string(out.Result), `"role":"model"`) || out.Telemetry.TraceID != tid {
		t.Fatalf("generateUi: chunks %v, response %s", types, res.Raw)
	}
}

func freePort(t testing.TB) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
