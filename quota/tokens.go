package quota

import (
	"context"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/genuiserver/genui/internal/rediserr"
)

// Token budgets: the model tokens (input and output, as the providers report them) each
// caller may use in a window of time (an hour unless WithTokenWindow says otherwise).
// A turn is admitted while the caller's tokens in the current window are below its
// budget, so the turn that crosses the budget completes; the next is refused until the
// window ends. Windows are fixed and aligned (each hour from :00), so that every replica
// agrees on them; with WithRedis a caller's tokens are counted in Redis, one hash per
// caller and window (one cluster slot), and every replica sees the same count.

// WithTokenWindow sets the window of token budgets (default an hour).
func WithTokenWindow(d time.Duration) Option {
	return func(q *Quota) {
		if d > 0 {
			q.tokenWindow = d
		}
	}
}

// Usage is what a caller used of its token budget in the current window.
type Usage struct {
	Input, Output int64
	// Budget is the caller's budget per window: 0 for none.
	Budget int64
	// ResetAt is when the window ends and the count starts again.
	ResetAt time.Time
}

// Total is the tokens used, input and output.
func (u Usage) Total() int64 { return u.Input + u.Output }

// window returns the start and end of the token window holding now.
func (q *Quota) window(now time.Time) (time.Time, time.Time) {
	w := q.tokenWindow
	if w <= 0 {
		w = time.Hour
	}
	start := now.Truncate(w)
	return start, start.Add(w)
}

// tokenKey is the Redis key of caller key's tokens in the window starting at start.
func (s *shared) tokenKey(key string, start time.Time) string {
	return s.key("tokens", key) + ":" + strconv.FormatInt(start.UnixMilli(), 10)
}

// TokenUsage returns what caller key used of budget (0: none) in the current window.
func (q *Quota) TokenUsage(ctx context.Context, key string, budget int64) (Usage, error) {
	if q == nil {
		return Usage{Budget: budget}, nil
	}
	start, end := q.window(time.Now())
	u := Usage{Budget: budget, ResetAt: end}
	if q.shared != nil {
		vals, err := q.shared.client.HMGet(ctx, q.shared.tokenKey(key, start), "in", "out").Result()
		if err != nil {
			return Usage{}, rediserr.Wrap(ctx, sharedWhat, err)
		}
		u.Input, u.Output = count(vals[0]), count(vals[1])
		return u, nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if c := q.callerOf(key); c.tokStart.Equal(start) {
		u.Input, u.Output = c.tokIn, c.tokOut
	}
	return u, nil
}

func count(v any) int64 {
	s, _ := v.(string)
	n, _ := strconv.ParseInt(s, 10, 64)
	return n
}

// AdmitTokens admits a turn of caller key while its tokens in the current window are
// below budget (0: no budget), or returns an *Exceeded (limit "tokens") whose RetryAfter
// is the end of the window; or the store's error when Redis cannot say.
func (q *Quota) AdmitTokens(ctx context.Context, key string, budget int64) error {
	if q == nil || budget <= 0 {
		return nil
	}
	u, err := q.TokenUsage(ctx, key, budget)
	if err != nil {
		return err
	}
	if u.Total() < budget {
		return nil
	}
	return &Exceeded{Limit: "tokens", Max: float64(budget), RetryAfter: time.Until(u.ResetAt)}
}

// AddTokens counts a turn's tokens, in and out, to caller key in the current window.
func (q *Quota) AddTokens(ctx context.Context, key string, in, out int64) error {
	if q == nil || (in <= 0 && out <= 0) {
		return nil
	}
	start, end := q.window(time.Now())
	if q.shared != nil {
		k := q.shared.tokenKey(key, start)
		_, err := q.shared.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.HIncrBy(ctx, k, "in", max(in, 0))
			p.HIncrBy(ctx, k, "out", max(out, 0))
			// Kept a window past its end, for a replica whose clock runs late.
			p.PExpireAt(ctx, k, end.Add(end.Sub(start)))
			return nil
		})
		if err != nil {
			return rediserr.Wrap(ctx, sharedWhat, err)
		}
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.callerOf(key)
	if !c.tokStart.Equal(start) {
		c.tokStart, c.tokIn, c.tokOut = start, 0, 0
	}
	c.tokIn += max(in, 0)
	c.tokOut += max(out, 0)
	return nil
}
