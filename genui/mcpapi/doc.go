// Package mcpapi serves the service to MCP hosts and clients: Streamable HTTP at /mcp,
// on the official Go SDK (github.com/modelcontextprotocol/go-sdk), stateless, so that it
// speaks the 2026-07-28 revision and the clients still on 2025-11-25 and 2025-06-18, and
// any replica serves any call.
//
// # Tools
//
//   - generate_ui (the model's): {"prompt", "conversationId"?, "model"?} runs one turn of
//     A2UI v0.9 on a conversation the server holds ([genui.Service.OpenSession] and
//     [genui.Service.SessionTurn]); without a conversationId it starts one. model names
//     the model of the turn (one the server lets the caller choose), which the
//     conversation keeps for its next turns. Its result's
//     content is a short text for the model and text-only hosts (what was shown, and the
//     conversationId to continue with); its structuredContent is
//     {"conversationId", "streamId", "messages": […], "text"?}, each A2UI message of the
//     turn once, in order. A host that renders A2UI itself (application/a2ui+json among
//     the mime types of its io.modelcontextprotocol/ui extension) also gets the messages
//     as an embedded resource of that type, for the user only.
//   - ui_action (the app's): {"conversationId", "name", "surfaceId", "sourceComponentId",
//     "timestamp"?, "context"?}, A2UI's action, continues the conversation with the
//     user's action and answers as generate_ui does.
//   - ui_stream (the app's): the A2UI messages of a generate_ui call that runs now, found
//     by its arguments ([Turns]), after a cursor, long-polled: MCP has no partial
//     results, and the app shows the surface growing with it.
//   - ui_tool_result (the app's): {"conversationId", "results": [{"callId", "name",
//     "output" | "error"}]} answers the calls of the app's tools a turn ended with.
//
// The app (AppURI, an MCP App) is one self-contained HTML page that renders the A2UI
// with @a2ui/lit in the host's frame.
//
// # Client tools
//
// A conversation generate_ui opens for a host that may show the app declares the app's
// tools, get_user_context and get_location: a turn that calls one ends with
// "toolCalls" in its structuredContent, the app runs them in the host and answers with
// ui_tool_result ([WithoutAppTools] leaves them out). A caller of the 2026-07-28
// revision that elicits forms gets ask_user instead of a call to answer: the turn's
// result asks for input (one elicitation per question, an opaque requestState), and the
// caller's retry with the answers continues the conversation. Either way the turn waits
// as every client tool does: the conversation holds the calls, and nothing else.
//
// A conversationId is an opaque handle: the conversation lives in the service's
// conversation store (in Redis when replicas share one), under the caller's scope, so
// another caller's handle is unknown to a caller, exactly as one that never existed or
// expired. Nothing is kept in an MCP session.
//
// # Errors
//
// Arguments the tool's input schema refuses, and a handle that is unknown or expired,
// are tool errors (isError, the text naming the field), as the SDK reports a tool's
// errors, so that the model can correct its call; a turn that fails says what failed,
// and whether to retry, never an internal address.
//
// This package is the service's own: its API serves the genui server and may change
// from one release to the next. The packages meant for import are a2ui, catalog, policy
// and schemas.
package mcpapi
