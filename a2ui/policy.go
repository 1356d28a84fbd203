package a2ui

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/genuiserver/genui/a2ui/spec"
	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/policy"
)

// Codes of the violations of a UI policy ([WithPolicy]): the policy's rules.
const (
	CodeUnsafeURL          = string(policy.UnsafeURL)          // a URL whose scheme or host the policy refuses
	CodeFunctionNotAllowed = string(policy.FunctionNotAllowed) // a function the policy does not list
	CodeInaccessible       = string(policy.Inaccessible)       // an image, button or input screen readers cannot name
	CodeSensitiveInput     = string(policy.SensitiveInput)     // an obscured (password) field
)

// WithPolicy has a [Builder] or [Validate] also apply the UI policy p: URLs (as
// literals, bound to the data model, computed by functions), data-model values,
// functions, accessibility and sensitive inputs. What breaks it is a [Violation] whose
// code is the rule's; a builder sends none of it. Without it (or with nil) only the
// catalog and A2UI's rules are checked.
func WithPolicy(p *policy.Policy) Option { return func(o *options) { o.policy = p } }

// rules is what a policy checks of the types of one catalog, found once per catalog.
type rules struct {
	comps map[string]*compRules
	funcs map[string][]policy.Place // URL arguments, under args
	theme []policy.Place
}

type compRules struct {
	urls   []policy.Place
	image  []string // the description properties it declares, when an image
	input  []string // the label properties it declares, when an input
	button bool     // a button whose child must show text
	text   bool     // a Text, whose text may hold Markdown links
}

// builtinKinds pins the URL places of the built-in catalogs, by catalog document.
var builtinKinds = map[string]map[string]policy.Kind{
	V09: {"Image.url": policy.Image, "Video.url": policy.Media, "AudioPlayer.url": policy.Media},
	V08: {"Image.url": policy.Image, "Video.url": policy.Media, "AudioPlayer.url": policy.Media},
}

type rulesKey struct{}

// rulesOf finds what a policy checks of the catalog's types.
func rulesOf(c *catalog.Catalog) *rules {
	return c.Memo(rulesKey{}, func() any {
		a := c.A2UI
		builtin := IsBuiltin(a.Version, a.ID) && a.ID != spec.MinimalCatalogID
		r := &rules{comps: map[string]*compRules{}, funcs: map[string][]policy.Place{}}
		for _, name := range a.ComponentNames() {
			def, _ := a.Component(name)
			cr := &compRules{text: name == "Text"}
			props := componentProps(a, def.Schema())
			for _, p := range sortedNodeKeys(props) {
				kind, pinned := builtinKinds[a.Version][name+"."+p]
				if builtin && pinned {
					cr.urls = append(cr.urls, policy.Place{Path: []string{p}, Kind: kind})
					continue
				}
				if p == "id" || p == "component" || p == "accessibility" {
					continue
				}
				cr.urls = append(cr.urls, nodePlaces(a, name, p, props[p], []string{p}, 0)...)
			}
			if policy.IsImage(name) {
				cr.image = declaredOf(def.Props, append(policy.ImageDescriptions(), "accessibility"))
			}
			if policy.IsInput(name) {
				cr.input = declaredOf(def.Props, append(policy.InputLabels(), "accessibility"))
			}
			for _, ref := range def.Refs {
				if ref.Kind == catalog.RefOne && ref.Prop == "child" && policy.IsButton(name) {
					cr.button = true
				}
			}
			r.comps[name] = cr
		}
		for _, name := range a.FunctionNames() {
			f, _ := a.Function(name)
			if f.Params == nil {
				continue
			}
			for _, p := range f.Params.PropertyNames {
				r.funcs[name] = append(r.funcs[name], nodePlaces(a, name, p, f.Params.Properties[p], []string{p}, 0)...)
			}
		}
		if th := a.Theme(); th != nil {
			for _, p := range th.PropertyNames {
				r.theme = append(r.theme, nodePlaces(a, "theme", p, th.Properties[p], []string{p}, 0)...)
			}
		}
		return r
	}).(*rules)
}

func declaredOf(props []string, names []string) []string {
	var out []string
	for _, n := range names {
		if i := sort.SearchStrings(props, n); i < len(props) && props[i] == n {
			out = append(out, n)
		}
	}
	return out
}

