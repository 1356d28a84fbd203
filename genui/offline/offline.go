package offline

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/policy"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/tools"
)

// Name is the name of the offline model.
const Name = "genui/offline"

// New returns the offline model, called directly by the turn.
func New() genui.Model { return model{} }

type model struct{}

func (model) Name() string { return Name }

func (model) Generate(ctx context.Context, req *genui.ModelRequest, onPart func(context.Context, *ai.Part) error) (*ai.ModelResponse, error) {
	var parts []*ai.Part
	cts := clientToolsOf(req.ClientTools)
	if req.Catalog != nil && req.Catalog.A2UI != nil {
		parts = respondA2UI(req.Catalog, cts, req.Messages)
	} else {
		parts = respond(widgets(req.Tools.Catalog), cts, req.Messages, req.NoTools)
	}
	for _, p := range parts {
		if err := onPart(ctx, p); err != nil {
			return nil, err
		}
	}
	return response(parts, req.System.Len(), req.Messages), nil
}

// Define registers the offline model in g as a Genkit model, so that Genkit tooling (the
// Dev UI) lists and runs it. It behaves as [New], reading the catalog from the
// addOrUpdateSurface tool it is given.
func Define(g *genkit.Genkit) ai.Model {
	return genkit.DefineModel(g, Name, &ai.ModelOptions{
		Label:    "Offline (deterministic, not an LLM)",
		Supports: &ai.ModelSupports{Multiturn: true, Tools: true, SystemRole: true, Media: true, ToolChoice: true},
	}, func(ctx context.Context, req *ai.ModelRequest, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
		var widgets []catalog.Widget
		for _, t := range req.Tools {
			if t.Name == tools.AddOrUpdateSurface {
				widgets = tools.WidgetsOfSchema(t.InputSchema)
			}
		}
		parts := respond(widgets, clientToolsOfDefs(req.Tools), req.Messages, req.ToolChoice == ai.ToolChoiceNone)
		if cb != nil {
			for _, p := range parts {
				if err := cb(ctx, &ai.ModelResponseChunk{Role: ai.RoleModel, Content: []*ai.Part{p}}); err != nil {
					return nil, err
				}
			}
		}
		return response(parts, 0, req.Messages), nil
	})
}

// respond is the offline model's answer to a conversation, given the catalog's widgets and
// the client tools.
func respond(widgets []catalog.Widget, cts []clientTool, messages []*ai.Message, noTools bool) []*ai.Part {
	last := lastMessage(messages)
	switch {
	case last == nil:
		return []*ai.Part{ai.NewTextPart("Nothing to answer.")}
	case last.Role == ai.RoleTool && !noTools:
		if results := clientResults(last); results != "" {
			parts := []*ai.Part{
				ai.NewTextPart("Here is what the client returned."),
				surfaceRequest("surface-"+strconv.Itoa(countUserTurns(messages)), composeSurface(widgets, results)),
			}
			if next := nextCalls(cts, messages); len(next) > 0 {
				parts = append(parts, callsOf(" Next, calling", next)...)
			}
			return parts
		}
		return []*ai.Part{ai.NewTextPart("Done.")}
	case last.Role == ai.RoleTool || noTools:
		return []*ai.Part{ai.NewTextPart("Done.")}
	}
	return turn(widgets, cts, messages, last)
}

// response wraps the parts with a finish reason and a token estimate (4 bytes a token).
func response(parts []*ai.Part, system int, messages []*ai.Message) *ai.ModelResponse {
	in, out := system/4, 0
	for _, m := range messages {
		for _, p := range m.Content {
			in += len(p.Text) / 4
		}
	}
	for _, p := range parts {
		out += len(p.Text) / 4
		if p.ToolRequest != nil {
			b, _ := json.Marshal(p.ToolRequest.Input)
			out += len(b) / 4
		}
	}
	return &ai.ModelResponse{
		Message:      &ai.Message{Role: ai.RoleModel, Content: parts},
		FinishReason: ai.FinishReasonStop,
		Usage:        &ai.GenerationUsage{InputTokens: in, OutputTokens: out, TotalTokens: in + out},
	}
}

func lastMessage(ms []*ai.Message) *ai.Message {
	for i := len(ms) - 1; i >= 0; i-- {
		if ms[i].Role != ai.RoleSystem {
			return ms[i]
		}
	}
	return nil
}

