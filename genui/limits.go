package genui

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/internal/jsonenc"
	"github.com/genuiserver/genui/tools"
)

// Limits bound what a model may write in one turn, so that a runaway model (looping,
// led by a prompt injection, or streaming slowly forever) cannot exhaust a replica or a
// client. A turn that reaches one ends with a RESOURCE_EXHAUSTED *Error whose details
// name the limit and its value ({"limit":"outputBytes","value":1048576}); what the client
// was shown before stays, and is valid. A zero field is no limit.
type Limits struct {
	// MaxOutputTokens is the largest output of one model call, asked of the provider
	// (Gemini's maxOutputTokens, OpenAI's max_completion_tokens, Ollama's num_predict).
	MaxOutputTokens int
	// Components is the most components (widgets) one surface may hold.
	Components int
	// OutputBytes is the most bytes the model may write in a turn, its repairs included:
	// text, A2UI, tool calls.
	OutputBytes int
	// ToolCalls is the most tool calls the model may make in a turn: UI tools
	// (addOrUpdateSurface, deleteSurface) and client tools.
	ToolCalls int
	// DataModelBytes is the most bytes of data-model updates the model may write to one
	// surface in a turn.
	DataModelBytes int
	// TurnTime is the longest a turn's model calls may take, from the turn's start.
	TurnTime time.Duration
}

// DefaultLimits admit ordinary UI, a list of 2,000 rows (about 260 KB of model output) or
// a form of a few hundred fields, and stop a runaway turn within seconds of CPU and tens
// of MiB.
func DefaultLimits() Limits {
	return Limits{
		MaxOutputTokens: 65536,
		Components:      10000,
		OutputBytes:     1 << 20,
		ToolCalls:       64,
		DataModelBytes:  1 << 20,
		TurnTime:        10 * time.Minute,
	}
}

// Check reports a limit that is not a limit (negative).
func (l Limits) Check() error {
	for _, f := range []struct {
		name string
		v    int64
	}{{LimitMaxOutputTokens, int64(l.MaxOutputTokens)}, {LimitComponents, int64(l.Components)}, {LimitOutputBytes, int64(l.OutputBytes)},
		{LimitToolCalls, int64(l.ToolCalls)}, {LimitDataModelBytes, int64(l.DataModelBytes)}, {LimitTurnTime, int64(l.TurnTime)}} {
		if f.v < 0 {
			return fmt.Errorf("%s: %d is negative; 0 is no limit", f.name, f.v)
		}
	}
	return nil
}

// WithLimits sets what a model may write in one turn (default [DefaultLimits]).
func WithLimits(l Limits) Option { return func(sv *Service) { sv.limits = l } }

// Names of the limits, as errors, logs and metrics name them.
const (
	LimitMaxOutputTokens = "maxOutputTokens"
	LimitComponents      = "components"
	LimitOutputBytes     = "outputBytes"
	LimitToolCalls       = "toolCalls"
	LimitDataModelBytes  = "dataModelBytes"
	LimitTurnTime        = "turnTime"
)

// errLimit is the cause of every limit's *Error.
var errLimit = errors.New("a turn limit was reached")

// limitError is the error of a turn that reached a limit; what says what reached it.
func limitError(name string, value any, what string) *Error {
	return (&Error{Status: StatusResourceExhausted,
		Message: fmt.Sprintf("the turn stopped at its limit %s (%v): %s; what was shown before stays", name, value, what),
		Details: map[string]any{"limit": name, "value": value}}).WithCause(errLimit)
}

// limitOf returns the name of the limit an error reached, or "".
func limitOf(err error) string {
	var e *Error
	if !errors.As(err, &e) || !errors.Is(e, errLimit) {
		return ""
	}
	d, _ := e.Details.(map[string]any)
	name, _ := d["limit"].(string)
	return name
}

// turnDeadline bounds the model calls of a turn started at start by its TurnTime.
func (s *Service) turnDeadline(ctx context.Context, start time.Time) (context.Context, context.CancelFunc) {
	if s.limits.TurnTime <= 0 {
		return ctx, func() {}
	}
	return context.WithDeadlineCause(ctx, start.Add(s.limits.TurnTime),
		limitError(LimitTurnTime, s.limits.TurnTime.String(), "the model was still writing"))
}

// budget counts what the model wrote in a turn against its limits.
type budget struct {
	limits Limits
	bytes  int
	calls  int
}

// write counts n bytes of model output.
func (b *budget) write(n int) error {
	b.bytes += n
	if l := b.limits.OutputBytes; l > 0 && b.bytes > l {
		return limitError(LimitOutputBytes, l, fmt.Sprintf("the model wrote more than %d bytes", l))
	}
	return nil
}

// call counts one tool call.
func (b *budget) call() error {
	b.calls++
	if l := b.limits.ToolCalls; l > 0 && b.calls > l {
		return limitError(LimitToolCalls, l, fmt.Sprintf("the model made more than %d tool calls", l))
	}
	return nil
}

// componentsLimit checks the widgets of an addOrUpdateSurface request against the
// limit of components per surface.
func (c *modelCall) componentsLimit(tr *ai.ToolRequest) error {
	l := c.s.limits.Components
	if l <= 0 || tr.Name != tools.AddOrUpdateSurface {
		return nil
	}
	in, _ := tr.Input.(map[string]any)
	def, _ := in["definition"].(map[string]any)
	if widgets, _ := def["widgets"].([]any); len(widgets) > l {
		sid, _ := in["surfaceId"].(string)
		return limitError(LimitComponents, l, fmt.Sprintf("surface %q has more than %d widgets", sid, l))
	}
	return nil
}

// encodeCall encodes a tool call's input, once: counted against the turn's limits, then
// stored, streamed and returned as these bytes.
func (c *modelCall) encodeCall(tr *ai.ToolRequest) ([]byte, error) {
	input, err := jsonenc.Marshal(tr.Input)
	if err != nil {
		return nil, fmt.Errorf("encoding tool input: %w", err)
	}
	if err := c.budget.call(); err != nil {
		return nil, err
	}
	if err := c.budget.write(len(input)); err != nil {
		return nil, err
	}
	return input, nil
}
