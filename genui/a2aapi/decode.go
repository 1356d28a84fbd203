package a2aapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/a2ui/spec"
	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/schemas"
)

// The A2UI extensions of A2A, by version, and the MIME types of their DataParts.
const (
	ExtensionV08  = "https://a2ui.org/a2a-extension/a2ui/v0.8"
	ExtensionV09  = "https://a2ui.org/a2a-extension/a2ui/v0.9"
	ExtensionV091 = "https://a2ui.org/a2a-extension/a2ui/v0.9.1"

	// MIMEv09 marks A2UI DataParts of the v0.8 and v0.9 extensions; MIMEv091 those of
	// v0.9.1 and later. Both are read on input.
	MIMEv09  = "application/json+a2ui"
	MIMEv091 = "application/a2ui+json"
)

// wire is how a turn's A2UI travels: the A2UI version the turn composes in, and the
// MIME type of its DataParts (v0.9.1 is v0.9 with the newer MIME type, and lists in
// DataParts on A2A 1.0).
type wire struct {
	Version string `json:"version"`
	MIME    string `json:"mime"`
}

// requestedExtensions returns the extension URIs the request activates: its
// X-A2A-Extensions and A2A-Extensions headers, both, whose values may each hold several
// URIs separated by commas (see headerExtensions), and the message's own list.
func requestedExtensions(ctx context.Context, msg *a2a.Message) []string {
	var out []string
	if uris, ok := ctx.Value(extensionsKey{}).([]string); ok {
		out = append(out, uris...)
	} else if ext, ok := a2asrv.ExtensionsFrom(ctx); ok {
		// Not through Server.wrap: what a2a-go kept of the headers.
		for _, v := range ext.RequestedURIs() {
			for u := range strings.SplitSeq(v, ",") {
				if u = strings.TrimSpace(u); u != "" {
					out = append(out, u)
				}
			}
		}
	}
	return append(out, msg.Extensions...)
}

// chooseWire picks the A2UI version of a turn: the newest A2UI extension the request
// activates, else the version its capabilities are keyed by, else v0.9.
func chooseWire(requested []string, caps map[string]any) wire {
	switch {
	case slices.Contains(requested, ExtensionV091) || caps["v0.9.1"] != nil:
		return wire{Version: a2ui.V09, MIME: MIMEv091}
	case slices.Contains(requested, ExtensionV09) || caps["v0.9"] != nil:
		return wire{Version: a2ui.V09, MIME: MIMEv09}
	case slices.Contains(requested, ExtensionV08) || caps["supportedCatalogIds"] != nil || caps["inlineCatalogs"] != nil || caps["v0.8"] != nil:
		return wire{Version: a2ui.V08, MIME: MIMEv09}
	}
	return wire{Version: a2ui.V09, MIME: MIMEv09}
}

// conversationID is the id of the core conversation that holds an A2A context.
func conversationID(contextID string) string {
	if id := "a2a." + contextID; conversation.ValidID(id) {
		return id
	}
	sum := sha256.Sum256([]byte(contextID))
	return "a2a.h." + base64.RawURLEncoding.EncodeToString(sum[:])
}

// decoded is an A2A message as a turn of the core, with what maps the core's field
// names back to the message's.
type decoded struct {
	req  *schemas.GenerateA2UIRequest
	wire wire
	// partOf is, for each part of the core conversation's message, the index of the
	// message part it came from.
	partOf []int
}

// decode turns a user message into an A2UI turn of the context's conversation.
// Errors are *a2a.Error values naming the field.
func decode(ctx context.Context, msg *a2a.Message, contextID string) (*decoded, error) {
	switch {
	case msg == nil:
		return nil, invalidParams("message", "required")
	case msg.ID == "":
		return nil, invalidParams("message.messageId", "required")
	case msg.Role != a2a.MessageRoleUser:
		return nil, invalidParams("message.role", "must be \"user\", got %q", msg.Role)
	case len(msg.Parts) == 0:
		return nil, invalidParams("message.parts", "must hold at least one part")
	}
	caps, _ := msg.Metadata["a2uiClientCapabilities"].(map[string]any)
	if v, ok := msg.Metadata["a2uiClientCapabilities"]; ok && v != nil && caps == nil {
		return nil, invalidParams("message.metadata.a2uiClientCapabilities", "must be an object, e.g. {\"v0.9\":{\"supportedCatalogIds\":[…]}}")
	}
	w := chooseWire(requestedExtensions(ctx, msg), caps)
	d := &decoded{wire: w, req: &schemas.GenerateA2UIRequest{Version: w.Version, ConversationID: conversationID(contextID)}}
	if caps != nil {
		b, _ := json.Marshal(caps)
		d.req.A2UIClientCapabilities = b
	} else if w.Version == a2ui.V09 && fromDart(ctx) {
		// Flutter genui sends no capabilities when the app passes none, and knows the
		// basic catalog by its own id.
		d.req.A2UIClientCapabilities = schemas.Object(`{"v0.9":{"supportedCatalogIds":["` + spec.FlutterBasicCatalogID + `"]}}`)
	}
	if dm, ok := msg.Metadata["a2uiClientDataModel"]; ok && dm != nil {
		b, _ := json.Marshal(dm)
		d.req.A2UIClientDataModel = b
	}
	if m, ok := msg.Metadata["model"]; ok && m != nil {
		name, isString := m.(string)
		if !isString {
			return nil, invalidParams("message.metadata.model", "must be a string naming a model, e.g. \"googleai/gemini-2.5-flash\"")
		}
		d.req.Model = name
	}
	if ct, ok := msg.Metadata["clientTools"]; ok && ct != nil {
		b, _ := json.Marshal(ct)
		if err := json.Unmarshal(b, &d.req.ClientTools); err != nil {
			return nil, invalidParams("message.metadata.clientTools", "must be a list of {\"name\",\"description\",\"inputSchema\"}: %v", err)
		}
	}
	var parts []schemas.Part
	for i, p := range msg.Parts {
		f := "message.parts[" + strconv.Itoa(i) + "]"
		got, err := decodePart(p, f)
		if err != nil {
			return nil, err
		}
		for range got {
			d.partOf = append(d.partOf, i)
		}
		parts = append(parts, got...)
	}
	if len(parts) == 0 {
		return nil, invalidParams("message.parts", "holds no text, image, A2UI action or tool result")
	}
	d.req.Conversation = []schemas.Message{{Role: "user", Parts: parts}}
	return d, nil
}

