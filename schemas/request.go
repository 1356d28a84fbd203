package schemas

import (
	"bytes"
	"encoding/json"

	"github.com/invopop/jsonschema"
)

// StartSessionRequest is the input of the startSession flow. A genui session has a
// catalog; an A2UI session has A2UI client capabilities (or only a version, for the
// built-in catalog of that version).
type StartSessionRequest struct {
	// ProtocolVersion is the client's protocol version; clients send "0.1.0".
	ProtocolVersion string `json:"protocolVersion"`
	// Catalog is the JSON Schema of one surface definition the client can render.
	Catalog Catalog `json:"catalog,omitempty"`
	// Version is the A2UI version of an A2UI session: "v0.9" (default) or "v0.8".
	Version string `json:"version,omitempty"`
	// A2UIClientCapabilities is what an A2UI client can render, as it sends it over A2A:
	// {"v0.9":{"supportedCatalogIds":[…],"inlineCatalogs":[…]}}.
	A2UIClientCapabilities Object `json:"a2uiClientCapabilities,omitempty"`
}

// A2UI reports whether the request starts an A2UI session.
func (r *StartSessionRequest) A2UI() bool {
	return r.Catalog == nil && (r.Version != "" || r.A2UIClientCapabilities != nil)
}

// GenerateA2UIRequest is the input of the generateA2ui flow: a turn whose UI is A2UI.
type GenerateA2UIRequest struct {
	// Version is the A2UI version: "v0.9" (default) or "v0.8".
	Version string `json:"version,omitempty"`
	// SessionID names a session started with A2UI capabilities; else the capabilities
	// come with the request (absent: the built-in basic catalog, v0.8 standard catalog).
	SessionID string `json:"sessionId,omitempty"`
	// A2UIClientCapabilities is what the client can render:
	// {"v0.9":{"supportedCatalogIds":[…],"inlineCatalogs":[…]}} (v0.8: without the
	// version key).
	A2UIClientCapabilities Object `json:"a2uiClientCapabilities,omitempty"`
	// A2UIClientDataModel is the data model of the client's surfaces that asked for it
	// (createSurface.sendDataModel): {"version":"v0.9","surfaces":{"<id>":{…}}}.
	A2UIClientDataModel Object `json:"a2uiClientDataModel,omitempty"`
	// Conversation holds text, image and a2ui parts: the A2UI messages the client
	// received, in model messages; its actions and errors, in user messages. Calls of
	// client tools and their results are toolCall and toolResult parts. With
	// ConversationID, only the new messages.
	Conversation []Message `json:"conversation"`
	// ClientTools and ConversationID are as in [GenerateRequest].
	ClientTools    []ClientTool `json:"clientTools,omitempty"`
	ConversationID string       `json:"conversationId,omitempty"`
	// Model is as in [GenerateRequest].
	Model string `json:"model,omitempty"`
}

// Object is a JSON object kept as sent.
type Object []byte

// MarshalJSON returns the object's JSON (null when empty).
func (o Object) MarshalJSON() ([]byte, error) {
	if len(o) == 0 {
		return []byte("null"), nil
	}
	return o, nil
}

// UnmarshalJSON keeps a copy of the JSON; null is no object.
func (o *Object) UnmarshalJSON(b []byte) error {
	if bytes.Equal(b, []byte("null")) {
		*o = nil
		return nil
	}
	*o = append((*o)[:0], b...)
	return nil
}

// JSONSchema describes the value for Genkit tooling: any JSON object.
func (Object) JSONSchema() *jsonschema.Schema { return &jsonschema.Schema{Type: "object"} }

// Catalog is a widget catalog as a client sends it: the JSON of a JSON Schema object, kept
// as sent, so that a catalog already compiled is recognised by its bytes without being
// decoded again.
type Catalog []byte

// MarshalJSON returns the catalog's JSON (null when empty).
func (c Catalog) MarshalJSON() ([]byte, error) { return Object(c).MarshalJSON() }

// UnmarshalJSON keeps a copy of the JSON; null is no catalog.
func (c *Catalog) UnmarshalJSON(b []byte) error { return (*Object)(c).UnmarshalJSON(b) }

// JSONSchema describes a catalog for Genkit tooling: any JSON object.
func (Catalog) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{Type: "object", Description: "The JSON Schema of one surface definition the client can render (the widget catalog)."}
}

// CatalogOf encodes a decoded catalog.
func CatalogOf(v map[string]any) Catalog {
	b, err := json.Marshal(v)
	if err != nil || v == nil {
		return nil
	}
	return b
}

