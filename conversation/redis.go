package conversation

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/genuiserver/genui/internal/ids"
	"github.com/genuiserver/genui/internal/redisconn"
	"github.com/genuiserver/genui/internal/rediserr"
)

// Redis is a Store shared by every replica using the same Redis, which may be a Redis
// Cluster: every script and multi-key command touches the keys of one cluster slot.
//
// Keys (the id in braces, so that a conversation's keys share a slot):
// <prefix>conv:{<id>} holds the history, to which a turn appends (APPEND);
// <prefix>conv:{<id>}:meta the kind and what the conversation waits for;
// <prefix>conv:{<id>}:session a session's; <prefix>conv:{<id>}:owner the caller it is
// counted against (WithCallerLimit); all expire after the idle TTL, renewed by every
// turn. <prefix>conv:{<id>}:hold holds the token of the turn holding the conversation,
// with a lease that the holder renews while its turn runs, so that a replica that dies
// mid-turn frees the conversation when the lease runs out.
//
// Two sorted sets, scored by expiry (the Redis server's Unix ms), index conversations
// across ids, each in a slot of its own: <prefix>owner:{<caller>} the conversations
// counted against a caller, and <prefix>waiting those whose last turn ended with calls of
// client tools without a result. A conversation's keys and its caller's set cannot change
// in one atomic step on a cluster, so the count is kept exact otherwise: a new
// conversation is first held (its hold key set), then reserved in its caller's set by a
// script that admits it only while the set holds fewer than the limit; the reservation
// is what counts. A set's members past their score expire. A member whose conversation
// is gone (deleted, released uncommitted, or its replica died between the two steps)
// only counts too much, never too little; when a caller is at its limit the store checks
// its members' conversations, and removes a member that has none, unless its score
// changed meanwhile (it was reserved again). So a caller is never admitted past its
// limit, on any number of replicas. The waiting set only counts (a metric): it follows
// each commit and deletion by a command of its own.
type Redis struct {
	client redis.UniversalClient
	ttl    time.Duration
	lease  time.Duration
	prefix string
	limit  callerLimit
	ack    redisconn.Ack
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

// WithReplicaAcks makes a Redis store's commits wait until n replicas of the primary
// have them, at most timeout, before the turn is told committed: a commit a primary's
// failover could take with it is reported unavailable instead.
func WithReplicaAcks(n int, timeout time.Duration) Option {
	return func(o *options) { o.ack = redisconn.Ack{Replicas: n, Timeout: timeout} }
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
	return &Redis{client: client, ttl: ttl, lease: o.lease, prefix: o.prefix, limit: o.limit, ack: o.ack}
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

// Scripts of a conversation's keys (KEYS: history, meta, hold, session, owner).
var (
	// ARGV: token, lease ms, ttl ms. Returns {history, meta, session, owner} of a stored
	// conversation, {} for a new one; nil when held.
	beginScript = redis.NewScript(`
if not redis.call('SET', KEYS[3], ARGV[1], 'NX', 'PX', ARGV[2]) then return false end
if redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[4]) > 0 then
  for _, k in ipairs({KEYS[1], KEYS[2], KEYS[4], KEYS[5]}) do redis.call('PEXPIRE', k, ARGV[3]) end
  return {redis.call('GET', KEYS[1]) or '', redis.call('GET', KEYS[2]) or '', redis.call('GET', KEYS[4]) or '', redis.call('GET', KEYS[5]) or ''}
end
return {}`)
	// Returns {history, meta, session}, or nil when held.
	peekScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[3]) == 1 then return false end
return {redis.call('GET', KEYS[1]) or '', redis.call('GET', KEYS[2]) or '', redis.call('GET', KEYS[4]) or ''}`)
	// ARGV: token, append, meta, ttl ms, session flag ("1": set it to ARGV[6]), session,
	// owner ("": none). Returns 1, or 0 when the hold is not the token's.
	commitScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
if #ARGV[2] > 0 then redis.call('APPEND', KEYS[1], ARGV[2]) end
if redis.call('EXISTS', KEYS[1]) == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[4]) end
redis.call('SET', KEYS[2], ARGV[3], 'PX', ARGV[4])
if ARGV[5] == '1' then redis.call('SET', KEYS[4], ARGV[6], 'PX', ARGV[4])
elseif redis.call('EXISTS', KEYS[4]) == 1 then redis.call('PEXPIRE', KEYS[4], ARGV[4]) end
if ARGV[7] ~= '' then redis.call('SET', KEYS[5], ARGV[7], 'PX', ARGV[4]) end
redis.call('DEL', KEYS[3])
return 1`)
	// ARGV: token. Deletes the hold if it is the token's: returns 2 when the conversation
	// holds nothing (begun and never committed: its owner key goes too), 1 when it does,
	// 0 when the hold was not the token's.
	releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[3])
if redis.call('EXISTS', KEYS[1], KEYS[2], KEYS[4]) == 0 then
  redis.call('DEL', KEYS[5])
  return 2
