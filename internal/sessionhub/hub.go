// Package sessionhub keeps, for the WebSocket transports, which connection each session
// the service keeps is attached to and the turn it runs on this server, and deletes a
// session whose connection went: at once when it holds nothing, when its turn ends, or
// at the end of the reconnect window when it waits for its client tools.
package sessionhub

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/genui"
)

// Hub is the sessions of one server's WebSocket connections. It is safe for concurrent
// use; one Hub serves every WebSocket transport of a server, so a session is attached
// to one connection whichever endpoint it came through.
type Hub struct {
	svc    *genui.Service
	window time.Duration
	log    *slog.Logger

	mu     sync.Mutex
	m      map[string]*Session
	owned  map[any]map[*Session]struct{} // the sessions of each owner
	closed bool
}

// Session is one session on this server. Its fields are guarded by the Hub.
type Session struct {
	ID    string
	key   string      // the id behind its caller's prefix (auth.Scope)
	who   auth.Caller // the caller whose session it is
	owner any
	// Run is the stream of the turn the session runs on this server ("": none).
	run string
	// delivered is how many items of the running turn reached the owner.
	delivered int
	timer     *time.Timer
	// data is the transport's state of the session, kept across connections.
	data any
}

// New returns a Hub of svc's sessions. window is the reconnect window: how long a session
// waiting for its client tools is kept after its connection went, from the moment it
// began to wait.
func New(svc *genui.Service, window time.Duration, log *slog.Logger) *Hub {
	if log == nil {
		log = slog.Default()
	}
	return &Hub{svc: svc, window: window, log: log, m: make(map[string]*Session), owned: make(map[any]map[*Session]struct{})}
}

// setOwner makes owner (nil: none) the owner of s. h.mu is held.
func (h *Hub) setOwner(s *Session, owner any) {
	if s.owner == owner {
		return
	}
	if set := h.owned[s.owner]; set != nil {
		delete(set, s)
		if len(set) == 0 {
			delete(h.owned, s.owner)
		}
	}
	s.owner = owner
	if owner != nil {
		set := h.owned[owner]
		if set == nil {
			set = make(map[*Session]struct{})
			h.owned[owner] = set
		}
		set[s] = struct{}{}
	}
}

// Data returns the transport's state of s, made by make the first time.
func (h *Hub) Data(s *Session, make func() any) any {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.data == nil {
		s.data = make()
	}
	return s.data
}

// Window returns the reconnect window.
func (h *Hub) Window() time.Duration { return h.window }

// ErrAttached reports a session attached to another open connection.
var ErrAttached = errors.New("the session is attached to another connection")

// Attach attaches session id to owner and returns it: a new session, one whose
// connection went, or one this server does not know (another replica's, or from before
// a restart: the caller checks the store). A session another owner holds is ErrAttached.
func (h *Hub) Attach(ctx context.Context, id string, owner any) (*Session, error) {
	key := auth.Scope(ctx, id)
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.m[key]
	if s == nil {
		s = &Session{ID: id, key: key, who: auth.FromContext(ctx)}
		h.m[key] = s
	}
	if s.owner != nil && s.owner != owner {
		return nil, ErrAttached
	}
	h.setOwner(s, owner)
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	return s, nil
}

// Take attaches session id to owner even when another owner holds it (a client that
// reconnects before the server noticed its old connection die); the old owner's
// deliveries stop.
func (h *Hub) Take(ctx context.Context, id string, owner any) *Session {
	key := auth.Scope(ctx, id)
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.m[key]
	if s == nil {
		s = &Session{ID: id, key: key, who: auth.FromContext(ctx)}
		h.m[key] = s
	}
	h.setOwner(s, owner)
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
	return s
}

// Owned returns session id if owner holds it.
func (h *Hub) Owned(ctx context.Context, id string, owner any) *Session {
	key := auth.Scope(ctx, id)
	h.mu.Lock()
	defer h.mu.Unlock()
	if s := h.m[key]; s != nil && s.owner == owner {
		return s
	}
	return nil
}

// Owner reports whether owner holds s.
func (h *Hub) Owner(s *Session, owner any) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return s.owner == owner
}

// Sessions returns the sessions owner holds.
func (h *Hub) Sessions(owner any) []*Session {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make([]*Session, 0, len(h.owned[owner]))
	for s := range h.owned[owner] {
		out = append(out, s)
	}
	return out
}

// Running returns the stream of the turn s runs on this server and how many of its
// items reached its owner ("" when none runs).
func (h *Hub) Running(s *Session) (stream string, delivered int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return s.run, s.delivered
}

