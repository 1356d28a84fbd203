package quota

import (
	"fmt"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"golang.org/x/time/rate"

	"github.com/genuiserver/genui/internal/retryafter"
)

// Limits are the bounds; a zero field is no bound.
type Limits struct {
	Rate     float64 // turns per second a caller may start, on average
	Burst    int     // turns a caller may start at once above Rate (at least 1)
	Streams  int     // turns one caller may run at once
	Turns    int     // turns all callers may run at once
	Catalogs int     // new catalogs a caller may add per hour
	Sessions int     // new /startSession sessions a caller may start per hour
	// Conversations is how many conversations (held conversations and WebSocket
	// sessions, which are conversations) a caller may have stored at once. The
	// conversation store counts them, as they are created, expire, are evicted or
	// deleted (conversation.WithCallerLimit); Quota carries the number (and the
	// deprecated NewConversation reads it as an hourly allowance).
	Conversations int
}

// Exceeded is a limit a request ran into.
type Exceeded struct {
	Limit      string        // "rate", "streams", "turns", "catalogs", "sessions", "conversations", "tokens"
	Max        float64       // the limit's value
	RetryAfter time.Duration // when trying again may succeed
}

func (e *Exceeded) Error() string {
	switch e.Limit {
	case "rate":
		return fmt.Sprintf("rate limit: at most %g turns per second; retry after %s", e.Max, roundUp(e.RetryAfter))
	case "streams":
		return fmt.Sprintf("limit: at most %g turns of one caller at once; retry when one ends", e.Max)
	case "turns":
		return fmt.Sprintf("the server runs its most turns at once (%g); retry after %s", e.Max, roundUp(e.RetryAfter))
	case "catalogs":
		return fmt.Sprintf("limit: at most %g new catalogs per hour; use a session (/startSession) or a catalog sent before; retry after %s", e.Max, roundUp(e.RetryAfter))
	case "sessions":
		return fmt.Sprintf("limit: at most %g new sessions (/startSession) per hour; reuse a session; retry after %s", e.Max, roundUp(e.RetryAfter))
	case "tokens":
		return fmt.Sprintf("token budget: this caller used its %g model tokens of the window; retry after %s", e.Max, roundUp(e.RetryAfter))
	}
	return fmt.Sprintf("limit: at most %g conversations of one caller stored at once; end one (or let one expire); retry after %s", e.Max, roundUp(e.RetryAfter))
}

// RetryAfterSeconds is RetryAfter in whole seconds, at least 1: the Retry-After value.
func (e *Exceeded) RetryAfterSeconds() int {
	return max(1, retryafter.Seconds(e.RetryAfter))
}

func roundUp(d time.Duration) time.Duration {
	return time.Duration(retryafter.Seconds(d)) * time.Second
}

// Quota enforces Limits. Its methods are safe for concurrent use; a nil *Quota allows
// everything.
type Quota struct {
	l       Limits
	mu      sync.Mutex
	callers *lru.Cache[string, *caller]
	running int
	shared  *shared // the limits shared through Redis, or nil
	// tokenWindow is the window of token budgets.
	tokenWindow time.Duration
}

type caller struct {
	turns, catalogs, sessions, convs *rate.Limiter
	running                          int
	// The caller's tokens in the window starting at tokStart (token budgets).
	tokStart      time.Time
	tokIn, tokOut int64
}

// New returns a Quota enforcing l, remembering at most 100,000 callers.
func New(l Limits, opts ...Option) *Quota {
	c, _ := lru.New[string, *caller](100_000)
	if l.Burst < 1 {
		l.Burst = 1
	}
	q := &Quota{l: l, callers: c}
	for _, o := range opts {
		o(q)
	}
	return q
}

// Limits returns the limits q enforces.
func (q *Quota) Limits() Limits {
	if q == nil {
		return Limits{}
	}
	return q.l
}

