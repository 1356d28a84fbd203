// Package catalog compiles a client's widget catalog (a JSON Schema of the surface
// definitions it can render) into what generation needs: an index of the catalog's
// widgets and a validator that checks a surface definition against the catalog's schema
// and GenUI's own rules (one known widget per entry, unique ids, a root, references that
// resolve and form no cycle), describing each violation precisely enough for the model
// to repair it. A [Cache] compiles each distinct catalog once and shares it.
package catalog
