package a2ui_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
)

// The streaming cases (agent/streaming_parser.yaml, process_chunk) feed a response to the
// parser in steps, verbatim, and list what each step yields. This package streams at
// another grain than the Python SDK (a component once its JSON object closes, a parent
// once the children it shows exist, no placeholder components, no strings cut short), so
// the steps are compared by what a renderer shows (see CONFORMANCE.md):
//
//   - the prose of each step is the same, byte for byte;
//   - after each step, what the renderer shows from this package's messages is part of
//     what it shows from the expected ones (never something they do not show);
//   - after the last step, the renderer shows the same: the same surfaces, the same
//     component tree from each root, the same data model;
//   - an expected error is a violation of the same kind; no expected error, no violation.

// renderer is what a client holds of the messages it received, for comparison.
type renderer struct {
	version  string
	cat      *catalog.A2UI
	surfaces map[string]*rsurface
}

type rsurface struct {
	begun bool // v0.8: beginRendering came; v0.9 surfaces render from "root" at once
	root  string
	comps map[string]map[string]any
	data  any
}

func newRenderer(c *catalog.Catalog) *renderer {
	return &renderer{version: c.A2UI.Version, cat: c.A2UI, surfaces: map[string]*rsurface{}}
}

func (r *renderer) surface(id string) *rsurface {
	s := r.surfaces[id]
	if s == nil {
		s = &rsurface{comps: map[string]map[string]any{}, data: map[string]any{}}
		if r.version == a2ui.V09 {
			s.begun, s.root = true, "root"
		}
		r.surfaces[id] = s
	}
	return s
}

func (r *renderer) apply(raw []byte) {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return
	}
	for op, b := range m {
		body := asMap(b)
		sid, _ := body["surfaceId"].(string)
		if op == "version" || sid == "" {
			continue
		}
		switch op {
		case a2ui.DeleteSurface:
			delete(r.surfaces, sid)
		case a2ui.CreateSurface:
			r.surface(sid)
		case a2ui.BeginRendering:
			s := r.surface(sid)
			s.begun = true
			s.root, _ = body["root"].(string)
		case a2ui.UpdateComponents, a2ui.SurfaceUpdate:
			s := r.surface(sid)
			for _, c := range asList(body["components"]) {
				cm := asMap(c)
				if id, ok := cm["id"].(string); ok {
					s.comps[id] = cm
				}
			}
		case a2ui.UpdateDataModel:
			s := r.surface(sid)
			path, _ := body["path"].(string)
			s.data = setAt(s.data, path, body["value"])
		case a2ui.DataModelUpdate:
			s := r.surface(sid)
			path, _ := body["path"].(string)
			s.data = setAt(s.data, path, contents08(asList(body["contents"])))
		}
	}
}

// contents08 turns v0.8 data-model entries into the value they stand for.
func contents08(entries []any) map[string]any {
	out := map[string]any{}
	for _, e := range entries {
		em := asMap(e)
		k, _ := em["key"].(string)
		for f, v := range em {
			switch f {
			case "valueString", "valueNumber", "valueBoolean":
				out[k] = v
			case "valueMap":
				out[k] = contents08(asList(v))
			}
		}
	}
	return out
}

// setAt sets v at the JSON Pointer path of data (the whole data model for "" and "/"),
// merging objects.
func setAt(data any, path string, v any) any {
	toks := strings.Split(strings.Trim(path, "/"), "/")
	if strings.Trim(path, "/") == "" {
		toks = nil
	}
	var set func(cur any, toks []string) any
	set = func(cur any, toks []string) any {
		if len(toks) == 0 {
			if cm, vm := asMap(cur), asMap(v); cm != nil && vm != nil {
				out := map[string]any{}
				for k, x := range cm {
					out[k] = x
				}
				for k, x := range vm {
					out[k] = x
				}
				return out
			}
			return v
		}
		m := map[string]any{}
		for k, x := range asMap(cur) {
			m[k] = x
		}
		m[toks[0]] = set(m[toks[0]], toks[1:])
		return m
	}
	return set(data, toks)
}

// view is what the renderer shows: each surface that renders, its tree from the root
// (a reference to a component the surface lacks, or to a placeholder "loading_…" the
// Python SDK makes up, shows nothing), and its data model.
func (r *renderer) view() map[string]any {
	out := map[string]any{}
	for id, s := range r.surfaces {
		if !s.begun {
			continue
		}
		tree := r.node(s, s.root, 0)
		if tree == nil && len(asMap(s.data)) == 0 {
			continue // a surface that shows nothing yet
		}
		out[id] = map[string]any{"tree": tree, "data": s.data}
	}
	return out
}

func (r *renderer) node(s *rsurface, id string, depth int) any {
	c := s.comps[id]
	if c == nil || strings.HasPrefix(id, "loading_") || depth > 60 {
		return nil
	}
	var typ string
	props := map[string]any{}
	if r.version == a2ui.V09 {
		typ, _ = c["component"].(string)
		for k, v := range c {
			if k != "id" && k != "component" {
				props[k] = v
			}
		}
	} else {
		for t, p := range asMap(c["component"]) {
			typ, props = t, asMap(p)
		}
		if w, ok := c["weight"]; ok {
			props = withKey(props, "weight", w)
		}
	}
	def, _ := r.cat.Component(typ)
	shown := map[string]any{}
	for k, v := range props {
		shown[k] = v
	}
	if def != nil {
		for _, ref := range def.Refs {
			v, ok := props[ref.Prop]
			if !ok {
				continue
			}
			shown[ref.Prop] = r.refs(s, ref, v, depth)
		}
	}
	return map[string]any{"id": id, "type": typ, "props": shown}
}

