package catalog

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/genuiserver/genui/a2ui/spec"
	"github.com/genuiserver/genui/internal/jsonenc"
)

// A2UI protocol versions whose catalogs compile.
const (
	A2UIv08 = "v0.8"
	A2UIv09 = "v0.9"
)

// a2uiKey is the one key of the document an A2UI catalog compiles from (see
// [A2UIDocument]).
const a2uiKey = "a2uiCatalog"

// A2UIDocument returns the JSON that compiles ([Compile], [Cache.Compile]) to the A2UI
// catalog doc, of the given protocol version, known to the client by id:
//
//	{"a2uiCatalog":{"version":"v0.9","catalogId":"…","catalog":<doc>}}
//
// doc is the catalog as the specification publishes it (components, functions, $defs) or
// as a client sends it inline in its capabilities (components, functions as a list,
// theme). The document holds everything needed to compile the catalog again, so a
// session store keeps only its canonical JSON.
func A2UIDocument(version, id string, doc []byte) []byte {
	b := make([]byte, 0, len(doc)+len(id)+64)
	b = append(b, `{"a2uiCatalog":{"version":`...)
	b = jsonenc.AppendString(b, version)
	b = append(b, `,"catalogId":`...)
	b = jsonenc.AppendString(b, id)
	b = append(b, `,"catalog":`...)
	b = append(b, doc...)
	return append(b, "}}"...)
}

// A2UI is what an A2UI catalog compiles to: a validator per component type, which of
// their properties hold component ids, the catalog's functions and theme.
type A2UI struct {
	// Version is the A2UI version of the catalog: "v0.9" or "v0.8".
	Version string
	// ID is the catalog id the client knows the catalog by, which createSurface (v0.9)
	// and beginRendering (v0.8) name.
	ID string

	components map[string]*Component
	names      []string // sorted
	functions  map[string]*Function
	fnames     []string // sorted
	theme      *jsonschema.Schema
	view       view
}

// Component is one component type of an A2UI catalog.
type Component struct {
	Name string
	// Refs are the properties holding ids of other components.
	Refs []Ref
	// Props lists the properties the component may have, sorted (v0.9: id and component
	// included).
	Props []string

	schema *jsonschema.Schema
	node   *SchemaNode
}

// RefKind says how a property refers to components.
type RefKind uint8

// Kinds of component references.
const (
	// RefOne is a property holding one component id (child, trigger, content).
	RefOne RefKind = iota
	// RefList is a child list: v0.9 an array of ids or a template {componentId, path};
	// v0.8 {explicitList: [ids]} or {template: {componentId, dataBinding}}, or an array of
	// ids where a custom catalog declares one.
	RefList
	// RefItems is an array of objects each holding one id under Field (tabs[].child).
	RefItems
)

// Ref is a property of a component type that refers to other components.
type Ref struct {
	Prop  string
	Kind  RefKind
	Field string // the id's property in each item, for RefItems
}

// Function is a client-side function of a v0.9 catalog.
type Function struct {
	Name string
	// ReturnType is the type the function returns ("string", "boolean", …), or "" when
	// the catalog does not say.
	ReturnType string
	// Description is what the catalog says the function does.
	Description string
	// Params is the schema of the function's arguments (an object), or nil.
	Params *SchemaNode

	schema *jsonschema.Schema // of a call: {"call": name, "args": {…}, "returnType"}
	ref    string             // where the schema is in the compiled catalog
}

// Check validates a call of the function ({"call", "args", "returnType"}) against the
// catalog: its arguments, and its return type. at is the JSON pointer of v.
func (f *Function) Check(v map[string]any, at string, r *Report) {
	if f.schema == nil {
		return
	}
	var cr Report
	validateA2UI(f.schema, v, at, &cr)
	for _, x := range cr.Violations {
		if x.Message == falseSchema {
			x.Message = falseMessage(x.Pointer, at, f.Name+" does not take it")
		}
		r.Violations = append(r.Violations, x)
	}
}

// Component returns the component type named name.
func (a *A2UI) Component(name string) (*Component, bool) {
	c, ok := a.components[name]
	return c, ok
}

// ComponentNames lists the catalog's component types, sorted.
func (a *A2UI) ComponentNames() []string { return a.names }

