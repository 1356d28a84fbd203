package offline

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/catalog"
)

// respondA2UI is the offline model's answer in an A2UI turn: text, then A2UI messages in
// an ```a2ui block, one line each, as a model writes them. A new message from the user
// gets a new surface (a title, what the user said, a text field and a button whose action
// sends the field); an action updates the surface it came from; "delete", "remove" or
// "close" deletes the newest surface.
func respondA2UI(c *catalog.Catalog, cts []clientTool, messages []*ai.Message) []*ai.Part {
	last := lastMessage(messages)
	results := ""
	if last != nil && last.Role == ai.RoleTool {
		results = clientResults(last)
	}
	if last == nil || (last.Role != ai.RoleUser && results == "") {
		return []*ai.Part{ai.NewTextPart("Nothing to answer.")}
	}
	userText := ""
	for _, p := range last.Content {
		if p.IsText() {
			userText += p.Text + "\n"
		}
	}
	k := kitFor(c.A2UI)
	if k == nil {
		return []*ai.Part{ai.NewTextPart("The offline model composes surfaces from Text, Column, TextField and Button components; this catalog lacks some of them.")}
	}
	surfaces := a2uiSurfaces(c.A2UI.Version, messages[:len(messages)-1])
	if strings.HasPrefix(userText, "Some of your A2UI messages broke") {
		return []*ai.Part{ai.NewTextPart("Done.")}
	}
	var lines []string
	var then []*ai.Part // calls after the surface
	text := ""
	act := parseAction(userText)
	named := nextCalls(cts, messages)
	switch {
	case results != "":
		text = "Here is what the client returned."
		lines = k.newSurface(freeSurfaceID("surface-"+strconv.Itoa(countUserTurns(messages)), surfaces), clip(results, 500))
		if len(named) > 0 {
			then = callsOf("Next, calling", named)
		}
	case len(named) > 0 && act == nil:
		return callsOf("Calling", named)
	case act != nil && contains(surfaces, act.surface):
		text = "Updated the surface with your input."
		lines = k.actionUpdate(act)
	case len(surfaces) > 0 && deleteWords.MatchString(userText):
		id := surfaces[len(surfaces)-1]
		text = "Removed the surface " + strconv.Quote(id) + "."
		lines = []string{k.msg(a2ui.DeleteSurface, map[string]any{"surfaceId": id})}
	default:
		said := strings.TrimSpace(userText)
		if act != nil {
			said = fmt.Sprintf("the action %q", act.name)
		}
		if said == "" {
			said = "(no text)"
		}
		text = "Here is a surface for your message."
		lines = k.newSurface("surface-"+strconv.Itoa(countUserTurns(messages)), "You said: "+clip(said, 200))
	}
	parts := []*ai.Part{ai.NewTextPart(text + "\n```a2ui\n")}
	for _, l := range lines {
		parts = append(parts, ai.NewTextPart(l+"\n"))
	}
	return append(append(parts, ai.NewTextPart("```\n")), then...)
}

var deleteWords = regexp.MustCompile(`(?i)\b(delete|remove|close)\b`)

