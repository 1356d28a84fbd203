package mcpapi_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genuiserver/genui/genui/mcpapi"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

// FuzzToolArguments calls each tool with arbitrary arguments over HTTP, and generate_ui
// with an arbitrary requestState too: every call is answered, a result or a tool error,
// never a panic or a protocol failure.
func FuzzToolArguments(f *testing.F) {
	for _, seed := range []string{
		`{"prompt":"a form"}`, `{"prompt":""}`, `{}`, `[]`, `null`, `{"prompt":3}`, `{"prompt":"x","conversationId":"\u0000"}`,
		`{"conversationId":"c","name":"a","surfaceId":"s","sourceComponentId":"b","context":{"k":[1,{"x":null}]}}`,
		`{"conversationId":"c","name":"a","surfaceId":"s","sourceComponentId":"b","timestamp":"2026-01-02T03:04:05Z"}`,
		`{"conversationId":"c","results":[{"callId":"a","name":"get_user_context","output":{"timeZone":"UTC"}}]}`,
		`{"conversationId":"c","results":[{"callId":"a","name":"b","error":"no"},{"callId":"","name":""}]}`,
		`{"prompt":"a form","after":-1,"waitMs":30000}`, `{"prompt":"a form","after":3}`,
	} {
		for _, tool := range []string{mcpapi.GenerateUI, mcpapi.UIAction, mcpapi.UIToolResult, mcpapi.UIStream} {
			f.Add(tool, seed, "")
		}
		f.Add(mcpapi.GenerateUI, seed, "eyJjIjoiY29udi0xMjM0NTY3OCIsInMiOlsieCJdfQ")
	}
	svc := servetest.Service(f, offline.Name)
	srv := servetest.Serve(f, svc, mcpapi.New(svc, mcpapi.WithLogger(servetest.Quiet)).Routes()...)
	c := mcp.NewClient(&mcp.Implementation{Name: "fuzz", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		f.Fatal(err)
	}
	defer cs.Close()
	f.Fuzz(func(t *testing.T, tool, args, state string) {
		switch tool {
		case mcpapi.GenerateUI, mcpapi.UIAction, mcpapi.UIToolResult, mcpapi.UIStream:
		default:
			tool = mcpapi.UIAction
		}
		if !json.Valid([]byte(args)) {
			return
		}
		if tool == mcpapi.UIStream {
			// A poll waits up to waitMs for a turn: keep it short.
			var m map[string]any
			if json.Unmarshal([]byte(args), &m) == nil && m != nil {
				if w, ok := m["waitMs"].(float64); !ok || w > 50 {
					m["waitMs"] = 1
				}
				b, _ := json.Marshal(m)
				args = string(b)
			}
		}
		params := &mcp.CallToolParams{Name: tool, Arguments: json.RawMessage(args)}
		if tool == mcpapi.GenerateUI && state != "" {
			params.RequestState = state
			params.InputResponses = mcp.InputResponseMap{"call-1": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "2"}}}
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, params)
		if err != nil {
			// The SDK refuses arguments that are not an object as invalid params.
			if !strings.Contains(err.Error(), "invalid") {
				t.Fatalf("%s %s: %v", tool, args, err)
			}
			return
		}
		if res.IsError && len(res.Content) == 0 {
			t.Fatalf("%s %s: a tool error without a text", tool, args)
		}
	})
}
