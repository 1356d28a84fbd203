package models

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"go.uber.org/goleak"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/gemini"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/schemas"
)

var chainQuiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// chainLeaks fails t if a goroutine other than the HTTP client's idle connections and
// Genkit's process-wide ones outlives it.
func chainLeaks(t *testing.T) {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		goleak.VerifyNone(t, ignore,
			goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
			goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
			goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
			goleak.IgnoreTopFunction("os/signal.NotifyContext.func1"),
			goleak.IgnoreAnyFunction("github.com/hashicorp/golang-lru/v2/expirable.NewLRU[...].func1"),
			goleak.IgnoreTopFunction("go.opentelemetry.io/otel/sdk/trace.(*batchSpanProcessor).processQueue"))
	})
}

// provider is a fake Gemini standing for one provider of a chain, whose replies a test
// switches.
type provider struct {
	fake  *fakegemini.Server
	model genui.Model
	reply atomic.Pointer[fakegemini.Reply]
	calls atomic.Int64
}

func newProvider(t *testing.T, name string, reply fakegemini.Reply) *provider {
	t.Helper()
	p := &provider{}
	p.set(reply)
	_, model, _ := strings.Cut(name, "/")
	p.fake = fakegemini.New(fakegemini.WithModels(model), fakegemini.WithResponder(func(*fakegemini.Request) fakegemini.Reply {
		p.calls.Add(1)
		return *p.reply.Load()
	}))
	t.Cleanup(p.fake.Close)
	m, err := gemini.New(context.Background(), gemini.Config{Name: name, APIKey: "k", BaseURL: p.fake.URL(), Logger: chainQuiet})
	if err != nil {
		t.Fatal(err)
	}
	p.model = m
	return p
}

func (p *provider) set(r fakegemini.Reply) { p.reply.Store(&r) }

func text(s string) fakegemini.Reply { return fakegemini.Respond(fakegemini.Text(s)) }

func failing(e *fakegemini.APIError) fakegemini.Reply { return fakegemini.ErrorReply(e) }

// recorder is the chain's metrics, recorded.
type recorder struct {
	mu        sync.Mutex
	retries   []string
	fallbacks []string
}

func (r *recorder) ModelRetry(provider string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.retries = append(r.retries, provider)
}

func (r *recorder) ModelFallback(from, to, reason string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fallbacks = append(r.fallbacks, from+">"+to+":"+reason)
}

func (r *recorder) got() ([]string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.retries...), append([]string(nil), r.fallbacks...)
}

func chainRequest() *genui.ModelRequest {
	return &genui.ModelRequest{System: genui.NewPrompt("You compose UI."), Messages: []*ai.Message{ai.NewUserTextMessage("hello")}}
}

// generate calls m once and returns the text it streamed and its error.
func generate(ctx context.Context, m genui.Model) (string, error) {
	var b strings.Builder
	_, err := m.Generate(ctx, chainRequest(), func(_ context.Context, p *ai.Part) error {
		b.WriteString(p.Text)
		return nil
	})
	return b.String(), err
}

