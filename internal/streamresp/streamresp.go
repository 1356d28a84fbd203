package streamresp

import (
	"errors"
	"net/http"
	"sync"
	"time"
)

// ErrGone reports a client that can no longer be written to.
var ErrGone = errors.New("the client is gone")

// Writer is a streamed response. Write and the keepalive timer write one at a time.
type Writer struct {
	w  http.ResponseWriter
	rc *http.ResponseController

	mu         sync.Mutex
	gone, done bool
	last       time.Time
	timer      *time.Timer
}

// Start writes the status 200 with the headers already set on w, flushes them, and
// returns the stream's writer; ping, when keepalive is positive, is written after every
// keepalive of silence until Close. A client already gone gives ErrGone.
func Start(w http.ResponseWriter, keepalive time.Duration, ping []byte) (*Writer, error) {
	sw := &Writer{w: w, rc: http.NewResponseController(w), last: time.Now()}
	w.WriteHeader(http.StatusOK)
	if err := sw.rc.Flush(); err != nil {
		return nil, ErrGone
	}
	if keepalive > 0 {
		sw.timer = time.AfterFunc(keepalive, func() {
			sw.mu.Lock()
			defer sw.mu.Unlock()
			if sw.done || sw.gone {
				return
			}
			if idle := time.Since(sw.last); idle < keepalive {
				sw.timer.Reset(keepalive - idle)
				return
			}
			if sw.write(ping) == nil {
				sw.timer.Reset(keepalive)
			}
		})
	}
	return sw, nil
}

// Write writes b in one write and flushes it; once a write fails, every write returns
// ErrGone.
func (sw *Writer) Write(b []byte) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return sw.write(b)
}

// write writes b; mu is held.
func (sw *Writer) write(b []byte) error {
	if sw.gone {
		return ErrGone
	}
	if _, err := sw.w.Write(b); err != nil || sw.rc.Flush() != nil {
		sw.gone = true
		return ErrGone
	}
	sw.last = time.Now()
	return nil
}

// Close stops the keepalives; b, when not nil, is written last. It returns b's write
// error.
func (sw *Writer) Close(b []byte) error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.done = true
	if sw.timer != nil {
		sw.timer.Stop()
	}
	if b == nil {
		return nil
	}
	return sw.write(b)
}
