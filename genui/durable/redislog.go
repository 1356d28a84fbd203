package durable

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/genuiserver/genui/internal/ids"
	"github.com/genuiserver/genui/internal/redisconn"
	"github.com/genuiserver/genui/internal/rediserr"
)

// RedisLog is a Log on Redis Streams, shared by every replica using the same Redis: a
// stream produced on one replica can be read, watched and cancelled from any other.
//
// Keys of stream <id> (one hash tag, so that they share a cluster slot):
//
//	<prefix>stream:{<id>}         the records: a Redis stream with entry ids 0-<seq> and
//	                              fields d (data) and f ("1" on the final record); a
//	                              stream whose producer was lost ends with an entry
//	                              holding only l ("1").
//	<prefix>stream:{<id>}:meta    the state: "run", "done" (final record written) or
//	                              "lost" (ended without one). Created with SET NX, so an
//	                              id is used once.
//	<prefix>stream:{<id>}:alive   the producer's heartbeat, SET PX 3 intervals every
//	                              interval by one goroutine per producer.
//	<prefix>stream:{<id>}:cancel  set by Cancel; the heartbeat notices it.
//	<prefix>stream:{<id>}:watch   a sorted set of reader ids scored by their presence's
//	                              expiry (Redis clock), refreshed every interval.
//
// While the producer runs, the heartbeat keeps every key alive for the retention plus
// three intervals; the final record (or Close without one) sets their TTL to the
// retention. A reader that is caught up on a running stream whose heartbeat expired
// declares the producer lost, atomically and once for everyone: it appends the l entry
// and sets the state to "lost", so a stalled producer's later appends fail rather than
// reach some readers only.
type RedisLog struct {
	client    redis.UniversalClient
	ack       redisconn.Ack
	retention time.Duration
	prefix    string
	beat      time.Duration

	mu    sync.Mutex
	local map[string]*redisProducer // this instance's running producers
}

// NewRedisLog returns a Log keeping streams in Redis through client, for retention after
// their last record. Options: WithKeyPrefix, WithHeartbeat.
func NewRedisLog(client redis.UniversalClient, retention time.Duration, opts ...RedisOption) *RedisLog {
	l := &RedisLog{
		client:    client,
		retention: retention,
		prefix:    "genui:",
		beat:      time.Second,
		local:     map[string]*redisProducer{},
	}
	for _, o := range opts {
		o(l)
	}
	return l
}

// RedisOption configures a RedisLog.
type RedisOption func(*RedisLog)

// WithReplicaAcks makes the log's writes a client is told of (a stream's creation, each
// record) wait until n replicas of the primary have them, at most timeout: a record
// reaches the client that started the turn only once a primary's failover cannot take it.
func WithReplicaAcks(n int, timeout time.Duration) RedisOption {
	return func(l *RedisLog) { l.ack = redisconn.Ack{Replicas: n, Timeout: timeout} }
}

// WithKeyPrefix sets the prefix of every key (default "genui:"), so that several
// deployments can share one Redis database.
func WithKeyPrefix(prefix string) RedisOption { return func(l *RedisLog) { l.prefix = prefix } }

// WithHeartbeat sets the liveness interval (default 1 s): producers refresh their
// heartbeat and readers their presence at this interval, both expire after three
// intervals without refresh, and a reader waits on Redis at most this long (and never
// more than a second) before checking its context and the producer's heartbeat.
func WithHeartbeat(interval time.Duration) RedisOption {
	return func(l *RedisLog) {
		if interval > 0 {
			l.beat = max(interval, 10*time.Millisecond)
		}
	}
}

const logWhat = "stream log"

type streamKeys []string // stream, meta, alive, cancel, watch: the KEYS of every script

func (l *RedisLog) keys(id string) streamKeys {
	base := l.prefix + "stream:{" + id + "}"
	return streamKeys{base, base + ":meta", base + ":alive", base + ":cancel", base + ":watch"}
}

func (k streamKeys) stream() string { return k[0] }

// TTLs, in milliseconds.
func (l *RedisLog) aliveTTL() int64 { return rediserr.MS(3 * l.beat) }
func (l *RedisLog) liveTTL() int64  { return rediserr.MS(l.retention + 3*l.beat) }
func (l *RedisLog) doneTTL() int64  { return rediserr.MS(l.retention) }

// block is the longest a reader waits on Redis before re-checking everything else.
func (l *RedisLog) block() time.Duration { return min(l.beat, time.Second) }

