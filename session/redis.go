package session

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// RedisOption configures a Redis store or a RedisLog.
type RedisOption func(*redisConfig)

type redisConfig struct {
	prefix    string
	nearSize  int
	heartbeat time.Duration
}

func newRedisConfig(opts []RedisOption) redisConfig {
	c := redisConfig{prefix: "genui:", nearSize: 10000, heartbeat: time.Second}
	for _, o := range opts {
		o(&c)
	}
	return c
}

// WithKeyPrefix sets the prefix of every key (default "genui:"), so that several
// deployments can share one Redis database.
func WithKeyPrefix(prefix string) RedisOption { return func(c *redisConfig) { c.prefix = prefix } }

// WithNearCacheSize sets how many sessions a Redis store keeps in process (default 10000).
func WithNearCacheSize(n int) RedisOption {
	return func(c *redisConfig) { c.nearSize = max(n, 1) }
}

// WithHeartbeat sets the liveness interval of a RedisLog (default 1 s): producers refresh
// their heartbeat and readers their presence at this interval, both expire after three
// intervals without refresh, and a reader waits on Redis at most this long (and never more
// than a second) before checking its context and the producer's heartbeat.
func WithHeartbeat(interval time.Duration) RedisOption {
	return func(c *redisConfig) {
		if interval > 0 {
			c.heartbeat = max(interval, 10*time.Millisecond)
		}
	}
}

// unavailableError is a Redis failure that may pass: it wraps ErrUnavailable and the
// cause.
type unavailableError struct {
	what string // "session store", "stream log"
	err  error
}

func (e *unavailableError) Error() string {
	return e.what + " unavailable: redis: " + strings.TrimPrefix(e.err.Error(), "redis: ")
}

func (e *unavailableError) Unwrap() []error { return []error{ErrUnavailable, e.err} }

// redisError wraps err, a failed Redis command other than redis.Nil, for callers: the
// caller's own cancellation stays a context error, Redis being unreachable, loading, read
// only or without a master wraps ErrUnavailable, and any other error reply (a bug) is
// returned as is.
func redisError(ctx context.Context, what string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return fmt.Errorf("%s: %w", what, ctxErr)
	}
	var reply redis.Error
	if errors.As(err, &reply) && !transientReply(reply.Error()) {
		return fmt.Errorf("%s: redis: %w", what, err)
	}
	return &unavailableError{what: what, err: err}
}

// transientReply reports error replies that mean "not now" rather than "never".
func transientReply(msg string) bool {
	for _, p := range []string{"LOADING", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "BUSY", "NOREPLICAS", "MISCONF"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// ms formats d for a PX or PEXPIRE argument.
func ms(d time.Duration) int64 { return max(d.Milliseconds(), 1) }
