package fakeopenai

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/genuiserver/genui/internal/testkit/script"
)

// Request is a captured chat request.
type Request struct {
	// Model is the request's model.
	Model string
	// Stream is the request's "stream"; IncludeUsage its
	// stream_options.include_usage.
	Stream, IncludeUsage bool
	// Header is a copy of the request headers.
	Header http.Header
	// Body is the decoded JSON body; Raw holds its bytes.
	Body map[string]any
	Raw  []byte

	parsed wireRequest
	call   script.Call
}

type wireRequest struct {
	Model         string    `json:"model"`
	Messages      []Message `json:"messages"`
	Tools         []Tool    `json:"tools"`
	Stream        bool      `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

// Message is a message of the request.
type Message struct {
	Role string `json:"role"`
	// Content is a string, or an array of content parts
	// ({"type":"text","text":…}, {"type":"image_url",…}); null for an
	// assistant message of tool calls only.
	Content    json.RawMessage `json:"content,omitempty"`
	ToolCalls  []AssistantCall `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// Text returns the message's text: its string content, or its text parts
// joined.
func (m Message) Text() string {
	var s string
	if json.Unmarshal(m.Content, &s) == nil {
		return s
	}
	var parts []struct{ Type, Text string }
	_ = json.Unmarshal(m.Content, &parts)
	var b strings.Builder
	for _, p := range parts {
		if p.Type == "text" {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

// AssistantCall is a tool call of an assistant message sent back.
type AssistantCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// Tool is a tool declared in the request.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description,omitempty"`
		Parameters  map[string]any `json:"parameters,omitempty"`
		Strict      *bool          `json:"strict,omitempty"`
	} `json:"function"`
}

// Done is closed when the server has finished handling the request.
func (r *Request) Done() <-chan struct{} { return r.call.Done() }

// Cancelled reports whether the client went away (or the server closed)
// before the reply was fully written.
func (r *Request) Cancelled() bool { return r.call.Cancelled() }

// Messages returns the conversation sent in the request.
func (r *Request) Messages() []Message { return r.parsed.Messages }

// Tools returns the tools declared in the request.
func (r *Request) Tools() []Tool { return r.parsed.Tools }

// SystemText returns the text of the system (or developer) messages.
func (r *Request) SystemText() string {
	var b strings.Builder
	for _, m := range r.parsed.Messages {
		if m.Role == "system" || m.Role == "developer" {
			b.WriteString(m.Text())
		}
	}
	return b.String()
}

// LastUserText returns the text of the last user message.
func (r *Request) LastUserText() string {
	for i := len(r.parsed.Messages) - 1; i >= 0; i-- {
		if m := r.parsed.Messages[i]; m.Role == "user" {
			return m.Text()
		}
	}
	return ""
}

// ToolResults returns the tool messages at the end of the conversation: the
// results of the previous response's tool calls.
func (r *Request) ToolResults() []Message {
	ms := r.parsed.Messages
	i := len(ms)
	for i > 0 && ms[i-1].Role == "tool" {
		i--
	}
	return ms[i:]
}