// Function returns the function named name.
func (a *A2UI) Function(name string) (*Function, bool) {
	f, ok := a.functions[name]
	return f, ok
}

// FunctionNames lists the catalog's functions, sorted.
func (a *A2UI) FunctionNames() []string { return a.fnames }

// Check validates a component against its type's schema: in v0.9 the whole component
// object ({id, component, …properties}), in v0.8 the properties object under the type
// name. at is the JSON pointer of v; each violation's pointer starts with it.
//
// The violations say what is wrong where it is wrong: when a value matches none of the
// forms a property allows (a oneOf or anyOf), the form it was meant to have is chosen
// (the one its JSON type and its "call" fit, with the deepest errors), and its errors are
// told; when no form stands out, the violation says which forms are allowed.
func (c *Component) Check(v map[string]any, at string, r *Report) {
	var cr Report
	validateA2UI(c.schema, v, at, &cr)
	if len(cr.Violations) > 0 {
		c.report(at, &cr, r)
	}
}

// report adds to r the violations of cr, the schema's, with unknown properties named and
// their echoes dropped. It has a frame of its own, so that Check's, on the stack while
// the validation recurses, stays small.
//
//go:noinline
func (c *Component) report(at string, cr, r *Report) {
	// A property the schema does not know fails "unevaluatedProperties": false as a
	// "false schema"; so does every property when another part of the schema failed.
	// Name the unknown ones, and drop the echoes.
	n := 0
	for _, x := range cr.Violations {
		if x.Message == falseSchema {
			if prop, ok := strings.CutPrefix(x.Pointer, at+"/"); ok && !strings.Contains(prop, "/") {
				prop = unescapeToken(prop)
				if _, known := sortedHas(c.Props, prop); !known {
					x.Message = fmt.Sprintf("unknown property %q; %s has: %s", prop, c.Name, strings.Join(c.Props, ", "))
					cr.Violations[n] = x
					n++
				}
				continue
			}
			x.Message = falseMessage(x.Pointer, at, "not allowed here")
		}
		cr.Violations[n] = x
		n++
	}
	if n == 0 && len(cr.Violations) > 0 {
		cr.Violations[0].Message = "does not match the " + c.Name + " schema"
		n = 1
	}
	r.Violations = append(r.Violations, cr.Violations[:n]...)
}

func sortedHas(list []string, s string) (int, bool) {
	i := sort.SearchStrings(list, s)
	return i, i < len(list) && list[i] == s
}

// CheckTheme validates a surface's theme (v0.9 createSurface.theme) or styles (v0.8
// beginRendering.styles) against the catalog.
func (a *A2UI) CheckTheme(v any, at string, r *Report) {
	if a.theme != nil {
		var cr Report
		validateA2UI(a.theme, v, at, &cr)
		for _, x := range cr.Violations {
			if x.Message == falseSchema {
				x.Message = falseMessage(x.Pointer, at, "not allowed here")
			}
			r.Violations = append(r.Violations, x)
		}
	}
}

// falseMessage says what a "false" schema rejected at ptr, under at: a property, or the
// value itself.
func falseMessage(ptr, at, why string) string {
	if ptr == at {
		return "the catalog allows no value here"
	}
	return fmt.Sprintf("unknown property %q: %s", unescapeToken(ptr[strings.LastIndex(ptr, "/")+1:]), why)
}

// falseSchema is the message of a value a "false" schema rejects: a property that
// "unevaluatedProperties": false or "additionalProperties": false does not allow.
const falseSchema = "false schema"

var english = message.NewPrinter(language.English)

// validateA2UI validates v against s and adds what is wrong to r, at pointers under at:
// one violation per problem, with the alternatives of oneOf and anyOf resolved to the
// one the value was meant to match ([explain]). A property that a "false" schema
// rejects comes with the message falseSchema, unless another error is at or under it
// (then it is an echo of that error).
func validateA2UI(s *jsonschema.Schema, v any, at string, r *Report) {
	if err := s.Validate(v); err != nil {
		reportA2UI(err, at, r)
	}
}

