// Package sessionhub keeps, for the WebSocket transports, which connection each session
// the service keeps is attached to and the turn it runs on this server, and deletes a
// session whose connection went: at once when it holds nothing; a grace period after its
// turn ended when the turn's end reached no client (so that a client reconnecting then
// gets the turn replayed from its durable stream); or at the end of the reconnect window
// when it waits for its client tools, the user's action, or a transport's retry.
package sessionhub

import (
	"context"
	"errors"
	"log/slog"
	"slices"
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
	grace  time.Duration
	log    *slog.Logger

	mu     sync.Mutex
	m      map[string]*Session
	owned  map[any][]*Session // the sessions of each owner (a connection holds few)
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
	// missed is the stream of the session's last turn when its end reached no owner
	// (its connection went mid-turn): a client that attaches later replays it.
	missed string
	// keep, when set, is how long the session is kept without an owner even when it
	// waits for nothing: a grace period after a missed end, or what a transport asked
	// (Keep).
	keep  time.Time
	timer *time.Timer
	// data is the transports' state of the session, by transport, kept across
	// connections (a slice: a session meets one or two transports).
	data []transportState
}

// transportState is a transport's state of a session.
type transportState struct{ transport, state any }

// Option configures a Hub.
type Option func(*Hub)

// WithGrace sets how long a session whose turn ended while no connection held it is
// kept, from the turn's end, for its client to reconnect and read the turn's end
// (default 30 s; give it the service's grace period, genui.WithGrace).
func WithGrace(d time.Duration) Option { return func(h *Hub) { h.grace = max(d, 0) } }

// New returns a Hub of svc's sessions. window is the reconnect window: how long a session
// waiting for its client tools is kept after its connection went, from the moment it
// began to wait.
func New(svc *genui.Service, window time.Duration, log *slog.Logger, opts ...Option) *Hub {
	if log == nil {
		log = slog.Default()
	}
	h := &Hub{svc: svc, window: window, grace: 30 * time.Second, log: log, m: make(map[string]*Session), owned: make(map[any][]*Session)}
	for _, o := range opts {
		o(h)
	}
	return h
}

// setOwner makes owner (nil: none) the owner of s. h.mu is held.
func (h *Hub) setOwner(s *Session, owner any) {
	if s.owner == owner {
		return
	}
	if set := h.owned[s.owner]; set != nil {
		if i := slices.Index(set, s); i >= 0 {
			set[i] = set[len(set)-1]
			set[len(set)-1] = nil
			set = set[:len(set)-1]
		}
		if len(set) == 0 {
			delete(h.owned, s.owner)
		} else {
			h.owned[s.owner] = set
		}
	}
	s.owner = owner
	if owner != nil {
		h.owned[owner] = append(h.owned[owner], s)
	}
}

// Data returns the state of s that transport (a key of the transport's own) keeps, made
// by mk the first time. Each transport has its own: a session may move between them.
func (h *Hub) Data(s *Session, transport any, mk func() any) any {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, d := range s.data {
		if d.transport == transport {
			return d.state
		}
	}
	d := mk()
	s.data = append(s.data, transportState{transport, d})
	return d
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
	s := h.sessionLocked(ctx, id, key)
	if s.owner != nil && s.owner != owner {
		return nil, ErrAttached
	}
	h.attachLocked(s, owner)
	return s, nil
}

// sessionLocked returns session key, added when the hub does not know it. h.mu is held.
func (h *Hub) sessionLocked(ctx context.Context, id, key string) *Session {
	s := h.m[key]
	if s == nil {
		s = &Session{ID: id, key: key, who: auth.FromContext(ctx)}
		h.m[key] = s
	}
	return s
}

// attachLocked makes owner the owner of s and stops its expiry. h.mu is held.
func (h *Hub) attachLocked(s *Session, owner any) {
	h.setOwner(s, owner)
	if s.timer != nil {
		s.timer.Stop()
		s.timer = nil
	}
}