func TestChainRateLimitedPrimary(t *testing.T) {
	chainLeaks(t)
	a := newProvider(t, "googleai/a", failing(fakegemini.RateLimited(0)))
	b := newProvider(t, "googleai/b", text("from b"))
	rec := &recorder{}
	ctx := context.Background()

	// The second model alone: the time a turn takes without a fallback (after a call
	// to each, so that both connections are open).
	const n = 20
	generate(ctx, a.model)
	generate(ctx, b.model)
	b.calls.Store(0)
	a.calls.Store(0)
	var alone time.Duration
	for range n {
		start := time.Now()
		if _, err := generate(ctx, b.model); err != nil {
			t.Fatal(err)
		}
		alone += time.Since(start)
	}
	alone /= n

	// Without retries of the first model: what the fallback itself adds.
	fast := NewChain([]genui.Model{a.model, b.model}, chainQuiet, WithChainRetry(0, 0), WithChainMetrics(rec))
	var chained time.Duration
	for range n {
		start := time.Now()
		got, err := generate(ctx, fast)
		if err != nil {
			t.Fatal(err)
		}
		chained += time.Since(start)
		if got != "from b" {
			t.Fatalf("served %q, want the second model's text", got)
		}
	}
	chained /= n
	t.Logf("fallback without retries: %v per call (the second model alone: %v): %v added", chained, alone, chained-alone)
	if a.calls.Load() != n || b.calls.Load() != 2*n {
		t.Errorf("calls: first %d, second %d; want %d and %d", a.calls.Load(), b.calls.Load(), n, 2*n)
	}
	if _, fb := rec.got(); len(fb) != n || fb[0] != "googleai/a>googleai/b:rate_limited" {
		t.Errorf("fallbacks recorded: %v", fb)
	}

	// With the first model's own retries (the defaults: 3, with backoff), in bounded time.
	a.calls.Store(0)
	rec = &recorder{}
	retried := NewChain([]genui.Model{a.model, b.model}, chainQuiet, WithChainMetrics(rec))
	start := time.Now()
	if got, err := generate(ctx, retried); err != nil || got != "from b" {
		t.Fatalf("got %q, %v", got, err)
	}
	took := time.Since(start)
	t.Logf("fallback after 3 retries of the first model: %v", took)
	if took > 5*time.Second {
		t.Errorf("the fallback took %v", took)
	}
	retries, fb := rec.got()
	if a.calls.Load() != 4 || len(retries) != 3 || retries[0] != "googleai" || len(fb) != 1 {
		t.Errorf("first model called %d times, retries %v, fallbacks %v; want 4 calls, 3 retries, 1 fallback", a.calls.Load(), retries, fb)
	}

	// A wait the provider asks for beyond the retry budget is not waited.
	a.set(failing(fakegemini.RateLimited(time.Minute)))
	a.calls.Store(0)
	start = time.Now()
	if got, err := generate(ctx, retried); err != nil || got != "from b" {
		t.Fatalf("got %q, %v", got, err)
	}
	if took := time.Since(start); took > time.Second || a.calls.Load() != 1 {
		t.Errorf("a 1m retry delay: %v, %d calls of the first model; want an immediate fallback", took, a.calls.Load())
	}
}

func TestChainEveryModelFails(t *testing.T) {
	chainLeaks(t)
	ctx := context.Background()
	a := newProvider(t, "googleai/a", failing(fakegemini.Unavailable()))
	b := newProvider(t, "googleai/b", failing(fakegemini.RateLimited(7*time.Second)))
	c := NewChain([]genui.Model{a.model, b.model}, chainQuiet, WithChainRetry(0, 0))
	_, err := generate(ctx, c)
	var e *genui.Error
	if !errors.As(err, &e) || e.Status != genui.StatusResourceExhausted || e.RetryAfter != 7*time.Second || e.RetryAfterSeconds() != 7 {
		t.Fatalf("got %#v; want RESOURCE_EXHAUSTED, retry after 7s", err)
	}
	if !strings.Contains(e.Message, "googleai/b") || strings.Contains(e.Message, "127.0.0.1") {
		t.Errorf("message %q: want the last model named, no address", e.Message)
	}

	// The last model unreachable: UNAVAILABLE, without its address.
	b.fake.Close()
	_, err = generate(ctx, c)
	if !errors.As(err, &e) || e.Status != genui.StatusUnavailable {
		t.Fatalf("got %v; want UNAVAILABLE", err)
	}
	if strings.Contains(e.Message, "127.0.0.1") || strings.Contains(e.Message, "http") {
		t.Errorf("message %q names the provider's address", e.Message)
	}
	wire, _ := json.Marshal(e.Wire())
	if strings.Contains(string(wire), "127.0.0.1") {
		t.Errorf("the client gets %s", wire)
	}
}

