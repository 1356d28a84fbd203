package genui

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/quota"
	"github.com/genuiserver/genui/schemas"
)

// A session the server keeps for a client (a WebSocket session, an interaction that
// yields to the client) is a conversation the server holds, whose id is the session's,
// together with what each of its turns asks for: the UI format and the client tools.
// Both live in the conversation store, so a session waiting for the results of its calls
// costs no goroutine, and any replica sharing the store continues it.

// SessionSpec is what each turn of a session asks for. Exactly one of Generate and A2UI
// is set; their Conversation and ConversationID are not used.
type SessionSpec struct {
	// Generate makes the session's turns genui turns: its SessionID or Catalog,
	// ClientTools and ClosingMessage.
	Generate *schemas.GenerateRequest `json:"generate,omitempty"`
	// A2UI makes them A2UI turns: its Version, SessionID or A2UIClientCapabilities,
	// A2UIClientDataModel and ClientTools.
	A2UI *schemas.GenerateA2UIRequest `json:"a2ui,omitempty"`
	// Suspended is when the session's last turn ended waiting for the results of its
	// calls, or began to wait for the user's action (Unix milliseconds), 0 when it waits
	// for nothing. The service sets it.
	Suspended int64 `json:"suspended,omitempty"`
	// YieldActions makes a turn that shows surfaces wait for the user's action on them
	// ([Service.AwaitAction]), so that one session runs a whole interaction.
	YieldActions bool `json:"yieldActions,omitempty"`
	// Awaiting is the surfaces the session's last turn showed, on which it waits for the
	// user's action; the next turn clears it. The service sets it.
	Awaiting []string `json:"awaiting,omitempty"`
}

// SessionWait is what a session waits for.
type SessionWait struct {
	// Calls are the calls of client tools without a result, each with its input.
	Calls []schemas.ToolCall
	// Awaiting is the surfaces on which the session waits for the user's action.
	Awaiting []string
	// Since is when it began to wait; zero when it waits for nothing.
	Since time.Time
	// YieldActions is the session's: its turns that show surfaces wait for an action.
	YieldActions bool
}

func (sp *SessionSpec) kind() (kind, version string) {
	if sp.A2UI != nil {
		v := sp.A2UI.Version
		if v == "" {
			v = "v0.9"
		}
		return heldKind(v), v
	}
	return heldKind(""), ""
}

// OpenSession starts session id (a conversation id) with spec, or gives a session that
// waits for nothing a new spec; its history stays. The spec is checked as a turn's
// request is (the catalog or capabilities, the client tools) without a model call.
func (s *Service) OpenSession(ctx context.Context, id string, spec *SessionSpec) error {
	if spec == nil || (spec.Generate == nil) == (spec.A2UI == nil) {
		return fieldError("session", "give the session either a genui request or an A2UI request")
	}
	if !conversation.ValidID(id) {
		return fieldError("session", "the session id must be 8 to 128 characters of A-Z a-z 0-9 . _ -")
	}
	probe := []schemas.Message{{Role: "user", Parts: []schemas.Part{{Type: schemas.PartText, Text: "-"}}}}
	var t *turn
	var err error
	if spec.Generate != nil {
		req := *spec.Generate
		req.Conversation, req.ConversationID = probe, ""
		t, err = s.prepare(ctx, &req)
	} else {
		req := *spec.A2UI
		req.Conversation, req.ConversationID = probe, ""
		t, err = s.prepareA2UI(ctx, &req)
	}
	if err != nil {
		return err
	}
	t.end()

	kind, version := spec.kind()
	h, e := s.holdConversation(ctx, id, kind, version)
	if e != nil {
		return e
	}
	defer h.release()
	for _, p := range h.pending {
		if p.Result == nil {
			return &Error{Status: StatusFailedPrecondition, Message: "session: the session waits for the results of its calls; answer them first",
				Details: map[string]any{"field": "session", "callId": p.ID}}
		}
	}
	stored := *spec
	stored.Suspended, stored.Awaiting = 0, nil
	enc, err := json.Marshal(&stored)
	if err != nil {
		return err
	}
	h.done = true
	if err := h.hold.Commit(context.WithoutCancel(ctx), conversation.Update{Kind: kind, Model: h.model, Session: enc}); err != nil {
		return &Error{Status: StatusUnavailable, Message: "session: the session could not be stored: " + err.Error()}
	}
	return nil
}

// TurnOption sets something of one turn of a session.
type TurnOption func(*turnOptions)

type turnOptions struct{ model string }

// WithTurnModel names the model of the turn, as a request's model field does: the
// session keeps it for the turns after.
func WithTurnModel(name string) TurnOption { return func(o *turnOptions) { o.model = name } }

