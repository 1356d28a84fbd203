package genui

import (
	"context"
	"encoding/base64"
	"errors"
	"log/slog"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/tools"
)

// Client tools in a turn: the model gets them beside the UI tools. A call of one is
// checked against the tool's input schema (a violation goes back to the model, as an
// invalid surface does) and held until the model's response ends: if nothing of the
// response was rejected, the calls are sent to the client, after whatever the response
// showed, and the turn ends, interrupted, listing them. Nothing runs on the server; the
// client continues the turn with their results (see calls.go).

// clientTools compiles the client tools a request declares, once per distinct
// declaration (the compiled sets share the catalog cache and its bounds).
func (s *Service) clientTools(decls []schemas.ClientTool) (*tools.ClientSet, *Error) {
	if len(decls) == 0 {
		return nil, nil
	}
	v, err := s.catalogs.Load(tools.ClientKey(decls), func() (catalog.Sized, error) { return tools.CompileClient(decls) })
	var fe *tools.FieldError
	switch {
	case errors.As(err, &fe):
		return nil, fieldError(fe.Field, "%s", fe.Message)
	case err != nil:
		return nil, AsError(err)
	}
	return v.(*tools.ClientSet), nil
}

// onClientCall checks a call of a client tool as the response streams; a valid call
// waits for the end of the response.
func (c *modelCall) onClientCall(ctx context.Context, p *ai.Part, input []byte) error {
	tr := p.ToolRequest
	vs := c.turn.tools.Check(tr.Name, tr.Input)
	if p := c.turn.policy; p != nil && len(vs) == 0 {
		vs = p.CheckInput(tr.Name, c.turn.tools.InputSchema(tr.Name), tr.Input, "")
	}
	c.verdicts = append(c.verdicts, vs)
	if len(vs) > 0 {
		c.s.log.LogAttrs(ctx, slog.LevelWarn, "rejected client tool call", slog.String("tool", tr.Name),
			slog.Int("violations", len(vs)), slog.String("first", vs[0].String()))
		return nil
	}
	c.calls = append(c.calls, schemas.ToolCall{Name: tr.Name, Input: input, Signature: signature(p)})
	return nil
}

// signature returns the model's signature of a part, base64.
func signature(p *ai.Part) string {
	if sig, ok := p.Metadata[SignatureKey].([]byte); ok && len(sig) > 0 {
		return base64.StdEncoding.EncodeToString(sig)
	}
	return ""
}

// sendCalls gives the response's calls their ids and sends them. A model that signed its
// response on another part than its calls (Gemini signs the first part of a step) gets
// the signature back with the first call, so a client continuing statelessly returns it.
func (c *modelCall) sendCalls(ctx context.Context, resp *ai.ModelResponse) ([]schemas.ToolCall, error) {
	signed := false
	for _, tc := range c.calls {
		signed = signed || tc.Signature != ""
	}
	if !signed && resp.Message != nil {
		for _, p := range resp.Message.Content {
			if sig := signature(p); sig != "" {
				c.calls[0].Signature = sig
				break
			}
		}
	}
	for i := range c.calls {
		c.calls[i].CallID = newCallID(c.turn.held)
		if err := c.emit(ctx, schemas.Event{Type: schemas.EventToolCall, Index: c.index, ToolCall: &c.calls[i]}); err != nil {
			return nil, err
		}
	}
	return c.calls, nil
}

// toolResponse answers one tool request of a response the turn goes on after: a UI tool
// request with an acknowledgement or its violations; a call of a client tool with its
// violations, or, when it was valid, with the news that it did not reach the client
// because something else of the response was rejected.
func (c *modelCall) toolResponse(tr *ai.ToolRequest, verdict []catalog.Violation) *ai.Part {
	var output any
	switch client := c.turn.tools.Has(tr.Name); {
	case client && len(verdict) > 0:
		output = tools.RejectedInput(verdict)
	case client:
		output = tools.NotRun()
	case len(verdict) > 0:
		output = tools.Rejected(verdict)
	default:
		output = tools.Ack(tr.Name)
	}
	return ai.NewToolResponsePart(&ai.ToolResponse{Name: tr.Name, Ref: tr.Ref, Output: output})
}
