package catalog

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Catalog is a compiled widget catalog. It is immutable and safe to share between sessions
// and goroutines; identical catalogs (same canonical JSON) have the same Hash.
type Catalog struct {
	// Hash is the URL-safe SHA-256 of the catalog's canonical JSON.
	Hash string
	// Schema is the catalog as the client sent it (decoded JSON).
	Schema map[string]any
	// Canonical is the catalog's canonical JSON encoding (sorted keys, no spaces).
	Canonical []byte
	// Widgets lists the catalog's widgets, sorted by name.
	Widgets []Widget

	compiled *jsonschema.Schema
	// top validates a definition except inside widget values; nil when the catalog uses
	// keywords the fast validator lacks (compiled is used instead).
	top  *node
	memo sync.Map
}

// Widget describes one widget type of a catalog.
type Widget struct {
	Name string
	// Properties maps each property name to its (dereferenced) schema.
	Properties map[string]map[string]any
	// Required lists the properties the catalog requires.
	Required []string

	alt  map[string]any // the schema alternative that defines the widget
	node *node          // alt compiled; nil when it needs the general validator
	refs []refProp      // properties holding widget ids
}

// refProp is a widget property that refers to other widgets by id.
type refProp struct {
	name string
	list bool // an array of ids, not one id
}

// Size limits of a catalog, bounding compile cost.
const (
	maxCatalogDepth = 64
)

// Compile compiles a catalog given as decoded JSON. It fails when the catalog is not a
// JSON object, is not a valid JSON Schema (draft 2020-12 unless "$schema" says otherwise;
// drafts 4 to 2020-12 are supported), refers to remote schemas, or defines no widgets.
func Compile(schema map[string]any) (*Catalog, error) {
	if schema == nil {
		return nil, errors.New("catalog must be a JSON object")
	}
	schema = normalize(schema)
	canonical, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("catalog is not encodable as JSON: %w", err)
	}
	if depth(schema, 0) > maxCatalogDepth {
		return nil, fmt.Errorf("catalog nests deeper than %d levels", maxCatalogDepth)
	}
	sum := sha256.Sum256(canonical)
	c := &Catalog{
		Hash:      base64.RawURLEncoding.EncodeToString(sum[:]),
		Schema:    schema,
		Canonical: canonical,
	}
	comp := jsonschema.NewCompiler()
	comp.UseLoader(noLoader{})
	// Compile a private copy: the compiler keeps references into the document.
	var doc any
	if err := json.Unmarshal(canonical, &doc); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	if err := comp.AddResource(catalogURL, doc); err != nil {
		return nil, fmt.Errorf("catalog is not a valid JSON Schema: %w", err)
	}
	c.compiled, err = comp.Compile(catalogURL)
	if err != nil {
		return nil, fmt.Errorf("catalog is not a valid JSON Schema: %s", schemaErrorMessage(err))
	}
	c.Widgets = indexWidgets(schema)
	if len(c.Widgets) == 0 {
		return nil, errors.New("catalog defines no widgets: expected properties.widgets.items.properties.widget with anyOf/oneOf alternatives, one per widget")
	}
	var fast map[string]any
	_ = json.Unmarshal(canonical, &fast) // a second private copy, modified by compileFast
	c.compileFast(fast)
	return c, nil
}

// compileFast compiles the widget alternatives and the definition around them for the
// fast validator. doc is a private copy of the catalog, which it modifies.
func (c *Catalog) compileFast(doc map[string]any) {
	comp := newCompiler(c.Schema)
	for i := range c.Widgets {
		w := &c.Widgets[i]
		w.refs = refProps(w)
		n, err := comp.compile(w.alt, 0)
		if err != nil {
			return // the general validator checks this catalog
		}
		w.node = n
	}
	r := resolver{root: doc}
	items := r.path(doc, "properties", "widgets", "items")
	props := asMap(items["properties"])
	if props == nil {
		return
	}
	props["widget"] = true
	top, err := newCompiler(doc).compile(doc, 0)
	if err != nil {
		for i := range c.Widgets {
			c.Widgets[i].node = nil
		}
		return
	}
	c.top = top
}

// refProps finds the properties of a widget that hold widget ids: child and children,
// and any string or string-array property whose description says it holds widget ids.
func refProps(w *Widget) []refProp {
	var out []refProp
	for name, s := range w.Properties {
		list := s["type"] == "array"
		if list {
			items := asMap(s["items"])
			if items != nil && items["type"] != nil && items["type"] != "string" {
				continue
			}
		} else if s["type"] != nil && s["type"] != "string" {
			continue
		}
		desc, _ := s["description"].(string)
		if name == "child" || name == "children" || idDescription.MatchString(desc) || s["format"] == "widget-id" || s["x-widget-ref"] == true {
			out = append(out, refProp{name: name, list: list})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

var idDescription = regexp.MustCompile(`(?i)\b(widget|child|component)\s+ids?\b|\bids?\s+of\s+(the\s+|a\s+|an\s+)?(\w+\s+)?(widget|child|children|component)s?\b`)

// normalize wraps a catalog that is only the widget schema (what early clients sent) into
// the schema of a whole definition.
func normalize(schema map[string]any) map[string]any {
	if asMap(schema["properties"]) != nil && asMap(asMap(schema["properties"])["widgets"]) != nil {
		return schema
	}
	if schema["anyOf"] == nil && schema["oneOf"] == nil {
		return schema
	}
	widget := make(map[string]any, len(schema))
	out := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"root": map[string]any{"type": "string", "description": "The id of the root widget."},
			"widgets": map[string]any{"type": "array", "items": map[string]any{
				"type":       "object",
				"properties": map[string]any{"id": map[string]any{"type": "string"}, "widget": widget},
				"required":   []any{"id", "widget"},
			}},
		},
		"required": []any{"root", "widgets"},
	}
	for k, v := range schema {
		switch k {
		case "$defs", "definitions", "$schema":
			out[k] = v
		default:
			widget[k] = v
		}
	}
	return out
}

const catalogURL = "urn:genui:catalog"

type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("remote schema %q is not allowed; inline it under $defs", url)
}

