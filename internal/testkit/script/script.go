package script

import (
	"context"
	"errors"
	"slices"
	"sync"
)

// Script holds the replies enqueued for a server and the requests it
// captured. Its methods may be called concurrently.
type Script[Req, Rep any] struct {
	closed   error
	stop     chan struct{}
	stopOnce sync.Once

	mu      sync.Mutex
	queue   []Rep
	reqs    []Req
	changed chan struct{} // closed and replaced when a request is captured
}

// New returns an empty script. name prefixes the error of WaitRequests once
// the script is stopped ("name: server closed").
func New[Req, Rep any](name string) *Script[Req, Rep] {
	return &Script[Req, Rep]{
		closed:  errors.New(name + ": server closed"),
		stop:    make(chan struct{}),
		changed: make(chan struct{}),
	}
}

// Enqueue appends replies to the FIFO.
func (s *Script[Req, Rep]) Enqueue(replies ...Rep) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, replies...)
}

// Next captures req and returns its reply: the first one enqueued, else
// fallback(req), called without holding the script's lock.
func (s *Script[Req, Rep]) Next(req Req, fallback func(Req) Rep) Rep {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	close(s.changed)
	s.changed = make(chan struct{})
	if len(s.queue) > 0 {
		reply := s.queue[0]
		s.queue = s.queue[1:]
		s.mu.Unlock()
		return reply
	}
	s.mu.Unlock()
	return fallback(req)
}

// Requests returns the captured requests in arrival order.
func (s *Script[Req, Rep]) Requests() []Req {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reqs)
}

// WaitRequests blocks until at least n requests were captured, ctx is done
// or the script is stopped.
func (s *Script[Req, Rep]) WaitRequests(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		have, ch := len(s.reqs), s.changed
		s.mu.Unlock()
		if have >= n {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-s.stop:
			return s.closed
		}
	}
}

// Stop closes the channel returned by Stopped. It may be called more than
// once.
func (s *Script[Req, Rep]) Stop() { s.stopOnce.Do(func() { close(s.stop) }) }

// Stopped is closed once Stop is called: replies in progress end their
// waits on it.
func (s *Script[Req, Rep]) Stopped() <-chan struct{} { return s.stop }
