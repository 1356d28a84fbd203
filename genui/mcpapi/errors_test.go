package mcpapi

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genuiserver/genui/genui"
)

// Every status maps to a tool result with isError and a text the caller can act on, the
// cause of an internal failure left out, and a retry hint in whole seconds, at least 1.
func TestErrorTable(t *testing.T) {
	s := &Server{log: slog.New(slog.DiscardHandler)}
	for _, st := range genui.Statuses {
		e := &genui.Error{Status: st, Message: "conversationId: the problem", RetryAfter: 1500 * time.Millisecond}
		res := toolError(s.turnError(context.Background(), e))
		text := res.Content[0].(*mcp.TextContent).Text
		if !res.IsError || text == "" {
			t.Errorf("%s: isError %v, text %q", st, res.IsError, text)
		}
		switch st {
		case genui.StatusResourceExhausted, genui.StatusUnavailable:
			if !strings.HasSuffix(text, "(retry in 2 s)") {
				t.Errorf("%s: %q has no retry hint of 2 s", st, text)
			}
		case genui.StatusInvalidArgument, genui.StatusFailedPrecondition:
			if text != e.Message {
				t.Errorf("%s: %q, want the field and problem %q", st, text, e.Message)
			}
		case genui.StatusNotFound, genui.StatusAborted:
			if !strings.HasPrefix(text, "conversationId: ") {
				t.Errorf("%s: %q does not name conversationId", st, text)
			}
		default:
			if text != "the turn failed ("+string(st)+")" {
				t.Errorf("%s: %q", st, text)
			}
		}
	}
	e := &genui.Error{Status: genui.StatusResourceExhausted, Message: "rate limit", RetryAfter: time.Millisecond}
	if got := s.turnError(context.Background(), e).Error(); got != "rate limit (retry in 1 s)" {
		t.Errorf("a wait under a second: %q, want 1 s", got)
	}
}
