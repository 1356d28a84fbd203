package a2ui

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/policy"
)

// Limits on the nesting of what the model writes, as A2UI's reference validator has them.
const (
	maxDepth         = 50 // nested values, and the depth of a surface's component tree
	maxFunctionDepth = 5  // function calls in the arguments of function calls
)

// pointerProblem says what is wrong with a data-model path, or "".
func pointerProblem(p string) string {
	if p == "" {
		return `must not be empty; "/" is the whole data model`
	}
	for i := 0; i < len(p); i++ {
		if p[i] == '~' && (i+1 == len(p) || (p[i+1] != '0' && p[i+1] != '1')) {
			return fmt.Sprintf("%q is not a JSON Pointer: \"~\" must be written ~0 (and \"/\" inside a key ~1)", p)
		}
	}
	return ""
}

// valueCheck walks the properties of a component: data bindings must be JSON Pointers,
// function calls must name functions of the catalog. It notes whether any binding is
// relative, which only components inside a template may use.
type valueCheck struct {
	version  string
	cat      *catalog.A2UI
	r        *catalog.Report // paths, function names, nesting
	calls    catalog.Report  // calls of catalog functions against their schemas
	relative bool

	// The UI policy, when one applies: what breaks it, and the data paths URL places
	// are bound to.
	policy   *policy.Policy
	rules    *rules
	pol      catalog.Report
	bindings []binding
}

func (vc *valueCheck) walk(v any, at string, depth, fdepth int) {
	if depth > maxDepth {
		vc.r.AddCode(CodeTooDeep, at, "nests deeper than %d levels", maxDepth)
		return
	}
	switch t := v.(type) {
	case []any:
		for i, e := range t {
			vc.walk(e, at+"/"+strconv.Itoa(i), depth+1, fdepth)
		}
	case map[string]any:
		if vc.version == V09 {
			vc.map09(t, at, depth, fdepth)
		} else {
			vc.map08(t, at, depth, fdepth)
		}
	}
}

func (vc *valueCheck) path(p any, at string) {
	s, ok := p.(string)
	if !ok {
		return // the schema says what type it must have
	}
	if msg := pointerProblem(s); msg != "" {
		vc.r.AddCode(CodeInvalidPath, at, "%s", msg)
		return
	}
	if !strings.HasPrefix(s, "/") {
		vc.relative = true
	}
}

func (vc *valueCheck) map09(m map[string]any, at string, depth, fdepth int) {
	if p, ok := m["path"]; ok && len(m) == 1 {
		vc.path(p, at+"/path") // a data binding
		return
	}
	if name, ok := m["call"].(string); ok {
		if fdepth >= maxFunctionDepth {
			vc.r.AddCode(CodeTooDeep, at, "function calls nest deeper than %d levels", maxFunctionDepth)
			return
		}
		if f, known := vc.cat.Function(name); !known {
			if len(vc.cat.FunctionNames()) == 0 {
				vc.r.AddCode(CodeUnknownFunction, at+"/call", "unknown function %q: the catalog has no functions", name)
			} else {
				vc.r.AddCode(CodeUnknownFunction, at+"/call", "unknown function %q; the catalog's functions are %s", name, strings.Join(vc.cat.FunctionNames(), ", "))
			}
		} else {
			f.Check(m, at, &vc.calls)
			if vc.policy != nil {
				vc.callPolicy(name, m, at)
			}
		}
		for _, k := range sortedKeys(m) {
			e := m[k]
			d := fdepth
			if k == "args" {
				d++
			}
			vc.walk(e, at+"/"+escape(k), depth+1, d)
		}
		return
	}
	if _, ok := m["componentId"]; ok {
		if p, ok := m["path"]; ok {
			vc.path(p, at+"/path") // a template's list
		}
	}
	for _, k := range sortedKeys(m) {
		vc.walk(m[k], at+"/"+escape(k), depth+1, fdepth)
	}
}

var literal08 = map[string]bool{"literalString": true, "literalNumber": true, "literalBoolean": true, "literalArray": true}

func (vc *valueCheck) map08(m map[string]any, at string, depth, fdepth int) {
	if _, ok := m["functionCall"].(map[string]any); ok {
		// v0.8 has no functions, but catalogs may take free-form objects: calls nest no
		// deeper than in v0.9.
		if fdepth >= maxFunctionDepth {
			vc.r.AddCode(CodeTooDeep, at, "function calls nest deeper than %d levels", maxFunctionDepth)
			return
		}
		for _, k := range sortedKeys(m) {
			d := fdepth
			if k == "functionCall" {
				d++
			}
			vc.walk(m[k], at+"/"+escape(k), depth+1, d)
		}
		return
	}
	if p, ok := m["path"]; ok {
		bound := true
		for k := range m {
			if k != "path" && !literal08[k] {
				bound = false
			}
		}
		if bound {
			vc.path(p, at+"/path")
			return
		}
	}
	if p, ok := m["dataBinding"]; ok {
		if _, tpl := m["componentId"]; tpl {
			vc.path(p, at+"/dataBinding")
		}
	}
	for _, k := range sortedKeys(m) {
		vc.walk(m[k], at+"/"+escape(k), depth+1, fdepth)
	}
}

// escape escapes a JSON Pointer token.
func escape(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

// callPolicy applies the policy to a call of function name: whether it may be called,
// and the URLs it is given.
func (vc *valueCheck) callPolicy(name string, m map[string]any, at string) {
	if err := vc.policy.CheckFunction(name); err != nil {
		vc.pol.AddCode(CodeFunctionNotAllowed, at+"/call", "%s", err)
	}
	if vc.policy.On(policy.UnsafeURL) {
		for _, pl := range vc.rules.funcs[name] {
			each(m["args"], pl.Path, at+"/args", func(v any, at string) { vc.urlValue(v, pl.Kind, at) })
		}
	}
}
