// Package fakeollama is an in-process fake of the Ollama REST API that
// Ollama clients, and the genui server's ollama/<model> models, can be
// pointed at (OLLAMA_HOST=s.URL()).
//
// Endpoints:
//
//   - POST /api/chat, streamed (the default, or "stream":true): NDJSON, one
//     compact JSON object per line, flushed per line:
//     {"model","created_at","message":{"role":"assistant","content":<piece>,
//     "thinking"?,"tool_calls"?:[{"function":{"index","name","arguments":{…}}}]},
//     "done":false} per scripted [Chunk], then
//     {"model","created_at","message":{"role":"assistant","content":""},
//     "done":true,"done_reason":"stop","total_duration",…,
//     "prompt_eval_count","eval_count",…}. Tool call arguments are a JSON
//     object, whole in one line.
//   - POST /api/chat with "stream":false: one object, the whole message and
//     the counts.
//   - GET /api/tags: the models listed. POST /api/show: a model's details
//     and capabilities ("completion", "tools").
//
// Prompt tokens are estimated as request body bytes/4, output tokens as
// content and arguments bytes/4, unless the [Reply] sets its [Usage].
//
// Errors are {"error":"…"} with a status: an unknown model 404 ("model "x"
// not found, try pulling it first"), a malformed body 400. A scripted
// [APIError] may carry Retry-After. A failure part-way through a stream is
// an {"error":"…"} line, as Ollama sends it.
//
// Each chat request is captured as a [Request] and answered by a [Reply]
// taken from the [Server.Enqueue] FIFO, else from the [Responder] (default:
// the text "ok"). [WithLatency] delays the first line and [WithPacing] each
// following one; a client cancelling, or [Server.Close], ends the wait, drops
// the connection and marks the request [Request.Cancelled].
package fakeollama
