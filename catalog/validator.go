package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// A schema node compiled for fast validation of model output. It covers the keywords that
// widget catalogs use; a catalog using anything else is validated with the general
// validator instead (see errUnsupported). Validating a valid value allocates nothing.
//
// Nodes keep no reference to the schema they were compiled from, so that a compiled
// catalog does not hold its decoded JSON: a plain reference ({"$ref": …}) is its target's
// node, the schemas true and {} (and schemas of annotations only) share one node, and so
// do schemas that only constrain the type. The rarer keywords live in ext.
type node struct {
	flags    uint8 // fAccept, fReject, fUnique
	types    uint8 // bit set of t*; 0 = any
	props    []prop
	required []string
	addl     *node // nil: any additional property is allowed
	items    *node
	ext      *ext
}

const (
	fAccept uint8 = 1 << iota // the schema true / {}
	fReject                   // the schema false
	fUnique                   // uniqueItems
)

// prop is one entry of "properties"; a node's props are sorted by name.
type prop struct {
	name string
	n    *node
}

// ext holds the keywords few schemas use.
type ext struct {
	enum     []any
	konst    any
	hasConst bool
	min, max float64
	exMin    bool
	exMax    bool
	hasMin   bool
	hasMax   bool
	minLen   int
	maxLen   int // -1: none
	minItems int
	maxItems int // -1: none
	minProps int
	maxProps int // -1: none
	pattern  *regexp.Regexp
	allOf    []*node
	anyOf    []*node
	oneOf    []*node
	not      *node
}

// Shared nodes.
var (
	acceptNode = &node{flags: fAccept}
	rejectNode = &node{flags: fReject}
	typeNodes  [128]*node // by type bits
)

func init() {
	for i := range typeNodes {
		typeNodes[i] = &node{types: uint8(i)}
	}
}

// prop returns the schema of property name, or nil.
func (n *node) prop(name string) *node {
	ps := n.props
	if len(ps) <= 8 {
		for i := range ps {
			if ps[i].name == name {
				return ps[i].n
			}
		}
		return nil
	}
	i := sort.Search(len(ps), func(i int) bool { return ps[i].name >= name })
	if i < len(ps) && ps[i].name == name {
		return ps[i].n
	}
	return nil
}

func (n *node) x() *ext {
	if n.ext == nil {
		n.ext = &ext{maxLen: -1, maxItems: -1, maxProps: -1}
	}
	return n.ext
}

const (
	tNull uint8 = 1 << iota
	tBool
	tNumber
	tInteger
	tString
	tArray
	tObject
)

var typeBits = map[string]uint8{"null": tNull, "boolean": tBool, "number": tNumber, "integer": tInteger, "string": tString, "array": tArray, "object": tObject}

var errUnsupported = errors.New("unsupported schema keyword")

// Keywords with no effect on validation.
var annotations = map[string]bool{
	"$schema": true, "$comment": true, "title": true, "description": true, "default": true,
	"examples": true, "deprecated": true, "readOnly": true, "writeOnly": true, "format": true,
	"$defs": true, "definitions": true, "propertyOrdering": true, "contentMediaType": true,
	"contentEncoding": true,
}

// compiler turns schema maps into nodes, resolving local references.
type compiler struct {
	r     resolver
	memo  map[string]*node // by $ref
	bytes int              // what the nodes compiled so far hold, about
}

func newCompiler(root map[string]any) *compiler {
	return &compiler{r: resolver{root: root}, memo: map[string]*node{}}
}

func (c *compiler) compile(v any, depth int) (*node, error) {
	if depth > 64 {
		return nil, fmt.Errorf("%w: nesting deeper than 64", errUnsupported)
	}
	switch s := v.(type) {
	case bool:
		if s {
			return acceptNode, nil
		}
		return rejectNode, nil
	case map[string]any:
		return c.compileMap(s, depth)
	case nil:
		return acceptNode, nil
	}
	return nil, fmt.Errorf("%w: schema of type %T", errUnsupported, v)
}

// ref compiles the target of a local reference, once per reference.
func (c *compiler) ref(ref string, depth int) (*node, error) {
	if target, ok := c.memo[ref]; ok {
		return target, nil
	}
	m := c.r.pointer(ref)
	if m == nil {
		if b, isBool := c.r.pointerAny(ref).(bool); isBool {
			return c.compile(b, depth)
		}
		return nil, fmt.Errorf("%w: $ref %q", errUnsupported, ref)
	}
	target := &node{}
	c.memo[ref] = target // a placeholder for recursive references
	t, err := c.compileMap(m, depth+1)
	if err != nil {
		return nil, err
	}
	*target = *t
	return target, nil
}

