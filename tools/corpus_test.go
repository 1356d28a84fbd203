package tools

import (
	"github.com/genuiserver/genui/catalog"

	"encoding/json"
	"strings"
	"testing"
)

// catalogSpec names, for one catalog, a container, a text leaf and a widget with a single
// child reference, with whatever else each needs to be valid.
type catalogSpec struct {
	file                string
	container, children string
	leaf, text          string
	holder, child       string
	extra               map[string]any // required properties every widget of this catalog gets
}

var corpusCatalogs = []catalogSpec{
	{file: "../schemas/catalogs/basic.json", container: "Column", children: "children", leaf: "Text", text: "text", holder: "ElevatedButton", child: "child"},
	{file: "../schemas/catalogs/rich.json", container: "Column", children: "children", leaf: "Text", text: "text", holder: "Card", child: "child"},
	{file: "../catalog/testdata/large.json", container: "Widget00", children: "children", leaf: "Widget02", text: "label", holder: "Widget01", child: "child", extra: map[string]any{"label": "x"}},
}

func (s catalogSpec) props(kv ...any) map[string]any {
	m := map[string]any{}
	for k, v := range s.extra {
		m[k] = v
	}
	for i := 0; i < len(kv); i += 2 {
		m[kv[i].(string)] = kv[i+1]
	}
	return m
}

// valid is c → [t, b]; b → bt.
func (s catalogSpec) valid() map[string]any {
	return map[string]any{"surfaceId": "s1", "definition": map[string]any{"root": "c", "widgets": []any{
		map[string]any{"id": "c", "widget": map[string]any{s.container: s.props(s.children, []any{"t", "b"})}},
		map[string]any{"id": "t", "widget": map[string]any{s.leaf: s.props(s.text, "hello")}},
		map[string]any{"id": "b", "widget": map[string]any{s.holder: s.props(s.child, "bt")}},
		map[string]any{"id": "bt", "widget": map[string]any{s.leaf: s.props(s.text, "OK")}},
	}}}
}

func widgetAt(in map[string]any, i int) map[string]any {
	return in["definition"].(map[string]any)["widgets"].([]any)[i].(map[string]any)
}

