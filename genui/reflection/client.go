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
	specVersion   = 1                // reflectionApiSpecVersion, as Genkit Go v1.4.0 reports it
	readLimit     = 64 << 20         // the CLI's tools API accepts bodies up to 30 MB
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
	u := os.Getenv(EnvServer)
	if u == "" {
		u = os.Getenv(EnvAPIURL)
	}
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
	reg, err := newRegistry(g)
	if err != nil {
		return nil, err
	}
	o := options{minDelay: 500 * time.Millisecond, maxDelay: 30 * time.Second, telemetry: exportTraces}
	for _, opt := range opts {
		opt(&o)
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

// exportTraces sends spans to the manager's telemetry server, as Genkit's V1 reflection server
// does on /api/notify: not when $GENKIT_TELEMETRY_SERVER is set (Genkit exports there already),
// and once per URL for the process, since exporters are global.
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
	tracing.WriteTelemetryImmediate(tracing.NewHTTPTelemetryClient(u))
}

var (
	exportedMu sync.Mutex
	exported   = map[string]bool{}
)

// genkitVersion is "go/<version of the Genkit module this binary was built with>".
var genkitVersion = sync.OnceValue(func() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "github.com/firebase/genkit/go" {
				if m.Replace != nil {
					m = m.Replace
				}
				return "go/" + strings.TrimPrefix(m.Version, "v")
			}
		}
	}
	return "go/1.4.0"
})
