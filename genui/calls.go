package genui

import (
	"encoding/base64"
	"encoding/json"
	"regexp"
	"strconv"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/tools"
)

// Calls of client tools in a conversation: a model message holds the calls as toolCall
// parts, and the next message, a user message, answers each of them exactly once with a
// toolResult part. The model sees them as its function calls and their responses.

var callIDRE = regexp.MustCompile(`^[A-Za-z0-9._:-]{1,128}$`)

// validateToolPart checks a toolCall or toolResult part on its own.
func validateToolPart(f, role string, p *schemas.Part) *Error {
	switch {
	case p.Type == schemas.PartToolCall && role != "model":
		return fieldError(f+".type", "toolCall parts belong to model messages: the calls the server sent")
	case p.Type == schemas.PartToolResult && role != "user":
		return fieldError(f+".type", "toolResult parts belong to user messages")
	case p.CallID == "":
		return fieldError(f+".callId", "required: the id of the call, as the toolCall event gave it")
	case !callIDRE.MatchString(p.CallID):
		return fieldError(f+".callId", "%q is not a call id (1 to 128 characters of A-Z a-z 0-9 . _ : -)", p.CallID)
	case p.Name == "":
		return fieldError(f+".name", "required: the name of the client tool")
	case p.Name == tools.AddOrUpdateSurface || p.Name == tools.DeleteSurface:
		return fieldError(f+".name", "%s is a UI tool, not a client tool: its calls are ui parts", p.Name)
	case !tools.ValidName(p.Name):
		return fieldError(f+".name", "%q is not a valid tool name", p.Name)
	}
	if p.Type == schemas.PartToolCall {
		switch {
		case len(p.Input) > 0 && jsonKind(p.Input) != "object":
			return fieldError(f+".input", "must be an object, got %s", jsonKind(p.Input))
		case len(p.Output) > 0 || p.Error != "":
			return fieldError(f, "a toolCall part has no output or error: those belong to the toolResult part that answers it")
		case p.Signature != "":
			if _, err := base64.StdEncoding.DecodeString(p.Signature); err != nil {
				return fieldError(f+".signature", "not valid base64: send it back as the toolCall event gave it")
			}
		}
		return nil
	}
	switch {
	case len(p.Output) > 0 && p.Error != "":
		return fieldError(f, "a toolResult part has either output or error, not both")
	case len(p.Output) == 0 && p.Error == "":
		return fieldError(f+".output", "required (or error: a message saying why the call failed)")
	case len(p.Input) > 0:
		return fieldError(f+".input", "a toolResult part has no input")
	}
	return nil
}

// call is a call of a client tool that a conversation holds.
type call struct {
	ID    string `json:"callId"`
	Name  string `json:"name"`
	field string // where the call is in the request, for messages
}

// callRules say what results may answer besides the calls of the conversation's own
// model messages: the calls a held conversation waits for.
type callRules struct {
	// prior are the calls the first message may answer.
	prior []call
	// partial lets the first message answer only some of prior, when it holds nothing but
	// results; a first message with other parts answers the rest "not answered".
	partial bool
	// unknown explains a result for a call that is neither in prior nor in the
	// conversation; nil: a 400.
	unknown func(callID, field string) *Error
}

// checkCalls checks that the calls of each model message of conv are answered, each
// exactly once, by the toolResult parts of the message after it, and that every result
// answers such a call.
func checkCalls(conv []schemas.Message, rules callRules) *Error {
	open := rules.prior
	seen := map[string]string{} // call id → field of its call
	for _, c := range open {
		seen[c.ID] = c.field
	}
	for i := range conv {
		m := &conv[i]
		f := "conversation[" + strconv.Itoa(i) + "]"
		if m.Role == "model" {
			if len(open) > 0 {
				return unanswered(f, open, i == 0 && rules.prior != nil)
			}
			for j := range m.Parts {
				p := &m.Parts[j]
				if p.Type != schemas.PartToolCall {
					continue
				}
				pf := f + ".parts[" + strconv.Itoa(j) + "]"
				if prev, dup := seen[p.CallID]; dup {
					return fieldError(pf+".callId", "the call id %q is used twice (also by %s)", p.CallID, prev)
				}
				seen[p.CallID] = pf
				open = append(open, call{ID: p.CallID, Name: p.Name, field: pf})
			}
			continue
		}
		answered := map[string]string{}
		for j := range m.Parts {
			p := &m.Parts[j]
			if p.Type != schemas.PartToolResult {
				continue
			}
			pf := f + ".parts[" + strconv.Itoa(j) + "]"
			k := callIndex(open, p.CallID)
			switch {
			case k < 0 && rules.unknown != nil && i == 0:
				return rules.unknown(p.CallID, pf+".callId")
			case k < 0:
				return fieldError(pf+".callId", "no call %q waits for a result here: a result answers a call of the model message just before it", p.CallID)
			case answered[p.CallID] != "":
				return fieldError(pf+".callId", "a second result for the call %q (the first is %s)", p.CallID, answered[p.CallID])
			case p.Name != open[k].Name:
				return fieldError(pf+".name", "the call %q is a call of %q, not %q", p.CallID, open[k].Name, p.Name)
			}
			answered[p.CallID] = pf
		}
		// A held conversation's first message may leave calls open: with nothing but
		// results, they stay pending; with a new message, they are answered "not answered".
		if len(answered) < len(open) && !(i == 0 && rules.partial) {
			var left []call
			for _, c := range open {
				if answered[c.ID] == "" {
					left = append(left, c)
				}
			}
			return unansweredIn(f, left)
		}
		open = nil
	}
	return nil
}

