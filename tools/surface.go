package tools

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/genuiserver/genui/schemas"
)

// Violation is one problem found in a tool request, located by a JSON pointer into the
// request's input.
type Violation struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
	// Expected is the schema (or list of choices) the value had to match.
	Expected any `json:"expected,omitempty"`
}

func (v Violation) String() string {
	if v.Pointer == "" {
		return v.Message
	}
	return v.Pointer + ": " + v.Message
}

// Descriptions of the UI tools, as the model sees them.
const (
	AddOrUpdateSurfaceDescription = "Shows a new UI surface or replaces an existing one. The definition MUST conform to the widget catalog schema."
	DeleteSurfaceDescription      = "Removes a UI surface the client shows."
)

type memoKey int

const (
	memoToolSchema memoKey = iota
)

// AddOrUpdateSurfaceSchema returns the input schema of the addOrUpdateSurface tool for
// this catalog: {surfaceId, definition} where definition is the catalog itself. The
// catalog's $defs/definitions move to the top so that its local references still resolve.
func (c *Catalog) AddOrUpdateSurfaceSchema() map[string]any {
	return c.Memo(memoToolSchema, func() any {
		var def map[string]any
		_ = json.Unmarshal(c.Canonical, &def) // a private copy to rewrite
		out := map[string]any{
			"type": "object",
			"properties": map[string]any{
				"surfaceId":  map[string]any{"type": "string", "description": "The id of the surface to show or replace."},
				"definition": def,
			},
			"required": []any{"surfaceId", "definition"},
		}
		for _, k := range []string{"$defs", "definitions"} {
			if d, ok := def[k]; ok {
				out[k] = d
				delete(def, k)
			}
		}
		delete(def, "$schema")
		delete(def, "$id")
		rewriteRefs(def)
		return out
	}).(map[string]any)
}

// rewriteRefs points local references that do not go through $defs/definitions at the
// definition's new place inside the tool schema.
func rewriteRefs(v any) {
	switch t := v.(type) {
	case map[string]any:
		if ref, ok := t["$ref"].(string); ok && strings.HasPrefix(ref, "#") &&
			!strings.HasPrefix(ref, "#/$defs/") && !strings.HasPrefix(ref, "#/definitions/") {
			t["$ref"] = "#/properties/definition" + strings.TrimPrefix(ref, "#")
		}
		for _, e := range t {
			rewriteRefs(e)
		}
	case []any:
		for _, e := range t {
			rewriteRefs(e)
		}
	}
}

// SimplifiedSurfaceSchema is the addOrUpdateSurface input schema for providers that cannot
// serve the catalog itself as a tool schema: the definition's shape without the widget
// schemas, which the system prompt carries instead.
func (c *Catalog) SimplifiedSurfaceSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"surfaceId": map[string]any{"type": "string", "description": "The id of the surface to show or replace."},
			"definition": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"root": map[string]any{"type": "string", "description": "The id of the root widget."},
					"widgets": map[string]any{"type": "array", "items": map[string]any{
						"type": "object",
						"properties": map[string]any{
							"id": map[string]any{"type": "string"},
							"widget": map[string]any{"type": "object", "description": "Exactly one key, the widget type (one of " +
								c.widgetNames() + "), whose value holds the widget's properties as the catalog in the system prompt defines them."},
						},
						"required": []any{"id", "widget"},
					}},
				},
				"required": []any{"root", "widgets"},
			},
		},
		"required": []any{"surfaceId", "definition"},
	}
}

// DeleteSurfaceSchema is the input schema of the deleteSurface tool.
func DeleteSurfaceSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"surfaceId": map[string]any{"type": "string", "description": "The id of the surface to remove."},
		},
		"required": []any{"surfaceId"},
	}
}

// Report is the outcome of checking one tool request.
type Report struct {
	// Violations make the request invalid: it must not reach the client.
	Violations []Violation `json:"violations,omitempty"`
	// Warnings are worth logging but do not stop the request (unreachable widgets).
	Warnings []Violation `json:"warnings,omitempty"`
}

// OK reports whether the request may be sent to the client.
func (r *Report) OK() bool { return len(r.Violations) == 0 }

