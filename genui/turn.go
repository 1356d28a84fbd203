package genui

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/tools"
)

// run runs one prepared turn. It emits each valid tool request and each piece of model
// text as soon as the model produces it, and returns the turn's result. The model is
// called once; it is called again only to repair invalid tool requests (at most the
// configured number of times) or, when the turn asks for it, for a closing message. A
// response calling client tools ends the turn, interrupted: its calls are emitted last
// and listed by the result. A held conversation is stored before the result is returned;
// a turn that fails leaves it unchanged. emit may be nil.
func (s *Service) run(ctx context.Context, t *turn, emit func(context.Context, schemas.Event) error) (res *schemas.Result, err error) {
	defer func() {
		if res == nil {
			t.end()
		}
	}()
	start := time.Now()
	var repairs, rejectedTotal, surfaces, a2uiCount, clientCalls int
	usage := &schemas.Usage{}
	defer func() {
		status := "ok"
		level := slog.LevelInfo
		if err != nil {
			// As the stream reports it: a turn stopped by request, for want of a reader or
			// by shutdown is CANCELLED or UNAVAILABLE, not the model call's error.
			status = string(s.turnError(ctx, err).Status)
			level = slog.LevelWarn
		}
		caller := auth.FromContext(ctx)
		s.log.LogAttrs(ctx, level, "turn",
			slog.String("caller", caller.ID), slog.String("model", cmp.Or(usage.Model, t.model.Name())), slog.String("status", status),
			slog.Duration("took", time.Since(start)), slog.Int("modelCalls", usage.ModelCalls),
			slog.Int("tokensIn", usage.InputTokens), slog.Int("tokensOut", usage.OutputTokens),
			slog.Int("surfaces", surfaces), slog.Int("a2uiMessages", a2uiCount), slog.Int("rejected", rejectedTotal),
			slog.Int("repairs", repairs), slog.Int("clientCalls", clientCalls))
		s.metrics.Turn(status, usage.InputTokens, usage.OutputTokens, clientCalls)
		s.countTokens(ctx, usage)
		if limit := limitOf(err); limit != "" {
			s.metrics.TurnLimit(limit)
		}
	}()
	if emit == nil {
		emit = func(context.Context, schemas.Event) error { return nil }
	}
	result := &schemas.Result{Message: schemas.ResultMessage{Role: "model", Content: []schemas.Content{}}, Usage: usage}
	if h := t.held; h != nil {
		if h.waiting != nil {
			// Some results came, others are still awaited: nothing for the model yet.
			calls := h.waitingCalls()
			if err := h.commit(ctx, nil); err != nil {
				return nil, err
			}
			return interrupted(result, calls), nil
		}
		emit = h.record(emit)
	}
	req := &ModelRequest{Catalog: t.catalog, Messages: t.messages, ClientTools: t.tools, MaxOutputTokens: s.limits.MaxOutputTokens}
	bud := &budget{limits: s.limits}
	mctx, stop := s.turnDeadline(ctx, start)
	defer stop()
	if t.a2ui != nil {
		req.System = withPolicy(t.catalog, a2uiSystemPrompt(t.catalog), t.policy)
	} else {
		req.Tools, req.System = tools.For(t.catalog), withPolicy(t.catalog, systemPrompt(t.catalog), t.policy)
	}
	var text strings.Builder
	var a2uiMsgs []json.RawMessage
	var calls []schemas.ToolCall
	index := 0
	closing := false
	for {
		c := &modelCall{s: s, turn: t, emit: emit, index: index, budget: bud}
		req.NoTools = closing
		resp, err := s.callModel(mctx, c, req)
		if err != nil {
			if ctx.Err() == nil && mctx.Err() != nil {
				err = AsError(context.Cause(mctx)) // the turn's time ran out
			}
			return nil, err
		}
		if resp.FinishReason == ai.FinishReasonLength && s.limits.MaxOutputTokens > 0 {
			return nil, limitError(LimitMaxOutputTokens, s.limits.MaxOutputTokens, "the model's output reached the largest a call may give")
		}
		result.Usage.ModelCalls++
		result.Usage.Model = c.served
		addUsage(result.Usage, resp.Usage)
		if u := resp.Usage; u != nil {
			s.metrics.Tokens(s.callerLabel(ctx), c.served, u.InputTokens, u.OutputTokens)
		}
		result.FinishReason = string(resp.FinishReason)
		result.ToolRequests = append(result.ToolRequests, c.accepted...)
		a2uiMsgs = append(a2uiMsgs, c.a2uiSent...)
		text.WriteString(c.text.String())
		rejected := c.rejectedCount()
		s.countPolicy(c)
		rejectedTotal += rejected
		s.stats.Streamed.Add(int64(len(c.accepted) + len(c.a2uiSent)))
		s.stats.Rejected.Add(int64(rejected))
		s.metrics.Surfaces("streamed", len(c.accepted)+len(c.a2uiSent))
		s.metrics.Surfaces("rejected", rejected)
		surfaces, a2uiCount = len(result.ToolRequests), len(a2uiMsgs)
		switch {
		case rejected > 0 && repairs < s.maxRepairs:
			repairs++
		case rejected > 0:
			s.stats.Failed.Add(1)
			return nil, c.failure(repairs)
		case t.closing && !closing && len(c.verdicts) > 0 && len(c.calls) == 0:
			closing = true
		default:
			if len(c.calls) > 0 {
				if calls, err = c.sendCalls(ctx, resp); err != nil {
					return nil, err
				}
			}
			if rejectedTotal > 0 {
				s.stats.Repaired.Add(int64(rejectedTotal))
				s.metrics.Surfaces("repaired", rejectedTotal)
			}
			if result.FinishReason == "" {
				result.FinishReason = string(ai.FinishReasonStop)
			}
			if text.Len() > 0 {
				result.Message.Content = append(result.Message.Content, schemas.Content{Text: text.String()})
			}
			if len(a2uiMsgs) > 0 {
				// The result hands the turn's UI over whole: each surface once, in its
				// final state.
				result.Message.Content = append(result.Message.Content, schemas.A2UIPart(a2ui.Final(t.catalog.A2UI.Version, a2uiMsgs)))
			}
			if len(calls) > 0 {
				interrupted(result, calls)
			}
			if t.held != nil {
				if err := t.held.commit(ctx, calls); err != nil {
					return nil, err
				}
			}
			clientCalls = len(calls)
			return result, nil
		}
		// Answer the model (its tool requests, with the violations of the invalid ones; or
		// the violations of its A2UI messages) and let it continue.
		req.Messages = append(req.Messages[:len(req.Messages):len(req.Messages)], resp.Message, c.answer(resp.Message))
		index += 2
	}
}