func TestChainNoFallbackAfterOutput(t *testing.T) {
	chainLeaks(t)
	ctx := context.Background()
	broken := fakegemini.Respond(fakegemini.Text("half "), fakegemini.Text("of it"))
	broken.MidStream = &fakegemini.MidStreamFailure{After: 1, Err: fakegemini.Unavailable()}
	a := newProvider(t, "googleai/a", broken)
	b := newProvider(t, "googleai/b", text("from b"))
	rec := &recorder{}
	c := NewChain([]genui.Model{a.model, b.model}, chainQuiet, WithChainMetrics(rec))
	got, err := generate(ctx, c)
	if err == nil || genui.AsError(err).Status != genui.StatusUnavailable {
		t.Fatalf("got %q, %v; want the first model's UNAVAILABLE", got, err)
	}
	if got != "half " || b.calls.Load() != 0 || a.calls.Load() != 1 {
		t.Errorf("streamed %q, first model called %d times, second %d; want the partial output, no retry, no fallback", got, a.calls.Load(), b.calls.Load())
	}
	if retries, fb := rec.got(); len(retries)+len(fb) != 0 {
		t.Errorf("retries %v, fallbacks %v", retries, fb)
	}

	// Through a service: the client gets the error, not a turn the second model served.
	svc := chainService(t, c)
	_, err = svc.Generate(ctx, &schemas.GenerateRequest{Catalog: chainCatalog(t), Conversation: []schemas.Message{
		{Role: "user", Parts: []schemas.Part{{Type: schemas.PartText, Text: "hello"}}}}})
	if err == nil || genui.AsError(err).Status != genui.StatusUnavailable || b.calls.Load() != 0 {
		t.Fatalf("got %v (second model called %d times); want UNAVAILABLE, no fallback", err, b.calls.Load())
	}

	// A request that fails on its own (400) is not passed on either.
	a.set(failing(&fakegemini.APIError{Code: http.StatusBadRequest, Message: "bad"}))
	if _, err := generate(ctx, c); err == nil || genui.AsError(err).Status != genui.StatusInvalidArgument || b.calls.Load() != 0 {
		t.Fatalf("got %v, second model called %d times; want INVALID_ARGUMENT, no fallback", err, b.calls.Load())
	}
}

