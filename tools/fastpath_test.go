package tools

import "testing"

func TestFastValidatorCoversTheCatalogs(t *testing.T) {
	for _, p := range []string{"testdata/large.json", "../schemas/catalogs/rich.json", "../schemas/catalogs/basic.json"} {
		c, err := Compile(loadCatalog(t, p))
		if err != nil {
			t.Fatal(p, err)
		}
		if c.top == nil {
			t.Errorf("%s: no fast top", p)
		}
		for _, w := range c.Widgets {
			if w.node == nil {
				t.Errorf("%s: %s has no fast node", p, w.Name)
			}
		}
		t.Logf("%s: %d widgets, refs of first: %v", p, len(c.Widgets), c.Widgets[0].refs)
	}
}
