package genui

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/internal/ids"
	"github.com/genuiserver/genui/internal/jsonenc"
	"github.com/genuiserver/genui/quota"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/tools"
)

// A conversation the server holds (a request with a conversationId) is read from the
// conversation store when its turn is prepared, and held until the turn ends: the
// request's messages join the stored history, the model reads the whole, and the turn's
// output, as the client received it, is appended before the turn's result is written.
// A turn that fails or is cancelled appends nothing, so the client may send the same
// request again.

// heldKind names what a held conversation belongs to: "genui", or "a2ui/<version>".
func heldKind(a2uiVersion string) string {
	if a2uiVersion == "" {
		return "genui"
	}
	return "a2ui/" + a2uiVersion
}

func describeKind(kind string) string {
	if v, ok := strings.CutPrefix(kind, "a2ui/"); ok {
		return "/generateA2ui (A2UI " + v + ")"
	}
	return "/generateUi"
}

// held is a conversation held by one turn.
type held struct {
	id      string
	tag     string // the suffix of the call ids of this conversation
	kind    string
	version string // A2UI version of an A2UI conversation
	// model is the model the conversation's turns use: as stored, then as the turn chose.
	model   string
	hold    conversation.Hold
	history []schemas.Message
	pending []pendingCall
	// session is the spec of the session the conversation is, if it is one.
	session *SessionSpec
	// pendingRaw is what the conversation waited for, as stored (read by beginSession).
	pendingRaw []byte

	// appended is what the request adds to the history before the turn's output: its
	// messages, the first one holding every result of the calls the conversation waited
	// for.
	appended []schemas.Message
	// waiting, when set, is the calls still without a result after a request that
	// answered only some: the turn then makes no model call.
	waiting []pendingCall
	// out is what the turn sent the client, in order.
	out  []schemas.Event
	done bool
}

// pendingCall is a call a held conversation waits for, with the result the client sent
// for it when it has not answered every call yet.
type pendingCall struct {
	ID     string        `json:"callId"`
	Name   string        `json:"name"`
	Result *schemas.Part `json:"result,omitempty"`
}

// holdConversation holds the conversation id for a turn of the given kind and reads it.
// The store refuses a new conversation of a caller that has as many stored as its limit
// (conversation.WithCallerLimit): RESOURCE_EXHAUSTED.
func (s *Service) holdConversation(ctx context.Context, id, kind, version string) (*held, *Error) {
	st, hold, err := s.convs.Begin(ctx, auth.Scope(ctx, id))
	if errors.Is(err, conversation.ErrBusy) {
		return nil, (&Error{Status: StatusAborted, Message: "conversationId: another turn of this conversation is running; send the request again when it has ended",
			Details: map[string]any{"field": "conversationId"}}).WithCause(err)
	}
	var over *quota.Exceeded
	if errors.As(err, &over) {
		s.metrics.Limited(over.Limit)
		return nil, exhausted(over, "conversationId")
	}
	if err != nil {
		return nil, AsError(err)
	}
	h := &held{id: id, tag: callTag(id), kind: kind, version: version, model: st.Model, hold: hold}
	if len(st.History) > s.maxHeld {
		hold.Release()
		return nil, &Error{Status: StatusFailedPrecondition, Details: map[string]any{"field": "conversationId"},
			Message: fmt.Sprintf("conversationId: the conversation holds %d bytes of history, more than the %d a held conversation may; start another conversation", len(st.History), s.maxHeld)}
	}
	if st.Kind != "" && st.Kind != kind {
		hold.Release()
		return nil, fieldError("conversationId", "the conversation belongs to %s; continue it there, or start another conversation", describeKind(st.Kind))
	}
	if err := h.decode(st); err != nil {
		hold.Release()
		return nil, (&Error{Status: StatusInternal, Message: "conversationId: the stored conversation cannot be read: " + err.Error()}).WithCause(ErrUnreadable)
	}
	return h, nil
}

func (h *held) decode(st *conversation.State) error {
	if err := h.decodeHistory(st); err != nil {
		return err
	}
	return h.decodeMeta(st)
}

