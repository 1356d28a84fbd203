package policy

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/genuiserver/genui/catalog"
)

// widgetRules is what the policy checks of one widget type of a genui catalog.
type widgetRules struct {
	urls   []Place
	image  []string // the description properties it declares, when an image
	input  []string // the label properties it declares, when an input
	button bool     // a button whose child must show text
	refs   []string // properties holding widget ids
	text   string   // the property holding its text, when a Text
}

type definitionRulesKey struct{}

// definitionRules finds, once per catalog, what the policy checks of each widget.
func definitionRules(c *catalog.Catalog) map[string]*widgetRules {
	return c.Memo(definitionRulesKey{}, func() any {
		out := map[string]*widgetRules{}
		for _, w := range c.Widgets() {
			wr := &widgetRules{}
			names := make([]string, 0, len(w.Properties))
			for p := range w.Properties {
				names = append(names, p)
			}
			sort.Strings(names)
			for _, p := range names {
				s := w.Properties[p]
				wr.urls = append(wr.urls, schemaPlaces(w.Name, p, s, []string{p}, 0)...)
				switch {
				case p == "child" || p == "children":
					wr.refs = append(wr.refs, p)
				case p == "text" && w.Name == "Text":
					wr.text = p
				}
			}
			if IsImage(w.Name) {
				wr.image = declared(w.Properties, imageDescriptions)
			}
			if IsInput(w.Name) {
				wr.input = declared(w.Properties, inputLabels)
			}
			wr.button = IsButton(w.Name) && w.Properties["child"] != nil
			out[w.Name] = wr
		}
		return out
	}).(map[string]*widgetRules)
}

func declared(props map[string]map[string]any, names []string) []string {
	var out []string
	for _, n := range names {
		if _, ok := props[n]; ok {
			out = append(out, n)
		}
	}
	return out
}

// schemaPlaces finds the URL places of a property of a genui widget from its decoded
// schema: a string property marked with a URL format or named as a URL, or such
// properties of the objects and arrays it holds.
func schemaPlaces(typ, prop string, s map[string]any, path []string, depth int) []Place {
	if s == nil || depth > 4 {
		return nil
	}
	if f, _ := s["format"].(string); IsURLFormat(f) || URLName(prop) && stringish(s) {
		return []Place{{Path: append([]string{}, path...), Kind: KindOf(typ, prop)}}
	}
	var out []Place
	if props, ok := s["properties"].(map[string]any); ok {
		names := make([]string, 0, len(props))
		for k := range props {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			ks, _ := props[k].(map[string]any)
			out = append(out, schemaPlaces(typ, k, ks, append(path, k), depth+1)...)
		}
	}
	if items, ok := s["items"].(map[string]any); ok {
		out = append(out, schemaPlaces(typ, prop, items, append(path, "*"), depth+1)...)
	}
	return out
}

// stringish reports whether a schema allows strings (or does not say).
func stringish(s map[string]any) bool {
	switch t := s["type"].(type) {
	case nil:
		return s["properties"] == nil && s["items"] == nil
	case string:
		return t == "string"
	case []any:
		for _, e := range t {
			if e == "string" {
				return true
			}
		}
	}
	return false
}