func (q *Quota) callerOf(key string) *caller {
	c, ok := q.callers.Get(key)
	if !ok {
		c = &caller{}
		if q.l.Rate > 0 {
			c.turns = rate.NewLimiter(rate.Limit(q.l.Rate), q.l.Burst)
		}
		if q.l.Catalogs > 0 {
			c.catalogs = rate.NewLimiter(rate.Every(time.Hour/time.Duration(q.l.Catalogs)), q.l.Catalogs)
		}
		if q.l.Sessions > 0 {
			c.sessions = rate.NewLimiter(rate.Every(time.Hour/time.Duration(q.l.Sessions)), q.l.Sessions)
		}
		if q.l.Conversations > 0 {
			c.convs = rate.NewLimiter(rate.Every(time.Hour/time.Duration(q.l.Conversations)), q.l.Conversations)
		}
		q.callers.Add(key, c)
	}
	return c
}

// take takes a token of lim now, or says how long until one is there.
func take(lim *rate.Limiter, now time.Time) (time.Duration, bool) {
	r := lim.ReserveN(now, 1)
	if !r.OK() {
		return time.Hour, false
	}
	if d := r.DelayFrom(now); d > 0 {
		r.CancelAt(now)
		return d, false
	}
	return 0, true
}

// StartTurn admits a turn of caller key, or says which limit it ran into. release, which
// must be called once when the turn ends, frees its place among the running turns.
func (q *Quota) StartTurn(key string) (release func(), err *Exceeded) {
	if q == nil {
		return func() {}, nil
	}
	now := time.Now()
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.callerOf(key)
	if q.l.Streams > 0 && c.running >= q.l.Streams {
		return nil, &Exceeded{Limit: "streams", Max: float64(q.l.Streams), RetryAfter: time.Second}
	}
	if q.l.Turns > 0 && q.running >= q.l.Turns {
		return nil, &Exceeded{Limit: "turns", Max: float64(q.l.Turns), RetryAfter: time.Second}
	}
	if c.turns != nil {
		if d, ok := take(c.turns, now); !ok {
			return nil, &Exceeded{Limit: "rate", Max: q.l.Rate, RetryAfter: d}
		}
	}
	c.running++
	q.running++
	var once sync.Once
	return func() {
		once.Do(func() {
			q.mu.Lock()
			c.running--
			q.running--
			q.mu.Unlock()
		})
	}, nil
}

// NewCatalog admits a catalog caller key adds to the cache.
func (q *Quota) NewCatalog(key string) *Exceeded {
	if q == nil || q.l.Catalogs == 0 {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if d, ok := take(q.callerOf(key).catalogs, time.Now()); !ok {
		return &Exceeded{Limit: "catalogs", Max: float64(q.l.Catalogs), RetryAfter: d}
	}
	return nil
}

// NewSession admits a /startSession session caller key starts.
func (q *Quota) NewSession(key string) *Exceeded {
	if q == nil || q.l.Sessions == 0 {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if d, ok := take(q.callerOf(key).sessions, time.Now()); !ok {
		return &Exceeded{Limit: "sessions", Max: float64(q.l.Sessions), RetryAfter: d}
	}
	return nil
}

// NewConversation admits a new conversation of caller key against an hourly allowance
// of Limits.Conversations.
//
// Deprecated: the conversations a caller has stored are counted by the conversation
// store, which refuses a new one over Limits.Conversations with an error wrapping an
// *Exceeded (conversation.WithCallerLimit); /startSession sessions are NewSession's. This
// hourly allowance remains for a core that still calls it.
func (q *Quota) NewConversation(key string) *Exceeded {
	if q == nil || q.l.Conversations == 0 {
		return nil
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if d, ok := take(q.callerOf(key).convs, time.Now()); !ok {
		return &Exceeded{Limit: "conversations", Max: float64(q.l.Conversations), RetryAfter: d}
	}
	return nil
}

// Running returns the number of turns running.
func (q *Quota) Running() int {
	if q == nil {
		return 0
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.running
}