// Scripts. KEYS are always streamKeys; Lua's SET ... NX returns false when the key exists.
var (
	// ARGV: liveTTL, aliveTTL. Returns 1 if created, 0 if the id is in use.
	createScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
if not redis.call('SET', KEYS[2], 'run', 'NX', 'PX', ARGV[1]) then return 0 end
redis.call('SET', KEYS[3], '1', 'PX', ARGV[2])
redis.call('DEL', KEYS[4], KEYS[5])
return 1`)

	// ARGV: seq, data, final ("1"/"0"), liveTTL, doneTTL. Returns the record's seq once
	// stored, 0 if the stream is no longer running. A record already stored by an earlier
	// try (whose answer was lost, or whose acknowledgement came too late) is stored once:
	// the try renews the stream's expiry instead, a write that replicas acknowledge only
	// after the record. A final record goes after any record whose try failed (the turn
	// ended on that failure, so its client never saw it).
	appendScript = redis.NewScript(`
local seq = tonumber(ARGV[1])
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #last > 0 then
  local top = tonumber(string.match(last[1][1], '%-(%d+)$'))
  if top >= seq and last[1][2][1] == 'd' and last[1][2][2] == ARGV[2] then
    local ttl = redis.call('PTTL', KEYS[1])
    if ttl > 0 then redis.call('PEXPIRE', KEYS[1], ttl) end
    return top
  end
  if ARGV[3] == '1' and top >= seq then seq = top + 1 end
end
if redis.call('GET', KEYS[2]) ~= 'run' then return 0 end
if ARGV[3] == '1' then
  redis.call('XADD', KEYS[1], '0-' .. seq, 'd', ARGV[2], 'f', '1')
  redis.call('SET', KEYS[2], 'done', 'PX', ARGV[5])
  redis.call('DEL', KEYS[3])
  redis.call('PEXPIRE', KEYS[1], ARGV[5])
  redis.call('PEXPIRE', KEYS[4], ARGV[5])
else
  redis.call('XADD', KEYS[1], '0-' .. seq, 'd', ARGV[2])
  redis.call('PEXPIRE', KEYS[1], ARGV[4])
end
return seq`)

	// ARGV: next seq, doneTTL. Ends a running stream without a final record (after any
	// record whose try failed).
	closeScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) ~= 'run' then return 0 end
local seq = tonumber(ARGV[1])
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #last > 0 then seq = math.max(seq, tonumber(string.match(last[1][1], '%-(%d+)$')) + 1) end
redis.call('XADD', KEYS[1], '0-' .. seq, 'l', '1')
redis.call('SET', KEYS[2], 'lost', 'PX', ARGV[2])
redis.call('DEL', KEYS[3])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('PEXPIRE', KEYS[4], ARGV[2])
return 1`)

	// ARGV: liveTTL, aliveTTL. Returns 1 if cancel was requested, 0 if running, -1 if
	// the stream is done, -2 if it was lost or is gone.
	heartbeatScript = redis.NewScript(`
local st = redis.call('GET', KEYS[2])
if st == 'done' then return -1 end
if st ~= 'run' then return -2 end
redis.call('SET', KEYS[3], '1', 'PX', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
redis.call('PEXPIRE', KEYS[4], ARGV[1])
return redis.call('EXISTS', KEYS[4])`)

	// ARGV: doneTTL. Returns {state, last seq}; declares a running stream without a
	// heartbeat lost.
	checkScript = redis.NewScript(`
local st = redis.call('GET', KEYS[2])
if not st then return {'gone', 0} end
local seq = 0
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)
if #last > 0 then seq = tonumber(string.match(last[1][1], '%-(%d+)$')) end
if st ~= 'run' or redis.call('EXISTS', KEYS[3]) == 1 then return {st, seq} end
seq = seq + 1
redis.call('XADD', KEYS[1], '0-' .. seq, 'l', '1')
redis.call('SET', KEYS[2], 'lost', 'PX', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[4], ARGV[1])
return {'lost', seq}`)

	// ARGV: reader id, presence TTL. Registers or refreshes a reader's presence. Returns 0
	// if the stream is unknown.
	watchScript = redis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 0 then return 0 end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[5], '-inf', now)
redis.call('ZADD', KEYS[5], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[5], ARGV[2])
return 1`)

	// Returns the number of live readers.
	watchedScript = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
return redis.call('ZCOUNT', KEYS[5], '(' .. now, '+inf')`)

	// ARGV: liveTTL. Returns 0 if the stream is unknown.
	cancelScript = redis.NewScript(`
local st = redis.call('GET', KEYS[2])
if not st then return 0 end
if st == 'run' then redis.call('SET', KEYS[4], '1', 'PX', ARGV[1]) end
return 1`)
)

