// Package httpapi serves the genui_server HTTP contract with Echo: POST /startSession and
// POST /generateUi, with the {"data":…} envelope or without it, and /generateUi answered
// as Genkit SSE, NDJSON or one JSON object, chosen by negotiation:
//
//   - ?stream=true, ?format=sse or Accept: text/event-stream: Genkit SSE
//     (data: {"message":<chunk>}, then data: {"result":…} or data: {"error":…});
//   - ?format=ndjson, Accept: application/x-ndjson, or no stated preference (curl, */*):
//     NDJSON ({"type":"toolRequest",…} lines, then one {"type":"result",…} or
//     {"type":"error",…} line);
//   - ?format=json or Accept: application/json alone: one {"result":…} object holding every
//     tool request.
//
// A call of a client tool is an NDJSON line {"type":"toolCall","callId","name","input"};
// in SSE a Genkit chunk holding Genkit's interrupt (a toolRequest part whose ref is the
// call id, with metadata.interrupt). The result of such a turn has finishReason
// "interrupted" and lists the calls as interrupts in its message, in every framing.
//
// The package only decodes requests and encodes the events of [genui.Service]; it never
// generates anything itself.
//
// It is also the one place that builds the server: [New] returns the Echo router serving
// these routes, the health checks, /catalogs, /metrics and the playground, and mounts
// the routes of the other transports ([WithRoutes]: A2A, AG-UI, MCP, the WebSockets)
// beside them. Every route, its own and the mounted ones, passes through one middleware
// stack, in this order: the request id and metrics, the security headers, recovery from
// a panic, CORS, then authentication (the caller into the context), the body limit and
// the mark that lets a transport.Route serve. A refusal of the stack is written in the
// route's own protocol (transport.Route.Errors).
//
// This package is the service's own: its API serves the genui server and may change
// from one release to the next. The packages meant for import are a2ui, catalog, policy
// and schemas.
package httpapi