func sortedNodeKeys(m map[string]*catalog.SchemaNode) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// componentProps gathers the properties a component type declares, through allOf, anyOf,
// oneOf and references.
func componentProps(a *catalog.A2UI, s *catalog.SchemaNode) map[string]*catalog.SchemaNode {
	out := map[string]*catalog.SchemaNode{}
	var visit func(s *catalog.SchemaNode, d int)
	visit = func(s *catalog.SchemaNode, d int) {
		if s == nil || d > 12 {
			return
		}
		if s.Ref != "" {
			visit(a.Resolve(s.Ref), d+1)
		}
		for _, n := range s.PropertyNames {
			if out[n] == nil || out[n].Ref != "" && s.Properties[n] != nil {
				out[n] = s.Properties[n]
			}
		}
		for _, alts := range [][]*catalog.SchemaNode{s.AllOf, s.AnyOf, s.OneOf} {
			for _, alt := range alts {
				visit(alt, d+1)
			}
		}
	}
	visit(s, 0)
	return out
}

// nodePlaces finds the URL places of a property from its schema: one marked with a URL
// format, or named as a URL and holding a string (a v0.9 DynamicString, a v0.8
// {literalString, path}); else those of the objects and arrays it holds.
func nodePlaces(a *catalog.A2UI, typ, prop string, s *catalog.SchemaNode, path []string, depth int) []policy.Place {
	if s == nil || depth > 4 {
		return nil
	}
	if urlFormat(a, s, 0) || policy.URLName(prop) && stringValued(a, s) {
		return []policy.Place{{Path: append([]string{}, path...), Kind: policy.KindOf(typ, prop)}}
	}
	if catalog.CommonTypeName(s.Ref) != "" {
		return nil // a dynamic value, a child list, an action: no URL of its own
	}
	var out []policy.Place
	if d := deref(a, s); d != nil {
		for _, k := range d.PropertyNames {
			out = append(out, nodePlaces(a, typ, k, d.Properties[k], append(path, k), depth+1)...)
		}
		if d.Items != nil {
			out = append(out, nodePlaces(a, typ, prop, d.Items, append(path, "*"), depth+1)...)
		}
	}
	return out
}

// deref follows a schema's references within the catalog.
func deref(a *catalog.A2UI, s *catalog.SchemaNode) *catalog.SchemaNode {
	for i := 0; s != nil && s.Ref != "" && i < 8; i++ {
		if catalog.CommonTypeName(s.Ref) != "" {
			return nil
		}
		s = a.Resolve(s.Ref)
	}
	return s
}

// urlFormat reports whether a schema, or one of its alternatives, has a URL format.
func urlFormat(a *catalog.A2UI, s *catalog.SchemaNode, d int) bool {
	if s == nil || d > 6 {
		return false
	}
	if policy.IsURLFormat(s.Format) {
		return true
	}
	if s.Ref != "" && catalog.CommonTypeName(s.Ref) == "" && urlFormat(a, a.Resolve(s.Ref), d+1) {
		return true
	}
	for _, alts := range [][]*catalog.SchemaNode{s.AllOf, s.AnyOf, s.OneOf} {
		for _, alt := range alts {
			if urlFormat(a, alt, d+1) {
				return true
			}
		}
	}
	return false
}

// stringValued reports whether a property holds a string: type string, a v0.9
// DynamicString, a v0.8 {literalString, path}.
func stringValued(a *catalog.A2UI, s *catalog.SchemaNode) bool {
	switch catalog.CommonTypeName(s.Ref) {
	case "DynamicString":
		return true
	case "":
	default:
		return false
	}
	d := deref(a, s)
	if d == nil {
		return false
	}
	if len(d.Types) == 0 && d.Properties == nil && d.Items == nil && d.AnyOf == nil && d.OneOf == nil {
		return true // untyped
	}
	for _, t := range d.Types {
		if t == "string" {
			return true
		}
	}
	if d.Properties["literalString"] != nil {
		return true
	}
	for _, alts := range [][]*catalog.SchemaNode{d.AnyOf, d.OneOf} {
		for _, alt := range alts {
			if stringValued(a, alt) {
				return true
			}
		}
	}
	return false
}

// binding is a data path a URL place is bound to.
type binding struct {
	path string // a JSON Pointer; relative inside templates
	kind policy.Kind
	at   string // where the component binds it
}

