package aguiapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/schemas"
)

// runInput is AG-UI's RunAgentInput.
type runInput struct {
	ThreadID        string          `json:"threadId"`
	RunID           string          `json:"runId"`
	ParentRunID     string          `json:"parentRunId,omitempty"`
	ProtocolVersion string          `json:"protocolVersion,omitempty"`
	State           json.RawMessage `json:"state,omitempty"`
	Messages        []message       `json:"messages"`
	Tools           []tool          `json:"tools,omitempty"`
	Context         []contextEntry  `json:"context,omitempty"`
	ForwardedProps  json.RawMessage `json:"forwardedProps,omitempty"`
	Resume          []resumeEntry   `json:"resume,omitempty"`
}

// message is a message of any role; Content is a string, a list of parts (user, tool),
// or an object (activity).
type message struct {
	ID           string          `json:"id"`
	Role         string          `json:"role"`
	Content      json.RawMessage `json:"content,omitempty"`
	Name         string          `json:"name,omitempty"`
	ToolCalls    []toolCall      `json:"toolCalls,omitempty"`
	ToolCallID   string          `json:"toolCallId,omitempty"`
	Error        string          `json:"error,omitempty"`
	ActivityType string          `json:"activityType,omitempty"`
}

type toolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
	EncryptedValue string `json:"encryptedValue,omitempty"`
}

type tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters,omitempty"`
}

type contextEntry struct {
	Description string `json:"description"`
	Value       string `json:"value"`
}

type resumeEntry struct {
	InterruptID string          `json:"interruptId"`
	Status      string          `json:"status"`
	Payload     json.RawMessage `json:"payload,omitempty"`
}

// contentPart is a part of a user or tool message's content.
type contentPart struct {
	Type   string `json:"type"`
	Text   string `json:"text"`
	Source *struct {
		Type     string `json:"type"` // data, url, file
		Value    string `json:"value"`
		MimeType string `json:"mimeType"`
	} `json:"source"`
}

// Names @ag-ui/a2ui-middleware gives its tools: not frontend tools, as the service writes
// A2UI itself.
const (
	renderA2UITool   = "render_a2ui"
	logA2UIEventTool = "log_a2ui_event"
	// schemaContext describes the context entry holding the client's A2UI catalog.
	schemaContext = "A2UI Component Schema — available components for generating UI surfaces. Use these component names and properties when creating A2UI operations."
	// renderGuideContext describes the middleware's guide to its render_a2ui tool, which
	// the model is not offered.
	renderGuideContext = "A2UI render tool usage guide — how to call render_a2ui with valid arguments."
)

func middlewareTool(name string) bool { return name == renderA2UITool || name == logA2UIEventTool }

// turn is a run as a turn of the core, with the map from the core's field names to the
// input's.
type turn struct {
	req *schemas.GenerateA2UIRequest
	// fields maps a field of the core request (conversation[2].parts[0]) to the input's
	// (messages[3].toolCalls[0]); the longest prefix of an error's field is rewritten.
	fields map[string]string
	// notes are the context entries that are not the catalog, for the model.
	notes []string
	// shown are the A2UI messages of the surfaces the client holds, from its activity
	// messages: a snapshot holds them too.
	shown [][]byte
}

func invalid(field, format string, args ...any) *genui.Error {
	return &genui.Error{Status: genui.StatusInvalidArgument, Message: field + ": " + fmt.Sprintf(format, args...), Details: map[string]any{"field": field}}
}

// validate checks what the decoder's types leave open.
func (in *runInput) validate() *genui.Error {
	switch {
	case in.ThreadID == "":
		return invalid("threadId", "required: the id of the conversation thread")
	case in.RunID == "":
		return invalid("runId", "required: the id of this run")
	case in.Messages == nil:
		return invalid("messages", "required: the thread's messages (a list, empty for none)")
	}
	if k := kind(in.State); k != "" && k != "object" && k != "null" {
		return invalid("state", "must be an object, got %s", k)
	}
	if k := kind(in.ForwardedProps); k != "" && k != "object" && k != "null" {
		return invalid("forwardedProps", "must be an object, got %s", k)
	}
	for i, t := range in.Tools {
		f := "tools[" + strconv.Itoa(i) + "]"
		if t.Name == "" {
			return invalid(f+".name", "required")
		}
		if k := kind(t.Parameters); k != "" && k != "object" {
			return invalid(f+".parameters", "must be a JSON Schema object, got %s", k)
		}
	}
	for i, r := range in.Resume {
		f := "resume[" + strconv.Itoa(i) + "]"
		switch {
		case r.InterruptID == "":
			return invalid(f+".interruptId", "required: the id of the interrupt this answers")
		case r.Status != "resolved" && r.Status != "cancelled":
			return invalid(f+".status", "must be \"resolved\" or \"cancelled\", got %q", r.Status)
		}
	}
	return nil
}