func schemaErrorMessage(err error) string {
	var ve *jsonschema.SchemaValidationError
	if errors.As(err, &ve) {
		var v *jsonschema.ValidationError
		if errors.As(ve.Err, &v) {
			msgs := flatten(v)
			if len(msgs) > 0 {
				parts := make([]string, 0, len(msgs))
				for _, m := range msgs {
					parts = append(parts, m.String())
				}
				return strings.Join(parts, "; ")
			}
		}
	}
	return strings.ReplaceAll(err.Error(), catalogURL, "catalog")
}

func depth(v any, d int) int {
	if d > maxCatalogDepth {
		return d
	}
	max := d
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			if n := depth(e, d+1); n > max {
				max = n
			}
		}
	case []any:
		for _, e := range t {
			if n := depth(e, d+1); n > max {
				max = n
			}
		}
	}
	return max
}

// Memo returns the value derived from the catalog under key, computing it with fn the
// first time. It caches artefacts such as prompts and tool schemas for the catalog's life.
func (c *Catalog) Memo(key any, fn func() any) any {
	if v, ok := c.memo.Load(key); ok {
		return v
	}
	v, _ := c.memo.LoadOrStore(key, fn())
	return v
}

// Widget returns the widget named name.
func (c *Catalog) Widget(name string) (*Widget, bool) {
	i := sort.Search(len(c.Widgets), func(i int) bool { return c.Widgets[i].Name >= name })
	if i < len(c.Widgets) && c.Widgets[i].Name == name {
		return &c.Widgets[i], true
	}
	return nil, false
}

// indexWidgets finds the widget alternatives of a genui catalog: the schema of
// widgets[].widget (or the catalog itself when only the widget schema was sent), whose
// anyOf/oneOf alternatives each hold one property named after a widget.
func indexWidgets(root map[string]any) []Widget {
	return indexWidgetsWith(resolver{root: root}, root)
}

func indexWidgetsWith(r resolver, root map[string]any) []Widget {
	widgetSchema := r.path(root, "properties", "widgets", "items", "properties", "widget")
	if widgetSchema == nil {
		if root["anyOf"] == nil && root["oneOf"] == nil {
			return nil
		}
		widgetSchema = root // only the widget schema was sent
	}
	seen := map[string]bool{}
	var out []Widget
	var visit func(s map[string]any, d int)
	visit = func(s map[string]any, d int) {
		s = r.deref(s)
		if s == nil || d > 8 {
			return
		}
		for _, kw := range []string{"anyOf", "oneOf"} {
			if alts, ok := s[kw].([]any); ok {
				for _, a := range alts {
					if m, ok := a.(map[string]any); ok {
						visit(m, d+1)
					}
				}
			}
		}
		props, _ := s["properties"].(map[string]any)
		for name, p := range props {
			ps := r.deref(asMap(p))
			if ps == nil || seen[name] {
				continue
			}
			seen[name] = true
			w := Widget{Name: name, Properties: map[string]map[string]any{}, alt: s}
			if pp, ok := ps["properties"].(map[string]any); ok {
				for k, v := range pp {
					if m := r.deref(asMap(v)); m != nil {
						w.Properties[k] = m
					}
				}
			}
			w.Required = StringList(ps["required"])
			out = append(out, w)
		}
	}
	visit(widgetSchema, 0)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// StringList returns the strings of a decoded JSON array, skipping other values.
func StringList(v any) []string {
	arr, _ := v.([]any)
	out := make([]string, 0, len(arr))
	for _, e := range arr {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// resolver dereferences local "$ref"s ("#/$defs/X", "#/definitions/X", any JSON pointer
// into the catalog).
type resolver struct{ root map[string]any }

func (r resolver) deref(s map[string]any) map[string]any {
	for i := 0; s != nil && i < 16; i++ {
		ref, ok := s["$ref"].(string)
		if !ok {
			return s
		}
		s = r.pointer(ref)
	}
	return s
}

func (r resolver) pointer(ref string) map[string]any {
	return asMap(r.pointerAny(ref))
}

func (r resolver) pointerAny(ref string) any {
	if !strings.HasPrefix(ref, "#") {
		return nil
	}
	ref = strings.TrimPrefix(ref, "#")
	var cur any = r.root
	for _, tok := range strings.Split(ref, "/")[1:] {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch t := cur.(type) {
		case map[string]any:
			cur = t[tok]
		case []any:
			var i int
			if _, err := fmt.Sscanf(tok, "%d", &i); err != nil || i < 0 || i >= len(t) {
				return nil
			}
			cur = t[i]
		default:
			return nil
		}
	}
	return cur
}

func (r resolver) path(s map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		s = r.deref(s)
		if s == nil {
			return nil
		}
		s = asMap(s[k])
	}
	return r.deref(s)
}

// WidgetsAt lists the widgets of the definition schema found by following keys (each
// through local $refs) from root, a schema that embeds a catalog; $refs resolve against
// root.
func WidgetsAt(root map[string]any, keys ...string) []Widget {
	r := resolver{root: root}
	def := r.path(root, keys...)
	if def == nil {
		return nil
	}
	return indexWidgetsWith(r, def)
}