func (c *compiler) compileMap(s map[string]any, depth int) (*node, error) {
	n := &node{}
	constrained := false // anything beyond "type" and annotations
	for k, v := range s {
		var err error
		switch k {
		case "$ref":
			ref, _ := v.(string)
			target, err := c.ref(ref, depth)
			if err != nil {
				return nil, err
			}
			n.x().allOf = append(n.x().allOf, target)
		case "type":
			switch t := v.(type) {
			case string:
				n.types |= typeBits[t]
			case []any:
				for _, e := range t {
					s, _ := e.(string)
					n.types |= typeBits[s]
				}
			}
			if n.types&tNumber != 0 {
				n.types |= tInteger
			}
			continue
		case "properties":
			m, _ := v.(map[string]any)
			n.props = make([]prop, 0, len(m))
			for name, ps := range m {
				pn, err := c.compile(ps, depth+1)
				if err != nil {
					return nil, err
				}
				n.props = append(n.props, prop{name: name, n: pn})
			}
			sort.Slice(n.props, func(i, j int) bool { return n.props[i].name < n.props[j].name })
		case "required":
			n.required = StringList(v)
		case "additionalProperties":
			if b, ok := v.(bool); ok && b {
				continue
			}
			if n.addl, err = c.compile(v, depth+1); err != nil {
				return nil, err
			}
		case "items":
			if _, isArr := v.([]any); isArr {
				return nil, fmt.Errorf("%w: tuple items", errUnsupported)
			}
			if n.items, err = c.compile(v, depth+1); err != nil {
				return nil, err
			}
		case "enum":
			n.x().enum, _ = v.([]any)
		case "const":
			n.x().konst, n.x().hasConst = v, true
		case "minimum":
			n.x().min, n.x().hasMin = num(v), true
		case "maximum":
			n.x().max, n.x().hasMax = num(v), true
		case "exclusiveMinimum":
			if b, ok := v.(bool); ok { // draft 4
				n.x().exMin = b
				break
			}
			n.x().min, n.x().hasMin, n.x().exMin = num(v), true, true
		case "exclusiveMaximum":
			if b, ok := v.(bool); ok {
				n.x().exMax = b
				break
			}
			n.x().max, n.x().hasMax, n.x().exMax = num(v), true, true
		case "minLength":
			n.x().minLen = int(num(v))
		case "maxLength":
			n.x().maxLen = int(num(v))
		case "minItems":
			n.x().minItems = int(num(v))
		case "maxItems":
			n.x().maxItems = int(num(v))
		case "minProperties":
			n.x().minProps = int(num(v))
		case "maxProperties":
			n.x().maxProps = int(num(v))
		case "uniqueItems":
			if b, _ := v.(bool); b {
				n.flags |= fUnique
			}
		case "pattern":
			p, _ := v.(string)
			if n.x().pattern, err = regexp.Compile(p); err != nil {
				return nil, fmt.Errorf("%w: pattern %q", errUnsupported, p)
			}
		case "allOf", "anyOf", "oneOf":
			arr, _ := v.([]any)
			list := make([]*node, 0, len(arr))
			for _, a := range arr {
				sub, err := c.compile(a, depth+1)
				if err != nil {
					return nil, err
				}
				list = append(list, sub)
			}
			switch k {
			case "allOf":
				n.x().allOf = append(n.x().allOf, list...)
			case "anyOf":
				n.x().anyOf = list
			default:
				n.x().oneOf = list
			}
		case "not":
			if n.x().not, err = c.compile(v, depth+1); err != nil {
				return nil, err
			}
		default:
			if !annotations[k] && !strings.HasPrefix(k, "x-") {
				return nil, fmt.Errorf("%w: %q", errUnsupported, k)
			}
			continue
		}
		constrained = true
	}
	switch {
	case !constrained && n.types == 0:
		return acceptNode, nil
	case !constrained:
		return typeNodes[n.types&127], nil
	case n.plainRef():
		return n.ext.allOf[0], nil
	}
	c.bytes += nodeSize + len(n.props)*propSize + 16*len(n.required)
	if n.ext != nil {
		c.bytes += extSize
	}
	return n, nil
}

// Sizes of what nodes hold, for estimates.
const (
	nodeSize = 80
	propSize = 40
	extSize  = 208
)