// fromDart reports whether the request comes from Flutter: Dart's JSON (see wrapV03), or
// Dart's HTTP client by its User-Agent (see wrap).
func fromDart(ctx context.Context) bool {
	dart, _ := ctx.Value(dartKey{}).(bool)
	return dart
}

// decodePart turns one part of a user message into parts of the core conversation:
// text; an image; an A2UI client message (an action, a v0.8 userAction, an error), alone
// or in a list; the result of a client tool; other data, as text for the model.
func decodePart(p *a2a.Part, f string) ([]schemas.Part, error) {
	if p == nil {
		return nil, invalidParams(f, "must be a part")
	}
	switch c := p.Content.(type) {
	case a2a.Text:
		if strings.TrimSpace(string(c)) == "" {
			return nil, nil
		}
		return []schemas.Part{{Type: schemas.PartText, Text: string(c)}}, nil
	case a2a.URL:
		if !strings.HasPrefix(p.MediaType, "image/") {
			return nil, unsupportedContent(f, p.MediaType)
		}
		return []schemas.Part{{Type: schemas.PartImage, URL: string(c), MimeType: p.MediaType}}, nil
	case a2a.Raw:
		if !strings.HasPrefix(p.MediaType, "image/") {
			return nil, unsupportedContent(f, p.MediaType)
		}
		return []schemas.Part{{Type: schemas.PartImage, Base64: base64.StdEncoding.EncodeToString(c), MimeType: p.MediaType}}, nil
	case a2a.Data:
		if list, ok := c.Value.([]any); ok {
			var out []schemas.Part
			for i, v := range list {
				got, err := decodeData(v, f+".data["+strconv.Itoa(i)+"]")
				if err != nil {
					return nil, err
				}
				out = append(out, got...)
			}
			return out, nil
		}
		return decodeData(c.Value, f+".data")
	}
	return nil, unsupportedContent(f, p.MediaType)
}

// clientMessageKeys are the operations of an A2UI client message.
var clientMessageKeys = []string{"action", "userAction", "error"}

func decodeData(v any, f string) ([]schemas.Part, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalidParams(f, "must be an object: an A2UI client message, or a tool result")
	}
	if tr, ok := m["toolResult"]; ok {
		return decodeToolResult(tr, f+".toolResult")
	}
	for _, k := range clientMessageKeys {
		if _, ok := m[k]; ok {
			b, _ := json.Marshal(m)
			if _, fe := a2ui.DecodeClientMessage(b, f); fe != nil {
				return nil, invalidParams(fe.Field, "%s", fe.Message)
			}
			return []schemas.Part{{Type: schemas.PartA2UI, Message: b}}, nil
		}
	}
	if _, ok := m["useStreaming"]; ok && len(m) == 1 {
		// The A2UI Lit shell's flag: every turn's final status holds all of its parts.
		return nil, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(m)
	return []schemas.Part{{Type: schemas.PartText, Text: "The client sent this data:\n```json\n" + strings.TrimSpace(b.String()) + "\n```"}}, nil
}

// decodeToolResult reads {"callId","name","output"} or {"callId","name","error"}.
func decodeToolResult(v any, f string) ([]schemas.Part, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, invalidParams(f, "must be an object {\"callId\",\"name\",\"output\"} (or \"error\")")
	}
	id, _ := m["callId"].(string)
	name, _ := m["name"].(string)
	p := schemas.Part{Type: schemas.PartToolResult, CallID: id, Name: name}
	if e, ok := m["error"].(string); ok {
		p.Error = e
	}
	if out, ok := m["output"]; ok {
		b, err := json.Marshal(out)
		if err != nil {
			return nil, invalidParams(f+".output", "%v", err)
		}
		p.Output = b
	}
	return []schemas.Part{p}, nil
}

// invalidParams is an A2A invalid-params error naming the field.
func invalidParams(field, format string, args ...any) error {
	msg := field + ": " + fmt.Sprintf(format, args...)
	return a2a.NewError(a2a.ErrInvalidParams, msg).WithDetails(map[string]any{"field": field})
}

func unsupportedContent(field, mediaType string) error {
	msg := fmt.Sprintf("%s: content of type %q is not supported: send text, images, A2UI actions or tool results", field, mediaType)
	return a2a.NewError(a2a.ErrUnsupportedContentType, msg).WithDetails(map[string]any{"field": field})
}
