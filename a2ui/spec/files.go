package spec

import _ "embed"

// Catalog ids of the built-in catalogs.
const (
	// BasicCatalogID is the v0.9 basic catalog, as the specification and the web
	// renderers name it.
	BasicCatalogID = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
	// FlutterBasicCatalogID is the same catalog as Flutter genui 0.10 names it.
	FlutterBasicCatalogID = "https://a2ui.org/specification/v0_9/basic_catalog.json"
	// MinimalCatalogID is the v0.9 minimal catalog.
	MinimalCatalogID = "https://a2ui.org/specification/v0_9/catalogs/minimal/catalog.json"
	// StandardCatalogID is the v0.8 standard catalog, the default of a v0.8 surface.
	StandardCatalogID = "https://a2ui.org/specification/v0_8/standard_catalog_definition.json"
)

// Schema URLs the catalogs refer to.
const (
	// CommonTypesURL is the $id of the v0.9 common types.
	CommonTypesURL = "https://a2ui.org/specification/v0_9/common_types.json"
	// CatalogURL is where v0.9 schemas look for "the" catalog
	// (catalog.json#/$defs/anyComponent, catalog.json#/$defs/anyFunction).
	CatalogURL = "https://a2ui.org/specification/v0_9/catalog.json"
)

var (
	//go:embed v0_9/common_types.json
	CommonTypes []byte
	//go:embed v0_9/basic_catalog.json
	BasicCatalog []byte
	//go:embed v0_9/minimal_catalog.json
	MinimalCatalog []byte
	//go:embed v0_8/standard_catalog_definition.json
	StandardCatalog []byte
)