// SessionTurn starts the next turn of session id: its messages are msgs, the new ones
// (the user's content; the results of the calls the session waits for). An unknown or
// expired session is a NOT_FOUND *Error. The turn's model is the one opts name, else the
// one the session's turns used last, else its spec's, else the caller's default.
func (s *Service) SessionTurn(ctx context.Context, id string, msgs []schemas.Message, opts ...TurnOption) (*Stream, error) {
	spec, h, err := s.peekSession(ctx, id)
	if err != nil {
		return nil, err
	}
	var o turnOptions
	for _, opt := range opts {
		opt(&o)
	}
	if spec.A2UI != nil {
		req := *spec.A2UI
		req.Conversation, req.ConversationID = msgs, id
		req.Model = sessionModel(o.model, h.model, req.Model)
		return s.StreamA2UI(ctx, &req)
	}
	req := *spec.Generate
	req.Conversation, req.ConversationID = msgs, id
	req.Model = sessionModel(o.model, h.model, req.Model)
	return s.Stream(ctx, &req)
}

// sessionModel is the model a session's turn names: the turn's own, else none (the one
// the session used last is kept), else, before the session's first turn, its spec's.
func sessionModel(named, kept, spec string) string {
	if named != "" || kept != "" {
		return named
	}
	return spec
}

// SetSessionModel makes model (as a request's model field names it) the model of the
// next turns of session id. A model the caller may not choose is INVALID_ARGUMENT naming
// model; a session whose turn runs is ABORTED.
func (s *Service) SetSessionModel(ctx context.Context, id, model string) error {
	m, e := s.modelFor(ctx, model, "")
	if e != nil {
		return e
	}
	h, hold, err := s.beginSession(ctx, id)
	if err != nil {
		return err
	}
	if err := hold.Commit(context.WithoutCancel(ctx), conversation.Update{Kind: h.kind, Model: m.Name(), Pending: h.pendingRaw}); err != nil {
		return &Error{Status: StatusUnavailable, Message: "session: the session could not be stored: " + err.Error()}
	}
	return nil
}

// SessionCalls returns the calls of client tools session id waits for (none when it waits
// for nothing), each with its input, and since when it waits.
func (s *Service) SessionCalls(ctx context.Context, id string) (calls []schemas.ToolCall, since time.Time, err error) {
	w, err := s.SessionWaits(ctx, id)
	if err != nil || len(w.Calls) == 0 {
		return nil, time.Time{}, err
	}
	return w.Calls, w.Since, nil
}

// SessionWaits returns what session id waits for: the results of its calls, or the
// user's action on the surfaces its last turn showed.
func (s *Service) SessionWaits(ctx context.Context, id string) (*SessionWait, error) {
	spec, h, err := s.peekSession(ctx, id)
	if err != nil {
		return nil, err
	}
	w := &SessionWait{YieldActions: spec.YieldActions}
	if len(h.waiting) > 0 {
		w.Calls = h.waitingCalls()
	} else {
		w.Awaiting = spec.Awaiting
	}
	if (len(w.Calls) > 0 || len(w.Awaiting) > 0) && spec.Suspended > 0 {
		w.Since = time.UnixMilli(spec.Suspended)
	}
	return w, nil
}

// AwaitAction records that session id waits for the user's action on surfaces (none:
// that it no longer does), and returns since when. A session that waits for the results
// of its calls is FAILED_PRECONDITION.
func (s *Service) AwaitAction(ctx context.Context, id string, surfaces []string) (time.Time, error) {
	h, hold, err := s.beginSession(ctx, id)
	if err != nil {
		return time.Time{}, err
	}
	if len(h.waiting) > 0 {
		hold.Release()
		return time.Time{}, &Error{Status: StatusFailedPrecondition, Message: "session: the session waits for the results of its calls", Details: map[string]any{"field": "session", "callId": h.waiting[0].ID}}
	}
	sp := *h.session
	sp.Awaiting, sp.Suspended = surfaces, 0
	var since time.Time
	if len(surfaces) > 0 {
		since = time.UnixMilli(time.Now().UnixMilli())
		sp.Suspended = since.UnixMilli()
	}
	enc, err := json.Marshal(&sp)
	if err != nil {
		hold.Release()
		return time.Time{}, err
	}
	if err := hold.Commit(context.WithoutCancel(ctx), conversation.Update{Kind: h.kind, Model: h.model, Pending: h.pendingRaw, Session: enc}); err != nil {
		return time.Time{}, &Error{Status: StatusUnavailable, Message: "session: the session could not be stored: " + err.Error()}
	}
	return since, nil
}