// kind is the JSON kind of a value ("" when absent).
func kind(b json.RawMessage) string {
	b = bytes.TrimSpace(b)
	if len(b) == 0 {
		return ""
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 'n':
		return "null"
	case 't', 'f':
		return "boolean"
	}
	return "number"
}

// toTurn maps a run to an A2UI v0.9 turn of the core, stateless: the catalog from the
// context (else the basic catalog), the messages as the conversation (the surfaces the
// client holds, when it sends them, as what the model showed), the frontend tools as
// client tools, the resume entries and a user action as the user's new input, the state
// as the client's data model.
func (in *runInput) toTurn() (*turn, *genui.Error) {
	if e := in.validate(); e != nil {
		return nil, e
	}
	t := &turn{req: &schemas.GenerateA2UIRequest{Version: a2ui.V09}, fields: map[string]string{"conversation": "messages"}}
	if e := in.catalog(t); e != nil {
		return nil, e
	}
	k := 0
	for i, tl := range in.Tools {
		if middlewareTool(tl.Name) {
			continue
		}
		f, cf := "tools["+strconv.Itoa(i)+"]", "clientTools["+strconv.Itoa(k)+"]"
		t.fields[cf], t.fields[cf+".inputSchema"] = f, f+".parameters"
		t.req.ClientTools = append(t.req.ClientTools, schemas.ClientTool{Name: tl.Name, Description: tl.Description, InputSchema: schemas.Object(tl.Parameters)})
		k++
	}
	if k := kind(in.State); k == "object" && string(bytes.TrimSpace(in.State)) != "{}" {
		t.req.A2UIClientDataModel = schemas.Object(in.State)
		t.fields["a2uiClientDataModel"] = "state"
	}
	c := &conversation{turn: t, calls: map[string]*call{}, resumes: in.Resume, used: make([]bool, len(in.Resume))}
	if len(t.notes) > 0 {
		c.add("user", schemas.Part{Type: schemas.PartText, Text: "Context from the app:\n- " + strings.Join(t.notes, "\n- ")}, "context")
	}
	if e := c.messages(in); e != nil {
		return nil, e
	}
	if e := c.unusedResumes(); e != nil {
		return nil, e
	}
	if e := c.forwardedAction(in.ForwardedProps); e != nil {
		return nil, e
	}
	if e := forwardedModel(t, in.ForwardedProps); e != nil {
		return nil, e
	}
	t.req.Conversation = c.conv
	return t, nil
}

// catalog takes the client's catalog from the context entry that holds one,
// {"catalogId","components"} as a string (what @ag-ui/a2ui-middleware and CopilotKit send;
// the last one wins); other entries are context for the model.
func (in *runInput) catalog(t *turn) *genui.Error {
	var notes []string
	found := -1
	for i, c := range in.Context {
		var head struct {
			CatalogID  *string         `json:"catalogId"`
			Components json.RawMessage `json:"components"`
		}
		isCatalog := json.Unmarshal([]byte(c.Value), &head) == nil && head.CatalogID != nil && kind(head.Components) == "object"
		switch {
		case isCatalog && *head.CatalogID == "":
			return invalid("context["+strconv.Itoa(i)+"].value", "catalogId: must not be empty")
		case isCatalog:
			found = i
		case c.Description == schemaContext:
			return invalid("context["+strconv.Itoa(i)+"].value", "not an A2UI catalog: expected the JSON of {\"catalogId\":\"…\",\"components\":{\"<name>\":<JSON Schema>,…}}")
		case c.Description == renderGuideContext:
		default:
			notes = append(notes, c.Description+": "+c.Value)
		}
	}
	if found >= 0 {
		var id struct {
			CatalogID string `json:"catalogId"`
		}
		_ = json.Unmarshal([]byte(in.Context[found].Value), &id)
		caps, _ := json.Marshal(map[string]any{"v0.9": map[string]any{
			"supportedCatalogIds": []string{id.CatalogID},
			"inlineCatalogs":      []json.RawMessage{json.RawMessage(in.Context[found].Value)},
		}})
		t.req.A2UIClientCapabilities = caps
		f := "context[" + strconv.Itoa(found) + "].value"
		t.fields["a2uiClientCapabilities"] = f
		t.fields["a2uiClientCapabilities.v0.9.inlineCatalogs[0]"] = f
	}
	t.notes = notes
	return nil
}

// forwardedModel takes the model of the run from forwardedProps.model, if it names one.
func forwardedModel(t *turn, props json.RawMessage) *genui.Error {
	if kind(props) != "object" {
		return nil
	}
	var fp struct {
		Model json.RawMessage `json:"model"`
	}
	if json.Unmarshal(props, &fp) != nil || kind(fp.Model) == "" || kind(fp.Model) == "null" {
		return nil
	}
	if json.Unmarshal(fp.Model, &t.req.Model) != nil {
		return invalid("forwardedProps.model", "must be a string naming a model, e.g. \"googleai/gemini-2.5-flash\"")
	}
	t.fields["model"] = "forwardedProps.model"
	return nil
}
