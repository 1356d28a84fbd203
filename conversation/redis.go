package conversation

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/genuiserver/genui/internal/ids"
	"github.com/genuiserver/genui/internal/rediserr"
)

// Redis is a Store shared by every replica using the same Redis.
//
// Keys (the id in braces, so that a conversation's keys share a cluster slot):
// <prefix>conv:{<id>} holds the history, to which a turn appends (APPEND);
// <prefix>conv:{<id>}:meta the kind and what the conversation waits for;
// <prefix>conv:{<id>}:session a session's; all expire after the idle TTL, renewed by every
// turn. <prefix>conv:{<id>}:hold holds the token of the turn
// holding the conversation, with a lease that the holder renews while its turn runs, so
// that a replica that dies mid-turn frees the conversation when the lease runs out.
//
// Each operation is one Lua script, so a hold and a commit are atomic.
type Redis struct {
	client redis.UniversalClient
	ttl    time.Duration
	lease  time.Duration
	prefix string
}

// RedisOption configures a Redis store.
type RedisOption func(*Redis)

// WithKeyPrefix sets the prefix of every key (default "genui:").
func WithKeyPrefix(prefix string) RedisOption { return func(r *Redis) { r.prefix = prefix } }

// WithLease sets the lease of a hold, renewed every third of it while the turn runs
// (default 30 s): how long a conversation stays held after its replica died.
func WithLease(d time.Duration) RedisOption {
	return func(r *Redis) {
		if d > 0 {
			r.lease = d
		}
	}
}

// NewRedis returns a Store keeping conversations in Redis through client, each expiring
// ttl after its last turn (ttl must be positive).
func NewRedis(client redis.UniversalClient, ttl time.Duration, opts ...RedisOption) *Redis {
	if ttl <= 0 {
		panic("conversation.NewRedis: ttl must be positive")
	}
	r := &Redis{client: client, ttl: ttl, lease: 30 * time.Second, prefix: "genui:"}
	for _, o := range opts {
		o(r)
	}
	return r
}

const storeWhat = "conversation store"

func (r *Redis) keys(id string) []string {
	k := r.prefix + "conv:{" + id + "}"
	return []string{k, k + ":meta", k + ":hold", k + ":session"}
}

// Scripts. KEYS: history, meta, hold, session.
var (
	// ARGV: token, lease ms, ttl ms. Returns {history, meta, session}, or nil when held.
	beginScript = redis.NewScript(`
if not redis.call('SET', KEYS[3], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
redis.call('PEXPIRE', KEYS[4], ARGV[3])
return {redis.call('GET', KEYS[1]) or '', redis.call('GET', KEYS[2]) or '', redis.call('GET', KEYS[4]) or ''}`)
	// Returns {history, meta, session}, or nil when held.
	peekScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[3]) == 1 then return false end
return {redis.call('GET', KEYS[1]) or '', redis.call('GET', KEYS[2]) or '', redis.call('GET', KEYS[4]) or ''}`)
	// ARGV: token, append, meta, ttl ms, session flag ("1": set it to ARGV[6]), session.
	// Returns 1, or 0 when the hold is not the token's.
	commitScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
if #ARGV[2] > 0 then redis.call('APPEND', KEYS[1], ARGV[2]) end
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
if ARGV[5] == '1' then redis.call('SET', KEYS[4], ARGV[6], 'PX', ARGV[4])
elseif redis.call('EXISTS', KEYS[4]) == 1 then redis.call('PEXPIRE', KEYS[4], ARGV[4]) end
redis.call('DEL', KEYS[3])
return 1`)
	// ARGV: token. Deletes the hold if it is the token's.
	releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) == ARGV[1] then return redis.call('DEL', KEYS[3]) end
return 0`)
	// ARGV: token. Deletes the conversation if the hold is the token's; returns 1, else 0.
	deleteScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[4], KEYS[3])
return 1`)
	// ARGV: token, lease ms. Extends the hold if it is the token's.
	renewScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[3], ARGV[2]) end
