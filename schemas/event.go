package schemas

import "encoding/json"

// Tool names the model calls to change the client's UI.
const (
	ToolAddOrUpdateSurface = "addOrUpdateSurface"
	ToolDeleteSurface      = "deleteSurface"
)

// EventType names the kind of an Event.
type EventType string

// Event types. Every transport encodes these same events in its own framing.
const (
	// EventToolRequest carries one validated addOrUpdateSurface or deleteSurface request.
	EventToolRequest EventType = "toolRequest"
	// EventText carries model text as it arrives.
	EventText EventType = "text"
	// EventA2UI carries one A2UI message for the client, as the A2UI specification
	// defines it.
	EventA2UI EventType = "a2ui"
	// EventToolCall carries one call of a client tool: the client runs it and sends its
	// result with the next request. The turn ends after its calls, interrupted.
	EventToolCall EventType = "toolCall"
)

// Event is one streamed step of a generateUi turn. The turn's end is the flow's Result or
// error, which transports encode as their final event.
type Event struct {
	Type EventType `json:"type"`
	// Index is the position of the model message this event belongs to within the turn
	// (0 for the first model response, 2 after one repair round, …), as in Genkit chunks.
	Index       int          `json:"index"`
	ToolRequest *ToolRequest `json:"toolRequest,omitempty"`
	Text        string       `json:"text,omitempty"`
	// A2UI is the encoded A2UI message of an EventA2UI.
	A2UI json.RawMessage `json:"a2ui,omitempty"`
	// ToolCall is the call of an EventToolCall.
	ToolCall *ToolCall `json:"toolCall,omitempty"`
}

// ToolCall is a call of a client tool (see [ClientTool]) whose input the service
// checked against the tool's input schema.
type ToolCall struct {
	// CallID identifies the call; its result names it.
	CallID string `json:"callId"`
	Name   string `json:"name"`
	// Input is the call's input, a JSON object.
	Input json.RawMessage `json:"input"`
	// Signature is the model's opaque signature of the call (a Gemini thought signature,
	// base64), when it gave one: a client continuing the turn statelessly sends it back
	// with the call.
	Signature string `json:"signature,omitempty"`
}

// ToolRequest is a tool call of the model, with its input as validated JSON.
type ToolRequest struct {
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
	// Ref is the request's position within its model message, as Genkit numbers refs.
	Ref string `json:"ref,omitempty"`
}

// Chunk is an event as a Genkit model response chunk: what Genkit clients and the Genkit
// Dev UI read from a stream ({"role":"model","index":0,"content":[…]}). An A2UI message is
// Genkit's A2UI data part.
type Chunk struct {
	Role    string    `json:"role"`
	Index   int       `json:"index"`
	Content []Content `json:"content"`
}

// ChunkOf returns an event as a Genkit chunk, as Genkit SSE carries it.
func ChunkOf(ev Event) Chunk {
	c := Chunk{Role: "model", Index: ev.Index}
	switch {
	case ev.Type == EventToolRequest && ev.ToolRequest != nil:
		c.Content = []Content{{ToolRequest: ev.ToolRequest}}
	case ev.Type == EventA2UI:
		c.Content = []Content{A2UIPart([]json.RawMessage{ev.A2UI})}
	case ev.Type == EventToolCall && ev.ToolCall != nil:
		c.Content = []Content{InterruptPart(ev.ToolCall)}
	default:
		c.Content = []Content{{Text: ev.Text}}
	}
	return c
}

// Finish reasons of a turn besides the model's own ("stop", "length", "blocked", …).
const (
	// FinishInterrupted ends a turn that waits for the client: the result lists the
	// calls of client tools to answer (see [InterruptPart]).
	FinishInterrupted = "interrupted"
)

// Result is the output of a generateUi turn.
type Result struct {
	// Message holds the model's final text as Genkit message content
	// ({"role":"model","content":[{"text":…}]}), where Genkit clients look for it, and,
	// when the turn is interrupted, the pending calls of client tools as Genkit interrupts.
	Message      ResultMessage `json:"message"`
	FinishReason string        `json:"finishReason"`
	Usage        *Usage        `json:"usage,omitempty"`
	// ToolRequests lists every tool request of the turn. Streaming transports leave it
	// out because each request was already streamed.
	ToolRequests []ToolRequest `json:"toolRequests,omitempty"`
}

// ResultMessage is the final model message of a turn.
type ResultMessage struct {
	Role    string    `json:"role"`
	Content []Content `json:"content"`
}

// Content is a part of a message, as Genkit encodes parts: text; (for an A2UI turn) the
// A2UI messages of the turn in Genkit's A2UI data part,
// {"data":{"envelopes":[…]},"metadata":{"mimeType":"application/a2ui+json"}}; or a
// pending call of a client tool as a Genkit interrupt,
// {"toolRequest":{"name","input","ref":<callId>},"metadata":{"interrupt":true}}.
type Content struct {
	Text        string         `json:"text,omitempty"`
	Data        *A2UIData      `json:"data,omitempty"`
	ToolRequest *ToolRequest   `json:"toolRequest,omitempty"`
	Metadata    map[string]any `json:"metadata,omitempty"`
}

// A2UIData is the data of Genkit's A2UI data part: A2UI messages.
type A2UIData struct {
	Envelopes []json.RawMessage `json:"envelopes"`
}

// A2UIMimeType is the MIME type of Genkit's A2UI data part.
const A2UIMimeType = "application/a2ui+json"

// A2UIPart returns the data part carrying A2UI messages.
func A2UIPart(msgs []json.RawMessage) Content {
	return Content{Data: &A2UIData{Envelopes: msgs}, Metadata: map[string]any{"mimeType": A2UIMimeType}}
}

// InterruptPart returns a pending call of a client tool as Genkit's interrupt: a
// toolRequest part whose ref is the call id, with metadata.interrupt (and the call's
// signature in metadata.signature).
func InterruptPart(c *ToolCall) Content {
	meta := map[string]any{"interrupt": true}
	if c.Signature != "" {
		meta["signature"] = c.Signature
	}
	return Content{ToolRequest: &ToolRequest{Name: c.Name, Input: c.Input, Ref: c.CallID}, Metadata: meta}
}

// Usage counts the tokens of a turn, summed over its model calls.
type Usage struct {
	InputTokens  int `json:"inputTokens,omitempty"`
	OutputTokens int `json:"outputTokens,omitempty"`
	TotalTokens  int `json:"totalTokens,omitempty"`
	CachedTokens int `json:"cachedTokens,omitempty"`
	ModelCalls   int `json:"modelCalls"`
	// Model names the model that served the turn's last model call (with a fallback
	// chain, the model of the chain that answered).
	Model string `json:"model,omitempty"`
}

// Error is the body of every error the service reports, in an HTTP response or as the last
// event of a stream.
type Error struct {
	// Status is a canonical status name such as INVALID_ARGUMENT or NOT_FOUND.
	Status  string `json:"status"`
	Message string `json:"message"`
	Details any    `json:"details,omitempty"`
}
