package a2ui_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/catalog"
)

// Regression tests of the defects the conformance suite found, one per defect.

func compile(t *testing.T, version, id, doc string) *catalog.Catalog {
	t.Helper()
	var w map[string]any
	if err := json.Unmarshal(catalog.A2UIDocument(version, id, []byte(doc)), &w); err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Compile(w)
	if err != nil {
		t.Fatalf("compile: %v", err)
	}
	return c
}

func msgs(lines ...string) []json.RawMessage {
	out := make([]json.RawMessage, len(lines))
	for i, l := range lines {
		out[i] = json.RawMessage(l)
	}
	return out
}

func codes(vs []a2ui.Violation) string {
	var out []string
	for _, v := range vs {
		out = append(out, v.Code)
	}
	return strings.Join(out, ",")
}

// A catalog that spells out ComponentCommon in its own $defs, its id a ComponentId: the
// id defines the component, it is no reference to itself (test_custom_catalog_0_9).
func TestComponentCommonIDIsNoReference(t *testing.T) {
	cat := compile(t, a2ui.V09, "custom", `{"components":{
		"Canvas":{"type":"object","allOf":[{"$ref":"#/$defs/ComponentCommon"},{"type":"object","properties":{"component":{"const":"Canvas"},"children":{"$ref":"#/$defs/ChildList"}},"required":["component","children"]}]}},
		"$defs":{"ComponentId":{"type":"string"},
			"ComponentCommon":{"type":"object","properties":{"id":{"$ref":"#/$defs/ComponentId"}},"required":["id"]},
			"ChildList":{"type":"array","items":{"$ref":"#/$defs/ComponentId"}}}}`)
	def, _ := cat.A2UI.Component("Canvas")
	for _, r := range def.Refs {
		if r.Prop == "id" {
			t.Fatalf("the id is taken for a reference: %+v", def.Refs)
		}
	}
	vs := a2ui.Validate(cat, msgs(
		`{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"custom"}}`,
		`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Canvas","children":["a"]},{"id":"a","component":"Canvas","children":[]}]}}`))
	if vs != nil {
		t.Fatalf("a valid surface is rejected: %v", vs)
	}
}

// v0.8 custom catalogs whose children are a plain array of ids: the ids are references,
// checked and followed (test_validate_dangling_references_v08, test_partial_children_lists).
func TestV08ChildArraysAreReferences(t *testing.T) {
	cat := compile(t, a2ui.V08, "c", `{"components":{"Column":{"type":"object","properties":{"children":{"type":"array","items":{"type":"string"}}}},"Text":{"type":"object","properties":{"text":{"type":"string"}}}}}`)
	vs := a2ui.Validate(cat, msgs(
		`{"beginRendering":{"surfaceId":"s","root":"root"}}`,
		`{"surfaceUpdate":{"surfaceId":"s","components":[{"id":"root","component":{"Column":{"children":["a","missing"]}}},{"id":"a","component":{"Text":{"text":"hi"}}}]}}`))
	if codes(vs) != a2ui.CodeDanglingReference || !strings.Contains(vs[0].Message, `"missing"`) || vs[0].Path != "/surfaceUpdate/components/0/component/Column/children/1" {
		t.Fatalf("want the missing child at its pointer, got %v", vs)
	}
	// While streaming, the parent goes out with the children that exist.
	p, b := a2ui.NewParser(), a2ui.NewBuilder(cat)
	var sent []string
	for _, chunk := range []string{"```a2ui\n", `{"beginRendering":{"surfaceId":"s","root":"root"}}` + "\n",
		`{"surfaceUpdate":{"surfaceId":"s","components":[{"id":"root","component":{"Column":{"children":["a","b"]}}},`,
		`{"id":"a","component":{"Text":{"text":"A"}}},`, `{"id":"b","component":{"Text":{"text":"B"}}}]}}` + "\n```\n"} {
		for _, sg := range p.Push(chunk) {
			b.Add(sg)
		}
		for _, m := range b.Flush() {
			sent = append(sent, string(m))
		}
	}
	out, vs2 := b.End()
	if len(out) != 0 || vs2 != nil {
		t.Fatalf("end: %s %v", out, vs2)
	}
	// The root first, its list cut to the children that exist (none), then with each
	// child as it comes; a v0.8 update carries every component its components reach.
	want := []string{
		`{"surfaceUpdate":{"surfaceId":"s","components":[{"component":{"Column":{"children":[]}},"id":"root"}]}}`,
		`{"beginRendering":{"catalogId":"c","root":"root","surfaceId":"s"}}`,
		`{"surfaceUpdate":{"surfaceId":"s","components":[{"component":{"Text":{"text":"A"}},"id":"a"},{"component":{"Column":{"children":["a"]}},"id":"root"}]}}`,
		`{"surfaceUpdate":{"surfaceId":"s","components":[{"component":{"Text":{"text":"A"}},"id":"a"},{"component":{"Text":{"text":"B"}},"id":"b"},{"component":{"Column":{"children":["a","b"]}},"id":"root"}]}}`,
	}
	if strings.Join(sent, "\n") != strings.Join(want, "\n") {
		t.Fatalf("sent\n%s\nwant\n%s", strings.Join(sent, "\n"), strings.Join(want, "\n"))
	}
}

