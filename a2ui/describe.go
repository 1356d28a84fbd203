package a2ui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/genuiserver/genui/a2ui/spec"
	"github.com/genuiserver/genui/catalog"
)

// Describe renders an A2UI catalog for a model to read: each component type as one line
// of its properties and their types, the shared types they use, and the catalog's
// functions. It says what the JSON Schemas say that a model needs to write valid
// components, in a fraction of their tokens: the basic catalog's 46 KB of schema become
// about 6 KB.
func Describe(c *catalog.Catalog) string {
	if c == nil || c.A2UI == nil {
		return ""
	}
	// A large catalog is described more tersely, so that every turn does not pay for
	// what the model can do without: first without descriptions, then with the optional
	// properties named only.
	var out string
	for level := range 3 {
		d := &describer{cat: c.A2UI, version: c.A2UI.Version, used: map[string]bool{}, level: level}
		out = d.describe()
		if len(out) <= describeBudget {
			break
		}
	}
	return out
}

// describeBudget is the size up to which a catalog is described in full (about 6,000
// tokens); the basic catalog takes 7 KB.
const describeBudget = 24 << 10

func (d *describer) describe() string {
	var sb strings.Builder
	switch d.level {
	case 1:
		sb.WriteString("(A large catalog: its descriptions are left out.)\n")
	case 2:
		sb.WriteString("(A large catalog: its descriptions are left out, and optional properties are only named; use one only when its name says what it takes.)\n")
	}
	for _, name := range d.cat.ComponentNames() {
		comp, _ := d.cat.Component(name)
		sb.WriteString(d.component(name, comp.Schema()))
		sb.WriteByte('\n')
	}
	if fns := d.functions(); fns != "" {
		sb.WriteString("\nFunctions (call them in values as {\"call\":\"<name>\",\"args\":{…},\"returnType\":\"<type>\"}):\n")
		sb.WriteString(fns)
	}
	if types := d.types(); types != "" {
		sb.WriteString("\nTypes:\n")
		sb.WriteString(types)
	}
	return sb.String()
}

type describer struct {
	cat     *catalog.A2UI
	version string
	used    map[string]bool // shared types named in the description
	level   int             // 0 in full, 1 without descriptions, 2 optional properties named only
}

// commonName is the name of a common type a reference names, or "".
func commonName(ref string) string {
	if rest, ok := strings.CutPrefix(ref, spec.CommonTypesURL+"#/$defs/"); ok {
		return rest
	}
	return ""
}

// sentence is the first sentence of a description, at most about 120 characters.
func sentence(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	if len(s) > 140 {
		if i := strings.LastIndex(s[:140], " "); i > 60 {
			s = s[:i] + "…"
		}
	}
	return s
}

// component renders one component type: "Name: prop: Type; prop?: Type. Description".
func (d *describer) component(name string, s *catalog.SchemaNode) string {
	props := map[string]*catalog.SchemaNode{}
	required := map[string]bool{}
	var order []string
	desc := ""
	checkable := false
	var collect func(s *catalog.SchemaNode, depth int)
	collect = func(s *catalog.SchemaNode, depth int) {
		if s == nil || depth > 6 {
			return
		}
		if s.Ref != "" {
			switch commonName(s.Ref) {
			case "Checkable":
				checkable = true
				return
			case "ComponentCommon":
				return
			}
			if strings.HasSuffix(s.Ref, "/CatalogComponentCommon") {
				return
			}
			collect(d.cat.Resolve(s.Ref), depth+1)
			return
		}
		if s.Description != "" && desc == "" {
			desc = sentence(s.Description)
		}
		for _, r := range s.Required {
			required[r] = true
		}
		for _, k := range s.PropertyNames {
			if _, dup := props[k]; !dup {
				order = append(order, k)
			}
			props[k] = s.Properties[k]
		}
		for _, alts := range [][]*catalog.SchemaNode{s.AllOf, s.AnyOf, s.OneOf} {
			for _, alt := range alts {
				collect(alt, depth+1)
			}
		}
	}
	collect(s, 0)
	var sb strings.Builder
	sb.WriteString("- ")
	sb.WriteString(name)
	sb.WriteString(":")
	// Required properties first, then the optional ones.
	sort.SliceStable(order, func(i, j int) bool { return required[order[i]] && !required[order[j]] })
	n := 0
	var named []string // optional properties named only
	for _, p := range order {
		if p == "component" || p == "id" || (d.version == V09 && (p == "accessibility" || p == "weight")) {
			continue
		}
		if d.level >= 2 && !required[p] {
			named = append(named, p)
			continue
		}
		if n > 0 {
			sb.WriteByte(';')
		}
		n++
		sb.WriteByte(' ')
		sb.WriteString(p)
		if !required[p] {
			sb.WriteByte('?')
		}
		sb.WriteString(": ")
		sb.WriteString(d.typeOf(props[p], 0))
		if note := d.note(props[p]); note != "" && d.level == 0 {
			sb.WriteString(" (")
			sb.WriteString(note)
			sb.WriteByte(')')
		}
	}
	if checkable && d.level < 2 {
		if n > 0 {
			sb.WriteByte(';')
		}
		sb.WriteString(" checks?: CheckRule[]")
		d.used["CheckRule"] = true
		n++
	} else if checkable {
		named = append(named, "checks")
	}
	if len(named) > 0 {
		if n > 0 {
			sb.WriteByte(';')
		}
		sb.WriteString(" optional: ")
		sb.WriteString(strings.Join(named, ", "))
		n++
	}
	if n == 0 {
		sb.WriteString(" no properties")
	}
	if desc != "" && d.level == 0 {
		sb.WriteString(". ")
		sb.WriteString(strings.TrimSuffix(desc, "."))
	}
	sb.WriteByte('.')
	return sb.String()
}

