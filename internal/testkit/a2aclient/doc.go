// Package a2aclient holds the compatibility test against the official JavaScript A2A SDK,
// @a2a-js/sdk, in both of its lines: 0.3.x (A2A v0.3) and 1.x (A2A 1.0).
//
// The test ([TestA2AJSSDK]) serves the API and the A2A agent in process twice, on the
// offline model and on a fake Gemini that writes a form in paced chunks (so that a turn
// can be cancelled or dropped mid-stream), and runs v03.test.mjs and v1.test.mjs with
// `node --test`. package.json installs the two SDK lines side by side under npm aliases,
// a2a-v03 and a2a-v1. The node tests drive the agent card, streamed turns with the A2UI
// extension, action and client-tool round trips, tasks/get, tasks/cancel,
// tasks/resubscribe and the errors, over A2A v0.3 JSON-RPC (ClientFactory and the legacy
// A2AClient) and A2A 1.0 JSON-RPC and HTTP+JSON; they write every A2UI message they
// received to files the Go test then validates against the A2UI v0.9 specification.
//
// A task read back (tasks/get, message/send's result) holds its turn whole, each surface
// in its final state: the node tests compare it with the final state of what the turn
// streamed, compacted as a2ui.Final does (common.mjs's finalA2UI), and check that both
// leave a renderer with the same surfaces (surfacesOf). A client that read part of a
// stream, then resubscribed, must hold every status message of the turn once, under the
// ids they streamed with.
//
// It needs Node.js and `npm ci` (or `npm install`) in this directory; without them it
// skips, unless the CI environment variable is set.
package a2aclient
