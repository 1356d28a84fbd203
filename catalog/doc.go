// Package catalog compiles a client's catalog into what generation needs. A GenUI widget
// catalog (a JSON Schema of the surface definitions a client can render) becomes an index
// of its widgets and a validator that checks a surface definition against the catalog's
// schema and GenUI's own rules (one known widget per entry, unique ids, a root, references
// that resolve and form no cycle), describing each violation precisely enough for the
// model to repair it. An A2UI catalog (v0.9 or v0.8, see [A2UIDocument]) becomes an [A2UI]:
// a validator per component type, which of their properties hold component ids, the
// catalog's functions and theme, and a typed view of its schemas ([SchemaNode],
// [A2UI.Resolve]) to describe them. A [Cache] compiles each distinct catalog once and
// shares it.
//
// This package is a library with a stable API: it depends on nothing of the service
// above it, and its exported names change only with the module's major version.
package catalog
