package a2ui_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
)

// The official A2UI conformance suite (../testdata/a2ui-conformance, see its SOURCE.md),
// run against this package's public API. Every case of an action the package has is run:
// it agrees, or it is a deviation listed in CONFORMANCE.md with its reason. The test fails
// when any case's outcome changes, in either direction; CONFORMANCE.md explains how each
// action is run and compared.

// suiteVersion maps a case's "0.8"/"0.9" to the package's version.
func suiteVersion(v any) string {
	switch fmt.Sprint(v) {
	case "0.8":
		return a2ui.V08
	case "0.9":
		return a2ui.V09
	}
	return ""
}

// caseCatalog compiles the catalog a case names (catalog.catalog_schema: a file of the
// suite or an inline object) for its version.
func caseCatalog(cfg map[string]any) (*catalog.Catalog, error) {
	version := suiteVersion(cfg["version"])
	if version == "" {
		return nil, fmt.Errorf("version %v is not one this package speaks", cfg["version"])
	}
	var doc map[string]any
	switch cs := cfg["catalog_schema"].(type) {
	case string:
		b, err := os.ReadFile(filepath.Join(a2uitest.SuiteDir(), cs))
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, err
		}
	case map[string]any:
		doc = cs
	case nil:
		doc = map[string]any{}
	}
	id, _ := doc["catalogId"].(string)
	if id == "" {
		id = "test_catalog"
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var w map[string]any
	if err := json.Unmarshal(catalog.A2UIDocument(version, id, raw), &w); err != nil {
		return nil, err
	}
	return catalog.Compile(w)
}

// expectation is an expect_error of the suite, read for its meaning: the kinds of
// violation (codes) that say the same, the ids its message names, and the fields its
// details name.
type expectation struct {
	codes  []string
	ids    []string
	fields []string // "/<index>/<pointer>" of the details' paths
	text   string
}

var quoted = regexp.MustCompile(`'([^']+)'`)

func readExpectation(e any) *expectation {
	if e == nil {
		return nil
	}
	x := &expectation{}
	var category string
	switch t := e.(type) {
	case string:
		x.text = t
	case map[string]any:
		category, _ = t["category"].(string)
		x.text, _ = t["message"].(string)
		for _, d := range asList(t["details"]) {
			p, _ := asMap(d)["path"].(string)
			toks := strings.Split(p, ".")
			if len(toks) >= 2 && toks[0] == "messages" {
				x.fields = append(x.fields, "/"+strings.Join(toks[1:], "/"))
			}
		}
	}
	m := x.text
	switch {
	case strings.Contains(m, "Circular reference") || strings.Contains(m, "Self-reference"):
		x.codes = []string{a2ui.CodeCycle}
	case strings.Contains(m, "Duplicate component ID"):
		x.codes = []string{a2ui.CodeDuplicateID}
		if _, id, ok := strings.Cut(m, "ID: "); ok {
			x.ids = append(x.ids, id)
		}
	case strings.Contains(m, "Missing root component"):
		x.codes = []string{a2ui.CodeMissingRoot}
		if i := strings.Index(m, ".*"); i >= 0 {
			x.ids = append(x.ids, m[i+2:])
		}
	case strings.Contains(m, "references non-existent component"):
		x.codes = []string{a2ui.CodeDanglingReference}
	case strings.Contains(m, "not reachable from"):
		x.codes = []string{a2ui.CodeUnreachable}
	case strings.Contains(strings.ToLower(m), "recursion limit exceeded"):
		x.codes = []string{a2ui.CodeTooDeep}
	case strings.Contains(m, "Invalid path syntax"):
		x.codes = []string{a2ui.CodeInvalidPath}
	case strings.Contains(m, "Circular") || category == "RecursionError":
		x.codes = []string{a2ui.CodeCycle, a2ui.CodeTooDeep}
	case strings.Contains(m, "Failed to parse") || category == "ParseError":
		// Text in a block that is not JSON: not JSON, or not a message.
		x.codes = []string{a2ui.CodeInvalidJSON, a2ui.CodeInvalidMessage}
	default: // schema and protocol errors: "is not of type", "Validation failed", "required property"
		x.codes = []string{a2ui.CodeSchema, a2ui.CodeInvalidMessage, a2ui.CodeUnknownComponent}
	}
	for _, q := range quoted.FindAllStringSubmatch(m, -1) {
		if !strings.Contains(q[1], " ") && q[1] != "string" && q[1] != "object" && q[1] != "not-an-object" {
			x.ids = append(x.ids, q[1])
		}
	}
	return x
}

