package genui

import (
	"testing"
	"time"
)

// One rounding rule for every transport's Retry-After: up to the next whole second, never
// 0 when a wait is asked.
func TestErrorRetryAfterSeconds(t *testing.T) {
	for d, want := range map[time.Duration]int{
		0:                       0,
		-time.Second:            0,
		time.Nanosecond:         1,
		300 * time.Millisecond:  1,
		time.Second:             1,
		1001 * time.Millisecond: 2,
		59*time.Second + 1:      60,
		time.Hour:               3600,
	} {
		if got := (&Error{Status: StatusResourceExhausted, RetryAfter: d}).RetryAfterSeconds(); got != want {
			t.Errorf("RetryAfter %v: RetryAfterSeconds() = %d, want %d", d, got, want)
		}
	}
	if got := (*Error)(nil).RetryAfterSeconds(); got != 0 {
		t.Errorf("nil error: RetryAfterSeconds() = %d, want 0", got)
	}
}
