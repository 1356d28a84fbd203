// Package spec holds the A2UI specification files the service is built with: the v0.9
// common types, the v0.9 basic and minimal catalogs and the v0.8 standard catalog,
// as published in the npm package @a2ui/web_core 0.11.0 (the package the web renderers
// validate with), so that the server checks surfaces exactly as the renderer does.
package spec