// Prober is an owner whose connection can be checked: Alive reports whether it answers
// a ping before ctx ends, Drop closes it.
type Prober interface {
	Alive(ctx context.Context) bool
	Drop()
}

// Claim attaches session id to owner as Attach does, and takes it over from the owner
// that holds it when that owner is the same authenticated caller's connection (the
// client reconnected before the server noticed its old connection die), or when its
// connection does not answer a ping (a Prober; the caller's ctx bounds the wait): that
// connection is then closed. Otherwise a session another owner holds is ErrAttached:
// to the anonymous callers of a server without authentication, another open
// connection's session stays another client's.
func (h *Hub) Claim(ctx context.Context, id string, owner any) (*Session, error) {
	key := auth.Scope(ctx, id)
	who := auth.FromContext(ctx)
	h.mu.Lock()
	s := h.sessionLocked(ctx, id, key)
	old := s.owner
	if old == nil || old == owner || (!who.Anonymous() && s.who.ID == who.ID) {
		h.attachLocked(s, owner)
		h.mu.Unlock()
		return s, nil
	}
	h.mu.Unlock()
	p, ok := old.(Prober)
	if !ok || p.Alive(ctx) {
		return nil, ErrAttached
	}
	h.mu.Lock()
	if h.m[key] != s || (s.owner != old && s.owner != nil && s.owner != owner) {
		h.mu.Unlock()
		return nil, ErrAttached
	}
	h.attachLocked(s, owner)
	h.mu.Unlock()
	p.Drop()
	return s, nil
}

// Take attaches session id to owner even when another owner holds it (a client that
// reconnects before the server noticed its old connection die); the old owner's
// deliveries stop.
func (h *Hub) Take(ctx context.Context, id string, owner any) *Session {
	key := auth.Scope(ctx, id)
	h.mu.Lock()
	defer h.mu.Unlock()
	s := h.sessionLocked(ctx, id, key)
	h.attachLocked(s, owner)
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
	return slices.Clone(h.owned[owner])
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
	s.missed, s.keep = "", time.Time{}
	return true
}

// Missed returns the stream of the last turn of s whose end reached no client ("":
// none), and forgets it: the caller replays it to the client that attached s.
func (h *Hub) Missed(s *Session) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := s.missed
	s.missed, s.keep = "", time.Time{}
	return m
}

// Keep keeps s without an owner until the time until at least, even when it waits for
// nothing in the store (a transport's own suspension: a failed effect the client may
// retry); the zero time ends that. A new turn of s ends it too.
func (h *Hub) Keep(s *Session, until time.Time) {
	h.mu.Lock()
	s.keep = until
	h.mu.Unlock()
}

// Delivered records that the owner received the items of the running turn up to seq.
func (h *Hub) Delivered(s *Session, seq int) {
	h.mu.Lock()
	s.delivered = max(s.delivered, seq)
	h.mu.Unlock()
}

// Finished records that the last item of the session's turn (the running one, or one
// replayed) reached the owner of s: the session no longer runs it, though its producer
// may still be returning, and its client missed nothing.
func (h *Hub) Finished(s *Session) {
	h.mu.Lock()
	s.run, s.missed, s.keep = "", "", time.Time{}
	h.mu.Unlock()
}

// Ended records that the turn of stream ended; a session without an owner is then
// cleaned up. A turn whose end reached no owner (Finished was not called) is the
// session's missed turn: the session is kept for the grace period from now, so that a
// client that attaches it then replays the turn.
func (h *Hub) Ended(ctx context.Context, s *Session, stream string) {
	h.mu.Lock()
	if s.run == stream {
		s.run = ""
		s.missed = stream
		s.keep = time.Now().Add(h.grace)
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
		delete(h.m, s.key)
		h.setOwner(s, nil)
		if s.timer != nil {
			s.timer.Stop()
			s.timer = nil
		}
	}
}