// interrupted ends a result with the calls the turn waits for, as Genkit interrupts.
func interrupted(r *schemas.Result, calls []schemas.ToolCall) *schemas.Result {
	r.FinishReason = schemas.FinishInterrupted
	for i := range calls {
		r.Message.Content = append(r.Message.Content, schemas.InterruptPart(&calls[i]))
	}
	return r
}

func addUsage(u *schemas.Usage, g *ai.GenerationUsage) {
	if g == nil {
		return
	}
	u.InputTokens += g.InputTokens
	u.OutputTokens += g.OutputTokens
	u.TotalTokens += g.TotalTokens
	u.CachedTokens += g.CachedContentTokens
}

// modelCall tracks one model response while it streams.
type modelCall struct {
	s      *Service
	turn   *turn
	emit   func(context.Context, schemas.Event) error
	index  int
	budget *budget // the turn's, shared by its model calls
	served string  // the name of the model that served the call

	emitted  bool                  // anything sent to the client during this call
	verdicts [][]catalog.Violation // per tool request of the response, in order
	accepted []schemas.ToolRequest
	calls    []schemas.ToolCall // the valid calls of client tools, sent when the response ends
	text     strings.Builder

	// An A2UI turn: the parser of this response, the violations of its A2UI messages
	// and the messages sent.
	parser *a2ui.Parser
	seen   bool // a part of the response was seen while it streamed
	// The timed flush of components waiting while the model pauses: the builder, what
	// it sends and the timer are guarded by mu.
	mu       sync.Mutex
	timer    *time.Timer
	flushCtx context.Context
	closed   bool  // the response's stream ended: no more timed flushes
	timerErr error // what a timed flush failed with
	touched  bool  // the builder took something of this response
	a2uiBad  []catalog.Violation
	a2uiSent []json.RawMessage
}

