package genui

import (
	"context"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"google.golang.org/genai"
)

// jsonSchemaTools is a model middleware for Gemini models. The googlegenai plugin converts
// tool schemas to Gemini's limited Schema type, which drops or rejects anyOf, oneOf,
// additionalProperties, const and type arrays: exactly what widget catalogs use. This
// middleware sends every tool's full JSON Schema as parametersJsonSchema instead.
func jsonSchemaTools(next ai.ModelFunc) ai.ModelFunc {
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
		decls := make([]*genai.FunctionDeclaration, 0, len(req.Tools))
		for _, t := range req.Tools {
			decls = append(decls, &genai.FunctionDeclaration{
				Name:                 t.Name,
				Description:          t.Description,
				ParametersJsonSchema: t.InputSchema,
			})
		}
		cfg.Tools = append(append([]*genai.Tool(nil), cfg.Tools...), &genai.Tool{FunctionDeclarations: decls})
		if req.ToolChoice == ai.ToolChoiceNone {
			cfg.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeNone}}
		}
		r := *req
		r.Config = &cfg
		r.Tools = nil
		return next(ctx, &r, cb)
	}
}

// isGemini reports whether a model name is served by the googlegenai plugin.
func isGemini(model string) bool {
	return strings.HasPrefix(model, "googleai/") || strings.HasPrefix(model, "vertexai/")
}
