// Package reflection connects a Genkit Go application to the Genkit Dev UI over the Reflection
// API V2: the Genkit CLI (the runtime manager) listens on a WebSocket, and the application (the
// runtime) dials it and answers JSON-RPC 2.0 requests. Genkit Go v1.4.0 only has the V1 HTTP
// reflection server; this package adds V2 on top of its exported API.
//
// Reflection is off unless $GENKIT_REFLECTION_V2_SERVER (what `genkit start
// --experimental-reflection-v2` sets) or $GENKIT_REFLECTION_API_URL (the RFC's name) holds a
// ws:// URL:
//
//	client, err := reflection.Start(ctx, g) // (nil, nil) when off
//	if err != nil {
//		log.Warn("Genkit Dev UI: disabled", "err", err)
//	}
//	defer client.Close()
//
// Start returns at once; a manager that is absent or restarts never delays or breaks the
// application. The client connects, sends register (as a request, which the CLI answers with its
// telemetry server URL), serves the manager's requests, and on a dropped connection cancels
// the actions running for it and reconnects with exponential backoff (500 ms doubling to 30 s,
// ±20% jitter), registering again under the same runtime id.
//
// # Methods
//
//   - listActions: every action of the registry (flows, tools, models, and what dynamic plugins
//     can resolve), keyed and described exactly as Genkit's V1 GET /api/actions.
//   - listValues: {type: "defaultModel" | "middleware"}.
//   - runAction: unary; streaming (stream: true), with streamChunk notifications carrying the
//     request id before the response; bidirectional (streamInput: true), whose input chunks the
//     action reads with [InputStream]. A runActionState notification carries the trace id as
//     soon as the root span starts.
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
package reflection
