package wsapi

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/jsonenc"
	"github.com/genuiserver/genui/internal/ndjson"
	"github.com/genuiserver/genui/internal/sessionhub"
	"github.com/genuiserver/genui/schemas"
)

// block is a prompt's content block (ACP's, and the service's UI parts).
type block struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
	Resource *struct {
		URI      string `json:"uri,omitempty"`
		Text     string `json:"text,omitempty"`
		Blob     string `json:"blob,omitempty"`
		MimeType string `json:"mimeType,omitempty"`
	} `json:"resource,omitempty"`
	Event   *schemas.UIEvent `json:"event,omitempty"`
	Message schemas.Object   `json:"message,omitempty"`
}

type promptParams struct {
	sessionParams
	Prompt []block `json:"prompt,omitempty"`
}

// parts maps content blocks to a user message's parts.
func parts(blocks []block) ([]schemas.Part, *rpcError) {
	if len(blocks) == 0 {
		return nil, invalidParams("prompt", "required: at least one content block")
	}
	out := make([]schemas.Part, 0, len(blocks))
	for i, b := range blocks {
		f := "prompt[" + itoa(i) + "]"
		switch b.Type {
		case "text":
			out = append(out, schemas.Part{Type: schemas.PartText, Text: b.Text})
		case "image":
			if b.Data == "" && b.URI == "" {
				return nil, invalidParams(f+".data", "an image needs data (base64) with mimeType, or uri")
			}
			out = append(out, schemas.Part{Type: schemas.PartImage, Base64: b.Data, MimeType: b.MimeType, URL: b.URI})
		case "resource":
			if b.Resource == nil || (b.Resource.Text == "" && b.Resource.Blob == "") {
				return nil, invalidParams(f+".resource", "a resource needs text or blob")
			}
			if b.Resource.Text != "" {
				out = append(out, schemas.Part{Type: schemas.PartText, Text: b.Resource.Text})
			} else {
				out = append(out, schemas.Part{Type: schemas.PartImage, Base64: b.Resource.Blob, MimeType: b.Resource.MimeType})
			}
		case "resource_link":
			out = append(out, schemas.Part{Type: schemas.PartText, Text: "[" + b.Name + "](" + b.URI + ")"})
		case schemas.PartUIEvent:
			out = append(out, schemas.Part{Type: schemas.PartUIEvent, Event: b.Event})
		case "a2ui":
			out = append(out, schemas.Part{Type: "a2ui", Message: b.Message})
		case "":
			return nil, invalidParams(f+".type", "required: text, image, resource, resource_link, uiEvent or a2ui")
		default:
			return nil, invalidParams(f+".type", strconv.Quote(b.Type)+" is not supported: send text, image, resource, resource_link, uiEvent or a2ui")
		}
	}
	return out, nil
}

// renamePrompt names the fields of a prompt's turn as the prompt does.
func renamePrompt(f string) string {
	if rest, ok := strings.CutPrefix(f, "conversation[0].parts["); ok {
		return "prompt[" + rest
	}
	return f
}

func (c *rpcConn) prompt(params json.RawMessage, r *reply, f *flavour) {
	var p promptParams
	id, e := decodeSession(params, &p, promptSchema, f)
	if e != nil {
		r.send(nil, e)
		return
	}
	ps, e := parts(p.Prompt)
	if e != nil {
		r.send(nil, e)
		return
	}
	s := c.s.hub.Owned(c.ctx, id, c)
	if s == nil {
		r.send(nil, notFound(id))
		return
	}
	st := c.stateOf(s)
	st.mu.Lock()
	busy := st.end != nil
	if !busy {
		st.end, st.flavour = r, f
		if r == nil {
			st.end = &reply{} // a notification's turn: its end goes nowhere, but it holds the session
		}
	}
	st.mu.Unlock()
	if busy {
		r.send(nil, &rpcError{Code: codeBusy, Message: "session busy: a prompt of the session is running or waits for its client tools; wait for its end, or cancel it",
			Data: map[string]any{"status": "ABORTED", "session_id": id}})
		return
	}
	c.startTurn(s, []schemas.Message{{Role: "user", Parts: ps}}, renamePrompt)
}

