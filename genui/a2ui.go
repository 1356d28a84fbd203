package genui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/session"
)

// An A2UI turn differs from a genui turn in its catalog (an A2UI catalog), its prompt,
// what the model writes (A2UI messages as text, read as they stream, instead of tool
// calls), the checks ([a2ui.Builder]) and what is streamed (A2UI messages). The loop,
// the repairs, the model port, the streams and their durability are the same.

// a2uiTurn is what an A2UI turn adds to a turn.
type a2uiTurn struct {
	builder *a2ui.Builder
}

// capabilitiesField is the name of the client capabilities in requests.
const capabilitiesField = "a2uiClientCapabilities"

// a2uiCatalog resolves the catalog of an A2UI request: from the client's capabilities,
// or the built-in default catalog of the version when there are none.
func (s *Service) a2uiCatalog(ctx context.Context, version string, caps schemas.Object) (*catalog.Catalog, *Error) {
	if caps == nil {
		c, err := a2ui.Builtin(version, a2ui.DefaultCatalogID(version))
		if err != nil {
			return nil, AsError(err)
		}
		return c, nil
	}
	cs, fe := a2ui.ParseCapabilities(version, json.RawMessage(caps), capabilitiesField)
	if fe != nil {
		return nil, fieldError(fe.Field, "%s", fe.Message)
	}
	id, doc, fe := cs.Choose(version, capabilitiesField)
	if fe != nil {
		return nil, fieldError(fe.Field, "%s", fe.Message)
	}
	if doc == nil {
		c, err := a2ui.Builtin(version, id)
		if err != nil {
			return nil, AsError(err)
		}
		return c, nil
	}
	var over *Error
	c, err := s.catalogs.CompileAdmit(catalog.A2UIDocument(version, id, doc), func() error {
		if e := s.limitError(s.quota.AdmitCatalog(ctx, auth.FromContext(ctx).LimitKey()), capabilitiesField+".inlineCatalogs"); e != nil {
			over = e
			return over
		}
		return nil
	})
	if over != nil {
		return nil, over
	}
	if err != nil {
		field := capabilitiesField + ".inlineCatalogs"
		for i, ic := range cs.InlineCatalogs {
			if ic.ID == id {
				field += "[" + strconv.Itoa(i) + "]"
			}
		}
		return nil, fieldError(field, "%v", err).WithCause(err)
	}
	return c, nil
}

// prepareA2UI validates an A2UI request, resolves its catalog and maps its conversation.
func (s *Service) prepareA2UI(ctx context.Context, req *schemas.GenerateA2UIRequest) (*turn, error) {
	if req == nil {
		return nil, fieldError("data", "request body must be a JSON object")
	}
	version, fe := a2ui.CheckVersion(req.Version)
	if fe != nil {
		return nil, fieldError(fe.Field, "%s", fe.Message)
	}
	var c *catalog.Catalog
	switch {
	case req.SessionID != "" && req.A2UIClientCapabilities != nil:
		return nil, fieldError("sessionId", "send either sessionId or a2uiClientCapabilities, not both")
	case req.SessionID != "":
		var err error
		c, err = s.store.Catalog(ctx, auth.Scope(ctx, req.SessionID))
		if errors.Is(err, session.ErrNotFound) {
			return nil, (&Error{Status: StatusNotFound, Message: "sessionId: unknown or expired session; call /startSession again", Details: map[string]any{"field": "sessionId"}}).WithCause(err)
		}
		if err != nil {
			return nil, AsError(err)
		}
		if c.A2UI == nil {
			return nil, fieldError("sessionId", "the session was started with a genui catalog: use /generateUi, or start a session with a2uiClientCapabilities")
		}
		if c.A2UI.Version != version {
			return nil, fieldError("version", "the session speaks A2UI %s, the request %s", c.A2UI.Version, version)
		}
	default:
		var e *Error
		if c, e = s.a2uiCatalog(ctx, version, req.A2UIClientCapabilities); e != nil {
			return nil, e
		}
	}
	if err := validateConversation(req.Conversation, true); err != nil {
		return nil, err
	}
	if err := validateConversationID(req.ConversationID); err != nil {
		return nil, err
	}
	var dataModel string
	if dm := req.A2UIClientDataModel; dm != nil {
		if jsonKind(dm) != "object" {
			return nil, fieldError("a2uiClientDataModel", "must be an object {\"version\":\"v0.9\",\"surfaces\":{…}}")
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, dm); err != nil {
			return nil, fieldError("a2uiClientDataModel", "not valid JSON: %v", err)
		}
		dataModel = compact.String()
	}
	pol := s.policyFor(ctx)
	b := a2ui.NewBuilder(c, a2ui.WithPolicy(pol), a2ui.WithLimits(s.limits.Components, s.limits.DataModelBytes))
	t := &turn{catalog: c, a2ui: &a2uiTurn{builder: b}, req: req, surfaces: map[string]bool{}, policy: pol}
	conv, err := s.prepareConversation(ctx, t, req.ClientTools, req.ConversationID, req.Conversation, version, req.Model)
	if err != nil {
		return nil, err
	}
	if t.messages, err = toA2UIMessages(conv, b); err != nil {
		t.end()
		return nil, err
	}
	if dataModel != "" && len(t.messages) > 0 {
		last := t.messages[len(t.messages)-1]
		last.Content = append(last.Content, ai.NewTextPart("The data model of the client's surfaces (a2uiClientDataModel):\n```json\n"+dataModel+"\n```"))
	}
	return t, nil
}

