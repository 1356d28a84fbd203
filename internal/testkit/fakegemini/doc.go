// Package fakegemini is an in-process fake of the Gemini REST API
// (generativelanguage v1beta) that the real google.golang.org/genai client
// and the Genkit googlegenai plugin can be pointed at, through
// genai.HTTPOptions{BaseURL: s.URL()} or GOOGLE_GEMINI_BASE_URL=s.URL().
//
// Endpoints (v1 and v1alpha are accepted too):
//
//   - POST /v1beta/models/{model}:streamGenerateContent?alt=sse: one
//     server-sent event per scripted [Chunk], each a single line
//     "data: <compact GenerateContentResponse JSON>" plus a blank line,
//     flushed per event.
//   - POST /v1beta/models/{model}:generateContent: one GenerateContentResponse
//     holding the parts of all chunks, adjacent text parts joined.
//   - GET /v1beta/models (a single page) and GET /v1beta/models/{model}.
//
// Every event has one candidate {content{role:"model",parts},index:0},
// cumulative usageMetadata, modelVersion and responseId; only the last one
// has finishReason. Prompt tokens are estimated as request body bytes/4,
// output tokens as text or function call JSON bytes/4.
//
// Errors use Google's body {"error":{code,message,status,details}}: no API
// key gives 403 PERMISSION_DENIED, a key other than [WithAPIKey]'s 400
// INVALID_ARGUMENT, an unknown path or unlisted model 404 NOT_FOUND, a
// malformed body or empty contents 400 INVALID_ARGUMENT.
//
// Each generate request is captured as a [Request] and answered by a
// [Reply] taken from the [Server.Enqueue] FIFO, else from the [Responder]
// (default: the text "ok"). [WithLatency] delays the first event and
// [WithPacing] each following one; a client cancelling, or [Server.Close],
// ends the wait, drops the connection and marks the request
// [Request.Cancelled].
package fakegemini
