package schemas

import (
	"embed"
	"encoding/json"
	"fmt"
	"io/fs"
	"sort"
	"strings"
)

//go:embed catalogs/*.json
var catalogFS embed.FS

// SampleCatalog returns a sample widget catalog by name ("basic" is the genui basic widget
// set), decoded as a JSON Schema object.
func SampleCatalog(name string) (map[string]any, error) {
	b, err := catalogFS.ReadFile("catalogs/" + name + ".json")
	if err != nil {
		return nil, fmt.Errorf("sample catalog %q: %w", name, err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("sample catalog %q: %w", name, err)
	}
	return m, nil
}

// SampleCatalogNames lists the sample catalogs ("basic", "rich").
func SampleCatalogNames() []string {
	entries, _ := fs.ReadDir(catalogFS, "catalogs")
	var names []string
	for _, e := range entries {
		names = append(names, strings.TrimSuffix(e.Name(), ".json"))
	}
	sort.Strings(names)
	return names
}