// peekSession reads session id without holding it: readers never keep a turn, or each
// other, off the session.
func (s *Service) peekSession(ctx context.Context, id string) (*SessionSpec, *held, error) {
	if !conversation.ValidID(id) {
		return nil, nil, errUnknownSession()
	}
	st, err := s.convs.Peek(ctx, auth.Scope(ctx, id))
	if err != nil {
		return nil, nil, sessionStoreError(err)
	}
	h, err := readSession(id, st)
	if err != nil {
		return nil, nil, err
	}
	return h.session, h, nil
}

// beginSession holds session id and reads what it waits for and its spec; its history
// only when it waits for calls, whose inputs are there. An unknown session is NOT_FOUND,
// one whose turn runs ABORTED.
func (s *Service) beginSession(ctx context.Context, id string) (*held, conversation.Hold, error) {
	if !conversation.ValidID(id) {
		return nil, nil, errUnknownSession()
	}
	st, hold, err := s.convs.Begin(ctx, auth.Scope(ctx, id))
	var over *quota.Exceeded
	if errors.As(err, &over) {
		// Only a new conversation is refused by its caller's limit: no such session.
		return nil, nil, errUnknownSession()
	}
	if err != nil {
		return nil, nil, sessionStoreError(err)
	}
	h, err := readSession(id, st)
	if err != nil {
		hold.Release()
		return nil, nil, err
	}
	return h, hold, nil
}

func errUnknownSession() *Error {
	return &Error{Status: StatusNotFound, Message: "session: unknown or expired session", Details: map[string]any{"field": "session"}}
}

func sessionStoreError(err error) *Error {
	if errors.Is(err, conversation.ErrBusy) {
		return (&Error{Status: StatusAborted, Message: "session: a turn of the session is running; wait for its end", Details: map[string]any{"field": "session"}}).WithCause(err)
	}
	return AsError(err)
}

// readSession decodes a session's stored state: what it waits for and its spec; its
// history only when it waits for calls, whose inputs are there.
func readSession(id string, st *conversation.State) (*held, error) {
	if st.Session == nil {
		return nil, errUnknownSession()
	}
	h := &held{id: id, tag: callTag(id), kind: st.Kind, model: st.Model, done: true, pendingRaw: st.Pending}
	err := h.decodeMeta(st)
	for _, p := range h.pending {
		if p.Result == nil {
			h.waiting = append(h.waiting, p)
		}
	}
	if err == nil && len(h.waiting) > 0 {
		err = h.decodeHistory(st)
	}
	if err != nil || h.session == nil {
		return nil, (&Error{Status: StatusInternal, Message: "session: the stored session cannot be read"}).WithCause(ErrUnreadable)
	}
	return h, nil
}

// ErrUnreadable is the cause of the INTERNAL error about a stored conversation or
// session whose state cannot be read (errors.Is): its state is inconsistent, and reading
// it again will not help, unlike a store that cannot be reached.
var ErrUnreadable = errors.New("the stored state cannot be read")

// CloseSession deletes session id, its conversation included, if it waits for the
// results of its calls or the user's action since exactly since, or, when since is zero, if it waits for
// nothing; a session whose stored state cannot be read (ErrUnreadable) whatever it
// waited for. A session in another state is left alone: a FAILED_PRECONDITION *Error. A
// session whose turn runs is ABORTED; an unknown one NOT_FOUND.
func (s *Service) CloseSession(ctx context.Context, id string, since time.Time) error {
	if !conversation.ValidID(id) {
		return errUnknownSession()
	}
	st, hold, err := s.convs.Begin(ctx, auth.Scope(ctx, id))
	if err != nil {
		return sessionStoreError(err)
	}
	h, err := readSession(id, st)
	if errors.Is(err, ErrUnreadable) {
		// Nothing can continue it: it goes, whatever it waited for.
		if err := hold.Delete(ctx); err != nil {
			return AsError(err)
		}
		return nil
	}
	if err != nil {
		hold.Release()
		return err
	}
	waiting := len(h.waiting) > 0 || len(h.session.Awaiting) > 0
	var at time.Time
	if waiting && h.session.Suspended > 0 {
		at = time.UnixMilli(h.session.Suspended)
	}
	if waiting == since.IsZero() || !at.Equal(since) {
		hold.Release()
		return &Error{Status: StatusFailedPrecondition, Message: "session: the session changed; it was not closed", Details: map[string]any{"field": "session"}}
	}
	if err := hold.Delete(ctx); err != nil {
		return AsError(err)
	}
	return nil
}
