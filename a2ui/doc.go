// Package a2ui implements the A2UI protocol (https://a2ui.org), versions v0.9 and v0.8,
// for Go programs that have a model write A2UI, or that check A2UI another agent wrote: a
// Go A2UI SDK. It needs a model's text and a client's capabilities, and nothing of the
// service it is part of.
//
// What a turn of an agent does with it:
//
//   - Choose the catalog: [ParseCapabilities] reads the client's a2uiClientCapabilities,
//     [Capabilities.Choose] picks the catalog (the client's order; the agent's catalogs
//     [WithCatalogs], the built-in ones otherwise; or one the client sends inline), and
//     [CompileCatalog] compiles it. [CheckVersion] reads a requested version; a request
//     without capabilities gets [DefaultCatalogID].
//   - Describe the catalog for the prompt: [Describe] writes each component type as one
//     line of its properties and their types, in a fraction of the schema's tokens.
//   - Parse the model's streamed text: a [Parser] cuts it into prose, components and
//     messages as it arrives, from <a2ui-json>…</a2ui-json> blocks (the format the A2UI
//     agent SDKs prompt for), fenced ```a2ui or ```json blocks, or lines of JSON.
//   - Check and build what the client gets: a [Builder] checks each component and message
//     against the catalog and A2UI's rules, and lets out the messages a client may receive
//     as soon as the surface stays valid with them: every state of a surface a client sees
//     is valid A2UI, from the first component on. [Builder.End] reports what broke a rule
//     ([Violations]), for the model to repair; [Builder.Shown] tells the builder what the
//     client already has, from the conversation's earlier messages.
//   - Validate messages another agent wrote: [Validate] judges them as a renderer receives
//     them, each [Violation] naming its message, the field and the kind of rule ([CodeSchema],
//     [CodeCycle], …). The command cmd/a2ui does the same for agents in any language.
//   - Keep what is valid but unsafe from the client: [WithPolicy] has a Builder or Validate
//     also apply a UI policy (package policy): URLs as literals, bound to the data model or
//     computed, data-model values, functions, accessibility, obscured fields
//     ([CodeUnsafeURL], [CodeInaccessible], …).
//   - Read what the client sends back: [DecodeClientMessage] (actions and errors), and
//     [ClientMessage.Describe] to tell the model; [ClientMessage.Encode] writes one, for
//     a bridge that receives actions in another form.
//
// The package passes the official A2UI conformance suite, but for the deviations listed,
// with the specification's words, in CONFORMANCE.md.
//
// This package is a library with a stable API: it depends on nothing of the service
// above it, and its exported names change only with the module's major version.
package a2ui