func (h *held) decodeHistory(st *conversation.State) error {
	for line := range bytes.Lines(st.History) {
		var m schemas.Message
		if err := json.Unmarshal(line, &m); err != nil {
			return fmt.Errorf("history: %w", err)
		}
		for _, p := range m.Parts {
			if (p.Type == schemas.PartUI || p.Type == schemas.PartUIDeleted) && p.Definition == nil {
				return fmt.Errorf("history: a %s part without its definition", p.Type)
			}
		}
		h.history = append(h.history, m)
	}
	return nil
}

// decodeMeta decodes what the conversation waits for and its session.
func (h *held) decodeMeta(st *conversation.State) error {
	if len(st.Pending) > 0 {
		if err := json.Unmarshal(st.Pending, &h.pending); err != nil {
			return fmt.Errorf("pending calls: %w", err)
		}
	}
	if st.Session != nil {
		h.session = &SessionSpec{}
		if err := json.Unmarshal(st.Session, h.session); err != nil {
			return fmt.Errorf("session: %w", err)
		}
	}
	return nil
}

// release lets the conversation go unchanged, unless the turn committed it.
func (h *held) release() {
	if h != nil && !h.done {
		h.done = true
		h.hold.Release()
	}
}

// callTag is the suffix of the ids of the calls made in a held conversation: who sends a
// result for a call of another conversation is told so.
func callTag(conversationID string) string {
	sum := sha256.Sum256([]byte("genui call\x00" + conversationID))
	return base64.RawURLEncoding.EncodeToString(sum[:6])
}

// isHeldCallID says whether id has the shape of newCallID's ids in a held conversation:
// 22 and 8 characters of base64url around a dot.
func isHeldCallID(id string) bool {
	rnd, tag, ok := strings.Cut(id, ".")
	if !ok || len(rnd) != 22 || len(tag) != 8 {
		return false
	}
	_, err1 := base64.RawURLEncoding.DecodeString(rnd)
	_, err2 := base64.RawURLEncoding.DecodeString(tag)
	return err1 == nil && err2 == nil
}

// newCallID returns the id of a new call of a client tool: random, with the tag of its
// conversation when it is held.
func newCallID(h *held) string {
	if h == nil {
		return ids.New()
	}
	return ids.New() + "." + h.tag
}

// rules are the rules the request's messages follow about calls: the first may answer
// the calls the conversation waits for, some of them or all.
func (h *held) rules() callRules {
	r := callRules{partial: true, unknown: h.unknownResult}
	for _, p := range h.pending {
		if p.Result == nil {
			r.prior = append(r.prior, call{ID: p.ID, Name: p.Name})
		}
	}
	return r
}

// unknownResult explains a result for a call the conversation does not wait for.
func (h *held) unknownResult(callID, field string) *Error {
	conflict := func(format string, args ...any) *Error {
		return &Error{Status: StatusAborted, Message: field + ": " + fmt.Sprintf(format, args...), Details: map[string]any{"field": field, "callId": callID}}
	}
	for _, p := range h.pending {
		if p.ID == callID {
			return conflict("the call %q was answered already; nothing was changed", callID)
		}
	}
	for i := range h.history {
		for _, p := range h.history[i].Parts {
			if p.Type == schemas.PartToolCall && p.CallID == callID {
				return conflict("the call %q was answered already; nothing was changed", callID)
			}
		}
	}
	if isHeldCallID(callID) && !strings.HasSuffix(callID, "."+h.tag) {
		return conflict("the call %q belongs to another conversation; nothing was changed", callID)
	}
	return fieldError(field, "no call %q waits for a result in this conversation", callID)
}