func (r *Report) add(ptr, format string, args ...any) {
	r.Violations = append(r.Violations, Violation{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
}

// Check validates a tool request of the model against the catalog.
func (c *Catalog) Check(name string, input any) Report {
	var r Report
	in, ok := input.(map[string]any)
	if !ok {
		r.add("", "input must be an object, got %s", jsonType(input))
		return r
	}
	switch name {
	case schemas.ToolAddOrUpdateSurface, schemas.ToolDeleteSurface:
	default:
		r.add("", "unknown tool %q; use %s or %s", name, schemas.ToolAddOrUpdateSurface, schemas.ToolDeleteSurface)
		return r
	}
	sid, ok := in["surfaceId"].(string)
	switch {
	case in["surfaceId"] == nil:
		r.add("/surfaceId", "required property is missing")
	case !ok:
		r.add("/surfaceId", "must be a string, got %s", jsonType(in["surfaceId"]))
	case sid == "":
		r.add("/surfaceId", "must not be empty")
	}
	if name == schemas.ToolDeleteSurface {
		for k := range in {
			if k != "surfaceId" {
				r.add("/"+k, "deleteSurface takes only surfaceId")
			}
		}
		return r
	}
	def, present := in["definition"]
	if !present {
		r.add("/definition", "required property is missing")
		return r
	}
	c.checkDefinition(def, &r)
	return r
}

// entry is what the checks learn about one widget entry of a definition.
type entry struct {
	index  int
	id     string
	widget *Widget
	props  map[string]any
}

func (c *Catalog) checkDefinition(def any, r *Report) {
	vd := validator{p: path{toks: make([]tok, 0, 16)}, out: &r.Violations}
	vd.p.pushKey("definition")
	d, ok := def.(map[string]any)
	if !ok {
		r.add("/definition", "must be an object {\"root\": <widget id>, \"widgets\": [...]}, got %s", jsonType(def))
		return
	}
	var general []Violation
	if c.top != nil {
		vd.validate(c.top, d)
	} else if err := c.compiled.Validate(def); err != nil {
		if ve, ok := err.(*jsonschema.ValidationError); ok {
			general = flatten(ve)
		} else {
			general = []Violation{{Message: err.Error()}}
		}
	}
	structural := len(r.Violations)
	widgets, _ := d["widgets"].([]any)
	entries := make([]entry, len(widgets))
	ids := make(map[string]int, len(widgets))
	vd.p.pushKey("widgets")
	for i, w := range widgets {
		wm, _ := w.(map[string]any)
		if wm == nil {
			if c.top == nil {
				r.add("/definition/widgets/"+strconv.Itoa(i), "must be an object {\"id\": …, \"widget\": {…}}, got %s", jsonType(w))
			}
			continue
		}
		vd.p.pushIdx(i)
		id, _ := wm["id"].(string)
		entries[i].index, entries[i].id = i, id
		if id != "" {
			if j, dup := ids[id]; dup {
				vd.p.pushKey("id")
				vd.fail(nil, "duplicate widget id %q (also used by /definition/widgets/%d)", id, j)
				vd.p.pop()
			} else {
				ids[id] = i
			}
		}
		if wv, ok := wm["widget"]; ok {
			vd.p.pushKey("widget")
			entries[i].widget, entries[i].props = c.checkWidget(&vd, wv)
			vd.p.pop()
		}
		vd.p.pop()
	}
	vd.p.pop()
	mergeGeneral(r, general, structural)
	root, _ := d["root"].(string)
	if root != "" && len(widgets) > 0 {
		if _, found := ids[root]; !found {
			r.add("/definition/root", "root %q is not the id of any widget", root)
		}
	}
	c.checkReferences(entries, ids, root, r)
}

// checkWidget checks one widget value: an object with exactly one key, a widget of the
// catalog, whose properties match that widget's schema.
func (c *Catalog) checkWidget(vd *validator, v any) (*Widget, map[string]any) {
	obj, ok := v.(map[string]any)
	if !ok {
		vd.fail(nil, "must be an object with exactly one key, the widget type (one of %s), got %s", c.widgetNames(), jsonType(v))
		return nil, nil
	}
	if len(obj) != 1 {
		names := make([]string, 0, len(obj))
		for k := range obj {
			names = append(names, k)
		}
		sort.Strings(names)
		if len(names) == 0 {
			vd.fail(nil, "is empty; it must hold exactly one key, the widget type (one of %s)", c.widgetNames())
		} else {
			vd.fail(nil, "has %d keys (%s); a widget entry holds exactly one widget type: put each widget in its own entry and refer to it by id", len(names), strings.Join(names, ", "))
		}
		return nil, nil
	}
	for name, props := range obj {
		w, ok := c.Widget(name)
		if !ok {
			vd.p.pushKey(name)
			vd.fail(nil, "unknown widget %q; the catalog's widgets are %s", name, c.widgetNames())
			vd.p.pop()
			return nil, nil
		}
		if w.node != nil {
			vd.validate(w.node, obj)
		}
		pm, _ := props.(map[string]any)
		return w, pm
	}
	return nil, nil
}

func (c *Catalog) widgetNames() string {
	return c.Memo(namesKey{}, func() any {
		names := make([]string, len(c.Widgets))
		for i, w := range c.Widgets {
			names[i] = w.Name
		}
		return strings.Join(names, ", ")
	}).(string)
}

type namesKey struct{}

// checkReferences checks that every widget reference names a widget and that the
// references form no cycle, and warns about widgets the root does not reach.
func (c *Catalog) checkReferences(entries []entry, ids map[string]int, root string, r *Report) {
	rc := refChecker{entries: entries, ids: ids, state: make([]uint8, len(entries)), r: r}
	rootIdx, rootOK := ids[root]
	if rootOK {
		rc.visit(rootIdx)
	}
	var reachable []bool
	for i := range entries {
		if rc.state[i] == 0 {
			if reachable == nil {
				reachable = make([]bool, len(entries))
				for j, s := range rc.state {
					reachable[j] = s == 2
				}
			}
			rc.visit(i)
		}
	}
	if !rootOK || reachable == nil {
		return
	}
	for i, e := range entries {
		if !reachable[i] && e.id != "" {
			r.Warnings = append(r.Warnings, Violation{Pointer: "/definition/widgets/" + strconv.Itoa(i), Message: fmt.Sprintf("widget %q is not reachable from root %q", e.id, root)})
		}
	}
}

type refChecker struct {
	entries []entry
	ids     map[string]int
	state   []uint8 // 0 new, 1 on the current path, 2 done
	stack   []int
	r       *Report
}

func (rc *refChecker) visit(i int) {
	rc.state[i] = 1
	rc.stack = append(rc.stack, i)
	e := &rc.entries[i]
	if e.widget != nil {
		for _, ref := range e.widget.refs {
			switch t := e.props[ref.name].(type) {
			case string:
				if t != "" {
					rc.follow(e, ref.name, -1, t)
				}
			case []any:
				for j, x := range t {
					if s, ok := x.(string); ok {
						rc.follow(e, ref.name, j, s)
					}
				}
			}
		}
	}
	rc.stack = rc.stack[:len(rc.stack)-1]
	rc.state[i] = 2
}

func (rc *refChecker) follow(e *entry, prop string, j int, target string) {
	k, ok := rc.ids[target]
	switch {
	case !ok:
		rc.r.add(refPointer(e, prop, j), "%q is not the id of any widget", target)
	case rc.state[k] == 1:
		rc.r.add(refPointer(e, prop, j), "reference to %q creates a cycle (%s)", target, cycle(rc.entries, rc.stack, k))
	case rc.state[k] == 0:
		rc.visit(k)
	}
}

func refPointer(e *entry, prop string, j int) string {
	p := "/definition/widgets/" + strconv.Itoa(e.index) + "/widget/" + e.widget.Name + "/" + prop
	if j >= 0 {
		p += "/" + strconv.Itoa(j)
	}
	return p
}

func cycle(entries []entry, stack []int, to int) string {
	var parts []string
	for i := len(stack) - 1; i >= 0; i-- {
		parts = append([]string{entries[stack[i]].id}, parts...)
		if stack[i] == to {
			break
		}
	}
	return strings.Join(append(parts, entries[to].id), " → ")
}

// flatten turns a validation error tree into its leaf messages, one per location.
func flatten(ve *jsonschema.ValidationError) []Violation {
	out := ve.BasicOutput()
	var vs []Violation
	seen := map[string]bool{}
	for _, u := range out.Errors {
		if u.Error == nil {
			continue
		}
		msg := u.Error.String()
		if strings.HasPrefix(msg, "validation failed") || strings.Contains(msg, "doesn't validate with") {
			continue
		}
		key := u.InstanceLocation + "\x00" + msg
		if seen[key] {
			continue
		}
		seen[key] = true
		vs = append(vs, Violation{Pointer: u.InstanceLocation, Message: msg})
	}
	if len(vs) == 0 && out.Error != nil {
		vs = append(vs, Violation{Pointer: out.InstanceLocation, Message: out.Error.String()})
	}
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].Pointer < vs[j].Pointer })
	return vs
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64, json.Number, int, int64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return strconv.Quote(fmt.Sprintf("%T", v))
}

// mergeGeneral adds the general validator's violations, except those inside widget entries
// that the precise checks (from index structural on) already explained.
func mergeGeneral(r *Report, general []Violation, structural int) {
	explained := map[string]bool{}
	for _, v := range r.Violations[structural:] {
		if e := widgetEntry(v.Pointer); e != "" {
			explained[e] = true
		}
	}
	for _, v := range general {
		v.Pointer = "/definition" + v.Pointer
		if e := widgetEntry(v.Pointer); e != "" && explained[e] {
			continue
		}
		r.Violations = append(r.Violations, v)
	}
}

// widgetEntry returns "/definition/widgets/N" for a pointer inside the widget value of
// entry N, else "".
func widgetEntry(ptr string) string {
	rest, ok := strings.CutPrefix(ptr, "/definition/widgets/")
	if !ok {
		return ""
	}
	n, after, _ := strings.Cut(rest, "/")
	if after != "widget" && !strings.HasPrefix(after, "widget/") {
		return ""
	}
	return "/definition/widgets/" + n
}