// GenerateRequest is the input of the generateUi flow. Exactly one of SessionID (catalog
// registered through startSession) or Catalog (sent with every call) is set.
type GenerateRequest struct {
	SessionID    string    `json:"sessionId,omitempty"`
	Catalog      Catalog   `json:"catalog,omitempty"`
	Conversation []Message `json:"conversation"`
	// ClosingMessage asks the model for a short closing text after its tool calls, which
	// costs a second model call. Off by default.
	ClosingMessage bool `json:"closingMessage,omitempty"`
	// ClientTools declares tools only the client runs, offered to the model beside the
	// UI tools. A call of one ends the turn (finishReason "interrupted"); the client sends
	// its result to continue.
	ClientTools []ClientTool `json:"clientTools,omitempty"`
	// ConversationID, chosen by the client (8 to 128 characters of A-Z a-z 0-9 . _ -),
	// makes the server hold the conversation: Conversation then carries only the new
	// messages, and each turn's output is remembered for the next.
	ConversationID string `json:"conversationId,omitempty"`
	// Model names the model of the turn, e.g. "googleai/gemini-2.5-pro": one of those the
	// server lets its caller choose (absent: the caller's default). A conversation the
	// server holds keeps the model its last turn used.
	Model string `json:"model,omitempty"`
}

// ClientTool declares a tool that only the client can run: the user's location, a file,
// a confirmation, the app's state.
type ClientTool struct {
	// Name is a function name: a letter or underscore, then letters, digits, underscores
	// or dashes, at most 64 in all; not the name of a UI tool.
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// InputSchema is the JSON Schema of the tool's input, an object (default: an object
	// without properties).
	InputSchema Object `json:"inputSchema,omitempty"`
}

// Message is one entry of a conversation.
type Message struct {
	// Role is "user" or "model".
	Role  string `json:"role"`
	Parts []Part `json:"parts"`
}

// Part types.
const (
	PartText       = "text"
	PartImage      = "image"
	PartUI         = "ui"
	PartUIEvent    = "uiEvent"
	PartA2UI       = "a2ui"
	PartToolCall   = "toolCall"
	PartToolResult = "toolResult"
	// PartUIDeleted is kept only in the history of a conversation the server holds: the
	// model deleted a surface shown in an earlier turn (Definition names it). Requests
	// never carry it.
	PartUIDeleted = "uiDeleted"
)

// Part is one piece of a message; Type selects which other fields are used.
type Part struct {
	Type string `json:"type"`
	// Text is set for "text" parts.
	Text string `json:"text,omitempty"`
	// URL, or Base64 with MimeType, is set for "image" parts.
	URL      string `json:"url,omitempty"`
	Base64   string `json:"base64,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	// Definition is set for "ui" parts: a surface the client shows.
	Definition *SurfaceDefinition `json:"definition,omitempty"`
	// Event is set for "uiEvent" parts.
	Event *UIEvent `json:"event,omitempty"`
	// Message is set for "a2ui" parts: one A2UI message, a server message the client
	// received (in a model message) or a client message (in a user message).
	Message Object `json:"message,omitempty"`
	// CallID and Name are set for "toolCall" parts (in model messages: a call of a client
	// tool, with its Input and Signature as the toolCall event gave them) and
	// "toolResult" parts (in user messages: the call's Output, or its Error).
	CallID    string          `json:"callId,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     Object          `json:"input,omitempty"`
	Signature string          `json:"signature,omitempty"`
	Output    json.RawMessage `json:"output,omitempty"`
	Error     string          `json:"error,omitempty"`
}

// SurfaceDefinition is a surface as the client replays it in a "ui" part.
type SurfaceDefinition struct {
	SurfaceID string           `json:"surfaceId"`
	Root      string           `json:"root"`
	Widgets   []map[string]any `json:"widgets"`
}

// UIEvent is a user interaction with a rendered widget.
type UIEvent struct {
	SurfaceID string `json:"surfaceId"`
	WidgetID  string `json:"widgetId"`
	EventType string `json:"eventType"`
	IsAction  bool   `json:"isAction,omitempty"`
	Value     any    `json:"value,omitempty"`
	Timestamp string `json:"timestamp,omitempty"`
}

// Unknown fields are tolerated so that newer clients keep working; the inferred schemas
// would otherwise forbid them.

// JSONSchemaExtend allows unknown fields.
func (StartSessionRequest) JSONSchemaExtend(s *jsonschema.Schema) { allowUnknown(s) }

// JSONSchemaExtend allows unknown fields and accepts either input era.
func (GenerateRequest) JSONSchemaExtend(s *jsonschema.Schema) { allowUnknown(s) }

// JSONSchemaExtend allows unknown fields.
func (GenerateA2UIRequest) JSONSchemaExtend(s *jsonschema.Schema) { allowUnknown(s) }

// JSONSchemaExtend allows unknown fields.
func (Message) JSONSchemaExtend(s *jsonschema.Schema) { allowUnknown(s) }

// JSONSchemaExtend allows unknown fields.
func (Part) JSONSchemaExtend(s *jsonschema.Schema) { allowUnknown(s) }

// JSONSchemaExtend allows unknown fields.
func (SurfaceDefinition) JSONSchemaExtend(s *jsonschema.Schema) { allowUnknown(s) }

// JSONSchemaExtend allows unknown fields.
func (UIEvent) JSONSchemaExtend(s *jsonschema.Schema) { allowUnknown(s) }

// JSONSchemaExtend allows unknown fields.
func (ClientTool) JSONSchemaExtend(s *jsonschema.Schema) { allowUnknown(s) }

func allowUnknown(s *jsonschema.Schema) { s.AdditionalProperties = nil }
