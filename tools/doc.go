// Package tools defines the UI tools the model calls to change what a client shows:
// addOrUpdateSurface, whose input schema is built from the client's catalog, and
// deleteSurface. It holds their names, descriptions and input schemas (encoded once per
// catalog), what each tool answers the model, and the check of a tool request before
// anything reaches the client.
//
// This package is the service's own: its API serves the genui server and may change
// from one release to the next. The packages meant for import are a2ui, catalog, policy
// and schemas.
package tools
