// Package schemas holds the wire types of the GenUI protocol: the requests clients send to
// /startSession and /generateUi, the conversation they carry, the events and results the
// server streams back, and the sample widget catalogs. Types describe their own JSON Schema
// for Genkit (through invopop/jsonschema); the package has no behaviour.
//
// This package is a library with a stable API: it depends on nothing of the service
// above it, and its exported names change only with the module's major version.
package schemas