// urlValue judges the value v at a URL place of kind k, at pointer at: a literal URL, a
// data binding (noted, to judge what the data model holds there), or a function call.
func (vc *valueCheck) urlValue(v any, k policy.Kind, at string) {
	p := vc.policy
	judge := func(s string, at string) {
		if err := p.CheckURL(s, k); err != nil {
			vc.pol.AddCode(CodeUnsafeURL, at, "%s", err)
		}
	}
	switch t := v.(type) {
	case string:
		judge(t, at)
	case map[string]any:
		if vc.version == V08 {
			if s, ok := t["literalString"].(string); ok {
				judge(s, at+"/literalString")
			}
			if path, ok := t["path"].(string); ok && path != "" {
				vc.bindings = append(vc.bindings, binding{path, k, at + "/path"})
			}
			return
		}
		if _, ok := t["call"]; ok {
			if err := p.CheckComputedURL(k); err != nil {
				vc.pol.AddCode(CodeUnsafeURL, at, "%s", err)
			}
			return
		}
		if path, ok := t["path"].(string); ok && path != "" && len(t) == 1 {
			vc.bindings = append(vc.bindings, binding{path, k, at + "/path"})
		}
	}
}

// each calls fn with each value at path under v ("*": each item of an array), and its
// pointer under at.
func each(v any, path []string, at string, fn func(v any, at string)) {
	if len(path) == 0 {
		fn(v, at)
		return
	}
	if path[0] == "*" {
		for i, e := range asList(v) {
			each(e, path[1:], at+"/"+strconv.Itoa(i), fn)
		}
		return
	}
	if e, ok := asMap(v)[path[0]]; ok {
		each(e, path[1:], at+"/"+escape(path[0]), fn)
	}
}

// checkPolicy applies the policy to a component: its URL places, the Markdown links of
// a Text, sensitive inputs, and what names an image or an input.
func (b *Builder) checkPolicy(c *comp, propsAt string, vc *valueCheck) {
	p := b.policy
	cr := b.rules.comps[c.typ]
	if cr == nil {
		return
	}
	c.rules = cr
	if p.On(policy.UnsafeURL) {
		for _, pl := range cr.urls {
			each(c.props, pl.Path, propsAt, func(v any, at string) { vc.urlValue(v, pl.Kind, at) })
		}
		if cr.text {
			if s, at := b.literal(c.props["text"], propsAt+"/text"); s != "" {
				for _, l := range policy.MarkdownLinks(s) {
					if err := p.CheckURL(l, policy.Link); err != nil {
						vc.pol.AddCode(CodeUnsafeURL, at, "%s (a Markdown link)", err)
						break
					}
				}
			}
		}
	}
	if p.On(policy.SensitiveInput) && sensitive(c.props) {
		for _, k := range sortedKeys(c.props) {
			if policy.Sensitive(k, c.props[k]) {
				vc.pol.AddCode(CodeSensitiveInput, propsAt+"/"+escape(k), "%s", policy.SensitiveMessage)
			}
		}
	}
	if p.On(policy.Inaccessible) {
		if len(cr.image) > 0 && !b.named(c.props, cr.image) {
			vc.pol.AddCode(CodeInaccessible, propsAt, policy.InaccessibleImage, names(cr.image))
		}
		if len(cr.input) > 0 && !b.named(c.props, cr.input) {
			vc.pol.AddCode(CodeInaccessible, propsAt, policy.InaccessibleInput, names(cr.input))
		}
	}
}

// names lists properties for a message; accessibility stands for its label.
func names(props []string) string {
	out := make([]string, len(props))
	for i, p := range props {
		out[i] = p
		if p == "accessibility" {
			out[i] = "accessibility.label"
		}
	}
	return strings.Join(out, " or ")
}

// literal returns the literal string of a dynamic string (v0.9 a string, v0.8
// {"literalString"}) and its pointer; "" for a binding or a call.
func (b *Builder) literal(v any, at string) (string, string) {
	if s, ok := v.(string); ok {
		return s, at
	}
	if b.version == V08 {
		if s, ok := asMap(v)["literalString"].(string); ok {
			return s, at + "/literalString"
		}
	}
	return "", at
}

// set reports whether a dynamic string is set: a non-empty literal, or a binding or a
// call, which the policy cannot read.
func (b *Builder) set(v any) bool {
	switch t := v.(type) {
	case nil:
		return false
	case string:
		return strings.TrimSpace(t) != ""
	case map[string]any:
		if b.version == V08 {
			s, lit := t["literalString"].(string)
			_, bound := t["path"].(string)
			return bound || lit && strings.TrimSpace(s) != ""
		}
		return len(t) > 0
	}
	return true
}

