package catalog

import (
	"errors"
	"testing"

	"github.com/genuiserver/genui/schemas"
)

func TestIdenticalCatalogsShareOneCompiledCopy(t *testing.T) {
	cs := NewCache(4, 0)
	a, _ := schemas.SampleCatalog("basic")
	b, _ := schemas.SampleCatalog("basic") // a distinct but equal value
	ca, err := cs.Compile(a)
	if err != nil {
		t.Fatal(err)
	}
	cb, _ := cs.Compile(b)
	if ca != cb {
		t.Fatal("equal catalogs compiled twice")
	}
}

func TestCatalogSizeLimit(t *testing.T) {
	basic, _ := schemas.SampleCatalog("basic")
	_, err := NewCache(4, 100).Compile(basic)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 100 {
		t.Fatalf("%v", err)
	}
}
