package a2ui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/genuiserver/genui/a2ui/spec"
	"github.com/genuiserver/genui/catalog"
)

func TestDescribeBasicCatalog(t *testing.T) {
	c, err := Builtin(V09, spec.BasicCatalogID)
	if err != nil {
		t.Fatal(err)
	}
	d := Describe(c)
	for _, want := range []string{
		"- Button: action: Action; child: ComponentId",
		`- Text: text: DynamicString (The text content to display); variant?: "h1"|"h2"|"h3"|"h4"|"h5"|"caption"|"body".`,
		"- formatString(value: DynamicString) → string.",
		"- ChildList: [\"<id>\", …] (fixed children), or a template",
	} {
		if !strings.Contains(d, want) {
			t.Errorf("the description lacks %q", want)
		}
	}
	if strings.Contains(d, "A large catalog") || len(d) > describeBudget || len(d) > len(spec.BasicCatalog)/5 {
		t.Errorf("the basic catalog takes %d bytes to describe (its schema %d)", len(d), len(spec.BasicCatalog))
	}
}

// largeCatalog is an inline v0.9 catalog of n components, each with two required and six
// optional properties, all with long descriptions.
func largeCatalog(n int) []byte {
	comps := map[string]any{}
	long := "A property whose description goes on and on about what it does, when to use it, and what the renderer makes of it in every case."
	for i := range n {
		props := map[string]any{
			"id":        map[string]any{"type": "string"},
			"component": map[string]any{"const": fmt.Sprintf("Widget%03d", i)},
			"title":     map[string]any{"$ref": "https://a2ui.org/specification/v0_9/common_types.json#/$defs/DynamicString", "description": long},
			"child":     map[string]any{"$ref": "https://a2ui.org/specification/v0_9/common_types.json#/$defs/ComponentId", "description": long},
		}
		for j := range 6 {
			props[fmt.Sprintf("option%d", j)] = map[string]any{"type": "string", "enum": []any{"small", "medium", "large"}, "description": long}
		}
		comps[fmt.Sprintf("Widget%03d", i)] = map[string]any{"type": "object", "description": long, "properties": props,
			"required": []any{"id", "component", "title", "child"}, "additionalProperties": false}
	}
	b, _ := json.Marshal(map[string]any{"catalogId": "https://example.com/large.json", "components": comps})
	return b
}

// TestDescribeLargeCatalog checks that a large catalog is described within the budget,
// more tersely the larger it is, every component named with its required properties.
func TestDescribeLargeCatalog(t *testing.T) {
	for _, tc := range []struct {
		n    int
		mark string
	}{{20, ""}, {70, "(A large catalog: its descriptions are left out.)"}, {200, "optional properties are only named"}} {
		doc := largeCatalog(tc.n)
		c, err := catalog.Compile(decodeDoc(catalog.A2UIDocument(V09, "https://example.com/large.json", doc)))
		if err != nil {
			t.Fatal(err)
		}
		d := Describe(c)
		t.Logf("%d components: schema %d bytes, description %d bytes", tc.n, len(doc), len(d))
		if tc.mark == "" && strings.Contains(d, "A large catalog") || tc.mark != "" && !strings.Contains(d, tc.mark) {
			t.Errorf("%d components: want the mark %q:\n%.300s", tc.n, tc.mark, d)
		}
		if tc.n <= 70 && len(d) > describeBudget {
			t.Errorf("%d components: %d bytes, over the budget", tc.n, len(d))
		}
		for i := range tc.n {
			if !strings.Contains(d, fmt.Sprintf("- Widget%03d: child: ComponentId; title: DynamicString", i)) {
				t.Fatalf("%d components: Widget%03d is not described with its required properties", tc.n, i)
			}
		}
	}
}
