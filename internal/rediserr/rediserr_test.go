package rediserr

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A caller's own cancellation is no failure of Redis: it is not counted.
func TestWrapCountsFailuresButCancellations(t *testing.T) {
	cancelled, cancel := context.WithCancel(context.Background())
	cancel()
	expired, cancel2 := context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel2()
	for _, c := range []struct {
		name    string
		ctx     context.Context
		err     error
		counted bool
		is      error
	}{
		{"cancelled by the caller", cancelled, context.Canceled, false, context.Canceled},
		{"cancelled, wrapped", cancelled, errors.Join(errors.New("redis: read"), context.Canceled), false, context.Canceled},
		{"the caller's deadline", expired, context.DeadlineExceeded, true, context.DeadlineExceeded},
		{"unreachable", context.Background(), errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), true, ErrUnavailable},
		{"an error reply", context.Background(), redis.ErrClosed, true, ErrUnavailable},
	} {
		before := Failures()
		err := Wrap(c.ctx, "test store", c.err)
		if got := Failures() - before; got != map[bool]int64{false: 0, true: 1}[c.counted] {
			t.Errorf("%s: counted %d", c.name, got)
		}
		if !errors.Is(err, c.is) {
			t.Errorf("%s: %v is not %v", c.name, err, c.is)
		}
	}
}
