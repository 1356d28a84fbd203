package quota

import (
	"context"
	"errors"
	"math"
	"sync"
	"time"

	"github.com/go-redis/redis_rate/v10"
	"github.com/redis/go-redis/v9"

	"github.com/genuiserver/genui/internal/ids"
	"github.com/genuiserver/genui/internal/rediserr"
)

// Option configures a Quota.
type Option func(*Quota)

// WithRedis shares the limits of each caller among every replica that uses the same
// Redis (any topology: each limit of a caller is one key, so one cluster slot): the rate
// at which it starts turns and its hourly new catalogs and sessions, as GCRA buckets
// (go-redis's redis_rate), and the turns it runs at once, as leases that a running turn
// renews (a replica that dies frees its callers' places when the lease runs out). So N
// replicas never give a caller more than its limits. Keys start with prefix. The turns
// all callers run at once (Limits.Turns) stay a bound of each replica. Only the methods
// that take a context ([Quota.Admit], [Quota.AdmitCatalog], [Quota.AdmitSession]) use
// Redis.
func WithRedis(client redis.UniversalClient, prefix string) Option {
	return func(q *Quota) {
		q.shared = &shared{client: client, rate: redis_rate.NewLimiter(client), prefix: prefix, lease: 30 * time.Second}
	}
}

type shared struct {
	client redis.UniversalClient
	rate   *redis_rate.Limiter
	prefix string
	lease  time.Duration
}

const sharedWhat = "limit store"

// key is a caller's key of one limit.
func (s *shared) key(limit, caller string) string { return s.prefix + limit + ":{" + caller + "}" }

// perSecond turns a rate of events per second into a GCRA limit: whole events over a
// period long enough to express fractions to a thousandth.
func perSecond(r float64, burst int) redis_rate.Limit {
	if r >= 1 && r == math.Trunc(r) {
		return redis_rate.Limit{Rate: int(r), Burst: burst, Period: time.Second}
	}
	return redis_rate.Limit{Rate: max(1, int(math.Round(r*1000))), Burst: burst, Period: 1000 * time.Second}
}

// take takes a token of a shared bucket, or says how long until one is there.
func (s *shared) take(ctx context.Context, key string, l redis_rate.Limit) (time.Duration, bool, error) {
	res, err := s.rate.Allow(ctx, key, l)
	if err != nil {
		return 0, false, rediserr.Wrap(ctx, sharedWhat, err)
	}
	if res.Allowed == 0 {
		return max(res.RetryAfter, time.Millisecond), false, nil
	}
	return 0, true, nil
}

// Scripts of a caller's running turns, a sorted set of leases scored by their expiry
// (the Redis server's Unix ms).
var (
	// ARGV: token, lease ms, limit. Returns 1 when the turn is admitted, 0 at the limit.
	acquireScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return 0 end
redis.call('ZADD', KEYS[1], string.format('%.0f', now + ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1`)
	// ARGV: token, lease ms. Extends a running turn's lease.
	renewScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZADD', KEYS[1], 'XX', 'CH', string.format('%.0f', now + ARGV[2]), ARGV[1]) == 1 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 1`)
)

// lease is a running turn's place among its caller's, renewed while the turn runs.
type lease struct {
	s     *shared
	key   string
	token string

	mu    sync.Mutex
	timer *time.Timer
	done  bool
}

func (s *shared) acquire(ctx context.Context, caller string, limit int) (*lease, bool, error) {
	l := &lease{s: s, key: s.key("streams", caller), token: ids.New()}
	n, err := acquireScript.Run(ctx, s.client, []string{l.key}, l.token, rediserr.MS(s.lease), limit).Int()
	if err != nil {
		return nil, false, rediserr.Wrap(ctx, sharedWhat, err)
	}
	if n == 0 {
		return nil, false, nil
	}
	l.mu.Lock()
	l.timer = time.AfterFunc(s.lease/3, l.renew)
	l.mu.Unlock()
	return l, true, nil
}

// renew extends the lease every third of it; a failure is retried at the next tick.
func (l *lease) renew() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.done {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), l.s.lease/3)
	defer cancel()
	_ = renewScript.Run(ctx, l.s.client, []string{l.key}, l.token, rediserr.MS(l.s.lease)).Err()
	l.timer.Reset(l.s.lease / 3)
}

