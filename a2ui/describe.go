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
	var w struct {
		A2UICatalog struct {
			Catalog map[string]any `json:"catalog"`
		} `json:"a2uiCatalog"`
	}
	if c == nil || c.A2UI == nil || json.Unmarshal(c.Canonical, &w) != nil {
		return ""
	}
	var common map[string]any
	if c.A2UI.Version == V09 {
		_ = json.Unmarshal(spec.CommonTypes, &common)
	}
	// A large catalog is described more tersely, so that every turn does not pay for
	// what the model can do without: first without descriptions, then with the optional
	// properties named only.
	var out string
	for level := range 3 {
		d := &describer{version: c.A2UI.Version, doc: w.A2UICatalog.Catalog, common: common, used: map[string]bool{}, level: level}
		out = d.describe(c.A2UI)
		if len(out) <= describeBudget {
			break
		}
	}
	return out
}

// describeBudget is the size up to which a catalog is described in full (about 6,000
// tokens); the basic catalog takes 7 KB.
const describeBudget = 24 << 10

func (d *describer) describe(a *catalog.A2UI) string {
	var sb strings.Builder
	switch d.level {
	case 1:
		sb.WriteString("(A large catalog: its descriptions are left out.)\n")
	case 2:
		sb.WriteString("(A large catalog: its descriptions are left out, and optional properties are only named; use one only when its name says what it takes.)\n")
	}
	comps := asMap(d.doc["components"])
	for _, name := range a.ComponentNames() {
		sb.WriteString(d.component(name, asMap(comps[name])))
		sb.WriteByte('\n')
	}
	if fns := d.functions(a); fns != "" {
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
	version string
	doc     map[string]any
	common  map[string]any
	used    map[string]bool // shared types named in the description
	level   int             // 0 in full, 1 without descriptions, 2 optional properties named only
}

// deref resolves a reference within the catalog or to the common types.
func (d *describer) deref(ref string) map[string]any {
	var root map[string]any
	switch {
	case strings.HasPrefix(ref, "#"):
		root = d.doc
	case strings.HasPrefix(ref, spec.CommonTypesURL+"#"):
		root, ref = d.common, strings.TrimPrefix(ref, spec.CommonTypesURL)
	default:
		return nil
	}
	var cur any = root
	for _, tok := range strings.Split(strings.TrimPrefix(ref, "#"), "/")[1:] {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		cur = asMap(cur)[tok]
	}
	return asMap(cur)
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
func (d *describer) component(name string, s map[string]any) string {
	props := map[string]map[string]any{}
	required := map[string]bool{}
	var order []string
	desc := ""
	checkable := false
	var collect func(s map[string]any, depth int)
	collect = func(s map[string]any, depth int) {
		if s == nil || depth > 6 {
			return
		}
		if ref, ok := s["$ref"].(string); ok {
			switch commonName(ref) {
			case "Checkable":
				checkable = true
				return
			case "ComponentCommon":
				return
			}
			if strings.HasSuffix(ref, "/CatalogComponentCommon") {
				return
			}
			collect(d.deref(ref), depth+1)
			return
		}
		if t, _ := s["description"].(string); t != "" && desc == "" {
			desc = sentence(t)
		}
		for _, r := range catalog.StringList(s["required"]) {
			required[r] = true
		}
		pm := asMap(s["properties"])
		keys := make([]string, 0, len(pm))
		for k := range pm {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if _, dup := props[k]; !dup {
				order = append(order, k)
			}
			props[k] = asMap(pm[k])
		}
		for _, kw := range []string{"allOf", "anyOf", "oneOf"} {
			for _, alt := range asList(s[kw]) {
				collect(asMap(alt), depth+1)
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
		if note := d.note(name, p, props[p]); note != "" && d.level == 0 {
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
func (d *describer) note(comp, prop string, s map[string]any) string {
	t, _ := s["description"].(string)
	if t == "" || s["enum"] != nil {
		return ""
	}
	t = sentence(t)
	if len(t) > 110 {
		return ""
	}
	return strings.TrimSuffix(t, ".")
}

// typeOf renders a schema as a short type expression.
func (d *describer) typeOf(s map[string]any, depth int) string {
	if s == nil {
		return "any"
	}
	if depth > 4 {
		return "object"
	}
	if ref, ok := s["$ref"].(string); ok {
		if n := commonName(ref); n != "" {
			d.used[n] = true
			return n
		}
		return d.typeOf(d.deref(ref), depth+1)
	}
	if c, ok := s["const"]; ok {
		b, _ := json.Marshal(c)
		return string(b)
	}
	if e := asList(s["enum"]); len(e) > 0 {
		parts := make([]string, len(e))
		for i, v := range e {
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
	for _, kw := range []string{"oneOf", "anyOf"} {
		if alts := asList(s[kw]); len(alts) > 0 {
			parts := make([]string, 0, len(alts))
			for _, a := range alts {
				parts = append(parts, d.typeOf(asMap(a), depth+1))
			}
			return strings.Join(parts, " | ")
		}
	}
	if alts := asList(s["allOf"]); len(alts) == 1 {
		return d.typeOf(asMap(alts[0]), depth+1)
	}
	switch t := s["type"].(type) {
	case string:
		switch t {
		case "array":
			it := d.typeOf(asMap(s["items"]), depth+1)
			if strings.Contains(it, "|") {
				it = "(" + it + ")"
			}
			return it + "[]"
		case "object":
			return d.object(s, depth)
		case "integer":
			return "integer"
		}
		return t
	case []any:
		return strings.Join(catalog.StringList(t), "|")
	}
	if s["properties"] != nil {
		return d.object(s, depth)
	}
	return "any"
}

func (d *describer) object(s map[string]any, depth int) string {
	pm := asMap(s["properties"])
	if len(pm) == 0 {
		if ap := asMap(s["additionalProperties"]); ap != nil {
			return "{[key]: " + d.typeOf(ap, depth+1) + "}"
		}
		return "object"
	}
	req := map[string]bool{}
	for _, r := range catalog.StringList(s["required"]) {
		req[r] = true
	}
	keys := make([]string, 0, len(pm))
	for k := range pm {
		keys = append(keys, k)
	}
	sort.SliceStable(keys, func(i, j int) bool {
		if req[keys[i]] != req[keys[j]] {
			return req[keys[i]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		opt := "?"
		if req[k] {
			opt = ""
		}
		parts = append(parts, k+opt+": "+d.typeOf(asMap(pm[k]), depth+1))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// bound08 names the v0.8 shapes every component uses: bound values, child lists and
// actions.
func (d *describer) bound08(s map[string]any) string {
	pm := asMap(s["properties"])
	if len(pm) == 0 {
		return ""
	}
	if _, ok := pm["explicitList"]; ok {
		d.used["Children"] = true
		return "Children"
	}
	if _, ok := pm["path"]; ok {
		kinds := []string{}
		for k := range pm {
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
func (d *describer) functions(a *catalog.A2UI) string {
	var sb strings.Builder
	fdoc := d.doc["functions"]
	for _, name := range a.FunctionNames() {
		var params map[string]any
		var desc string
		switch fs := fdoc.(type) {
		case map[string]any:
			f := asMap(fs[name])
			desc, _ = f["description"].(string)
			params = asMap(asMap(f["properties"])["args"])
		case []any:
			for _, e := range fs {
				if f := asMap(e); f["name"] == name {
					desc, _ = f["description"].(string)
					params = asMap(f["parameters"])
				}
			}
		}
		fn, _ := a.Function(name)
		args := strings.TrimSuffix(strings.TrimPrefix(d.object(params, 0), "{"), "}")
		if args == "object" {
			args = ""
		}
		fmt.Fprintf(&sb, "- %s(%s)", name, args)
		if fn.ReturnType != "" {
			fmt.Fprintf(&sb, " → %s", fn.ReturnType)
		}
		if desc != "" && d.level == 0 {
			sb.WriteString(". ")
			sb.WriteString(strings.TrimSuffix(sentence(desc), "."))
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
			if s := d.deref(spec.CommonTypesURL + "#/$defs/" + n); s != nil && d.version == V09 {
				text = d.typeOf(s, 1)
			} else {
				text = "see the catalog"
			}
		}
		fmt.Fprintf(&sb, "- %s: %s\n", n, text)
	}
	return sb.String()
}
