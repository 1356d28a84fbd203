// Package fakeopenai is an in-process fake of the OpenAI chat completions API
// that the real openai-go client, and so Genkit's compat_oai plugin, can be
// pointed at (option.WithBaseURL(s.URL()) or OPENAI_BASE_URL=s.URL()).
//
// Endpoints, under the base URL s.URL() ("http://127.0.0.1:port/v1"):
//
//   - POST {base}/chat/completions with "stream":true: server-sent events,
//     each a single line "data: <compact chat.completion.chunk JSON>" plus a
//     blank line, flushed per event, then "data: [DONE]". The first chunk's
//     delta has the role "assistant"; each scripted [Chunk] is one event: a
//     text delta, or a tool-call delta {index, id, type, function{name,
//     arguments}} whose arguments are a piece of the call's JSON (the pieces
//     of a call concatenate to its arguments; only its first delta has the
//     id, type and name). A last choice chunk has an empty delta and the
//     finish_reason. When the request asks stream_options.include_usage, a
//     final chunk has "choices":[] and the usage.
//   - POST {base}/chat/completions without "stream": one chat.completion
//     holding the whole message (text joined, tool calls with their whole
//     arguments), the finish_reason and the usage.
//   - GET {base}/models: the models listed, one page.
//
// Prompt tokens are estimated as request body bytes/4, completion tokens as
// text and arguments bytes/4, unless the [Reply] sets its [Usage].
//
// Errors use OpenAI's body {"error":{message,type,param,code}}: no bearer
// token gives 401, a token other than [WithAPIKey]'s 401 invalid_api_key, an
// unknown path 404, an unlisted model 404 model_not_found, a malformed body
// or no messages 400. A scripted [APIError] may carry Retry-After.
//
// Each chat request is captured as a [Request] and answered by a [Reply]
// taken from the [Server.Enqueue] FIFO, else from the [Responder] (default:
// the text "ok"). [WithLatency] delays the first event and [WithPacing] each
// following one; a client cancelling, or [Server.Close], ends the wait, drops
// the connection and marks the request [Request.Cancelled].
package fakeopenai
