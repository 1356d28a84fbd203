package reflection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/firebase/genkit/go/core/tracing"
	"github.com/firebase/genkit/go/genkit"
)

// Environment variables naming the manager's WebSocket URL: the one the Genkit CLI sets, and
// the one the Reflection API V2 RFC names. The first that is set wins.
const (
	EnvServer = "GENKIT_REFLECTION_V2_SERVER"
	EnvAPIURL = "GENKIT_REFLECTION_API_URL"
)

const (
	specVersion   = 1                // reflectionApiSpecVersion, as Genkit Go reports it
	readLimit     = 64 << 20         // the CLI's tools API accepts bodies up to 30 MB; the default is 32 KiB
	writeTimeout  = 10 * time.Second // a manager that reads nothing for this long is dropped
	dialTimeout   = 10 * time.Second
	registerAfter = 10 * time.Second // warn when register has no answer by then
)

// Option configures a Client.
type Option func(*options)

type options struct {
	name      string
	runtimeID string
	log       *slog.Logger
	minDelay  time.Duration
	maxDelay  time.Duration
	telemetry func(url string) // receives the manager's telemetry server URL
	actions   []string
	plugins   []string
}

// WithName sets the runtime's display name sent in register (default: the executable's name).
func WithName(name string) Option { return func(o *options) { o.name = name } }

// WithRuntimeID sets the runtime id sent in register (default: $GENKIT_RUNTIME_ID, else the
// process id). The manager keeps one runtime per id, so reconnections replace, never duplicate.
func WithRuntimeID(id string) Option { return func(o *options) { o.runtimeID = id } }

// WithLogger sets the logger (default: slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(o *options) { o.log = l } }

// WithBackoff sets the reconnection delays: the first retry waits about first, each further
// one twice as long, up to limit, with ±20% jitter (defaults: 500ms and 30s).
func WithBackoff(first, limit time.Duration) Option {
	return func(o *options) { o.minDelay, o.maxDelay = first, limit }
}

// WithActions adds registered actions, by key (/<type>/<name>), to those that listActions
// reports. Genkit's exported API cannot enumerate every registered action: flows, tools,
// resources, /util/generate and the default model are found without this option; models
// defined with genkit.DefineModel (other than the default model), actions registered by a
// plugin's Init, prompts and other actions are not. Running an action needs no option.
// The provider of each key (e.g. "ollama" in /model/ollama/llama3) is also listed as with
// [WithPlugins].
func WithActions(keys ...string) Option {
	return func(o *options) { o.actions = append(o.actions, keys...) }
}

// WithPlugins names dynamic plugins (api.DynamicPlugin, such as ollama or an
// OpenAI-compatible provider) whose resolvable actions listActions reports, as Genkit's own
// listing does for every plugin. The provider of the default model is always included.
func WithPlugins(names ...string) Option {
	return func(o *options) { o.plugins = append(o.plugins, names...) }
}

// Client is a runtime connected to a Genkit runtime manager (the Genkit CLI). It serves the
// manager's requests from its own goroutines and reconnects until closed.
type Client struct {
	url    string
	reg    *registry
	opts   options
	log    *slog.Logger
	cancel context.CancelFunc
	wg     sync.WaitGroup // the connection loop, and every request handler
	once   sync.Once

	mu      sync.Mutex
	running map[string]context.CancelCauseFunc // trace id -> cancel, for cancelAction
}

// Start connects g to the manager named by $GENKIT_REFLECTION_V2_SERVER, else
// $GENKIT_REFLECTION_API_URL. When neither is set it returns (nil, nil): reflection is off. It
// returns at once and never waits for the manager; see Connect.
func Start(ctx context.Context, g *genkit.Genkit, opts ...Option) (*Client, error) {
	u := managerURL()
	if u == "" {
		return nil, nil
	}
	return Connect(ctx, g, u, opts...)
}

// Connect serves the actions of g to the manager at rawURL (ws:// or wss://). It returns at
// once: connecting, registering and reconnecting with backoff happen in the background until
// ctx is done or Close is called. An action runs with a context that is cancelled when the
// manager cancels it, when its connection drops, or when the client stops.
func Connect(ctx context.Context, g *genkit.Genkit, rawURL string, opts ...Option) (*Client, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") || u.Host == "" {
		return nil, fmt.Errorf("reflection: manager URL %q: expected ws://host:port", rawURL)
	}
	o := options{minDelay: 500 * time.Millisecond, maxDelay: 30 * time.Second, telemetry: exportTraces}
	for _, opt := range opts {
		opt(&o)
	}
	reg, err := newRegistry(g, o.actions, o.plugins)
	if err != nil {
		return nil, err
	}
	if o.log == nil {
		o.log = slog.Default()
	}
	if o.runtimeID == "" {
		if o.runtimeID = os.Getenv("GENKIT_RUNTIME_ID"); o.runtimeID == "" {
			o.runtimeID = strconv.Itoa(os.Getpid())
		}
	}
	if o.name == "" {
		o.name = strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe")
	}
	if o.minDelay <= 0 {
		o.minDelay = 500 * time.Millisecond
	}
	o.maxDelay = max(o.maxDelay, o.minDelay)
	ctx, cancel := context.WithCancel(ctx)
	c := &Client{url: rawURL, reg: reg, opts: o, log: o.log.With("manager", rawURL), cancel: cancel,
		running: map[string]context.CancelCauseFunc{}}
	c.wg.Add(1)
	go c.loop(ctx)
	return c, nil
}

