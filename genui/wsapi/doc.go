// Package wsapi serves the service's WebSocket connections, in two dialects:
//
//   - GET /ws speaks JSON-RPC 2.0 in text frames, with the methods of an ACP agent, so
//     that many clients each hold conversations with a UI on a persistent connection
//     (protocol_jsonrpc*.go). Its methods answer in the service's spelling or in ACP's
//     (sessionId, stopReason, session/update), as the method's name chooses.
//   - GET /session/{id} speaks seed 004's graph execution protocol: interactions that
//     yield to the client and resume, in JSON text frames (protocol_yield*.go).
//
// One runtime serves both: the upgrade and its origin check, the read limit, the
// writer, the keepalive, the binding of sessions to connections (internal/sessionhub,
// one hub for both endpoints, so that a session opened on one may be driven on the
// other), the count of open connections, and the shutdown. The error table of both
// dialects is errors.go. The handlers authenticate no one: a Server's endpoints must be
// mounted through [Server.Routes], behind the server's middleware stack
// (httpapi.WithRoutes), which authenticates the upgrade request; a connection keeps
// its caller.
//
// A session is a conversation the service keeps ([genui.Service.OpenSession]): each
// prompt carries only its new content, every turn runs on the service's one entry point
// and its durable stream, and a session waiting for its client tools holds no goroutine.
//
// # JSON-RPC on /ws: methods
//
// Names follow seed 003 in snake_case; ACP's own names are aliases that answer in ACP's
// spelling (sessionId, stopReason, session/update with update.sessionUpdate).
//
//   - initialize {protocol_version} → {protocol_version: 1, agent_capabilities,
//     agent_info: {name, title, version}}. ACP's camelCase params (protocolVersion) get
//     a camelCase result.
//   - new_session, session/new {catalog | a2uiClientCapabilities [, a2uiVersion]
//     [, sessionId] [, clientTools]} → {session_id} (ACP: {sessionId}). catalog is a
//     genui catalog, sessionId a startSession session: the session's turns are genui
//     turns. a2uiClientCapabilities (and a2uiVersion, default "v0.9") make them A2UI
//     turns. Neither: A2UI v0.9 with the basic catalog. cwd, mcp_servers and mcpServers,
//     which ACP clients always send, are accepted and ignored.
//   - prompt, session/prompt {session_id | sessionId, prompt: [content blocks]} → the
//     turn's updates as notifications, then {stop_reason} (ACP: {stopReason}):
//     "end_turn", "max_tokens", "refusal" or "cancelled". Blocks: {type: "text", text},
//     {type: "image", data, mimeType} or {type: "image", uri}, {type: "resource",
//     resource: {text}}, {type: "resource_link", uri, name}, and the service's own
//     parts {type: "uiEvent", event} (a genui action) and {type: "a2ui", message} (an
//     A2UI client message, an action).
//   - cancel, session/cancel {session_id | sessionId}, as a request or a notification:
//     the running turn stops (its prompt answers "cancelled"); a session waiting for its
//     client tools stops waiting (the calls stay unanswered, and the next prompt answers
//     them "not answered").
//   - list_sessions {} → {sessions: [{session_id, state}]}: this connection's sessions,
//     state "idle", "running" or "waiting".
//   - load_session, session/load, resume_session, session/resume {session_id |
//     sessionId [, after]}: attach a session to this connection after a reconnect. A
//     session another open connection holds is taken over when that connection is the
//     same authenticated caller's, or does not answer a ping in time (a half-open
//     connection, which is then closed); otherwise it is not found. A running turn's
//     updates are replayed from its durable stream (after the first `after` of them;
//     default: from the turn's start), then follow live; so are those of a turn that
//     ended while no connection held the session (within the grace period after its
//     end); the client tool requests the session waits for are sent again; the result
//     comes when the interaction ends, as a prompt's does ({stop_reason}); for an idle
//     session at once: {session_id}. resume_session of an idle session is a "not
//     waiting" error. A connection whose session was taken over gets its waiting
//     request's answer as -32001 ("session taken over").
//   - authenticate {methodId?} → {}: a connection's credentials (an API key or a JWT,
//     when the server requires them) come with its upgrade request; initialize lists no
//     authentication methods.
//   - set_session_mode, session/set_mode {session_id, mode_id | modeId}: the agent has
//     no session modes, so any mode is -32602 naming the field.
//   - set_session_model, session/set_model {session_id, model_id | modelId} → {} when the
//     model is the server's (its only one); another is -32602 naming the field.
//   - fork_session, session/fork {session_id}: not available (-32601, data status
//     UNIMPLEMENTED): the service cannot copy a session's conversation.
//
// # JSON-RPC on /ws: notifications
//
//	{"jsonrpc":"2.0","method":"session_update","params":{"session_id":…,"seq":n,
//	  "update":{"type":"agent_message_chunk","chunk":"…"}}}
//	{"jsonrpc":"2.0","method":"session_update","params":{"session_id":…,"seq":n,
//	  "update":{"type":"ui_update","event":{…}}}}
//
// event is exactly the JSON object the NDJSON stream of /generateUi or /generateA2ui
// carries for the same event (a genui surface update, or a bare A2UI message). seq is
// the event's place in the turn's stream, for load_session's after. ACP:
// session/update {sessionId, seq, update: {sessionUpdate: "agent_message_chunk",
// content: {type: "text", text}} | {sessionUpdate: "ui_update", event}}.
//
// # JSON-RPC on /ws: client tools
//
// When the model calls a client tool of the session, the server sends the client a
// request, {"jsonrpc":"2.0","id":"call:<callId>","method":"client_tool","params":
// {"session_id","call_id","name","input"}} (ACP: sessionId, callId); the client's
// response resumes the turn: a result is the tool's output, an error {code, message}
// its error. The prompt's own response comes when the interaction ends. Nothing runs on
// the server while it waits. The requests of one model response go out together and
// their answers may come in any order: they are gathered until each call has one, then
// continue the turn as one message (an answer lost with a dropped connection is asked
// again after load_session). After a reconnect, load_session sends the unanswered
// requests again, with the same ids.
//
// # JSON-RPC on /ws: errors
//
// JSON-RPC's codes: -32700 parse error (id null; the connection stays open), -32600
// invalid request, -32601 method not found, -32602 invalid params (the message names the
// field: "params.prompt[0].type: …"), -32603 internal error. The service's: -32001
// session not found (unknown, expired, another connection's, or closed), -32002 not
// waiting, -32003 session expired (it waited longer than the reconnect window), -32004
// session busy (a turn of the session is running), -32005 limit reached (sessions or
// concurrent turns of the connection, batch size), -32006 unavailable (the store or the
// model cannot be reached; retry: the session is as it was before the prompt). Errors
// carry data {status, field?}. A stored session that cannot be read is -32603, and the
// session is let go. A message over the size limit closes the connection with status
// 1009.
//
// # JSON-RPC on /ws: connections and cleanup
//
// Notifications and requests for a session go only to the connection it is attached
// to. When a connection closes, its sessions with nothing running or waiting are
// deleted; a running one is kept until its turn ends (the durable stream's grace
// period bounds that) and then for the hub's grace period, so that a client
// reconnecting then reads the turn's end (load_session); a waiting one is kept for the
// reconnect window (default 5 minutes) from the moment it began to wait, then deleted.
// Waiting sessions live in the service's conversation store: with Redis, any replica
// attaches and resumes them. The server pings a connection idle for 30 seconds
// (WithKeepalive) and closes it when the pong does not come within 10 seconds, so that
// a client gone without closing lets its sessions go.
//
// # Yield and resume on /session/{id}
//
// {id} is a session id from POST /startSession or from /ws's new_session (any 8 to 128
// characters of A-Z a-z 0-9 . _ -): the interaction is a conversation the service keeps
// under that id ([genui.Service.OpenSession]), so it survives a dropped connection and,
// with Redis, a replica.
//
// # Yield and resume on /session/{id}: messages
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
// # Yield and resume on /session/{id}: errors
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
package wsapi
