package catalog

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

func loadCatalog(t testing.TB, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// largeSurface is a valid 100-widget surface of the large catalog: Widget00 (a container)
// holding 99 leaves of assorted widget types.
func largeSurface() map[string]any {
	children := []any{}
	widgets := []any{}
	for i := 1; i < 100; i++ {
		n := i % 60
		if n%3 == 0 || n%5 == 1 {
			n = 2 // a leaf type without children/child
		}
		id := fmt.Sprintf("w%d", i)
		children = append(children, id)
		widgets = append(widgets, map[string]any{"id": id, "widget": map[string]any{fmt.Sprintf("Widget%02d", n): map[string]any{"label": id, "size": float64(i), "variant": "b"}}})
	}
	widgets = append([]any{map[string]any{"id": "root", "widget": map[string]any{"Widget00": map[string]any{"label": "root", "children": children}}}}, widgets...)
	return map[string]any{"surfaceId": "s", "definition": map[string]any{"root": "root", "widgets": widgets}}
}

func BenchmarkCheckLargeSurface(b *testing.B) {
	c, err := Compile(loadCatalog(b, "testdata/large.json"))
	if err != nil {
		b.Fatal(err)
	}
	in := largeSurface()
	if r := c.CheckDefinition(in["definition"], "/definition"); !r.OK() || len(r.Warnings) > 0 {
		b.Fatal(r)
	}
	b.ReportAllocs()
	for b.Loop() {
		c.CheckDefinition(in["definition"], "/definition")
	}
}

func BenchmarkCompileLargeCatalog(b *testing.B) {
	m := loadCatalog(b, "testdata/large.json")
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Compile(m); err != nil {
			b.Fatal(err)
		}
	}
}
