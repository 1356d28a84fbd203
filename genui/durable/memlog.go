package durable

import (
	"container/list"
	"context"
	"fmt"
	"io"
	"sync"
	"time"
)

// MemoryLog is the in-process Log. A finished stream is kept for the retention, and at
// most until the finished streams kept hold more than the log's byte budget: then the
// oldest go first. Streams that are still being written are never dropped.
type MemoryLog struct {
	retention time.Duration
	maxBytes  int

	mu       sync.Mutex
	streams  map[string]*memStream
	finished list.List // of *memStream, oldest first
	bytes    int       // held by the finished streams
}

// MemoryOption configures a MemoryLog.
type MemoryOption func(*MemoryLog)

// WithMaxBytes bounds the memory that finished streams hold (default 8 MiB; 0: no bound).
// A stream costs its records plus about 320 bytes.
func WithMaxBytes(n int) MemoryOption { return func(l *MemoryLog) { l.maxBytes = max(n, 0) } }

// NewMemoryLog returns a Log kept in memory; finished streams are dropped retention after
// their last record, or earlier to stay within the byte budget (see WithMaxBytes).
func NewMemoryLog(retention time.Duration, opts ...MemoryOption) *MemoryLog {
	l := &MemoryLog{retention: retention, maxBytes: 8 << 20, streams: map[string]*memStream{}}
	for _, o := range opts {
		o(l)
	}
	return l
}

// streamOverhead approximates what a finished stream costs besides its records: the
// stream, its map and list entries, its id.
const streamOverhead = 320

type memStream struct {
	log *MemoryLog
	id  string

	mu      sync.Mutex
	data    []byte   // every record's bytes, in order
	ends    []uint32 // where each record ends in data
	parts   [][]byte // the records while the stream is written; compacted into data at the end
	final   bool
	lost    bool
	changed chan struct{} // closed and replaced on every change; closedChan once finished
	readers int

	cancelled chan struct{} // nil once finished
	cancelOne sync.Once

	expires time.Time     // when finished
	elem    *list.Element // in log.finished
}

var closedChan = func() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}()

// Create implements Log.
func (l *MemoryLog) Create(_ context.Context, id string) (Producer, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expireLocked(time.Now())
	if _, ok := l.streams[id]; ok {
		return nil, fmt.Errorf("%w: %s", ErrStreamExists, id)
	}
	s := &memStream{log: l, id: id, changed: make(chan struct{}), cancelled: make(chan struct{})}
	l.streams[id] = s
	return s, nil
}

// expireLocked drops the finished streams past their retention; l.mu is held.
func (l *MemoryLog) expireLocked(now time.Time) {
	for e := l.finished.Front(); e != nil; e = l.finished.Front() {
		s := e.Value.(*memStream)
		if now.Before(s.expires) {
			return
		}
		l.dropLocked(s)
	}
}

func (l *MemoryLog) dropLocked(s *memStream) {
	l.finished.Remove(s.elem)
	l.bytes -= s.size()
	delete(l.streams, s.id)
}

func (l *MemoryLog) get(id string) (*memStream, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.expireLocked(time.Now())
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
	return &memReader{s: s, next: max(after, 0)}, nil
}

// Cancel implements Log.
func (l *MemoryLog) Cancel(_ context.Context, id string) error {
	s, err := l.get(id)
	if err != nil {
		return err
	}
	s.mu.Lock()
	c := s.cancelled
	s.mu.Unlock()
	if c != nil {
		s.cancelOne.Do(func() { close(c) })
	}
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
	if s.final || s.lost {
		s.mu.Unlock()
		return fmt.Errorf("stream %s is finished", s.id)
	}
	s.parts = append(s.parts, data)
	if !final {
		s.broadcast()
		s.mu.Unlock()
		return nil
	}
	s.final = true
	s.finish()
	s.mu.Unlock()
	s.log.keep(s)
	return nil
}

// finish compacts the records and wakes the readers for good; s.mu is held.
func (s *memStream) finish() {
	n := 0
	for _, p := range s.parts {
		n += len(p)
	}
	s.data = make([]byte, 0, n)
	s.ends = make([]uint32, len(s.parts))
	for i, p := range s.parts {
		s.data = append(s.data, p...)
		s.ends[i] = uint32(len(s.data))
	}
	s.parts = nil
	close(s.changed)
	s.changed = closedChan
	s.cancelled = nil
}

// size is what a finished stream counts against the log's budget.
func (s *memStream) size() int { return streamOverhead + len(s.data) + 4*len(s.ends) }

// keep starts a finished stream's retention, dropping the oldest finished streams that no
// longer fit the budget.
func (l *MemoryLog) keep(s *memStream) {
	l.mu.Lock()
	defer l.mu.Unlock()
	now := time.Now()
	s.expires = now.Add(l.retention)
	s.elem = l.finished.PushBack(s)
	l.bytes += s.size()
	l.expireLocked(now)
	for l.maxBytes > 0 && l.bytes > l.maxBytes && l.finished.Len() > 1 {
		l.dropLocked(l.finished.Front().Value.(*memStream))
	}
}

// record returns record i (from 0) and the number of records; s.mu is held.
func (s *memStream) record(i int) (Record, int) {
	if s.parts != nil || (!s.final && !s.lost) {
		if i >= len(s.parts) {
			return Record{}, len(s.parts)
		}
		return Record{Seq: i + 1, Data: s.parts[i]}, len(s.parts)
	}
	if i >= len(s.ends) {
		return Record{}, len(s.ends)
	}
	start := uint32(0)
	if i > 0 {
		start = s.ends[i-1]
	}
	return Record{Seq: i + 1, Data: s.data[start:s.ends[i]:s.ends[i]], Final: s.final && i == len(s.ends)-1}, len(s.ends)
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

func (s *memStream) Cancelled() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cancelled
}

func (s *memStream) Close() {
	s.mu.Lock()
	if s.final || s.lost {
		s.mu.Unlock()
		return
	}
	s.lost = true
	s.finish()
	s.mu.Unlock()
	s.log.keep(s)
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
		rec, n := s.record(r.next)
		if r.next < n {
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
			if r.timer == nil {
				r.timer = time.NewTimer(wait)
			} else {
				r.timer.Reset(wait)
			}
			timeout = r.timer.C
		}
		select {
		case <-changed:
		case <-timeout:
			return Record{}, false, nil
		case <-ctx.Done():
			return Record{}, false, ctx.Err()
		}
	}
}

func (r *memReader) Close() {
	if r.closed {
		return
	}
	r.closed = true
	if r.timer != nil {
		r.timer.Stop()
	}
	r.s.mu.Lock()
	r.s.readers--
	r.s.mu.Unlock()
}
