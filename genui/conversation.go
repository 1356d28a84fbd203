package genui

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"mime"
	"net/url"
	"path"
	"strconv"
	"strings"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/tools"
)

// validateStartSession checks a startSession request before any work is done.
func validateStartSession(req *schemas.StartSessionRequest) *Error {
	switch {
	case req == nil:
		return fieldError("data", "request body must be a JSON object")
	case req.ProtocolVersion == "":
		return fieldError("protocolVersion", "required: the version of the GenUI protocol the client speaks, e.g. \"0.1.0\"")
	case req.Catalog != nil && (req.A2UIClientCapabilities != nil || req.Version != ""):
		return fieldError("catalog", "send either a catalog (a genui session) or a2uiClientCapabilities and version (an A2UI session), not both")
	case req.A2UI():
		return nil
	}
	return validateCatalog(req.Catalog)
}

// validateCatalog checks that a catalog is present and a JSON object; whether it is a
// JSON Schema of widgets is the compiler's to say.
func validateCatalog(c schemas.Catalog) *Error {
	if len(c) == 0 {
		return fieldError("catalog", "required: the JSON Schema of the widgets the client can render")
	}
	if t := jsonKind(c); t != "object" {
		return fieldError("catalog", "got %s, want object", t)
	}
	return nil
}

// jsonKind names the JSON type of an encoded value by its first byte.
func jsonKind(b []byte) string {
	b = bytes.TrimLeft(b, " \t\r\n")
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// validateGenerate checks a generateUi request before any work is done.
func validateGenerate(req *schemas.GenerateRequest) *Error {
	if req == nil {
		return fieldError("data", "request body must be a JSON object")
	}
	switch {
	case req.SessionID != "" && req.Catalog != nil:
		return fieldError("sessionId", "send either sessionId or catalog, not both")
	case req.SessionID == "" && req.Catalog == nil:
		return fieldError("sessionId", "required (or send the catalog with the request)")
	case req.Catalog != nil:
		if err := validateCatalog(req.Catalog); err != nil {
			return err
		}
	}
	if err := validateConversation(req.Conversation, false); err != nil {
		return err
	}
	return validateConversationID(req.ConversationID)
}

// validateConversationID checks the id of a conversation the server holds, if any.
func validateConversationID(id string) *Error {
	if id != "" && !conversation.ValidID(id) {
		return fieldError("conversationId", "must be 8 to 128 characters of A-Z a-z 0-9 . _ -, got %d characters%s", len(id), badChars(id))
	}
	return nil
}

// badChars names the first character of id outside the pattern, if any.
func badChars(id string) string {
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Sprintf(" (%q is not allowed)", r)
		}
	}
	return ""
}

// validateConversation checks a conversation: of a genui turn (text, image, ui and
// uiEvent parts) or of an A2UI turn (text, image and a2ui parts).
func validateConversation(conv []schemas.Message, a2ui bool) *Error {
	if conv == nil {
		return fieldError("conversation", "required")
	}
	if len(conv) == 0 {
		return fieldError("conversation", "must contain at least one message")
	}
	for i, m := range conv {
		f := "conversation[" + strconv.Itoa(i) + "]"
		if m.Role != "user" && m.Role != "model" {
			return fieldError(f+".role", "must be \"user\" or \"model\", got %q", m.Role)
		}
		if len(m.Parts) == 0 {
			return fieldError(f+".parts", "must contain at least one part")
		}
		for j := range m.Parts {
			if err := validatePart(f+".parts["+strconv.Itoa(j)+"]", m.Role, &m.Parts[j], a2ui); err != nil {
				return err
			}
		}
	}
	if last := conv[len(conv)-1]; last.Role != "user" {
		return fieldError("conversation["+strconv.Itoa(len(conv)-1)+"].role", "the last message must come from the user")
	}
	return nil
}

