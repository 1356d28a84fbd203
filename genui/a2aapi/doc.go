// Package a2aapi serves the service as an A2A agent whose UI is A2UI, for Flutter's
// genui_a2a, the A2UI web clients and any A2A SDK.
//
// # On a2a-go
//
// The wire protocols are github.com/a2aproject/a2a-go's (pinned in go.mod: v2.4.0 and
// v0.3.15), so that one process serves A2A v0.3 JSON-RPC (genui_a2a 0.10.1, @a2a-js/sdk
// 0.3.x) and A2A 1.0 JSON-RPC and HTTP+JSON (@a2a-js/sdk 1.x) from the same handler: A2A
// 1.0 through its v2 line, v0.3 JSON-RPC through its v0.3 line (a2a-go v0.3.15), whose
// errors carry their details as one data object, as v0.3 clients read them (v2.4.0's v0.3
// layer, a2acompat/a2av0, writes 1.0's list), the types converted by a2av0. a2a-go parses
// and dispatches the methods, writes the SSE streams, maps errors to codes and makes the
// card's JSON. contract_test.go pins what the package relies on of a2a-go, or works
// around for want of an option: it fails when an upgrade changes that.
//
// The request handler behind those transports is this package's, on the core, rather
// than a2a-go's default one (an executor feeding an in-process event queue and a task
// store). A task's turn is a durable stream of the core ([genui.Service.StreamA2UI]) in
// the conversation the server holds for the task's context: so a task streams, resumes
// and cancels on any replica sharing the stream log, and a resubscription gets the events
// the client missed, read from that log, where a2a-go's default handler resubscribes only
// to executions live in its own process. The transport adds no generation, storage of
// conversations or validation of its own.
//
// Around a2a-go, for what real clients need: the extensions a request asks for are read
// from both X-A2A-Extensions and A2A-Extensions (a2a-go keeps one of the two, by chance),
// their values split on commas, and the activated A2UI extensions echoed; answers without
// a content type get JSON's; CORS is the server's middleware's, preflights included
// (a2a-go's JSON-RPC handlers accept only POST); the card is served by the server, its
// JSON made by a2a-go's v0.3 card producer (a2a-go's card handler sets CORS headers of
// its own, allowing any origin, with credentials); v0.3 clients get one A2UI message per
// DataPart (a 1.0 data list would reach them wrapped, which Flutter ignores). The v0.3
// JSON-RPC endpoint and the card are also served for an agent URL given with a trailing
// slash.
//
// # Mapping
//
//   - A context is a conversation the core holds (its id derived from the contextId): a
//     message in a context continues it with the whole history. A message naming an
//     input-required task continues that task; a message with only a contextId (and
//     referenceTaskIds, as genui_a2a sends after every action) starts a new task in it.
//   - Text parts are text; image file parts images; DataParts holding an A2UI client
//     message (action, v0.8 userAction, error; alone or in a list; any MIME type or none)
//     the user's action; {"toolResult":{"callId","name","output"|"error"}} the result of a
//     client tool; other data is shown to the model as JSON. metadata.a2uiClientCapabilities
//     and a2uiClientDataModel are the A2UI client's; metadata.clientTools declares client
//     tools; metadata.model names the model of the turn (one the server lets the caller
//     choose), which the context keeps for its next turns.
//   - The A2UI version is the newest A2UI extension the request activates, else the one
//     its capabilities are keyed by, else v0.9. A Dart client (Flutter) without
//     capabilities gets the basic catalog under Flutter's id.
//   - A stream sends the task (submitted), a working status update per A2UI message (a
//     DataPart of MIME type application/json+a2ui, or application/a2ui+json for v0.9.1)
//     and per line of text (a TextPart), then the final status: input-required when a
//     surface waits for the user's action or a call of a client tool for its result (the
//     calls as {"toolCall":{"callId","name","input"}} DataParts), completed, failed or
//     canceled with a text message; then it closes. UI travels only in status messages.
//     A failed turn's message says what failed and its status, never the core's own
//     message, which may name internal addresses (the server logs it); a turn stopped at
//     one of the service's turn limits (genui.Limits) names the limit and its value,
//     apart from a limit of the model's, which passes with a retry.
//   - message/send returns the task at the end of its turn, its status message holding
//     the turn whole (or at once, submitted, with blocking: false): its text and calls
//     where they came, and each surface once, in its final state (a2ui.Final of each run
//     of A2UI messages: its createSurface, the data-model updates no later one replaces,
//     one update of its components in their final versions), not the updates that
//     streamed it. tasks/get returns the task as stored after its last turn; a task keeps
//     its turn's parts so compacted and encodes them for each reader's wire.
//   - Errors (errors.go) name the field; v0.3 errors carry their details and reason as
//     one object (genui_a2a reads a map); a limit says when to retry, in whole seconds.
//     Message params a2a-go cannot decode from a JSON body are invalid params (a2a-go
//     says parse error), a method that is not a string an invalid request (a2a-go says
//     invalid params). The error events of HTTP+JSON streams have the type error, where
//     @a2a-js/sdk 1.x looks for them (a2a-go writes none: see wrapREST).
//   - tasks/resubscribe (SubscribeToTask) sends what A2A asks: the task first, in its
//     current state, then the status updates of its latest turn in the order they were
//     generated, read from the turn's durable stream on any replica, then the live tail
//     until the turn ends. The turn is sent from its start (A2A v0.3 leaves backfilling
//     missed events to the server; the A2A clients send no Last-Event-ID), every status
//     message under the id it had in the first stream, for the client to drop the ones
//     it has. What a client read of an earlier stream is never guessed.
//   - tasks/cancel cancels a running turn wherever it runs (its model call stops and its
//     stream ends canceled), or a task waiting for input.
package a2aapi
