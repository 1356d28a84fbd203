package aguiapi

import (
	"bytes"
	"cmp"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/schemas"
)

// encoder turns the items of a run's core stream into AG-UI events, each an SSE event
// whose id is the stream and the event's place in the run. The events depend only on
// the items, so a stream read again (a reconnection, on any replica) gives the same
// events with the same ids.
type encoder struct {
	threadID, runID, parentRunID string
	stream                       string
	model                        string // provider/model, for usage
	n                            int    // events made

	surfaces *a2ui.Surfaces
	// live holds the surfaces whose activity this run has sent a snapshot of, since
	// their last deleteSurface: their next messages go as deltas.
	live     map[string]bool
	text     string // the open text message, if any
	textAt   int    // the model message index of the open text message
	texts    int    // text messages opened
	lastText string // the last text message, which tool calls hang from
	calls    []*schemas.ToolCall
	done     bool
}

// newEncoder returns the encoder of a run whose client holds the surfaces that shown
// builds.
func newEncoder(in *runInput, stream, model string, shown [][]byte) *encoder {
	e := &encoder{threadID: in.ThreadID, runID: in.RunID, parentRunID: in.ParentRunID, stream: stream, model: model, surfaces: a2ui.NewSurfaces(), live: map[string]bool{}}
	for _, m := range shown {
		_, _ = e.surfaces.Apply(m) // the core checked them
	}
	return e
}

func (e *encoder) event(b []byte, data []byte) []byte {
	e.n++
	return frame(b, e.stream, e.n, data)
}

// start appends RUN_STARTED.
func (e *encoder) start(b []byte) []byte {
	return e.event(b, encode(&runStartedEvent{Type: runStarted, ThreadID: e.threadID, RunID: e.runID, ParentRunID: e.parentRunID}))
}

// item appends the events of one item of the stream.
func (e *encoder) item(b []byte, it genui.Item) []byte {
	switch {
	case it.Event != nil && it.Event.Type == schemas.EventText:
		if it.Event.Text == "" {
			return b
		}
		if e.text != "" && e.textAt != it.Event.Index {
			b = e.closeText(b) // a new model message (a repair): a new text message
		}
		if e.text == "" {
			e.texts++
			e.text = e.stream + "-text-" + strconv.Itoa(e.texts)
			e.textAt, e.lastText = it.Event.Index, e.text
			b = e.event(b, encode(&textEvent{Type: textStart, MessageID: e.text, Role: "assistant"}))
		}
		return e.event(b, encode(&textEvent{Type: textContent, MessageID: e.text, Delta: it.Event.Text}))
	case it.Event != nil && it.Event.Type == schemas.EventA2UI:
		b = e.closeText(b)
		msg := it.Event.A2UI
		id, err := e.surfaces.Apply(msg)
		if err != nil {
			return b // the core sends valid A2UI only
		}
		return e.event(b, e.activity(id, msg))
	case it.Event != nil && it.Event.Type == schemas.EventToolCall && it.Event.ToolCall != nil:
		b = e.closeText(b)
		c := it.Event.ToolCall
		e.calls = append(e.calls, c)
		b = e.event(b, encode(&toolCallEvent{Type: toolCallStart, ToolCallID: c.CallID, ToolCallName: c.Name, ParentMessageID: e.lastText}))
		b = e.event(b, encode(&toolCallEvent{Type: toolCallArgs, ToolCallID: c.CallID, Delta: string(c.Input)}))
		b = e.event(b, encode(&toolCallEvent{Type: toolCallEnd, ToolCallID: c.CallID}))
		if c.Signature != "" {
			// The model's signature of the call goes back with it in the next run's
			// messages (toolCalls[].encryptedValue), as Gemini needs it.
			b = e.event(b, encode(&encryptedValueEvent{Type: reasoningEncValue, Subtype: "tool-call", EntityID: c.CallID, EncryptedValue: c.Signature}))
		}
		return b
	case it.Result != nil:
		b = e.closeText(b)
		e.done = true
		return e.event(b, encode(e.finished(it.Result)))
	case it.Err != nil:
		b = e.closeText(b)
		e.done = true
		return e.event(b, encode(runErrorOf(it.Err)))
	}
	return b
}