// Detach lets go of owner's sessions, as its connection closes: each one that runs
// nothing here is cleaned up now, a running one when its turn ends (see cleanup).
func (h *Hub) Detach(ctx context.Context, owner any) {
	h.mu.Lock()
	var idle []*Session
	for _, s := range slices.Clone(h.owned[owner]) {
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
// waits for its client tools or the user's action until the end of the reconnect window,
// and one kept (a missed turn's end, a transport's Keep) until then.
func (h *Hub) cleanup(ctx context.Context, s *Session) {
	ctx = auth.NewContext(context.WithoutCancel(ctx), s.who)
	w, err := h.svc.SessionWaits(ctx, s.ID)
	switch {
	case err != nil && genui.AsError(err).Status == genui.StatusNotFound:
		h.Forget(s)
		return
	case err != nil && Inconsistent(err):
		// The stored session cannot be read: nothing can resume it.
		h.log.Warn("a closed connection's session cannot be read; deleting it", "session", s.ID, "err", err)
		h.Forget(s)
		h.closeInconsistent(ctx, s.ID)
		return
	case err != nil:
		// The store failed, or a turn of the session runs elsewhere: the store's expiry
		// ends it.
		h.log.Warn("a closed connection's session was kept", "session", s.ID, "err", err)
		h.Forget(s)
		return
	}
	var since, deadline time.Time
	if len(w.Calls) > 0 || len(w.Awaiting) > 0 {
		since = w.Since
		deadline = since.Add(h.window)
	}
	h.mu.Lock()
	if s.keep.After(deadline) {
		deadline = s.keep
	}
	h.mu.Unlock()
	if deadline.IsZero() {
		if err := h.svc.CloseSession(ctx, s.ID, time.Time{}); err != nil {
			h.log.Debug("a closed connection's session was not deleted", "session", s.ID, "err", err)
		}
		h.Forget(s)
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if s.owner != nil || h.m[s.key] != s || h.closed {
		return
	}
	if s.timer != nil {
		s.timer.Stop()
	}
	s.timer = time.AfterFunc(max(time.Until(deadline), 0), func() { h.expire(s, since) })
}

// expire deletes s when it still waits as it did (since; zero: for nothing), with no
// owner.
func (h *Hub) expire(s *Session, since time.Time) {
	h.mu.Lock()
	if s.owner != nil || h.m[s.key] != s {
		h.mu.Unlock()
		return
	}
	s.timer = nil
	delete(h.m, s.key)
	h.mu.Unlock()
	ctx, cancel := context.WithTimeout(auth.NewContext(context.Background(), s.who), 10*time.Second)
	defer cancel()
	if err := h.svc.CloseSession(ctx, s.ID, since); err != nil {
		h.log.Debug("an expired session was not deleted", "session", s.ID, "err", err)
	}
}

// Inconsistent reports whether err says that a session's stored state cannot be read
// (seed 004's "session state inconsistent"): no client can resume it, and it is deleted.
// A store that cannot be reached is not that: the session may be read later.
func Inconsistent(err error) bool {
	return errors.Is(err, genui.ErrUnreadable)
}

// Drop removes session id from the hub and deletes it from the store, as one whose state
// cannot be read (Inconsistent); ctx carries its caller.
func (h *Hub) Drop(ctx context.Context, id string) {
	key := auth.Scope(ctx, id)
	h.mu.Lock()
	if s := h.m[key]; s != nil {
		delete(h.m, key)
		h.setOwner(s, nil)
		if s.timer != nil {
			s.timer.Stop()
			s.timer = nil
		}
	}
	h.mu.Unlock()
	h.closeInconsistent(ctx, id)
}

// closeInconsistent deletes an inconsistent session from the store.
func (h *Hub) closeInconsistent(ctx context.Context, id string) {
	if err := h.svc.CloseSession(context.WithoutCancel(ctx), id, time.Time{}); err != nil {
		h.log.Debug("an inconsistent session was not deleted", "session", id, "err", err)
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

// Len returns the number of sessions the hub knows.
func (h *Hub) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.m)
}

// Waiting returns the number of sessions without a connection kept for their client to
// come back (each waiting for its client tools' results or the user's action, or for
// its client to read the end of a turn it missed).
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