// CheckDefinition checks a surface definition of a genui widget catalog c ({"root",
// "widgets": [{"id", "widget": {"<Type>": {…}}}]}) against the policy. at is the
// definition's JSON pointer within its message; every violation's pointer starts with it
// and its Code is the rule's. Widgets the catalog does not know, and values of the wrong
// type, are left to the catalog's checks.
func (p *Policy) CheckDefinition(c *catalog.Catalog, def any, at string) []catalog.Violation {
	if p == nil || c == nil || c.A2UI != nil {
		return nil
	}
	d, _ := def.(map[string]any)
	widgets, _ := d["widgets"].([]any)
	if len(widgets) == 0 {
		return nil
	}
	rules := definitionRules(c)
	type entry struct {
		typ   string
		props map[string]any
		wr    *widgetRules
	}
	// The widgets by id, for the text of buttons.
	var byID map[string]entry
	buttons := false
	var out []catalog.Violation
	add := func(r Rule, ptr, msg string) {
		out = append(out, catalog.Violation{Pointer: ptr, Code: string(r), Message: msg})
	}
	for i, w := range widgets {
		wm, _ := w.(map[string]any)
		inner, _ := wm["widget"].(map[string]any)
		if len(inner) != 1 {
			continue
		}
		for typ, v := range inner {
			props, _ := v.(map[string]any)
			wr := rules[typ]
			if wr == nil || props == nil {
				continue
			}
			wat := at + "/widgets/" + strconv.Itoa(i) + "/widget/" + escape(typ)
			buttons = buttons || wr.button
			if id, ok := wm["id"].(string); ok && p.On(Inaccessible) {
				if byID == nil {
					byID = make(map[string]entry, len(widgets))
				}
				byID[id] = entry{typ, props, wr}
			}
			if p.On(UnsafeURL) {
				for _, pl := range wr.urls {
					each(props, pl.Path, wat, func(v any, ptr string) {
						if s, ok := v.(string); ok {
							if err := p.CheckURL(s, pl.Kind); err != nil {
								add(UnsafeURL, ptr, err.Error())
							}
						}
					})
				}
				if wr.text != "" {
					if s, ok := props[wr.text].(string); ok {
						for _, l := range MarkdownLinks(s) {
							if err := p.CheckURL(l, Link); err != nil {
								add(UnsafeURL, wat+"/"+escape(wr.text), err.Error())
								break
							}
						}
					}
				}
			}
			if p.On(SensitiveInput) && sensitive(props) {
				for _, k := range sortedKeys(props) {
					if Sensitive(k, props[k]) {
						add(SensitiveInput, wat+"/"+escape(k), SensitiveMessage)
					}
				}
			}
			if p.On(Inaccessible) {
				if len(wr.image) > 0 && !anySet(props, wr.image) {
					add(Inaccessible, wat, fmt.Sprintf(InaccessibleImage, strings.Join(wr.image, " or ")))
				}
				if len(wr.input) > 0 && !anySet(props, wr.input) {
					add(Inaccessible, wat, fmt.Sprintf(InaccessibleInput, strings.Join(wr.input, " or ")))
				}
			}
		}
	}
	if p.On(Inaccessible) && buttons {
		var hasText func(id string, depth int) bool
		hasText = func(id string, depth int) bool {
			e, ok := byID[id]
			if !ok || depth > 32 {
				return false
			}
			if e.wr.text != "" {
				if s, _ := e.props[e.wr.text].(string); strings.TrimSpace(s) != "" {
					return true
				}
			}
			if anySet(e.props, []string{"semanticLabel", "semanticsLabel", "tooltip", "label"}) {
				return true
			}
			for _, r := range e.wr.refs {
				switch t := e.props[r].(type) {
				case string:
					if hasText(t, depth+1) {
						return true
					}
				case []any:
					for _, x := range t {
						if s, ok := x.(string); ok && hasText(s, depth+1) {
							return true
						}
					}
				}
			}
			return false
		}
		for i, w := range widgets {
			wm, _ := w.(map[string]any)
			id, _ := wm["id"].(string)
			e, ok := byID[id]
			if !ok || !e.wr.button {
				continue
			}
			if !anySet(e.props, []string{"semanticLabel", "semanticsLabel", "tooltip"}) && !hasText(id, 0) {
				add(Inaccessible, at+"/widgets/"+strconv.Itoa(i)+"/widget/"+escape(e.typ), InaccessibleButton)
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pointer < out[j].Pointer })
	return out
}

// each calls fn with each value at path under v (a "*" token: each item of an array),
// and its JSON pointer under at.
func each(v any, path []string, at string, fn func(v any, ptr string)) {
	if len(path) == 0 {
		fn(v, at)
		return
	}
	tok := path[0]
	if tok == "*" {
		l, _ := v.([]any)
		for i, e := range l {
			each(e, path[1:], at+"/"+strconv.Itoa(i), fn)
		}
		return
	}
	m, _ := v.(map[string]any)
	if e, ok := m[tok]; ok {
		each(e, path[1:], at+"/"+escape(tok), fn)
	}
}

// anySet reports whether one of the properties holds a non-empty string (or another
// value: a binding, which the policy cannot judge).
func anySet(props map[string]any, names []string) bool {
	for _, n := range names {
		switch v := props[n].(type) {
		case nil:
		case string:
			if strings.TrimSpace(v) != "" {
				return true
			}
		default:
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// escape escapes a JSON Pointer token.
func escape(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// sensitive reports whether a property makes a widget an obscured input.
func sensitive(props map[string]any) bool {
	for k, v := range props {
		if Sensitive(k, v) {
			return true
		}
	}
	return false
}

// CheckInput checks the input a model gave a tool (a client tool: the app runs it)
// against the policy: the URLs of the properties its input schema (JSON, as declared)
// marks with a URL format or names as URLs. at is the input's JSON pointer.
func (p *Policy) CheckInput(tool string, schema []byte, input any, at string) []catalog.Violation {
	if !p.On(UnsafeURL) || len(schema) == 0 {
		return nil
	}
	var s map[string]any
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	var out []catalog.Violation
	for _, pl := range schemaPlaces(tool, "", s, nil, 0) {
		each(input, pl.Path, at, func(v any, ptr string) {
			if str, ok := v.(string); ok {
				if err := p.CheckURL(str, pl.Kind); err != nil {
					out = append(out, catalog.Violation{Pointer: ptr, Code: string(UnsafeURL), Message: err.Error()})
				}
			}
		})
	}
	return out
}