// note is the short description of a property worth its tokens: one that says
// something its type does not (what an id must name, when to use it).
func (d *describer) note(s *catalog.SchemaNode) string {
	if s == nil || s.Description == "" || s.Enum != nil {
		return ""
	}
	t := sentence(s.Description)
	if len(t) > 110 {
		return ""
	}
	return strings.TrimSuffix(t, ".")
}

// typeOf renders a schema as a short type expression.
func (d *describer) typeOf(s *catalog.SchemaNode, depth int) string {
	if s == nil {
		return "any"
	}
	if depth > 4 {
		return "object"
	}
	if s.Ref != "" {
		if n := commonName(s.Ref); n != "" {
			d.used[n] = true
			return n
		}
		return d.typeOf(d.cat.Resolve(s.Ref), depth+1)
	}
	if s.HasConst {
		b, _ := json.Marshal(s.Const)
		return string(b)
	}
	if len(s.Enum) > 0 {
		parts := make([]string, len(s.Enum))
		for i, v := range s.Enum {
			b, _ := json.Marshal(v)
			parts[i] = string(b)
		}
		return strings.Join(parts, "|")
	}
	if d.version == V08 {
		if t := d.bound08(s); t != "" {
			return t
		}
	}
	for _, alts := range [][]*catalog.SchemaNode{s.OneOf, s.AnyOf} {
		if len(alts) > 0 {
			parts := make([]string, 0, len(alts))
			for _, a := range alts {
				parts = append(parts, d.typeOf(a, depth+1))
			}
			return strings.Join(parts, " | ")
		}
	}
	if len(s.AllOf) == 1 {
		return d.typeOf(s.AllOf[0], depth+1)
	}
	switch {
	case len(s.Types) == 1:
		switch t := s.Types[0]; t {
		case "array":
			it := d.typeOf(s.Items, depth+1)
			if strings.Contains(it, "|") {
				it = "(" + it + ")"
			}
			return it + "[]"
		case "object":
			return d.object(s, depth)
		default:
			return t
		}
	case len(s.Types) > 1:
		return strings.Join(s.Types, "|")
	}
	if s.Properties != nil {
		return d.object(s, depth)
	}
	return "any"
}