// Create implements Log.
func (l *RedisLog) Create(ctx context.Context, id string) (Producer, error) {
	if id == "" {
		return nil, errors.New("stream log: empty stream id")
	}
	k := l.keys(id)
	var created int
	err := l.ack.Do(ctx, l.client, k.stream(), func(c redis.Cmdable) error {
		var err error
		created, err = createScript.Run(ctx, c, k, l.liveTTL(), l.aliveTTL()).Int()
		return err
	})
	if err != nil {
		return nil, rediserr.Wrap(ctx, logWhat, err)
	}
	if created == 0 {
		return nil, fmt.Errorf("%w: %s", ErrStreamExists, id)
	}
	p := &redisProducer{
		log:       l,
		id:        id,
		keys:      k,
		cancelled: make(chan struct{}),
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	l.mu.Lock()
	l.local[id] = p
	l.mu.Unlock()
	go p.heartbeat()
	return p, nil
}

// Read implements Log.
func (l *RedisLog) Read(ctx context.Context, id string, after int) (Reader, error) {
	r := &redisReader{
		log:  l,
		id:   id,
		keys: l.keys(id),
		rid:  ids.New(),
		next: max(after, 0),
		stop: make(chan struct{}),
		done: make(chan struct{}),
	}
	found, err := watchScript.Run(ctx, l.client, r.keys, r.rid, l.aliveTTL()).Int()
	if err != nil {
		return nil, rediserr.Wrap(ctx, logWhat, err)
	}
	if found == 0 {
		return nil, fmt.Errorf("%w: %s", ErrStreamNotFound, id)
	}
	go r.present()
	return r, nil
}

// Cancel implements Log. A producer of this instance is told at once, one elsewhere
// within a heartbeat interval.
func (l *RedisLog) Cancel(ctx context.Context, id string) error {
	l.mu.Lock()
	p := l.local[id]
	l.mu.Unlock()
	if p != nil {
		p.mu.Lock()
		if !p.final {
			p.cancel()
		}
		p.mu.Unlock()
	}
	found, err := cancelScript.Run(ctx, l.client, l.keys(id), l.liveTTL()).Int()
	switch {
	case err != nil && p != nil:
		return nil // delivered in process
	case err != nil:
		return rediserr.Wrap(ctx, logWhat, err)
	case found == 0 && p == nil:
		return fmt.Errorf("%w: %s", ErrStreamNotFound, id)
	}
	return nil
}

// Ready implements Log: Redis answers PING.
func (l *RedisLog) Ready(ctx context.Context) error {
	if err := redisconn.Ready(ctx, l.client); err != nil {
		return rediserr.Wrap(ctx, logWhat, err)
	}
	return nil
}

// background returns a context for work that outlives the caller's (heartbeats, cleanup).
func (l *RedisLog) background() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), max(l.block(), 2*time.Second))
}

type redisProducer struct {
	log  *RedisLog
	id   string
	keys streamKeys

	mu     sync.Mutex
	seq    int
	final  bool
	closed bool

	cancelled  chan struct{}
	cancelOnce sync.Once
	stop       chan struct{} // closed to end the heartbeat
	stopOnce   sync.Once
	done       chan struct{} // closed when the heartbeat ended
}

func (p *redisProducer) Append(ctx context.Context, data []byte, final bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.final || p.closed {
		return fmt.Errorf("stream %s is finished", p.id)
	}
	l := p.log
	f := "0"
	if final {
		f = "1"
	}
	var stored int
	err := l.ack.Do(ctx, l.client, p.keys.stream(), func(c redis.Cmdable) error {
		var err error
		stored, err = appendScript.Run(ctx, c, p.keys, p.seq+1, data, f, l.liveTTL(), l.doneTTL()).Int()
		return err
	})
	if err != nil {
		return rediserr.Wrap(ctx, logWhat, err)
	}
	if stored == 0 {
		return fmt.Errorf("%w: %s is no longer running (declared lost, expired, or Redis lost it)", ErrStreamNotFound, p.id)
	}
	p.seq = stored
	if final {
		p.final = true
		p.stopHeartbeat()
	}
	return nil
}

func (p *redisProducer) Watched(ctx context.Context) bool {
	n, err := watchedScript.Run(ctx, p.log.client, p.keys).Int()
	return err == nil && n > 0
}

func (p *redisProducer) Cancelled() <-chan struct{} { return p.cancelled }

func (p *redisProducer) cancel() { p.cancelOnce.Do(func() { close(p.cancelled) }) }

func (p *redisProducer) stopHeartbeat() { p.stopOnce.Do(func() { close(p.stop) }) }

// Close implements Producer. Without a final record the stream ends as lost, which readers
// see at once.
func (p *redisProducer) Close() {
	p.stopHeartbeat()
	<-p.done
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return
	}
	p.closed = true
	final, next := p.final, p.seq+1
	p.mu.Unlock()
	l := p.log
	l.mu.Lock()
	if l.local[p.id] == p {
		delete(l.local, p.id)
	}
	l.mu.Unlock()
	if !final {
		ctx, cancel := l.background()
		defer cancel()
		// If Redis is unreachable, the heartbeat expires and readers declare the loss.
		_ = closeScript.Run(ctx, l.client, p.keys, next, l.doneTTL()).Err()
	}
}

