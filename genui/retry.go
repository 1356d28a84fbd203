package genui

import (
	"math/rand/v2"
	"time"
)

// retryPolicy bounds the retries of a model call that failed before streaming anything.
type retryPolicy struct {
	retries int
	maxWait time.Duration
	base    time.Duration
}

// next returns how long to wait before retrying after attempt (0-based) failed with e,
// and whether to retry at all. Only rate limits and unavailability are retried; a delay
// the provider asked for (e.RetryAfter) wins over the exponential backoff.
func (p retryPolicy) next(attempt int, e *Error, waited time.Duration) (time.Duration, bool) {
	if attempt >= p.retries || (e.Status != StatusResourceExhausted && e.Status != StatusUnavailable) {
		return 0, false
	}
	d := p.base << attempt
	d = d/2 + rand.N(d/2+1) // jitter
	if e.RetryAfter > 0 {
		d = e.RetryAfter
	}
	if waited+d > p.maxWait {
		return 0, false
	}
	return d, true
}
