// Package genui generates UI for a conversation from a client's widget catalog.
//
// A [Service] turns a [schemas.GenerateRequest] into a turn: it resolves the catalog (from
// the session store or the request), maps the conversation to model messages, prompts the
// model with the catalog-derived UI tools, checks every tool request against the catalog
// and emits [schemas.Event]s the moment each request is known to be valid. Invalid
// requests are never emitted; the model is asked to repair them instead.
//
// The Genkit flows startSession and generateUi wrap the service, so Genkit tooling can list
// and run them and traces cover every turn. Transports (in sub-packages) only decode
// requests and encode events.
package genui