// startTurn runs a turn of s with msgs; its end answers the session's waiting request.
func (c *rpcConn) startTurn(s *sessionhub.Session, msgs []schemas.Message, rename func(string) string) {
	st := c.stateOf(s)
	c.mu.Lock()
	over := c.turns >= c.s.maxTurns
	if !over {
		c.turns++
	}
	c.mu.Unlock()
	if over {
		st.finish(nil, &rpcError{Code: codeLimit, Message: "a connection runs at most " + itoa(c.s.maxTurns) + " turns at once",
			Data: map[string]any{"status": "RESOURCE_EXHAUSTED", "limit": c.s.maxTurns}})
		return
	}
	stream, err := c.s.svc.SessionTurn(c.ctx, s.ID, msgs)
	if err != nil {
		c.mu.Lock()
		c.turns--
		c.mu.Unlock()
		if sessionhub.Inconsistent(err) {
			c.s.hub.Drop(c.ctx, s.ID)
		}
		st.finish(nil, fromService(err, rename))
		return
	}
	c.s.hub.Started(s, stream.ID())
	// The connection's count of turns drops when the turn's last item arrives, before the
	// client reads the end and may start the next one; at the latest when the turn ends.
	var released sync.Once
	release := func() {
		released.Do(func() {
			c.mu.Lock()
			c.turns--
			c.mu.Unlock()
		})
	}
	go func() {
		defer func() {
			release()
			c.s.hub.Ended(c.ctx, s, stream.ID())
		}()
		stream.Each(c.ctx, func(it genui.Item) error {
			if it.Final() {
				release()
			}
			return c.forward(s, it)
		})
	}()
}

var errDetached = errors.New("the session's connection changed")

// forward passes an item of a session's turn to the client while the session is this
// connection's; the final item ends the turn.
func (c *rpcConn) forward(s *sessionhub.Session, it genui.Item) error {
	if !c.s.hub.Owner(s, c) {
		return errDetached
	}
	st := c.stateOf(s)
	if it.Event != nil {
		if it.Event.Type == schemas.EventToolCall {
			return nil // the call is a client_tool request when the turn ends
		}
		if !c.write(appendUpdate(nil, s.ID, it, st.flavourOf())) {
			return errDetached
		}
		c.s.hub.Delivered(s, it.Seq)
		return nil
	}
	c.s.hub.Delivered(s, it.Seq)
	c.s.hub.Finished(s)
	c.ended(s, it)
	return nil
}

// flavourOf returns the flavour of the session's updates and requests.
func (st *state) flavourOf() *flavour {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.flavour
}

// appendUpdate appends an event's session update notification, in flavour f.
func appendUpdate(b []byte, id string, it genui.Item, f *flavour) []byte {
	ev := it.Event
	b = f.appendSeq(b, id, it.Seq)
	if ev.Type == schemas.EventText {
		return f.appendText(b, ev.Text)
	}
	b = append(b, f.uiHead...)
	b = ndjson.AppendEvent(b, ev)
	return append(b, "}}}"...)
}

// ended handles the end of a turn of s: the client tool requests of the calls it waits
// for, or the end of the interaction.
func (c *rpcConn) ended(s *sessionhub.Session, it genui.Item) {
	st := c.stateOf(s)
	if it.Err != nil {
		if it.Err.Status == genui.StatusCancelled {
			st.finish(st.flavourOf().stopReason("cancelled"), nil)
			return
		}
		st.finish(nil, fromService(it.Err, renamePrompt))
		return
	}
	var res struct {
		FinishReason string `json:"finishReason"`
	}
	json.Unmarshal(it.Result, &res)
	if res.FinishReason == schemas.FinishInterrupted {
		calls, _, err := c.s.svc.SessionCalls(context.WithoutCancel(c.ctx), s.ID)
		if err != nil {
			st.finish(nil, fromService(err, renamePrompt))
			return
		}
		if len(calls) > 0 {
			c.request(s, calls)
			return
		}
	}
	reason := "end_turn"
	switch res.FinishReason {
	case "length":
		reason = "max_tokens"
	case "blocked":
		reason = "refusal"
	}
	st.finish(st.flavourOf().stopReason(reason), nil)
}