// named reports whether one of the properties names the component: set, or, for
// accessibility, its label.
func (b *Builder) named(props map[string]any, list []string) bool {
	for _, n := range list {
		v := props[n]
		if n == "accessibility" {
			v = asMap(v)["label"]
		}
		if b.set(v) {
			return true
		}
	}
	return false
}

// textOf reports whether a component shows text a screen reader can say: a Text with
// text, a component with an accessibility label, or one whose children (refs lists
// the ids it refers to as it is shown) do.
func (b *Builder) textOf(c *comp, props map[string]any, refs func() []string, child func(id string) bool) bool {
	if c.rules != nil && c.rules.text && b.set(props["text"]) {
		return true
	}
	if b.set(asMap(props["accessibility"])["label"]) {
		return true
	}
	for _, id := range refs() {
		if child(id) {
			return true
		}
	}
	return false
}

// mute reports whether c is a button the policy refuses: no accessibility label, and a
// child that (as hasText tells) shows no text.
func (b *Builder) mute(c *comp, props map[string]any, hasText func(id string) bool) bool {
	if b.policy == nil || !b.policy.On(policy.Inaccessible) {
		return false
	}
	if c.rules == nil || !c.rules.button || b.set(asMap(props["accessibility"])["label"]) {
		return false
	}
	child, _ := props["child"].(string)
	return !hasText(child)
}

// hasText reports whether component id of s, as written, shows text.
func (b *Builder) hasText(s *surface, id string, depth int) bool {
	c := s.have[id]
	if c == nil || depth > maxDepth {
		return false
	}
	return b.textOf(c, c.props, func() []string { return looseRefs(b.version, c.obj) }, func(t string) bool { return b.hasText(s, t, depth+1) })
}

// textShown reports whether component id, as a flush shows it, shows text.
func (w *walker) textShown(id string, inTpl bool, depth int) bool {
	k := walkKey{id, inTpl}
	c := w.s.have[id]
	if c == nil || w.state[k] != 2 || depth > maxDepth {
		return false
	}
	return w.b.textOf(c, w.props[k], func() []string { return w.refs(id) }, func(t string) bool { return w.textShown(t, inTpl, depth+1) })
}

// bindingsOK judges the data the URL places of a component are bound to, as the data
// model of s holds it; it reports the bindings that the data refuses.
func (b *Builder) bindingsOK(s *surface, c *comp) bool {
	ok := true
	for _, bd := range c.bindings {
		if !strings.HasPrefix(bd.path, "/") {
			var hits []string
			for ptr, k := range s.suspect {
				if k&bd.kind != 0 && strings.HasSuffix(ptr, "/"+bd.path) {
					hits = append(hits, ptr)
				}
			}
			if len(hits) > 0 {
				sort.Strings(hits)
				b.r.AddCode(CodeUnsafeURL, bd.at, "the UI policy refuses this %s URL: it is bound to %s, and the data model holds a URL there that the policy refuses", bd.kind, hits[0])
				ok = false
			}
			continue
		}
		if k := s.suspect[bd.path]; k&bd.kind != 0 {
			b.r.AddCode(CodeUnsafeURL, bd.at, "the UI policy refuses this %s URL: the data model holds a URL at %s that the policy refuses", bd.kind, bd.path)
			ok = false
		}
	}
	return ok
}

// bind notes the data paths the URL places of a component are bound to.
func (s *surface) bind(c *comp) {
	for _, bd := range c.bindings {
		if s.bound == nil {
			s.bound = map[string]policy.Kinds{}
		}
		s.bound[bd.path] |= bd.kind
	}
}

// boundKinds returns the kinds of the URL places bound to data pointer ptr.
func (s *surface) boundKinds(ptr string) policy.Kinds {
	k := s.bound[ptr]
	for path, pk := range s.bound {
		if !strings.HasPrefix(path, "/") && strings.HasSuffix(ptr, "/"+path) {
			k |= pk
		}
	}
	return k
}

// dataString is one string a data-model message sets.
type dataString struct {
	ptr string // its pointer in the data model
	at  string // its pointer in the message
	v   string
}

