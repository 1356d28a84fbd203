// Package aguiclient holds the compatibility test against the official AG-UI JavaScript
// client, @ag-ui/client 1.x (HttpAgent), with and without @ag-ui/a2ui-middleware in
// front of the endpoint.
//
// The test ([TestAGUIClient]) serves the API and the AG-UI endpoint in process on the
// offline model, on a fake Gemini that writes a form in paced chunks (and fails a turn
// that asks it to, or runs away when asked), and as two replicas sharing their durable streams through a real
// Redis, then runs client.test.mjs, middleware.test.mjs and replicas.test.mjs with
// `node --test`. The node tests drive runs with text and surfaces, actions through
// forwardedProps and through the middleware's log_a2ui_event pair, frontend tools
// answered by a tool message, a resume entry and a cancelled one, a run ending in
// RUN_ERROR, a runaway list of 20,000 rows stopped at the components limit (its RUN_ERROR
// names the limit in metadata.details), bad input, and a run whose connection drops and
// is read again with Last-Event-ID on the other replica.
//
// Every SSE frame the server wrote passes @ag-ui/core 1.0's EventSchemas unchanged. Each
// surface comes as an ACTIVITY_SNAPSHOT, then ACTIVITY_DELTAs that each append one A2UI
// message; after the run, the client's activity message holds what those events build
// (the deltas of a run read again on the other replica applied to what the client had
// before the drop), and a renderer applying its operations in order gets a whole
// surface. The operations after each activity event, and those the client held after the
// run, go to a file the Go test then validates against the A2UI v0.9 specification, with
// the catalog the run named.
//
// It needs Node.js and `npm ci` (or `npm install`) in this directory, and redis-server;
// without them it skips, unless the CI environment variable is set.
package aguiclient
