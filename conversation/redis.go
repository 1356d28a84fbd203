package conversation

import (
	"context"
	"errors"
	"strconv"
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
// <prefix>conv:{<id>}:session a session's; <prefix>conv:{<id>}:owner the caller it is
// counted against (WithCallerLimit); all expire after the idle TTL, renewed by every
// turn. <prefix>conv:{<id>}:hold holds the token of the turn
// holding the conversation, with a lease that the holder renews while its turn runs, so
// that a replica that dies mid-turn frees the conversation when the lease runs out.
//
// Two sorted sets, scored by expiry (Unix ms), index conversations across ids:
// <prefix>owner:{<caller>} the conversations counted against a caller, and
// <prefix>waiting those whose last turn ended with calls of client tools without a
// result. Their members past their score are trimmed when they are read. As these sets
// span conversations, the scripts touch keys of several slots: the store needs one Redis
// (a primary with its replicas), not a Redis Cluster.
//
// Each operation is one Lua script, so a hold and a commit are atomic, and so is a
// conversation's count against its caller.
type Redis struct {
	client redis.UniversalClient
	ttl    time.Duration
	lease  time.Duration
	prefix string
	limit  callerLimit
}

// WithKeyPrefix sets the prefix of every key of a Redis store (default "genui:").
func WithKeyPrefix(prefix string) Option { return func(o *options) { o.prefix = prefix } }

// WithLease sets the lease of a hold in a Redis store, renewed every third of it while the
// turn runs (default 30 s): how long a conversation stays held after its replica died.
func WithLease(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.lease = d
		}
	}
}

// NewRedis returns a Store keeping conversations in Redis through client, each expiring
// ttl after its last turn (ttl must be positive).
func NewRedis(client redis.UniversalClient, ttl time.Duration, opts ...Option) *Redis {
	if ttl <= 0 {
		panic("conversation.NewRedis: ttl must be positive")
	}
	o := options{prefix: "genui:", lease: 30 * time.Second}
	for _, f := range opts {
		f(&o)
	}
	return &Redis{client: client, ttl: ttl, lease: o.lease, prefix: o.prefix, limit: o.limit}
}

const storeWhat = "conversation store"

// keys returns the keys of conversation id: history, meta, hold, session, owner.
func (r *Redis) keys(id string) []string {
	k := r.prefix + "conv:{" + id + "}"
	return []string{k, k + ":meta", k + ":hold", k + ":session", k + ":owner"}
}

// ownerKey is the sorted set of the conversations counted against owner.
func (r *Redis) ownerKey(owner string) string { return r.prefix + "owner:{" + owner + "}" }

func (r *Redis) waitingKey() string { return r.prefix + "waiting" }

// nowMS is the Lua of the server's time in Unix ms, as a local now.
const nowMS = `local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`

// Scripts. KEYS: history, meta, hold, session, owner, then the sets each names.
var (
	// KEYS[6]: the set of the Begin's caller. ARGV: token, lease ms, ttl ms, the
	// caller ("": not counted), its limit, the key prefix, the id. Returns {history,
	// meta, session, owner}; {"!", ms} when the caller is at its limit, ms being when its
	// first conversation expires; nil when held.
	beginScript = redis.NewScript(nowMS + `
if not redis.call('SET', KEYS[3], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end
if redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[4]) > 0 then
  for _, k in ipairs({KEYS[1], KEYS[2], KEYS[4], KEYS[5]}) do redis.call('PEXPIRE', k, ARGV[3]) end
  local owner = redis.call('GET', KEYS[5]) or ''
  if owner ~= '' and owner == ARGV[4] then
    redis.call('ZADD', KEYS[6], 'XX', string.format('%.0f', now + ARGV[3]), ARGV[7])
    redis.call('PEXPIRE', KEYS[6], ARGV[3])
  end
  return {redis.call('GET', KEYS[1]) or '', redis.call('GET', KEYS[2]) or '', redis.call('GET', KEYS[4]) or '', owner}
end
if ARGV[4] ~= '' then
  redis.call('ZREMRANGEBYSCORE', KEYS[6], '-inf', now)
  local n = redis.call('ZCARD', KEYS[6])
  if n >= tonumber(ARGV[5]) then
    -- Members whose conversation is gone: begun on a replica that died, or released
    -- while Redis could not be reached.
    for _, m in ipairs(redis.call('ZRANGE', KEYS[6], 0, -1)) do
      local k = ARGV[6] .. 'conv:{' .. m .. '}'
      if redis.call('EXISTS', k, k .. ':meta', k .. ':session', k .. ':hold') == 0 then
        redis.call('ZREM', KEYS[6], m)
        n = n - 1
      end
    end
  end
  if n >= tonumber(ARGV[5]) then
    redis.call('DEL', KEYS[3])
    local first = redis.call('ZRANGE', KEYS[6], 0, 0, 'WITHSCORES')
    return {'!', string.format('%.0f', tonumber(first[2]) - now)}
  end
  redis.call('ZADD', KEYS[6], string.format('%.0f', now + ARGV[3]), ARGV[7])
  redis.call('PEXPIRE', KEYS[6], ARGV[3])
  redis.call('SET', KEYS[5], ARGV[4], 'PX', ARGV[3])
end
return {'', '', '', ARGV[4]}`)
	// Returns {history, meta, session}, or nil when held.
	peekScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[3]) == 1 then return false end