func turn(widgets []catalog.Widget, cts []clientTool, messages []*ai.Message, last *ai.Message) []*ai.Part {
	userText := ""
	for _, p := range last.Content {
		if p.IsText() {
			userText += p.Text
		}
	}
	surfaces := historySurfaces(messages)
	if events, ok := parseUIEvents(userText); ok && len(events) > 0 {
		ev := events[len(events)-1]
		for i := len(events) - 1; i >= 0; i-- {
			if events[i].IsAction {
				ev = events[i]
				break
			}
		}
		msg := fmt.Sprintf("You used %q (%s).", ev.WidgetID, ev.EventType)
		if ev.Value != nil {
			if b, err := json.Marshal(ev.Value); err == nil {
				msg += " Values: " + string(b)
			}
		}
		def := composeSurface(widgets, msg)
		return []*ai.Part{
			ai.NewTextPart("Updated the surface with your input."),
			surfaceRequest(ev.SurfaceID, def),
		}
	}
	lower := strings.ToLower(userText)
	if len(surfaces) > 0 && (strings.Contains(lower, "delete") || strings.Contains(lower, "remove") || strings.Contains(lower, "close")) {
		id := surfaces[len(surfaces)-1]
		return []*ai.Part{
			ai.NewTextPart("Removed the surface " + strconv.Quote(id) + "."),
			ai.NewToolRequestPart(&ai.ToolRequest{Name: tools.DeleteSurface, Input: map[string]any{"surfaceId": id}}),
		}
	}
	if named := nextCalls(cts, messages); len(named) > 0 {
		return callsOf("Calling", named)
	}
	if userText == "" {
		userText = "(no text)"
	}
	def := composeSurface(widgets, "You said: "+userText)
	return []*ai.Part{
		ai.NewTextPart("Here is a surface for your message."),
		surfaceRequest("surface-"+strconv.Itoa(countUserTurns(messages)), def),
	}
}

func surfaceRequest(id string, def map[string]any) *ai.Part {
	return ai.NewToolRequestPart(&ai.ToolRequest{Name: tools.AddOrUpdateSurface, Input: map[string]any{"surfaceId": id, "definition": def}})
}

func countUserTurns(ms []*ai.Message) int {
	n := 0
	for _, m := range ms {
		if m.Role == ai.RoleUser {
			n++
		}
	}
	return n
}

// historySurfaces lists the surfaces the conversation shows, oldest first.
func historySurfaces(ms []*ai.Message) []string {
	var ids []string
	for _, m := range ms {
		for _, p := range m.Content {
			if p.IsToolRequest() && p.ToolRequest != nil {
				in, _ := p.ToolRequest.Input.(map[string]any)
				id, _ := in["surfaceId"].(string)
				if id == "" {
					continue
				}
				if p.ToolRequest.Name == tools.DeleteSurface {
					ids = remove(ids, id)
				} else if !contains(ids, id) {
					ids = append(ids, id)
				}
			}
		}
	}
	return ids
}

func contains(ss []string, s string) bool {
	for _, e := range ss {
		if e == s {
			return true
		}
	}
	return false
}

func remove(ss []string, s string) []string {
	out := ss[:0]
	for _, e := range ss {
		if e != s {
			out = append(out, e)
		}
	}
	return out
}

func parseUIEvents(text string) ([]schemas.UIEvent, bool) {
	rest, ok := strings.CutPrefix(text, genui.UIEventsPreamble)
	if !ok {
		return nil, false
	}
	rest = strings.TrimSuffix(strings.TrimPrefix(rest, "```json\n"), "\n```")
	var evs []schemas.UIEvent
	if err := json.Unmarshal([]byte(rest), &evs); err != nil {
		return nil, false
	}
	return evs, true
}

