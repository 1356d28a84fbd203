package a2aapi

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/schemas"
)

// encoder turns the items of a turn's core stream into the A2A events of its task: a
// working status update for each A2UI message and each line of text, then the final
// status. The events depend only on the items, so a stream read again (a resubscription,
// on any replica) gives the same events in the same order.
type encoder struct {
	task      a2a.TaskID
	contextID string
	stream    string
	messages  int // messages made so far
	wire      wire
	legacy    bool // for an A2A v0.3 client: one A2UI message per DataPart

	text  strings.Builder     // text not sent yet: whole lines go out
	calls []*schemas.ToolCall // the turn's calls of client tools, sent with the final status
	shown bool                // the turn sent A2UI that waits for the user
	// turn is everything the turn sent, for the status message of the task it leaves
	// (see whole).
	turn  []turnPart
	final *a2a.TaskStatus
	// failed is the error a failed turn ended with.
	failed *genui.Error
}

// turnPart is a part a turn sent, as its task keeps it: a line of text, an A2UI message
// or a call of a client tool, as the core gave it (compact, and without pointers for the
// garbage collector to follow); parts makes the A2A parts of a reader's wire.
type turnPart struct {
	Text string            `json:"text,omitempty"`
	A2UI json.RawMessage   `json:"a2ui,omitempty"`
	Call *schemas.ToolCall `json:"call,omitempty"`
}

// part is p as an A2A part: a TextPart, or a DataPart.
func (e *encoder) part(p turnPart) *a2a.Part {
	switch {
	case p.A2UI != nil:
		return e.a2uiPart(decodeJSON(p.A2UI))
	case p.Call != nil:
		return toolCallPart(p.Call)
	}
	return a2a.NewTextPart(p.Text)
}

// whole returns the turn's parts as the status message of the task it leaves carries
// them, and keeps them so: each run of A2UI messages becomes the messages of the final
// state of its surfaces (a2ui.Final: per surface its createSurface, the data-model updates
// no later one replaces, one update of its components in their final versions), text and
// calls staying where they were. A list streamed row by row is re-sent as it grows; what
// hands the turn over whole, and the task store, hold each component once.
func (e *encoder) whole() []turnPart {
	version := e.wire.Version
	if version == "" {
		version = a2ui.V09
	}
	out := make([]turnPart, 0, len(e.turn))
	var run []json.RawMessage
	flush := func() {
		for _, m := range a2ui.Final(version, run) {
			out = append(out, turnPart{A2UI: m})
		}
		run = run[:0]
	}
	for _, p := range e.turn {
		if p.A2UI != nil {
			run = append(run, p.A2UI)
			continue
		}
		flush()
		out = append(out, p)
	}
	flush()
	e.turn = out
	return out
}

// parts is a turn's parts, encoded for the wire of a reader (legacy: A2A v0.3).
func parts(turn []turnPart, w wire, legacy bool) []*a2a.Part {
	e := &encoder{wire: w, legacy: legacy}
	out := make([]*a2a.Part, len(turn))
	for i, p := range turn {
		out[i] = e.part(p)
	}
	return out
}

func newEncoder(t *task, legacy bool) *encoder {
	return &encoder{task: t.Task.ID, contextID: t.Task.ContextID, stream: t.Stream, wire: t.Wire, legacy: legacy}
}

