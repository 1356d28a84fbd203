package session

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/redis/go-redis/v9"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/internal/redisconn"
	"github.com/genuiserver/genui/internal/rediserr"
)

// Redis is a Store shared by every replica using the same Redis, with an in-process LRU
// in front of it as a near cache.
//
// Keys: <prefix>session:<id> holds the catalog's hash and expires after the idle TTL,
// renewed on use; <prefix>catalog:<hash> holds the catalog's canonical JSON and its TTL is
// raised to at least the idle TTL whenever a session using it is created or renewed, so
// it outlives its sessions. A replica that does not have a catalog compiled fetches its
// JSON and compiles it through its Catalogs.
//
// A near-cache hit renews the session in Redis at most once per tenth of the TTL, so a
// hot session stays alive for the other replicas without a round trip per request. A
// near-cache entry is trusted only until the Redis key is known to live (last renewal
// plus TTL); if a renewal fails because Redis is unreachable, the hit is still served
// within that window and the renewal retried on the next use.
//
// Requires Redis 7.0 or later (GETEX, PEXPIRE GT).
type Redis struct {
	client     redis.UniversalClient
	ack        redisconn.Ack
	cs         *catalog.Cache
	ttl        time.Duration
	touchEvery time.Duration
	prefix     string
	near       *lru.Cache[string, *nearSession]
}

type nearSession struct {
	catalog *catalog.Catalog
	touched atomic.Int64 // UnixNano of the last renewal of the session key
}

// NewRedis returns a Store keeping sessions in Redis through client, each expiring ttl
// (which must be positive) after its last use, and compiling catalogs with cs. Options:
// WithKeyPrefix, WithNearCacheSize.
func NewRedis(client redis.UniversalClient, cs *catalog.Cache, ttl time.Duration, opts ...RedisOption) *Redis {
	if ttl <= 0 {
		panic("session.NewRedis: ttl must be positive")
	}
	cfg := redisConfig{prefix: "genui:", nearSize: 10000}
	for _, o := range opts {
		o(&cfg)
	}
	near, _ := lru.New[string, *nearSession](cfg.nearSize)
	return &Redis{
		client:     client,
		cs:         cs,
		ttl:        ttl,
		touchEvery: ttl / 10,
		prefix:     cfg.prefix,
		near:       near,
		ack:        cfg.ack,
	}
}

// RedisOption configures a Redis store.
type RedisOption func(*redisConfig)

type redisConfig struct {
	prefix   string
	nearSize int
	ack      redisconn.Ack
}

// WithReplicaAcks makes a new session wait until n replicas of the primaries of its keys
// have it, at most timeout, before its id is returned: an id a primary's failover could
// take with it is reported unavailable instead.
func WithReplicaAcks(n int, timeout time.Duration) RedisOption {
	return func(c *redisConfig) { c.ack = redisconn.Ack{Replicas: n, Timeout: timeout} }
}

// WithKeyPrefix sets the prefix of every key (default "genui:"), so that several
// deployments can share one Redis database.
func WithKeyPrefix(prefix string) RedisOption { return func(c *redisConfig) { c.prefix = prefix } }

// WithNearCacheSize sets how many sessions the store keeps in process (default 10000).
func WithNearCacheSize(n int) RedisOption {
	return func(c *redisConfig) { c.nearSize = max(n, 1) }
}

const storeWhat = "session store"

func (r *Redis) sessionKey(id string) string   { return r.prefix + "session:" + id }
func (r *Redis) catalogKey(hash string) string { return r.prefix + "catalog:" + hash }

// Create implements Store.
func (r *Redis) Create(ctx context.Context, id string, c *catalog.Catalog) error {
	ck := r.catalogKey(c.Hash)
	if r.ack.Replicas > 0 {
		if err := r.createAcked(ctx, id, ck, c); err != nil {
			return rediserr.Wrap(ctx, storeWhat, err)
		}
		r.nearAdd(id, c)
		return nil
	}
	// The id is unknown to anyone until Create returns, so the session may be written
	// before its catalog.
	pipe := r.client.Pipeline()
	pipe.Do(ctx, "PEXPIRE", ck, rediserr.MS(r.ttl), "GT")
	exists := pipe.Exists(ctx, ck)
	pipe.Set(ctx, r.sessionKey(id), c.Hash, r.ttl)
	if _, err := pipe.Exec(ctx); err != nil {
		return rediserr.Wrap(ctx, storeWhat, err)
	}
	if exists.Val() == 0 {
		pipe := r.client.Pipeline()
		pipe.SetNX(ctx, ck, c.Canonical, r.ttl)
		pipe.Do(ctx, "PEXPIRE", ck, rediserr.MS(r.ttl), "GT")
		if _, err := pipe.Exec(ctx); err != nil {
			return rediserr.Wrap(ctx, storeWhat, err)
		}
	}
	r.nearAdd(id, c)
	return nil
}