// plainRef reports whether n is only a reference ({"$ref": …} with annotations), which
// then is its target.
func (n *node) plainRef() bool {
	x := n.ext
	return n.types == 0 && n.props == nil && n.required == nil && n.addl == nil && n.items == nil && n.flags == 0 &&
		x != nil && len(x.allOf) == 1 && x.enum == nil && !x.hasConst && !x.hasMin && !x.hasMax && !x.exMin && !x.exMax &&
		x.minLen == 0 && x.maxLen < 0 && x.minItems == 0 && x.maxItems < 0 && x.minProps == 0 && x.maxProps < 0 &&
		x.pattern == nil && x.anyOf == nil && x.oneOf == nil && x.not == nil
}

func num(v any) float64 {
	switch t := v.(type) {
	case float64:
		return t
	case json.Number:
		f, _ := t.Float64()
		return f
	case int:
		return float64(t)
	case int64:
		return float64(t)
	}
	return 0
}

// path is the JSON pointer of the value being validated, kept as tokens so that the
// success path never builds strings.
type path struct {
	base string // the pointer the path starts from
	toks []tok
}

type tok struct {
	key string
	idx int // -1 for keys
}

func (p *path) pushKey(k string) { p.toks = append(p.toks, tok{key: k, idx: -1}) }
func (p *path) pushIdx(i int)    { p.toks = append(p.toks, tok{idx: i}) }
func (p *path) pop()             { p.toks = p.toks[:len(p.toks)-1] }

func (p *path) String() string {
	var sb strings.Builder
	sb.WriteString(p.base)
	for _, t := range p.toks {
		sb.WriteByte('/')
		if t.idx >= 0 {
			sb.WriteString(strconv.Itoa(t.idx))
		} else {
			sb.WriteString(strings.ReplaceAll(strings.ReplaceAll(t.key, "~", "~0"), "/", "~1"))
		}
	}
	return sb.String()
}

// validator collects violations; with out == nil it only answers valid or not.
type validator struct {
	p     path
	out   *[]Violation
	n     int // violations found
	depth int // schema recursion depth
}

// maxDepth bounds schema recursion, whatever the value or the catalog's references.
const maxDepth = 256

func (vd *validator) fail(n *node, format string, args ...any) {
	vd.n++
	if vd.out == nil || len(*vd.out) >= maxViolations {
		return
	}
	*vd.out = append(*vd.out, Violation{Pointer: vd.p.String(), Message: fmt.Sprintf(format, args...), Expected: expected(n)})
}

// maxViolations bounds the feedback for one request.
const maxViolations = 20

// expected renders the schema a failing value had to match, from its compiled node:
// the constraints, without annotations, nested at most a few levels.
func expected(n *node) any {
	if n == nil {
		return nil
	}
	budget := 200
	return n.schema(4, &budget)
}

// schema renders n as a JSON Schema, down to depth levels and at most *budget nodes.
func (n *node) schema(depth int, budget *int) any {
	switch {
	case n.flags&fAccept != 0:
		return true
	case n.flags&fReject != 0:
		return false
	case depth == 0 || *budget <= 0:
		return map[string]any{"description": "…"}
	}
	*budget--
	s := map[string]any{}
	if n.types != 0 {
		var ts []any
		for _, name := range []string{"null", "boolean", "number", "integer", "string", "array", "object"} {
			if n.types&typeBits[name] != 0 && !(name == "integer" && n.types&tNumber != 0) {
				ts = append(ts, name)
			}
		}
		if len(ts) == 1 {
			s["type"] = ts[0]
		} else {
			s["type"] = ts
		}
	}
	if n.props != nil {
		ps := make(map[string]any, len(n.props))
		for _, p := range n.props {
			ps[p.name] = p.n.schema(depth-1, budget)
		}
		s["properties"] = ps
	}
	if n.required != nil {
		s["required"] = n.required
	}
	if n.addl != nil {
		s["additionalProperties"] = n.addl.schema(depth-1, budget)
	}
	if n.items != nil {
		s["items"] = n.items.schema(depth-1, budget)
	}
	if n.flags&fUnique != 0 {
		s["uniqueItems"] = true
	}
	list := func(ns []*node) []any {
		out := make([]any, len(ns))
		for i, sub := range ns {
			out[i] = sub.schema(depth-1, budget)
		}
		return out
	}
	if x := n.ext; x != nil {
		if x.enum != nil {
			s["enum"] = x.enum
		}
		if x.hasConst {
			s["const"] = x.konst
		}
		if x.hasMin {
			s[map[bool]string{false: "minimum", true: "exclusiveMinimum"}[x.exMin]] = x.min
		}
		if x.hasMax {
			s[map[bool]string{false: "maximum", true: "exclusiveMaximum"}[x.exMax]] = x.max
		}
		for k, v := range map[string]int{"minLength": x.minLen, "minItems": x.minItems, "minProperties": x.minProps} {
			if v > 0 {
				s[k] = v
			}
		}
		for k, v := range map[string]int{"maxLength": x.maxLen, "maxItems": x.maxItems, "maxProperties": x.maxProps} {
			if v >= 0 {
				s[k] = v
			}
		}
		if x.pattern != nil {
			s["pattern"] = x.pattern.String()
		}
		if x.allOf != nil {
			s["allOf"] = list(x.allOf)
		}
		if x.anyOf != nil {
			s["anyOf"] = list(x.anyOf)
		}
		if x.oneOf != nil {
			s["oneOf"] = list(x.oneOf)
		}
		if x.not != nil {
			s["not"] = x.not.schema(depth-1, budget)
		}
	}
	return s
}

