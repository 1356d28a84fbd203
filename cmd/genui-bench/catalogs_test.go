package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/genuiserver/genui/catalog"
)

// alternatives returns the widget alternatives of a generated catalog, checking the
// shape GenUI expects on the way.
func alternatives(t *testing.T, raw []byte) []any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	get := func(m any, keys ...string) any {
		for _, k := range keys {
			mm, ok := m.(map[string]any)
			if !ok {
				t.Fatalf("no object at %q in %s", k, truncate(raw, 200))
			}
			m = mm[k]
		}
		return m
	}
	alts, ok := get(doc, "properties", "widgets", "items", "properties", "widget", "anyOf").([]any)
	if !ok || len(alts) == 0 {
		t.Fatalf("no widget alternatives")
	}
	for _, a := range alts {
		props, _ := get(a, "properties").(map[string]any)
		if len(props) != 1 {
			t.Fatalf("alternative with %d properties: %v", len(props), a)
		}
		for name, w := range props {
			if get(w, "type") != "object" || get(a, "required").([]any)[0] != name {
				t.Fatalf("widget %s: %v", name, a)
			}
		}
	}
	return alts
}

func TestGenCatalog(t *testing.T) {
	for _, size := range []int{minCatalogBytes, 1500, 4 << 10, 16 << 10, 100_000, 1 << 20} {
		raw, err := genCatalog(3, size)
		if err != nil {
			t.Fatalf("size %d: %v", size, err)
		}
		// The catalog is compact JSON of the requested size (the brief allows a few
		// percent; the generator is exact).
		if len(raw) != size {
			t.Errorf("size %d: got %d bytes", size, len(raw))
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, raw); err != nil || !bytes.Equal(compact.Bytes(), raw) {
			t.Errorf("size %d: not compact JSON (%v)", size, err)
		}
		alts := alternatives(t, raw)
		if size >= 16<<10 && len(alts) < 20 {
			t.Errorf("size %d: only %d widgets", size, len(alts))
		}
		again, _ := genCatalog(3, size)
		if !bytes.Equal(raw, again) {
			t.Errorf("size %d: not deterministic", size)
		}
	}
	if _, err := genCatalog(0, minCatalogBytes-1); err == nil {
		t.Error("a catalog below the minimum size was made")
	}
}

// TestGenCatalogDistinct: the catalogs of one run all differ, and the widgets of a catalog
// use every kind of property.
func TestGenCatalogDistinct(t *testing.T) {
	seen := map[[32]byte]int{}
	for i := range 300 {
		raw, err := genCatalog(i, 16<<10)
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(raw)
		if j, dup := seen[sum]; dup {
			t.Fatalf("catalogs %d and %d are the same", j, i)
		}
		seen[sum] = i
	}
	raw, _ := genCatalog(42, 16<<10)
	s := string(raw)
	for _, want := range []string{`"type":"string"`, `"type":"number"`, `"type":"integer"`, `"type":"boolean"`,
		`"type":"array"`, `"enum":[`, `"required":[`, `"description":"`, `"child":{`, `"children":{`, "catalog 42"} {
		if !strings.Contains(s, want) {
			t.Errorf("catalog 42 lacks %s", want)
		}
	}
	a, _ := genCatalog(1, 16<<10)
	b, _ := genCatalog(2, 16<<10)
	if len(alternatives(t, a)) == len(alternatives(t, b)) && bytes.Equal(a[:2000], b[:2000]) {
		t.Error("catalogs 1 and 2 start alike")
	}
}

// TestGenCatalogCompiles compiles generated catalogs as the server does: valid JSON
// Schemas whose every alternative is a widget, with references where layouts have them.
func TestGenCatalogCompiles(t *testing.T) {
	for i, size := range []int{minCatalogBytes, 8 << 10, 16 << 10, 64 << 10} {
		raw, err := genCatalog(i, size)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		c, err := catalog.Compile(doc)
		if err != nil {
			t.Fatalf("catalog %d (%d bytes): %v", i, size, err)
		}
		widgets := c.Widgets()
		if n := len(alternatives(t, raw)); len(widgets) != n {
			t.Errorf("catalog %d: %d widgets compiled for %d alternatives", i, len(widgets), n)
		}
		if len(c.Canonical) != size {
			t.Errorf("catalog %d: canonical form is %d bytes, not %d", i, len(c.Canonical), size)
		}
		for _, w := range widgets {
			if w.Name == "Card" && len(w.Required) == 0 {
				t.Errorf("catalog %d: Card without required properties", i)
			}
		}
	}
}

func TestPadding(t *testing.T) {
	for n := range 200 {
		p := padding(n)
		if len(p) != n {
			t.Fatalf("padding(%d) is %d bytes: %q", n, len(p), p)
		}
		if n > 0 && (p[0] != ' ' && p != ".") || strings.Contains(p, "  ") {
			t.Fatalf("padding(%d) = %q", n, p)
		}
	}
}

// TestCatalogsPhaseLimit gives the phase far more catalogs than it can create in its
// --phase-limit: it stops in time and reports what it created. The catalogs are too many
// to make beforehand, so the clients make them as they go.
func TestCatalogsPhaseLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	defer goleak.VerifyNone(t)
	bin := buildServerBin(t)
	const n, size = 20000, 4 << 10
	if n*size <= pregenLimit {
		t.Fatal("the catalogs would be made beforehand")
	}
	rep, table := runJSON(t, "--server-bin", bin, "--phases", "catalogs", "--catalogs", "20000", "--catalog-bytes", "4096",
		"--catalog-concurrency", "2", "--phase-limit", "500ms")
	c := rep.Catalogs
	if c == nil || !c.PhaseLimitHit || c.Created == 0 || c.Created >= n || c.Errors != 0 || c.ElapsedS > 10 ||
		c.CatalogJSONBytes != size || c.BytesPerCatalog == nil || c.CPUPerCatalogMS == nil || *c.CPUPerCatalogMS <= 0 {
		t.Fatalf("catalogs: %+v", c)
	}
	if !strings.Contains(table, "phase-limit") || !strings.Contains(table, "catalog ") {
		t.Errorf("table:\n%s", table)
	}
}

// TestCatalogsRefused: a server that refuses the generated catalogs (here for their size)
// costs the phase its figures, not the run.
func TestCatalogsRefused(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	defer goleak.VerifyNone(t)
	bin := buildServerBin(t)
	rep, table := runJSON(t, "--server-bin", bin, "--server-args", "--catalog-limit 6000", "--phases", "catalogs,bytes",
		"--catalogs", "5", "--catalog-bytes", "8192")
	if c := rep.Catalogs; c == nil || c.Created != 0 || c.Errors != 1 || !strings.Contains(c.FirstError, "413") && !strings.Contains(c.FirstError, "limit") {
		t.Fatalf("catalogs: %+v", c)
	}
	if rep.Bytes == nil || rep.Bytes.NDJSONBodyBytes == 0 {
		t.Fatalf("bytes: %+v", rep.Bytes)
	}
	if !strings.Contains(table, "refused a generated catalog") {
		t.Errorf("table:\n%s", table)
	}
}
