package models

import (
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/testkit/fakeollama"
	"github.com/genuiserver/genui/internal/testkit/fakeopenai"
)

// openModel opens name in a Genkit instance of its own, as the server opens a model.
func openModel(t *testing.T, name string) genui.Model {
	t.Helper()
	plugins, err := Plugins(name)
	if err != nil {
		t.Fatal(err)
	}
	m, err := Open(context.Background(), genkit.Init(context.Background(), genkit.WithPlugins(plugins...)), name, chainQuiet)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// An OpenAI-compatible endpoint's and Ollama's failures keep their meaning: a 429 is
// RESOURCE_EXHAUSTED with the wait the provider asked for, a 5xx UNAVAILABLE, an endpoint
// that cannot be reached UNAVAILABLE; one request each (the SDK does not retry on its own:
// the service's or the chain's retries do), and no message names the endpoint's address.
func TestProviderErrors(t *testing.T) {
	chainLeaks(t)
	oai := fakeopenai.New(fakeopenai.WithModels("m"))
	defer oai.Close()
	oll := fakeollama.New(fakeollama.WithModels("m"))
	defer oll.Close()
	t.Setenv("OPENAI_BASE_URL", oai.URL())
	t.Setenv("OPENAI_API_KEY", "k")
	t.Setenv("OLLAMA_HOST", oll.URL())
	compat, ollama := openModel(t, "compat/m"), openModel(t, "ollama/m")

	type want struct {
		status genui.Status
		retry  time.Duration
		words  string
	}
	check := func(what string, m genui.Model, w want, requests func() int) {
		t.Helper()
		before := requests()
		_, err := generate(context.Background(), m)
		e := genui.AsError(err)
		if e == nil || e.Status != w.status || e.RetryAfter != w.retry || !strings.Contains(e.Message, w.words) {
			t.Errorf("%s: %v (retry %v); want %s, retry %v, %q", what, err, e.RetryAfter, w.status, w.retry, w.words)
		}
		if strings.Contains(e.Message, "127.0.0.1") || strings.Contains(e.Message, "http") {
			t.Errorf("%s: the message names the endpoint: %q", what, e.Message)
		}
		if n := requests() - before; n != 1 {
			t.Errorf("%s: %d requests, want 1", what, n)
		}
	}
	oaiRequests := func() int { return len(oai.Requests()) }
	for _, c := range []struct {
		what string
		err  *fakeopenai.APIError
		want want
	}{
		{"compat 429", fakeopenai.RateLimited(3 * time.Second), want{genui.StatusResourceExhausted, 3 * time.Second, "model error (HTTP 429 Too Many Requests): Rate limit reached"}},
		{"compat 503", fakeopenai.Unavailable(), want{genui.StatusUnavailable, 0, "model error (HTTP 503 Service Unavailable): The engine is currently overloaded"}},
		{"compat 500", &fakeopenai.APIError{Status: 500, Type: "server_error", Message: "internal"}, want{genui.StatusUnavailable, 0, "HTTP 500"}},
		{"compat 504", &fakeopenai.APIError{Status: 504, Type: "server_error", Message: "timeout"}, want{genui.StatusDeadlineExceeded, 0, "HTTP 504"}},
		{"compat 400", &fakeopenai.APIError{Status: 400, Type: "invalid_request_error", Message: "bad"}, want{genui.StatusInvalidArgument, 0, "HTTP 400 Bad Request): bad"}},
	} {
		oai.Enqueue(fakeopenai.ErrorReply(c.err))
		check(c.what, compat, c.want, oaiRequests)
	}
	ollRequests := func() int { return len(oll.Requests()) }
	for _, c := range []struct {
		what string
		err  *fakeollama.APIError
		want want
	}{
		{"ollama 503", fakeollama.Busy(2 * time.Second), want{genui.StatusUnavailable, 2 * time.Second, "ollama: 503 server busy"}},
		{"ollama 500", &fakeollama.APIError{Status: 500, Message: "model runner crashed"}, want{genui.StatusUnavailable, 0, "ollama: 500 model runner crashed"}},
	} {
		oll.Enqueue(fakeollama.ErrorReply(c.err))
		check(c.what, ollama, c.want, ollRequests)
	}

	// An endpoint nobody listens at.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String()
	l.Close()
	t.Setenv("OPENAI_BASE_URL", closed+"/v1")
	t.Setenv("OLLAMA_HOST", closed)
	for _, name := range []string{"compat/m", "ollama/m"} {
		_, err := generate(context.Background(), openModel(t, name))
		e := genui.AsError(err)
		if e.Status != genui.StatusUnavailable || !strings.Contains(e.Message, "could not be reached (connection refused)") || strings.Contains(e.Message, l.Addr().String()) {
			t.Errorf("%s unreachable: %v", name, err)
		}
		if fallbackReason(err) != ReasonUnavailable && fallbackReason(err) != ReasonConnection {
			t.Errorf("%s unreachable: the chain would not pass the call on (%q)", name, fallbackReason(err))
		}
	}
}

// A chain passes a call its OpenAI-compatible first model fails with a 500 to the next
// model, and one failing with a 429 after the provider's wait, when the wait is beyond
// the chain's budget, at once.
func TestChainPassesOnCompatFailures(t *testing.T) {
	chainLeaks(t)
	oai := fakeopenai.New(fakeopenai.WithModels("m"))
	defer oai.Close()
	t.Setenv("OPENAI_BASE_URL", oai.URL())
	t.Setenv("OPENAI_API_KEY", "k")
	rec := &recorder{}
	b := newProvider(t, "googleai/b", text("from b"))
	c := NewChain([]genui.Model{openModel(t, "compat/m"), b.model}, chainQuiet, WithChainRetry(2, 10*time.Second), WithChainMetrics(rec))
	for _, e := range []*fakeopenai.APIError{{Status: http.StatusInternalServerError, Type: "server_error", Message: "boom"}, fakeopenai.RateLimited(time.Minute)} {
		if e.Status == http.StatusInternalServerError {
			// Each retry of the chain fails too.
			oai.Enqueue(fakeopenai.ErrorReply(e), fakeopenai.ErrorReply(e), fakeopenai.ErrorReply(e))
		} else {
			oai.Enqueue(fakeopenai.ErrorReply(e))
		}
		start := time.Now()
		text, err := generate(context.Background(), c)
		if err != nil || text != "from b" {
			t.Fatalf("HTTP %d: %q, %v", e.Status, text, err)
		}
		if took := time.Since(start); took > 10*time.Second {
			t.Errorf("HTTP %d: the fallback took %v", e.Status, took)
		}
	}
	retries, fallbacks := rec.got()
	if strings.Join(fallbacks, " ") != "compat/m>googleai/b:unavailable compat/m>googleai/b:rate_limited" || len(retries) != 2 || len(oai.Requests()) != 4 {
		t.Errorf("fallbacks %q, retries %q, %d requests; want the 500 retried twice, the 429 asking a minute not at all", fallbacks, retries, len(oai.Requests()))
	}
}