// Close stops reconnecting, closes the connection, cancels the running actions and waits for
// their handlers to return. It is safe to call more than once, and on a nil Client.
func (c *Client) Close() error {
	if c == nil {
		return nil
	}
	c.once.Do(c.cancel)
	c.wg.Wait()
	return nil
}

// loop connects, serves one connection until it drops, and reconnects with backoff.
func (c *Client) loop(ctx context.Context) {
	defer c.wg.Done()
	attempt, warned := 0, false
	for ctx.Err() == nil {
		dctx, cancel := context.WithTimeout(ctx, dialTimeout)
		ws, _, err := websocket.Dial(dctx, c.url, nil)
		cancel()
		if err == nil {
			ws.SetReadLimit(readLimit)
			if newSession(c, ws).serve(ctx) {
				attempt = 0
			}
		} else if ctx.Err() == nil {
			if !warned {
				c.log.Warn("Genkit manager not reachable; retrying in the background", "err", err)
				warned = true
			} else {
				c.log.Debug("Genkit manager not reachable", "err", err)
			}
		}
		d := backoff(attempt, c.opts.minDelay, c.opts.maxDelay, rand.Float64)
		attempt++
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// backoff is the delay before reconnection attempt n (from 0): lo·2ⁿ capped at hi, times a
// random factor in [0.8, 1.2), kept within [lo, hi].
func backoff(n int, lo, hi time.Duration, rnd func() float64) time.Duration {
	d := hi
	if n < 62 {
		if x := lo << n; x > 0 && x < hi && x>>n == lo {
			d = x
		}
	}
	d = time.Duration(float64(d) * (0.8 + 0.4*rnd()))
	return min(max(d, lo), hi)
}

// track and untrack keep the cancel function of each running action by trace id.
func (c *Client) track(traceID string, cancel context.CancelCauseFunc) {
	c.mu.Lock()
	c.running[traceID] = cancel
	c.mu.Unlock()
}

func (c *Client) untrack(traceID string) {
	c.mu.Lock()
	delete(c.running, traceID)
	c.mu.Unlock()
}

func (c *Client) cancelRun(traceID string) bool {
	c.mu.Lock()
	cancel, ok := c.running[traceID]
	delete(c.running, traceID)
	c.mu.Unlock()
	if ok {
		cancel(errCancelled)
	}
	return ok
}

var (
	errCancelled    = errors.New("cancelled by the Genkit manager")
	errDisconnected = errors.New("the connection to the Genkit manager dropped")
)

// exportTraces sends spans and logs to the manager's telemetry server, as Genkit's own
// reflection servers do with the URL the CLI announces (configureTelemetry in
// genkit/reflection.go): not when $GENKIT_TELEMETRY_SERVER is set (Genkit exports there
// already), with the real-time span processor when the CLI asks for it, and once per URL for
// the process, since exporters are global.
func exportTraces(u string) {
	if u == "" || os.Getenv("GENKIT_TELEMETRY_SERVER") != "" {
		return
	}
	exportedMu.Lock()
	defer exportedMu.Unlock()
	if exported[u] {
		return
	}
	exported[u] = true
	client := tracing.NewHTTPTelemetryClient(u)
	if os.Getenv("GENKIT_ENABLE_REALTIME_TELEMETRY") == "true" {
		tracing.WriteTelemetryRealtime(client)
	} else {
		tracing.WriteTelemetryImmediate(client)
	}
	tracing.EnableLogExport(u)
}

var (
	exportedMu sync.Mutex
	exported   = map[string]bool{}
)

// genkitModule is the module path of Genkit Go.
const genkitModule = "github.com/firebase/genkit/go"

// genkitVersion is "go/<version of the Genkit module this binary was built with>", as Genkit
// reports itself (internal/version.go), "go/dev" when that is not a released version.
var genkitVersion = sync.OnceValue(func() string {
	pc := reflect.ValueOf(genkit.Init).Pointer()
	file := ""
	if f := runtime.FuncForPC(pc); f != nil {
		file, _ = f.FileLine(pc)
	}
	bi, _ := debug.ReadBuildInfo()
	return "go/" + moduleVersion(bi, file)
})

// moduleVersion finds the Genkit version in the build information or, for binaries that
// carry no dependency list (test binaries), in the path of Genkit's compiled source
// (…/github.com/firebase/genkit/go@v1.13.1/genkit/genkit.go, with or without -trimpath). A
// module replaced by a directory, or vendored, is "dev".
func moduleVersion(bi *debug.BuildInfo, genkitFile string) string {
	if bi != nil {
		for _, m := range bi.Deps {
			if m.Path != genkitModule {
				continue
			}
			if m.Replace != nil {
				m = m.Replace
			}
			if v, ok := strings.CutPrefix(m.Version, "v"); ok {
				return v
			}
			return "dev"
		}
	}
	if _, after, ok := strings.Cut(filepath.ToSlash(genkitFile), genkitModule+"@v"); ok {
		if v, _, ok := strings.Cut(after, "/"); ok && v != "" {
			return v
		}
	}
	return "dev"
}