// A catalog with no components compiles: the schemas require only its catalogId.
func TestCatalogWithoutComponents(t *testing.T) {
	for _, v := range []string{a2ui.V09, a2ui.V08} {
		for _, doc := range []string{`{}`, `{"components":{}}`} {
			cat := compile(t, v, "empty", doc)
			if n := len(cat.A2UI.ComponentNames()); n != 0 {
				t.Fatalf("%s %s: %d components", v, doc, n)
			}
		}
	}
	cat := compile(t, a2ui.V09, "empty", `{"components":{}}`)
	vs := a2ui.Validate(cat, msgs(
		`{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"empty"}}`,
		`{"version":"v0.9","updateDataModel":{"surfaceId":"s","path":"/a","value":1}}`,
		`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Text","text":"x"}]}}`))
	if codes(vs) != a2ui.CodeUnknownComponent {
		t.Fatalf("want only the unknown component, got %v", vs)
	}
	var w map[string]any
	_ = json.Unmarshal(catalog.A2UIDocument(a2ui.V09, "x", []byte(`{"components":[]}`)), &w)
	if _, err := catalog.Compile(w); err == nil || !strings.Contains(err.Error(), "components") {
		t.Fatalf("components that are not an object: %v", err)
	}
}

// An update of a surface the renderer has, before its root exists, is buffered by the
// renderer: valid, and sent (test_incremental_update_no_root_v09). Cycles still count.
func TestUpdateBeforeRoot(t *testing.T) {
	cat := basic(t)
	update := `{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"card","component":"Card","child":"t"},{"id":"t","component":"Text","text":"hi"}]}}`
	if vs := a2ui.Validate(cat, msgs(update), a2ui.WithShown("s")); vs != nil {
		t.Fatalf("update of a shown surface before its root: %v", vs)
	}
	if vs := a2ui.Validate(cat, msgs(update)); codes(vs) != a2ui.CodeUnknownSurface {
		t.Fatalf("update of a surface the renderer does not have: %v", vs)
	}
	cycle := `{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"a","component":"Card","child":"b"},{"id":"b","component":"Card","child":"a"}]}}`
	if vs := a2ui.Validate(cat, msgs(cycle), a2ui.WithShown("s")); codes(vs) != a2ui.CodeCycle {
		t.Fatalf("cycle before the root: %v", vs)
	}
	// A surface created (and shown) by an earlier turn, still without its root: the
	// builder sends what the model writes for it, as written.
	b := a2ui.NewBuilder(cat)
	if err := b.Shown(json.RawMessage(`{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"` + cat.A2UI.ID + `"}}`)); err != nil {
		t.Fatal(err)
	}
	b.Add(a2ui.Segment{Kind: a2ui.SegmentMessage, Raw: []byte(update)})
	out, vs := b.End()
	if vs != nil || len(out) != 1 || !strings.Contains(string(out[0]), `"id":"card"`) || !strings.Contains(string(out[0]), `"id":"t"`) {
		t.Fatalf("got %s %v", out, vs)
	}
	// A surface created in the same messages must have its root by their end.
	created := a2ui.Validate(cat, msgs(`{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"`+cat.A2UI.ID+`"}}`, update))
	if codes(created) != a2ui.CodeMissingRoot {
		t.Fatalf("created without a root: %v", created)
	}
}

// A data-model value nested deeper than components may be is refused
// (test_validate_global_recursion_limit_exceeded_v09).
func TestDataModelDepth(t *testing.T) {
	cat := basic(t)
	deep := strings.Repeat(`{"a":`, 51) + "1" + strings.Repeat("}", 51)
	vs := a2ui.Validate(cat, msgs(`{"version":"v0.9","updateDataModel":{"surfaceId":"s","value":`+deep+`}}`), a2ui.WithShown("s"))
	if codes(vs) != a2ui.CodeTooDeep || vs[0].Path != "/updateDataModel/value" {
		t.Fatalf("got %v", vs)
	}
	ok := strings.Repeat(`{"a":`, 50) + "1" + strings.Repeat("}", 50)
	if vs := a2ui.Validate(cat, msgs(`{"version":"v0.9","updateDataModel":{"surfaceId":"s","value":`+ok+`}}`), a2ui.WithShown("s")); vs != nil {
		t.Fatalf("50 levels: %v", vs)
	}
}