end
return 1`)
	// ARGV: token. Deletes the conversation if the hold is the token's; returns 1, else 0.
	deleteScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1], KEYS[2], KEYS[4], KEYS[5], KEYS[3])
return 1`)
	// ARGV: token, lease ms. Extends the hold if it is the token's.
	renewScript = redis.NewScript(`
if redis.call('GET', KEYS[3]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[3], ARGV[2]) end
return 0`)
)

// Scripts of one sorted set scored by expiry (KEYS[1]: a caller's set, or the waiting set).
var (
	// ARGV: the conversation's id, ttl ms, the caller's limit. Reserves the id's place
	// among the caller's conversations: returns {"ok"}, or, when the caller is at its
	// limit, {"!", ms until its first conversation expires, member, score, …}.
	reserveScript = redis.NewScript(nowMS + `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
local expiry = string.format('%.0f', now + ARGV[2])
if redis.call('ZSCORE', KEYS[1], ARGV[1]) or redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[3]) then
  redis.call('ZADD', KEYS[1], expiry, ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return {'ok'}
end
local members = redis.call('ZRANGE', KEYS[1], 0, -1, 'WITHSCORES')
local out = {'!', string.format('%.0f', tonumber(members[2]) - now)}
for _, m in ipairs(members) do table.insert(out, m) end
return out`)
	// ARGV: member, score, … Removes each member whose score is still the one given.
	forgetScript = redis.NewScript(`
local n = 0
for i = 1, #ARGV, 2 do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) == ARGV[i + 1] then n = n + redis.call('ZREM', KEYS[1], ARGV[i]) end
end
return n`)
	// ARGV: the id, ttl ms, mode ("renew": move an id the set has to now + ttl; "add":
	// add it or move it; "remove").
	placeScript = redis.NewScript(nowMS + `
if ARGV[3] == 'remove' then return redis.call('ZREM', KEYS[1], ARGV[1]) end
local expiry = string.format('%.0f', now + ARGV[2])
if ARGV[3] == 'renew' then return redis.call('ZADD', KEYS[1], 'XX', expiry, ARGV[1]) end
redis.call('ZADD', KEYS[1], expiry, ARGV[1])
return redis.call('PEXPIRE', KEYS[1], ARGV[2])`)
	// Returns how many members of the set have not expired.
	countScript = redis.NewScript(nowMS + `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
return redis.call('ZCARD', KEYS[1])`)
)

// place moves id in a set scored by expiry ("renew", "add", "remove"). Its failure is
// returned; the callers that may ignore it say why.
func (r *Redis) place(ctx context.Context, set, id, mode string) error {
	return placeScript.Run(ctx, r.client, []string{set}, id, rediserr.MS(r.ttl), mode).Err()
}

// Begin implements Store. A new conversation of a caller at its limit
// (WithCallerLimit) is refused.
func (r *Redis) Begin(ctx context.Context, id string) (*State, Hold, error) {
	keys := r.keys(id)
	token := ids.New()
	res, err := beginScript.Run(ctx, r.client, keys, token, rediserr.MS(r.lease), rediserr.MS(r.ttl)).StringSlice()
	if errors.Is(err, redis.Nil) {
		return nil, nil, ErrBusy
	}
	if err != nil {
		// The script may have run, its answer lost (a primary failing over): the hold
		// it may have taken is this token's, and goes.
		r.releaseHold(keys, token)
		return nil, nil, rediserr.Wrap(ctx, storeWhat, err)
	}
	h := &redisHold{r: r, id: id, keys: keys, token: token}
	var st *State
	if len(res) == 4 {
		// A stored conversation: its place in its caller's set moves with it. A failure
		// is not the turn's: the commit moves it again.
		st, h.owner = stateOf(res), res[3]
		if h.owner != "" {
			_ = r.place(ctx, r.ownerKey(h.owner), id, "renew")
		}
	} else {
		st = &State{}
		if h.owner = r.limit.ownerOf(ctx); h.owner != "" {
			if err := r.reserve(ctx, h.owner, id); err != nil {
				r.releaseHold(keys, token)
				return nil, nil, err
			}
		}
	}
	h.mu.Lock()
	h.timer = time.AfterFunc(r.lease/3, h.renew)
	h.mu.Unlock()
	return st, h, nil
}

// reserve reserves a new conversation's place among its caller's, or returns the
// limit's refusal. At the limit, members whose conversation is gone are removed, and the
// reservation tried once more.
func (r *Redis) reserve(ctx context.Context, owner, id string) error {
	set := r.ownerKey(owner)
	for attempt := 0; ; attempt++ {
		res, err := reserveScript.Run(ctx, r.client, []string{set}, id, rediserr.MS(r.ttl), r.limit.max).StringSlice()
		if err != nil {
			return rediserr.Wrap(ctx, storeWhat, err)
		}
		if len(res) < 2 || res[0] != "!" {
			return nil
		}
		ms, _ := strconv.ParseInt(res[1], 10, 64)
		if attempt > 0 {
			return r.limit.exceeded(time.Duration(ms) * time.Millisecond)
		}
		gone, err := r.gone(ctx, res[2:])
		if err != nil {
			return err
		}
		if len(gone) == 0 {
			return r.limit.exceeded(time.Duration(ms) * time.Millisecond)
		}
		if err := forgetScript.Run(ctx, r.client, []string{set}, gone...).Err(); err != nil {
			return rediserr.Wrap(ctx, storeWhat, err)
		}
	}
}