// Started records that s runs the turn of stream on this server. It reports false when
// another turn of s runs here.
func (h *Hub) Started(s *Session, stream string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.run != "" {
		return false
	}
	s.run, s.delivered = stream, 0
	return true
}

// Delivered records that the owner received the items of the running turn up to seq.
func (h *Hub) Delivered(s *Session, seq int) {
	h.mu.Lock()
	s.delivered = max(s.delivered, seq)
	h.mu.Unlock()
}

// Finished records that the last item of the turn of stream reached the owner of s: the
// session no longer runs it, though its producer may still be returning.
func (h *Hub) Finished(s *Session, stream string) {
	h.mu.Lock()
	if s.run == stream {
		s.run = ""
	}
	h.mu.Unlock()
}

// Ended records that the turn of stream ended; a session without an owner is then
// cleaned up.
func (h *Hub) Ended(ctx context.Context, s *Session, stream string) {
	h.mu.Lock()
	if s.run == stream {
		s.run = ""
	}
	orphan := s.owner == nil && h.m[s.key] == s && s.run == ""
	h.mu.Unlock()
	if orphan {
		h.cleanup(ctx, s)
	}
}

// Forget removes s from the hub, as after its deletion.
func (h *Hub) Forget(s *Session) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.m[s.key] == s {
		delete(h.m, s.ID)
		h.setOwner(s, nil)
		if s.timer != nil {
			s.timer.Stop()
		}
	}
}

// Detach lets go of owner's sessions, as its connection closes: each one that runs
// nothing here is cleaned up now, a running one when its turn ends.
func (h *Hub) Detach(ctx context.Context, owner any) {
	h.mu.Lock()
	var idle []*Session
	for s := range h.owned[owner] {
		h.setOwner(s, nil)
		if s.run == "" {
			idle = append(idle, s)
		}
	}
	h.mu.Unlock()
	for _, s := range idle {
		h.cleanup(ctx, s)
	}
}

// cleanup deletes a session without an owner that waits for nothing, and keeps one that
// waits for its client tools or the user's action until the end of the reconnect window.
func (h *Hub) cleanup(ctx context.Context, s *Session) {
	ctx = auth.NewContext(context.WithoutCancel(ctx), s.who)
	w, err := h.svc.SessionWaits(ctx, s.ID)
	var ge *genui.Error
	switch {
	case errors.As(err, &ge) && ge.Status == genui.StatusNotFound:
		h.Forget(s)
		return
	case err != nil:
		// The store failed, or a turn of the session runs elsewhere: the store's expiry
		// ends it.
		h.log.Warn("a closed connection's session was kept", "session", s.ID, "err", err)
		h.Forget(s)
		return
	}
	since := w.Since
	if len(w.Calls) == 0 && len(w.Awaiting) == 0 {
		if err := h.svc.CloseSession(ctx, s.ID, time.Time{}); err != nil {
			h.log.Debug("a closed connection's session was not deleted", "session", s.ID, "err", err)
		}
		h.Forget(s)
		return
	}
	left := time.Until(since.Add(h.window))
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.owner != nil || h.m[s.key] != s || h.closed {
		return
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	s.timer = time.AfterFunc(max(left, 0), func() { h.expire(s, since) })
}

// expire deletes s when it still waits, as it did, with no owner.
func (h *Hub) expire(s *Session, since time.Time) {
	h.mu.Lock()
	if s.owner != nil || h.m[s.key] != s {
		h.mu.Unlock()
		return
	}
	s.timer = nil
	delete(h.m, s.ID)
	h.mu.Unlock()
	ctx, cancel := context.WithTimeout(auth.NewContext(context.Background(), s.who), 10*time.Second)
	defer cancel()
	if err := h.svc.CloseSession(ctx, s.ID, since); err != nil {
		h.log.Debug("an expired session was not deleted", "session", s.ID, "err", err)
	}
}

// Expired reports whether a session waiting since since is past the reconnect window.
func (h *Hub) Expired(since time.Time) bool {
	return !since.IsZero() && time.Since(since) > h.window
}

// Close stops the hub's timers; the store's expiry ends the sessions they kept.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for _, s := range h.m {
		if s.timer != nil {
			s.timer.Stop()
			s.timer = nil
		}
	}
}

// Waiting returns the number of sessions without a connection kept for their client to
// come back (each waiting for its client tools' results or the user's action).
func (h *Hub) Waiting() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, s := range h.m {
		if s.owner == nil && s.timer != nil {
			n++
		}
	}
	return n
}
