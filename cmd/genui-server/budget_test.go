package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/redistest"
	"github.com/genuiserver/genui/schemas"
)

// The model every replica of these tests serves, as /metrics names it.
const budgetModel = "googleai/gemini-2.5-flash"

// tokenReply is a one-call turn whose model counts in input and out output tokens.
func tokenReply(in, out int) fakegemini.Reply {
	return fakegemini.Reply{Chunks: []fakegemini.Chunk{fakegemini.Text("counted")},
		Usage: &fakegemini.Usage{PromptTokenCount: in, CandidatesTokenCount: out, TotalTokenCount: in + out}}
}

// usageBody is GET /usage's exact answer for a caller.
func usageBody(caller string, in, out int64, budget string, resetAt time.Time) string {
	return fmt.Sprintf(`{"caller":%q,"input":%d,"output":%d,"total":%d,"budget":%s,"resetAt":%q}`+"\n",
		caller, in, out, in+out, budget, resetAt.UTC().Format(time.RFC3339))
}

// wantUsage checks GET /usage on base, as the holder of key, answers want.
func wantUsage(t *testing.T, what, base, key, want string) {
	t.Helper()
	if status, _, got := getWith(t, base+"/usage", as(key)); status != 200 || got != want {
		t.Fatalf("%s: %d %s\nwant %s", what, status, got, want)
	}
}

// resetOf reads the end of the current token window from GET /usage on base.
func resetOf(t *testing.T, base, key string) time.Time {
	t.Helper()
	status, _, body := getWith(t, base+"/usage", as(key))
	var u struct{ ResetAt string }
	if status != 200 || json.Unmarshal([]byte(body), &u) != nil {
		t.Fatalf("/usage: %d %s", status, body)
	}
	at, err := time.Parse(time.RFC3339, u.ResetAt)
	if err != nil {
		t.Fatalf("/usage resetAt: %v in %s", err, body)
	}
	return at
}

// freshWindow returns the end of the token window the next steps run in, having waited
// for the next window (as /usage says when it starts) when fewer than need remain of
// this one, so that the steps cannot straddle a window's end.
func freshWindow(t *testing.T, base, key string, need time.Duration) time.Time {
	t.Helper()
	reset := resetOf(t, base, key)
	if time.Until(reset) >= need {
		return reset
	}
	time.Sleep(time.Until(reset) + 50*time.Millisecond)
	next := resetOf(t, base, key)
	if time.Until(next) < need {
		t.Fatalf("the window ending %v leaves %v; want at least %v", next, time.Until(next), need)
	}
	return next
}

// metricLine is the genui_tokens_total sample of caller's tokens of kind.
func metricLine(caller, kind string, n int) string {
	return fmt.Sprintf(`genui_tokens_total{caller=%q,kind=%q,model=%q} %d`, caller, kind, budgetModel, n)
}

// wantMetrics checks that /metrics on base has every line of want and none of the
// lines starting with one of unwanted.
func wantMetrics(t *testing.T, what, base string, want []string, unwanted ...string) {
	t.Helper()
	_, _, metrics := getWith(t, base+"/metrics", nil)
	lines := strings.Split(metrics, "\n")
	for _, w := range want {
		found := false
		for _, l := range lines {
			found = found || l == w
		}
		if !found {
			t.Fatalf("%s: /metrics lacks %s; has:\n%s", what, w, grepLines(metrics, "genui_tokens_total", "genui_limited_total"))
		}
	}
	for _, u := range unwanted {
		if got := grepLines(metrics, u); got != "" {
			t.Fatalf("%s: /metrics has %s", what, got)
		}
	}
}