// toA2UIMessages maps a validated A2UI conversation to model messages. The A2UI messages
// of a model message become the text the model would have written for them (one
// ```a2ui block, in their shortest form), and are applied to the builder as what the
// client shows; a client message in a user message becomes a sentence saying what the
// user did.
func toA2UIMessages(conv []schemas.Message, b *a2ui.Builder) ([]*ai.Message, error) {
	out := make([]*ai.Message, 0, len(conv))
	var pending responses // of the model message before, when it called client tools
	for i, m := range conv {
		var content []*ai.Part
		var rs responses
		var block []json.RawMessage
		endBlock := func() {
			if len(block) == 0 {
				return
			}
			var sb strings.Builder
			sb.WriteString("```a2ui\n")
			for _, msg := range a2ui.Compact(b.Version(), block) {
				sb.Write(msg)
				sb.WriteByte('\n')
			}
			sb.WriteString("```")
			content = append(content, ai.NewTextPart(sb.String()))
			block = nil
		}
		for j := range m.Parts {
			p := &m.Parts[j]
			f := fmt.Sprintf("conversation[%d].parts[%d]", i, j)
			if p.Type != schemas.PartA2UI {
				endBlock()
			}
			switch p.Type {
			case schemas.PartText:
				content = append(content, ai.NewTextPart(p.Text))
			case schemas.PartImage:
				content = append(content, imagePart(p))
			case schemas.PartA2UI:
				if m.Role == "model" {
					if err := b.Shown(json.RawMessage(p.Message)); err != nil {
						return nil, fieldError(f+".message", "not an A2UI %s server message: %v", b.Version(), err)
					}
					block = append(block, json.RawMessage(p.Message))
					continue
				}
				cm, fe := a2ui.DecodeClientMessage(json.RawMessage(p.Message), f+".message")
				if fe != nil {
					return nil, fieldError(fe.Field, "%s", fe.Message)
				}
				content = append(content, ai.NewTextPart(cm.Describe()))
			case schemas.PartToolCall:
				content = append(content, toolCallPart(p))
				rs.addCall(p.CallID)
			case schemas.PartToolResult:
				pending.answer(p)
			}
		}
		endBlock()
		out = appendTurnMessages(out, m.Role, content, &pending, &rs)
	}
	return out, nil
}

// onA2UIPart handles one part of the response of an A2UI turn as it streams.
func (c *modelCall) onA2UIPart(ctx context.Context, p *ai.Part) error {
	switch {
	case p.IsToolRequest() && p.ToolRequest != nil && !p.ToolRequest.Partial:
		c.seen = true
		input, err := c.encodeCall(p.ToolRequest)
		if err != nil {
			return err
		}
		if c.turn.tools.Has(p.ToolRequest.Name) {
			return c.onClientCall(ctx, p, input)
		}
		c.touched = true
		c.verdicts = append(c.verdicts, []catalog.Violation{{Message: fmt.Sprintf("there is no tool %q: write A2UI messages as JSON lines in an ```a2ui block", p.ToolRequest.Name)}})
	case p.IsText() && p.Text != "":
		c.seen = true
		if c.parser == nil {
			c.parser = a2ui.NewParser()
		}
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.timerErr != nil {
			return c.timerErr
		}
		if err := c.a2uiSegments(ctx, c.parser.Push(p.Text)); err != nil {
			return err
		}
		c.arm(ctx)
	}
	return nil
}