func (d *describer) object(s *catalog.SchemaNode, depth int) string {
	if s == nil {
		return "object"
	}
	if len(s.Properties) == 0 {
		if s.AdditionalProperties != nil {
			return "{[key]: " + d.typeOf(s.AdditionalProperties, depth+1) + "}"
		}
		return "object"
	}
	keys := append([]string(nil), s.PropertyNames...)
	sort.SliceStable(keys, func(i, j int) bool {
		if s.IsRequired(keys[i]) != s.IsRequired(keys[j]) {
			return s.IsRequired(keys[i])
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		opt := "?"
		if s.IsRequired(k) {
			opt = ""
		}
		parts = append(parts, k+opt+": "+d.typeOf(s.Properties[k], depth+1))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// bound08 names the v0.8 shapes every component uses: bound values, child lists and
// actions.
func (d *describer) bound08(s *catalog.SchemaNode) string {
	pm := s.Properties
	if len(pm) == 0 {
		return ""
	}
	if _, ok := pm["explicitList"]; ok {
		d.used["Children"] = true
		return "Children"
	}
	if _, ok := pm["path"]; ok {
		kinds := []string{}
		for _, k := range s.PropertyNames {
			switch k {
			case "path":
			case "literalString", "literalNumber", "literalBoolean", "literalArray":
				kinds = append(kinds, strings.TrimPrefix(k, "literal"))
			default:
				return ""
			}
		}
		sort.Strings(kinds)
		name := "Bound" + strings.Join(kinds, "Or")
		d.used[name] = true
		return name
	}
	if _, ok := pm["name"]; ok {
		if _, ok := pm["context"]; ok {
			d.used["Action"] = true
			return "Action"
		}
	}
	return ""
}

// functions renders the functions of a v0.9 catalog: "name(arg: Type) → type. What it does."
func (d *describer) functions() string {
	var sb strings.Builder
	for _, name := range d.cat.FunctionNames() {
		fn, _ := d.cat.Function(name)
		args := strings.TrimSuffix(strings.TrimPrefix(d.object(fn.Params, 0), "{"), "}")
		if args == "object" {
			args = ""
		}
		fmt.Fprintf(&sb, "- %s(%s)", name, args)
		if fn.ReturnType != "" {
			fmt.Fprintf(&sb, " → %s", fn.ReturnType)
		}
		if fn.Description != "" && d.level == 0 {
			sb.WriteString(". ")
			sb.WriteString(strings.TrimSuffix(sentence(fn.Description), "."))
		}
		sb.WriteString(".\n")
	}
	return sb.String()
}

// sharedTypes explains the types components share, in the words a model needs.
var sharedTypes = map[string]string{
	"ComponentId":             `the id of another component of the surface (never a component written inline)`,
	"ChildList":               `["<id>", …] (fixed children), or a template {"componentId":"<id>","path":"/list"} that repeats the component for each item of the list at path; inside it, paths without a leading "/" are relative to the item`,
	"DynamicString":           `a string, a binding {"path":"/json/pointer"} to the data model, or a function call returning a string`,
	"DynamicNumber":           `a number, a binding {"path":"/…"}, or a function call returning a number`,
	"DynamicBoolean":          `a boolean, a binding {"path":"/…"}, or a function call returning a boolean`,
	"DynamicStringList":       `an array of strings, a binding {"path":"/…"}, or a function call returning an array`,
	"DynamicValue":            `a literal (string, number, boolean, array), a binding {"path":"/…"}, or a function call`,
	"Action":                  `{"event":{"name":"<action name>","context":{"<key>": DynamicValue}}}, sent to you when the user triggers it (bind context values to the paths inputs write), or {"functionCall":{"call":"<function>","args":{…}}}, run on the client`,
	"CheckRule":               `{"condition": DynamicBoolean, "message": "<shown when the condition is false>"}`,
	"FunctionCall":            `{"call":"<function>","args":{…},"returnType":"<type>"}`,
	"AccessibilityAttributes": `{"label"?: DynamicString, "description"?: DynamicString}`,
	// v0.8
	"Children":                     `{"explicitList":["<id>", …]} or {"template":{"componentId":"<id>","dataBinding":"/list"}}`,
	"BoundString":                  `{"literalString":"…"} or {"path":"/json/pointer"} (both: the path, set to the literal first)`,
	"BoundNumber":                  `{"literalNumber":1} or {"path":"/…"}`,
	"BoundBoolean":                 `{"literalBoolean":true} or {"path":"/…"}`,
	"BoundArray":                   `{"literalArray":["…"]} or {"path":"/…"}`,
	"BoundBooleanOrNumberOrString": `{"literalString":"…"}, {"literalNumber":1}, {"literalBoolean":true} or {"path":"/…"}`,
	"BoundNumberOrString":          `{"literalString":"…"}, {"literalNumber":1} or {"path":"/…"}`,
}

// sharedTypes08 are the v0.8 explanations of names the versions share.
var sharedTypes08 = map[string]string{
	"Action": `{"name":"<action name>","context":[{"key":"<key>","value":{"path":"/…"} or {"literalString":"…"}}]}, sent to you when the user triggers it (bind context values to the paths inputs write)`,
}

// dependsOn lists the shared types each shared type's explanation names.
var dependsOn = map[string][]string{
	"Action":    {"DynamicValue"},
	"CheckRule": {"DynamicBoolean"},
}

func (d *describer) types() string {
	for t := range d.used {
		if d.version == V08 {
			continue
		}
		for _, dep := range dependsOn[t] {
			d.used[dep] = true
		}
	}
	names := make([]string, 0, len(d.used))
	for n := range d.used {
		names = append(names, n)
	}
	sort.Strings(names)
	var sb strings.Builder
	for _, n := range names {
		text := sharedTypes[n]
		if t := sharedTypes08[n]; d.version == V08 && t != "" {
			text = t
		}
		if text == "" {
			if s := d.cat.Resolve(spec.CommonTypesURL + "#/$defs/" + n); s != nil && d.version == V09 {
				text = d.typeOf(s, 1)
			} else {
				text = "see the catalog"
			}
		}
		fmt.Fprintf(&sb, "- %s: %s\n", n, text)
	}
	return sb.String()
}
