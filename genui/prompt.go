package genui

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/policy"
)

// The system prompt is the same for every turn of a catalog, so providers that cache
// prompt prefixes can reuse it; it is built once per catalog.
const promptHead = `You are a UI generation agent. You answer the user by composing user interfaces that the client renders, using the tools addOrUpdateSurface and deleteSurface.

Rules:
- To show UI, call addOrUpdateSurface with a surfaceId and a definition. Reuse a surfaceId to replace that surface; use a new surfaceId for a new surface.
- To remove a surface, call deleteSurface with its surfaceId.
- A definition is a flat list of widgets. Each entry has a unique "id" and a "widget" object with exactly one key: the widget type, whose value holds the widget's properties. Widgets refer to their children by id. "root" is the id of the top widget.
- Use only the widgets and properties of the catalog below, and give every required property.
- User interactions arrive as a JSON array of UI events. For an action, use its "value" (the current values of the surface) to decide what to show next.
- Make all tool calls in one response. Keep any text short; the UI is the answer.

The widget catalog: the JSON Schema every definition must conform to.
` + "```json\n"

const promptTail = "\n```\n"

type promptKey struct{}

// Prompt is a system prompt, kept as the JSON string that model APIs send it in: encoded
// once per catalog and shared, whichever form a model needs.
type Prompt struct{ enc []byte }

// NewPrompt returns the prompt whose text is text.
func NewPrompt(text string) Prompt {
	enc, _ := json.Marshal(text) // a string always encodes
	return Prompt{enc: enc}
}

// JSON returns the prompt as an encoded JSON string, quotes included.
func (p Prompt) JSON() []byte { return p.enc }

// String returns the prompt's text.
func (p Prompt) String() string {
	var s string
	_ = json.Unmarshal(p.enc, &s)
	return s
}

// Len returns the length of the prompt's encoding, about that of its text.
func (p Prompt) Len() int { return len(p.enc) }

// systemPrompt returns the system prompt for a catalog.
func systemPrompt(c *catalog.Catalog) Prompt {
	return c.Memo(promptKey{}, func() any {
		var indented bytes.Buffer
		b := c.Canonical
		if json.Indent(&indented, c.Canonical, "", " ") == nil {
			b = indented.Bytes()
		}
		var sb strings.Builder
		sb.Grow(len(promptHead) + len(b) + len(promptTail))
		sb.WriteString(promptHead)
		sb.Write(b)
		sb.WriteString(promptTail)
		return NewPrompt(sb.String())
	}).(Prompt)
}

type policyPromptKey struct{ p *policy.Policy }

// withPolicy returns a catalog's system prompt followed by what a UI policy asks of the
// model, built once per catalog and policy.
func withPolicy(c *catalog.Catalog, base Prompt, p *policy.Policy) Prompt {
	if p.Prompt() == "" {
		return base
	}
	return c.Memo(policyPromptKey{p}, func() any {
		return NewPrompt(base.String() + "\n" + p.Prompt())
	}).(Prompt)
}

// isPolicyCode reports whether a violation's code is a rule of the UI policy.
func isPolicyCode(code string) bool {
	for _, r := range policy.Rules() {
		if code == string(r) {
			return true
		}
	}
	return false
}

// countPolicy counts the policy's violations of a model response, by rule.
func (s *Service) countPolicy(c *modelCall) {
	if s.metrics == nil || c.turn.policy == nil {
		return
	}
	count := func(vs []catalog.Violation) {
		for _, v := range vs {
			if isPolicyCode(v.Code) {
				s.metrics.PolicyViolation(v.Code)
			}
		}
	}
	for _, v := range c.verdicts {
		count(v)
	}
	count(c.a2uiBad)
}