// Two replicas share one Redis and a token budget of 500 per caller: alice's first turn,
// on A, counts 700 in and 300 out and crosses it (a turn starts below the budget and
// completes); her next turn, on B, is refused before reaching the model. Bob, whose
// callers-file budget is a million, is still served on B. /usage on either replica tells
// each caller exactly its own count, nobody's without credentials; /metrics on the
// replica that served a turn counts its tokens by caller and model.
func TestTokenBudgetAcrossReplicas(t *testing.T) {
	topologies(t, func(t *testing.T, rdb interface{ URL() string }) {
		fake := fakegemini.New()
		defer fake.Close()
		dir := t.TempDir()
		callers := writeTemp(t, dir, "callers.json", `{"callers":{"key:bob":{"tokenBudget":1000000}}}`)
		args := []string{"--api-keys-file", keysFile(t), "--callers-file", callers, "--token-budget", "500"}
		a := startReplica(t, fake, rdb, args...)
		b := startReplica(t, fake, rdb, args...)
		catalog, _ := schemas.SampleCatalog("basic")
		body := turnBody(mustMarshal(catalog), "hi", "")

		// The window is the default hour: wait out its last seconds, so that every count
		// below is of one window.
		reset := freshWindow(t, a.base, aliceKey, 20*time.Second)
		wantUsage(t, "alice before any turn", b.base, aliceKey, usageBody("key:alice", 0, 0, "500", reset))

		fake.Enqueue(tokenReply(700, 300))
		if status, _, got := postJSON(t, a.base+"/generateUi", as(aliceKey), body); status != 200 || !strings.Contains(got, `"finishReason":"stop"`) {
			t.Fatalf("alice's first turn on A: %d %s", status, got)
		}
		alice := usageBody("key:alice", 700, 300, "500", reset)
		wantUsage(t, "alice on A", a.base, aliceKey, alice)
		wantUsage(t, "alice on B", b.base, aliceKey, alice)

		status, h, got := postJSON(t, b.base+"/generateUi", as(aliceKey), body)
		limited(t, "alice's second turn on B", status, h, got, "tokens")
		if ra, _ := strconv.Atoi(h.Get("Retry-After")); time.Duration(ra)*time.Second < time.Until(reset) || time.Duration(ra-1)*time.Second > time.Until(reset) {
			t.Fatalf("Retry-After %d with the window ending in %v", ra, time.Until(reset))
		}
		if n := len(fake.Requests()); n != 1 {
			t.Fatalf("%d model calls; the refused turn reached the model", n)
		}

		// Bob has a budget of his own, and his own count.
		fake.Enqueue(tokenReply(40, 20))
		if status, _, got := postJSON(t, b.base+"/generateUi", as(bobKey), body); status != 200 || !strings.Contains(got, `"finishReason":"stop"`) {
			t.Fatalf("bob's turn on B: %d %s", status, got)
		}
		bob := usageBody("key:bob", 40, 20, "1000000", reset)
		wantUsage(t, "bob on A", a.base, bobKey, bob)
		wantUsage(t, "bob on B", b.base, bobKey, bob)
		wantUsage(t, "alice on A after bob's turn", a.base, aliceKey, alice)

		// Without credentials /usage is refused and shows nobody's numbers.
		for _, r := range []*replica{a, b} {
			status, h, got := getWith(t, r.base+"/usage", nil)
			if status != 401 || h.Get("WWW-Authenticate") == "" || !strings.Contains(got, `"UNAUTHENTICATED"`) ||
				strings.Contains(got, "key:") || strings.Contains(got, `"input"`) || strings.Contains(got, `"total"`) {
				t.Fatalf("/usage without credentials: %d %v %s", status, h, got)
			}
		}

		// Each replica counts the tokens of the turns it served; the refused turn none.
		wantMetrics(t, "A", a.base, []string{metricLine("key:alice", "input", 700), metricLine("key:alice", "output", 300)},
			`genui_tokens_total{caller="key:bob"`, `genui_limited_total{limit="tokens"}`)
		wantMetrics(t, "B", b.base, []string{metricLine("key:bob", "input", 40), metricLine("key:bob", "output", 20), `genui_limited_total{limit="tokens"} 1`},
			`genui_tokens_total{caller="key:alice"`)
	})
}

// A token window ends for every replica at once: with --token-window 2s, alice, refused
// on B after crossing her budget on A, is served on B again once the window that /usage
// and Retry-After name has ended, and /usage counts the new window only. The windows are
// a matter of clocks and of one Redis key per window, the same in every topology, so
// this runs on one Redis node only, to keep the run short.
func TestTokenWindowRollsOverAcrossReplicas(t *testing.T) {
	rdb := redistest.Start(t)
	fake := fakegemini.New()
	defer fake.Close()
	args := []string{"--api-keys-file", keysFile(t), "--token-budget", "500", "--token-window", "2s"}
	a := startReplica(t, fake, rdb, args...)
	b := startReplica(t, fake, rdb, args...)
	catalog, _ := schemas.SampleCatalog("basic")
	body := turnBody(mustMarshal(catalog), "hi", "")

	reset := freshWindow(t, a.base, aliceKey, 1200*time.Millisecond)
	fake.Enqueue(tokenReply(700, 300))
	if status, _, got := postJSON(t, a.base+"/generateUi", as(aliceKey), body); status != 200 {
		t.Fatalf("alice's first turn on A: %d %s", status, got)
	}
	status, h, got := postJSON(t, b.base+"/generateUi", as(aliceKey), body)
	limited(t, "alice's second turn on B", status, h, got, "tokens")
	if ra, _ := strconv.Atoi(h.Get("Retry-After")); ra > 2 || time.Duration(ra)*time.Second < time.Until(reset) {
		t.Fatalf("Retry-After %d in a 2s window ending in %v", ra, time.Until(reset))
	}
	wantUsage(t, "alice on B, refused", b.base, aliceKey, usageBody("key:alice", 700, 300, "500", reset))

	// Wait for the window's end as /usage gave it, then a little.
	time.Sleep(time.Until(reset) + 100*time.Millisecond)
	next := reset.Add(2 * time.Second)
	wantUsage(t, "alice on B in the next window", b.base, aliceKey, usageBody("key:alice", 0, 0, "500", next))
	fake.Enqueue(tokenReply(11, 4))
	if status, _, got := postJSON(t, b.base+"/generateUi", as(aliceKey), body); status != 200 || !strings.Contains(got, `"finishReason":"stop"`) {
		t.Fatalf("alice's turn on B in the next window: %d %s", status, got)
	}
	wantUsage(t, "alice on A in the next window", a.base, aliceKey, usageBody("key:alice", 11, 4, "500", next))
	wantMetrics(t, "A", a.base, []string{metricLine("key:alice", "input", 700), metricLine("key:alice", "output", 300)})
	wantMetrics(t, "B", b.base, []string{metricLine("key:alice", "input", 11), metricLine("key:alice", "output", 4), `genui_limited_total{limit="tokens"} 1`})
}