// merge returns the conversation the model reads: the history, then the request's
// messages, whose first one gets every result of the calls the conversation waited for
// ("not answered" for those a new user message left without one). A request that is
// nothing but some of the results sets h.waiting instead.
func (h *held) merge(conv []schemas.Message) []schemas.Message {
	h.appended = conv
	if len(h.pending) > 0 {
		first := conv[0]
		results := map[string]*schemas.Part{}
		var others []schemas.Part
		for j := range first.Parts {
			if p := &first.Parts[j]; p.Type == schemas.PartToolResult {
				results[p.CallID] = p
			} else {
				others = append(others, *p)
			}
		}
		merged := schemas.Message{Role: "user"}
		var waiting []pendingCall
		for _, p := range h.pending {
			r := p.Result
			if r == nil {
				r = results[p.ID]
			}
			if r == nil && len(others) == 0 && len(conv) == 1 {
				waiting = append(waiting, p)
				continue
			}
			if r == nil {
				r = &schemas.Part{Type: schemas.PartToolResult, CallID: p.ID, Name: p.Name, Error: "not answered: the user sent a new message instead"}
			}
			merged.Parts = append(merged.Parts, *r)
		}
		if waiting != nil {
			// Keep the results sent so far for when the last one comes.
			for i := range h.pending {
				if r := results[h.pending[i].ID]; r != nil {
					h.pending[i].Result = r
				}
			}
			h.waiting = waiting
			return nil
		}
		merged.Parts = append(merged.Parts, others...)
		h.appended = append([]schemas.Message{merged}, conv[1:]...)
	}
	full := make([]schemas.Message, 0, len(h.history)+len(h.appended))
	return append(append(full, h.history...), h.appended...)
}

// waitingCalls returns the calls still without a result as the interrupts of the turn's
// result, with the input the history holds for each.
func (h *held) waitingCalls() []schemas.ToolCall {
	out := make([]schemas.ToolCall, 0, len(h.waiting))
	for _, w := range h.waiting {
		tc := schemas.ToolCall{CallID: w.ID, Name: w.Name, Input: json.RawMessage(`{}`)}
		for i := len(h.history) - 1; i >= 0; i-- {
			for _, p := range h.history[i].Parts {
				if p.Type == schemas.PartToolCall && p.CallID == w.ID {
					if len(p.Input) > 0 {
						tc.Input = json.RawMessage(p.Input)
					}
					tc.Signature = p.Signature
				}
			}
		}
		out = append(out, tc)
	}
	return out
}

// record wraps emit to keep what the turn sends.
func (h *held) record(emit func(context.Context, schemas.Event) error) func(context.Context, schemas.Event) error {
	return func(ctx context.Context, ev schemas.Event) error {
		h.out = append(h.out, ev)
		return emit(ctx, ev)
	}
}