return 0`)
)

// Begin implements Store.
func (r *Redis) Begin(ctx context.Context, id string) (*State, Hold, error) {
	keys := r.keys(id)
	token := ids.New()
	res, err := beginScript.Run(ctx, r.client, keys, token, rediserr.MS(r.lease), rediserr.MS(r.ttl)).StringSlice()
	if errors.Is(err, redis.Nil) {
		return nil, nil, ErrBusy
	}
	if err != nil {
		return nil, nil, rediserr.Wrap(ctx, storeWhat, err)
	}
	st := stateOf(res)
	h := &redisHold{r: r, keys: keys, token: token}
	h.mu.Lock()
	h.timer = time.AfterFunc(r.lease/3, h.renew)
	h.mu.Unlock()
	return st, h, nil
}

// Peek implements Store.
func (r *Redis) Peek(ctx context.Context, id string) (*State, error) {
	res, err := peekScript.Run(ctx, r.client, r.keys(id)).StringSlice()
	if errors.Is(err, redis.Nil) {
		return nil, ErrBusy
	}
	if err != nil {
		return nil, rediserr.Wrap(ctx, storeWhat, err)
	}
	return stateOf(res), nil
}

// stateOf decodes the {history, meta, session} a script returns.
func stateOf(res []string) *State {
	st := &State{}
	if len(res) == 3 {
		if res[0] != "" {
			st.History = []byte(res[0])
		}
		st.Kind, st.Pending = decodeMeta(res[1])
		if res[2] != "" {
			st.Session = []byte(res[2])
		}
	}
	return st
}

// Ready implements Store: Redis answers PING.
func (r *Redis) Ready(ctx context.Context) error {
	if err := r.client.Ping(ctx).Err(); err != nil {
		return rediserr.Wrap(ctx, storeWhat, err)
	}
	return nil
}

// The meta key holds the kind, a newline, then what the conversation waits for.
func encodeMeta(kind string, pending []byte) string {
	return kind + "\n" + string(pending)
}

func decodeMeta(s string) (kind string, pending []byte) {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			if i+1 < len(s) {
				pending = []byte(s[i+1:])
			}
			return s[:i], pending
		}
	}
	return s, nil
}

type redisHold struct {
	r     *Redis
	keys  []string
	token string

	mu    sync.Mutex
	timer *time.Timer
	done  bool
}

// renew extends the lease while the turn runs, every third of the lease.
func (h *redisHold) renew() {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), h.r.lease/3)
	defer cancel()
	// A failed renewal is retried at the next tick; the lease covers two of them.
	_ = renewScript.Run(ctx, h.r.client, h.keys, h.token, rediserr.MS(h.r.lease)).Err()
	h.timer.Reset(h.r.lease / 3)
}

// stop ends the renewals; it reports false when the hold already ended.
func (h *redisHold) stop() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return false
	}
	h.done = true
	h.timer.Stop()
	return true
}

func (h *redisHold) Commit(ctx context.Context, u Update) error {
	if !h.stop() {
		return ErrHoldLost
	}
	setSession := "0"
	if u.Session != nil {
		setSession = "1"
	}
	n, err := commitScript.Run(ctx, h.r.client, h.keys, h.token, u.Append, encodeMeta(u.Kind, u.Pending), rediserr.MS(h.r.ttl), setSession, u.Session).Int()
	if err != nil {
		return rediserr.Wrap(ctx, storeWhat, err)
	}
	if n == 0 {
		return ErrHoldLost
	}
	return nil
}

func (h *redisHold) Release() {
	if !h.stop() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// When Redis cannot be reached the lease frees the conversation.
	_ = releaseScript.Run(ctx, h.r.client, h.keys, h.token).Err()
}

func (h *redisHold) Delete(ctx context.Context) error {
	if !h.stop() {
		return ErrHoldLost
	}
	n, err := deleteScript.Run(ctx, h.r.client, h.keys, h.token).Int()
	if err != nil {
		return rediserr.Wrap(ctx, storeWhat, err)
	}
	if n == 0 {
		return ErrHoldLost
	}
	return nil
}