// activity is the event of an A2UI message of surface id, applied to e.surfaces: the
// surface's first message in the run, or its first after a deleteSurface, is a snapshot
// holding the whole surface (what the client held before, from its activity messages,
// included); every later one is a delta appending the message to the snapshot's
// operations. The activity's content is then, after each event, the operations a
// renderer applies in order, and what the run sends grows with the messages, not with
// the square of the surface.
func (e *encoder) activity(id string, msg []byte) []byte {
	deleted := isDelete(msg)
	if !e.live[id] {
		if !deleted {
			e.live[id] = true
		}
		return snapshotData(nil, surfaceMessageID(id), e.surfaces.Messages(id))
	}
	if deleted {
		delete(e.live, id) // a surface created again is a snapshot of its own
	}
	if bytes.ContainsAny(msg, "\r\n") {
		// An SSE data line holds no line break; the core's messages are compact.
		var c bytes.Buffer
		if json.Compact(&c, msg) == nil {
			msg = c.Bytes()
		}
	}
	return deltaData(nil, surfaceMessageID(id), msg)
}

// isDelete reports whether an A2UI v0.9 message is a deleteSurface.
func isDelete(msg []byte) bool {
	if !bytes.Contains(msg, []byte(`"deleteSurface"`)) {
		return false
	}
	var m struct {
		Delete json.RawMessage `json:"deleteSurface"`
	}
	return json.Unmarshal(msg, &m) == nil && m.Delete != nil
}

func (e *encoder) closeText(b []byte) []byte {
	if e.text == "" {
		return b
	}
	b = e.event(b, encode(&textEvent{Type: textEnd, MessageID: e.text}))
	e.text = ""
	return b
}

// finished is the RUN_FINISHED of a result: an interrupt for each call of a frontend
// tool, which the next run answers; the tokens the model used.
func (e *encoder) finished(result json.RawMessage) *runFinishedEvent {
	ev := &runFinishedEvent{Type: runFinished, ThreadID: e.threadID, RunID: e.runID, Outcome: &outcome{Type: "success"}}
	var res struct {
		FinishReason string         `json:"finishReason"`
		Usage        *schemas.Usage `json:"usage"`
	}
	_ = json.Unmarshal(result, &res)
	if res.FinishReason == schemas.FinishInterrupted && len(e.calls) > 0 {
		ev.Outcome = &outcome{Type: "interrupt"}
		for _, c := range e.calls {
			ev.Outcome.Interrupts = append(ev.Outcome.Interrupts, &interrupt{
				ID: c.CallID, Reason: "tool_call", ToolCallID: c.CallID,
				Message:        "The frontend tool " + c.Name + " was called: answer with its result.",
				ResponseSchema: map[string]any{"description": "The result of " + c.Name + ": any JSON value."},
			})
		}
	}
	if u := res.Usage; u != nil && (u.InputTokens > 0 || u.OutputTokens > 0 || u.TotalTokens > 0) {
		tu := &tokenUsage{InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens, CachedInputTokens: u.CachedTokens}
		model := cmp.Or(u.Model, e.model) // the model that served the turn
		tu.Provider, tu.Model, _ = strings.Cut(model, "/")
		if tu.Model == "" {
			tu.Provider, tu.Model = "", model
		}
		ev.Usage = []*tokenUsage{tu}
	}
	return ev
}

// surfaceMessageID is the id of the activity message of an A2UI surface: the same in
// every run, so that a surface updated in a later run replaces what the client shows.
func surfaceMessageID(surfaceID string) string { return "a2ui-surface-" + surfaceID }