func (vd *validator) valid(n *node, v any) bool {
	saveOut, saveN, depth := vd.out, vd.n, len(vd.p.toks)
	vd.out = nil
	vd.validate(n, v)
	ok := vd.n == saveN
	vd.out, vd.n, vd.p.toks = saveOut, saveN, vd.p.toks[:depth]
	return ok
}

func (vd *validator) validate(n *node, v any) {
	if n.flags&fAccept != 0 {
		return
	}
	if vd.depth >= maxDepth {
		vd.fail(n, "nested deeper than %d levels", maxDepth)
		return
	}
	vd.depth++
	defer func() { vd.depth-- }()
	if n.flags&fReject != 0 {
		vd.fail(n, "no value is allowed here")
		return
	}
	bit := typeOf(v)
	if n.types != 0 && n.types&bit == 0 {
		vd.fail(n, "must be %s, got %s", typeNames(n.types), JSONType(v))
		return
	}
	x := n.ext
	if x != nil {
		if x.hasConst && !equal(v, x.konst) {
			vd.fail(n, "must be %s", short(x.konst))
		}
		if x.enum != nil {
			found := false
			for _, e := range x.enum {
				if equal(v, e) {
					found = true
					break
				}
			}
			if !found {
				vd.fail(n, "must be one of %s, got %s", short(x.enum), short(v))
			}
		}
	}
	switch t := v.(type) {
	case map[string]any:
		vd.object(n, t)
	case []any:
		vd.array(n, t)
	case string:
		if x == nil {
			break
		}
		if x.minLen > 0 || x.maxLen >= 0 {
			l := utf8.RuneCountInString(t)
			if l < x.minLen {
				vd.fail(n, "must be at least %d characters long", x.minLen)
			}
			if x.maxLen >= 0 && l > x.maxLen {
				vd.fail(n, "must be at most %d characters long", x.maxLen)
			}
		}
		if x.pattern != nil && !x.pattern.MatchString(t) {
			vd.fail(n, "must match the pattern %s", x.pattern.String())
		}
	default:
		if bit&(tNumber|tInteger) != 0 {
			f := num(v)
			if n.types&(tNumber) == 0 && n.types&tInteger != 0 && f != math.Trunc(f) {
				vd.fail(n, "must be an integer, got %v", f)
			}
			if x != nil && x.hasMin && (f < x.min || (x.exMin && f == x.min)) {
				vd.fail(n, "must be %s %v, got %v", cmp(x.exMin, ">"), x.min, f)
			}
			if x != nil && x.hasMax && (f > x.max || (x.exMax && f == x.max)) {
				vd.fail(n, "must be %s %v, got %v", cmp(x.exMax, "<"), x.max, f)
			}
		}
	}
	if x == nil {
		return
	}
	for _, s := range x.allOf {
		vd.validate(s, v)
	}
	if x.anyOf != nil {
		ok := false
		for _, s := range x.anyOf {
			if vd.valid(s, v) {
				ok = true
				break
			}
		}
		if !ok {
			vd.fail(n, "must match at least one of the allowed shapes (anyOf)")
		}
	}
	if x.oneOf != nil {
		matches := 0
		for _, s := range x.oneOf {
			if vd.valid(s, v) {
				matches++
			}
		}
		if matches != 1 {
			vd.fail(n, "must match exactly one of the allowed shapes (oneOf), matches %d", matches)
		}
	}
	if x.not != nil && vd.valid(x.not, v) {
		vd.fail(n, "must not match the excluded shape (not)")
	}
}

