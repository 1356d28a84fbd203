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
		return fmt.Errorf("%s: redis: %w", what, err)
	}
	return &unavailableError{what: what, err: err}
}

var failures atomic.Int64

// Failures returns how many failed Redis commands Wrap has seen, the callers' own
// cancellations aside.
func Failures() int64 { return failures.Load() }

// transientReply reports error replies that mean "not now" rather than "never".
func transientReply(msg string) bool {
	for _, p := range []string{"LOADING", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "TRYAGAIN", "BUSY", "NOREPLICAS", "MISCONF"} {
		if strings.HasPrefix(msg, p) {
			return true
		}
	}
	return false
}

// MS formats d for a PX or PEXPIRE argument.
func MS(d time.Duration) int64 { return max(d.Milliseconds(), 1) }
