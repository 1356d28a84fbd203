// Package providererr reads what a model provider's failed request says, without its
// address: why a connection failed, how long the provider asks to wait. The model
// adapters (Gemini, Ollama, OpenAI-compatible endpoints) share it, so that each reports a
// failure alike.
package providererr

import (
	"errors"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/genuiserver/genui/genui"
)

// Unreachable says why a request could not reach the provider, without its address:
// "timeout", "connection refused", "connection reset", "dial failed", "network error".
func Unreachable(err error) string {
	var ne net.Error
	var op *net.OpError
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		return "timeout"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.Is(err, syscall.ECONNRESET):
		return "connection reset"
	case errors.As(err, &op):
		return op.Op + " failed"
	}
	return "network error"
}

// RetryAfter is the wait a provider's answer asks for: retry-after-ms (OpenAI's),
// Retry-After in seconds or as an HTTP date; 0 when it asks for none.
func RetryAfter(h http.Header, now time.Time) time.Duration {
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.Get("Retry-After-Ms")), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		return max(0, time.Duration(s*float64(time.Second)))
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now))
	}
	return 0
}

// Status is the status of a provider's HTTP answer of code: 429 RESOURCE_EXHAUSTED, 504
// DEADLINE_EXCEEDED, another 5xx UNAVAILABLE (another model may serve the call), 400
// INVALID_ARGUMENT, 401 UNAUTHENTICATED, 403 PERMISSION_DENIED, 404 NOT_FOUND, anything
// else INTERNAL.
func Status(code int) genui.Status {
	switch {
	case code == http.StatusTooManyRequests:
		return genui.StatusResourceExhausted
	case code == http.StatusGatewayTimeout:
		return genui.StatusDeadlineExceeded
	case code >= 500:
		return genui.StatusUnavailable
	case code == http.StatusBadRequest:
		return genui.StatusInvalidArgument
	case code == http.StatusUnauthorized:
		return genui.StatusUnauthenticated
	case code == http.StatusForbidden:
		return genui.StatusPermissionDenied
	case code == http.StatusNotFound:
		return genui.StatusNotFound
	}
	return genui.StatusInternal
}
