package wsapi

import (
	"cmp"
	"context"
	"encoding/json"
	"time"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/jsonenc"
	"github.com/genuiserver/genui/internal/ndjson"
	"github.com/genuiserver/genui/internal/sessionhub"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/tools"
)

// turn runs a turn of the session with msgs; model says whether it calls the model.
func (c *yieldConn) turn(msgs []schemas.Message, model bool, rename func(string) string) {
	stream, err := c.s.svc.SessionTurn(c.ctx, c.id, msgs)
	if err != nil {
		c.idle()
		c.failService(err, rename)
		return
	}
	s := c.s.hub.Owned(c.ctx, c.id, c)
	if s == nil {
		s = c.s.hub.Take(c.ctx, c.id, c)
	}
	c.s.hub.Started(s, stream.ID())
	st := c.stateOf(s)
	st.mu.Lock()
	st.turn, st.failed = turnInput{msgs: msgs, model: model, rename: rename}, nil
	st.mu.Unlock()
	c.mu.Lock()
	c.surfaces, c.model = nil, stream.Model()
	c.mu.Unlock()
	if model {
		c.write(append(append([]byte(`{"type":"progress","effect":{"type":"LlmComplete","model":`), jsonenc.AppendString(nil, stream.Model())...), `},"status":"executing"}`...))
	}
	go func() {
		defer c.s.hub.Ended(c.ctx, s, stream.ID())
		stream.Each(c.ctx, func(it genui.Item) error { return c.forward(s, it) })
	}()
}

