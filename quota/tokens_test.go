package quota

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/genuiserver/genui/internal/testkit/redistest"
)

// A caller's turns are admitted while its tokens are below its budget, the turn that
// crosses it completes, the next waits for the window's end; another caller is served
// meanwhile; the window rolls over. In memory, and shared by replicas through Redis on
// each topology.
func TestTokenBudgets(t *testing.T) {
	const window = 800 * time.Millisecond
	check := func(t *testing.T, qs []*Quota) {
		ctx := context.Background()
		// Start right after a window began, so that the steps below fit in it.
		time.Sleep(time.Until(time.Now().Truncate(window).Add(window)))
		must(t, qs[0].AdmitTokens(ctx, "alice", 100))
		must(t, qs[0].AddTokens(ctx, "alice", 60, 30)) // 90: below
		must(t, qs[len(qs)-1].AdmitTokens(ctx, "alice", 100))
		must(t, qs[len(qs)-1].AddTokens(ctx, "alice", 20, 5)) // 115: the turn that crossed completed
		err := qs[len(qs)-1].AdmitTokens(ctx, "alice", 100)
		e := IsExceeded(err)
		if e == nil || e.Limit != "tokens" || e.Max != 100 || e.RetryAfter <= 0 || e.RetryAfter > window || e.RetryAfterSeconds() < 1 {
			t.Fatalf("over the budget: %v", err)
		}
		must(t, qs[0].AdmitTokens(ctx, "bob", 100))
		must(t, qs[0].AdmitTokens(ctx, "alice", 0)) // no budget: no limit
		for i, q := range qs {
			u, err := q.TokenUsage(ctx, "alice", 100)
			must(t, err)
			if u.Input != 80 || u.Output != 35 || u.Total() != 115 || u.Budget != 100 || time.Until(u.ResetAt) > window {
				t.Errorf("replica %d: usage %+v", i, u)
			}
		}
		time.Sleep(time.Until(time.Now().Truncate(window).Add(window)) + 10*time.Millisecond)
		must(t, qs[len(qs)-1].AdmitTokens(ctx, "alice", 100))
		if u, _ := qs[0].TokenUsage(ctx, "alice", 100); u.Total() != 0 {
			t.Errorf("a new window: usage %+v", u)
		}
	}
	t.Run("memory", func(t *testing.T) {
		check(t, []*Quota{New(Limits{}, WithTokenWindow(window))})
	})
	redistest.EachTopology(t, func(t *testing.T, client redis.UniversalClient, _ int) {
		prefix := redistest.UniquePrefix()
		check(t, []*Quota{
			New(Limits{}, WithRedis(client, prefix), WithTokenWindow(window)),
			New(Limits{}, WithRedis(client, prefix), WithTokenWindow(window)),
		})
	})
	var q *Quota
	if err := q.AdmitTokens(context.Background(), "x", 1); err != nil {
		t.Errorf("nil Quota: %v", err)
	}
}