// matches reports whether one of the violations says what the expectation says.
func (x *expectation) matches(vs []a2ui.Violation) bool {
	for _, f := range x.fields {
		found := false
		for _, v := range vs {
			if fmt.Sprintf("/%d%s", v.Index, v.Path) == f {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	for _, v := range vs {
		if !slices.Contains(x.codes, v.Code) {
			continue
		}
		named := true
		for _, id := range x.ids {
			if !strings.Contains(v.Message, `"`+id+`"`) {
				named = false
			}
		}
		if named {
			return true
		}
	}
	return false
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// steps returns a case's steps: its "steps", or the case itself.
func steps(c a2uitest.Case) []map[string]any {
	if s := asList(c["steps"]); s != nil {
		out := make([]map[string]any, len(s))
		for i, e := range s {
			out[i] = asMap(e)
		}
		return out
	}
	return []map[string]any{c}
}

func describeViolations(vs []a2ui.Violation) string {
	if len(vs) == 0 {
		return "no violation"
	}
	parts := make([]string, len(vs))
	for i, v := range vs {
		parts[i] = v.String()
	}
	return strings.Join(parts, "; ")
}

// runValidate runs a "validate" case: each step's payload through a2ui.Validate. A
// payload that updates a surface without creating it (v0.9 createSurface, v0.8
// beginRendering) updates a surface the renderer has: the suite calls these "incremental
// updates", and they are run WithShown.
func runValidate(c a2uitest.Case) string {
	cat, err := caseCatalog(asMap(c["catalog"]))
	if err != nil {
		return "catalog does not compile: " + err.Error()
	}
	for i, st := range steps(c) {
		payload := asList(st["payload"])
		if payload == nil && st["payload"] != nil {
			payload = []any{st["payload"]}
		}
		msgs := make([]json.RawMessage, len(payload))
		for j, m := range payload {
			msgs[j], _ = json.Marshal(m)
		}
		vs := a2ui.Validate(cat, msgs, a2ui.WithShown(shownBy(cat.A2UI.Version, payload)...))
		want := st["expect_error"]
		if want == nil {
			want = c["expect_error"]
		}
		x := readExpectation(want)
		switch {
		case x == nil && len(vs) > 0:
			return fmt.Sprintf("step %d: expected valid, got %s", i, describeViolations(vs))
		case x != nil && !x.matches(vs):
			return fmt.Sprintf("step %d: expected %q (%v), got %s", i, x.text, x.codes, describeViolations(vs))
		}
	}
	return ""
}

// shownBy lists the surfaces a payload changes without creating them.
func shownBy(version string, payload []any) []string {
	created, seen := map[string]bool{}, map[string]bool{}
	var order []string
	for _, m := range payload {
		for op, body := range asMap(m) {
			sid, ok := asMap(body)["surfaceId"].(string)
			if !ok || op == "version" {
				continue
			}
			if op == a2ui.CreateSurface || op == a2ui.BeginRendering {
				created[sid] = true
			}
			if !seen[sid] {
				seen[sid] = true
				order = append(order, sid)
			}
		}
	}
	var out []string
	for _, sid := range order {
		if !created[sid] {
			out = append(out, sid)
		}
	}
	return out
}

// runners maps each suite file to the actions this package has, and how to run them.
var runners = map[string]map[string]a2uitest.Runner{
	"core/validator.yaml":         {"validate": runValidate},
	"agent/streaming_parser.yaml": {"process_chunk": runStream},
	"agent/parser.yaml":           {"parse_full": runParseFull},
	"agent/inference_format.yaml": {"select_catalog": runSelectCatalog},
}

func TestConformance(t *testing.T) {
	a2uitest.RunSuite(t, runners)
}

// runParseFull runs a parse_full case: the whole response through a Parser, its segments
// grouped as the suite groups them, each block's messages with the prose before it. An
// expected "not found" or "empty" error is a response from which no A2UI comes; "Failed
// to parse", one with text in a block that is not JSON.
func runParseFull(c a2uitest.Case) string {
	input, _ := c["input"].(string)
	p := a2ui.NewParser()
	segs := append(p.Push(input), p.Close()...)
	type part struct {
		text string
		a2ui []any
	}
	var parts []part
	var invalid []a2ui.Violation
	cur := &part{}
	for _, s := range segs {
		switch s.Kind {
		case a2ui.SegmentText:
			if cur.a2ui != nil {
				parts = append(parts, *cur)
				cur = &part{}
			}
			cur.text += s.Text
		case a2ui.SegmentMessage:
			var v any
			_ = json.Unmarshal(s.Raw, &v)
			cur.a2ui = append(cur.a2ui, v)
		case a2ui.SegmentInvalid:
			invalid = append(invalid, a2ui.Violation{Index: s.Msg, Code: a2ui.CodeInvalidJSON, Message: s.Err})
		}
	}
	if cur.text != "" || cur.a2ui != nil {
		parts = append(parts, *cur)
	}
	messages := 0
	for _, pt := range parts {
		messages += len(pt.a2ui)
	}
	if x := readExpectation(c["expect_error"]); x != nil {
		switch {
		case strings.Contains(x.text, "not found") || strings.Contains(x.text, "empty"):
			if messages > 0 || len(invalid) > 0 {
				return fmt.Sprintf("expected no A2UI (%q), got %d messages", x.text, messages)
			}
		case len(invalid) == 0:
			return fmt.Sprintf("expected %q, got no invalid block", x.text)
		}
		return ""
	}
	want := asList(c["expect"])
	if len(want) != len(parts) || len(invalid) > 0 {
		return fmt.Sprintf("expected %d parts, got %d (%d invalid)", len(want), len(parts), len(invalid))
	}
	for i, w := range want {
		wm := asMap(w)
		t, _ := wm["text"].(string)
		if strings.TrimSpace(t) != strings.TrimSpace(parts[i].text) {
			return fmt.Sprintf("part %d: text %q, expected %q", i, parts[i].text, t)
		}
		if wa := asList(wm["a2ui"]); !reflect.DeepEqual(wa, parts[i].a2ui) && !(len(wa) == 0 && len(parts[i].a2ui) == 0) {
			return fmt.Sprintf("part %d: A2UI %s, expected %s", i, js(parts[i].a2ui), js(wa))
		}
	}
	return ""
}

// runSelectCatalog runs a select_catalog case: the client's capabilities (the v0.9 object
// of client_capabilities.json: the case's object under "v0.9") through ParseCapabilities
// and Choose, the agent's catalogs named WithCatalogs.
func runSelectCatalog(c a2uitest.Case) string {
	args := asMap(c["args"])
	var agent []string
	for _, cat := range asList(args["supported_catalogs"]) {
		id, _ := asMap(cat)["catalogId"].(string)
		agent = append(agent, id)
	}
	opts := []a2ui.ChooseOption{a2ui.WithCatalogs(agent...)}
	if accepts, _ := args["accepts_inline_catalogs"].(bool); !accepts {
		opts = append(opts, a2ui.WithoutInlineCatalogs())
	}
	raw, _ := json.Marshal(map[string]any{"v0.9": args["client_capabilities"]})
	x := readExpectation(c["expect_error"])
	caps, fe := a2ui.ParseCapabilities(a2ui.V09, raw, "a2uiClientCapabilities")
	var id string
	var doc json.RawMessage
	if fe == nil {
		id, doc, fe = caps.Choose(a2ui.V09, "a2uiClientCapabilities", opts...)
	}
	switch {
	case x != nil && fe == nil:
		return fmt.Sprintf("expected %q, chose %q", x.text, id)
	case x != nil:
		return ""
	case fe != nil:
		return "expected a choice, got " + fe.Error()
	}
	if want, ok := c["expect_selected"].(string); ok && want != id {
		return fmt.Sprintf("chose %q, expected %q", id, want)
	}
	if want, ok := c["expect_catalog_schema"]; ok {
		var got any
		if doc != nil {
			_ = json.Unmarshal(doc, &got)
		}
		if !reflect.DeepEqual(got, want) {
			return fmt.Sprintf("chose %q %s, expected the catalog %s", id, js(got), js(want))
		}
	}
	return ""
}
