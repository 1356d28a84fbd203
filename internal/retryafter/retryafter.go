// Package retryafter holds the one rounding rule of the service's retry hints: how many
// whole seconds a client is asked to wait (HTTP Retry-After, and the retryAfter of every
// protocol's errors).
package retryafter

import (
	"math"
	"time"
)

// Seconds is d in whole seconds, rounded up: at least 1 when d asks for a wait at all, 0
// when it does not (d ≤ 0).
func Seconds(d time.Duration) int {
	if d <= 0 {
		return 0
	}
	return max(1, int(math.Ceil(d.Seconds())))
}
