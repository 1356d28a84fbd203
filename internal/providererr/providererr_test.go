package providererr

import (
	"errors"
	"net"
	"net/http"
	"net/url"
	"syscall"
	"testing"
	"time"
)

func TestRetryAfter(t *testing.T) {
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{}, 0},
		{http.Header{"Retry-After": {"2"}}, 2 * time.Second},
		{http.Header{"Retry-After": {"1.5"}}, 1500 * time.Millisecond},
		{http.Header{"Retry-After": {"Mon, 07 Dec 2026 12:00:30 GMT"}}, 30 * time.Second},
		{http.Header{"Retry-After": {"Mon, 07 Dec 2026 11:00:00 GMT"}}, 0},
		{http.Header{"Retry-After": {"soon"}}, 0},
		{http.Header{"Retry-After": {"-3"}}, 0},
		{http.Header{"Retry-After": {"2"}, "Retry-After-Ms": {"250"}}, 250 * time.Millisecond},
	} {
		if got := RetryAfter(c.h, now); got != c.want {
			t.Errorf("%v: %v, want %v", c.h, got, c.want)
		}
	}
}

func TestUnreachable(t *testing.T) {
	refused := &url.Error{Op: "Post", URL: "http://10.0.0.5:8080/v1", Err: &net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}}
	for err, want := range map[error]string{
		refused: "connection refused",
		&url.Error{Op: "Post", URL: "http://10.0.0.5/", Err: &net.OpError{Op: "read", Err: syscall.ECONNRESET}}: "connection reset",
		&net.OpError{Op: "dial", Err: errors.New("no route")}:                                                   "dial failed",
		errors.New("odd"): "network error",
	} {
		if got := Unreachable(err); got != want {
			t.Errorf("%v: %q, want %q", err, got, want)
		}
	}
}