func validatePart(f, role string, p *schemas.Part, a2ui bool) *Error {
	if p.Type == schemas.PartToolCall || p.Type == schemas.PartToolResult {
		return validateToolPart(f, role, p)
	}
	if a2ui {
		switch p.Type {
		case schemas.PartUI, schemas.PartUIEvent:
			return fieldError(f+".type", "%s parts belong to /generateUi; an A2UI conversation has text, image and a2ui parts", p.Type)
		case schemas.PartA2UI:
			if len(p.Message) == 0 {
				return fieldError(f+".message", "required for a2ui parts: one A2UI message")
			}
			if jsonKind(p.Message) != "object" {
				return fieldError(f+".message", "must be an A2UI message object, got %s", jsonKind(p.Message))
			}
			return nil
		case "":
			return fieldError(f+".type", "required: one of text, image, a2ui, toolCall, toolResult")
		case schemas.PartText, schemas.PartImage:
		default:
			return fieldError(f+".type", "unknown part type %q: expected text, image, a2ui, toolCall or toolResult", p.Type)
		}
	}
	switch p.Type {
	case schemas.PartText:
		if p.Text == "" {
			return fieldError(f+".text", "required for text parts")
		}
	case schemas.PartImage:
		switch {
		case p.URL != "" && p.Base64 != "":
			return fieldError(f, "an image part has either url or base64, not both")
		case p.URL != "":
			u, err := url.Parse(p.URL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "gs") {
				return fieldError(f+".url", "must be an absolute http(s) URL")
			}
		case p.Base64 != "":
			if p.MimeType == "" {
				return fieldError(f+".mimeType", "required when base64 is set")
			}
			if !strings.HasPrefix(p.MimeType, "image/") {
				return fieldError(f+".mimeType", "must be an image type, got %q", p.MimeType)
			}
			if _, err := base64.StdEncoding.DecodeString(p.Base64); err != nil {
				return fieldError(f+".base64", "not valid base64: %v", err)
			}
		default:
			return fieldError(f, "an image part needs url, or base64 and mimeType")
		}
	case schemas.PartUI:
		if role != "model" {
			return fieldError(f+".type", "ui parts belong to model messages")
		}
		if p.Definition == nil {
			return fieldError(f+".definition", "required for ui parts")
		}
		if p.Definition.SurfaceID == "" {
			return fieldError(f+".definition.surfaceId", "required")
		}
	case schemas.PartUIEvent:
		if role != "user" {
			return fieldError(f+".type", "uiEvent parts belong to user messages")
		}
		if p.Event == nil {
			return fieldError(f+".event", "required for uiEvent parts")
		}
		if p.Event.SurfaceID == "" {
			return fieldError(f+".event.surfaceId", "required")
		}
		if p.Event.WidgetID == "" {
			return fieldError(f+".event.widgetId", "required")
		}
	case schemas.PartA2UI:
		return fieldError(f+".type", "a2ui parts belong to /generateA2ui; a genui conversation has text, image, ui and uiEvent parts")
	case "":
		return fieldError(f+".type", "required: one of text, image, ui, uiEvent, toolCall, toolResult")
	default:
		return fieldError(f+".type", "unknown part type %q: expected text, image, ui, uiEvent, toolCall or toolResult", p.Type)
	}
	return nil
}

// UIEventsPreamble introduces the JSON block of UI events in a user message, as the model
// sees the uiEvent parts of a conversation.
const UIEventsPreamble = "The user interacted with the UI. The events, as JSON:\n"