// finish answers the request waiting for the interaction's end.
func (st *state) finish(result []byte, err *rpcError) {
	st.mu.Lock()
	r := st.end
	st.end, st.calls, st.results = nil, nil, nil
	st.mu.Unlock()
	r.send(result, err)
}

// request sends the client a client_tool request for each call s waits for.
func (c *rpcConn) request(s *sessionhub.Session, calls []schemas.ToolCall) {
	st := c.stateOf(s)
	st.mu.Lock()
	st.calls, st.results = calls, nil
	f := st.flavour
	st.mu.Unlock()
	for _, tc := range calls {
		var b []byte
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = jsonenc.AppendString(b, "call:"+tc.CallID)
		b = append(b, f.toolHead...)
		b = append(b, s.ID...)
		b = append(b, f.toolCall...)
		b = jsonenc.AppendString(b, tc.CallID)
		b = append(b, `,"name":`...)
		b = jsonenc.AppendString(b, tc.Name)
		b = append(b, `,"input":`...)
		in := tc.Input
		if len(in) == 0 {
			in = json.RawMessage("{}")
		}
		b = append(b, in...)
		b = append(b, "}}"...)
		if !c.write(b) {
			return
		}
	}
}

// answer takes the client's response to a client_tool request: once every call of the
// session has its answer, the turn continues.
func (c *rpcConn) answer(id json.RawMessage, result json.RawMessage, rerr *struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}) {
	var sid string
	if json.Unmarshal(id, &sid) != nil || !strings.HasPrefix(sid, "call:") {
		c.s.log.Debug("a /ws response to no request", "id", string(id))
		return
	}
	callID := strings.TrimPrefix(sid, "call:")
	for _, s := range c.s.hub.Sessions(c) {
		st := c.stateOf(s)
		st.mu.Lock()
		var tc *schemas.ToolCall
		for i := range st.calls {
			if st.calls[i].CallID == callID {
				tc = &st.calls[i]
			}
		}
		if tc == nil {
			st.mu.Unlock()
			continue
		}
		p := schemas.Part{Type: schemas.PartToolResult, CallID: tc.CallID, Name: tc.Name}
		switch {
		case rerr != nil:
			p.Error = rerr.Message
			if p.Error == "" {
				p.Error = "error " + itoa(rerr.Code)
			}
		case isNull(result):
			p.Output = json.RawMessage("null")
		default:
			p.Output = result
		}
		if st.results == nil {
			st.results = map[string]schemas.Part{}
		}
		st.results[callID] = p
		var msg []schemas.Part
		if len(st.results) == len(st.calls) {
			for _, call := range st.calls {
				msg = append(msg, st.results[call.CallID])
			}
			st.calls, st.results = nil, nil
		}
		st.mu.Unlock()
		if msg != nil {
			c.startTurn(s, []schemas.Message{{Role: "user", Parts: msg}}, sameField)
		}
		return
	}
	c.s.log.Debug("a /ws response to a request no longer waiting", "id", sid)
}

// loadSession answers load_session: see load.
func (c *rpcConn) loadSession(params json.RawMessage, r *reply, f *flavour) {
	c.load(params, r, f, false)
}

// resumeSession answers resume_session: load, for a session that runs or waits.
func (c *rpcConn) resumeSession(params json.RawMessage, r *reply, f *flavour) {
	c.load(params, r, f, true)
}

