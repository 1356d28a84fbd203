package main

import (
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/schemas"
)

// --model with a chain: the server starts with both models, /readyz lists them, a turn
// the first model cannot serve (429) is served by the second, and when both fail the
// client gets the last one's error with its retry hint. GOOGLE_GEMINI_BASE_URL is one
// endpoint for every googleai model, so one fake Gemini answers for both, by model name.
func TestModelChain(t *testing.T) {
	var bFails atomic.Bool
	fake := fakegemini.New(fakegemini.WithModels("a", "b"), fakegemini.WithResponder(func(r *fakegemini.Request) fakegemini.Reply {
		switch {
		case r.Model == "a":
			// A wait beyond the retry budget: the chain passes the call on at once.
			return fakegemini.ErrorReply(fakegemini.RateLimited(time.Minute))
		case bFails.Load():
			return fakegemini.ErrorReply(fakegemini.RateLimited(7 * time.Second))
		}
		return fakegemini.Respond(fakegemini.Text("served by b"))
	}))
	defer fake.Close()
	srv := startServer(t, []string{"GOOGLE_GEMINI_BASE_URL=" + fake.URL(), "GEMINI_API_KEY=k"}, "/readyz",
		"--model", "googleai/a, googleai/b", "--model-breaker", "3/1m")

	res, err := http.Get(srv.base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	var ready struct {
		Model  string   `json:"model"`
		Models []string `json:"models"`
	}
	err = json.NewDecoder(res.Body).Decode(&ready)
	res.Body.Close()
	if err != nil || ready.Model != "googleai/a" || !slices.Equal(ready.Models, []string{"googleai/a", "googleai/b"}) {
		t.Fatalf("/readyz: %+v, %v", ready, err)
	}

	c, _ := schemas.SampleCatalog("basic")
	turn := func() (int, http.Header, string) {
		t.Helper()
		res, err := http.Post(srv.base+"/generateUi", "application/json", strings.NewReader(turnBody(mustMarshal(c), "hi", "")))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(b)
	}
	start := time.Now()
	if status, _, body := turn(); status != 200 || !strings.Contains(body, "served by b") {
		t.Fatalf("%d %s", status, body)
	}
	t.Logf("a turn the second model served: %v", time.Since(start))

	bFails.Store(true)
	status, h, body := turn()
	t.Logf("both failing: %d, Retry-After %q: %s", status, h.Get("Retry-After"), body)
	if !strings.Contains(body, `"RESOURCE_EXHAUSTED"`) || !strings.Contains(body, "googleai/b") || strings.Contains(body, "127.0.0.1") {
		t.Errorf("both models failing: %d %s", status, body)
	}
	if status != 200 && h.Get("Retry-After") != "7" {
		t.Errorf("Retry-After %q, want 7", h.Get("Retry-After"))
	}

	res, err = http.Get(srv.base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	metrics, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if want := `genui_model_fallbacks_total{from="googleai/a",reason="rate_limited",to="googleai/b"} 2`; !strings.Contains(string(metrics), want) {
		t.Errorf("/metrics lacks %s", want)
	}
	if logs := logsOf(srv); !strings.Contains(logs, "model call served by a fallback model") || !strings.Contains(logs, "model=googleai/b") {
		t.Errorf("no log line names the model that served the turn:\n%s", logs)
	}
}