func cmp(exclusive bool, op string) string {
	if exclusive {
		return op
	}
	return op + "="
}

func (vd *validator) object(n *node, m map[string]any) {
	for _, r := range n.required {
		if _, ok := m[r]; !ok {
			vd.fail(n, "missing required property %q", r)
		}
	}
	if x := n.ext; x != nil {
		if x.minProps > 0 && len(m) < x.minProps {
			vd.fail(n, "must have at least %d properties", x.minProps)
		}
		if x.maxProps >= 0 && len(m) > x.maxProps {
			vd.fail(n, "must have at most %d properties", x.maxProps)
		}
	}
	if n.props == nil && n.addl == nil {
		return
	}
	for k, v := range m {
		vd.p.pushKey(k)
		if ps := n.prop(k); ps != nil {
			vd.validate(ps, v)
		} else if n.addl != nil {
			if n.addl.flags&fReject != 0 {
				vd.fail(n, "property %q is not allowed; allowed: %s", k, keys(n.props))
			} else {
				vd.validate(n.addl, v)
			}
		}
		vd.p.pop()
	}
}

func (vd *validator) array(n *node, a []any) {
	if x := n.ext; x != nil {
		if len(a) < x.minItems {
			vd.fail(n, "must have at least %d items, has %d", x.minItems, len(a))
		}
		if x.maxItems >= 0 && len(a) > x.maxItems {
			vd.fail(n, "must have at most %d items, has %d", x.maxItems, len(a))
		}
	}
	if n.items != nil {
		for i, e := range a {
			vd.p.pushIdx(i)
			vd.validate(n.items, e)
			vd.p.pop()
		}
	}
	if n.flags&fUnique != 0 {
		vd.unique(n, a)
	}
}

func typeOf(v any) uint8 {
	switch t := v.(type) {
	case nil:
		return tNull
	case bool:
		return tBool
	case string:
		return tString
	case []any:
		return tArray
	case map[string]any:
		return tObject
	case float64:
		if t == math.Trunc(t) && !math.IsInf(t, 0) {
			return tInteger | tNumber
		}
		return tNumber
	case int, int64, int32:
		return tInteger | tNumber
	case json.Number:
		if _, err := t.Int64(); err == nil {
			return tInteger | tNumber
		}
		return tNumber
	}
	return 0
}

func typeNames(bits uint8) string {
	var names []string
	for _, n := range []string{"null", "boolean", "number", "integer", "string", "array", "object"} {
		if bits&typeBits[n] != 0 {
			if n == "integer" && bits&tNumber != 0 {
				continue
			}
			names = append(names, n)
		}
	}
	return strings.Join(names, " or ")
}

func equal(a, b any) bool {
	if ta, tb := typeOf(a), typeOf(b); ta&(tNumber|tInteger) != 0 && tb&(tNumber|tInteger) != 0 {
		return num(a) == num(b)
	}
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equal(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, v := range x {
			w, ok := y[k]
			if !ok || !equal(v, w) {
				return false
			}
		}
		return true
	}
	return false
}

func short(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

func keys(ps []prop) string {
	if len(ps) == 0 {
		return "none"
	}
	ks := make([]string, len(ps))
	for i, p := range ps {
		ks[i] = p.name
	}
	return strings.Join(ks, ", ")
}

func (vd *validator) unique(n *node, a []any) {
	if len(a) <= 64 {
		for i := range a {
			for j := i + 1; j < len(a); j++ {
				if equal(a[i], a[j]) {
					vd.fail(n, "items %d and %d are equal; items must be unique", i, j)
					return
				}
			}
		}
		return
	}
	// Long arrays: compare canonical encodings in linear time.
	seen := make(map[string]int, len(a))
	for i, e := range a {
		b, err := json.Marshal(canonicalNumbers(e))
		if err != nil {
			continue
		}
		if j, dup := seen[string(b)]; dup {
			vd.fail(n, "items %d and %d are equal; items must be unique", j, i)
			return
		}
		seen[string(b)] = i
	}
}

// canonicalNumbers makes numbers of every Go type encode alike (1 and 1.0 are equal).
func canonicalNumbers(v any) any {
	switch t := v.(type) {
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = canonicalNumbers(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = canonicalNumbers(e)
		}
		return out
	case nil, bool, string:
		return t
	}
	if typeOf(v)&(tNumber|tInteger) != 0 {
		return num(v)
	}
	return v
}