// gone returns, of members and their scores ({member, score, …}), those whose
// conversation holds nothing and is not held, as {member, score, …}.
func (r *Redis) gone(ctx context.Context, members []string) ([]any, error) {
	pipe := r.client.Pipeline()
	exists := make([]*redis.IntCmd, 0, len(members)/2)
	for i := 0; i+1 < len(members); i += 2 {
		k := r.keys(members[i])
		exists = append(exists, pipe.Exists(ctx, k[0], k[1], k[3], k[2]))
	}
	if _, err := pipe.Exec(ctx); err != nil {
		return nil, rediserr.Wrap(ctx, storeWhat, err)
	}
	var out []any
	for i, e := range exists {
		if e.Val() == 0 {
			out = append(out, members[2*i], members[2*i+1])
		}
	}
	return out, nil
}

// releaseHold deletes a hold of a conversation whose turn ended without committing. While
// Redis cannot be reached (a failover), it tries again every half second, within the
// lease, so that the conversation is free as soon as Redis is back rather than when the
// lease runs out.
func (r *Redis) releaseHold(keys []string, token string) {
	deadline := time.Now().Add(r.lease)
	var try func()
	try = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := releaseScript.Run(ctx, r.client, keys, token).Err(); err != nil && time.Now().Add(releaseRetry).Before(deadline) {
			time.AfterFunc(releaseRetry, try)
		}
	}
	try()
}

// releaseRetry is how often a release is tried again while Redis cannot be reached.
const releaseRetry = 500 * time.Millisecond

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
		st.Kind, st.Model, st.Pending = decodeMeta(res[1])
		if res[2] != "" {
			st.Session = []byte(res[2])
		}
	}
	return st
}

// Ready implements Store: Redis answers PING.
func (r *Redis) Ready(ctx context.Context) error {
	if err := redisconn.Ready(ctx, r.client); err != nil {
		return rediserr.Wrap(ctx, storeWhat, err)
	}
	return nil
}

// The meta key holds the kind, a tab and the model when there is one, a newline, then
// what the conversation waits for. (Conversations stored before the model was kept have
// no tab.)
func encodeMeta(kind, model string, pending []byte) string {
	if model != "" {
		kind += "\t" + model
	}
	return kind + "\n" + string(pending)
}

func decodeMeta(s string) (kind, model string, pending []byte) {
	first, rest, _ := strings.Cut(s, "\n")
	if rest != "" {
		pending = []byte(rest)
	}
	kind, model, _ = strings.Cut(first, "\t")
	return kind, model, pending
}

type redisHold struct {
	r     *Redis
	id    string
	owner string   // the caller the conversation is counted against; "" when none
	keys  []string // history, meta, hold, session, owner
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
	var n int
	err := h.r.ack.Do(ctx, h.r.client, h.keys[0], func(c redis.Cmdable) error {
		var err error
		n, err = commitScript.Run(ctx, c, h.keys, h.token, u.Append, encodeMeta(u.Kind, u.Model, u.Pending), rediserr.MS(h.r.ttl), setSession, u.Session,
			h.owner).Int()
		return err
	})
	if err != nil {
		// The conversation must not stay held for its lease by a turn that ended: the
		// hold goes, if the commit left it (a commit that ran took it with it).
		h.r.releaseHold(h.keys, h.token)
		return rediserr.Wrap(ctx, storeWhat, err)
	}
	if n == 0 {
		return ErrHoldLost
	}
	// The turn is committed; the sets follow. The caller's set was moved when the turn
	// began (it only counts too long, should this fail), and the waiting set is a count.
	if h.owner != "" {
		_ = h.r.place(ctx, h.r.ownerKey(h.owner), h.id, "add")
	}
	mode := "remove"
	if len(u.Pending) > 0 {
		mode = "add"
	}
	_ = h.r.place(ctx, h.r.waitingKey(), h.id, mode)
	return nil
}

func (h *redisHold) Release() {
	if !h.stop() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	n, err := releaseScript.Run(ctx, h.r.client, h.keys, h.token).Int()
	switch {
	case err != nil:
		// Redis cannot be reached: tried again within the lease. The caller's set
		// forgets a conversation left uncommitted when the caller is next at its limit.
		h.r.releaseHold(h.keys, h.token)
	case n == 2 && h.owner != "":
		_ = h.r.place(ctx, h.r.ownerKey(h.owner), h.id, "remove")
	}
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
	// Deleted; the sets follow (the caller's counts it too long should this fail).
	if h.owner != "" {
		_ = h.r.place(ctx, h.r.ownerKey(h.owner), h.id, "remove")
	}
	_ = h.r.place(ctx, h.r.waitingKey(), h.id, "remove")
	return nil
}
