package catalog

import (
	"sort"
	"strconv"
	"strings"
)

// SchemaNode is a JSON Schema of an A2UI catalog read into typed fields: the keywords
// that say what a value looks like, for describing the catalog (to a model, say). The
// compiled schema validates; this one is for reading. References are kept as written;
// [A2UI.Resolve] follows them.
type SchemaNode struct {
	Ref         string
	Title       string
	Description string
	// Format is the "format" annotation ("uri", "date", …).
	Format string
	// Types lists the JSON types "type" allows (one or several).
	Types []string
	// Const is the value "const" requires, when HasConst.
	Const    any
	HasConst bool
	Enum     []any
	// Properties maps each declared property to its schema; PropertyNames lists them
	// sorted.
	Properties    map[string]*SchemaNode
	PropertyNames []string
	Required      []string
	Items         *SchemaNode
	// AdditionalProperties is the schema of properties not declared, when it is one.
	AdditionalProperties *SchemaNode
	AllOf, AnyOf, OneOf  []*SchemaNode
	Defs                 map[string]*SchemaNode // $defs and definitions
}

// IsRequired reports whether the schema requires the property.
func (s *SchemaNode) IsRequired(prop string) bool {
	for _, r := range s.Required {
		if r == prop {
			return true
		}
	}
	return false
}

// schemaNode reads a decoded schema into a SchemaNode; nil when v is not an object.
func schemaNode(v any, depth int) *SchemaNode {
	m, _ := v.(map[string]any)
	if m == nil || depth > maxCatalogDepth {
		return nil
	}
	n := &SchemaNode{}
	n.Ref, _ = m["$ref"].(string)
	n.Title, _ = m["title"].(string)
	n.Description, _ = m["description"].(string)
	n.Format, _ = m["format"].(string)
	switch t := m["type"].(type) {
	case string:
		n.Types = []string{t}
	case []any:
		n.Types = StringList(t)
	}
	n.Const, n.HasConst = m["const"]
	n.Enum, _ = m["enum"].([]any)
	if props := asMap(m["properties"]); props != nil {
		n.Properties = make(map[string]*SchemaNode, len(props))
		for k, p := range props {
			n.Properties[k] = schemaNode(p, depth+1)
			n.PropertyNames = append(n.PropertyNames, k)
		}
		sort.Strings(n.PropertyNames)
	}
	n.Required = StringList(m["required"])
	n.Items = schemaNode(m["items"], depth+1)
	n.AdditionalProperties = schemaNode(m["additionalProperties"], depth+1)
	for kw, dst := range map[string]*[]*SchemaNode{"allOf": &n.AllOf, "anyOf": &n.AnyOf, "oneOf": &n.OneOf} {
		for _, alt := range asList(m[kw]) {
			if a := schemaNode(alt, depth+1); a != nil {
				*dst = append(*dst, a)
			}
		}
	}
	for _, kw := range []string{"$defs", "definitions"} {
		for k, d := range asMap(m[kw]) {
			if n.Defs == nil {
				n.Defs = map[string]*SchemaNode{}
			}
			n.Defs[k] = schemaNode(d, depth+1)
		}
	}
	return n
}

// child follows one token of a JSON Pointer into a schema.
func (s *SchemaNode) child(kw, tok string) (*SchemaNode, bool) {
	switch kw {
	case "properties":
		return s.Properties[tok], true
	case "$defs", "definitions":
		return s.Defs[tok], true
	case "allOf", "anyOf", "oneOf":
		l := map[string][]*SchemaNode{"allOf": s.AllOf, "anyOf": s.AnyOf, "oneOf": s.OneOf}[kw]
		i, err := strconv.Atoi(tok)
		if err != nil || i < 0 || i >= len(l) {
			return nil, true
		}
		return l[i], true
	}
	return nil, false
}

// pointer follows a JSON Pointer ("/$defs/X/properties/y") from the schema: through
// properties, $defs, allOf/anyOf/oneOf, items and additionalProperties.
func (s *SchemaNode) pointer(ptr string) *SchemaNode {
	toks := strings.Split(strings.TrimPrefix(ptr, "/"), "/")
	if ptr == "" || ptr == "/" {
		return s
	}
	cur := s
	for i := 0; i < len(toks) && cur != nil; i++ {
		tok := unescapeToken(toks[i])
		switch tok {
		case "items":
			cur = cur.Items
			continue
		case "additionalProperties":
			cur = cur.AdditionalProperties
			continue
		}
		if i+1 >= len(toks) {
			return nil
		}
		next, ok := cur.child(tok, unescapeToken(toks[i+1]))
		if !ok {
			return nil
		}
		cur = next
		i++
	}
	return cur
}

// view is the typed view of an A2UI catalog document: its components, its $defs and
// functions (at the root), and the common types its references reach.
type view struct {
	root      *SchemaNode            // the document as a schema: its $defs
	comps     map[string]*SchemaNode // components
	functions map[string]*SchemaNode // v0.9 document form: the schema of each call
	common    *SchemaNode            // v0.9 common types
	commonURL string
}

// Resolve follows a reference of the catalog's schemas: "#/…" into the catalog ("#/$defs/X",
// "#/components/Y", "#/functions/f", deeper pointers too), and, in v0.9, references to
// the common types, by URL or relative ("common_types.json#/$defs/DynamicString"). It
// returns nil for a reference it cannot follow.
func (a *A2UI) Resolve(ref string) *SchemaNode {
	v := a.view
	doc, frag, _ := strings.Cut(ref, "#")
	var root *SchemaNode
	switch {
	case doc == "" || doc == "catalog.json" || strings.HasSuffix(doc, "/catalog.json"):
		root = v.root
		if rest, ok := strings.CutPrefix(frag, "/components/"); ok {
			name, deeper, _ := strings.Cut(rest, "/")
			if c := v.comps[unescapeToken(name)]; c != nil {
				return c.pointer(deeper)
			}
			return nil
		}
		if rest, ok := strings.CutPrefix(frag, "/functions/"); ok {
			name, deeper, _ := strings.Cut(rest, "/")
			if f := v.functions[unescapeToken(name)]; f != nil {
				return f.pointer(deeper)
			}
			return nil
		}
	case v.common != nil && (doc == v.commonURL || doc == "common_types.json" || strings.HasSuffix(doc, "/common_types.json")):
		root = v.common
	}
	if root == nil {
		return nil
	}
	return root.pointer(frag)
}

// Theme returns the schema of a surface's theme (v0.9 createSurface.theme) or styles (v0.8
// beginRendering.styles), as the catalog declares it; nil when it declares none.
func (a *A2UI) Theme() *SchemaNode {
	if a.view.root == nil {
		return nil
	}
	return a.view.root.Defs[themeDef[a.Version]]
}

var themeDef = map[string]string{A2UIv09: "theme", A2UIv08: "styles"}

// Schema returns the component type's schema as the catalog declares it.
func (c *Component) Schema() *SchemaNode { return c.node }

// CommonTypeName names the common type a reference points to
// ("…/common_types.json#/$defs/DynamicString" → "DynamicString"), or "".
func CommonTypeName(ref string) string {
	doc, frag, _ := strings.Cut(ref, "#")
	if !(doc == "common_types.json" || strings.HasSuffix(doc, "/common_types.json")) {
		return ""
	}
	name, ok := strings.CutPrefix(frag, "/$defs/")
	if !ok || strings.Contains(name, "/") {
		return ""
	}
	return name
}
