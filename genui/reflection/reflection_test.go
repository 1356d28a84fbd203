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
	"os/exec"
	"reflect"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
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
	// bidiChat is a Genkit bidi action: it answers each input chunk with init.Prefix+chunk.
	genkit.RegisterAction(g, core.NewBidiActionOf(api.ActionTypeFlow, "bidiChat", nil,
		func(ctx context.Context, init chatInit, in <-chan string, out chan<- string) ([]string, error) {
			got := []string{}
			for {
				select {
				case s, ok := <-in:
					if !ok {
						return got, nil
					}
					got = append(got, s)
					select {
					case out <- init.Prefix + s:
					case <-ctx.Done():
						return got, ctx.Err()
					}
				case <-ctx.Done():
					return got, ctx.Err()
				}
			}
		}))
	genkit.DefineTool(g, "lookup", "Looks a word up.", func(tc *ai.ToolContext, word string) (string, error) {
		return "a " + word, nil
	})
	genkit.DefineResource(g, "readme", &ai.ResourceOptions{URI: "test://readme"},
		func(context.Context, *ai.ResourceInput) (*ai.ResourceOutput, error) {
			return &ai.ResourceOutput{Content: []*ai.Part{ai.NewTextPart("hello")}}, nil
		})
	genkit.DefineMiddleware(g, "Does nothing, loudly.", upper{})
	// A model that Genkit's exported API cannot enumerate (listed with WithActions).
	genkit.DefineModel(g, "test/extra", &ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true}},
		func(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			return &ai.ModelResponse{Message: ai.NewModelTextMessage("extra")}, nil
		})
}

// upper is a middleware, registered with genkit.DefineMiddleware in defineActions.
type upper struct{}

func (upper) Name() string                           { return "upper" }
func (upper) New(context.Context) (*ai.Hooks, error) { return &ai.Hooks{}, nil }

type chatInit struct {
	Prefix string `json:"prefix,omitempty"`
}

// extraModel is the key of the model defined with genkit.DefineModel in defineActions.
const extraModel = "/model/test/extra"

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

