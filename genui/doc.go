// Package genui generates UI for a conversation from a client's widget catalog.
//
// A [Service] is the one entry point of every transport. [Service.StartSession] registers a
// catalog; [Service.Stream] prepares a turn (the catalog from the session store or the
// request, the conversation mapped to model messages) and returns a durable [Stream] whose
// [Stream.Each] runs the turn: it prompts the model with the catalog-derived UI tools,
// checks every tool request against the catalog and passes each item to the transport the
// moment it is stored, valid tool requests and model text first, then exactly one result or
// error. Invalid requests are never passed on; the model is asked to repair them instead.
// The same holds for UI the turn's UI policy refuses ([WithPolicy], [WithCallerPolicy]:
// package policy), which the system prompt states.
// [Service.Resume] reads a stream again, on any replica sharing its log;
// [Service.Generate] runs a turn without a stream. Errors are [*Error] values with a
// canonical [Status] that each transport maps to its own codes.
//
// # Limits
//
// What a model may write in a turn is bounded ([WithLimits], [DefaultLimits]): tokens per
// model call, components per surface, bytes of output and tool calls per turn, data-model
// bytes per surface, and the turn's time. A turn that reaches one ends with a
// RESOURCE_EXHAUSTED *Error naming it, after what was valid of its surfaces went out. A
// result that hands a turn's UI over whole carries each surface in its final state
// (a2ui.Final), not the updates that streamed it.
//
// # Client tools
//
// A request may declare client tools ([schemas.ClientTool]): tools only the client can run
// (its location, a file, a confirmation, the app's state). Their input schemas are compiled
// once per distinct declaration, and the model gets them as functions beside the UI tools
// (an A2UI turn, which has no UI tools, gets only them). A call's input is checked against
// its schema; a violation goes back to the model as an invalid surface does. The valid
// calls of a response are sent when the response ends and nothing of it was rejected, as
// [schemas.EventToolCall] events after everything the response showed; the turn then ends
// with the result's FinishReason "interrupted", its message listing the calls as Genkit
// interrupts ([schemas.InterruptPart]). Nothing runs on the server.
//
// The client continues the turn with the calls' results. Statelessly, it sends the
// conversation again: the model message that held the calls gets a toolCall part per call
// (as the event gave it, its signature included), and the next message, a user message,
// a toolResult part per call, with the call's output or an error. The model sees its
// function calls and their responses, paired as Gemini requires.
//
// # Conversations the server holds
//
// With a ConversationID the server holds the history ([conversation.Store]: in memory, or
// Redis shared by replicas): the request carries only its new messages, a user message or
// the results of the calls the conversation waits for (some of them: the turn then waits
// for the rest without calling the model). The turn's output, as the client received it,
// is appended, and its calls are remembered, before the result is written, so the client's
// next request, on any replica, sees the finished turn. A result for a call answered
// already, or for a call of another conversation, is ABORTED; so is a second turn while
// one runs. A new user message answers the calls still waiting "not answered". A turn that
// fails appends nothing. A conversation waiting for the client holds no goroutine and no
// connection: continuing it is a new model call from the stored state.
//
// # Transports
//
// A transport decodes its protocol into a [schemas.GenerateRequest] or
// [schemas.GenerateA2UIRequest], calls [Service.Stream] (or Generate, StreamA2UI,
// GenerateA2UI) and encodes the items; it adds no generation, storage or validation of
// its own. The protocols map onto the request this way:
//
//   - A2A: a task's contextId is the ConversationID; a message's parts are the new user
//     message; the A2UI client capabilities of the message metadata are
//     A2UIClientCapabilities. An interrupted result is the task's input-required state,
//     whose calls the client answers in its next message.
//   - AG-UI: RunAgentInput.tools are ClientTools; the run's messages are the conversation,
//     a role "tool" message becoming the toolResult part of the call it names (stateless,
//     as AG-UI is). A toolCall event is TOOL_CALL_START, TOOL_CALL_ARGS, TOOL_CALL_END; an
//     interrupted result is RUN_FINISHED with the interrupt outcome.
//   - WebSocket sessions: a session holds one conversation (its id is the ConversationID);
//     a prompt is the new user message. A yield is a toolCall event and a resume is the
//     toolResult of that call, sent as the next request of the session's conversation.
//
// The turn calls its model through the [Model] port; adapters translate it to a provider
// (package gemini for Gemini and Vertex AI through google.golang.org/genai, [GenkitModel]
// for any Genkit model, package offline). The Genkit flows startSession, generateUi and
// generateA2ui wrap every turn, so Genkit tooling lists, runs and traces them. A request
// may name its model among those the service allows ([WithModels], [WithCallerModels]);
// a held conversation keeps the model its last turn used. A Model that passes calls on
// (a fallback chain) reports the model that served each with [ServedBy], which the
// result's usage names. Each caller's tokens count against its budget
// ([WithTokenBudget]).
//
// This package is the service's own: its API serves the genui server and may change
// from one release to the next. The packages meant for import are a2ui, catalog, policy
// and schemas.
package genui