// toMessages maps a validated conversation to model messages. A "ui" part becomes an
// addOrUpdateSurface tool request followed by its tool response, so the history is well
// formed (a held history's "uiDeleted" part, a deleteSurface request and its response); the uiEvent parts of a message become one text part holding a JSON array. The
// toolCall parts of a model message are its function calls, answered, with its UI tool
// requests, by a tool message made of the next message's toolResult parts.
func toMessages(conv []schemas.Message) ([]*ai.Message, error) {
	out := make([]*ai.Message, 0, len(conv)+2)
	var pending responses // of the model message before, when it called client tools
	for i, m := range conv {
		var content []*ai.Part
		var rs responses
		var events []*schemas.UIEvent
		eventAt := -1
		for j := range m.Parts {
			p := &m.Parts[j]
			switch p.Type {
			case schemas.PartText:
				content = append(content, ai.NewTextPart(p.Text))
			case schemas.PartImage:
				content = append(content, imagePart(p))
			case schemas.PartUI:
				ref := fmt.Sprintf("history-%d-%d", i, j)
				d := p.Definition
				widgets := make([]any, len(d.Widgets))
				for k, w := range d.Widgets {
					widgets[k] = w
				}
				input := map[string]any{
					"surfaceId":  d.SurfaceID,
					"definition": map[string]any{"root": d.Root, "widgets": widgets},
				}
				content = append(content, ai.NewToolRequestPart(&ai.ToolRequest{Name: tools.AddOrUpdateSurface, Input: input, Ref: ref}))
				rs.addAck(ai.NewToolResponsePart(&ai.ToolResponse{Name: tools.AddOrUpdateSurface, Ref: ref, Output: tools.Updated}))
			case schemas.PartUIDeleted:
				ref := fmt.Sprintf("history-%d-%d", i, j)
				input := map[string]any{"surfaceId": p.Definition.SurfaceID}
				content = append(content, ai.NewToolRequestPart(&ai.ToolRequest{Name: tools.DeleteSurface, Input: input, Ref: ref}))
				rs.addAck(ai.NewToolResponsePart(&ai.ToolResponse{Name: tools.DeleteSurface, Ref: ref, Output: tools.Deleted}))
			case schemas.PartToolCall:
				content = append(content, toolCallPart(p))
				rs.addCall(p.CallID)
			case schemas.PartToolResult:
				pending.answer(p)
			case schemas.PartUIEvent:
				if eventAt < 0 {
					eventAt = len(content)
					content = append(content, nil) // placeholder, filled below
				}
				events = append(events, p.Event)
			}
		}
		if eventAt >= 0 {
			b, err := json.MarshalIndent(events, "", "  ")
			if err != nil {
				return nil, fieldError(fmt.Sprintf("conversation[%d]", i), "uiEvent values must be JSON: %v", err)
			}
			content[eventAt] = ai.NewTextPart(UIEventsPreamble + "```json\n" + string(b) + "\n```")
		}
		out = appendTurnMessages(out, m.Role, content, &pending, &rs)
	}
	return out, nil
}

// appendTurnMessages appends a mapped message: for a user message, the responses to the
// model message before it (if it called client tools), then its own content; for a model
// message, its content, then the responses to its UI tool requests, unless it called
// client tools (the next message's results join them).
func appendTurnMessages(out []*ai.Message, role string, content []*ai.Part, pending, rs *responses) []*ai.Message {
	if role == "model" {
		out = append(out, &ai.Message{Role: ai.RoleModel, Content: content})
		if rs.waiting() {
			*pending = *rs
		} else if tm := rs.message(); tm != nil {
			out = append(out, tm)
		}
		return out
	}
	if tm := pending.message(); tm != nil {
		out = append(out, tm)
		*pending = responses{}
	}
	if len(content) > 0 {
		out = append(out, &ai.Message{Role: ai.RoleUser, Content: content})
	}
	return out
}

// imagePart is the model part of a validated image part.
func imagePart(p *schemas.Part) *ai.Part {
	if p.URL != "" {
		return ai.NewMediaPart(imageType(p), p.URL)
	}
	return ai.NewMediaPart(p.MimeType, "data:"+p.MimeType+";base64,"+p.Base64)
}

func imageType(p *schemas.Part) string {
	if p.MimeType != "" {
		return p.MimeType
	}
	if u, err := url.Parse(p.URL); err == nil {
		if t := mime.TypeByExtension(path.Ext(u.Path)); strings.HasPrefix(t, "image/") {
			return t
		}
	}
	return "image/jpeg"
}