// release gives the place back; when Redis cannot be reached, the lease runs out.
func (l *lease) release() {
	l.mu.Lock()
	if l.done {
		l.mu.Unlock()
		return
	}
	l.done = true
	l.timer.Stop()
	l.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = l.s.client.ZRem(ctx, l.key, l.token).Err()
}

// Admit admits a turn of caller key, as StartTurn does, with the limits shared through
// Redis when the Quota has it (WithRedis). It returns an *Exceeded for a limit the turn
// ran into, or the store's error (wrapping rediserr.ErrUnavailable) when Redis cannot say.
// release, which must be called once when the turn ends, frees its place.
func (q *Quota) Admit(ctx context.Context, key string) (release func(), err error) {
	if q == nil || q.shared == nil {
		release, e := q.StartTurn(key)
		if e != nil {
			return nil, e
		}
		return release, nil
	}
	q.mu.Lock()
	if q.l.Turns > 0 && q.running >= q.l.Turns {
		q.mu.Unlock()
		return nil, &Exceeded{Limit: "turns", Max: float64(q.l.Turns), RetryAfter: time.Second}
	}
	q.running++ // this replica's place, given back below if the turn is refused
	q.mu.Unlock()
	giveBack := func() {
		q.mu.Lock()
		q.running--
		q.mu.Unlock()
	}
	var l *lease
	if q.l.Streams > 0 {
		var ok bool
		if l, ok, err = q.shared.acquire(ctx, key, q.l.Streams); err != nil || !ok {
			giveBack()
			if err != nil {
				return nil, err
			}
			return nil, &Exceeded{Limit: "streams", Max: float64(q.l.Streams), RetryAfter: time.Second}
		}
	}
	if q.l.Rate > 0 {
		d, ok, err := q.shared.take(ctx, q.shared.key("turns", key), perSecond(q.l.Rate, q.l.Burst))
		if err != nil || !ok {
			if l != nil {
				l.release()
			}
			giveBack()
			if err != nil {
				return nil, err
			}
			return nil, &Exceeded{Limit: "rate", Max: q.l.Rate, RetryAfter: d}
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			if l != nil {
				l.release()
			}
			giveBack()
		})
	}, nil
}

// AdmitCatalog admits a new catalog of caller key, as NewCatalog does, shared through
// Redis when the Quota has it.
func (q *Quota) AdmitCatalog(ctx context.Context, key string) error {
	return q.admitHourly(ctx, key, "catalogs", q.Limits().Catalogs, (*Quota).NewCatalog)
}

// AdmitSession admits a new /startSession session of caller key, as NewSession does,
// shared through Redis when the Quota has it.
func (q *Quota) AdmitSession(ctx context.Context, key string) error {
	return q.admitHourly(ctx, key, "sessions", q.Limits().Sessions, (*Quota).NewSession)
}

func (q *Quota) admitHourly(ctx context.Context, key, limit string, n int, local func(*Quota, string) *Exceeded) error {
	if q == nil || n == 0 {
		return nil
	}
	if q.shared == nil {
		if e := local(q, key); e != nil {
			return e
		}
		return nil
	}
	d, ok, err := q.shared.take(ctx, q.shared.key(limit, key), redis_rate.PerHour(n))
	if err != nil {
		return err
	}
	if !ok {
		return &Exceeded{Limit: limit, Max: float64(n), RetryAfter: d}
	}
	return nil
}

// IsExceeded returns the *Exceeded err is or wraps, or nil.
func IsExceeded(err error) *Exceeded {
	var e *Exceeded
	if errors.As(err, &e) {
		return e
	}
	return nil
}