// reportA2UI adds the violations a failed validation found to r. It has a frame of its
// own, so that validateA2UI's, on the stack while the validation recurses, stays small.
//
//go:noinline
func reportA2UI(err error, at string, r *Report) {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		r.Add(at, "%v", err)
		return
	}
	errs := explain(ve, 0)
	seen := map[string]bool{}
	for _, e := range errs {
		if e.false {
			echo := false
			for _, o := range errs {
				if !o.false && (o.ptr == e.ptr || strings.HasPrefix(o.ptr, e.ptr+"/")) {
					echo = true
					break
				}
			}
			if echo {
				continue
			}
		}
		key := e.ptr + "\x00" + e.msg
		if seen[key] {
			continue
		}
		seen[key] = true
		r.Violations = append(r.Violations, Violation{Pointer: at + e.ptr, Message: e.msg})
	}
	sort.SliceStable(r.Violations, func(i, j int) bool { return r.Violations[i].Pointer < r.Violations[j].Pointer })
}

// schemaError is one problem a schema found, at a pointer relative to the validated value.
type schemaError struct {
	ptr, msg string
	kind     jsonschema.ErrorKind
	false    bool // a false schema: a property that is not allowed
}

func instancePointer(loc []string) string {
	var sb strings.Builder
	for _, t := range loc {
		sb.WriteByte('/')
		sb.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return sb.String()
}

func unescapeToken(t string) string {
	return strings.NewReplacer("~1", "/", "~0", "~").Replace(t)
}

// explain turns a validation error tree into the problems worth telling.
func explain(e *jsonschema.ValidationError, depth int) []schemaError {
	if depth > 64 {
		return nil
	}
	switch k := e.ErrorKind.(type) {
	case *kind.Schema, *kind.AllOf, *kind.Reference, *kind.Group:
		var out []schemaError
		for _, c := range e.Causes {
			out = append(out, explain(c, depth+1)...)
		}
		if len(out) > 0 || len(e.Causes) > 0 {
			return out
		}
	case *kind.OneOf:
		if len(k.Subschemas) == 0 {
			return chooseAlternative(e, depth)
		}
		return []schemaError{{ptr: instancePointer(e.InstanceLocation), kind: k,
			msg: "matches more than one of the forms allowed here (" + formName(e.SchemaURL) + "); write it so that it matches exactly one"}}
	case *kind.AnyOf:
		return chooseAlternative(e, depth)
	case *kind.FalseSchema:
		return []schemaError{{ptr: instancePointer(e.InstanceLocation), msg: falseSchema, kind: k, false: true}}
	case *kind.AdditionalProperties:
		// One per property, as "unevaluatedProperties": false has them.
		props := append([]string(nil), k.Properties...)
		sort.Strings(props)
		out := make([]schemaError, len(props))
		for i, p := range props {
			out[i] = schemaError{ptr: instancePointer(append(append([]string(nil), e.InstanceLocation...), p)), msg: falseSchema, kind: k, false: true}
		}
		return out
	}
	return []schemaError{{ptr: instancePointer(e.InstanceLocation), msg: e.ErrorKind.LocalizedString(english), kind: e.ErrorKind}}
}

// forms says, for the shared types of the v0.9 common types and catalogs, which values a
// property of that type takes.
var forms = map[string]string{
	"DynamicString":     `a string, a data binding {"path":"/json/pointer"}, or a function call {"call":…,"args":{…},"returnType":"string"}`,
	"DynamicNumber":     `a number, a data binding {"path":"/json/pointer"}, or a function call {"call":…,"args":{…},"returnType":"number"}`,
	"DynamicBoolean":    `a boolean, a data binding {"path":"/json/pointer"}, or a function call {"call":…,"args":{…},"returnType":"boolean"}`,
	"DynamicStringList": `an array of strings, a data binding {"path":"/json/pointer"}, or a function call {"call":…,"args":{…},"returnType":"array"}`,
	"DynamicValue":      `a string, number, boolean or array, a data binding {"path":"/json/pointer"}, or a function call {"call":…,"args":{…}}`,
	"ChildList":         `an array of component ids ["a","b"], or a template {"componentId":"<id>","path":"/list"}`,
	"Action":            `{"event":{"name":"<name>","context":{…}}} (sent to the server) or {"functionCall":{"call":"<function>","args":{…}}} (run on the client)`,
	"FunctionCall":      `a function call {"call":"<function of the catalog>","args":{…}}`,
	"anyFunction":       `a call of one of the catalog's functions, with the arguments it takes`,
}

// formName names the type a schema URL points to: the last token of its fragment.
func formName(url string) string {
	_, frag, _ := strings.Cut(url, "#")
	if i := strings.LastIndex(frag, "/"); i >= 0 {
		frag = frag[i+1:]
	}
	return unescapeToken(frag)
}

// chooseAlternative explains a oneOf or anyOf that no alternative matched. The value was
// meant to match the alternative whose JSON type it has and whose "call" (the name of a
// function) it names, with the deepest errors: those errors are told. When no
// alternative stands out, the value is told the forms it may take.
func chooseAlternative(e *jsonschema.ValidationError, depth int) []schemaError {
	loc := instancePointer(e.InstanceLocation)
	type alt struct {
		errs     []schemaError
		typeMiss bool // the value's JSON type is not one the alternative allows
		keyMiss  bool // the value has properties the alternative does not allow
		callMiss bool // the value calls another function than the alternative
		depth    int  // the depth of its deepest error
		got      string
	}
	alts := make([]alt, 0, len(e.Causes))
	for _, c := range e.Causes {
		a := alt{errs: explain(c, depth+1), depth: -1}
		for _, x := range a.errs {
			switch k := x.kind.(type) {
			case *kind.Type:
				if x.ptr == loc {
					a.typeMiss, a.got = true, k.Got
				}
			case *kind.Const:
				if x.ptr == loc+"/call" {
					a.callMiss = true
				}
			}
			if i := strings.LastIndex(x.ptr, "/"); x.false && i >= 0 && x.ptr[:i] == loc {
				a.keyMiss = true
			}
			if d := strings.Count(x.ptr, "/"); d > a.depth {
				a.depth = d
			}
		}
		alts = append(alts, a)
	}
	filter := func(drop func(alt) bool) {
		var keep []alt
		for _, a := range alts {
			if !drop(a) {
				keep = append(keep, a)
			}
		}
		if len(keep) > 0 {
			alts = keep
		}
	}
	allTypeMiss, got := true, ""
	for _, a := range alts {
		if !a.typeMiss {
			allTypeMiss = false
		}
		got = a.got
	}
	filter(func(a alt) bool { return a.typeMiss })
	filter(func(a alt) bool { return a.keyMiss })
	filter(func(a alt) bool { return a.callMiss })
	best, n := -1, 0
	for _, a := range alts {
		switch {
		case a.depth > best:
			best, n = a.depth, 1
		case a.depth == best:
			n++
		}
	}
	if n == 1 && !allTypeMiss {
		for _, a := range alts {
			if a.depth == best {
				return a.errs
			}
		}
	}
	name := formName(e.SchemaURL)
	msg := "must be " + forms[name]
	if forms[name] == "" {
		msg = "matches none of the forms " + name + " allows"
		var parts []string
		for _, a := range alts {
			for _, x := range a.errs {
				if !x.false {
					parts = append(parts, strings.TrimPrefix(x.ptr, loc)+" "+x.msg)
					break
				}
			}
		}
		if len(parts) > 0 {
			msg += ": " + strings.Join(parts, "; or ")
		}
	}
	if allTypeMiss && got != "" {
		msg = "got " + got + "; " + msg
	}
	return []schemaError{{ptr: loc, msg: msg, kind: e.ErrorKind}}
}

// compileA2UI compiles the document of an A2UI catalog ({"a2uiCatalog": {…}}).
func compileA2UI(w map[string]any) (*Catalog, error) {
	inner, _ := w[a2uiKey].(map[string]any)
	if inner == nil || len(w) != 1 {
		return nil, errors.New(`an A2UI catalog document is {"a2uiCatalog":{"version","catalogId","catalog"}}`)
	}
	version, _ := inner["version"].(string)
	id, _ := inner["catalogId"].(string)
	doc, _ := inner["catalog"].(map[string]any)
	switch {
	case id == "":
		return nil, errors.New("catalogId: required")
	case doc == nil:
		return nil, errors.New("catalog: must be an object")
	}
	if depth(doc, 0) > maxCatalogDepth {
		return nil, fmt.Errorf("catalog nests deeper than %d levels", maxCatalogDepth)
	}
	var a *A2UI
	var err error
	switch version {
	case A2UIv09:
		a, err = compileA2UI09(doc)
	case A2UIv08:
		a, err = compileA2UI08(doc)
	default:
		return nil, fmt.Errorf("version: %q is not an A2UI version this service knows (v0.9, v0.8)", version)
	}
	if err != nil {
		return nil, err
	}
	a.Version, a.ID = version, id
	canonical, err := json.Marshal(w)
	if err != nil {
		return nil, fmt.Errorf("catalog is not encodable as JSON: %w", err)
	}
	sum := sha256.Sum256(canonical)
	return &Catalog{
		Hash:      base64.RawURLEncoding.EncodeToString(sum[:]),
		Canonical: canonical,
		A2UI:      a,
		// The validators hold decoded schemas: about 20 times the JSON, as for the
		// general validator of widget catalogs.
		size: (derivedFactor + generalFactor) * len(canonical),
	}, nil
}

// compileA2UI09 compiles a v0.9 catalog: either the document form of the specification
// (functions keyed by name, $defs with theme and anyFunction) or the inline form of a
// client's capabilities (functions as a list of {name, parameters, returnType}, theme as
// a map of property schemas). Both are compiled as the document at spec.CatalogURL, where
// the common types look for "catalog.json", next to the common types.
func compileA2UI09(doc map[string]any) (*A2UI, error) {
	comps, err := componentsOf(doc)
	if err != nil {
		return nil, err
	}
	cdoc := make(map[string]any, len(doc)+2)
	for k, v := range doc {
		cdoc[k] = v
	}
	cdoc["$id"] = spec.CatalogURL
	if _, ok := cdoc["$schema"]; !ok {
		cdoc["$schema"] = "https://json-schema.org/draft/2020-12/schema"
	}
	defs := map[string]any{}
	for k, v := range asMap(doc["$defs"]) {
		defs[k] = v
	}
	cdoc["$defs"] = defs
	a := &A2UI{components: map[string]*Component{}, functions: map[string]*Function{}}
	a.view.functions = map[string]*SchemaNode{}

	var alts []any
	switch fs := doc["functions"].(type) {
	case map[string]any: // document form: name → schema of the call
		for name, s := range fs {
			node := schemaNode(s, 0)
			a.view.functions[name] = node
			f := &Function{Name: name, ref: "#/functions/" + pointerToken(name)}
			if node != nil {
				f.Description = node.Description
				if rt := node.Properties["returnType"]; rt != nil {
					f.ReturnType, _ = rt.Const.(string)
				}
				f.Params = node.Properties["args"]
			}
			a.functions[name] = f
			alts = append(alts, map[string]any{"$ref": "#/functions/" + pointerToken(name)})
		}
	case []any: // inline form
		delete(cdoc, "functions")
		for i, f := range fs {
			fm := asMap(f)
			name, _ := fm["name"].(string)
			if name == "" {
				return nil, fmt.Errorf("functions[%d].name: required", i)
			}
			rt, _ := fm["returnType"].(string)
			desc, _ := fm["description"].(string)
			a.functions[name] = &Function{Name: name, ReturnType: rt, Description: desc, Params: schemaNode(fm["parameters"], 0),
				ref: fmt.Sprintf("#/$defs/anyFunction/oneOf/%d", len(alts))}
			args := fm["parameters"]
			if args == nil {
				args = map[string]any{"type": "object"}
			}
			alt := map[string]any{
				"type":       "object",
				"properties": map[string]any{"call": map[string]any{"const": name}, "args": args},
				"required":   []any{"call"},
			}
			if req := asMap(args)["required"]; req != nil && len(StringList(req)) > 0 {
				alt["required"] = []any{"call", "args"}
			}
			alts = append(alts, alt)
		}
	case nil:
	default:
		return nil, errors.New("functions: must be an object (name → schema) or a list of function definitions")
	}
	if _, ok := defs["anyFunction"]; !ok {
		if len(alts) == 0 {
			defs["anyFunction"] = false // no function call is valid
		} else {
			defs["anyFunction"] = map[string]any{"oneOf": alts}
		}
	}
	if _, ok := defs["theme"]; !ok {
		theme := map[string]any{"type": "object"}
		if t := asMap(doc["theme"]); t != nil {
			delete(cdoc, "theme")
			theme["properties"] = t
		}
		defs["theme"] = theme
	}
	if _, ok := defs["CatalogComponentCommon"]; !ok {
		defs["CatalogComponentCommon"] = map[string]any{"type": "object", "properties": map[string]any{"weight": map[string]any{"type": "number"}}}
	}

	var common any
	if err := json.Unmarshal(spec.CommonTypes, &common); err != nil {
		return nil, fmt.Errorf("common types: %w", err)
	}
	comp := jsonschema.NewCompiler()
	comp.UseLoader(noLoader{})
	if err := comp.AddResource(spec.CommonTypesURL, common); err != nil {
		return nil, fmt.Errorf("common types: %w", err)
	}
	if err := comp.AddResource(spec.CatalogURL, cdoc); err != nil {
		return nil, fmt.Errorf("catalog is not a valid JSON Schema: %w", err)
	}
	a.view.root, a.view.common, a.view.commonURL = schemaNode(cdoc, 0), commonTypesView(), spec.CommonTypesURL
	a.view.comps = make(map[string]*SchemaNode, len(comps))
	for name, s := range comps {
		a.view.comps[name] = schemaNode(s, 0)
	}
	for name := range comps {
		if name == "" {
			return nil, errors.New("components: a component name is empty")
		}
		sch, err := comp.Compile(spec.CatalogURL + "#/components/" + pointerToken(name))
		if err != nil {
			return nil, fmt.Errorf("components.%s: not a valid JSON Schema: %s", name, a2uiSchemaError(err))
		}
		node := a.view.comps[name]
		a.components[name] = &Component{Name: name, schema: sch, Refs: refs09(node, a.local), Props: propNames(node, a.Resolve), node: node}
	}
	// Each function's schema, to check calls wherever they are, the arguments of other
	// calls included (which the common types let hold any object). A function whose
	// schema does not compile is checked where the components' schemas check it.
	ownAnyFunction := asMap(doc["$defs"])["anyFunction"] != nil
	for _, f := range a.functions {
		if ownAnyFunction && !strings.HasPrefix(f.ref, "#/functions/") {
			continue // the list form, under the catalog's own anyFunction
		}
		if sch, err := comp.Compile(spec.CatalogURL + f.ref); err == nil {
			f.schema = sch
		}
	}
	theme, err := comp.Compile(spec.CatalogURL + "#/$defs/theme")
	if err != nil {
		return nil, fmt.Errorf("theme: not a valid JSON Schema: %s", a2uiSchemaError(err))
	}
	a.theme = theme
	a.index()
	return a, nil
}

// compileA2UI08 compiles a v0.8 catalog: {components: {Name: schema of its properties},
// styles: {name: schema}}.
func compileA2UI08(doc map[string]any) (*A2UI, error) {
	comps, err := componentsOf(doc)
	if err != nil {
		return nil, err
	}
	cdoc := map[string]any{
		"$schema":    "https://json-schema.org/draft/2020-12/schema",
		"components": comps,
		"$defs":      map[string]any{"styles": map[string]any{"type": "object", "properties": asMap(doc["styles"])}},
	}
	if doc["styles"] == nil {
		cdoc["$defs"] = map[string]any{"styles": map[string]any{"type": "object"}}
	}
	comp := jsonschema.NewCompiler()
	comp.UseLoader(noLoader{})
	const base = "urn:genui:a2ui:v0.8:catalog"
	if err := comp.AddResource(base, cdoc); err != nil {
		return nil, fmt.Errorf("catalog is not a valid JSON Schema: %w", err)
	}
	a := &A2UI{components: map[string]*Component{}, functions: map[string]*Function{}}
	a.view.root = schemaNode(cdoc, 0)
	a.view.comps = make(map[string]*SchemaNode, len(comps))
	for name, s := range comps {
		a.view.comps[name] = schemaNode(s, 0)
	}
	for name := range comps {
		if name == "" {
			return nil, errors.New("components: a component name is empty")
		}
		sch, err := comp.Compile(base + "#/components/" + pointerToken(name))
		if err != nil {
			return nil, fmt.Errorf("components.%s: not a valid JSON Schema: %s", name, a2uiSchemaError(err))
		}
		node := a.view.comps[name]
		a.components[name] = &Component{Name: name, schema: sch, Refs: refs08(node), Props: propNames(node, a.Resolve), node: node}
	}
	styles, err := comp.Compile(base + "#/$defs/styles")
	if err != nil {
		return nil, fmt.Errorf("styles: not a valid JSON Schema: %s", a2uiSchemaError(err))
	}
	a.theme = styles
	a.index()
	return a, nil
}

// commonTypesView is the typed view of the v0.9 common types, read once.
var commonTypesView = sync.OnceValue(func() *SchemaNode {
	var common any
	_ = json.Unmarshal(spec.CommonTypes, &common)
	return schemaNode(common, 0)
})

// componentsOf returns the components of a catalog document: a map of component names to
// their schemas. A catalog may define none (the schemas require only its catalogId): it
// then allows no component, and surfaces of it hold only data.
func componentsOf(doc map[string]any) (map[string]any, error) {
	switch c := doc["components"].(type) {
	case nil:
		return map[string]any{}, nil
	case map[string]any:
		return c, nil
	}
	return nil, errors.New("components: must be an object mapping each component name to its JSON Schema")
}

func (a *A2UI) index() {
	for n := range a.components {
		a.names = append(a.names, n)
	}
	sort.Strings(a.names)
	for n := range a.functions {
		a.fnames = append(a.fnames, n)
	}
	sort.Strings(a.fnames)
}

func a2uiSchemaError(err error) string {
	msg := schemaErrorMessage(err)
	return strings.NewReplacer(spec.CatalogURL, "catalog", spec.CommonTypesURL, "common_types.json").Replace(msg)
}

// pointerToken escapes a JSON Pointer token for use in a URL fragment.
func pointerToken(s string) string {
	s = strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
	return (&url.URL{Fragment: s}).EscapedFragment()
}

// local resolves a reference within the catalog document ("#/…"), and no other.
func (a *A2UI) local(ref string) *SchemaNode {
	if !strings.HasPrefix(ref, "#") {
		return nil
	}
	return a.Resolve(ref)
}

// deref follows the references of a schema, at most 16.
func deref(s *SchemaNode, resolve func(string) *SchemaNode) *SchemaNode {
	for i := 0; s != nil && s.Ref != "" && i < 16; i++ {
		s = resolve(s.Ref)
	}
	return s
}

// refs09 finds the properties of a v0.9 component type that hold component ids: those
// whose schema is (or refers to) the common types' ComponentId or ChildList, arrays of
// objects holding a ComponentId (tabs), and, in catalogs that spell their schemas out,
// child and children. resolve follows the catalog's own references.
func refs09(s *SchemaNode, resolve func(string) *SchemaNode) []Ref {
	var out []Ref
	seen := map[string]bool{}
	var visit func(s *SchemaNode, d int)
	visit = func(s *SchemaNode, d int) {
		s = deref(s, resolve)
		if s == nil || d > 8 {
			return
		}
		for _, name := range s.PropertyNames {
			// A component's own id is a ComponentId too, the one that defines it: a
			// catalog that spells out ComponentCommon has it among the properties.
			if seen[name] || name == "id" {
				continue
			}
			if ref, ok := refOf09(name, s.Properties[name], resolve); ok {
				seen[name] = true
				out = append(out, ref)
			}
		}
		for _, alts := range [][]*SchemaNode{s.AllOf, s.AnyOf, s.OneOf} {
			for _, alt := range alts {
				visit(alt, d+1)
			}
		}
	}
	visit(s, 0)
	sort.Slice(out, func(i, j int) bool { return out[i].Prop < out[j].Prop })
	return out
}

func refOf09(name string, p *SchemaNode, resolve func(string) *SchemaNode) (Ref, bool) {
	switch {
	case p == nil:
		return Ref{}, false
	case isComponentID(p, resolve, 0):
		return Ref{Prop: name, Kind: RefOne}, true
	case isChildList(p, resolve, 0):
		return Ref{Prop: name, Kind: RefList}, true
	}
	if pd := deref(p, resolve); pd != nil {
		if items := deref(pd.Items, resolve); items != nil {
			for _, field := range items.PropertyNames {
				if isComponentID(items.Properties[field], resolve, 0) {
					return Ref{Prop: name, Kind: RefItems, Field: field}, true
				}
			}
		}
		untyped := len(pd.Types) == 0
		switch {
		case name == "child" && (untyped || pd.isType("string")):
			return Ref{Prop: name, Kind: RefOne}, true
		case name == "children" && (untyped || pd.isType("array")):
			return Ref{Prop: name, Kind: RefList}, true
		}
	}
	return Ref{}, false
}

// isType reports whether the schema's "type" is the one type t.
func (s *SchemaNode) isType(t string) bool { return len(s.Types) == 1 && s.Types[0] == t }

// isComponentID reports whether a schema is the common types' ComponentId (by reference
// or title).
func isComponentID(s *SchemaNode, resolve func(string) *SchemaNode, d int) bool {
	if s == nil || d > 6 {
		return false
	}
	if strings.HasSuffix(s.Ref, "/$defs/ComponentId") {
		return true
	} else if strings.HasPrefix(s.Ref, "#") {
		return isComponentID(resolve(s.Ref), resolve, d+1)
	}
	if s.Title == "ComponentId" {
		return true
	}
	for _, alts := range [][]*SchemaNode{s.AllOf, s.AnyOf, s.OneOf} {
		for _, alt := range alts {
			if isComponentID(alt, resolve, d+1) {
				return true
			}
		}
	}
	return false
}

// isChildList reports whether a schema is the common types' ChildList, or spells it out
// (an array of component ids, or a template {componentId, path}).
func isChildList(s *SchemaNode, resolve func(string) *SchemaNode, d int) bool {
	if s == nil || d > 6 {
		return false
	}
	if strings.HasSuffix(s.Ref, "/$defs/ChildList") {
		return true
	} else if strings.HasPrefix(s.Ref, "#") {
		return isChildList(resolve(s.Ref), resolve, d+1)
	}
	if s.Title == "ChildList" {
		return true
	}
	if s.isType("array") && isComponentID(s.Items, resolve, d+1) {
		return true
	}
	for _, alts := range [][]*SchemaNode{s.AnyOf, s.OneOf} {
		for _, alt := range alts {
			if isChildList(alt, resolve, d+1) {
				return true
			}
		}
	}
	return false
}

// refs08 finds the properties of a v0.8 component type that hold component ids. v0.8
// schemas spell everything out, so the properties are known by name and shape: child,
// entryPointChild, contentChild (one id), children ({explicitList} or {template}, or in
// custom catalogs a plain array of ids), and arrays of objects with a child (tabItems).
func refs08(s *SchemaNode) []Ref {
	var out []Ref
	if s == nil {
		return nil
	}
	for _, name := range s.PropertyNames {
		ps := s.Properties[name]
		if ps == nil {
			ps = &SchemaNode{}
		}
		switch {
		case name == "children":
			out = append(out, Ref{Prop: name, Kind: RefList})
		case (name == "child" || strings.HasSuffix(name, "Child")) && (len(ps.Types) == 0 || ps.isType("string")):
			out = append(out, Ref{Prop: name, Kind: RefOne})
		case ps.isType("array") && ps.Items != nil && ps.Items.Properties["child"] != nil:
			out = append(out, Ref{Prop: name, Kind: RefItems, Field: "child"})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Prop < out[j].Prop })
	return out
}

// propNames lists the properties a schema declares, through allOf/anyOf/oneOf and
// references (followed by resolve).
func propNames(s *SchemaNode, resolve func(string) *SchemaNode) []string {
	seen := map[string]bool{}
	var visit func(s *SchemaNode, d int)
	visit = func(s *SchemaNode, d int) {
		if s == nil || d > 12 {
			return
		}
		if s.Ref != "" {
			visit(resolve(s.Ref), d+1)
		}
		for _, name := range s.PropertyNames {
			seen[name] = true
		}
		for _, alts := range [][]*SchemaNode{s.AllOf, s.AnyOf, s.OneOf} {
			for _, alt := range alts {
				visit(alt, d+1)
			}
		}
	}
	visit(s, 0)
	out := make([]string, 0, len(seen))
	for n := range seen {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
