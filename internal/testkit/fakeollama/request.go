package fakeollama

import (
	"net/http"
	"strings"

	"github.com/genuiserver/genui/internal/testkit/script"
)

// Request is a captured chat request.
type Request struct {
	// Model is the request's model, as sent.
	Model string
	// Stream is the request's "stream" (absent: true).
	Stream bool
	// Header is a copy of the request headers.
	Header http.Header
	// Body is the decoded JSON body; Raw holds its bytes.
	Body map[string]any
	Raw  []byte

	parsed wireRequest
	call   script.Call
}

type wireRequest struct {
	Model    string         `json:"model"`
	Messages []Message      `json:"messages"`
	Tools    []Tool         `json:"tools"`
	Stream   *bool          `json:"stream"`
	Options  map[string]any `json:"options"`
}

// Message is a message of the request.
type Message struct {
	Role      string     `json:"role"`
	Content   string     `json:"content"`
	Images    []string   `json:"images,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolName names the tool whose result a "tool" message holds.
	ToolName string `json:"tool_name,omitempty"`
}

// Tool is a tool declared in the request.
type Tool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string         `json:"name"`
		Description string         `json:"description,omitempty"`
		Parameters  map[string]any `json:"parameters,omitempty"`
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

// Options returns the request's runtime options (num_predict, temperature, …).
func (r *Request) Options() map[string]any { return r.parsed.Options }

// SystemText returns the text of the system messages.
func (r *Request) SystemText() string {
	var b strings.Builder
	for _, m := range r.parsed.Messages {
		if m.Role == "system" {
			b.WriteString(m.Content)
		}
	}
	return b.String()
}

// LastUserText returns the content of the last user message.
func (r *Request) LastUserText() string {
	for i := len(r.parsed.Messages) - 1; i >= 0; i-- {
		if m := r.parsed.Messages[i]; m.Role == "user" {
			return m.Content
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