// load attaches a session to this connection: a running turn is replayed and followed,
// the calls it waits for are requested again, and r is answered when the interaction
// ends; an idle session is answered at once (resume: a "not waiting" error).
func (c *rpcConn) load(params json.RawMessage, r *reply, f *flavour, resume bool) {
	var p sessionParams
	id, e := decodeSession(params, &p, sessionSchema, f)
	if e != nil {
		r.send(nil, e)
		return
	}
	if p.After < 0 {
		r.send(nil, invalidParams("after", "must not be negative"))
		return
	}
	// A session another connection holds is taken over when that connection is the same
	// authenticated caller's, or does not answer a ping (a half-open connection).
	s, err := c.s.hub.Claim(c.ctx, id, c)
	if err != nil {
		r.send(nil, notFound(id))
		return
	}
	st := c.stateOf(s)
	busy := &rpcError{Code: codeBusy, Message: "session busy: another request of this connection follows the session", Data: map[string]any{"status": "ABORTED"}}
	// follow replays the turn of stream from its durable log after the client's first
	// after items, then follows it live; the turn's end answers r.
	follow := func(stream string) (bool, error) {
		rd, err := c.s.svc.Resume(c.ctx, stream, p.After)
		if err != nil {
			return false, err
		}
		if !st.take(r, f, id) {
			rd.Close()
			r.send(nil, busy)
			return true, nil
		}
		go func() {
			defer rd.Close()
			rd.Each(c.ctx, func(it genui.Item) error { return c.forward(s, it) })
		}()
		return true, nil
	}
	if stream, _ := c.s.hub.Running(s); stream != "" {
		if _, err := follow(stream); err != nil {
			r.send(nil, fromService(err, sameField))
		}
		return
	}
	// A turn that ended while no connection held the session: its end, and whatever of it
	// the client missed, come from the durable stream. A stream past its retention is
	// gone: the session is loaded as it is.
	if stream := c.s.hub.Missed(s); stream != "" {
		if ok, _ := follow(stream); ok {
			return
		}
	}
	calls, since, err := c.s.svc.SessionCalls(c.ctx, id)
	if err != nil {
		c.s.hub.Forget(s)
		if genui.AsError(err).Status == genui.StatusNotFound {
			r.send(nil, notFound(id))
			return
		}
		if sessionhub.Inconsistent(err) {
			c.s.hub.Drop(c.ctx, id)
		}
		r.send(nil, fromService(err, sameField))
		return
	}
	if len(calls) > 0 && c.s.hub.Expired(since) {
		c.s.hub.Forget(s)
		c.s.svc.CloseSession(context.WithoutCancel(c.ctx), id, since)
		expired := &rpcError{Code: codeExpired, Message: "session expired: it waited for its client tools longer than " + c.s.hub.Window().String(),
			Data: map[string]any{"status": "NOT_FOUND", "session_id": id}}
		st.finish(nil, expired) // the prompt that waited, if this connection still has it
		r.send(nil, expired)
		return
	}
	if len(calls) == 0 {
		if resume {
			r.send(nil, &rpcError{Code: codeState, Message: "session not waiting: nothing runs and it waits for no client tool; send a prompt",
				Data: map[string]any{"status": "FAILED_PRECONDITION", "session_id": id}})
			return
		}
		st.mu.Lock()
		st.flavour = f
		st.mu.Unlock()
		r.send(f.sessionResult(id), nil)
		return
	}
	if !st.take(r, f, id) {
		r.send(nil, busy)
		return
	}
	c.request(s, calls)
}

// take makes r the request answered when the session's interaction ends, in flavour f,
// replacing one of a connection that went, or of one the session was taken from (which
// is told so).
func (st *state) take(r *reply, f *flavour, id string) bool {
	st.mu.Lock()
	old := st.end
	if old != nil && old.c != nil && old.c.ctx.Err() == nil && r != nil && old.c == r.c {
		st.mu.Unlock()
		return false
	}
	if r == nil {
		r = &reply{}
	}
	st.end, st.flavour = r, f
	st.mu.Unlock()
	if old != nil && old.c != nil && old.c != r.c && old.c.ctx.Err() == nil {
		old.send(nil, &rpcError{Code: codeNotFound, Message: "session taken over: " + strconv.Quote(id) + " was loaded by another connection",
			Data: map[string]any{"status": "NOT_FOUND", "session_id": id}})
	}
	return true
}
