package mcpapi

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genuiserver/genui/genui"
)

// The error table of MCP. A turn that could not run or failed is a tool result with
// isError set and a text saying what the caller (a host's model, mostly) can do about
// it; a refusal of the server's middleware stack, before MCP reads the request, is a
// JSON-RPC error (transport.JSONRPC).

// toolError is the result of a tool call that failed with err.
func toolError(err error) *mcp.CallToolResult {
	var res mcp.CallToolResult
	res.SetError(err)
	return &res
}

// turnError is what a caller is told of a turn that could not run or failed: the field
// and problem of a bad request, an unknown conversation as such, whether to retry;
// never the cause of an internal failure, which the log keeps.
func (s *Server) turnError(ctx context.Context, err error) error {
	e := genui.AsError(err)
	switch e.Status {
	case genui.StatusNotFound:
		return errors.New("conversationId: unknown or expired conversation; call generate_ui without a conversationId to start a new one")
	case genui.StatusInvalidArgument, genui.StatusFailedPrecondition:
		return errors.New(e.Message)
	case genui.StatusAborted:
		if d, _ := e.Details.(map[string]any); d["callId"] != nil {
			return errors.New(e.Message) // a result for a call answered already
		}
		return errors.New("conversationId: a turn of this conversation is running; call again when it has ended")
	case genui.StatusUnavailable, genui.StatusResourceExhausted:
		msg := e.Message
		if e.RetryAfter > 0 {
			msg += fmt.Sprintf(" (retry in %d s)", e.RetryAfterSeconds())
		}
		return errors.New(msg)
	}
	s.log.WarnContext(ctx, "an MCP turn failed", "status", e.Status, "err", err)
	return fmt.Errorf("the turn failed (%s)", e.Status)
}
