package conversation

import (
	"context"
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// Memory is the in-process Store: at most a number of conversations holding at most a
// number of bytes (their histories, what they wait for, their sessions, their ids), each expiring after an
// idle TTL. When over a bound, the least recently used conversations that no turn holds
// are dropped first.
type Memory struct {
	maxCount, maxBytes int
	ttl                time.Duration

	mu    sync.Mutex
	lru   *simplelru.LRU[string, *entry]
	bytes int
}

type entry struct {
	State
	held bool
	used time.Time // last Begin or Commit
	size int
}

// entryOverhead estimates what an entry costs besides its bytes: the LRU's element and
// map slot, the entry itself.
const entryOverhead = 160

// NewMemory returns a Memory store of at most maxCount conversations holding at most
// maxBytes (0: no byte bound), each expiring ttl after its last turn.
func NewMemory(maxCount, maxBytes int, ttl time.Duration) *Memory {
	m := &Memory{maxCount: max(maxCount, 1), maxBytes: maxBytes, ttl: ttl}
	// The bounds are enforced here, skipping held conversations; the LRU's own bound is
	// out of reach.
	m.lru, _ = simplelru.NewLRU[string, *entry](1<<31-1, nil)
	return m
}

// Begin implements Store.
func (m *Memory) Begin(_ context.Context, id string) (*State, Hold, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	e, ok := m.lru.Get(id)
	if ok && !e.held && now.Sub(e.used) >= m.ttl {
		m.remove(id, e)
		ok = false
	}
	if ok && e.held {
		return nil, nil, ErrBusy
	}
	if !ok {
		e = &entry{}
		e.size = entryOverhead + len(id)
		m.lru.Add(id, e)
		m.bytes += e.size
	}
	e.held, e.used = true, now
	st := e.State // the slices are only ever appended to or replaced
	return &st, &memoryHold{m: m, id: id, e: e}, nil
}

// Peek implements Store.
func (m *Memory) Peek(_ context.Context, id string) (*State, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.lru.Peek(id)
	switch {
	case !ok || (!e.held && time.Since(e.used) >= m.ttl):
		return &State{}, nil
	case e.held:
		return nil, ErrBusy
	}
	st := e.State
	return &st, nil
}

// Ready implements Store; memory is always ready.
func (m *Memory) Ready(context.Context) error { return nil }

// Len returns the number of conversations and the bytes they hold.
func (m *Memory) Len() (count, bytes int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.lru.Len(), m.bytes
}

func (m *Memory) remove(id string, e *entry) {
	m.lru.Remove(id)
	m.bytes -= e.size
}

// trim drops expired conversations, then the least recently used ones while over a
// bound; a held conversation stops it (it is in use, and newer than any conversation
// behind it). m.mu is held.
func (m *Memory) trim(now time.Time) {
	for {
		id, e, ok := m.lru.GetOldest()
		if !ok || e.held {
			return
		}
		// The last conversation stays, even alone over the byte bound.
		over := m.lru.Len() > m.maxCount || (m.maxBytes > 0 && m.bytes > m.maxBytes && m.lru.Len() > 1)
		if !over && now.Sub(e.used) < m.ttl {
			return
		}
		m.remove(id, e)
	}
}

type memoryHold struct {
	m    *Memory
	id   string
	e    *entry
	done bool
}

func (h *memoryHold) Commit(_ context.Context, u Update) error {
	m := h.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if h.done {
		return ErrHoldLost
	}
	h.done = true
	e := h.e
	e.Kind = u.Kind
	// Appending never changes bytes a State handed out earlier can see.
	e.History = append(e.History, u.Append...)
	e.Pending = append([]byte(nil), u.Pending...)
	if len(e.Pending) == 0 {
		e.Pending = nil
	}
	if u.Session != nil {
		e.Session = append([]byte(nil), u.Session...)
	}
	size := entryOverhead + len(h.id) + len(e.Kind) + len(e.History) + len(e.Pending) + len(e.Session)
	m.bytes += size - e.size
	e.size = size
	e.held = false
	e.used = time.Now()
	m.lru.Get(h.id) // the most recently used
	m.trim(e.used)
	return nil
}

func (h *memoryHold) Release() {
	m := h.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if h.done {
		return
	}
	h.done = true
	h.e.held = false
	if h.e.Kind == "" && len(h.e.History) == 0 {
		// Begun but never committed: it holds nothing.
		m.remove(h.id, h.e)
	}
	m.trim(time.Now())
}

func (h *memoryHold) Delete(context.Context) error {
	m := h.m
	m.mu.Lock()
	defer m.mu.Unlock()
	if h.done {
		return ErrHoldLost
	}
	h.done = true
	h.e.held = false
	if e, ok := m.lru.Peek(h.id); ok && e == h.e {
		m.remove(h.id, h.e)
	}
	return nil
}
