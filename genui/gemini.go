package genui

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"google.golang.org/genai"

	"github.com/genuiserver/genui/internal/jsonenc"
)

// jsonSchemaTools is a model middleware for Gemini models. The googlegenai plugin converts
// tool schemas to Gemini's limited Schema type, which drops or rejects anyOf, oneOf,
// additionalProperties, const and type arrays: exactly what widget catalogs use. This
// middleware sends every tool's full JSON Schema as parametersJsonSchema instead. The
// declarations are encoded once per catalog (see geminiTool), so neither Genkit nor the
// genai client re-encodes the catalog on every call.
func jsonSchemaTools(tool *genai.Tool) ai.ModelMiddleware {
	return func(next ai.ModelFunc) ai.ModelFunc {
		return func(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			if len(req.Tools) == 0 {
				return next(ctx, req, cb)
			}
			var cfg genai.GenerateContentConfig
			switch c := req.Config.(type) {
			case *genai.GenerateContentConfig:
				if c != nil {
					cfg = *c
				}
			case genai.GenerateContentConfig:
				cfg = c
			}
			cfg.Tools = append(append([]*genai.Tool(nil), cfg.Tools...), tool)
			if req.ToolChoice == ai.ToolChoiceNone {
				cfg.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeNone}}
			}
			r := *req
			r.Config = &cfg
			r.Tools = nil
			return next(ctx, &r, cb)
		}
	}
}

// geminiTool returns the function declarations of the tools, with each input schema
// encoded as JSON once.
func geminiTool(ts []ai.ToolRef) *genai.Tool {
	decls := make([]*genai.FunctionDeclaration, 0, len(ts))
	for _, t := range ts {
		def := t.(ai.Tool).Definition()
		schema, err := jsonenc.Marshal(def.InputSchema)
		if err != nil {
			continue
		}
		decls = append(decls, &genai.FunctionDeclaration{
			Name:                 def.Name,
			Description:          def.Description,
			ParametersJsonSchema: json.RawMessage(schema),
		})
	}
	return &genai.Tool{FunctionDeclarations: decls}
}

// isGemini reports whether a model name is served by the googlegenai plugin.
func isGemini(model string) bool {
	return strings.HasPrefix(model, "googleai/") || strings.HasPrefix(model, "vertexai/")
}
