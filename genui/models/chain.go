package models

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui"
)

// ParseChain splits a --model value into the names of its chain: comma-separated, each
// trimmed and resolved as [Resolve] does ("offline" is [offline.Name]); "" is the one
// model Resolve picks from the environment. A name may appear once.
func ParseChain(value string) ([]string, error) {
	if strings.TrimSpace(value) == "" {
		return []string{Resolve("")}, nil
	}
	var names []string
	for i, raw := range strings.Split(value, ",") {
		name := strings.TrimSpace(raw)
		if name == "" {
			return nil, fmt.Errorf("%q: name %d of the chain is empty; expected models separated by commas, e.g. googleai/gemini-2.5-flash,openai/gpt-4.1-mini", value, i+1)
		}
		name = Resolve(name)
		for _, n := range names {
			if n == name {
				return nil, fmt.Errorf("%q: %s appears twice in the chain", value, name)
			}
		}
		names = append(names, name)
	}
	return names, nil
}

// Breaker is a circuit breaker of each model of a chain: after Failures consecutive
// failed calls of a model, the chain skips it for Window; then one call tries it again,
// and a success closes the breaker. The zero Breaker is off.
type Breaker struct {
	Failures int
	Window   time.Duration
}

// On reports whether the breaker is on.
func (b Breaker) On() bool { return b.Failures > 0 && b.Window > 0 }

// String returns the breaker as ParseBreaker reads it ("" when off).
func (b Breaker) String() string {
	if !b.On() {
		return ""
	}
	return strconv.Itoa(b.Failures) + "/" + b.Window.String()
}

// ParseBreaker reads a breaker written <failures>/<window>, e.g. "5/30s"; "" and "off"
// are the breaker turned off.
func ParseBreaker(s string) (Breaker, error) {
	s = strings.TrimSpace(s)
	if s == "" || s == "off" {
		return Breaker{}, nil
	}
	n, w, ok := strings.Cut(s, "/")
	if !ok {
		return Breaker{}, fmt.Errorf("%q is not <failures>/<window>; expected e.g. 5/30s, or off", s)
	}
	failures, err := strconv.Atoi(strings.TrimSpace(n))
	if err != nil || failures < 1 {
		return Breaker{}, fmt.Errorf("%q: the failures %q are not a whole number of at least 1; expected e.g. 5/30s", s, n)
	}
	window, err := time.ParseDuration(strings.TrimSpace(w))
	if err != nil || window <= 0 {
		return Breaker{}, fmt.Errorf("%q: the window %q is not a positive duration; expected e.g. 5/30s", s, w)
	}
	return Breaker{Failures: failures, Window: window}, nil
}

// ChainMetrics records what a chain does: *metrics.Metrics is one.
type ChainMetrics interface {
	// ModelRetry records a retried call of a model of the provider.
	ModelRetry(provider string)
	// ModelFallback records a call passed from one model to the next, for reason.
	ModelFallback(from, to, reason string)
}

type noMetrics struct{}

func (noMetrics) ModelRetry(string)                    {}
func (noMetrics) ModelFallback(string, string, string) {}

// ChainOption configures a chain.
type ChainOption func(*chainOptions)

type chainOptions struct {
	open    []Option
	retries int
	maxWait time.Duration
	base    time.Duration
	breaker Breaker
	metrics ChainMetrics
}

// WithModelOptions passes opts to [Open] for each model of the chain.
func WithModelOptions(opts ...Option) ChainOption {
	return func(o *chainOptions) { o.open = append(o.open, opts...) }
}

// WithChainRetry sets how often a call of one model of the chain that failed with a rate
// limit or unavailability before any output is retried before the next model is tried,
// and the longest total wait for that model (defaults: 3 retries, 20 s, as a service
// retries a single model). A wait the provider asks for beyond maxWait is not waited: the
// next model is tried at once.
func WithChainRetry(retries int, maxWait time.Duration) ChainOption {
	return func(o *chainOptions) { o.retries, o.maxWait = max(retries, 0), maxWait }
}

// WithBreaker turns on a circuit breaker of each model (default: off).
func WithBreaker(b Breaker) ChainOption { return func(o *chainOptions) { o.breaker = b } }

