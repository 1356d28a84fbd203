package catalog

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/genuiserver/genui/schemas"
)

func TestIdenticalCatalogsShareOneCompiledCopy(t *testing.T) {
	cs := NewCache(4, 0, 0)
	a, _ := schemas.SampleCatalog("basic")
	compact, _ := json.Marshal(a)
	indented, _ := json.MarshalIndent(a, "", "  ") // the same catalog, other bytes
	ca, err := cs.Compile(compact)
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := cs.Compile(indented)
	if ca != cb {
		t.Fatal("equal catalogs compiled twice")
	}
	if got, ok := cs.Lookup(ca.Hash); !ok || got != ca {
		t.Fatal("Lookup by hash")
	}
}

func TestCatalogSizeLimit(t *testing.T) {
	basic, _ := schemas.SampleCatalog("basic")
	raw, _ := json.Marshal(basic)
	_, err := NewCache(4, 100, 0).Compile(raw)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 100 {
		t.Fatalf("%v", err)
	}
}

// The cache keeps at most its byte bound of catalogs, least recently used first out.
func TestCacheByteBound(t *testing.T) {
	basic, _ := schemas.SampleCatalog("basic")
	variant := func(i int) []byte {
		basic["description"] = fmt.Sprint("variant ", i)
		b, _ := json.Marshal(basic)
		return b
	}
	first, err := NewCache(100, 0, 0).Compile(variant(0))
	if err != nil {
		t.Fatal(err)
	}
	cs := NewCache(100, 0, 3*first.Size())
	for i := range 5 {
		if _, err := cs.Compile(variant(i)); err != nil {
			t.Fatal(err)
		}
	}
	n, b := cs.Len()
	if n != 3 || b > 3*first.Size() {
		t.Fatalf("%d catalogs, %d bytes", n, b)
	}
	c, _ := cs.Compile(variant(4))
	if _, ok := cs.Lookup(c.Hash); !ok {
		t.Fatal("the most recent catalog was dropped")
	}
	c0, _ := Compile(mustDecode(t, variant(0)))
	if _, ok := cs.Lookup(c0.Hash); ok {
		t.Fatal("the oldest catalog was kept")
	}
	if first.Size() < 3*len(first.Canonical) || first.Size() > 10*len(first.Canonical) {
		t.Errorf("size estimate %d for %d bytes of JSON", first.Size(), len(first.Canonical))
	}
}

func mustDecode(t *testing.T, b []byte) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}
