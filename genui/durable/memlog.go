package durable

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// MemoryLog is the in-process Log.
type MemoryLog struct {
	retention time.Duration
	mu        sync.Mutex
	streams   map[string]*memStream
}

// NewMemoryLog returns a Log kept in memory; finished streams are dropped retention after
// their last record.
func NewMemoryLog(retention time.Duration) *MemoryLog {
	return &MemoryLog{retention: retention, streams: map[string]*memStream{}}
}

type memStream struct {
	log       *MemoryLog
	id        string
	mu        sync.Mutex
	records   []Record
	final     bool
	lost      bool
	changed   chan struct{} // closed and replaced on every change
	readers   int
	cancelled chan struct{}
	cancelOne sync.Once
	expiry    *time.Timer
}

// Create implements Log.
func (l *MemoryLog) Create(_ context.Context, id string) (Producer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, ok := l.streams[id]; ok {
		return nil, fmt.Errorf("%w: %s", ErrStreamExists, id)
	}
	s := &memStream{log: l, id: id, changed: make(chan struct{}), cancelled: make(chan struct{})}
	l.streams[id] = s
	return s, nil
}

func (l *MemoryLog) get(id string) (*memStream, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	s, ok := l.streams[id]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrStreamNotFound, id)
	}
	return s, nil
}

// Read implements Log.
func (l *MemoryLog) Read(_ context.Context, id string, after int) (Reader, error) {
	s, err := l.get(id)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.readers++
	s.mu.Unlock()
	return &memReader{s: s, next: max(after, 0), timer: time.NewTimer(time.Hour)}, nil
}

// Cancel implements Log.
func (l *MemoryLog) Cancel(_ context.Context, id string) error {
	s, err := l.get(id)
	if err != nil {
		return err
	}
	s.cancelOne.Do(func() { close(s.cancelled) })
	return nil
}

// Ready implements Log.
func (l *MemoryLog) Ready(context.Context) error { return nil }

// Len returns the number of streams kept.
func (l *MemoryLog) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.streams)
}

func (s *memStream) Append(_ context.Context, data []byte, final bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.final || s.lost {
		return fmt.Errorf("stream %s is finished", s.id)
	}
	s.records = append(s.records, Record{Seq: len(s.records) + 1, Data: data, Final: final})
	if final {
		s.finish()
	}
	s.broadcast()
	return nil
}

// finish schedules the stream's removal; s.mu is held.
func (s *memStream) finish() {
	s.final = true
	s.expiry = time.AfterFunc(s.log.retention, func() {
		s.log.mu.Lock()
		delete(s.log.streams, s.id)
		s.log.mu.Unlock()
	})
}

func (s *memStream) broadcast() {
	close(s.changed)
	s.changed = make(chan struct{})
}

func (s *memStream) Watched(context.Context) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.readers > 0
}

func (s *memStream) Cancelled() <-chan struct{} { return s.cancelled }

func (s *memStream) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.final && !s.lost {
		s.lost = true
		s.finish()
		s.final = false
		s.broadcast()
	}
}

type memReader struct {
	s      *memStream
	next   int // records already read
	timer  *time.Timer
	closed bool
}

func (r *memReader) Next(ctx context.Context, wait time.Duration) (Record, bool, error) {
	for {
		s := r.s
		s.mu.Lock()
		if r.next < len(s.records) {
			rec := s.records[r.next]
			r.next++
			s.mu.Unlock()
			return rec, true, nil
		}
		done, lost, changed := s.final, s.lost, s.changed
		s.mu.Unlock()
		switch {
		case done:
			return Record{}, false, io.EOF
		case lost:
			return Record{}, false, ErrProducerLost
		}
		var timeout <-chan time.Time
		if wait > 0 {
			r.timer.Reset(wait)
			timeout = r.timer.C
		}
		select {
		case <-changed:
			r.timer.Stop()
		case <-timeout:
			return Record{}, false, nil
		case <-ctx.Done():
			r.timer.Stop()
			return Record{}, false, ctx.Err()
		}
	}
}

func (r *memReader) Close() {
	if r.closed {
		return
	}
	r.closed = true
	r.timer.Stop()
	r.s.mu.Lock()
	r.s.readers--
	r.s.mu.Unlock()
}