// arm schedules the flush of the components a response wrote that wait for one
// (a2ui.Builder.FlushDue), for a model that pauses mid-surface: they go out when due,
// not when its next text comes. c.mu is held.
func (c *modelCall) arm(ctx context.Context) {
	d, ok := c.turn.a2ui.builder.NextFlush(time.Now())
	if !ok || c.closed {
		return
	}
	c.flushCtx = ctx
	if c.timer == nil {
		c.timer = time.AfterFunc(d, c.tick)
		return
	}
	c.timer.Reset(d)
}

// tick flushes what waits, from the timer's goroutine.
func (c *modelCall) tick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed || c.timerErr != nil {
		return
	}
	if err := c.sendA2UI(c.flushCtx, c.turn.a2ui.builder.FlushDue(time.Now())); err != nil {
		c.timerErr = err // the stream's next part or its end reports it
		return
	}
	c.arm(c.flushCtx)
}

// stop ends the timed flushes of a model call: its stream has ended.
func (c *modelCall) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	if c.timer != nil {
		c.timer.Stop()
	}
}

// a2uiSegments streams the segments of a response: prose as text events, and the
// A2UI messages the builder makes of the rest, in the order they came.
func (c *modelCall) a2uiSegments(ctx context.Context, segs []a2ui.Segment) error {
	b := c.turn.a2ui.builder
	pending := false
	for _, seg := range segs {
		if seg.Kind != a2ui.SegmentText {
			c.touched, pending = true, true
			b.Add(seg)
			if e := b.Exceeded(); e != nil {
				// What is valid of the surface goes out; the turn ends at the limit.
				if err := c.sendA2UI(ctx, b.Flush()); err != nil {
					return err
				}
				what := fmt.Sprintf("surface %q has %d components", e.SurfaceID, e.Value)
				if e.Limit == a2ui.LimitDataModel {
					what = fmt.Sprintf("the model wrote more than %d bytes of data-model updates to surface %q", e.Value, e.SurfaceID)
				}
				return limitError(e.Limit, e.Value, what)
			}
			continue
		}
		if pending {
			if err := c.sendA2UI(ctx, b.Flush()); err != nil {
				return err
			}
			pending = false
		}
		c.text.WriteString(seg.Text)
		c.emitted = true
		if err := c.emit(ctx, schemas.Event{Type: schemas.EventText, Index: c.index, Text: seg.Text}); err != nil {
			return err
		}
	}
	if pending {
		// What the segments added goes out when a flush is due (FlushDue): a turn that
		// writes thousands of components is not walked again after every chunk.
		return c.sendA2UI(ctx, b.FlushDue(time.Now()))
	}
	return nil
}

func (c *modelCall) sendA2UI(ctx context.Context, msgs [][]byte) error {
	for _, m := range msgs {
		c.a2uiSent = append(c.a2uiSent, m)
		c.emitted = true
		if err := c.emit(ctx, schemas.Event{Type: schemas.EventA2UI, Index: c.index, A2UI: m}); err != nil {
			return err
		}
	}
	return nil
}

// finishA2UI ends the response: the text of a model that did not stream it, the end of
// the text, the checks of the surfaces as wholes.
func (c *modelCall) finishA2UI(ctx context.Context, resp *ai.ModelResponse) error {
	c.stop() // what follows flushes everything
	if c.timerErr != nil {
		return c.timerErr
	}
	if !c.seen && resp.Message != nil {
		for _, p := range resp.Message.Content {
			if err := c.onA2UIPart(ctx, p); err != nil {
				return err
			}
		}
	}
	if c.parser != nil {
		if err := c.a2uiSegments(ctx, c.parser.Close()); err != nil {
			return err
		}
	}
	out, vs := c.turn.a2ui.builder.End()
	c.a2uiBad = append(c.a2uiBad, vs...)
	return c.sendA2UI(ctx, out)
}

// a2uiAnswer tells the model what of its A2UI messages broke the rules and was not
// shown.
func (c *modelCall) a2uiAnswer() string {
	var sb strings.Builder
	sb.WriteString("Some of your A2UI messages broke these rules, and what broke them did not reach the client. Pointers count your messages from 0 in the order you wrote them.\n")
	for _, v := range c.a2uiBad {
		sb.WriteString("- ")
		sb.WriteString(v.String())
		sb.WriteByte('\n')
	}
	if s := c.turn.a2ui.builder.Summary(); s != "" {
		sb.WriteString("The client shows:\n")
		sb.WriteString(s)
	}
	sb.WriteString("Write A2UI messages that fix every problem. Send only what is missing or wrong: a component sent again with the same id replaces the one the client has.")
	return sb.String()
}
