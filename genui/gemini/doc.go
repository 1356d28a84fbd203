// Package gemini calls Gemini models, on the Gemini API or Vertex AI, through
// google.golang.org/genai: the service's default model and its hot path.
//
// Per catalog, the system instruction and the declarations of the UI tools are encoded
// once and put into each request body as they are, so that neither Genkit nor the genai
// client converts or validates the catalog on every call. Each tool schema is sent whole
// as parametersJsonSchema. When Gemini rejects a catalog as a tool schema ("too many
// states for serving"), the model switches that catalog to the simplified tool schema
// (the catalog stays in the system prompt) and remembers it. Provider errors keep their
// meaning: 429 is RESOURCE_EXHAUSTED with the delay Gemini asked for, 5xx UNAVAILABLE, an
// unreachable endpoint UNAVAILABLE, a stream that ends without a finish reason
// UNAVAILABLE. Thought signatures and function call ids go back with their parts.
//
// This package is the service's own: its API serves the genui server and may change
// from one release to the next. The packages meant for import are a2ui, catalog, policy
// and schemas.
package gemini