// WithChainMetrics records the chain's retries and fallbacks in m.
func WithChainMetrics(m ChainMetrics) ChainOption { return func(o *chainOptions) { o.metrics = m } }

func chainConfig(opts []ChainOption) chainOptions {
	o := chainOptions{retries: 3, maxWait: 20 * time.Second, base: 500 * time.Millisecond}
	for _, opt := range opts {
		opt(&o)
	}
	if o.metrics == nil {
		o.metrics = noMetrics{}
	}
	return o
}

// NeedsChain reports whether OpenChain wraps the models it opens in a [Chain]: when there
// are several, or a breaker is on. Otherwise OpenChain returns the one model as [Open]
// does, and the service's own retries apply to it; a caller that gets a Chain turns the
// service's retries off (genui.WithRetry(0, 0)), the chain retrying each model itself.
func NeedsChain(names []string, opts ...ChainOption) bool {
	return len(names) > 1 || chainConfig(opts).breaker.On()
}

// OpenChain returns the model serving the chain names (from ParseChain): the one model
// when NeedsChain says so, else a [Chain] of the models. The first model is opened in g,
// initialised with Plugins(names[0]), as [Open] opens it; each other one in a Genkit
// instance of its own, initialised with its own plugins, since Open defines the offline
// model in the instance it is given.
func OpenChain(ctx context.Context, g *genkit.Genkit, names []string, log *slog.Logger, opts ...ChainOption) (genui.Model, error) {
	if len(names) == 0 {
		return nil, errors.New("models: an empty chain")
	}
	return NewPool(g, names[0], NeedsChain(names, opts...), log, opts...).Get(ctx, names)
}

// Pool opens the models of a server once each, and the chains of them it serves: the
// default chain, the models a request may name, each caller's.
type Pool struct {
	g       *genkit.Genkit
	first   string
	chained bool
	log     *slog.Logger
	opts    []ChainOption
	open    map[string]genui.Model
}

// NewPool returns a pool whose model first is opened in g (initialised with
// Plugins(first)), every other in a Genkit instance of its own. When chained, every
// model Get returns is a [Chain], one of a single model included, which retries its
// model itself: a service whose default model is a chain turns its own retries off
// (genui.WithRetry(0, 0)), so each model it serves must retry on its own.
func NewPool(g *genkit.Genkit, first string, chained bool, log *slog.Logger, opts ...ChainOption) *Pool {
	return &Pool{g: g, first: first, chained: chained, log: log, opts: opts, open: map[string]genui.Model{}}
}

// Get returns the model serving the chain names: the one model, or a Chain of them (of
// one too, when the pool is chained).
func (p *Pool) Get(ctx context.Context, names []string) (genui.Model, error) {
	if len(names) == 0 {
		return nil, errors.New("models: an empty chain")
	}
	ms := make([]genui.Model, len(names))
	for i, name := range names {
		m, err := p.model(ctx, name)
		if err != nil {
			return nil, err
		}
		ms[i] = m
	}
	if len(ms) == 1 && !p.chained {
		return ms[0], nil
	}
	return NewChain(ms, p.log, p.opts...), nil
}

// model opens the model name, once.
func (p *Pool) model(ctx context.Context, name string) (genui.Model, error) {
	if m, ok := p.open[name]; ok {
		return m, nil
	}
	o := chainConfig(p.opts)
	g := p.g
	if name != p.first {
		plugins, err := Plugins(name)
		if err != nil {
			return nil, err
		}
		g = genkit.Init(ctx, genkit.WithPlugins(plugins...))
	}
	m, err := Open(ctx, g, name, p.log, o.open...)
	if err != nil {
		if name == p.first {
			return nil, err
		}
		return nil, fmt.Errorf("models: %s: %w", name, err)
	}
	p.open[name] = m
	return m, nil
}

// Chain is a model that passes a call its model could not serve to the next model: a call
// failing before any output with a rate limit, unavailability, a connection error or a
// timeout, after that model's own retries. A call that fails after output streamed is not
// passed on: its client saw part of the turn. When every model fails, the call fails with
// the last model's error, RESOURCE_EXHAUSTED or UNAVAILABLE, with its retry hint.
type Chain struct {
	links []*link
	log   *slog.Logger
	o     chainOptions
}