// rejectedCount counts the rejected tool requests of the response, and its A2UI messages
// as one when any broke a rule.
func (c *modelCall) rejectedCount() int {
	n := 0
	for _, v := range c.verdicts {
		if len(v) > 0 {
			n++
		}
	}
	if len(c.a2uiBad) > 0 {
		n++
	}
	return n
}

// onPart handles one part of the model response as it streams.
func (c *modelCall) onPart(ctx context.Context, p *ai.Part) error {
	if p.IsText() {
		if err := c.budget.write(len(p.Text)); err != nil {
			return err
		}
	}
	switch {
	case c.turn.a2ui != nil:
		return c.onA2UIPart(ctx, p)
	case p.IsToolRequest() && p.ToolRequest != nil && !p.ToolRequest.Partial:
		return c.onToolRequest(ctx, p)
	case p.IsText() && p.Text != "":
		c.text.WriteString(p.Text)
		c.emitted = true
		return c.emit(ctx, schemas.Event{Type: schemas.EventText, Index: c.index, Text: p.Text})
	}
	return nil
}

func (c *modelCall) onToolRequest(ctx context.Context, p *ai.Part) error {
	tr := p.ToolRequest
	input, err := c.encodeCall(tr)
	if err != nil {
		return err
	}
	if c.turn.tools.Has(tr.Name) {
		return c.onClientCall(ctx, p, input)
	}
	if err := c.componentsLimit(tr); err != nil {
		return err
	}
	ref := strconv.Itoa(len(c.verdicts))
	report := tools.Check(c.turn.catalog, tr.Name, tr.Input)
	if in, ok := tr.Input.(map[string]any); ok && tr.Name == tools.AddOrUpdateSurface && c.turn.policy != nil {
		report.Violations = append(report.Violations, c.turn.policy.CheckDefinition(c.turn.catalog, in["definition"], "/definition")...)
	}
	vs := report.Violations
	c.verdicts = append(c.verdicts, vs)
	for _, w := range report.Warnings {
		c.s.log.LogAttrs(ctx, slog.LevelWarn, "tool request warning", slog.String("tool", tr.Name), slog.String("warning", w.String()))
	}
	if len(vs) > 0 {
		c.s.log.LogAttrs(ctx, slog.LevelWarn, "rejected tool request", slog.String("tool", tr.Name),
			slog.Int("violations", len(vs)), slog.String("first", vs[0].String()))
		return nil
	}
	if in, _ := tr.Input.(map[string]any); in != nil {
		sid, _ := in["surfaceId"].(string)
		switch tr.Name {
		case tools.DeleteSurface:
			if !c.turn.surfaces[sid] {
				c.s.log.LogAttrs(ctx, slog.LevelWarn, "deleteSurface names a surface the conversation did not create", slog.String("surfaceId", sid))
			}
			delete(c.turn.surfaces, sid)
		case tools.AddOrUpdateSurface:
			c.turn.surfaces[sid] = true
		}
	}
	req := schemas.ToolRequest{Name: tr.Name, Input: input, Ref: ref}
	c.accepted = append(c.accepted, req)
	c.emitted = true
	return c.emit(ctx, schemas.Event{Type: schemas.EventToolRequest, Index: c.index, ToolRequest: &req})
}