func callIndex(calls []call, id string) int {
	for i, c := range calls {
		if c.ID == id {
			return i
		}
	}
	return -1
}

// unanswered reports calls still open when a model message comes.
func unanswered(f string, open []call, held bool) *Error {
	if held {
		return fieldError(f+".role", "the conversation waits for the results of %s: send them in a user message", callList(open))
	}
	return fieldError(f+".role", "the calls %s need their results in the message after them, a user message", callList(open))
}

// unansweredIn reports calls a user message leaves without a result.
func unansweredIn(f string, left []call) *Error {
	e := fieldError(f+".parts", "no result for %s: every call needs a toolResult part (with output, or error)", callList(left))
	e.Details.(map[string]any)["callIds"] = callIDs(left)
	return e
}

func callList(cs []call) string {
	s := ""
	for i, c := range cs {
		if i > 0 {
			s += ", "
		}
		s += strconv.Quote(c.ID) + " (" + c.Name
		if c.field != "" {
			s += ", " + c.field
		}
		s += ")"
	}
	return s
}

func callIDs(cs []call) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

// toolCallPart is the model's view of a toolCall part: its function call.
func toolCallPart(p *schemas.Part) *ai.Part {
	var input any = map[string]any{}
	if len(p.Input) > 0 {
		_ = json.Unmarshal(p.Input, &input) // validated
	}
	part := ai.NewToolRequestPart(&ai.ToolRequest{Name: p.Name, Input: input, Ref: p.CallID})
	if p.Signature != "" {
		sig, _ := base64.StdEncoding.DecodeString(p.Signature) // validated
		part.Metadata = map[string]any{SignatureKey: sig}
	}
	return part
}

// toolResultPart is the model's view of a toolResult part: the function's response, its
// output, or {"error": message}.
func toolResultPart(p *schemas.Part) *ai.Part {
	var out any
	if p.Error != "" {
		out = map[string]any{"error": p.Error}
	} else if err := json.Unmarshal(p.Output, &out); err != nil {
		out = map[string]any{"error": "the client's result is not JSON"}
	}
	return ai.NewToolResponsePart(&ai.ToolResponse{Name: p.Name, Ref: p.CallID, Output: out})
}

// responses collects the function responses that answer a model message's function
// calls, in the order of the calls: the service's acknowledgements of UI tool calls, and
// the client's results.
type responses struct {
	slots []*ai.Part
	calls map[string]int // call id → slot of a client tool call
}

func (r *responses) addAck(p *ai.Part) { r.slots = append(r.slots, p) }

func (r *responses) addCall(id string) {
	if r.calls == nil {
		r.calls = map[string]int{}
	}
	r.calls[id] = len(r.slots)
	r.slots = append(r.slots, nil)
}

// waiting reports whether the message had calls of client tools.
func (r *responses) waiting() bool { return len(r.calls) > 0 }

// answer places a result in its call's slot.
func (r *responses) answer(p *schemas.Part) {
	if k, ok := r.calls[p.CallID]; ok {
		r.slots[k] = toolResultPart(p)
	}
}

// message returns the tool message of the responses, or nil when there are none.
func (r *responses) message() *ai.Message {
	if len(r.slots) == 0 {
		return nil
	}
	content := make([]*ai.Part, 0, len(r.slots))
	for _, p := range r.slots {
		if p != nil {
			content = append(content, p)
		}
	}
	return &ai.Message{Role: ai.RoleTool, Content: content}
}
