// Package genui generates UI for a conversation from a client's widget catalog.
//
// A [Service] is the one entry point of every transport. [Service.StartSession] registers a
// catalog; [Service.Stream] prepares a turn (the catalog from the session store or the
// request, the conversation mapped to model messages) and returns a durable [Stream] whose
// [Stream.Each] runs the turn: it prompts the model with the catalog-derived UI tools,
// checks every tool request against the catalog and passes each item to the transport the
// moment it is stored, valid tool requests and model text first, then exactly one result or
// error. Invalid requests are never passed on; the model is asked to repair them instead.
// [Service.Resume] reads a stream again, on any replica sharing its log;
// [Service.Generate] runs a turn without a stream. Errors are [*Error] values with a
// canonical [Status] that each transport maps to its own codes.
//
// The turn calls its model through the [Model] port; adapters translate it to a provider
// (package gemini for Gemini and Vertex AI through google.golang.org/genai, [GenkitModel]
// for any Genkit model, package offline). The Genkit flows startSession and generateUi wrap
// every turn, so Genkit tooling lists, runs and traces them.
package genui
