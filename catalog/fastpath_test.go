package catalog

import (
	"strings"
	"testing"
)

func TestFastValidatorCoversTheCatalogs(t *testing.T) {
	for _, p := range []string{"testdata/large.json", "../schemas/catalogs/rich.json", "../schemas/catalogs/basic.json"} {
		c, err := Compile(loadCatalog(t, p))
		if err != nil {
			t.Fatal(p, err)
		}
		if c.top == nil {
			t.Errorf("%s: no fast top", p)
		}
		if c.compiled != nil {
			t.Errorf("%s: the general validator was kept", p)
		}
		for _, w := range c.widgets {
			if w.node == nil {
				t.Errorf("%s: %s has no fast node", p, w.name)
			}
		}
		t.Logf("%s: %d widgets, refs of first: %v", p, len(c.widgets), c.widgets[0].refs)
	}
}

// A catalog using keywords the fast validator lacks is checked by the general validator,
// with the same precise messages for widget entries.
func TestGeneralValidatorFallback(t *testing.T) {
	cat := loadCatalog(t, "../schemas/catalogs/basic.json")
	text := cat["properties"].(map[string]any)["widgets"].(map[string]any)["items"].(map[string]any)["properties"].(map[string]any)["widget"].(map[string]any)["anyOf"].([]any)[2].(map[string]any)["properties"].(map[string]any)["Text"].(map[string]any)
	text["if"] = map[string]any{"required": []any{"text"}}
	text["then"] = map[string]any{"properties": map[string]any{"text": map[string]any{"minLength": 1}}}
	c, err := Compile(cat)
	if err != nil {
		t.Fatal(err)
	}
	if c.top != nil {
		t.Fatal("expected the general validator")
	}
	def := func(text map[string]any) map[string]any {
		return map[string]any{"root": "c", "widgets": []any{
			map[string]any{"id": "c", "widget": map[string]any{"Column": map[string]any{"children": []any{"t"}}}},
			map[string]any{"id": "t", "widget": text},
		}}
	}
	if r := c.CheckDefinition(def(map[string]any{"Text": map[string]any{"text": "hello"}}), "/definition"); !r.OK() {
		t.Fatalf("%+v", r)
	}
	r := c.CheckDefinition(def(map[string]any{"Carousel": map[string]any{}}), "/definition")
	if len(r.Violations) != 1 || !strings.Contains(r.Violations[0].Message, `unknown widget "Carousel"`) || r.Violations[0].Pointer != "/definition/widgets/1/widget/Carousel" {
		t.Fatalf("%+v", r.Violations)
	}
	if r := c.CheckDefinition(def(map[string]any{"Text": map[string]any{"text": ""}}), "/definition"); r.OK() {
		t.Fatal("if/then constraint not enforced")
	}
}
