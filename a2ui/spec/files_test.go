package spec

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestFilesAreThePublishedOnes checks that the embedded files are, byte for byte, those
// of @a2ui/web_core 0.11.0 as npm publishes it (installed by make deps), the package the
// web renderers validate with.
func TestFilesAreThePublishedOnes(t *testing.T) {
	src := filepath.Join("..", "..", "web", "a2ui", "node_modules", "@a2ui", "web_core", "src")
	if _, err := os.Stat(src); err != nil {
		if testing.Short() {
			t.Skipf("skipped under -short: needs @a2ui/web_core from npm (npm ci in web/a2ui): %v", err)
		}
		t.Fatalf("@a2ui/web_core is not installed (run make deps): %v", err)
	}
	for file, embedded := range map[string][]byte{
		"v0_9/schemas/common_types.json":                CommonTypes,
		"v0_9/schemas/catalogs/basic/catalog.json":      BasicCatalog,
		"v0_9/schemas/catalogs/minimal/catalog.json":    MinimalCatalog,
		"v0_8/schemas/standard_catalog_definition.json": StandardCatalog,
	} {
		published, err := os.ReadFile(filepath.Join(src, file))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(published, embedded) {
			t.Errorf("%s differs from the embedded copy", file)
		}
	}
}
