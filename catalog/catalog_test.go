package catalog

import (
	"strings"
	"testing"

	"github.com/genuiserver/genui/schemas"
)

func mustBasic(t testing.TB) *Catalog {
	t.Helper()
	s, err := schemas.SampleCatalog("basic")
	if err != nil {
		t.Fatal(err)
	}
	c, err := Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestBasicCatalogIndex(t *testing.T) {
	c := mustBasic(t)
	var names []string
	for _, w := range c.Widgets() {
		names = append(names, w.Name)
	}
	if got := strings.Join(names, ","); got != "CheckboxGroup,Column,ElevatedButton,Image,RadioGroup,Row,Text,TextField" {
		t.Fatalf("widgets %s", got)
	}
	ws := c.Widgets()
	if w := ws[6]; w.Name != "Text" || w.Properties["text"]["type"] != "string" || w.Required[0] != "text" {
		t.Fatalf("Text: %+v", w)
	}
}

func TestSameCatalogSameHash(t *testing.T) {
	a, b := mustBasic(t), mustBasic(t)
	if a.Hash != b.Hash || len(a.Hash) != 43 {
		t.Fatalf("%s %s", a.Hash, b.Hash)
	}
}
