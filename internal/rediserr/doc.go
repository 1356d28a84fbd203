// Package rediserr classifies Redis failures for the stores built on Redis: a failure that
// may pass (Redis unreachable, loading, read only) wraps ErrUnavailable; the caller's own
// cancellation stays a context error.
package rediserr