func shout() *core.Action[string, string, struct{}] {
	return core.NewActionOf(api.ActionTypeCustom, "dyn/shout", nil, func(ctx context.Context, s string) (string, error) {
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
		reflection.WithBackoff(20*time.Millisecond, 100*time.Millisecond), reflection.WithActions(extraModel)}, opts...)
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
		p.GenkitVersion != "go/"+genkitModuleVersion(t) || p.ReflectionAPISpecVersion != 1 || !reflect.DeepEqual(p.Envs, []string{"dev"}) {
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
	// Flows, tools, resources and /util/generate are found by themselves; the
	// dynamic plugin is the default model's provider; the model comes from WithActions.
	for _, k := range []string{"/flow/echo", "/flow/count", "/flow/chat", "/flow/block", "/flow/bidiChat",
		"/tool.v2/lookup", "/resource/readme", "/util/generate", "/custom/dyn/shout", extraModel} {
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
// (GET /api/actions) serves for the same Genkit instance: the test actions with a dynamic
// plugin, and the genui service. With the options an application gives for what Genkit's
// exported API cannot enumerate, the listings are equal; without them, exactly those actions
// are missing.
func TestListActionsMatchesV1(t *testing.T) {
	t.Setenv("GENKIT_ENV", "dev")
	hc := &http.Client{Timeout: wait}
	defer hc.CloseIdleConnections()
	for _, tc := range []struct {
		name    string
		init    func(context.Context) *genkit.Genkit
		opts    []reflection.Option
		missing []string // without opts
	}{
		{"test actions", func(ctx context.Context) *genkit.Genkit {
			g := genkit.Init(ctx, genkit.WithPlugins(dynPlugin{}))
			defineActions(g)
			return g
		}, []reflection.Option{reflection.WithActions(extraModel), reflection.WithPlugins("dyn")},
			[]string{"/custom/dyn/shout", extraModel}},
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
		}, []reflection.Option{reflection.WithActions("/model/" + offline.Name)},
			[]string{"/model/" + offline.Name}},
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
			if len(v1) < 4 {
				t.Fatalf("only %d actions", len(v1))
			}

			list := func(opts ...reflection.Option) map[string]any {
				m := newManager(t)
				c, err := reflection.Connect(ctx, g, m.url(), append([]reflection.Option{reflection.WithLogger(quiet)}, opts...)...)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				return result[struct{ Actions map[string]any }](t, m.nextRegister(t).peer.roundTrip(t, "listActions", nil)).Actions
			}
			if v2 := list(tc.opts...); !reflect.DeepEqual(v1, v2) {
				a, _ := json.Marshal(v1)
				b, _ := json.Marshal(v2)
				t.Fatalf("V1 /api/actions:\n%s\nV2 listActions:\n%s", a, b)
			}
			// listValues {type: middleware} is V1's GET /api/values?type=middleware.
			res, err = hc.Get(fmt.Sprintf("http://127.0.0.1:%d/api/values?type=middleware", port))
			if err != nil {
				t.Fatal(err)
			}
			var mw1 map[string]any
			err = json.NewDecoder(res.Body).Decode(&mw1)
			res.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			m := newManager(t)
			c, err := reflection.Connect(ctx, g, m.url(), reflection.WithLogger(quiet))
			if err != nil {
				t.Fatal(err)
			}
			mw2 := result[struct{ Values map[string]any }](t, m.nextRegister(t).peer.roundTrip(t, "listValues", map[string]any{"type": "middleware"})).Values
			c.Close()
			if !reflect.DeepEqual(mw1, mw2) {
				t.Fatalf("middleware: V1 %v, V2 %v", mw1, mw2)
			}

			v2 := list()
			var missing []string
			for k, d := range v1 {
				if got, ok := v2[k]; !ok {
					missing = append(missing, k)
				} else if !reflect.DeepEqual(got, d) {
					t.Errorf("%s: V1 %v, V2 %v", k, d, got)
				}
			}
			sort.Strings(missing)
			if len(v2)+len(missing) != len(v1) || !reflect.DeepEqual(missing, tc.missing) {
				t.Fatalf("without options: %d of %d listed, missing %v, want missing %v", len(v2), len(v1), missing, tc.missing)
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
	if v := result[values](t, r.peer.roundTrip(t, "listValues", map[string]any{"type": "middleware"})); len(v.Values) != 1 ||
		v.Values["upper"].(map[string]any)["name"] != "upper" {
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

// TestRunActionGenkitBidi runs a Genkit bidi action (api.BidiAction): as a session fed by
// input chunks, and as one-shot runs with and without init.
func TestRunActionGenkitBidi(t *testing.T) {
	m := newManager(t)
	_, r := connect(t, m)
	p := r.peer

	actions := result[struct{ Actions map[string]api.ActionDesc }](t, p.roundTrip(t, "listActions", nil)).Actions
	if d := actions["/flow/bidiChat"]; d.Metadata["bidi"] != true || d.InitSchema == nil {
		t.Fatalf("bidiChat: %+v", d)
	}

	c := p.request(t, "runAction", map[string]any{"key": "/flow/bidiChat", "init": map[string]any{"prefix": "> "},
		"stream": true, "streamInput": true})
	p.notify(t, "sendInputStreamChunk", map[string]any{"requestId": c.id, "chunk": "a"}) // buffered
	tid := traceOf(t, c, c.next())
	for i, in := range []string{"a", "b", "c"} {
		if i > 0 {
			p.notify(t, "sendInputStreamChunk", map[string]any{"requestId": c.id, "chunk": in})
		}
		f := c.next()
		if ch := decode[chunk](t, f.Params); f.Method != "streamChunk" || decode[string](t, ch.Chunk) != "> "+in {
			t.Fatalf("answer to %s: %s", in, f.Raw)
		}
	}
	p.notify(t, "endInputStream", map[string]any{"requestId": c.id})
	if out := result[runResult](t, c.next()); string(out.Result) != `["a","b","c"]` || out.Telemetry.TraceID != tid {
		t.Fatalf("bidiChat session: %s", out.Result)
	}

	// A chunk the input schema refuses fails the session.
	c = p.request(t, "runAction", map[string]any{"key": "/flow/bidiChat", "stream": true, "streamInput": true})
	traceOf(t, c, c.next())
	p.notify(t, "sendInputStreamChunk", map[string]any{"requestId": c.id, "chunk": 5})
	_, res := c.wait()
	wantError(t, res, -32000, 3)

	// One-shot: the input is the only chunk; init when given.
	for _, tc := range []struct {
		init  any
		chunk string
	}{{map[string]any{"prefix": "# "}, "# x"}, {nil, "x"}} {
		c = p.request(t, "runAction", map[string]any{"key": "/flow/bidiChat", "input": "x", "init": tc.init, "stream": true})
		notes, res := c.wait()
		if len(notes) != 2 || notes[1].Method != "streamChunk" || decode[string](t, decode[chunk](t, notes[1].Params).Chunk) != tc.chunk ||
			string(result[runResult](t, res).Result) != `["x"]` {
			t.Fatalf("one-shot with init %v: %d notifications, %s", tc.init, len(notes), res.Raw)
		}
	}
	// init is for bidi actions only.
	wantError(t, p.roundTrip(t, "runAction", map[string]any{"key": "/flow/echo", "input": 1, "init": map[string]any{}}), -32602, 3)
	if len(p.other) != 0 {
		t.Fatalf("unexpected message: %s", (<-p.other).Raw)
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
	session := r.peer.request(t, "runAction", map[string]any{"key": "/flow/bidiChat", "stream": true, "streamInput": true})
	traceOf(t, session, session.next())
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

func TestModuleVersion(t *testing.T) {
	const mod = "github.com/firebase/genkit/go"
	dep := func(m debug.Module) *debug.BuildInfo { return &debug.BuildInfo{Deps: []*debug.Module{&m}} }
	for _, tc := range []struct {
		bi   *debug.BuildInfo
		file string
		want string
	}{
		{dep(debug.Module{Path: mod, Version: "v1.13.1"}), "", "1.13.1"},
		{dep(debug.Module{Path: mod, Version: "v1.13.1", Replace: &debug.Module{Path: "example.com/fork", Version: "v1.13.2-fork"}}), "", "1.13.2-fork"},
		{dep(debug.Module{Path: mod, Version: "v1.13.1", Replace: &debug.Module{Path: "../genkit/go"}}), "/src/genkit/go/genkit/genkit.go", "dev"},
		// Test binaries: no dependencies, the source path names the version.
		{&debug.BuildInfo{}, "/root/go/pkg/mod/github.com/firebase/genkit/go@v1.13.1/genkit/genkit.go", "1.13.1"},
		{nil, "github.com/firebase/genkit/go@v1.14.0-rc.1/genkit/genkit.go", "1.14.0-rc.1"}, // -trimpath
		{&debug.BuildInfo{}, "/work/vendor/github.com/firebase/genkit/go/genkit/genkit.go", "dev"},
	} {
		if got := reflection.ModuleVersion(tc.bi, tc.file); got != tc.want {
			t.Errorf("%+v, %q: %q, want %q", tc.bi, tc.file, got, tc.want)
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
	generate := func(input map[string]any) {
		t.Helper()
		input["conversation"] = []any{map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "text": "Hello"}}}}
		call := p.request(t, "runAction", map[string]any{"key": "/flow/generateUi", "stream": true, "input": input})
		notes, res := call.wait()
		tid := traceOf(t, call, notes[0])
		var types []string
		for _, n := range notes[1:] {
			var c schemas.Chunk
			if err := json.Unmarshal(decode[chunk](t, n.Params).Chunk, &c); err != nil || c.Role != "model" || len(c.Content) != 1 {
				t.Fatalf("chunk %s: %v", n.Params, err)
			}
			if c.Content[0].ToolRequest != nil {
				types = append(types, "toolRequest")
			} else {
				types = append(types, "text")
			}
		}
		out := result[runResult](t, res)
		if !strings.Contains(strings.Join(types, ","), "toolRequest") || !strings.Contains(string(out.Result), `"role":"model"`) || out.Telemetry.TraceID != tid {
			t.Fatalf("generateUi: chunks %v, response %s", types, res.Raw)
		}
	}
	generate(map[string]any{"sessionId": decode[string](t, session.Result)})

	// Messages over 32 KiB, coder/websocket's default read limit: a session with a large
	// catalog, and generateUi with it inline.
	big := paddedCatalog(t, 40<<10)
	session = result[runResult](t, p.roundTrip(t, "runAction", map[string]any{"key": "/flow/startSession",
		"input": map[string]any{"protocolVersion": "0.1.0", "catalog": big}}))
	generate(map[string]any{"sessionId": decode[string](t, session.Result)})
	generate(map[string]any{"catalog": big})
}

// paddedCatalog is the basic sample catalog with its description padded so that it encodes
// to more than n bytes.
func paddedCatalog(t testing.TB, n int) map[string]any {
	t.Helper()
	catalog, err := schemas.SampleCatalog("basic")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(catalog)
	if pad := n - len(b); pad > 0 {
		catalog["description"] = fmt.Sprint(catalog["description"]) + " " + strings.Repeat("Padding to make the catalog large. ", pad/35+1)
	}
	if b, _ = json.Marshal(catalog); len(b) <= n {
		t.Fatalf("padded catalog: %d bytes", len(b))
	}
	return catalog
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

// genkitModuleVersion is the version of Genkit Go the module requires (go.mod), without "v":
// what register must report.
func genkitModuleVersion(t testing.TB) string {
	t.Helper()
	v, err := genkitModVersion()
	if err != nil {
		t.Fatal(err)
	}
	return v
}

var genkitModVersion = sync.OnceValues(func() (string, error) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{if .Replace}}{{.Replace.Version}}{{else}}{{.Version}}{{end}}",
		"github.com/firebase/genkit/go").Output()
	if err != nil {
		return "", fmt.Errorf("go list -m github.com/firebase/genkit/go: %w", err)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(string(out)), "v")
	if !ok {
		return "", fmt.Errorf("go list -m github.com/firebase/genkit/go: %q", out)
	}
	return v, nil
})
