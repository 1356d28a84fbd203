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
// are dropped first. With WithCallerLimit it counts each caller's conversations.
type Memory struct {
	maxCount, maxBytes int
	ttl                time.Duration
	limit              callerLimit

	mu    sync.Mutex
	lru   *simplelru.LRU[string, *entry]
	bytes int
	// owners holds the conversations counted against each caller.
	owners map[string]map[*entry]struct{}
	// waiting holds the conversations whose last commit left calls without a result.
	waiting map[*entry]struct{}
}

type entry struct {
	State
	id    string
	held  bool
	used  time.Time // last Begin or Commit
	size  int
	owner string // the caller it is counted against; "" when none
}

// entryOverhead estimates what an entry costs besides its bytes: the LRU's element and
// map slot, the entry itself.
const entryOverhead = 160

// NewMemory returns a Memory store of at most maxCount conversations holding at most
// maxBytes (0: no byte bound), each expiring ttl after its last turn. Of the options only
// WithCallerLimit applies.
func NewMemory(maxCount, maxBytes int, ttl time.Duration, opts ...Option) *Memory {
	var o options
	for _, f := range opts {
		f(&o)
	}
	m := &Memory{maxCount: max(maxCount, 1), maxBytes: maxBytes, ttl: ttl, limit: o.limit,
		owners: map[string]map[*entry]struct{}{}, waiting: map[*entry]struct{}{}}
	// The bounds are enforced here, skipping held conversations; the LRU's own bound is
	// out of reach.
	m.lru, _ = simplelru.NewLRU[string, *entry](1<<31-1, nil)
	return m
}

// Begin implements Store. A new conversation of a caller at its limit
// (WithCallerLimit) is refused.
func (m *Memory) Begin(ctx context.Context, id string) (*State, Hold, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	e, ok := m.lru.Get(id)
	if ok && !e.held && m.expired(e, now) {
		m.remove(e)
		ok = false
	}
	if ok && e.held {
		return nil, nil, ErrBusy
	}
	if !ok {
		owner := m.limit.ownerOf(ctx)
		if owner != "" {
			if err := m.admit(owner, now); err != nil {
				return nil, nil, err
			}
		}
		e = &entry{id: id, owner: owner}
		e.size = entryOverhead + len(id)
		m.lru.Add(id, e)
		m.bytes += e.size
		if owner != "" {
			if m.owners[owner] == nil {
				m.owners[owner] = map[*entry]struct{}{}
			}
			m.owners[owner][e] = struct{}{}
		}
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
	case !ok || (!e.held && m.expired(e, time.Now())):
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

// Stored returns how many conversations are counted against caller owner: those it
// created that have not expired, been dropped or deleted (WithCallerLimit).
func (m *Memory) Stored(_ context.Context, owner string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now, n := time.Now(), 0
	for e := range m.owners[owner] {
		if e.held || !m.expired(e, now) {
			n++
		}
	}
	return n, nil
}

// Waiting returns how many conversations wait for the results of calls of client tools:
// their last turn ended with calls without a result, and they have not expired.
func (m *Memory) Waiting(context.Context) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now, n := time.Now(), 0
	for e := range m.waiting {
		if e.held || !m.expired(e, now) {
			n++
		}
	}
	return n, nil
}

// expired reports whether e, not held, is past its idle TTL at now.
func (m *Memory) expired(e *entry, now time.Time) bool { return now.Sub(e.used) >= m.ttl }

// admit makes room for a new conversation of owner, dropping its expired ones, or says
// when it may retry: when its first conversation expires (a held one, a TTL after now).
// m.mu is held.
func (m *Memory) admit(owner string, now time.Time) error {
	set := m.owners[owner]
	if len(set) < m.limit.max {
		return nil
	}
	for e := range set {
		if !e.held && m.expired(e, now) {
			m.remove(e)
		}
	}
	if len(set) < m.limit.max {
		return nil
	}
	retry := m.ttl
	for e := range set {
		if !e.held {
			retry = min(retry, e.used.Add(m.ttl).Sub(now))
		}
	}
	return m.limit.exceeded(retry)
}

// remove drops e, and its count against its owner. m.mu is held.
func (m *Memory) remove(e *entry) {
	m.lru.Remove(e.id)
	m.bytes -= e.size
	delete(m.waiting, e)
	if set := m.owners[e.owner]; set != nil {
		delete(set, e)
		if len(set) == 0 {
			delete(m.owners, e.owner)
		}
	}
}

// trim drops expired conversations, then the least recently used ones while over a
// bound; a held conversation stops it (it is in use, and newer than any conversation
// behind it). m.mu is held.
func (m *Memory) trim(now time.Time) {
	for {
		_, e, ok := m.lru.GetOldest()
		if !ok || e.held {
			return
		}
		// The last conversation stays, even alone over the byte bound.
		over := m.lru.Len() > m.maxCount || (m.maxBytes > 0 && m.bytes > m.maxBytes && m.lru.Len() > 1)
		if !over && !m.expired(e, now) {
			return
		}
		m.remove(e)
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
	e.Kind, e.Model = u.Kind, u.Model
	// Appending never changes bytes a State handed out earlier can see.
	e.History = append(e.History, u.Append...)
	e.Pending = append([]byte(nil), u.Pending...)
	if len(e.Pending) == 0 {
		e.Pending = nil
		delete(m.waiting, e)
	} else {
		m.waiting[e] = struct{}{}
	}
	if u.Session != nil {
		e.Session = append([]byte(nil), u.Session...)
	}
	size := entryOverhead + len(h.id) + len(e.Kind) + len(e.Model) + len(e.History) + len(e.Pending) + len(e.Session)
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
		m.remove(h.e)
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
		m.remove(h.e)
	}
	return nil
}
