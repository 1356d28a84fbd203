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
type node struct {
	raw      map[string]any // the schema, shown to the model when a value fails it
	accept   bool           // the schema true / {}
	reject   bool           // the schema false
	types    uint8          // bit set of jsonType*; 0 = any
	props    map[string]*node
	required []string
	addl     *node // nil: any additional property is allowed
	items    *node
	enum     []any
	konst    any
	hasConst bool
	min, max float64
	exMin    bool
	exMax    bool
	hasMin   bool
	hasMax   bool
	minLen   int
	maxLen   int
	minItems int
	maxItems int
	minProps int
	maxProps int
	unique   bool
	pattern  *regexp.Regexp
	allOf    []*node
	anyOf    []*node
	oneOf    []*node
	not      *node
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
	r    resolver
	memo map[string]*node // by $ref
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
		return &node{accept: s, reject: !s}, nil
	case map[string]any:
		return c.compileMap(s, depth)
	case nil:
		return &node{accept: true}, nil
	}
	return nil, fmt.Errorf("%w: schema of type %T", errUnsupported, v)
}

func (c *compiler) compileMap(s map[string]any, depth int) (*node, error) {
	n := &node{raw: s, minLen: 0, maxLen: -1, minItems: 0, maxItems: -1, maxProps: -1}
	if len(s) == 0 {
		n.accept = true
		return n, nil
	}
	for k, v := range s {
		var err error
		switch k {
		case "$ref":
			ref, _ := v.(string)
			target, ok := c.memo[ref]
			if !ok {
				m := c.r.pointer(ref)
				if m == nil {
					if b, isBool := c.r.pointerAny(ref).(bool); isBool {
						target = &node{accept: b, reject: !b}
					} else {
						return nil, fmt.Errorf("%w: $ref %q", errUnsupported, ref)
					}
				} else {
					target = &node{}
					c.memo[ref] = target // placeholder for recursive references
					t, err := c.compileMap(m, depth+1)
					if err != nil {
						return nil, err
					}
					*target = *t
				}
			}
			n.allOf = append(n.allOf, target)
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
		case "properties":
			m, _ := v.(map[string]any)
			n.props = make(map[string]*node, len(m))
			for name, ps := range m {
				if n.props[name], err = c.compile(ps, depth+1); err != nil {
					return nil, err
				}
			}
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
			n.enum, _ = v.([]any)
		case "const":
			n.konst, n.hasConst = v, true
		case "minimum":
			n.min, n.hasMin = num(v), true
		case "maximum":
			n.max, n.hasMax = num(v), true
		case "exclusiveMinimum":
			if b, ok := v.(bool); ok { // draft 4
				n.exMin = b
				continue
			}
			n.min, n.hasMin, n.exMin = num(v), true, true
		case "exclusiveMaximum":
			if b, ok := v.(bool); ok {
				n.exMax = b
				continue
			}
			n.max, n.hasMax, n.exMax = num(v), true, true
		case "minLength":
			n.minLen = int(num(v))
		case "maxLength":
			n.maxLen = int(num(v))
		case "minItems":
			n.minItems = int(num(v))
		case "maxItems":
			n.maxItems = int(num(v))
		case "minProperties":
			n.minProps = int(num(v))
		case "maxProperties":
			n.maxProps = int(num(v))
		case "uniqueItems":
			n.unique, _ = v.(bool)
		case "pattern":
			p, _ := v.(string)
			if n.pattern, err = regexp.Compile(p); err != nil {
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
				n.allOf = append(n.allOf, list...)
			case "anyOf":
				n.anyOf = list
			default:
				n.oneOf = list
			}
		case "not":
			if n.not, err = c.compile(v, depth+1); err != nil {
				return nil, err
			}
		default:
			if !annotations[k] && !strings.HasPrefix(k, "x-") {
				return nil, fmt.Errorf("%w: %q", errUnsupported, k)
			}
		}
	}
	return n, nil
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

func expected(n *node) any {
	if n == nil || n.raw == nil {
		return nil
	}
	return n.raw
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
	if n.accept {
		return
	}
	if vd.depth >= maxDepth {
		vd.fail(n, "nested deeper than %d levels", maxDepth)
		return
	}
	vd.depth++
	defer func() { vd.depth-- }()
	if n.reject {
		vd.fail(n, "no value is allowed here")
		return
	}
	bit := typeOf(v)
	if n.types != 0 && n.types&bit == 0 {
		vd.fail(n, "must be %s, got %s", typeNames(n.types), JSONType(v))
		return
	}
	if n.hasConst && !equal(v, n.konst) {
		vd.fail(n, "must be %s", short(n.konst))
	}
	if n.enum != nil {
		found := false
		for _, e := range n.enum {
			if equal(v, e) {
				found = true
				break
			}
		}
		if !found {
			vd.fail(n, "must be one of %s, got %s", short(n.enum), short(v))
		}
	}
	switch t := v.(type) {
	case map[string]any:
		vd.object(n, t)
	case []any:
		vd.array(n, t)
	case string:
		if n.minLen > 0 || n.maxLen >= 0 {
			l := utf8.RuneCountInString(t)
			if l < n.minLen {
				vd.fail(n, "must be at least %d characters long", n.minLen)
			}
			if n.maxLen >= 0 && l > n.maxLen {
				vd.fail(n, "must be at most %d characters long", n.maxLen)
			}
		}
		if n.pattern != nil && !n.pattern.MatchString(t) {
			vd.fail(n, "must match the pattern %s", n.pattern.String())
		}
	default:
		if bit&(tNumber|tInteger) != 0 {
			f := num(v)
			if n.types&(tNumber) == 0 && n.types&tInteger != 0 && f != math.Trunc(f) {
				vd.fail(n, "must be an integer, got %v", f)
			}
			if n.hasMin && (f < n.min || (n.exMin && f == n.min)) {
				vd.fail(n, "must be %s %v, got %v", cmp(n.exMin, ">"), n.min, f)
			}
			if n.hasMax && (f > n.max || (n.exMax && f == n.max)) {
				vd.fail(n, "must be %s %v, got %v", cmp(n.exMax, "<"), n.max, f)
			}
		}
	}
	for _, s := range n.allOf {
		vd.validate(s, v)
	}
	if n.anyOf != nil {
		ok := false
		for _, s := range n.anyOf {
			if vd.valid(s, v) {
				ok = true
				break
			}
		}
		if !ok {
			vd.fail(n, "must match at least one of the allowed shapes (anyOf)")
		}
	}
	if n.oneOf != nil {
		matches := 0
		for _, s := range n.oneOf {
			if vd.valid(s, v) {
				matches++
			}
		}
		if matches != 1 {
			vd.fail(n, "must match exactly one of the allowed shapes (oneOf), matches %d", matches)
		}
	}
	if n.not != nil && vd.valid(n.not, v) {
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
	if n.minProps > 0 && len(m) < n.minProps {
		vd.fail(n, "must have at least %d properties", n.minProps)
	}
	if n.maxProps >= 0 && len(m) > n.maxProps {
		vd.fail(n, "must have at most %d properties", n.maxProps)
	}
	for k, v := range m {
		vd.p.pushKey(k)
		if ps, ok := n.props[k]; ok {
			vd.validate(ps, v)
		} else if n.addl != nil {
			if n.addl.reject {
				vd.fail(n, "property %q is not allowed; allowed: %s", k, keys(n.props))
			} else {
				vd.validate(n.addl, v)
			}
		}
		vd.p.pop()
	}
}

func (vd *validator) array(n *node, a []any) {
	if len(a) < n.minItems {
		vd.fail(n, "must have at least %d items, has %d", n.minItems, len(a))
	}
	if n.maxItems >= 0 && len(a) > n.maxItems {
		vd.fail(n, "must have at most %d items, has %d", n.maxItems, len(a))
	}
	if n.items != nil {
		for i, e := range a {
			vd.p.pushIdx(i)
			vd.validate(n.items, e)
			vd.p.pop()
		}
	}
	if n.unique {
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

func keys(m map[string]*node) string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	if len(ks) == 0 {
		return "none"
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