// item returns the events of one item of the stream.
func (e *encoder) item(it genui.Item) []a2a.Event {
	var out []a2a.Event
	switch {
	case it.Event != nil && it.Event.Type == schemas.EventText:
		e.text.WriteString(it.Event.Text)
		if s := e.text.String(); strings.Contains(s, "\n") {
			// Flutter trims each text part: send text in whole lines, so that no word is
			// cut.
			cut := strings.LastIndexByte(s, '\n') + 1
			out = append(out, e.working(turnPart{Text: s[:cut]}, nil))
			e.text.Reset()
			e.text.WriteString(s[cut:])
		}
	case it.Event != nil && it.Event.Type == schemas.EventA2UI:
		out = e.flushText(out)
		msg := decodeJSON(it.Event.A2UI)
		if _, del := msg["deleteSurface"]; !del {
			e.shown = true
		}
		out = append(out, e.working(turnPart{A2UI: it.Event.A2UI}, e.a2uiPart(msg)))
	case it.Event != nil && it.Event.Type == schemas.EventToolCall:
		out = e.flushText(out)
		e.calls = append(e.calls, it.Event.ToolCall)
	case it.Event != nil:
		// A genui tool request: not in an A2UI turn.
	case it.Result != nil:
		out = e.flushText(out)
		state := a2a.TaskStateCompleted
		if len(e.calls) > 0 || e.shown {
			// A surface waits for the user's action, or a call for its result.
			state = a2a.TaskStateInputRequired
		}
		var msg *a2a.Message
		if len(e.calls) > 0 {
			calls := make([]*a2a.Part, len(e.calls))
			for i, c := range e.calls {
				e.turn = append(e.turn, turnPart{Call: c})
				calls[i] = toolCallPart(c)
			}
			msg = e.message(calls...)
		}
		out = append(out, e.finish(state, msg))
	case it.Err != nil:
		out = e.flushText(out)
		state, text := a2a.TaskStateCanceled, it.Err.Message
		if it.Err.Status != genui.StatusCancelled {
			state, text = a2a.TaskStateFailed, failure(it.Err)
			e.failed = it.Err
		}
		e.turn = append(e.turn, turnPart{Text: text})
		out = append(out, e.finish(state, e.message(a2a.NewTextPart(text))))
	}
	return out
}

// failure is the status message of a failed turn: what went wrong, in words its user can
// act on, and the status. The core's own message is left out: it may name what clients
// must not see, such as the model's internal URL (the server logs it). A turn stopped at
// one of the service's turn limits says which, and its value, as the error's details
// give them: asking again would stop there again, where the model's or a quota's limit
// passes.
func failure(err *genui.Error) string {
	var what string
	if l := turnLimit(err); l != "" {
		return "The turn stopped at the server's limit of " + l + "; what was shown before it stays. Ask for less, or for it in parts. (" + string(err.Status) + ")"
	}
	switch err.Status {
	case genui.StatusUnavailable:
		what = "The model or the server is unavailable; try again."
	case genui.StatusDeadlineExceeded:
		what = "The model did not answer in time; try again."
	case genui.StatusResourceExhausted:
		what = "The model is over a limit; try again"
		if s := retryAfter(err); s > 0 {
			what += " in " + strconv.Itoa(s) + " s"
		}
		what += "."
	case genui.StatusUnauthenticated, genui.StatusPermissionDenied:
		what = "The model refused the server's credentials; the operator of the service must fix this."
	case genui.StatusInvalidArgument:
		what = "The model refused the request; rephrase it, or start a new conversation."
	case genui.StatusFailedPrecondition:
		what = "The model's answer could not be made into valid UI for this client; try again, or rephrase the request."
	default:
		what = "The turn failed on the server; try again."
	}
	return what + " (" + string(err.Status) + ")"
}

// turnLimits describe the service's turn limits, by name, for a value.
var turnLimits = map[string]string{
	genui.LimitMaxOutputTokens: "%s tokens in one answer of the model",
	genui.LimitComponents:      "%s components on one surface",
	genui.LimitOutputBytes:     "%s bytes of model output in one turn",
	genui.LimitToolCalls:       "%s tool calls in one turn",
	genui.LimitDataModelBytes:  "%s bytes of data-model updates to one surface in one turn",
	genui.LimitTurnTime:        "%s for one turn",
}

// turnLimit describes the turn limit a RESOURCE_EXHAUSTED error reached, with its name
// ("10000 components on one surface (components)"), or is "" for any other error: a
// limit of the model's provider, or a quota.
func turnLimit(err *genui.Error) string {
	d, _ := err.Details.(map[string]any)
	name, _ := d["limit"].(string)
	desc, ok := turnLimits[name]
	if err.Status != genui.StatusResourceExhausted || !ok {
		return ""
	}
	var v string
	switch x := d["value"].(type) {
	case int:
		v = strconv.Itoa(x)
	case int64:
		v = strconv.FormatInt(x, 10)
	case float64: // read back from the stream log
		v = strconv.FormatFloat(x, 'f', -1, 64)
	case string:
		v = x
	}
	if v == "" {
		return name
	}
	return fmt.Sprintf(desc, v) + " (" + name + ")"
}

// retryAfter is how many seconds an error asks to wait before a retry, 0 if it does not
// say.
func retryAfter(err *genui.Error) int {
	if err.RetryAfter > 0 {
		return err.RetryAfterSeconds()
	}
	if d, ok := err.Details.(map[string]any); ok {
		switch v := d["retryAfter"].(type) {
		case float64:
			return int(v)
		case int:
			return v
		}
	}
	return 0
}

