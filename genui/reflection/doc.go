// Package reflection connects a Genkit Go application to the Genkit Dev UI over the Reflection
// API V2: the Genkit CLI (the runtime manager, `genkit start --experimental-reflection-v2`)
// listens on a WebSocket, and the application (the runtime) dials it and answers JSON-RPC 2.0
// requests.
//
// # Why this package exists
//
// Genkit Go has shipped a V2 client of its own since v1.7.0 (genkit/reflection_v2.go, started
// by genkit.Init in the development environment when $GENKIT_REFLECTION_V2_SERVER is set). In
// v1.13.1, the version this module builds with, it cannot serve this service. References are
// to github.com/firebase/genkit/go@v1.13.1; TestGenkitV2ClientDefects reproduces 1, 3 and 4
// and fails when one is fixed:
//
//  1. A message from the CLI over 32 KiB drops the connection. The client never raises the
//     read limit (reflection_v2.go:180 dials, :278 reads with wsjson.Read), so coder/websocket's
//     default of 32768 bytes applies (github.com/coder/websocket@v1.8.15 read.go:107): a
//     runAction whose input holds a real catalog closes the socket with StatusMessageTooBig,
//     is never answered, and the runtime reconnects. A Dev UI run of generateUi never returns.
//  2. Without a CLI, reconnection turns into a busy loop after about 3 minutes. The delay is
//     reconnectBaseDelay << attempt (reflection_v2.go:214), capped only after the shift
//     (:215-217), and attempt grows without bound (:228): from attempt 35 the shift overflows
//     to zero or negative delays, from attempt 56 it is always 0. Each failed attempt also
//     runs register and the read loop again on the closed connection (:201-202), logging an
//     error every time.
//  3. Running actions are not cancelled when the connection drops: a run's context derives
//     from genkit.Init's (reflection_v2.go:424), a drop only ends bidi input streams
//     (:275, :662-673), and the late answer goes to whatever connection is current (:961-965),
//     where a restarted CLI may have reused the request id.
//  4. genkit.Init panics when the CLI is not up: the first dial is synchronous and its failure
//     is a startup error (reflection_v2.go:166-170) that Init turns into a panic
//     (genkit/genkit.go:378-382).
//
// Also: the runtime name is always the runtime id (reflection_v2.go:238-241; Init passes no
// name, genkit.go:343), listValues answers every registry value whatever the type asked
// (:381-396), and the RFC's $GENKIT_REFLECTION_API_URL and streamInputChunk / endStreamInput
// names are not read. When the defects above are fixed upstream, replace InitGenkit and Start
// with genkit.Init and delete this package.
//
// # Use
//
// Call [InitGenkit] instead of genkit.Init, then [Start]:
//
//	g := reflection.InitGenkit(ctx, genkit.WithPlugins(plugins...))
//	// define flows, models, …
//	client, err := reflection.Start(ctx, g, reflection.WithName("genui-server"),
//		reflection.WithActions("/model/genui/offline"))
//	if err != nil {
//		log.Warn("Genkit Dev UI: disabled", "err", err)
//	}
//	defer client.Close()
//
// Reflection is off unless $GENKIT_REFLECTION_V2_SERVER (what the CLI sets) or
// $GENKIT_REFLECTION_API_URL (the RFC's name) holds a ws:// URL; Start then returns (nil, nil).
// Start returns at once; a manager that is absent or restarts never delays or breaks the
// application. The client connects, sends register (as a request, which the CLI answers with
// its telemetry server URL), serves the manager's requests, and on a dropped connection
// cancels the actions running for it and reconnects with exponential backoff (500 ms doubling
// to 30 s, ±20% jitter), registering again under the same runtime id. Messages of up to
// 64 MiB are read (the CLI's tools API accepts 30 MB bodies).
//
// Under a V2 manager, InitGenkit keeps genkit.Init from starting either of Genkit's
// reflection servers, so that the manager sees exactly one runtime. Genkit's V2 client would
// register beside this one: under the same runtime id by default (GENKIT_RUNTIME_ID or the
// pid), so that each registration replaces the other's, else as a second runtime.
// Genkit's V1 HTTP server, which genkit.Init starts in the development environment when no V2
// URL is set, is not started either, because under the V2 CLI it is useless and harmful:
// the V2 manager never reads V1 runtime files, so nothing would use it; it would open a
// second, unauthenticated port that runs any action (3100 or $GENKIT_REFLECTION_PORT, which
// makes genkit.Init panic when taken); and it would write .genkit/runtimes/<pid>.json into the
// project, where V1 tooling (`genkit start` without the flag, `genkit flow:run`) would find a
// second runtime of the same process. Genkit itself never runs both either (genkit.go:341-348).
// What genkit.Init does in the development environment besides the reflection server
// (streaming logs to the Dev UI) InitGenkit does itself. Without a V2 manager InitGenkit is
// genkit.Init, so `genkit start` without the flag still works through V1.
//
// # Methods
//
//   - listActions: the actions, keyed and described as Genkit's V1 GET /api/actions
//     describes them (api.ActionDesc). Only Genkit's exported API is used, and it cannot
//     enumerate every registered action: flows, tools, resources, /util/generate, the default
//     model, and what dynamic plugins can resolve are found by themselves; other actions
//     (models defined with genkit.DefineModel, actions a plugin's Init registers, prompts) are
//     listed when named with [WithActions]. The dynamic plugins are the provider of the
//     default model, the providers of the WithActions keys, and those named with
//     [WithPlugins]; their "genkit:" schema references stay unresolved.
//   - listValues: {type: "defaultModel"} answers {defaultModel: <name>}; {type: "middleware"}
//     the middleware descriptors by name, as V1's GET /api/values?type=middleware.
//   - runAction: unary; streaming (stream: true), with streamChunk notifications carrying the
//     request id before the response; telemetryLabels and context as V1 applies them. A
//     runActionState notification carries the trace id as soon as the root span starts. Any
//     action can run, including what a dynamic plugin resolves on demand.
//   - Bidirectional runs (streamInput: true): an api.BidiAction (core.NewBidiActionOf) runs as
//     a session (ConnectJSON) with the run's init, fed the input chunks in order until the
//     input ends, as Genkit's own client does (the run's input is not used). Any other action
//     reads the chunks with [InputStream]. init given to a one-shot run of an api.BidiAction
//     goes to RunBidiJSON; init for any other action is invalid params.
//   - cancelAction: cancels the context of the run with that trace id.
//   - Notifications: configure (telemetry URL), and the input stream under the CLI's names
//     (sendInputStreamChunk, endInputStream) and the RFC's (streamInputChunk, endStreamInput).
//
// # Errors
//
// Errors use the RFC's codes: -32700 (not JSON), -32600 (not a request object; batches are not
// supported), -32601 (unknown method; unknown notifications are ignored), -32602 (invalid
// params), -32603 (a fault of the runtime, such as a panic), -32000 (the action failed or was
// cancelled), -32001 (no action has that key), -32002 (cancelAction: no running action has that
// trace id). The data of every error is a Genkit status, {code, message, details: {stack?,
// traceId?}} with Genkit's numeric status code, which is what the CLI shows: it reads message
// and data, never the JSON-RPC code. (The JS runtime answers -32602 where the RFC has -32001 and
// -32002; the CLI handles both alike.) A malformed frame is answered and the connection kept.
//
// This package is the service's own: its API serves the genui server and may change
// from one release to the next. The packages meant for import are a2ui, catalog, policy
// and schemas.
package reflection