// freeSurfaceID returns id, or id with a suffix when the conversation shows a surface id.
func freeSurfaceID(id string, surfaces []string) string {
	for n, try := 2, id; ; n++ {
		if !contains(surfaces, try) {
			return try
		}
		try = id + "-" + strconv.Itoa(n)
	}
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// a2uiSurfaces lists the surfaces the conversation shows, oldest first, reading the A2UI
// blocks of the model's messages.
func a2uiSurfaces(version string, ms []*ai.Message) []string {
	var ids []string
	for _, m := range ms {
		if m.Role != ai.RoleModel {
			continue
		}
		p := a2ui.NewParser()
		var segs []a2ui.Segment
		for _, part := range m.Content {
			if part.IsText() {
				segs = append(segs, p.Push(part.Text)...)
			}
		}
		segs = append(segs, p.Close()...)
		for _, s := range segs {
			if s.Kind != a2ui.SegmentMessage {
				continue
			}
			msg, err := a2ui.DecodeMessage(version, s.Raw)
			if err != nil {
				continue
			}
			if msg.Op == a2ui.DeleteSurface {
				ids = remove(ids, msg.SurfaceID)
			} else if !contains(ids, msg.SurfaceID) {
				ids = append(ids, msg.SurfaceID)
			}
		}
	}
	return ids
}

type action struct {
	name, surface string
	context       string
}

var actionRE = regexp.MustCompile(`The user triggered the action "((?:[^"\\]|\\.)*)" on surface "((?:[^"\\]|\\.)*)"`)

// parseAction reads the action a user message describes (see a2ui.ClientMessage.Describe).
func parseAction(text string) *action {
	m := actionRE.FindStringSubmatch(text)
	if m == nil {
		return nil
	}
	a := &action{}
	a.name, _ = strconv.Unquote(`"` + m[1] + `"`)
	a.surface, _ = strconv.Unquote(`"` + m[2] + `"`)
	if i := strings.Index(text, "```json\n"); i >= 0 {
		rest := text[i+len("```json\n"):]
		if j := strings.Index(rest, "\n```"); j >= 0 {
			a.context = rest[:j]
		}
	}
	return a
}

// kit writes surfaces with the components of one catalog.
type kit struct {
	version   string
	catalogID string
	hasCard   bool // the catalog has Card
	variants  bool // Text and Button have a variant (v0.9)
}

func kitFor(c *catalog.A2UI) *kit {
	for _, n := range []string{"Text", "Column", "TextField", "Button"} {
		if _, ok := c.Component(n); !ok {
			return nil
		}
	}
	_, card := c.Component("Card")
	has := func(comp, prop string) bool {
		d, _ := c.Component(comp)
		for _, p := range d.Props {
			if p == prop {
				return true
			}
		}
		return false
	}
	variants := c.Version == a2ui.V08 || (has("Text", "variant") && has("Button", "variant"))
	return &kit{version: c.Version, catalogID: c.ID, hasCard: card, variants: variants}
}

func (k *kit) msg(op string, body map[string]any) string {
	b, _ := json.Marshal(map[string]any{op: body})
	return string(b)
}

func (k *kit) line(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// text, column, field and button return one component of each kind, as the version
// writes it.
func (k *kit) text(id, s, variant string) string {
	if k.version == a2ui.V08 {
		p := map[string]any{"text": map[string]any{"literalString": s}}
		if variant != "" {
			p["usageHint"] = variant
		}
		return k.line(map[string]any{"id": id, "component": map[string]any{"Text": p}})
	}
	c := map[string]any{"id": id, "component": "Text", "text": s}
	if variant != "" && k.variants {
		c["variant"] = variant
	}
	return k.line(c)
}

func (k *kit) column(id string, children ...string) string {
	if k.version == a2ui.V08 {
		return k.line(map[string]any{"id": id, "component": map[string]any{"Column": map[string]any{"children": map[string]any{"explicitList": children}}}})
	}
	return k.line(map[string]any{"id": id, "component": "Column", "children": children})
}

func (k *kit) card(id, child string) string {
	if k.version == a2ui.V08 {
		return k.line(map[string]any{"id": id, "component": map[string]any{"Card": map[string]any{"child": child}}})
	}
	return k.line(map[string]any{"id": id, "component": "Card", "child": child})
}

func (k *kit) field(id, label, path string) string {
	if k.version == a2ui.V08 {
		return k.line(map[string]any{"id": id, "component": map[string]any{"TextField": map[string]any{
			"label": map[string]any{"literalString": label}, "text": map[string]any{"path": path}}}})
	}
	return k.line(map[string]any{"id": id, "component": "TextField", "label": label, "value": map[string]any{"path": path}})
}

func (k *kit) button(id, child, name, key, path string) string {
	if k.version == a2ui.V08 {
		return k.line(map[string]any{"id": id, "component": map[string]any{"Button": map[string]any{"child": child, "primary": true,
			"action": map[string]any{"name": name, "context": []any{map[string]any{"key": key, "value": map[string]any{"path": path}}}}}}})
	}
	b := map[string]any{"id": id, "component": "Button", "child": child,
		"action": map[string]any{"event": map[string]any{"name": name, "context": map[string]any{key: map[string]any{"path": path}}}}}
	if k.variants {
		b["variant"] = "primary"
	}
	return k.line(b)
}

// newSurface writes a new surface: top-down, the root first.
func (k *kit) newSurface(id, message string) []string {
	var out []string
	if k.version == a2ui.V08 {
		out = append(out, k.msg(a2ui.BeginRendering, map[string]any{"surfaceId": id, "root": "root"}))
	} else {
		out = append(out,
			k.msg(a2ui.CreateSurface, map[string]any{"surfaceId": id, "catalogId": k.catalogID}),
			k.msg(a2ui.UpdateDataModel, map[string]any{"surfaceId": id, "path": "/form", "value": map[string]any{"reply": ""}}))
	}
	body := []string{"title", "message", "reply", "send"}
	comps := []string{}
	if k.hasCard {
		comps = append(comps, k.column("root", "title", "card"), k.text("title", "Offline reply", "h3"),
			k.card("card", "body"), k.column("body", "message", "reply", "send"))
	} else {
		comps = append(comps, k.column("root", body...), k.text("title", "Offline reply", "h3"))
	}
	comps = append(comps,
		k.text("message", message, ""),
		k.field("reply", "Reply", "/form/reply"),
		k.button("send", "send-label", "send", "reply", "/form/reply"),
		k.text("send-label", "Send", ""))
	op := a2ui.UpdateComponents
	if k.version == a2ui.V08 {
		op = a2ui.SurfaceUpdate
	}
	out = append(out, fmt.Sprintf(`{%q:{"surfaceId":%q,"components":[`, op, id))
	for i, c := range comps {
		if i < len(comps)-1 {
			c += ","
		}
		out = append(out, c)
	}
	out = append(out, "]}}")
	if k.version == a2ui.V08 {
		out = append(out, k.msg(a2ui.DataModelUpdate, map[string]any{"surfaceId": id, "path": "/form",
			"contents": []any{map[string]any{"key": "reply", "valueString": ""}}}))
	}
	return out
}

// actionUpdate answers an action: the surface's message says what was sent, and the
// field is cleared.
func (k *kit) actionUpdate(a *action) []string {
	said := fmt.Sprintf("You sent %q.", a.name)
	if a.context != "" {
		said = fmt.Sprintf("You sent %q with %s.", a.name, clip(a.context, 300))
	}
	op := a2ui.UpdateComponents
	if k.version == a2ui.V08 {
		op = a2ui.SurfaceUpdate
	}
	out := []string{fmt.Sprintf(`{%q:{"surfaceId":%q,"components":[%s]}}`, op, a.surface, k.text("message", said, ""))}
	if k.version == a2ui.V08 {
		return append(out, k.msg(a2ui.DataModelUpdate, map[string]any{"surfaceId": a.surface, "path": "/form",
			"contents": []any{map[string]any{"key": "reply", "valueString": ""}}}))
	}
	return append(out, k.msg(a2ui.UpdateDataModel, map[string]any{"surfaceId": a.surface, "path": "/form/reply", "value": ""}))
}
