package a2ui

import (
	"encoding/json"
	"fmt"
	"sync"

	"github.com/genuiserver/genui/a2ui/spec"
	"github.com/genuiserver/genui/catalog"
)

// builtinDocs maps the ids of the built-in catalogs of each version to their documents.
var builtinDocs = map[string]map[string][]byte{
	V09: {
		spec.BasicCatalogID:        spec.BasicCatalog,
		spec.FlutterBasicCatalogID: spec.BasicCatalog,
		spec.MinimalCatalogID:      spec.MinimalCatalog,
	},
	V08: {
		spec.StandardCatalogID: spec.StandardCatalog,
	},
}

// DefaultCatalogID is the catalog of a client that advertises none: the v0.9 basic
// catalog, or the v0.8 standard catalog.
func DefaultCatalogID(version string) string {
	if version == V08 {
		return spec.StandardCatalogID
	}
	return spec.BasicCatalogID
}

// IsBuiltin reports whether id names a built-in catalog of the version.
func IsBuiltin(version, id string) bool {
	_, ok := builtinDocs[version][id]
	return ok
}

// BuiltinIDs lists the ids of the built-in catalogs of a version.
func BuiltinIDs(version string) []string {
	var out []string
	for _, id := range []string{spec.BasicCatalogID, spec.FlutterBasicCatalogID, spec.MinimalCatalogID, spec.StandardCatalogID} {
		if IsBuiltin(version, id) {
			out = append(out, id)
		}
	}
	return out
}

// SameCatalog reports whether two catalog ids name the same built-in catalog (the v0.9
// basic catalog has two).
func SameCatalog(version, a, b string) bool {
	if a == b {
		return true
	}
	da, oka := builtinDocs[version][a]
	db, okb := builtinDocs[version][b]
	return oka && okb && &da[0] == &db[0]
}

type builtinKey struct{ version, id string }

var builtins sync.Map // builtinKey → *builtinEntry

type builtinEntry struct {
	once sync.Once
	c    *catalog.Catalog
	err  error
}

// Builtin returns the built-in catalog of the version known by id, compiled the first
// time it is asked for.
func Builtin(version, id string) (*catalog.Catalog, error) {
	doc, ok := builtinDocs[version][id]
	if !ok {
		return nil, fmt.Errorf("no built-in %s catalog %q", version, id)
	}
	v, _ := builtins.LoadOrStore(builtinKey{version, id}, &builtinEntry{})
	e := v.(*builtinEntry)
	e.once.Do(func() {
		e.c, e.err = catalog.Compile(map[string]any{"a2uiCatalog": map[string]any{"version": version, "catalogId": id, "catalog": decodeDoc(doc)}})
	})
	return e.c, e.err
}

// CompileCatalog compiles the catalog [Capabilities.Choose] picked: the built-in catalog
// id names when doc is nil, else the catalog document doc (the specification's form, or
// the form a client sends inline), known to clients by id.
func CompileCatalog(version, id string, doc []byte) (*catalog.Catalog, error) {
	if doc == nil {
		return Builtin(version, id)
	}
	var w map[string]any
	if err := json.Unmarshal(catalog.A2UIDocument(version, id, doc), &w); err != nil {
		return nil, fmt.Errorf("catalog %q is not JSON: %w", id, err)
	}
	return catalog.Compile(w)
}