// createAcked writes a session's catalog, then the session, each acknowledged by the
// replicas of its primary.
func (r *Redis) createAcked(ctx context.Context, id, ck string, c *catalog.Catalog) error {
	err := r.ack.Do(ctx, r.client, ck, func(cmd redis.Cmdable) error {
		pipe := cmd.Pipeline()
		pipe.SetNX(ctx, ck, c.Canonical, r.ttl)
		pipe.Do(ctx, "PEXPIRE", ck, rediserr.MS(r.ttl), "GT")
		_, err := pipe.Exec(ctx)
		return err
	})
	if err != nil {
		return err
	}
	sk := r.sessionKey(id)
	return r.ack.Do(ctx, r.client, sk, func(cmd redis.Cmdable) error { return cmd.Set(ctx, sk, c.Hash, r.ttl).Err() })
}

// nearAdd keeps a session just created in the near cache.
func (r *Redis) nearAdd(id string, c *catalog.Catalog) {
	e := &nearSession{catalog: c}
	e.touched.Store(time.Now().UnixNano())
	r.near.Add(id, e)
}

// Catalog implements Store.
func (r *Redis) Catalog(ctx context.Context, id string) (*catalog.Catalog, error) {
	if e, ok := r.near.Get(id); ok {
		if c, err := r.nearHit(ctx, id, e); c != nil || err != nil {
			return c, err
		}
	}
	hash, err := r.client.GetEx(ctx, r.sessionKey(id), r.ttl).Result()
	if errors.Is(err, redis.Nil) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, rediserr.Wrap(ctx, storeWhat, err)
	}
	renewed := time.Now().UnixNano()
	c, err := r.catalog(ctx, hash)
	if err != nil {
		return nil, err
	}
	e := &nearSession{catalog: c}
	e.touched.Store(renewed)
	r.near.Add(id, e)
	return c, nil
}

// nearHit serves a near-cache hit, renewing the session in Redis when due; nil, nil means
// the entry is too old to trust.
func (r *Redis) nearHit(ctx context.Context, id string, e *nearSession) (*catalog.Catalog, error) {
	now := time.Now().UnixNano()
	last := e.touched.Load()
	switch age := time.Duration(now - last); {
	case age < r.touchEvery:
		return e.catalog, nil
	case age >= r.ttl: // the Redis key may be gone
		r.near.Remove(id)
		return nil, nil
	}
	if !e.touched.CompareAndSwap(last, now) {
		return e.catalog, nil // another request is renewing it
	}
	pipe := r.client.Pipeline()
	get := pipe.GetEx(ctx, r.sessionKey(id), r.ttl)
	pipe.Do(ctx, "PEXPIRE", r.catalogKey(e.catalog.Hash), rediserr.MS(r.ttl), "GT")
	_, err := pipe.Exec(ctx)
	switch {
	case errors.Is(get.Err(), redis.Nil): // expired or lost (a Redis restart)
		r.near.Remove(id)
		return nil, ErrNotFound
	case err != nil:
		e.touched.CompareAndSwap(now, last) // retry on the next use
	}
	return e.catalog, nil
}

// catalog returns the compiled catalog with the given hash, renewing its key.
func (r *Redis) catalog(ctx context.Context, hash string) (*catalog.Catalog, error) {
	ck := r.catalogKey(hash)
	if c, ok := r.cs.Lookup(hash); ok {
		if err := r.client.Do(ctx, "PEXPIRE", ck, rediserr.MS(r.ttl), "GT").Err(); err != nil {
			return nil, rediserr.Wrap(ctx, storeWhat, err)
		}
		return c, nil
	}
	pipe := r.client.Pipeline()
	get := pipe.Get(ctx, ck)
	pipe.Do(ctx, "PEXPIRE", ck, rediserr.MS(r.ttl), "GT")
	_, err := pipe.Exec(ctx)
	if errors.Is(get.Err(), redis.Nil) {
		return nil, fmt.Errorf("%w (its catalog %s expired)", ErrNotFound, hash)
	}
	if err != nil {
		return nil, rediserr.Wrap(ctx, storeWhat, err)
	}
	c, err := r.cs.Compile([]byte(get.Val()))
	if err != nil {
		return nil, fmt.Errorf("session store: catalog %s in redis: %w", hash, err)
	}
	if c.Hash != hash {
		return nil, fmt.Errorf("session store: catalog %s in redis compiles to hash %s", hash, c.Hash)
	}
	return c, nil
}

// Ready implements Store: Redis answers PING.
func (r *Redis) Ready(ctx context.Context) error {
	if err := redisconn.Ready(ctx, r.client); err != nil {
		return rediserr.Wrap(ctx, storeWhat, err)
	}
	return nil
}
