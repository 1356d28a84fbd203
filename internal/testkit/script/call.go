package script

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/genuiserver/genui/internal/testkit/pacing"
)

// Call is the state of one captured request while the server answers it.
// Its zero value is ready to use; it must not be copied after first use.
type Call struct {
	once      sync.Once
	done      chan struct{}
	cancelled atomic.Bool
}

func (c *Call) init() { c.once.Do(func() { c.done = make(chan struct{}) }) }

// Done is closed once Finish is called.
func (c *Call) Done() <-chan struct{} {
	c.init()
	return c.done
}

// Finish closes Done; the server calls it when it has finished handling the
// request, whether the reply was written or aborted. Call it once.
func (c *Call) Finish() {
	c.init()
	close(c.done)
}

// Cancelled reports whether Abort was called.
func (c *Call) Cancelled() bool { return c.cancelled.Load() }

// Abort marks the call cancelled and panics with http.ErrAbortHandler, which
// drops the connection, so that a client still listening (e.g. when the
// server closes) sees an error. Call it from the request's handler only.
func (c *Call) Abort() {
	c.cancelled.Store(true)
	panic(http.ErrAbortHandler)
}

// Stream answers with status 200 and the headers already set on w, then
// writes frames in order, flushing each and waiting gap before every frame
// after the first. A nil frame cuts the connection. If ctx ends or stop
// closes during a wait, or a write fails, it aborts the call.
func (c *Call) Stream(ctx context.Context, w http.ResponseWriter, stop <-chan struct{}, gap time.Duration, frames [][]byte) {
	rc := http.NewResponseController(w)
	w.WriteHeader(http.StatusOK)
	_ = rc.Flush()
	for i, frame := range frames {
		if i > 0 && !pacing.Pause(ctx, stop, gap) {
			c.Abort()
		}
		if frame == nil {
			panic(http.ErrAbortHandler) // cut the connection
		}
		if _, err := w.Write(frame); err != nil || rc.Flush() != nil {
			c.Abort()
		}
	}
}