// An update of an unknown surface whose component is invalid too: both are told.
func TestUnknownSurfaceAndInvalidComponent(t *testing.T) {
	vs := a2ui.Validate(basic(t), msgs(`{"version":"v0.9","updateComponents":{"surfaceId":"nope","components":[{"id":"root","component":"Text"}]}}`))
	if got := codes(vs); got != a2ui.CodeSchema+","+a2ui.CodeUnknownSurface {
		t.Fatalf("got %v", vs)
	}
}

func basic(t *testing.T) *catalog.Catalog {
	t.Helper()
	c, err := a2ui.Builtin(a2ui.V09, a2ui.DefaultCatalogID(a2ui.V09))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// <a2ui-json> blocks, the A2UI agent SDKs' inference format: whole, or cut at any byte,
// they yield the same prose and messages, component by component.
func TestA2UIJSONBlocks(t *testing.T) {
	cat := basic(t)
	resp := "Here is the form: <a2ui-json>\n```json\n[" +
		`{"version":"v0.9","createSurface":{"surfaceId":"f","catalogId":"` + cat.A2UI.ID + `"}},` +
		`{"version":"v0.9","updateComponents":{"surfaceId":"f","components":[{"id":"root","component":"Column","children":["t"]},{"id":"t","component":"Text","text":"Hi <b>"}]}}` +
		"]\n```\n</a2ui-json> Enjoy."
	whole := segments(a2ui.NewParser(), resp, len(resp))
	wantKinds := "text message component component message text"
	if k := kinds(whole); k != wantKinds {
		t.Fatalf("kinds %q, want %q", k, wantKinds)
	}
	if whole[0].Text != "Here is the form: " || whole[len(whole)-1].Text != " Enjoy." {
		t.Fatalf("prose %q … %q", whole[0].Text, whole[len(whole)-1].Text)
	}
	for n := 1; n < len(resp); n++ {
		if got := segments(a2ui.NewParser(), resp, n); kinds(got) != wantKinds || joinText(got) != joinText(whole) {
			t.Fatalf("in chunks of %d: %q %q", n, kinds(got), joinText(got))
		}
	}
	// Streamed into a builder, the root goes out before the response ends.
	p, b := a2ui.NewParser(), a2ui.NewBuilder(cat)
	firstUI := -1
	for i := 0; i < len(resp); i++ {
		for _, sg := range p.Push(resp[i : i+1]) {
			b.Add(sg)
		}
		for _, m := range b.Flush() {
			if firstUI < 0 && strings.Contains(string(m), "updateComponents") {
				firstUI = i
			}
		}
	}
	if firstUI < 0 || firstUI >= strings.Index(resp, "]\n```") {
		t.Fatalf("the first component went out at byte %d of %d", firstUI, len(resp))
	}
	if _, vs := b.End(); vs != nil {
		t.Fatal(vs)
	}
}

func segments(p *a2ui.Parser, s string, n int) []a2ui.Segment {
	var out []a2ui.Segment
	for i := 0; i < len(s); i += n {
		out = append(out, p.Push(s[i:min(i+n, len(s))])...)
	}
	out = append(out, p.Close()...)
	// Merge adjacent prose, as chunks split it.
	var merged []a2ui.Segment
	for _, sg := range out {
		if k := len(merged); k > 0 && sg.Kind == a2ui.SegmentText && merged[k-1].Kind == a2ui.SegmentText {
			merged[k-1].Text += sg.Text
			continue
		}
		merged = append(merged, sg)
	}
	return merged
}

func kinds(segs []a2ui.Segment) string {
	names := map[a2ui.SegmentKind]string{a2ui.SegmentText: "text", a2ui.SegmentComponent: "component", a2ui.SegmentMessage: "message", a2ui.SegmentInvalid: "invalid"}
	var out []string
	for _, s := range segs {
		out = append(out, names[s.Kind])
	}
	return strings.Join(out, " ")
}

func joinText(segs []a2ui.Segment) string {
	var sb strings.Builder
	for _, s := range segs {
		sb.WriteString(s.Text)
		sb.Write(s.Raw)
		sb.WriteString("|")
	}
	return sb.String()
}
