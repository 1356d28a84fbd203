package quota

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func admit(t *testing.T, q *Quota, key string) func() {
	t.Helper()
	release, err := q.StartTurn(key)
	if err != nil {
		t.Fatalf("StartTurn(%q) refused: %v", key, err)
	}
	if release == nil {
		t.Fatalf("StartTurn(%q) admitted with a nil release", key)
	}
	return release
}

func refuse(t *testing.T, q *Quota, key, limit string) *Exceeded {
	t.Helper()
	release, err := q.StartTurn(key)
	if err == nil {
		release()
		t.Fatalf("StartTurn(%q) admitted, want refused by %s", key, limit)
	}
	if release != nil {
		t.Errorf("refused StartTurn returned a release")
	}
	if err.Limit != limit {
		t.Fatalf("refused by %q (%v), want %q", err.Limit, err, limit)
	}
	return err
}

func TestNilQuota(t *testing.T) {
	var q *Quota
	for range 100 {
		release, err := q.StartTurn("k")
		if err != nil || release == nil {
			t.Fatalf("nil Quota: StartTurn = (release nil: %t), %v", release == nil, err)
		}
		release()
		release()
		if err := q.NewCatalog("k"); err != nil {
			t.Fatalf("nil Quota: NewCatalog = %v", err)
		}
		if err := q.NewSession("k"); err != nil {
			t.Fatalf("nil Quota: NewSession = %v", err)
		}
	}
	if q.Running() != 0 {
		t.Errorf("nil Quota: Running() = %d", q.Running())
	}
	if q.Limits() != (Limits{}) {
		t.Errorf("nil Quota: Limits() = %+v", q.Limits())
	}
}

func TestNoLimits(t *testing.T) {
	q := New(Limits{})
	var releases []func()
	for range 1000 {
		releases = append(releases, admit(t, q, "k"))
		if err := q.NewCatalog("k"); err != nil {
			t.Fatal(err)
		}
		if err := q.NewSession("k"); err != nil {
			t.Fatal(err)
		}
	}
	if q.Running() != 1000 {
		t.Errorf("Running() = %d, want 1000", q.Running())
	}
	for _, r := range releases {
		r()
	}
	if q.Running() != 0 {
		t.Errorf("Running() = %d after releases, want 0", q.Running())
	}
}

func TestLimits(t *testing.T) {
	l := Limits{Rate: 2.5, Burst: 4, Streams: 3, Turns: 10, Catalogs: 5, Sessions: 7, Conversations: 6}
	if got := New(l).Limits(); got != l {
		t.Errorf("Limits() = %+v, want %+v", got, l)
	}
	// A burst below 1 is 1.
	for _, b := range []int{0, -3} {
		q := New(Limits{Rate: 1, Burst: b})
		if q.Limits().Burst != 1 {
			t.Errorf("Burst %d: Limits().Burst = %d, want 1", b, q.Limits().Burst)
		}
		admit(t, q, "k")()
		refuse(t, q, "k", "rate")
	}
}

func TestRate(t *testing.T) {
	q := New(Limits{Rate: 1, Burst: 2})
	admit(t, q, "a")()
	admit(t, q, "a")()
	err := refuse(t, q, "a", "rate")
	if err.RetryAfter <= 0 || err.RetryAfter > time.Second {
		t.Errorf("RetryAfter = %v, want in (0, 1s]", err.RetryAfter)
	}
	if err.RetryAfterSeconds() != 1 {
		t.Errorf("RetryAfterSeconds() = %d, want 1", err.RetryAfterSeconds())
	}
	if err.Max != 1 {
		t.Errorf("Max = %g, want 1", err.Max)
	}
	if msg := err.Error(); !strings.Contains(msg, "rate limit") || !strings.Contains(msg, "1 turns per second") || !strings.Contains(msg, "retry after 1s") {
		t.Errorf("Error() = %q", msg)
	}
	// A refusal takes no token: refused again, no sooner.
	err2 := refuse(t, q, "a", "rate")
	if err2.RetryAfter > err.RetryAfter {
		t.Errorf("second refusal: RetryAfter %v > first %v", err2.RetryAfter, err.RetryAfter)
	}
	// Another caller has a bucket of its own.
	admit(t, q, "b")()
	admit(t, q, "b")()
	refuse(t, q, "b", "rate")
	if q.Running() != 0 {
		t.Errorf("Running() = %d, want 0", q.Running())
	}
}

