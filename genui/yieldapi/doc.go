// Package yieldapi serves interactions that yield to the client and resume (seed 004's
// graph execution protocol) at GET /session/{id}, over a WebSocket of JSON text frames.
//
// {id} is a session id from POST /startSession or from /ws's new_session (any 8 to 128
// characters of A-Z a-z 0-9 . _ -): the interaction is a conversation the service keeps
// under that id ([genui.Service.OpenSession]), so it survives a dropped connection and,
// with Redis, a replica.
//
// # Messages
//
// The server sends nothing before the client's first message; every message it sends
// answers or follows one of the client's. Client → server:
//
//	{"type":"init","graphId":"generateUi","input":{…a /generateUi request…,"clientTools":[…]}}
//	{"type":"init","graphId":"generateA2ui","input":{…a /generateA2ui request…}}
//	{"type":"init","graphId":"generateUi","yieldActions":true,"input":{…}}
//	{"type":"resume","result":{"type":"success","value":…}}
//	{"type":"resume","result":{"type":"error","message":"…"}}
//	{"type":"reconnect","sessionId":"<id>"}
//	{"type":"ping"}
//
// Server → client:
//
//	{"type":"progress","effect":{"type":"LlmComplete","model":"…"},"status":"executing"}
//	{"type":"progress","effect":{"type":"LlmComplete","event":{…}},"status":"executing"}
//	{"type":"yield","effect":{"type":"ClientTool","name":"…","input":{…},"callId":"…"},"sessionId":"<id>"}
//	{"type":"yield","effect":{"type":"UserAction","surfaceIds":["…"]},"sessionId":"<id>"}
//	{"type":"yield","effect":{"type":"LlmComplete","model":"…","error":{"status","message"[,"retryAfter"][,"limit"]}},"sessionId":"<id>"}
//	{"type":"done","result":{…}}
//	{"type":"error","message":"…","recoverable":false}
//	{"type":"error","message":"…","recoverable":true,"sessionId":"<id>"}
//	{"type":"pong"}
//
// init's input is the request of the graph's endpoint; its conversation carries only
// the new messages (the session holds the rest). Without a catalog or sessionId, the
// input's sessionId is {id} when {id} is a startSession session; a session of /ws keeps
// its own spec. Each model call is a progress with the LlmComplete effect (its model),
// then one progress per event of the model's output, whose event is exactly the JSON
// object the NDJSON stream carries for it. A call of a client tool is a yield of a
// ClientTool effect; resume answers it (value: the tool's output; message: its error)
// and the turn continues. Several calls of one model response are yielded one after the
// other. A turn that calls no client tool ends with done, whose result is the turn's
// result as the NDJSON stream's result line carries it. The connection stays open: the
// client may init again, continuing the same conversation.
//
// With yieldActions, a turn that shows surfaces does not end with done: it yields a
// UserAction effect naming them, and the session waits for the user's action as it waits
// for a client tool (stored, across a reconnect). resume's value is the action — a genui
// event {surfaceId, widgetId, eventType, value}, an A2UI action message {version,
// action}, or text — and the next turn follows, so one session runs the whole
// interaction; a resume with an error (the user left) ends it with done, result null.
//
// reconnect, on a new connection to the same path within the reconnect window (default
// 5 minutes) of the yield, yields the same effect again (the same callId, or surfaces); a
// turn still running is followed again from its start, and so is one that ended while no
// connection held the session, within the grace period after its end (its done, yield
// or error then follows). After the window the session is gone: error, recoverable
// false. The server pings a connection idle for 30 seconds (WithKeepalive) and closes it
// when the pong does not come within 10 seconds.
//
// A turn that fails (seed 004's "effect execution failed": the model call could not be
// made, or failed) yields the failed effect, an LlmComplete with the error; the session is
// as it was before the turn. resume with success runs the turn again; resume with an
// error gives it up: the session yields what it still waits for (a client tool's call
// the turn answered), or ends with done, null. A reconnect within the window yields the
// failed effect again (on the replica that ran the turn; another replica yields what
// the stored session waits for).
//
// # Errors
//
// Invalid JSON, an unknown message type, an unknown or empty graph id, a bad input (the
// message names the field: "input.catalog: …"), a resume with nothing waiting, a
// reconnect whose sessionId is not the path's or whose session expired: error with
// recoverable false. A stored session that cannot be read (the session state is
// inconsistent): error with recoverable false, and the session is cleaned up. An
// internal error or an unreachable store: error with recoverable true and the
// sessionId; the session is intact. A message during a running turn (other than ping)
// is an error, recoverable true. A message over the size limit closes the connection
// with status 1009.
package yieldapi
