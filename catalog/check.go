package catalog

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Violation is one problem found in a message of the model, located by a JSON pointer into
// that message.
type Violation struct {
	Pointer string `json:"pointer"`
	// Code names the kind of problem, where the check that found it names one (A2UI's
	// checks do: "schema", "duplicate_id", "cycle", …).
	Code    string `json:"code,omitempty"`
	Message string `json:"message"`
	// Expected is the schema (or list of choices) the value had to match.
	Expected any `json:"expected,omitempty"`
}

func (v Violation) String() string {
	s := v.Message
	if v.Pointer != "" {
		s = v.Pointer + ": " + s
	}
	if v.Code != "" {
		s += " [" + v.Code + "]"
	}
	return s
}

// Report is the outcome of checking one message of the model.
type Report struct {
	// Violations make the request invalid: it must not reach the client.
	Violations []Violation `json:"violations,omitempty"`
	// Warnings are worth logging but do not stop the request (unreachable widgets).
	Warnings []Violation `json:"warnings,omitempty"`
}

// OK reports whether the request may be sent to the client.
func (r *Report) OK() bool { return len(r.Violations) == 0 }

// Add records a violation at the JSON pointer ptr.
func (r *Report) Add(ptr, format string, args ...any) {
	r.Violations = append(r.Violations, Violation{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
}

// AddCode records a violation of the kind code at the JSON pointer ptr.
func (r *Report) AddCode(code, ptr, format string, args ...any) {
	r.Violations = append(r.Violations, Violation{Pointer: ptr, Code: code, Message: fmt.Sprintf(format, args...)})
}

// entry is what the checks learn about one widget entry of a definition.
type entry struct {
	index  int
	id     string
	widget *widget
	props  map[string]any
}

// CheckDefinition validates a surface definition against the catalog: its JSON Schema,
// one known widget per entry, unique ids, a root that names a widget, references that
// resolve and form no cycle. at is the JSON pointer of the definition within the message
// that carries it ("/definition" in an addOrUpdateSurface input); every reported pointer
// starts with it. Widgets the root does not reach are warnings.
func (c *Catalog) CheckDefinition(def any, at string) Report {
	var r Report
	c.checkDefinition(def, at, &r)
	return r
}

func (c *Catalog) checkDefinition(def any, at string, r *Report) {
	if c.A2UI != nil {
		r.Add(at, "the catalog is an A2UI catalog, which has no widget definitions")
		return
	}
	vd := validator{p: path{base: at, toks: make([]tok, 0, 16)}, out: &r.Violations}
	d, ok := def.(map[string]any)
	if !ok {
		r.Add(at, "must be an object {\"root\": <widget id>, \"widgets\": [...]}, got %s", JSONType(def))
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
				r.Add(at+"/widgets/"+strconv.Itoa(i), "must be an object {\"id\": …, \"widget\": {…}}, got %s", JSONType(w))
			}
			continue
		}
		vd.p.pushIdx(i)
		id, _ := wm["id"].(string)
		entries[i].index, entries[i].id = i, id
		if id != "" {
			if j, dup := ids[id]; dup {
				vd.p.pushKey("id")
				vd.fail(nil, "duplicate widget id %q (also used by %s/widgets/%d)", id, at, j)
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
	mergeGeneral(r, general, structural, at)
	root, _ := d["root"].(string)
	if root != "" && len(widgets) > 0 {
		if _, found := ids[root]; !found {
			r.Add(at+"/root", "root %q is not the id of any widget", root)
		}
	}
	c.checkReferences(entries, ids, root, at, r)
}

// checkWidget checks one widget value: an object with exactly one key, a widget of the
// catalog, whose properties match that widget's schema.
func (c *Catalog) checkWidget(vd *validator, v any) (*widget, map[string]any) {
	obj, ok := v.(map[string]any)
	if !ok {
		vd.fail(nil, "must be an object with exactly one key, the widget type (one of %s), got %s", c.WidgetNames(), JSONType(v))
		return nil, nil
	}
	if len(obj) != 1 {
		names := make([]string, 0, len(obj))
		for k := range obj {
			names = append(names, k)
		}
		sort.Strings(names)
		if len(names) == 0 {
			vd.fail(nil, "is empty; it must hold exactly one key, the widget type (one of %s)", c.WidgetNames())
		} else {
			vd.fail(nil, "has %d keys (%s); a widget entry holds exactly one widget type: put each widget in its own entry and refer to it by id", len(names), strings.Join(names, ", "))
		}
		return nil, nil
	}
	for name, props := range obj {
		w, ok := c.widget(name)
		if !ok {
			vd.p.pushKey(name)
			vd.fail(nil, "unknown widget %q; the catalog's widgets are %s", name, c.WidgetNames())
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

// WidgetNames lists the catalog's widgets, comma-separated, in name order.
func (c *Catalog) WidgetNames() string {
	return c.Memo(namesKey{}, func() any {
		names := make([]string, len(c.widgets))
		for i, w := range c.widgets {
			names[i] = w.name
		}
		return strings.Join(names, ", ")
	}).(string)
}

type namesKey struct{}

// checkReferences checks that every widget reference names a widget and that the
// references form no cycle, and warns about widgets the root does not reach.
func (c *Catalog) checkReferences(entries []entry, ids map[string]int, root, at string, r *Report) {
	rc := refChecker{entries: entries, ids: ids, state: make([]uint8, len(entries)), at: at, r: r}
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
			r.Warnings = append(r.Warnings, Violation{Pointer: at + "/widgets/" + strconv.Itoa(i), Message: fmt.Sprintf("widget %q is not reachable from root %q", e.id, root)})
		}
	}
}

type refChecker struct {
	entries []entry
	ids     map[string]int
	state   []uint8 // 0 new, 1 on the current path, 2 done
	stack   []int
	at      string
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
		rc.r.Add(refPointer(rc.at, e, prop, j), "%q is not the id of any widget", target)
	case rc.state[k] == 1:
		rc.r.Add(refPointer(rc.at, e, prop, j), "reference to %q creates a cycle (%s)", target, cycle(rc.entries, rc.stack, k))
	case rc.state[k] == 0:
		rc.visit(k)
	}
}

func refPointer(at string, e *entry, prop string, j int) string {
	p := at + "/widgets/" + strconv.Itoa(e.index) + "/widget/" + e.widget.name + "/" + prop
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

// JSONType names the JSON type of a decoded value, for messages.
func JSONType(v any) string {
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
func mergeGeneral(r *Report, general []Violation, structural int, at string) {
	explained := map[string]bool{}
	for _, v := range r.Violations[structural:] {
		if e := widgetEntry(v.Pointer, at); e != "" {
			explained[e] = true
		}
	}
	for _, v := range general {
		v.Pointer = at + v.Pointer
		if e := widgetEntry(v.Pointer, at); e != "" && explained[e] {
			continue
		}
		r.Violations = append(r.Violations, v)
	}
}

// widgetEntry returns "<at>/widgets/N" for a pointer inside the widget value of entry N,
// else "".
func widgetEntry(ptr, at string) string {
	rest, ok := strings.CutPrefix(ptr, at+"/widgets/")
	if !ok {
		return ""
	}
	n, after, _ := strings.Cut(rest, "/")
	if after != "widget" && !strings.HasPrefix(after, "widget/") {
		return ""
	}
	return at + "/widgets/" + n
}