func (e *encoder) flushText(out []a2a.Event) []a2a.Event {
	if e.text.Len() == 0 {
		return out
	}
	out = append(out, e.working(turnPart{Text: e.text.String()}, nil))
	e.text.Reset()
	return out
}

// message is a message of the agent. Its id is the turn's stream and the message's place
// in it: unique, and the same when the stream is read again.
func (e *encoder) message(parts ...*a2a.Part) *a2a.Message {
	e.messages++
	id := e.stream + "-" + strconv.Itoa(e.messages)
	return &a2a.Message{ID: id, Role: a2a.MessageRoleAgent, TaskID: e.task, ContextID: e.contextID, Parts: parts}
}

// working is the status update of one part (made of tp when p is nil).
func (e *encoder) working(tp turnPart, p *a2a.Part) *a2a.TaskStatusUpdateEvent {
	e.turn = append(e.turn, tp)
	if p == nil {
		p = e.part(tp)
	}
	msg := e.message(p)
	// The update names the task and the context: its message need not.
	msg.TaskID, msg.ContextID = "", ""
	return e.status(a2a.TaskStateWorking, msg)
}

// unstored replaces the final event of evs, the turn's end, by a failure its client may
// retry: the task store could not keep the end, so no other replica would know it.
func (e *encoder) unstored(evs []a2a.Event, err error) []a2a.Event {
	ge := genui.AsError(err)
	if ge.Status != genui.StatusUnavailable {
		ge = &genui.Error{Status: genui.StatusUnavailable, Message: "the A2A task store is unavailable"}
	}
	text := failure(ge)
	e.failed = ge
	e.turn = append(e.turn, turnPart{Text: text})
	end := e.finish(a2a.TaskStateFailed, e.message(a2a.NewTextPart(text)))
	if len(evs) == 0 {
		return []a2a.Event{end}
	}
	return append(evs[:len(evs)-1], end)
}

func (e *encoder) finish(state a2a.TaskState, msg *a2a.Message) *a2a.TaskStatusUpdateEvent {
	ev := e.status(state, msg)
	e.final = &ev.Status
	return ev
}

// status is a status update; the final one is timestamped (the working ones, one per
// message of the turn, go without: the field is optional, and costs on every event).
func (e *encoder) status(state a2a.TaskState, msg *a2a.Message) *a2a.TaskStatusUpdateEvent {
	ev := &a2a.TaskStatusUpdateEvent{TaskID: e.task, ContextID: e.contextID, Status: a2a.TaskStatus{State: state, Message: msg}}
	if state != a2a.TaskStateWorking {
		now := time.Now().UTC()
		ev.Status.Timestamp = &now
	}
	return ev
}

// a2uiPart is a DataPart holding one A2UI message: the message itself for an A2A v0.3
// client (Flutter reads nothing else) and for v0.8, a list of one for an A2A 1.0 client
// of v0.9 (the extension's DataPart holds a list).
func (e *encoder) a2uiPart(msg map[string]any) *a2a.Part {
	var data any = msg
	if !e.legacy && e.wire.Version != a2ui.V08 {
		data = []any{msg}
	}
	p := a2a.NewDataPart(data)
	p.Metadata = map[string]any{"mimeType": e.wire.MIME}
	if !e.legacy {
		p.MediaType = e.wire.MIME
	}
	return p
}

// toolCallPart is a call of a client tool as a DataPart {"toolCall":{"callId","name","input"}}:
// the client answers it with {"toolResult":{"callId","name","output"}} (or "error").
func toolCallPart(c *schemas.ToolCall) *a2a.Part {
	call := map[string]any{"callId": c.CallID, "name": c.Name, "input": decodeJSON(c.Input)}
	if c.Signature != "" {
		call["signature"] = c.Signature
	}
	return a2a.NewDataPart(map[string]any{"toolCall": call})
}

// decodeJSON splits an object the core encoded into its members, each kept as the JSON
// it was: the parts that carry it need an object, and its members go out again as they
// came, without being decoded and encoded anew.
func decodeJSON(b []byte) map[string]any {
	var raw map[string]json.RawMessage
	_ = json.Unmarshal(b, &raw)
	v := make(map[string]any, len(raw))
	for k, m := range raw {
		v[k] = m
	}
	return v
}