// heartbeat keeps the stream alive and notices cancellation until stopped.
func (p *redisProducer) heartbeat() {
	defer close(p.done)
	l := p.log
	t := time.NewTicker(l.beat)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
		}
		ctx, cancel := l.background()
		res, err := heartbeatScript.Run(ctx, l.client, p.keys, l.liveTTL(), l.aliveTTL()).Int()
		cancel()
		switch {
		case err != nil: // Redis unreachable: try again next time
		case res == 1:
			p.cancel()
		case res == -1:
			return
		case res == -2:
			// Declared lost (this producer stalled) or gone from Redis: nothing appended
			// can reach a reader any more, so stop the work as if cancelled.
			p.cancel()
			return
		}
	}
}

type redisReader struct {
	log  *RedisLog
	id   string
	keys streamKeys
	rid  string

	next  int // seq of the last record returned (or the after argument)
	buf   []redisEntry
	state string // "", "eof", "lost"

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
}

type redisEntry struct {
	rec  Record
	lost bool // the marker of a stream that ended without a final record
}

func (r *redisReader) Next(ctx context.Context, wait time.Duration) (Record, bool, error) {
	var deadline time.Time
	if wait > 0 {
		deadline = time.Now().Add(wait)
	}
	for {
		if len(r.buf) > 0 {
			e := r.buf[0]
			r.buf = r.buf[1:]
			if e.lost {
				r.state = "lost"
				r.buf = nil
				continue
			}
			r.next = e.rec.Seq
			if e.rec.Final {
				r.state = "eof"
				r.buf = nil
			}
			return e.rec, true, nil
		}
		switch r.state {
		case "eof":
			return Record{}, false, io.EOF
		case "lost":
			return Record{}, false, fmt.Errorf("%w: stream %s ended without its final record", ErrProducerLost, r.id)
		}
		if err := ctx.Err(); err != nil {
			return Record{}, false, err
		}
		block, last := r.log.block(), false
		if !deadline.IsZero() {
			if rem := time.Until(deadline); rem < time.Millisecond {
				block, last = -1, true // one more look without blocking
			} else {
				block = min(block, rem)
			}
		}
		if d, ok := ctx.Deadline(); ok && block > 0 {
			block = max(min(block, time.Until(d)), time.Millisecond)
		}
		streams, err := r.log.client.XRead(ctx, &redis.XReadArgs{
			Streams: []string{r.keys.stream(), "0-" + strconv.Itoa(r.next)},
			Count:   256,
			Block:   block,
		}).Result()
		switch {
		case errors.Is(err, redis.Nil):
			if last {
				return Record{}, false, nil
			}
			if err := r.check(ctx); err != nil {
				return Record{}, false, err
			}
		case err != nil:
			return Record{}, false, rediserr.Wrap(ctx, logWhat, err)
		default:
			for _, s := range streams {
				for _, m := range s.Messages {
					r.buf = append(r.buf, parseEntry(m))
				}
			}
		}
	}
}

// check runs when the reader is caught up and nothing came: it ends the reader if the
// stream ended before the reader's position, or the producer's heartbeat is gone.
func (r *redisReader) check(ctx context.Context) error {
	res, err := checkScript.Run(ctx, r.log.client, r.keys, r.log.doneTTL()).Slice()
	if err != nil {
		return rediserr.Wrap(ctx, logWhat, err)
	}
	st, _ := res[0].(string)
	last, _ := res[1].(int64)
	switch st {
	case "done":
		if int64(r.next) >= last {
			r.state = "eof"
		}
	case "lost":
		if int64(r.next) >= last {
			r.state = "lost"
		}
	case "gone": // expired, or Redis lost its data
		r.state = "lost"
	}
	return nil
}

func parseEntry(m redis.XMessage) redisEntry {
	var e redisEntry
	if i := strings.IndexByte(m.ID, '-'); i >= 0 {
		e.rec.Seq, _ = strconv.Atoi(m.ID[i+1:])
	}
	if _, ok := m.Values["l"]; ok {
		e.lost = true
		return e
	}
	if d, ok := m.Values["d"].(string); ok {
		e.rec.Data = []byte(d)
	}
	e.rec.Final = m.Values["f"] == "1"
	return e
}

// present refreshes the reader's presence until Close.
func (r *redisReader) present() {
	defer close(r.done)
	l := r.log
	t := time.NewTicker(l.beat)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
		}
		ctx, cancel := l.background()
		_ = watchScript.Run(ctx, l.client, r.keys, r.rid, l.aliveTTL()).Err()
		cancel()
	}
}

func (r *redisReader) Close() {
	r.closeOnce.Do(func() {
		close(r.stop)
		<-r.done
		ctx, cancel := r.log.background()
		defer cancel()
		_ = r.log.client.ZRem(ctx, r.keys[4], r.rid).Err()
	})
}