// forward passes an item of the session's turn on while the session is this
// connection's; the final item ends the turn.
func (c *yieldConn) forward(s *sessionhub.Session, it genui.Item) error {
	if !c.s.hub.Owner(s, c) {
		return errDetached
	}
	if it.Event != nil {
		if it.Event.Type == schemas.EventToolCall {
			return nil // yielded when the turn ends
		}
		c.shown(it.Event)
		b := append([]byte(`{"type":"progress","effect":{"type":"LlmComplete","event":`), ndjson.AppendEvent(nil, it.Event)...)
		if !c.write(append(b, `},"status":"executing"}`...)) {
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

// ended handles the end of a turn: a yield of the first call the session waits for, or
// done, or, when the turn failed, a yield of the failed effect.
func (c *yieldConn) ended(s *sessionhub.Session, it genui.Item) {
	// The connection is free before the client reads the end: its next message may follow
	// at once.
	if it.Err != nil && it.Err.Status == genui.StatusCancelled {
		c.idle()
		c.failService(it.Err, sameField)
		return
	}
	if it.Err != nil {
		// Seed 004: effect execution failed → a yield of the failed effect; the client
		// retries it with resume (or gives it up with an error result), here or after a
		// reconnect within the window. The session is as it was before the turn.
		st := c.stateOf(s)
		st.mu.Lock()
		st.failed = it.Err
		st.mu.Unlock()
		c.s.hub.Keep(s, time.Now().Add(c.s.hub.Window()))
		c.idle()
		c.yieldFailed(it.Err)
		return
	}
	ctx := context.WithoutCancel(c.ctx)
	var res struct {
		FinishReason string `json:"finishReason"`
	}
	json.Unmarshal(it.Result, &res)
	if res.FinishReason == schemas.FinishInterrupted {
		w, err := c.s.svc.SessionWaits(ctx, c.id)
		if err != nil {
			c.idle()
			c.failService(err, sameField)
			return
		}
		if len(w.Calls) > 0 {
			c.idle()
			c.yield(w.Calls[0])
			return
		}
	}
	c.mu.Lock()
	surfaces, yieldActions := c.surfaces, c.yieldActions
	c.mu.Unlock()
	if yieldActions && len(surfaces) > 0 {
		_, err := c.s.svc.AwaitAction(ctx, c.id, surfaces)
		c.idle()
		if err != nil {
			c.failService(err, sameField)
			return
		}
		c.yieldAction(surfaces)
		return
	}
	c.idle()
	b := append([]byte(`{"type":"done","result":`), it.Result...)
	c.write(append(b, '}'))
}

// yieldFailed yields the model call that failed with e.
func (c *yieldConn) yieldFailed(e *genui.Error) {
	c.mu.Lock()
	model := cmp.Or(c.model, c.s.svc.Model())
	c.mu.Unlock()
	b := append([]byte(`{"type":"yield","effect":{"type":"LlmComplete","model":`), jsonenc.AppendString(nil, model)...)
	b = append(b, `,"error":`...)
	b = appendEffectError(b, e)
	b = append(b, `},"sessionId":"`...)
	b = append(b, c.id...)
	c.write(append(b, `"}`...))
}

// failedEffect returns the error of the failed effect s yielded, nil when none.
func (c *yieldConn) failedEffect(s *sessionhub.Session) *genui.Error {
	st := c.stateOf(s)
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.failed
}

// retry answers the yield of a failed effect: a success runs the failed turn again; an
// error gives it up, and the session yields what it waits for, or ends with done, null.
func (c *yieldConn) retry(s *sessionhub.Session, r *effectResult) {
	st := c.stateOf(s)
	st.mu.Lock()
	t := st.turn
	if r.Type == "success" {
		// The failed effect stays until the turn starts again (turn): a retry refused
		// before it starts (a limit) leaves it to retry later.
		st.mu.Unlock()
		c.turn(t.msgs, t.model, t.rename)
		return
	}
	st.failed = nil
	st.mu.Unlock()
	c.s.hub.Keep(s, time.Time{})
	w, err := c.s.svc.SessionWaits(c.ctx, c.id)
	c.idle()
	switch {
	case err != nil && genui.AsError(err).Status != genui.StatusNotFound:
		c.failService(err, sameField)
	case err == nil && len(w.Calls) > 0:
		c.yield(w.Calls[0])
	case err == nil && len(w.Awaiting) > 0:
		c.yieldAction(w.Awaiting)
	default:
		c.write([]byte(`{"type":"done","result":null}`))
	}
}

func (c *yieldConn) yield(tc schemas.ToolCall) {
	b := append([]byte(`{"type":"yield","effect":{"type":"ClientTool","name":`), jsonenc.AppendString(nil, tc.Name)...)
	b = append(b, `,"input":`...)
	in := tc.Input
	if len(in) == 0 {
		in = json.RawMessage("{}")
	}
	b = append(b, in...)
	b = append(b, `,"callId":`...)
	b = jsonenc.AppendString(b, tc.CallID)
	b = append(b, `},"sessionId":"`...)
	b = append(b, c.id...)
	c.write(append(b, `"}`...))
}

// shown records the surfaces an event shows (and forgets the ones it deletes).
func (c *yieldConn) shown(ev *schemas.Event) {
	var id string
	del := false
	switch ev.Type {
	case schemas.EventToolRequest:
		var in struct {
			SurfaceID string `json:"surfaceId"`
		}
		json.Unmarshal(ev.ToolRequest.Input, &in)
		id, del = in.SurfaceID, ev.ToolRequest.Name == tools.DeleteSurface
	case schemas.EventA2UI:
		var m map[string]struct {
			SurfaceID string `json:"surfaceId"`
		}
		json.Unmarshal(ev.A2UI, &m)
		for k, v := range m {
			if v.SurfaceID != "" {
				id, del = v.SurfaceID, k == "deleteSurface"
			}
		}
	}
	if id == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.surfaces[:0:0]
	for _, s := range c.surfaces {
		if s != id {
			out = append(out, s)
		}
	}
	if !del {
		out = append(out, id)
	}
	c.surfaces = out
}

// yieldAction yields the surfaces that wait for the user's action.
func (c *yieldConn) yieldAction(surfaces []string) {
	b := []byte(`{"type":"yield","effect":{"type":"UserAction","surfaceIds":[`)
	for i, s := range surfaces {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, s)
	}
	b = append(b, `]},"sessionId":"`...)
	b = append(b, c.id...)
	c.write(append(b, `"}`...))
}

// act answers a UserAction: the user's action (value) is the next turn's message; an
// error result (the user left the surfaces) ends the interaction with done, null.
func (c *yieldConn) act(r *effectResult) {
	if r.Type == "error" {
		if _, err := c.s.svc.AwaitAction(context.WithoutCancel(c.ctx), c.id, nil); err != nil {
			c.idle()
			c.failService(err, sameField)
			return
		}
		c.idle()
		c.write([]byte(`{"type":"done","result":null}`))
		return
	}
	part, problem := actionPart(r.Value)
	if problem != "" {
		c.idle()
		c.fail("result.value: "+problem, false)
		return
	}
	c.turn([]schemas.Message{{Role: "user", Parts: []schemas.Part{part}}}, true, func(f string) string { return "result.value" })
}

// actionPart maps the value answering a UserAction to a message part: a genui event
// ({surfaceId, widgetId, eventType,…}), an A2UI client message ({version, action} or
// {userAction}), or text (a string, or {text}).
func actionPart(v json.RawMessage) (schemas.Part, string) {
	var text string
	if json.Unmarshal(v, &text) == nil && text != "" {
		return schemas.Part{Type: schemas.PartText, Text: text}, ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(v, &obj) != nil {
		return schemas.Part{}, "the user's action: a genui event, an A2UI action message, or text"
	}
	switch {
	case obj["widgetId"] != nil || obj["eventType"] != nil:
		var ev schemas.UIEvent
		if err := json.Unmarshal(v, &ev); err != nil {
			return schemas.Part{}, "a genui event {surfaceId, widgetId, eventType, value}: " + err.Error()
		}
		return schemas.Part{Type: schemas.PartUIEvent, Event: &ev}, ""
	case obj["action"] != nil || obj["userAction"] != nil:
		var m schemas.Object
		json.Unmarshal(v, &m)
		return schemas.Part{Type: "a2ui", Message: m}, ""
	case obj["text"] != nil:
		if json.Unmarshal(obj["text"], &text) == nil && text != "" {
			return schemas.Part{Type: schemas.PartText, Text: text}, ""
		}
	}
	return schemas.Part{}, "the user's action: a genui event {surfaceId, widgetId, eventType}, an A2UI action message {version, action}, or text"
}