func TestCorpus(t *testing.T) {
	for _, spec := range corpusCatalogs {
		c, err := catalog.Compile(loadCatalog(t, spec.file))
		if err != nil {
			t.Fatal(err)
		}
		t.Run(spec.file, func(t *testing.T) {
			if r := Check(c, AddOrUpdateSurface, spec.valid()); !r.OK() || len(r.Warnings) > 0 {
				t.Fatalf("valid surface rejected: %+v", r)
			}
			for _, tc := range []struct {
				rule    string
				mutate  func(in map[string]any)
				pointer string
				message string
			}{
				{"unknown widget", func(in map[string]any) { widgetAt(in, 1)["widget"] = map[string]any{"Carousel": map[string]any{}} },
					"/definition/widgets/1/widget/Carousel", `unknown widget "Carousel"; the catalog's widgets are `},
				{"wrong property type", func(in map[string]any) {
					widgetAt(in, 1)["widget"] = map[string]any{spec.leaf: spec.props(spec.text, 5.0)}
				},
					"/definition/widgets/1/widget/" + spec.leaf + "/" + spec.text, "must be string, got number"},
				{"missing required property", func(in map[string]any) {
					p := spec.props()
					delete(p, spec.text)
					widgetAt(in, 1)["widget"] = map[string]any{spec.leaf: p}
				}, "/definition/widgets/1/widget/" + spec.leaf, `missing required property "` + spec.text + `"`},
				{"missing root", func(in map[string]any) { delete(in["definition"].(map[string]any), "root") },
					"/definition", `missing required property "root"`},
				{"root not a widget", func(in map[string]any) { in["definition"].(map[string]any)["root"] = "nope" },
					"/definition/root", `root "nope" is not the id of any widget`},
				{"dangling child", func(in map[string]any) {
					widgetAt(in, 2)["widget"] = map[string]any{spec.holder: spec.props(spec.child, "ghost")}
				},
					"/definition/widgets/2/widget/" + spec.holder + "/" + spec.child, `"ghost" is not the id of any widget`},
				{"dangling children entry", func(in map[string]any) {
					widgetAt(in, 0)["widget"] = map[string]any{spec.container: spec.props(spec.children, []any{"t", "ghost"})}
				}, "/definition/widgets/0/widget/" + spec.container + "/" + spec.children + "/1", `"ghost" is not the id of any widget`},
				{"duplicate id", func(in map[string]any) { widgetAt(in, 3)["id"] = "t" },
					"/definition/widgets/3/id", `duplicate widget id "t" (also used by /definition/widgets/1)`},
				{"cycle", func(in map[string]any) {
					widgetAt(in, 2)["widget"] = map[string]any{spec.holder: spec.props(spec.child, "c")}
				},
					"/definition/widgets/2/widget/" + spec.holder + "/" + spec.child, `reference to "c" creates a cycle (c → b → c)`},
				{"non-object widget", func(in map[string]any) { widgetAt(in, 1)["widget"] = spec.leaf },
					"/definition/widgets/1/widget", "must be an object with exactly one key, the widget type"},
				{"two widget keys", func(in map[string]any) {
					widgetAt(in, 1)["widget"] = map[string]any{spec.leaf: spec.props(spec.text, "a"), spec.container: spec.props(spec.children, []any{})}
				}, "/definition/widgets/1/widget", "has 2 keys"},
				{"no surfaceId", func(in map[string]any) { delete(in, "surfaceId") }, "/surfaceId", "required property is missing"},
			} {
				in := spec.valid()
				tc.mutate(in)
				r := Check(c, AddOrUpdateSurface, in)
				found := false
				for _, v := range r.Violations {
					if v.Pointer == tc.pointer && strings.Contains(v.Message, tc.message) {
						found = true
					}
				}
				if !found {
					b, _ := json.MarshalIndent(r.Violations, "", " ")
					t.Errorf("%s: want %s: %q among\n%s", tc.rule, tc.pointer, tc.message, b)
				}
			}
			// Unreachable widgets are warnings, not violations.
			in := spec.valid()
			widgetAt(in, 0)["widget"] = map[string]any{spec.container: spec.props(spec.children, []any{"t"})}
			if r := Check(c, AddOrUpdateSurface, in); !r.OK() || len(r.Warnings) != 2 || !strings.Contains(r.Warnings[0].Message, "not reachable from root") {
				t.Errorf("unreachable: %+v", r)
			}
		})
	}
}

func TestViolationsCarryTheExpectedShape(t *testing.T) {
	spec := corpusCatalogs[1]
	c, err := catalog.Compile(loadCatalog(t, spec.file))
	if err != nil {
		t.Fatal(err)
	}
	in := spec.valid()
	widgetAt(in, 1)["widget"] = map[string]any{"Text": map[string]any{"text": "a", "style": "shouting"}}
	r := Check(c, AddOrUpdateSurface, in)
	if len(r.Violations) == 0 || r.Violations[0].Expected == nil {
		t.Fatalf("%+v", r)
	}
	b, _ := json.Marshal(r.Violations[0])
	if !strings.Contains(string(b), `"pointer":"/definition/widgets/1/widget/Text/style"`) || !strings.Contains(string(b), `"expected":{"anyOf"`) {
		t.Fatalf("%s", b)
	}
}

func TestWidgetOnlyCatalogIsWrapped(t *testing.T) {
	full := loadCatalog(t, "../schemas/catalogs/basic.json")
	widget := full["properties"].(map[string]any)["widgets"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)["widget"].(map[string]any)
	c, err := catalog.Compile(widget)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Widgets()) != 8 {
		t.Fatalf("%d widgets", len(c.Widgets()))
	}
	if r := Check(c, AddOrUpdateSurface, corpusCatalogs[0].valid()); !r.OK() {
		t.Fatalf("%+v", r)
	}
}
