package rediserr

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// ErrUnavailable reports that Redis cannot serve the request now; it may later.
var ErrUnavailable = errors.New("backend unavailable")

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

// Public is what a client is told: the store, not its cause (which may name a Redis
// node's address; the logs keep it).
func (e *unavailableError) Public() string {
	return "the " + e.what + " is unavailable for a moment; retry"
}

// failedError is a Redis failure that will not pass by retrying: an error reply the
// service's own commands should not get.
type failedError struct {
	what string
	err  error
}

func (e *failedError) Error() string {
	return e.what + ": redis: " + strings.TrimPrefix(e.err.Error(), "redis: ")
}
func (e *failedError) Unwrap() error { return e.err }

// Public is what a client is told: which store failed, not how.
func (e *failedError) Public() string { return "the " + e.what + " failed" }

// Public returns what a client may be told of err, a Redis failure Wrap returned (and
// any error wrapping one): the store that failed and whether to retry, never the cause.
func Public(err error) (string, bool) {
	var p interface{ Public() string }
	if errors.As(err, &p) {
		return p.Public(), true
	}
	return "", false
}

// Wrap wraps err, a failed Redis command other than redis.Nil, for callers of what (e.g.
// "session store"): the caller's own cancellation stays a context error, Redis being
// unreachable, loading, read only or without a master wraps ErrUnavailable, and any other
// error reply (a bug) is returned as is. Every failure is counted (Failures) but the
// caller's own cancellations, which are no failure of Redis.
func Wrap(ctx context.Context, what string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		if !errors.Is(ctxErr, context.Canceled) {
			failures.Add(1) // a deadline that passed while Redis was slow
		}
		return fmt.Errorf("%s: %w", what, ctxErr)
	}
	failures.Add(1)
	var reply redis.Error
	if errors.As(err, &reply) && !transientReply(reply.Error()) {
		return &failedError{what: what, err: err}
	}
	return &unavailableError{what: what, err: err}
}

var failures atomic.Int64

// Failures returns how many failed Redis commands Wrap has seen, the callers' own
// cancellations aside.
func Failures() int64 { return failures.Load() }

// transientReply reports error replies that mean "not now" rather than "never": a
// replica or a node still loading, a failover under way (a primary demoted, a cluster
// without a primary for a slot, slots moving), replicas that did not acknowledge.
// CROSSSLOT, which the service's keys never provoke, is told as unavailable too: a
// client can do nothing about it but retry.
func transientReply(msg string) bool {
	for _, p := range []string{"LOADING", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "BUSY", "NOREPLICAS", "MISCONF",
		"MOVED", "ASK", "CROSSSLOT", "NOTREADY"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// MS formats d for a PX or PEXPIRE argument.
func MS(d time.Duration) int64 { return max(d.Milliseconds(), 1) }