// dataStrings lists the strings a data-model message sets, and the paths whose values it
// replaces ("" the whole data model).
func (b *Builder) dataStrings(m *Message, at string) ([]string, []dataString) {
	base, _ := m.Body["path"].(string)
	if base == "" || base == "/" {
		base = ""
	} else if !strings.HasPrefix(base, "/") {
		base = "/" + base
	}
	var out []dataString
	var walk func(v any, ptr, at string, depth int)
	walk = func(v any, ptr, at string, depth int) {
		if depth > maxDepth {
			return
		}
		switch t := v.(type) {
		case string:
			out = append(out, dataString{ptr, at, t})
		case []any:
			for i, e := range t {
				walk(e, ptr+"/"+strconv.Itoa(i), at+"/"+strconv.Itoa(i), depth+1)
			}
		case map[string]any:
			for _, k := range sortedKeys(t) {
				walk(t[k], ptr+"/"+escape(k), at+"/"+escape(k), depth+1)
			}
		}
	}
	if b.version == V09 {
		if v, ok := m.Body["value"]; ok {
			walk(v, base, at+"/value", 0)
		}
		return []string{base}, out
	}
	var replaced []string
	for _, e := range asList(m.Body["contents"]) {
		key, _ := asMap(e)["key"].(string)
		replaced = append(replaced, base+"/"+escape(key))
	}
	var entries func(list []any, ptr, at string, depth int)
	entries = func(list []any, ptr, at string, depth int) {
		for i, e := range list {
			em := asMap(e)
			key, _ := em["key"].(string)
			eat := at + "/" + strconv.Itoa(i)
			if s, ok := em["valueString"].(string); ok {
				out = append(out, dataString{ptr + "/" + escape(key), eat + "/valueString", s})
			}
			if sub, ok := em["valueMap"].([]any); ok && depth < 2 {
				entries(sub, ptr+"/"+escape(key), eat+"/valueMap", depth+1)
			}
		}
	}
	entries(asList(m.Body["contents"]), base, at+"/contents", 0)
	return replaced, out
}

// checkData applies the policy to a data-model message of s: no string that runs script
// or reads local data, and none that a URL place bound to it refuses. When r is nil
// (a message the client has), nothing is reported. It returns whether the message may be
// sent, and notes the strings a URL place bound to them later would refuse.
func (b *Builder) checkData(s *surface, m *Message, at string, r *catalog.Report) bool {
	p := b.policy
	if !p.On(policy.UnsafeURL) {
		return true
	}
	replaced, strs := b.dataStrings(m, at)
	ok := true
	for _, d := range strs {
		err := p.CheckData(d.v)
		if err == nil {
			if k := s.boundKinds(d.ptr); k != 0 {
				for _, kind := range []policy.Kind{policy.Link, policy.Image, policy.Media} {
					if k&kind != 0 {
						if e := p.CheckURL(d.v, kind); e != nil {
							err = fmt.Errorf("%w (bound where a URL goes)", e)
							break
						}
					}
				}
			}
		}
		if err != nil {
			ok = false
			if r != nil {
				r.AddCode(CodeUnsafeURL, d.at, "%s", err)
			}
		}
	}
	if !ok && r != nil {
		return false
	}
	// What the message replaces, then what it sets.
	for ptr := range s.suspect {
		for _, base := range replaced {
			if ptr == base || base == "" || strings.HasPrefix(ptr, base+"/") {
				delete(s.suspect, ptr)
				break
			}
		}
	}
	for _, d := range strs {
		if k := p.Refuses(d.v); k != 0 {
			if s.suspect == nil {
				s.suspect = map[string]policy.Kinds{}
			}
			s.suspect[d.ptr] = k
		}
	}
	return true
}

// themePolicy applies the policy to the URLs of a surface's theme (v0.9) or styles
// (v0.8), at pointer at.
func (b *Builder) themePolicy(theme any, at string) {
	if !b.policy.On(policy.UnsafeURL) {
		return
	}
	for _, pl := range b.rules.theme {
		each(theme, pl.Path, at, func(v any, at string) {
			if s, ok := v.(string); ok {
				if err := b.policy.CheckURL(s, pl.Kind); err != nil {
					b.r.AddCode(CodeUnsafeURL, at, "%s", err)
				}
			}
		})
	}
}

// sensitive reports whether a property makes the component an obscured input.
func sensitive(props map[string]any) bool {
	for k, v := range props {
		if policy.Sensitive(k, v) {
			return true
		}
	}
	return false
}