// link is one model of a chain, with its breaker.
type link struct {
	m        genui.Model
	name     string
	provider string

	mu        sync.Mutex
	failures  int       // consecutive failed calls
	openUntil time.Time // the breaker is open until then (zero: closed)
	probing   bool      // a call tries the model after its window
	reason    string    // what the last failure was
}

// NewChain returns the chain of ms, tried in order (at least one model).
func NewChain(ms []genui.Model, log *slog.Logger, opts ...ChainOption) *Chain {
	if log == nil {
		log = slog.Default()
	}
	c := &Chain{log: log, o: chainConfig(opts)}
	for _, m := range ms {
		provider, _, _ := strings.Cut(m.Name(), "/")
		c.links = append(c.links, &link{m: m, name: m.Name(), provider: provider})
	}
	return c
}

// Name is the name of the chain's first model.
func (c *Chain) Name() string { return c.links[0].name }

// Names are the names of the chain's models, in order.
func (c *Chain) Names() []string {
	names := make([]string, len(c.links))
	for i, l := range c.links {
		names[i] = l.name
	}
	return names
}

// Generate implements genui.Model: it calls each model in turn until one serves the call.
func (c *Chain) Generate(ctx context.Context, req *genui.ModelRequest, onPart func(context.Context, *ai.Part) error) (*ai.ModelResponse, error) {
	var last *genui.Error
	var from *link
	reason := ""
	var retryIn time.Duration // the soonest an open breaker lets a model be tried
	for _, l := range c.links {
		if wait, ok := l.admit(c.o.breaker); !ok {
			if retryIn == 0 || wait < retryIn {
				retryIn = wait
			}
			if from == nil {
				from, reason = l, l.lastReason()
			}
			continue
		}
		if from != nil {
			c.o.metrics.ModelFallback(from.name, l.name, reason)
			c.log.LogAttrs(ctx, slog.LevelWarn, "model call passed to the next model of the chain",
				slog.String("from", from.name), slog.String("to", l.name), slog.String("reason", reason))
		}
		resp, out, err := c.call(ctx, l, req, onPart)
		if err == nil {
			l.succeeded()
			genui.ServedBy(ctx, l.name)
			if l != c.links[0] {
				c.log.LogAttrs(ctx, slog.LevelInfo, "model call served by a fallback model",
					slog.String("model", l.name), slog.String("first", c.links[0].name))
			}
			return resp, nil
		}
		r := fallbackReason(err)
		if ctx.Err() != nil || r == "" {
			// The turn ended, or the request failed on its own (another model would fail
			// it too): no failure of the model.
			l.release()
			return nil, err
		}
		if l.failed(c.o.breaker, r) {
			c.log.LogAttrs(ctx, slog.LevelWarn, "model breaker open: the chain skips the model for a while",
				slog.String("model", l.name), slog.Duration("for", c.o.breaker.Window), slog.String("reason", r))
		}
		if out {
			return nil, err // the client saw part of the turn
		}
		last, from, reason = publicError(l, err, r), l, r
	}
	if last == nil {
		// Every model's breaker is open.
		return nil, &genui.Error{Status: genui.StatusUnavailable, RetryAfter: retryIn,
			Message: "every model of the chain failed repeatedly and is rested for a while; try again"}
	}
	return nil, last
}

// call makes one call of l, retrying it while nothing was streamed. out reports whether
// anything reached onPart.
func (c *Chain) call(ctx context.Context, l *link, req *genui.ModelRequest, onPart func(context.Context, *ai.Part) error) (_ *ai.ModelResponse, out bool, _ error) {
	var seen atomic.Bool
	parts := func(ctx context.Context, p *ai.Part) error {
		seen.Store(true)
		return onPart(ctx, p)
	}
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		resp, err := l.m.Generate(ctx, req, parts)
		if err == nil || seen.Load() || ctx.Err() != nil {
			return resp, seen.Load(), err
		}
		e := genui.AsError(err)
		delay, ok := c.next(attempt, e, waited)
		if !ok {
			return nil, false, err
		}
		c.o.metrics.ModelRetry(l.provider)
		c.log.LogAttrs(ctx, slog.LevelWarn, "model call failed; retrying", slog.String("model", l.name),
			slog.String("status", string(e.Status)), slog.Duration("after", delay), slog.Int("attempt", attempt+1))
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, false, genui.AsError(context.Cause(ctx))
		case <-timer.C:
		}
		waited += delay
	}
}

