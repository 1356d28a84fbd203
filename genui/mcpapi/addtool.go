package mcpapi

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// turnHandler is a tool that answers with a turn: its result carries the turn's
// structuredContent already.
type turnHandler[In any] func(context.Context, *mcp.CallToolRequest, In) (*mcp.CallToolResult, *turnOutput, error)

// addTurnTool adds a tool whose result is a turn. Its arguments are checked against the
// input schema inferred from In and decoded, as mcp.AddTool does; its output is set as
// the result's structuredContent as it is, without mcp.AddTool's check of every result
// against the output schema (a decode of the whole turn into maps and a walk of it,
// about a sixth of what a call of generate_ui adds to the turn's CPU): the tests check
// that turnOutput matches outputSchema.
func addTurnTool[In any](s *mcp.Server, t *mcp.Tool, h turnHandler[In]) {
	schema := t.InputSchema
	if schema == nil {
		inferred, err := jsonschema.For[In](nil)
		if err != nil {
			panic(fmt.Sprintf("tool %s: input schema: %v", t.Name, err))
		}
		schema = inferred
	}
	js, ok := schema.(*jsonschema.Schema)
	if !ok {
		panic(fmt.Sprintf("tool %s: the input schema is a %T", t.Name, schema))
	}
	resolved, err := js.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", t.Name, err))
	}
	tt := *t
	tt.InputSchema = js
	s.AddTool(&tt, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := map[string]any{}
		if len(req.Params.Arguments) > 0 {
			if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
				return toolError(fmt.Errorf("arguments: not a JSON object: %w", err)), nil
			}
		}
		if err := resolved.Validate(args); err != nil {
			return toolError(fmt.Errorf("validating \"arguments\": %w", err)), nil
		}
		var in In
		if len(req.Params.Arguments) > 0 {
			if err := json.Unmarshal(req.Params.Arguments, &in); err != nil {
				return toolError(fmt.Errorf("arguments: %w", err)), nil
			}
		}
		res, out, err := h(ctx, req, in)
		if err != nil {
			if wire, ok := err.(*jsonrpc.Error); ok {
				return nil, wire
			}
			return toolError(err), nil
		}
		if out != nil {
			res.StructuredContent = out
		}
		return res, nil
	})
}
