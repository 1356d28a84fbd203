package aguiapi

import (
	"bytes"
	"encoding/json"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/schemas"
)

// conversation builds the core conversation of a run from its messages.
type conversation struct {
	*turn
	conv []schemas.Message
	// calls are the tool calls of the assistant messages so far, by id; open are those
	// of the latest assistant message, which the tool messages after it answer.
	calls map[string]*call
	open  []string
	// logged are the user actions @ag-ui/a2ui-middleware logged as log_a2ui_event calls
	// in the latest assistant message: they become the user's input after its tool
	// messages.
	logged []loggedAction
	// resumes answer open calls; used marks those that did.
	resumes []resumeEntry
	used    []bool
	// lastAction is the last logged action, which forwardedProps may repeat.
	lastAction map[string]any
}

type call struct {
	name       string
	field      string // the call in the input (messages[1].toolCalls[0])
	middleware bool   // a call of the middleware's own tools
	answered   string // the answer's field, once answered
}

type loggedAction struct {
	action json.RawMessage
	field  string
}

// add appends a part to the conversation, in a new message when the role changes, and
// records where it came from.
func (c *conversation) add(role string, p schemas.Part, field string) string {
	if n := len(c.conv); n == 0 || c.conv[n-1].Role != role {
		c.conv = append(c.conv, schemas.Message{Role: role})
		c.fields["conversation["+strconv.Itoa(n)+"]"] = field
	}
	i := len(c.conv) - 1
	key := "conversation[" + strconv.Itoa(i) + "].parts[" + strconv.Itoa(len(c.conv[i].Parts)) + "]"
	c.conv[i].Parts = append(c.conv[i].Parts, p)
	c.fields[key] = field
	return key
}

func (c *conversation) messages(in *runInput) *genui.Error {
	for i := range in.Messages {
		m := &in.Messages[i]
		f := "messages[" + strconv.Itoa(i) + "]"
		if m.Role != "tool" {
			if e := c.endOfAnswers(); e != nil {
				return e
			}
		}
		var e *genui.Error
		switch m.Role {
		case "user":
			e = c.user(m, f)
		case "system", "developer":
			var text string
			if json.Unmarshal(m.Content, &text) != nil {
				return invalid(f+".content", "must be a string")
			}
			if strings.TrimSpace(text) != "" {
				c.add("user", schemas.Part{Type: schemas.PartText, Text: "Instructions from the app (" + m.Role + "): " + text}, f+".content")
			}
		case "assistant":
			e = c.assistant(m, f)
		case "tool":
			e = c.tool(m, f)
		case "activity":
			e = c.activity(m, f)
		case "reasoning":
			// The model's reasoning of an earlier run: not part of what it is shown.
		case "":
			return invalid(f+".role", "required: user, assistant, tool, system, developer, activity or reasoning")
		default:
			return invalid(f+".role", "%q is not a role: user, assistant, tool, system, developer, activity or reasoning", m.Role)
		}
		if e != nil {
			return e
		}
	}
	return c.endOfAnswers()
}

func (c *conversation) user(m *message, f string) *genui.Error {
	var text string
	if json.Unmarshal(m.Content, &text) == nil {
		if strings.TrimSpace(text) != "" {
			c.add("user", schemas.Part{Type: schemas.PartText, Text: text}, f+".content")
		}
		return nil
	}
	var parts []contentPart
	if err := json.Unmarshal(m.Content, &parts); err != nil {
		return invalid(f+".content", "must be a string or a list of parts ({\"type\":\"text\",\"text\"} or {\"type\":\"image\",\"source\"})")
	}
	for j, p := range parts {
		pf := f + ".content[" + strconv.Itoa(j) + "]"
		switch p.Type {
		case "text":
			if strings.TrimSpace(p.Text) != "" {
				c.add("user", schemas.Part{Type: schemas.PartText, Text: p.Text}, pf)
			}
		case "image":
			switch {
			case p.Source == nil:
				return invalid(pf+".source", "required: {\"type\":\"data\"|\"url\",\"value\",\"mimeType\"}")
			case p.Source.Type == "data":
				c.add("user", schemas.Part{Type: schemas.PartImage, Base64: p.Source.Value, MimeType: p.Source.MimeType}, pf+".source")
			case p.Source.Type == "url":
				c.add("user", schemas.Part{Type: schemas.PartImage, URL: p.Source.Value, MimeType: p.Source.MimeType}, pf+".source")
			default:
				return invalid(pf+".source.type", "%q is not supported: send an image as \"data\" (base64) or \"url\"", p.Source.Type)
			}
		case "audio", "video", "document":
			return invalid(pf+".type", "%s parts are not supported: send text and images", p.Type)
		default:
			return invalid(pf+".type", "%q is not a part type: text, image", p.Type)
		}
	}
	return nil
}