// composeSurface lays out a message, a text field and a button with the catalog's own
// widgets, filling every required property.
func composeSurface(ws []catalog.Widget, message string) map[string]any {
	text := pickWidget(ws, func(w *catalog.Widget) int {
		score := 0
		if w.Name == "Text" {
			score += 100
		}
		if stringProp(w) != "" {
			score += 10
		}
		return score - len(w.Required)
	})
	container := pickWidget(ws, func(w *catalog.Widget) int {
		if !isIDList(w.Properties["children"]) {
			return -1000
		}
		if w.Name == "Column" {
			return 100
		}
		return 10 - len(w.Required)
	})
	button := pickWidget(ws, func(w *catalog.Widget) int {
		if !strings.Contains(strings.ToLower(w.Name), "button") {
			return -1000
		}
		return 10 - len(w.Required)
	})
	field := pickWidget(ws, func(w *catalog.Widget) int {
		n := strings.ToLower(w.Name)
		if !strings.Contains(n, "textfield") && !strings.Contains(n, "input") {
			return -1000
		}
		return 10 - len(w.Required)
	})
	var entries []any
	add := func(id string, w *catalog.Widget, props map[string]any) {
		entries = append(entries, map[string]any{"id": id, "widget": map[string]any{w.Name: fillRequired(w, props)}})
	}
	textProps := func(w *catalog.Widget, s string) map[string]any {
		if p := stringProp(w); p != "" {
			return map[string]any{p: s}
		}
		return map[string]any{}
	}
	if text == nil && container == nil {
		// A catalog without text or container: show its first widget.
		w := &ws[0]
		add("root", w, map[string]any{})
		return map[string]any{"root": "root", "widgets": entries}
	}
	if container == nil {
		add("root", text, textProps(text, message))
		return map[string]any{"root": "root", "widgets": entries}
	}
	children := []any{}
	if text != nil {
		children = append(children, "message")
		add("message", text, textProps(text, message))
	}
	if field != nil {
		children = append(children, "reply")
		props := map[string]any{}
		if _, ok := field.Properties["hintText"]; ok {
			props["hintText"] = "Type a reply"
		}
		// A field a screen reader can name, as the default UI policy asks.
		for _, l := range policy.InputLabels() {
			if _, ok := field.Properties[l]; ok {
				props[l] = "Reply"
				break
			}
		}
		add("reply", field, props)
	}
	if button != nil {
		children = append(children, "send")
		props := map[string]any{}
		if isIDProp(button.Properties["child"]) && text != nil {
			props["child"] = "send-label"
			add("send-label", text, textProps(text, "Send"))
		} else if p := stringProp(button); p != "" {
			props[p] = "Send"
		}
		add("send", button, props)
	}
	entries = append([]any{nil}, entries...)
	entries[0] = map[string]any{"id": "root", "widget": map[string]any{container.Name: fillRequired(container, map[string]any{"children": children})}}
	return map[string]any{"root": "root", "widgets": entries}
}

func pickWidget(ws []catalog.Widget, score func(*catalog.Widget) int) *catalog.Widget {
	best, bestScore := -1, -1<<31
	for i := range ws {
		if s := score(&ws[i]); s > bestScore && s > -1000 {
			best, bestScore = i, s
		}
	}
	if best < 0 {
		return nil
	}
	return &ws[best]
}

// stringProp names the widget's text-like string property.
func stringProp(w *catalog.Widget) string {
	for _, n := range []string{"text", "label", "title", "content", "value", "data"} {
		if p, ok := w.Properties[n]; ok && (p["type"] == "string" || p["type"] == nil) {
			return n
		}
	}
	return ""
}

func isIDList(s map[string]any) bool {
	if s == nil || s["type"] != "array" {
		return false
	}
	items, _ := s["items"].(map[string]any)
	return items == nil || items["type"] == "string"
}

func isIDProp(s map[string]any) bool { return s != nil && s["type"] == "string" }

// fillRequired returns props plus a value for every required property it lacks.
func fillRequired(w *catalog.Widget, props map[string]any) map[string]any {
	req := append([]string(nil), w.Required...)
	sort.Strings(req)
	for _, name := range req {
		if _, ok := props[name]; !ok {
			props[name] = zeroValue(w.Properties[name], 0)
		}
	}
	return props
}

// zeroValue returns a value valid against a simple property schema.
func zeroValue(s map[string]any, depth int) any {
	if s == nil || depth > 4 {
		return ""
	}
	if c, ok := s["const"]; ok {
		return c
	}
	if e, ok := s["enum"].([]any); ok && len(e) > 0 {
		return e[0]
	}
	if d, ok := s["default"]; ok {
		return d
	}
	for _, kw := range []string{"anyOf", "oneOf"} {
		if alts, ok := s[kw].([]any); ok && len(alts) > 0 {
			if m, ok := alts[0].(map[string]any); ok {
				return zeroValue(m, depth+1)
			}
		}
	}
	t := s["type"]
	if ts, ok := t.([]any); ok && len(ts) > 0 {
		t = ts[0]
	}
	switch t {
	case "number", "integer":
		if m, ok := s["minimum"].(float64); ok {
			return m
		}
		return 0
	case "boolean":
		return false
	case "null":
		return nil
	case "array":
		n, _ := s["minItems"].(float64)
		items, _ := s["items"].(map[string]any)
		arr := make([]any, int(n))
		for i := range arr {
			arr[i] = zeroValue(items, depth+1)
		}
		return arr
	case "object":
		out := map[string]any{}
		props, _ := s["properties"].(map[string]any)
		for _, r := range catalog.StringList(s["required"]) {
			p, _ := props[r].(map[string]any)
			out[r] = zeroValue(p, depth+1)
		}
		return out
	}
	return ""
}

type widgetsKey struct{}

// widgets returns the catalog's widgets as its schema declares them, once per catalog.
func widgets(c *catalog.Catalog) []catalog.Widget {
	return c.Memo(widgetsKey{}, func() any { return c.Widgets() }).([]catalog.Widget)
}
