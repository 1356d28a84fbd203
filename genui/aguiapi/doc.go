// Package aguiapi serves the service to AG-UI frontends (CopilotKit, @ag-ui/client 1.x,
// @ag-ui/a2ui-middleware): POST /ag-ui takes a RunAgentInput and answers its run as AG-UI
// events over SSE, each A2UI surface as an activity the frontend draws while the model
// writes it.
//
// # The run
//
// A run is stateless, as AG-UI is: it becomes one A2UI v0.9 turn of the core
// ([genui.Service.StreamA2UI]), whose conversation is the run's messages.
//
//   - The catalog is the context entry holding {"catalogId","components"} as a string
//     (what @ag-ui/a2ui-middleware and CopilotKit send), else the basic catalog. Other
//     context entries are context for the model.
//   - user, assistant, system and developer messages are the conversation;
//     role "activity" messages of type a2ui-surface, when a client sends them, are the
//     surfaces it holds (@ag-ui/client strips them, so an action usually arrives without
//     its surface, and the answer is a complete surface).
//   - A user action is forwardedProps.a2uiAction.userAction, or the log_a2ui_event call
//     @ag-ui/a2ui-middleware logs it as; the middleware's own tools (render_a2ui,
//     log_a2ui_event) are not frontend tools. state is the client's data model.
//   - forwardedProps.model names the model of the run: one the server lets the caller
//     choose (else INVALID_ARGUMENT naming forwardedProps.model).
//   - Frontend tools (tools) are the core's client tools. A call ends the run with
//     TOOL_CALL_START, TOOL_CALL_ARGS, TOOL_CALL_END and an interrupt outcome (its id is
//     the call's); the next run answers it with a tool message or a resume entry
//     (cancelled: the user declined). A model's signature of a call goes to the client as
//     its REASONING_ENCRYPTED_VALUE and comes back as the call's encryptedValue.
//
// # The events
//
// RUN_STARTED; model text as TEXT_MESSAGE_START, TEXT_MESSAGE_CONTENT (as it streams),
// TEXT_MESSAGE_END; each A2UI surface as an activity (activityType a2ui-surface,
// messageId a2ui-surface-<surfaceId>, the same in every run) whose content.a2ui_operations
// are, after each event, the A2UI messages a renderer applies in order to show the
// surface as it is; the calls of frontend tools; then RUN_FINISHED (with usage, naming the
// model that served the run) or
// RUN_ERROR {message, code, metadata: {details}}, details as the service's other
// endpoints give them (a turn stopped at a limit: {"limit":"components","value":10000}).
// Optional members are absent, never null.
//
// A surface's first A2UI message in the run, and its first after a deleteSurface, is an
// ACTIVITY_SNAPSHOT (replace: true) holding the whole surface so far, the shortest
// messages that build it from nothing (what the client held before, from its activity
// messages, included). Every later message is an ACTIVITY_DELTA whose patch appends it,
// [{"op":"add","path":"/a2ui_operations/-","value":<message>}], which @ag-ui/client
// applies to the activity message's content. A surface the model writes in many updates
// (a long list, re-sent as it grows) thus costs the client what the messages cost, not
// the whole surface again with each of them. A frontend reads the activity message's
// content (CopilotKit's a2ui-surface renderer does; @ag-ui/client keeps it in
// agent.messages), or handles both events: a handler of ACTIVITY_SNAPSHOT alone sees a
// surface's first message only. A renderer draws the content anew, or applies the
// messages it has not yet applied.
//
// Each event's SSE id is <stream>.<n>: a client that reconnects with Last-Event-ID (and
// the same input) gets the rest of the run from its durable stream, on any replica
// sharing the stream log, without a second model call; its deltas apply to the content
// the client built from the events before. The events depend only on the run's stream,
// so they are the same on every reading.
//
// Errors before the stream starts are 400 JSON errors naming the field of the input
// (messages[2].toolCalls[0].function.arguments, resume[0].interruptId); after, RUN_ERROR.
// The protobuf encoding (application/vnd.ag-ui.event+proto) has no official Go
// implementation: every client gets SSE, which @ag-ui/client reads whatever it asked for.
//
// This package is the service's own: its API serves the genui server and may change
// from one release to the next. The packages meant for import are a2ui, catalog, policy
// and schemas.
package aguiapi