func withKey(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for x, y := range m {
		out[x] = y
	}
	return out
}

// refs shows a reference property: its ids replaced by the components they show.
func (r *renderer) refs(s *rsurface, ref catalog.Ref, v any, depth int) any {
	list := func(l []any) []any {
		out := []any{}
		for _, e := range l {
			if id, _ := e.(string); id != "" {
				if n := r.node(s, id, depth+1); n != nil {
					out = append(out, n)
				}
			}
		}
		return out
	}
	switch ref.Kind {
	case catalog.RefOne:
		id, _ := v.(string)
		return map[string]any{"child": r.node(s, id, depth+1)}
	case catalog.RefItems:
		out := []any{}
		for _, it := range asList(v) {
			im := withKey(asMap(it), ref.Field, nil)
			id, _ := asMap(it)[ref.Field].(string)
			im[ref.Field] = r.node(s, id, depth+1)
			out = append(out, im)
		}
		return out
	}
	if l, ok := v.([]any); ok {
		return map[string]any{"children": list(l)}
	}
	m := asMap(v)
	if l, ok := m["explicitList"].([]any); ok {
		return map[string]any{"children": list(l)}
	}
	tpl := m
	if t := asMap(m["template"]); t != nil {
		tpl = t
	}
	id, _ := tpl["componentId"].(string)
	out := map[string]any{"template": r.node(s, id, depth+1)}
	for k, x := range tpl {
		if k != "componentId" {
			out[k] = x
		}
	}
	return out
}

// within reports whether what a shows is part of what b shows: the same values, but
// child lists a sub-sequence of b's, a child or template absent where b has one, objects
// (surfaces, data) with keys b has.
func within(a, b any) bool {
	switch at := a.(type) {
	case nil:
		return true
	case map[string]any:
		bt, ok := b.(map[string]any)
		if !ok {
			return false
		}
		if at["type"] != nil && at["id"] != nil { // a component: the same, its references within
			if at["id"] != bt["id"] || at["type"] != bt["type"] {
				return false
			}
			ap, bp := asMap(at["props"]), asMap(bt["props"])
			if len(ap) != len(bp) {
				return false
			}
			for k, v := range ap {
				if !within(v, bp[k]) {
					return false
				}
			}
			return true
		}
		if kids, ok := at["children"].([]any); ok && len(at) == 1 {
			bk, _ := bt["children"].([]any)
			j := 0
			for _, k := range kids {
				for j < len(bk) && !within(k, bk[j]) {
					j++
				}
				if j == len(bk) {
					return false
				}
				j++
			}
			return true
		}
		for k, v := range at {
			if _, ok := bt[k]; !ok || !within(v, bt[k]) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// runStream runs a process_chunk case. The steps are a response so far, not a whole
// one: the response ends only at an expected error, where the case ends.
func runStream(c a2uitest.Case) string {
	cat, err := caseCatalog(asMap(c["catalog"]))
	if err != nil {
		return "catalog does not compile: " + err.Error()
	}
	p, b := a2ui.NewParser(), a2ui.NewBuilder(cat)
	ours, theirs := newRenderer(cat), newRenderer(cat)
	for i, st := range steps(c) {
		input, _ := st["input"].(string)
		var text strings.Builder
		for _, sg := range p.Push(input) {
			if sg.Kind == a2ui.SegmentText {
				text.WriteString(sg.Text)
			}
			b.Add(sg)
		}
		if want := readExpectation(orElse(st["expect_error"], c["expect_error"])); want != nil {
			for _, sg := range p.Close() {
				b.Add(sg)
			}
			_, vs := b.End()
			if got := a2ui.Violations(vs); !want.matches(got) {
				return fmt.Sprintf("step %d: expected %q (%v), got %s", i, want.text, want.codes, describeViolations(got))
			}
			return ""
		}
		for _, m := range b.Flush() {
			ours.apply(m)
		}
		var wantText strings.Builder
		for _, part := range asList(st["expect"]) {
			pm := asMap(part)
			t, _ := pm["text"].(string)
			wantText.WriteString(t)
			for _, m := range asList(pm["a2ui"]) {
				raw, _ := json.Marshal(m)
				theirs.apply(raw)
			}
		}
		if text.String() != wantText.String() {
			return fmt.Sprintf("step %d: prose %q, expected %q", i, text.String(), wantText.String())
		}
		if !within(ours.view(), theirs.view()) {
			return fmt.Sprintf("step %d: shows %s, which is not part of what is expected: %s", i, js(ours.view()), js(theirs.view()))
		}
	}
	if !reflect.DeepEqual(ours.view(), theirs.view()) {
		return fmt.Sprintf("after the last step shows %s, expected %s", js(ours.view()), js(theirs.view()))
	}
	return ""
}

func orElse(a, b any) any {
	if a != nil {
		return a
	}
	return b
}

func js(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 600 {
		return string(b[:600]) + "…"
	}
	return string(b)
}
