package catalog

import (
	"bytes"
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
//
// A compiled catalog keeps its canonical JSON and what validation needs, not the decoded
// schema: about 3 to 5 times the catalog's JSON size in memory. Things derived from it
// (prompts, encoded tool declarations) are memoised on it with Memo.
type Catalog struct {
	// Hash is the URL-safe SHA-256 of the catalog's canonical JSON.
	Hash string
	// Canonical is the catalog's canonical JSON encoding (sorted keys, no spaces).
	Canonical []byte
	// A2UI is set for an A2UI catalog (compiled from [A2UIDocument]); it is nil for a
	// genui widget catalog, whose widgets the other methods describe and check.
	A2UI *A2UI

	widgets []widget // sorted by name
	// compiled is the general validator, kept only for catalogs that use keywords the
	// fast validator lacks; top then is nil.
	compiled *jsonschema.Schema
	// top validates a definition except inside widget values.
	top  *node
	size int
	memo sync.Map
}

// Size is an estimate of the bytes the compiled catalog holds, with what is usually
// derived from it (a system prompt, encoded tool declarations).
func (c *Catalog) Size() int { return c.size }

// widget is one widget type of a compiled catalog.
type widget struct {
	name string
	node *node     // its schema alternative compiled; nil when the general validator is used
	refs []refProp // properties holding widget ids
}

// Widget describes one widget type of a catalog, as its schema declares it.
type Widget struct {
	Name string
	// Properties maps each property name to its (dereferenced) schema.
	Properties map[string]map[string]any
	// Required lists the properties the catalog requires.
	Required []string

	alt map[string]any // the schema alternative that defines the widget
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
// schema is not kept.
func Compile(schema map[string]any) (*Catalog, error) {
	if schema == nil {
		return nil, errors.New("catalog must be a JSON object")
	}
	if _, ok := schema[a2uiKey]; ok {
		return compileA2UI(schema)
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
		Canonical: canonical,
	}
	ws := indexWidgets(schema)
	if len(ws) == 0 {
		// Report what is wrong with the schema first, if anything is.
		if _, err := compileGeneral(canonical); err != nil {
			return nil, err
		}
		return nil, errors.New("catalog defines no widgets: expected properties.widgets.items.properties.widget with anyOf/oneOf alternatives, one per widget")
	}
	c.widgets = make([]widget, len(ws))
	for i := range ws {
		c.widgets[i] = widget{name: ws[i].Name, refs: refProps(&ws[i])}
	}
	if nodes, ok := c.compileFast(schema, ws); ok {
		// The fast validator covers the catalog: check that it is a valid JSON Schema
		// against its draft's metaschema, without compiling it a second time.
		if err := checkSchema(canonical); err != nil {
			return nil, err
		}
		c.size = derivedFactor*len(canonical) + nodes
		return c, nil
	}
	// Keywords the fast validator lacks: the general validator.
	if c.compiled, err = compileGeneral(canonical); err != nil {
		return nil, err
	}
	for i := range c.widgets {
		c.widgets[i].node = nil
	}
	c.top = nil
	c.size = (derivedFactor + generalFactor) * len(canonical)
	return c, nil
}

// Estimates of what a compiled catalog holds, in multiples of its canonical JSON: its
// canonical JSON and what is derived from it (derivedFactor), the general validator
// (generalFactor, measured on the sample catalogs).
const (
	derivedFactor = 5
	generalFactor = 20
)

// compileGeneral compiles a catalog with the general validator, which keeps references
// into its own copy of the document.
func compileGeneral(canonical []byte) (*jsonschema.Schema, error) {
	var doc any
	if err := json.Unmarshal(canonical, &doc); err != nil {
		return nil, fmt.Errorf("catalog: %w", err)
	}
	comp := jsonschema.NewCompiler()
	comp.UseLoader(noLoader{})
	if err := comp.AddResource(catalogURL, doc); err != nil {
		return nil, fmt.Errorf("catalog is not a valid JSON Schema: %w", err)
	}
	sch, err := comp.Compile(catalogURL)
	if err != nil {
		return nil, fmt.Errorf("catalog is not a valid JSON Schema: %s", schemaErrorMessage(err))
	}
	return sch, nil
}

// compileFast compiles the widget alternatives and the definition around them for the
// fast validator, and returns the bytes the nodes hold; it reports false when the catalog
// uses keywords the fast validator lacks. schema is not modified.
func (c *Catalog) compileFast(schema map[string]any, ws []Widget) (int, bool) {
	comp := newCompiler(schema)
	for i := range ws {
		n, err := comp.compile(ws[i].alt, 0)
		if err != nil {
			return 0, false
		}
		c.widgets[i].node = n
	}
	// The definition around the widget values, with the widget schema accepting
	// anything: a private copy, modified.
	var doc map[string]any
	if err := json.Unmarshal(c.Canonical, &doc); err != nil {
		return 0, false
	}
	r := resolver{root: doc}
	items := r.path(doc, "properties", "widgets", "items")
	props := asMap(items["properties"])
	if props == nil {
		return 0, false
	}
	props["widget"] = true
	topComp := newCompiler(doc)
	top, err := topComp.compile(doc, 0)
	if err != nil {
		return 0, false
	}
	c.top = top
	return comp.bytes + topComp.bytes, true
}

// metaschemas are the compiled metaschemas of the drafts, by $schema URL.
var metaschemas sync.Map

// checkSchema validates a catalog against the metaschema of its draft ("$schema", else
// 2020-12). A catalog naming an unknown draft is compiled in full instead, which reports
// what is wrong.
func checkSchema(canonical []byte) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(canonical))
	if err != nil {
		return fmt.Errorf("catalog: %w", err)
	}
	url := "https://json-schema.org/draft/2020-12/schema"
	if m, ok := doc.(map[string]any); ok {
		if s, ok := m["$schema"].(string); ok {
			url = strings.TrimSuffix(s, "#")
		}
	}
	v, ok := metaschemas.Load(url)
	if !ok {
		comp := jsonschema.NewCompiler()
		comp.UseLoader(noLoader{})
		meta, err := comp.Compile(url)
		if err != nil {
			return fmt.Errorf("catalog is not a valid JSON Schema: $schema %q is not a JSON Schema draft this service knows (drafts 4 to 2020-12)", url)
		}
		v, _ = metaschemas.LoadOrStore(url, meta)
	}
	if err := v.(*jsonschema.Schema).Validate(doc); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			parts := []string{}
			for _, m := range flatten(ve) {
				parts = append(parts, m.String())
			}
			return fmt.Errorf("catalog is not a valid JSON Schema: %s", strings.Join(parts, "; "))
		}
		return fmt.Errorf("catalog is not a valid JSON Schema: %w", err)
	}
	return nil
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

// widget returns the widget named name.
func (c *Catalog) widget(name string) (*widget, bool) {
	i := sort.Search(len(c.widgets), func(i int) bool { return c.widgets[i].name >= name })
	if i < len(c.widgets) && c.widgets[i].name == name {
		return &c.widgets[i], true
	}
	return nil, false
}

// Widgets lists the catalog's widgets, sorted by name, as its schema declares them. It
// decodes the catalog anew on each call; callers that need it often memoise it.
func (c *Catalog) Widgets() []Widget {
	var schema map[string]any
	if err := json.Unmarshal(c.Canonical, &schema); err != nil {
		return nil
	}
	return indexWidgets(schema)
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