func (c *conversation) assistant(m *message, f string) *genui.Error {
	var text string
	if len(m.Content) > 0 && json.Unmarshal(m.Content, &text) != nil {
		return invalid(f+".content", "must be a string")
	}
	if strings.TrimSpace(text) != "" {
		c.add("model", schemas.Part{Type: schemas.PartText, Text: text}, f+".content")
	}
	for j := range m.ToolCalls {
		tc := &m.ToolCalls[j]
		cf := f + ".toolCalls[" + strconv.Itoa(j) + "]"
		if tc.ID == "" {
			return invalid(cf+".id", "required")
		}
		if prev := c.calls[tc.ID]; prev != nil {
			return invalid(cf+".id", "the call id %q is used twice (also by %s)", tc.ID, prev.field)
		}
		args := json.RawMessage(strings.TrimSpace(tc.Function.Arguments))
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		if kind(args) != "object" || !json.Valid(args) {
			return invalid(cf+".function.arguments", "must be the JSON of an object")
		}
		cl := &call{name: tc.Function.Name, field: cf, middleware: middlewareTool(tc.Function.Name)}
		c.calls[tc.ID] = cl
		switch tc.Function.Name {
		case logA2UIEventTool:
			c.logged = append(c.logged, loggedAction{action: args, field: cf + ".function.arguments"})
			continue
		case renderA2UITool:
			continue
		}
		key := c.add("model", schemas.Part{Type: schemas.PartToolCall, CallID: tc.ID, Name: tc.Function.Name, Input: schemas.Object(args), Signature: tc.EncryptedValue}, cf)
		c.fields[key+".callId"], c.fields[key+".name"], c.fields[key+".input"] = cf+".id", cf+".function.name", cf+".function.arguments"
		c.fields[key+".signature"] = cf + ".encryptedValue"
		c.open = append(c.open, tc.ID)
	}
	return nil
}

func (c *conversation) tool(m *message, f string) *genui.Error {
	cl := c.calls[m.ToolCallID]
	switch {
	case m.ToolCallID == "":
		return invalid(f+".toolCallId", "required: the id of the call this answers")
	case cl == nil:
		return invalid(f+".toolCallId", "no call %q in an assistant message before it", m.ToolCallID)
	case cl.middleware:
		return nil // the middleware's own answer: the call's action is the input
	case cl.answered != "":
		return invalid(f+".toolCallId", "the call %q is answered twice (also by %s)", m.ToolCallID, cl.answered)
	}
	p := schemas.Part{Type: schemas.PartToolResult, CallID: m.ToolCallID, Name: cl.name}
	cl.answered = f
	switch {
	case m.Error != "":
		p.Error = m.Error
	default:
		out, e := toolOutput(m.Content, f+".content")
		if e != nil {
			return e
		}
		p.Output = out
	}
	key := c.add("user", p, f)
	c.fields[key+".callId"], c.fields[key+".output"] = f+".toolCallId", f+".content"
	return nil
}

// toolOutput is a tool message's content as the result of its call: the JSON it holds,
// or the text itself.
func toolOutput(content json.RawMessage, f string) (json.RawMessage, *genui.Error) {
	var text string
	if json.Unmarshal(content, &text) != nil {
		var parts []contentPart
		if json.Unmarshal(content, &parts) != nil {
			return nil, invalid(f, "must be a string or a list of text parts")
		}
		var sb strings.Builder
		for _, p := range parts {
			sb.WriteString(p.Text)
		}
		text = sb.String()
	}
	if t := strings.TrimSpace(text); t != "" && json.Valid([]byte(t)) {
		return json.RawMessage(t), nil
	}
	b, _ := json.Marshal(text)
	return b, nil
}

// activity reads the surfaces a client holds (a2ui-surface activities) as what the model
// showed; other activities are the client's own.
func (c *conversation) activity(m *message, f string) *genui.Error {
	if m.ActivityType != "a2ui-surface" {
		return nil
	}
	var content struct {
		Ops []json.RawMessage `json:"a2ui_operations"`
	}
	if kind(m.Content) != "object" || json.Unmarshal(m.Content, &content) != nil {
		return invalid(f+".content", "must be an object {\"a2ui_operations\":[…]}")
	}
	for k, op := range content.Ops {
		of := f + ".content.a2ui_operations[" + strconv.Itoa(k) + "]"
		key := c.add("model", schemas.Part{Type: schemas.PartA2UI, Message: schemas.Object(op)}, of)
		c.fields[key+".message"] = of
		c.shown = append(c.shown, op)
	}
	return nil
}

// endOfAnswers ends the answers to the latest assistant message's calls: the resume
// entries answer those no tool message did, then the actions it logged are the user's.
func (c *conversation) endOfAnswers() *genui.Error {
	for _, id := range c.open {
		cl := c.calls[id]
		for k, r := range c.resumes {
			if r.InterruptID != id || c.used[k] {
				continue
			}
			rf := "resume[" + strconv.Itoa(k) + "]"
			if cl.answered != "" {
				return invalid(rf+".interruptId", "the call %q is answered twice (also by %s)", id, cl.answered)
			}
			c.used[k], cl.answered = true, rf
			p := schemas.Part{Type: schemas.PartToolResult, CallID: id, Name: cl.name}
			if r.Status == "cancelled" {
				p.Error = "The user cancelled the call: the tool did not run."
			} else if p.Output = r.Payload; len(bytes.TrimSpace(p.Output)) == 0 {
				p.Output = json.RawMessage("null")
			}
			key := c.add("user", p, rf)
			c.fields[key+".callId"], c.fields[key+".output"] = rf+".interruptId", rf+".payload"
		}
	}
	for _, a := range c.logged {
		if e := c.action(a.action, a.field); e != nil {
			return e
		}
	}
	c.open, c.logged = nil, nil
	return nil
}

