package genui

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/core/tracing"
	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/tools"
)

// GenkitModel returns a Model that calls a model registered in g (by a Genkit plugin:
// OpenAI-compatible endpoints, Ollama, …) through genkit.Generate. Genkit traces the
// call itself.
func GenkitModel(g *genkit.Genkit, name string) (Model, error) {
	m := genkit.LookupModel(g, name)
	if m == nil {
		return nil, fmt.Errorf("model %q is not available", name)
	}
	return &genkitModel{g: g, m: m, name: name}, nil
}

type genkitModel struct {
	g    *genkit.Genkit
	m    ai.Model
	name string
}

func (m *genkitModel) Name() string { return m.name }

func (m *genkitModel) Generate(ctx context.Context, req *ModelRequest, onPart func(context.Context, *ai.Part) error) (*ai.ModelResponse, error) {
	opts := []ai.GenerateOption{
		ai.WithModel(m.m),
		ai.WithSystem(req.System.String()),
		ai.WithMessages(req.Messages...),
		ai.WithTools(genkitTools(req.Tools)...),
		ai.WithTools(genkitClientTools(req.ClientTools)...),
		ai.WithReturnToolRequests(true),
		ai.WithStreaming(func(ctx context.Context, chunk *ai.ModelResponseChunk) error {
			if chunk.Role != "" && chunk.Role != ai.RoleModel {
				return nil
			}
			for _, p := range chunk.Content {
				// Some plugins (compat_oai) stream tool requests as fragments of their
				// arguments; only whole ones are passed on, the rest come with the response.
				if p.IsToolRequest() {
					if _, whole := p.ToolRequest.Input.(map[string]any); !whole {
						continue
					}
				}
				if err := onPart(ctx, p); err != nil {
					return err
				}
			}
			return nil
		}),
	}
	if req.NoTools && (req.Tools != nil || req.ClientTools != nil) {
		opts = append(opts, ai.WithToolChoice(ai.ToolChoiceNone))
	}
	if req.MaxOutputTokens > 0 {
		opts = append(opts, ai.WithConfig(maxTokensConfig(m.name, req.MaxOutputTokens)))
	}
	resp, err := genkit.Generate(ctx, m.g, opts...)
	if err != nil {
		return nil, AsError(err)
	}
	return resp, nil
}

type genkitToolsKey struct{}

// genkitTools returns the catalog's UI tools as Genkit tools, built once per catalog. The
// model is only asked for tool requests, so the tools never run.
func genkitTools(s *tools.Set) []ai.ToolRef {
	if s == nil {
		return nil
	}
	return s.Catalog.Memo(genkitToolsKey{}, func() any {
		return toolRefs(s.Full)
	}).([]ai.ToolRef)
}

// genkitClientTools returns the client tools as Genkit tools, built once per set.
func genkitClientTools(s *tools.ClientSet) []ai.ToolRef {
	if s == nil {
		return nil
	}
	return s.Memo(genkitToolsKey{}, func() any { return toolRefs(s.Tools) }).([]ai.ToolRef)
}

// toolRefs declares tools to Genkit. They never run: the model is only asked for tool
// requests.
func toolRefs(ts []tools.Tool) []ai.ToolRef {
	out := make([]ai.ToolRef, 0, len(ts))
	for _, t := range ts {
		var schema map[string]any
		_ = json.Unmarshal(t.Schema, &schema)
		out = append(out, ai.NewTool(t.Name, t.Description,
			func(*ai.ToolContext, any) (any, error) { return tools.Ack(t.Name), nil },
			ai.WithInputSchema(schema)))
	}
	return out
}

// traced records each call of a model that Genkit does not trace itself as a model span,
// so that a flow's trace in the Genkit Dev UI shows the model call as its child.
type traced struct{ Model }

// withTrace returns m traced, unless Genkit traces it itself.
func withTrace(m Model) Model {
	switch m.(type) {
	case *genkitModel, traced:
		return m
	}
	return traced{m}
}

func (t traced) Generate(ctx context.Context, req *ModelRequest, onPart func(context.Context, *ai.Part) error) (*ai.ModelResponse, error) {
	in := &ai.ModelRequest{Messages: make([]*ai.Message, 0, len(req.Messages)+1)}
	in.Messages = append(append(in.Messages, ai.NewSystemTextMessage(req.System.String())), req.Messages...)
	var declared []tools.Tool
	if req.Tools != nil {
		declared = req.Tools.Full
	}
	if req.ClientTools != nil {
		declared = append(declared[:len(declared):len(declared)], req.ClientTools.Tools...)
	}
	for _, tool := range declared {
		var schema map[string]any
		_ = json.Unmarshal(tool.Schema, &schema)
		in.Tools = append(in.Tools, &ai.ToolDefinition{Name: tool.Name, Description: tool.Description, InputSchema: schema})
	}
	if req.NoTools && len(declared) > 0 {
		in.ToolChoice = ai.ToolChoiceNone
	}
	meta := &tracing.SpanMetadata{Name: t.Name(), Type: "action", Subtype: "model", Metadata: map[string]string{}}
	if flow := core.FlowNameFromContext(ctx); flow != "" {
		meta.Metadata["flow:name"] = flow
	}
	return tracing.RunInNewSpan(ctx, meta, in, func(ctx context.Context, _ *ai.ModelRequest) (*ai.ModelResponse, error) {
		return t.Model.Generate(ctx, req, onPart)
	})
}

// maxTokensConfig is the configuration of a Genkit model's call that caps its output at
// n tokens: Ollama's plugin reads Genkit's common configuration (num_predict); the
// OpenAI-compatible one takes the request's own fields (max_completion_tokens).
func maxTokensConfig(model string, n int) any {
	if strings.HasPrefix(model, "ollama/") {
		return &ai.GenerationCommonConfig{MaxOutputTokens: n}
	}
	return map[string]any{"max_completion_tokens": n}
}