// next returns how long to wait before retrying after attempt (0-based) failed with e,
// and whether to retry: the service's policy for a single model (genui/retry.go).
func (c *Chain) next(attempt int, e *genui.Error, waited time.Duration) (time.Duration, bool) {
	if attempt >= c.o.retries || (e.Status != genui.StatusResourceExhausted && e.Status != genui.StatusUnavailable) {
		return 0, false
	}
	d := c.o.base << attempt
	d = d/2 + rand.N(d/2+1) // jitter
	if e.RetryAfter > 0 {
		d = e.RetryAfter
	}
	if waited+d > c.o.maxWait {
		return 0, false
	}
	return d, true
}

// Fallback reasons (the label values of genui_model_fallbacks_total).
const (
	ReasonRateLimited = "rate_limited"
	ReasonUnavailable = "unavailable"
	ReasonConnection  = "connection"
	ReasonTimeout     = "timeout"
)

// fallbackReason says why another model may serve a call that failed with err, or ""
// when it may not: a rate limit (429), an unavailable provider (5xx), a connection that
// could not be made or broke, a provider's timeout.
func fallbackReason(err error) string {
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return ReasonTimeout
	}
	var ue *url.Error
	var op *net.OpError
	if errors.As(err, &ue) || errors.As(err, &op) || errors.Is(err, syscall.ECONNREFUSED) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.ErrUnexpectedEOF) {
		return ReasonConnection
	}
	switch genui.AsError(err).Status {
	case genui.StatusResourceExhausted:
		return ReasonRateLimited
	case genui.StatusUnavailable:
		return ReasonUnavailable
	case genui.StatusDeadlineExceeded:
		return ReasonTimeout
	}
	return ""
}

// publicError is the error a client gets when l was the last model tried: a rate limit
// stays RESOURCE_EXHAUSTED, anything else is UNAVAILABLE, with the provider's retry hint.
// The message is the adapter's (which names no address) or one of the chain's own; the
// cause, for the log, is err.
func publicError(l *link, err error, reason string) *genui.Error {
	status := genui.StatusUnavailable
	if reason == ReasonRateLimited {
		status = genui.StatusResourceExhausted
	}
	msg := "the model could not be reached; try again"
	var e *genui.Error
	if errors.As(err, &e) && reason != ReasonConnection {
		msg = e.Message
	} else if e == nil {
		e = &genui.Error{}
	}
	if reason == ReasonTimeout {
		msg = "the model did not answer in time; try again"
	}
	return (&genui.Error{Status: status, Message: "every model of the chain failed; the last, " + l.name + ": " + msg,
		Details: e.Details, RetryAfter: e.RetryAfter}).WithCause(err)
}

// admit reports whether the breaker lets a call try the model, or else how long until
// it does.
func (l *link) admit(b Breaker) (time.Duration, bool) {
	if !b.On() {
		return 0, true
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.openUntil.IsZero() {
		return 0, true
	}
	if wait := time.Until(l.openUntil); wait > 0 || l.probing {
		return max(wait, time.Millisecond), false
	}
	l.probing = true // one call tries the model again; the others still skip it
	return 0, true
}

// succeeded closes the breaker.
func (l *link) succeeded() {
	l.mu.Lock()
	l.failures, l.openUntil, l.probing = 0, time.Time{}, false
	l.mu.Unlock()
}

// release ends a call that neither succeeded nor failed: another may try the model.
func (l *link) release() {
	l.mu.Lock()
	l.probing = false
	l.mu.Unlock()
}

// failed counts a failed call, and reports whether it opened the breaker.
func (l *link) failed(b Breaker, reason string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.failures++
	l.reason = reason
	if !b.On() || l.failures < b.Failures {
		return false
	}
	wasOpen := !l.openUntil.IsZero() && !l.probing
	l.openUntil, l.probing = time.Now().Add(b.Window), false
	return !wasOpen
}

// lastReason is what the model's last failure was.
func (l *link) lastReason() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.reason
}
