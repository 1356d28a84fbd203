// Package wsclient holds the compatibility test of the service's WebSocket endpoints
// against a Node WebSocket client, the ws package 8.x from npm: GET /ws (JSON-RPC 2.0
// sessions) and GET /session/{id} (interactions that yield to the client and resume),
// both served by genui/wsapi.
//
// The test ([TestWSClient]) serves the API with both endpoints, on one hub of sessions,
// in process: on the offline model; on the offline model with a reconnect window of two
// seconds; on a fake Gemini that writes a form in paced chunks, with the default limits
// and with small ones (two sessions a connection, one turn at a time, four messages a
// batch); and as two replicas sharing their sessions, conversations and durable streams
// through a real Redis. It then runs ws.test.mjs, session.test.mjs and replicas.test.mjs
// with `node --test`.
//
// ws.test.mjs runs seed 003's JavaScript example client verbatim and its Python
// example's flow; sessions of two clients that never reach each other, and concurrent
// prompts on one connection routed by session_id; every error code (-32700 to -32603,
// and -32001 to -32005, expiry and limits included) with the field -32602 names;
// batches; cancel of a running prompt, as a request and as ACP's session/cancel
// notification; ACP's method names and spelling; client tools as client_tool requests,
// answered with a result or an error, sent again after a reconnect; a turn dropped
// mid-stream and loaded again from its durable stream, during the turn and after its
// end; seed 003's other methods (authenticate, set_session_mode, set_session_model,
// fork_session). session.test.mjs drives seed 004's protocol: silence before the first
// message, init, progress, a yield of a client tool, resume, done, init again on the
// same connection; reconnect within the window and after it; a turn followed again from
// its start, during the turn and after its end; ping during a turn; every row of the
// seed's error table; the HTTP errors before the upgrade. replicas.test.mjs takes a
// session waiting on one replica up on the other, over both endpoints, and reads a
// stored session that cannot be read (-32603; an error with recoverable false).
//
// Each test asserts the exact messages: their order, their fields, no update lost or
// repeated. Every A2UI message a session received (a ui_update's event, or a progress
// event) goes to a file the Go test then validates against the A2UI specification,
// each session's messages in order.
//
// It needs Node.js and `npm ci` (or `npm install`) in this directory, and redis-server;
// without them it skips, unless the CI environment variable is set.
package wsclient