func TestChainServesTurns(t *testing.T) {
	chainLeaks(t)
	ctx := context.Background()
	a := newProvider(t, "googleai/a", failing(fakegemini.RateLimited(0)))
	b := newProvider(t, "googleai/b", text("from b"))
	c := NewChain([]genui.Model{a.model, b.model}, chainQuiet, WithChainRetry(0, 0))
	svc := chainService(t, c)
	res, err := svc.Generate(ctx, &schemas.GenerateRequest{Catalog: chainCatalog(t), Conversation: []schemas.Message{
		{Role: "user", Parts: []schemas.Part{{Type: schemas.PartText, Text: "hello"}}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Message.Content) != 1 || res.Message.Content[0].Text != "from b" {
		t.Errorf("result %+v; want the second model's text", res.Message)
	}
	if res.Usage.Model != "googleai/b" {
		t.Errorf("the result's usage names %q; want googleai/b, which served it", res.Usage.Model)
	}
	if svc.Model() != "googleai/a" {
		t.Errorf("the service's model is %q, want the chain's first", svc.Model())
	}

	// A client that goes away cancels the call: no fallback, no goroutine left.
	a.set(fakegemini.Reply{Chunks: []fakegemini.Chunk{fakegemini.Text("slow")}, Latency: time.Minute})
	b.calls.Store(0)
	cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, err = generate(cctx, c)
	if !errors.Is(err, context.DeadlineExceeded) && genui.AsError(err).Status != genui.StatusDeadlineExceeded {
		t.Errorf("got %v; want the caller's deadline", err)
	}
	if b.calls.Load() != 0 {
		t.Errorf("the second model was called %d times after the caller left", b.calls.Load())
	}
}

func TestChainBreaker(t *testing.T) {
	chainLeaks(t)
	ctx := context.Background()
	a := newProvider(t, "googleai/a", failing(fakegemini.Unavailable()))
	b := newProvider(t, "googleai/b", text("from b"))
	rec := &recorder{}
	const window = 300 * time.Millisecond
	c := NewChain([]genui.Model{a.model, b.model}, chainQuiet, WithChainRetry(0, 0), WithChainMetrics(rec),
		WithBreaker(Breaker{Failures: 2, Window: window}))
	serve := func(want string) {
		t.Helper()
		if got, err := generate(ctx, c); err != nil || got != want {
			t.Fatalf("got %q, %v; want %q", got, err, want)
		}
	}
	serve("from b")
	serve("from b") // the second failure in a row opens the breaker
	opened := time.Now()
	serve("from b")
	serve("from b")
	if n := a.calls.Load(); n != 2 {
		t.Fatalf("the first model was called %d times; want 2, then skipped", n)
	}
	if _, fb := rec.got(); len(fb) != 4 || fb[3] != "googleai/a>googleai/b:unavailable" {
		t.Errorf("fallbacks %v; want 4, a skip counting with the reason that opened the breaker", fb)
	}

	// After its window the model is tried again: it still fails, and is skipped again.
	time.Sleep(window - time.Since(opened) + 20*time.Millisecond)
	serve("from b")
	if n := a.calls.Load(); n != 3 {
		t.Fatalf("after the window the first model was called %d times in all; want 3", n)
	}
	serve("from b")
	if n := a.calls.Load(); n != 3 {
		t.Fatalf("a failed trial did not open the breaker again: %d calls", n)
	}

	// It recovers: after the next window it serves, and the breaker is closed.
	a.set(text("from a"))
	time.Sleep(window + 20*time.Millisecond)
	serve("from a")
	serve("from a")
	if n := a.calls.Load(); n != 5 {
		t.Errorf("the first model was called %d times in all; want 5", n)
	}

	// Every model's breaker open: UNAVAILABLE at once, with a hint of when to retry.
	a.set(failing(fakegemini.Unavailable()))
	b.set(failing(fakegemini.Unavailable()))
	for range 2 {
		if _, err := generate(ctx, c); genui.AsError(err).Status != genui.StatusUnavailable {
			t.Fatalf("got %v; want UNAVAILABLE", err)
		}
	}
	calls := a.calls.Load() + b.calls.Load()
	_, err := generate(ctx, c)
	var e *genui.Error
	if !errors.As(err, &e) || e.Status != genui.StatusUnavailable || e.RetryAfter <= 0 || e.RetryAfter > window {
		t.Fatalf("got %#v; want UNAVAILABLE with a hint within the window", err)
	}
	if a.calls.Load()+b.calls.Load() != calls {
		t.Error("a model whose breaker is open was called")
	}
}

func TestChainBreakerOneTrial(t *testing.T) {
	chainLeaks(t)
	ctx := context.Background()
	a := newProvider(t, "googleai/a", failing(fakegemini.Unavailable()))
	b := newProvider(t, "googleai/b", text("from b"))
	const window = 100 * time.Millisecond
	c := NewChain([]genui.Model{a.model, b.model}, chainQuiet, WithChainRetry(0, 0), WithBreaker(Breaker{Failures: 1, Window: window}))
	if _, err := generate(ctx, c); err != nil {
		t.Fatal(err)
	}
	time.Sleep(window + 20*time.Millisecond)
	// After the window, concurrent calls: one tries the first model, the others skip it.
	a.set(fakegemini.Reply{Chunks: []fakegemini.Chunk{fakegemini.Text("from a")}, Latency: 200 * time.Millisecond})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := generate(ctx, c); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if n := a.calls.Load(); n != 2 {
		t.Errorf("the first model was called %d times; want 2 (the failure, one trial)", n)
	}
}

func TestParseChain(t *testing.T) {
	t.Setenv("GEMINI_API_KEY", "")
	t.Setenv("GOOGLE_API_KEY", "")
	t.Setenv("GOOGLE_CLOUD_PROJECT", "")
	for _, c := range []struct {
		in   string
		want []string
		err  string
	}{
		{"", []string{"genui/offline"}, ""},
		{"offline", []string{"genui/offline"}, ""},
		{"googleai/gemini-2.5-flash, compat/gpt-4.1-mini ,offline", []string{"googleai/gemini-2.5-flash", "compat/gpt-4.1-mini", "genui/offline"}, ""},
		{"googleai/a,,googleai/b", nil, "name 2 of the chain is empty"},
		{"googleai/a,", nil, "name 2 of the chain is empty"},
		{"googleai/a,googleai/a", nil, "googleai/a appears twice"},
		{"offline,genui/offline", nil, "genui/offline appears twice"},
	} {
		got, err := ParseChain(c.in)
		switch {
		case c.err != "" && (err == nil || !strings.Contains(err.Error(), c.err)):
			t.Errorf("ParseChain(%q) = %v, %v; want an error with %q", c.in, got, err, c.err)
		case c.err == "" && (err != nil || strings.Join(got, " ") != strings.Join(c.want, " ")):
			t.Errorf("ParseChain(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
}

func TestParseBreaker(t *testing.T) {
	for in, want := range map[string]Breaker{"": {}, "off": {}, "5/30s": {5, 30 * time.Second}, " 1 / 1m ": {1, time.Minute}} {
		got, err := ParseBreaker(in)
		if err != nil || got != want {
			t.Errorf("ParseBreaker(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"5", "0/30s", "-1/30s", "x/30s", "5/0s", "5/-1s", "5/x", "5/30"} {
		if b, err := ParseBreaker(in); err == nil {
			t.Errorf("ParseBreaker(%q) = %v; want an error", in, b)
		}
	}
	if s := (Breaker{5, 30 * time.Second}).String(); s != "5/30s" {
		t.Errorf("String() = %q", s)
	}
}

func TestNeedsChain(t *testing.T) {
	if NeedsChain([]string{"googleai/a"}) || !NeedsChain([]string{"googleai/a", "googleai/b"}) ||
		!NeedsChain([]string{"googleai/a"}, WithBreaker(Breaker{1, time.Second})) {
		t.Error("NeedsChain")
	}
}

func TestOpenChain(t *testing.T) {
	chainLeaks(t)
	fake := fakegemini.New(fakegemini.WithModels("a", "b"), fakegemini.WithResponder(func(r *fakegemini.Request) fakegemini.Reply {
		if r.Model == "a" {
			return failing(fakegemini.RateLimited(0))
		}
		return text("from " + r.Model)
	}))
	defer fake.Close()
	t.Setenv("GEMINI_API_KEY", "k")
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	ctx := context.Background()
	g := genkit.Init(ctx)
	m, err := OpenChain(ctx, g, []string{"googleai/a", "googleai/b", "genui/offline"}, chainQuiet, WithChainRetry(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	c, ok := m.(*Chain)
	if !ok || strings.Join(c.Names(), ",") != "googleai/a,googleai/b,genui/offline" || c.Name() != "googleai/a" {
		t.Fatalf("OpenChain = %T %v", m, m.Name())
	}
	if got, err := generate(ctx, m); err != nil || got != "from b" {
		t.Errorf("got %q, %v", got, err)
	}
	one, err := OpenChain(ctx, genkit.Init(ctx), []string{"googleai/b"}, chainQuiet)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := one.(*Chain); ok {
		t.Error("one model without a breaker is wrapped in a chain")
	}
}

func chainService(t *testing.T, m genui.Model) *genui.Service {
	t.Helper()
	svc, err := genui.New(genkit.Init(context.Background()), m, genui.WithLogger(chainQuiet), genui.WithRetry(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func chainCatalog(t *testing.T) schemas.Catalog {
	t.Helper()
	c, err := schemas.SampleCatalog("basic")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