// finish handles what the stream did not show: models that do not stream, or stream tool
// requests only in the final response.
func (c *modelCall) finish(ctx context.Context, resp *ai.ModelResponse) error {
	if c.turn.a2ui != nil {
		return c.finishA2UI(ctx, resp)
	}
	if resp.Message == nil {
		return nil
	}
	n, sawText := 0, c.text.Len() > 0
	for _, p := range resp.Message.Content {
		switch {
		case p.IsToolRequest() && p.ToolRequest != nil:
			if n >= len(c.verdicts) {
				if err := c.onToolRequest(ctx, p); err != nil {
					return err
				}
			}
			n++
		case p.IsText() && !sawText && p.Text != "":
			if err := c.onPart(ctx, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// toolResponses answers each tool request of the model message (see toolResponse).
func (c *modelCall) toolResponses(m *ai.Message) []*ai.Part {
	var out []*ai.Part
	n := 0
	for _, p := range m.Content {
		if !p.IsToolRequest() || p.ToolRequest == nil {
			continue
		}
		var verdict []catalog.Violation
		if n < len(c.verdicts) {
			verdict = c.verdicts[n]
		}
		n++
		out = append(out, c.toolResponse(p.ToolRequest, verdict))
	}
	return out
}

// answer is the message that answers a response the turn goes on after: a tool message
// answering its tool requests; in an A2UI turn, a user message telling what of its A2UI
// messages broke the rules (in the tool message, when the response called tools).
func (c *modelCall) answer(m *ai.Message) *ai.Message {
	responses := c.toolResponses(m)
	if c.turn.a2ui == nil {
		return &ai.Message{Role: ai.RoleTool, Content: responses}
	}
	if len(responses) == 0 {
		return ai.NewUserTextMessage(c.a2uiAnswer())
	}
	if len(c.a2uiBad) > 0 {
		responses = append(responses, ai.NewTextPart(c.a2uiAnswer()))
	}
	return &ai.Message{Role: ai.RoleTool, Content: responses}
}

func (c *modelCall) failure(repairs int) *Error {
	var all []catalog.Violation
	for _, v := range c.verdicts {
		all = append(all, v...)
	}
	all = append(all, c.a2uiBad...)
	msgs := make([]string, 0, len(all))
	what := "does not conform to the catalog"
	for _, v := range all {
		msgs = append(msgs, v.String())
		if isPolicyCode(v.Code) {
			what = "the UI policy refuses or that does not conform to the catalog"
		}
	}
	return &Error{
		Status:  StatusFailedPrecondition,
		Message: fmt.Sprintf("the model produced UI that %s (after %d repair attempts): %s", what, repairs, strings.Join(msgs, "; ")),
		Details: map[string]any{"violations": all},
	}
}

// callModel makes one model call, retrying on rate limits and unavailability while
// nothing of it has been streamed.
func (s *Service) callModel(ctx context.Context, c *modelCall, req *ModelRequest) (*ai.ModelResponse, error) {
	var waited time.Duration
	m := c.turn.model
	provider, _, _ := strings.Cut(m.Name(), "/")
	for attempt := 0; ; attempt++ {
		began := time.Now()
		c.closed = false
		served := m.Name()
		resp, err := m.Generate(context.WithValue(ctx, servedKey{}, &served), req, c.onPart)
		c.stop()
		c.served = served
		if s.metrics != nil {
			provider, _, _ := strings.Cut(served, "/")
			status := ""
			if err != nil && ctx.Err() == nil {
				// A call the turn's end stopped is no error of the provider.
				status = string(AsError(err).Status)
			}
			s.metrics.ModelCall(provider, time.Since(began), status)
		}
		if err == nil && ctx.Err() != nil {
			// A model whose stream was cut by the cancellation may end quietly; it was
			// not complete.
			err = context.Cause(ctx)
		}
		if err == nil {
			if err := c.finish(ctx, resp); err != nil {
				return nil, err
			}
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, AsError(context.Cause(ctx))
		}
		e := AsError(err)
		if limitOf(e) != "" {
			return nil, e // a limit: no retry
		}
		delay, ok := s.retry.next(attempt, e, waited)
		if c.emitted || c.touched || !ok {
			return nil, e
		}
		s.metrics.ModelRetry(provider)
		s.log.LogAttrs(ctx, slog.LevelWarn, "model call failed; retrying", slog.String("status", string(e.Status)),
			slog.Duration("after", delay), slog.Int("attempt", attempt+1))
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, AsError(context.Cause(ctx))
		case <-timer.C:
		}
		waited += delay
		c.verdicts, c.accepted, c.calls = nil, nil, nil
		c.parser, c.seen = nil, false
		c.text.Reset()
	}
}
