// Package pacing holds the timing of the scripted model servers (fakegemini, fakeopenai,
// fakeollama): how long a reply waits before its first chunk and between chunks.
package pacing

import (
	"context"
	"time"
)

// Pause waits d, and reports false if ctx ends or stop closes first (or already had).
func Pause(ctx context.Context, stop <-chan struct{}, d time.Duration) bool {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
		case <-stop:
		}
	}
	select {
	case <-ctx.Done():
		return false
	case <-stop:
		return false
	default:
		return true
	}
}

// Pick is a reply's own duration when it sets one (a negative one is none), else the
// server's default.
func Pick(override, def time.Duration) time.Duration {
	if override != 0 {
		return max(override, 0)
	}
	return def
}