func TestRateRefills(t *testing.T) {
	// 10 turns a second: a token every 100ms.
	q := New(Limits{Rate: 10, Burst: 2})
	admit(t, q, "a")()
	admit(t, q, "a")()
	err := refuse(t, q, "a", "rate")
	if err.RetryAfter <= 0 || err.RetryAfter > 100*time.Millisecond {
		t.Fatalf("RetryAfter = %v, want in (0, 100ms]", err.RetryAfter)
	}
	if err.RetryAfterSeconds() != 1 {
		t.Errorf("RetryAfterSeconds() = %d, want at least 1", err.RetryAfterSeconds())
	}
	time.Sleep(err.RetryAfter + 5*time.Millisecond)
	admit(t, q, "a")()
	// One token came back, not two.
	refuse(t, q, "a", "rate")
	// The bucket fills up to Burst again.
	time.Sleep(2*100*time.Millisecond + 10*time.Millisecond)
	admit(t, q, "a")()
	admit(t, q, "a")()
	refuse(t, q, "a", "rate")
}

func TestStreams(t *testing.T) {
	q := New(Limits{Streams: 2})
	r1 := admit(t, q, "a")
	r2 := admit(t, q, "a")
	err := refuse(t, q, "a", "streams")
	if err.Max != 2 || err.RetryAfter <= 0 || err.RetryAfterSeconds() < 1 {
		t.Errorf("Exceeded = %+v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "at most 2 turns of one caller at once") {
		t.Errorf("Error() = %q", msg)
	}
	// Another caller is not affected.
	rb := admit(t, q, "b")
	if q.Running() != 3 {
		t.Errorf("Running() = %d, want 3", q.Running())
	}

	r1()
	r3 := admit(t, q, "a")
	refuse(t, q, "a", "streams")

	// Releasing twice frees one place only.
	r2()
	r2()
	if q.Running() != 2 {
		t.Errorf("Running() = %d after a double release, want 2", q.Running())
	}
	r4 := admit(t, q, "a")
	refuse(t, q, "a", "streams")
	r1() // r1 was released already: harmless
	refuse(t, q, "a", "streams")

	r3()
	r4()
	rb()
	if q.Running() != 0 {
		t.Errorf("Running() = %d, want 0", q.Running())
	}
}

func TestTurns(t *testing.T) {
	q := New(Limits{Turns: 3, Streams: 2})
	ra := admit(t, q, "a")
	rb := admit(t, q, "b")
	rc := admit(t, q, "c")
	err := refuse(t, q, "d", "turns")
	if err.Max != 3 || err.RetryAfter != time.Second || err.RetryAfterSeconds() != 1 {
		t.Errorf("Exceeded = %+v", err)
	}
	if msg := err.Error(); !strings.Contains(msg, "most turns at once (3)") || !strings.Contains(msg, "retry after 1s") {
		t.Errorf("Error() = %q", msg)
	}
	// A caller under its own limit is refused by the global one too.
	refuse(t, q, "a", "turns")
	if q.Running() != 3 {
		t.Errorf("Running() = %d, want 3", q.Running())
	}
	rb()
	rd := admit(t, q, "d")
	refuse(t, q, "e", "turns")
	ra()
	rc()
	rd()
	if q.Running() != 0 {
		t.Errorf("Running() = %d, want 0", q.Running())
	}
	// With both limits reached, the per-caller one is reported.
	rz1, rz2, ry := admit(t, q, "z"), admit(t, q, "z"), admit(t, q, "y")
	refuse(t, q, "z", "streams")
	refuse(t, q, "y", "turns")
	rz1()
	rz2()
	ry()
}

func TestLimitOrderAndRateTokens(t *testing.T) {
	// A turn refused by streams takes no rate token.
	q := New(Limits{Rate: 1, Burst: 2, Streams: 1})
	r := admit(t, q, "a")
	refuse(t, q, "a", "streams")
	refuse(t, q, "a", "streams")
	r()
	admit(t, q, "a")() // the second token is still there
	refuse(t, q, "a", "rate")
}

func TestRunning(t *testing.T) {
	q := New(Limits{})
	if q.Running() != 0 {
		t.Fatalf("Running() = %d", q.Running())
	}
	var rs []func()
	for i := range 5 {
		rs = append(rs, admit(t, q, fmt.Sprint("k", i%2)))
		if q.Running() != i+1 {
			t.Errorf("Running() = %d, want %d", q.Running(), i+1)
		}
	}
	for i, r := range rs {
		r()
		r()
		if q.Running() != 4-i {
			t.Errorf("Running() = %d, want %d", q.Running(), 4-i)
		}
	}
}

func hourly(t *testing.T, n int, call func(q *Quota, key string) *Exceeded, limit, words string) {
	t.Helper()
	limits := Limits{}
	if limit == "catalogs" {
		limits.Catalogs = n
	} else {
		limits.Sessions = n
	}
	q := New(limits)
	for i := range n {
		if err := call(q, "a"); err != nil {
			t.Fatalf("%s %d of %d refused: %v", limit, i+1, n, err)
		}
	}
	err := call(q, "a")
	if err == nil {
		t.Fatalf("%s %d admitted, want refused", limit, n+1)
	}
	if err.Limit != limit || err.Max != float64(n) {
		t.Errorf("Exceeded = %+v, want %s max %d", err, limit, n)
	}
	want := time.Hour / time.Duration(n)
	if d := err.RetryAfter; d < want-time.Second || d > want {
		t.Errorf("RetryAfter = %v, want about %v", d, want)
	}
	if s := err.RetryAfterSeconds(); s < int(want.Seconds())-1 || s > int(want.Seconds()) {
		t.Errorf("RetryAfterSeconds() = %d, want about %d", s, int(want.Seconds()))
	}
	if msg := err.Error(); !strings.Contains(msg, fmt.Sprintf("at most %d %s per hour", n, words)) || !strings.Contains(msg, "retry after") {
		t.Errorf("Error() = %q", msg)
	}
	// Refused again: a refusal takes nothing.
	if err := call(q, "a"); err == nil || err.Limit != limit {
		t.Errorf("second refusal: %v", err)
	}
	// Another caller has its own allowance.
	for i := range n {
		if err := call(q, "b"); err != nil {
			t.Fatalf("caller b: %s %d refused: %v", limit, i+1, err)
		}
	}
	if err := call(q, "b"); err == nil {
		t.Error("caller b: over the limit admitted")
	}
	// Turns are not affected.
	admit(t, q, "a")()
}

func TestCatalogs(t *testing.T) {
	hourly(t, 4, (*Quota).NewCatalog, "catalogs", "new catalogs")
	hourly(t, 1, (*Quota).NewCatalog, "catalogs", "new catalogs")
	// Sessions are not limited by Catalogs.
	q := New(Limits{Catalogs: 1})
	for range 50 {
		if err := q.NewSession("a"); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSessions(t *testing.T) {
	hourly(t, 3, (*Quota).NewSession, "sessions", "new sessions (/startSession)")
	hourly(t, 60, (*Quota).NewSession, "sessions", "new sessions (/startSession)")
	// Catalogs are not limited by Sessions.
	q := New(Limits{Sessions: 1})
	for range 50 {
		if err := q.NewCatalog("a"); err != nil {
			t.Fatal(err)
		}
	}
	// Catalogs and sessions count apart.
	q = New(Limits{Catalogs: 1, Sessions: 1})
	if q.NewCatalog("a") != nil || q.NewSession("a") != nil {
		t.Fatal("first catalog or session refused")
	}
	if q.NewCatalog("a") == nil || q.NewSession("a") == nil {
		t.Fatal("second catalog or session admitted")
	}
}

// TestConversations: the deprecated NewConversation is an hourly allowance of
// Limits.Conversations (the conversation store counts the conversations stored), apart
// from the sessions'.
func TestConversations(t *testing.T) {
	hourlyConversations := func(t *testing.T, n int) {
		t.Helper()
		q := New(Limits{Conversations: n})
		for i := range n {
			if err := q.NewConversation("a"); err != nil {
				t.Fatalf("conversation %d of %d refused: %v", i+1, n, err)
			}
		}
		err := q.NewConversation("a")
		if err == nil || err.Limit != "conversations" || err.Max != float64(n) || err.RetryAfter <= 0 {
			t.Fatalf("conversation %d: %+v", n+1, err)
		}
		if err := q.NewConversation("b"); err != nil {
			t.Fatalf("another caller: %v", err)
		}
	}
	hourlyConversations(t, 1)
	hourlyConversations(t, 30)
	q := New(Limits{Conversations: 1, Sessions: 1})
	if q.Limits().Conversations != 1 {
		t.Fatalf("Limits() = %+v", q.Limits())
	}
	if q.NewConversation("a") != nil || q.NewSession("a") != nil {
		t.Fatal("first conversation or session refused")
	}
	if q.NewConversation("a") == nil || q.NewSession("a") == nil {
		t.Fatal("second conversation or session admitted")
	}
}

func TestConcurrent(t *testing.T) {
	const (
		streams = 3
		turns   = 10
		keys    = 5
	)
	q := New(Limits{Streams: streams, Turns: turns, Rate: 1e6, Burst: 1000, Catalogs: 1000, Sessions: 1000})
	var (
		wg               sync.WaitGroup
		total            atomic.Int64
		perKey           [keys]atomic.Int64
		admitted, denied atomic.Int64
		violations       atomic.Int64
	)
	for g := range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 200 {
				k := (g + i) % keys
				key := fmt.Sprint("caller-", k)
				release, err := q.StartTurn(key)
				_ = q.NewCatalog(key)
				_ = q.NewSession(key)
				if err != nil {
					denied.Add(1)
					continue
				}
				admitted.Add(1)
				if n := perKey[k].Add(1); n > streams {
					violations.Add(1)
				}
				if n := total.Add(1); n > turns {
					violations.Add(1)
				}
				if q.Running() > turns {
					violations.Add(1)
				}
				perKey[k].Add(-1)
				total.Add(-1)
				release()
				if i%7 == 0 {
					release() // a second release is harmless
				}
			}
		}()
	}
	wg.Wait()
	if v := violations.Load(); v != 0 {
		t.Errorf("%d times more turns ran than the limits allow", v)
	}
	if q.Running() != 0 {
		t.Errorf("Running() = %d after all releases, want 0", q.Running())
	}
	if admitted.Load() == 0 {
		t.Error("no turn admitted")
	}
	if admitted.Load()+denied.Load() != 50*200 {
		t.Errorf("%d admitted + %d denied != %d", admitted.Load(), denied.Load(), 50*200)
	}
	// Every place is free again.
	var rs []func()
	for i := range turns {
		rs = append(rs, admit(t, q, fmt.Sprint("fresh-", i)))
	}
	refuse(t, q, "fresh-x", "turns")
	for _, r := range rs {
		r()
	}
}

func TestExceededError(t *testing.T) {
	cases := []struct {
		e    Exceeded
		want []string
	}{
		{Exceeded{Limit: "rate", Max: 0.5, RetryAfter: 1500 * time.Millisecond}, []string{"rate limit", "0.5 turns per second", "retry after 2s"}},
		{Exceeded{Limit: "streams", Max: 4, RetryAfter: time.Second}, []string{"at most 4 turns of one caller at once", "retry when one ends"}},
		{Exceeded{Limit: "turns", Max: 100, RetryAfter: time.Second}, []string{"most turns at once (100)", "retry after 1s"}},
		{Exceeded{Limit: "catalogs", Max: 10, RetryAfter: 6 * time.Minute}, []string{"at most 10 new catalogs per hour", "/startSession", "retry after 6m0s"}},
		{Exceeded{Limit: "sessions", Max: 30, RetryAfter: 119500 * time.Millisecond}, []string{"at most 30 new sessions (/startSession) per hour", "retry after 2m0s"}},
		{Exceeded{Limit: "conversations", Max: 5, RetryAfter: 59 * time.Minute}, []string{"at most 5 conversations of one caller stored at once", "retry after 59m0s"}},
	}
	for _, tc := range cases {
		msg := tc.e.Error()
		for _, w := range tc.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: Error() = %q, want it to contain %q", tc.e.Limit, msg, w)
			}
		}
	}
	// Exceeded is an error.
	var err error = &Exceeded{Limit: "streams", Max: 1}
	if err.Error() == "" {
		t.Error("empty message")
	}
}

func TestRetryAfterSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int{
		0:                       1,
		-time.Second:            1,
		time.Millisecond:        1,
		time.Second:             1,
		1001 * time.Millisecond: 2,
		1500 * time.Millisecond: 2,
		15 * time.Minute:        900,
		time.Hour:               3600,
	} {
		if got := (&Exceeded{RetryAfter: d}).RetryAfterSeconds(); got != want {
			t.Errorf("RetryAfter %v: RetryAfterSeconds() = %d, want %d", d, got, want)
		}
	}
}