return {redis.call('GET', KEYS[1]) or '', redis.call('GET', KEYS[2]) or '', redis.call('GET', KEYS[4]) or ''}`)
	// KEYS[6], KEYS[7]: the owner's set, the waiting set. ARGV: token, append, meta,
	// ttl ms, session flag ("1": set it to ARGV[6]), session, owner ("": none), id,
	// pending flag ("1": the conversation waits for results). Returns 1, or 0 when the
	// hold is not the token's.
	commitScript = redis.NewScript(nowMS + `
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
if #ARGV[2] > 0 then redis.call('APPEND', KEYS[1], ARGV[2]) end
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
if ARGV[5] == '1' then redis.call('SET', KEYS[4], ARGV[6], 'PX', ARGV[4])
elseif redis.call('EXISTS', KEYS[4]) == 1 then redis.call('PEXPIRE', KEYS[4], ARGV[4]) end
local expiry = string.format('%.0f', now + ARGV[4])
if ARGV[7] ~= '' then
  redis.call('SET', KEYS[5], ARGV[7], 'PX', ARGV[4])
  redis.call('ZADD', KEYS[6], expiry, ARGV[8])
  redis.call('PEXPIRE', KEYS[6], ARGV[4])
end
if ARGV[9] == '1' then
  redis.call('ZADD', KEYS[7], expiry, ARGV[8])
  redis.call('PEXPIRE', KEYS[7], ARGV[4])
else
  redis.call('ZREM', KEYS[7], ARGV[8])
end
redis.call('DEL', KEYS[3])
return 1`)
	// KEYS[6]: the owner's set. ARGV: token, owner, id. Deletes the hold if it is the
	// token's; a conversation begun and never committed, which holds nothing, stops
	// counting against its owner.
	releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[3])
if redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[4]) == 0 then
  redis.call('DEL', KEYS[5])
  if ARGV[2] ~= '' then redis.call('ZREM', KEYS[6], ARGV[3]) end
end
return 1`)
	// KEYS[6], KEYS[7]: the owner's set, the waiting set. ARGV: token, owner, id.
	// Deletes the conversation if the hold is the token's; returns 1, else 0.
	deleteScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[4], KEYS[5], KEYS[3])
if ARGV[2] ~= '' then redis.call('ZREM', KEYS[6], ARGV[3]) end
redis.call('ZREM', KEYS[7], ARGV[3])
return 1`)
	// ARGV: token, lease ms. Extends the hold if it is the token's.
	renewScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[3], ARGV[2]) end
return 0`)
	// KEYS: a set scored by expiry. Returns how many of its members have not expired.
	countScript = redis.NewScript(nowMS + `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])`)
)

// Begin implements Store. A new conversation of a caller at its limit
// (WithCallerLimit) is refused.
func (r *Redis) Begin(ctx context.Context, id string) (*State, Hold, error) {
	keys := r.keys(id)
	token := ids.New()
	caller := r.limit.ownerOf(ctx)
	res, err := beginScript.Run(ctx, r.client, append(keys, r.ownerKey(caller)),
		token, rediserr.MS(r.lease), rediserr.MS(r.ttl), caller, r.limit.max, r.prefix, id).StringSlice()
	if errors.Is(err, redis.Nil) {
		return nil, nil, ErrBusy
	}
	if err != nil {
		return nil, nil, rediserr.Wrap(ctx, storeWhat, err)
	}
	if len(res) == 2 && res[0] == "!" {
		ms, _ := strconv.ParseInt(res[1], 10, 64)
		return nil, nil, r.limit.exceeded(time.Duration(ms) * time.Millisecond)
	}
	st := stateOf(res)
	owner := ""
	if len(res) == 4 {
		owner = res[3]
	}
	// The hold's scripts name the owner's set and the waiting set as well.
	h := &redisHold{r: r, id: id, owner: owner, keys: append(keys, r.ownerKey(owner), r.waitingKey()), token: token}
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

// Stored returns how many conversations are counted against caller owner: those it
// created that have not expired or been deleted (WithCallerLimit).
func (r *Redis) Stored(ctx context.Context, owner string) (int, error) {
	return r.count(ctx, r.ownerKey(owner))
}

// Waiting returns how many conversations, on every replica sharing the store, wait for
// the results of calls of client tools: their last turn ended with calls without a
// result, and they have not expired.
func (r *Redis) Waiting(ctx context.Context) (int, error) {
	return r.count(ctx, r.waitingKey())
}

func (r *Redis) count(ctx context.Context, set string) (int, error) {
	n, err := countScript.Run(ctx, r.client, []string{set}).Int()
	if err != nil {
		return 0, rediserr.Wrap(ctx, storeWhat, err)
	}
	return n, nil
}

// stateOf decodes the {history, meta, session[, owner]} a script returns.
func stateOf(res []string) *State {
	st := &State{}
	if len(res) >= 3 {
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
	id    string
	owner string   // the caller the conversation is counted against; "" when none
	keys  []string // history, meta, hold, session, owner, the owner's set, the waiting set
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
	pending := "0"
	if len(u.Pending) > 0 {
		pending = "1"
	}
	n, err := commitScript.Run(ctx, h.r.client, h.keys, h.token, u.Append, encodeMeta(u.Kind, u.Pending), rediserr.MS(h.r.ttl), setSession, u.Session,
		h.owner, h.id, pending).Int()
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
	_ = releaseScript.Run(ctx, h.r.client, h.keys, h.token, h.owner, h.id).Err()
}

func (h *redisHold) Delete(ctx context.Context) error {
	if !h.stop() {
		return ErrHoldLost
	}
	n, err := deleteScript.Run(ctx, h.r.client, h.keys, h.token, h.owner, h.id).Int()
	if err != nil {
		return rediserr.Wrap(ctx, storeWhat, err)
	}
	if n == 0 {
		return ErrHoldLost
	}
	return nil
}