// commit stores the turn: what the request added and the turn's output are appended, and
// the calls the turn made are what the conversation now waits for.
func (h *held) commit(ctx context.Context, calls []schemas.ToolCall) error {
	var pending []pendingCall
	var lines []byte
	if h.waiting != nil {
		pending = h.pending
	} else {
		for _, c := range calls {
			pending = append(pending, pendingCall{ID: c.CallID, Name: c.Name})
		}
		for i := range h.appended {
			var err error
			if lines, err = appendLine(lines, &h.appended[i]); err != nil {
				return err
			}
		}
		if out := h.output(); len(out.Parts) > 0 {
			var err error
			if lines, err = appendLine(lines, &out); err != nil {
				return err
			}
		}
	}
	var enc []byte
	if len(pending) > 0 {
		var err error
		if enc, err = jsonenc.Marshal(pending); err != nil {
			return err
		}
	}
	u := conversation.Update{Kind: h.kind, Model: h.model, Append: lines, Pending: enc}
	if h.session != nil {
		// A session remembers since when it waits, for a client that comes back.
		sp := *h.session
		sp.Suspended, sp.Awaiting = 0, nil
		if len(pending) > 0 {
			sp.Suspended = time.Now().UnixMilli()
		}
		var err error
		if u.Session, err = json.Marshal(&sp); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	h.done = true
	if err := h.hold.Commit(ctx, u); err != nil {
		return &Error{Status: StatusUnavailable, Message: "the conversation could not be stored, so this turn is not part of it; send the request again: " + err.Error()}
	}
	return nil
}

func appendLine(b []byte, m *schemas.Message) ([]byte, error) {
	enc, err := jsonenc.Marshal(m)
	if err != nil {
		return nil, fmt.Errorf("encoding a message of the conversation: %w", err)
	}
	return append(append(b, enc...), '\n'), nil
}

// output is the model message the turn adds to the history: what the client received.
// A genui turn's text comes first, then the surfaces of earlier turns it deleted, then
// each surface it showed, at its latest version (none it deleted), then its calls of
// client tools; an A2UI turn's text and A2UI
// messages keep their order, each run of A2UI messages compacted (each component once,
// at its latest version), then its calls.
func (h *held) output() schemas.Message {
	m := schemas.Message{Role: "model"}
	var calls []schemas.Part
	if h.version != "" {
		var block []json.RawMessage
		flush := func() {
			for _, msg := range a2ui.Compact(h.version, block) {
				m.Parts = append(m.Parts, schemas.Part{Type: schemas.PartA2UI, Message: schemas.Object(msg)})
			}
			block = nil
		}
		for _, ev := range h.out {
			switch ev.Type {
			case schemas.EventA2UI:
				block = append(block, ev.A2UI)
			case schemas.EventText:
				flush()
				if n := len(m.Parts); n > 0 && m.Parts[n-1].Type == schemas.PartText {
					m.Parts[n-1].Text += ev.Text
				} else {
					m.Parts = append(m.Parts, schemas.Part{Type: schemas.PartText, Text: ev.Text})
				}
			case schemas.EventToolCall:
				calls = append(calls, toolCallOf(ev.ToolCall))
			}
		}
		flush()
		m.Parts = append(m.Parts, calls...)
		return m
	}
	var text strings.Builder
	var order, deleted []string
	shown := map[string]*schemas.SurfaceDefinition{}
	for _, ev := range h.out {
		switch ev.Type {
		case schemas.EventText:
			text.WriteString(ev.Text)
		case schemas.EventToolCall:
			calls = append(calls, toolCallOf(ev.ToolCall))
		case schemas.EventToolRequest:
			var in struct {
				SurfaceID  string `json:"surfaceId"`
				Definition struct {
					Root    string           `json:"root"`
					Widgets []map[string]any `json:"widgets"`
				} `json:"definition"`
			}
			if json.Unmarshal(ev.ToolRequest.Input, &in) != nil {
				continue
			}
			if ev.ToolRequest.Name == tools.DeleteSurface {
				delete(shown, in.SurfaceID)
				if !slices.Contains(deleted, in.SurfaceID) {
					deleted = append(deleted, in.SurfaceID)
				}
				continue
			}
			deleted = slices.DeleteFunc(deleted, func(id string) bool { return id == in.SurfaceID })
			if _, ok := shown[in.SurfaceID]; !ok {
				order = append(order, in.SurfaceID)
			}
			shown[in.SurfaceID] = &schemas.SurfaceDefinition{SurfaceID: in.SurfaceID, Root: in.Definition.Root, Widgets: in.Definition.Widgets}
		}
	}
	if text.Len() > 0 {
		m.Parts = append(m.Parts, schemas.Part{Type: schemas.PartText, Text: text.String()})
	}
	if len(deleted) > 0 {
		// A surface of an earlier turn that this one deleted is gone from the client:
		// the history says so, or the next turns would read it as shown.
		live := h.liveSurfaces()
		for _, id := range deleted {
			if live[id] {
				m.Parts = append(m.Parts, schemas.Part{Type: schemas.PartUIDeleted, Definition: &schemas.SurfaceDefinition{SurfaceID: id}})
			}
		}
	}
	for _, id := range order {
		if d := shown[id]; d != nil {
			m.Parts = append(m.Parts, schemas.Part{Type: schemas.PartUI, Definition: d})
		}
	}
	m.Parts = append(m.Parts, calls...)
	return m
}

// liveSurfaces returns the surfaces of a genui conversation's history, and of the
// request's messages, that no later turn deleted.
func (h *held) liveSurfaces() map[string]bool {
	live := map[string]bool{}
	for _, ms := range [][]schemas.Message{h.history, h.appended} {
		for i := range ms {
			for _, p := range ms[i].Parts {
				switch {
				case p.Definition == nil:
				case p.Type == schemas.PartUI:
					live[p.Definition.SurfaceID] = true
				case p.Type == schemas.PartUIDeleted:
					delete(live, p.Definition.SurfaceID)
				}
			}
		}
	}
	return live
}

func toolCallOf(c *schemas.ToolCall) schemas.Part {
	return schemas.Part{Type: schemas.PartToolCall, CallID: c.CallID, Name: c.Name, Input: schemas.Object(c.Input), Signature: c.Signature}
}
