// Package offline is the built-in offline model: a deterministic generator, not an LLM, that
// composes a surface valid against any catalog in the genui format, so that the whole
// protocol runs without credentials. It echoes the user's text in a text-like widget inside
// a container widget, adds the catalog's text field and button so that UI events can be
// exercised, reflects UI events in an updated surface, and deletes the latest surface when
// asked to ("delete", "remove" or "close"). When the user's text names declared client
// tools, it calls them (with an input of their schemas' required properties); their
// results, when the turn continues, are shown in a surface, string values verbatim. A text
// in steps ("use getLocation, then confirm") calls the tools of each step in turn, the
// next after the surface showing the results of the last.
//
// [New] is the model the turn calls directly; [Define] registers the same model in Genkit,
// for Genkit tooling.
//
// This package is the service's own: its API serves the genui server and may change
// from one release to the next. The packages meant for import are a2ui, catalog, policy
// and schemas.
package offline
