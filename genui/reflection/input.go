package reflection

import (
	"context"
	"encoding/json"
	"iter"
	"sync"
)

// InputStream returns the input chunks of a bidirectional run (runAction with streamInput)
// of an action that is not an api.BidiAction, for an action started by a Client: the chunks
// the manager sends with sendInputStreamChunk (or the RFC's streamInputChunk), in order,
// until endInputStream (or endStreamInput), until ctx is done, or until the connection
// drops. ok is false when ctx is not that of such a run. A streaming flow can read its input
// this way; an action that ignores it runs as usual. Bidi actions (core.NewBidiActionOf)
// receive the chunks on their input channel instead.
func InputStream(ctx context.Context) (chunks iter.Seq[json.RawMessage], ok bool) {
	q, ok := ctx.Value(inputKey{}).(*inputQueue)
	if !ok {
		return func(func(json.RawMessage) bool) {}, false
	}
	return func(yield func(json.RawMessage) bool) {
		for {
			c, more := q.next(ctx)
			if !more || !yield(c) {
				return
			}
		}
	}, true
}

type inputKey struct{}

func withInput(ctx context.Context, q *inputQueue) context.Context {
	return context.WithValue(ctx, inputKey{}, q)
}

// inputQueue buffers input chunks without bound, so that the read loop never waits for an
// action (the manager is trusted development tooling, as for the JS runtime).
type inputQueue struct {
	mu     sync.Mutex
	items  []json.RawMessage
	closed bool
	ready  chan struct{} // signalled (capacity 1) on push and close
}

func newInputQueue() *inputQueue { return &inputQueue{ready: make(chan struct{}, 1)} }

func (q *inputQueue) push(c json.RawMessage) {
	q.mu.Lock()
	if !q.closed {
		q.items = append(q.items, c)
	}
	q.mu.Unlock()
	q.signal()
}

func (q *inputQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	q.signal()
}

func (q *inputQueue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// next returns the next chunk, waiting for one; false once the input ended or ctx is done.
func (q *inputQueue) next(ctx context.Context) (json.RawMessage, bool) {
	for {
		q.mu.Lock()
		if len(q.items) > 0 {
			c := q.items[0]
			q.items[0] = nil
			q.items = q.items[1:]
			q.mu.Unlock()
			return c, true
		}
		closed := q.closed
		q.mu.Unlock()
		if closed {
			return nil, false
		}
		select {
		case <-q.ready:
		case <-ctx.Done():
			return nil, false
		}
	}
}