// action adds a user action, the v0.9 action object as AG-UI carries it ({name,
// surfaceId, sourceComponentId, timestamp, context}).
func (c *conversation) action(a json.RawMessage, f string) *genui.Error {
	var m map[string]any
	if json.Unmarshal(a, &m) != nil || m == nil {
		return invalid(f, "must be an object {\"name\",\"surfaceId\",\"sourceComponentId\",\"timestamp\",\"context\"}")
	}
	c.lastAction = m
	msg, _ := json.Marshal(map[string]any{"version": "v0.9", "action": json.RawMessage(a)})
	key := c.add("user", schemas.Part{Type: schemas.PartA2UI, Message: msg}, f)
	c.fields[key+".message.action"], c.fields[key+".message"] = f, f
	return nil
}

// forwardedAction adds the action of forwardedProps.a2uiAction (userAction, or action),
// unless the messages end with the same action logged by the middleware.
func (c *conversation) forwardedAction(props json.RawMessage) *genui.Error {
	if kind(props) != "object" {
		return nil
	}
	var fp struct {
		A2UIAction json.RawMessage `json:"a2uiAction"`
	}
	if json.Unmarshal(props, &fp) != nil || kind(fp.A2UIAction) == "" || kind(fp.A2UIAction) == "null" {
		return nil
	}
	if kind(fp.A2UIAction) != "object" {
		return invalid("forwardedProps.a2uiAction", "must be an object {\"userAction\":{…}}")
	}
	var wrap map[string]json.RawMessage
	_ = json.Unmarshal(fp.A2UIAction, &wrap)
	key := "userAction"
	if wrap[key] == nil && wrap["action"] != nil {
		key = "action"
	}
	a, f := wrap[key], "forwardedProps.a2uiAction."+key
	if kind(a) != "object" {
		return invalid("forwardedProps.a2uiAction.userAction", "required: the action {\"name\",\"surfaceId\",\"sourceComponentId\",\"timestamp\",\"context\"}")
	}
	var m map[string]any
	_ = json.Unmarshal(a, &m)
	if c.lastAction != nil && reflect.DeepEqual(m, c.lastAction) && c.endsWithAction() {
		return nil
	}
	return c.action(a, f)
}

// endsWithAction reports whether the conversation ends with a user action.
func (c *conversation) endsWithAction() bool {
	n := len(c.conv)
	if n == 0 || c.conv[n-1].Role != "user" {
		return false
	}
	ps := c.conv[n-1].Parts
	return len(ps) > 0 && ps[len(ps)-1].Type == schemas.PartA2UI
}

// unusedResumes fails a resume entry that answered no call.
func (c *conversation) unusedResumes() *genui.Error {
	for k, r := range c.resumes {
		if c.used[k] {
			continue
		}
		f := "resume[" + strconv.Itoa(k) + "].interruptId"
		if cl := c.calls[r.InterruptID]; cl != nil && cl.answered != "" {
			return invalid(f, "the call %q is answered twice (also by %s)", r.InterruptID, cl.answered)
		}
		return invalid(f, "no call %q waits for an answer: an interrupt answers a call of the last assistant message", r.InterruptID)
	}
	return nil
}

// coreField matches the names of the core request's fields in an error's message.
var coreField = regexp.MustCompile(`(?:conversation|clientTools)(?:\[\d+\])?(?:\.[A-Za-z0-9_]+|\[\d+\])*|a2uiClientCapabilities(?:\.[A-Za-z0-9_.]+|\[\d+\])*|a2uiClientDataModel`)

// inputError names, in an error of the core, the run's fields instead of the core
// request's.
func (t *turn) inputError(err error) *genui.Error {
	e := genui.AsError(err)
	cp := *e
	cp.Message = coreField.ReplaceAllStringFunc(e.Message, t.field)
	if rest, ok := strings.CutPrefix(cp.Message, "model: "); ok {
		// The one field named by a word of prose too: only as the message's subject.
		cp.Message = t.field("model") + ": " + rest
	}
	if d, ok := e.Details.(map[string]any); ok {
		nd := make(map[string]any, len(d))
		for k, v := range d {
			nd[k] = v
		}
		if f, ok := d["field"].(string); ok {
			nd["field"] = t.field(f)
		}
		cp.Details = nd
	}
	return &cp
}

// field maps a field of the core request to the run's: the longest known prefix is
// replaced.
func (t *turn) field(f string) string {
	for end := len(f); end > 0; end-- {
		if end < len(f) && f[end] != '.' && f[end] != '[' {
			continue
		}
		if to, ok := t.fields[f[:end]]; ok {
			return to + f[end:]
		}
	}
	return f
}
