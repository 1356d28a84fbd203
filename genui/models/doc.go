// Package models chooses, at start-up, the adapter of the genui.Model port that serves a
// model name: Gemini and Vertex AI through google.golang.org/genai (package gemini), the
// offline model (package offline), Ollama through its /api/chat (ollama.go: Genkit's
// plugin drops the token counts), or an OpenAI-compatible endpoint through its Genkit
// plugin and [genui.GenkitModel] (its failures mapped as Gemini's are, without the
// endpoint's address). A comma-separated list of names is a fallback chain
// ([OpenChain]): a call that fails before any output with 429, 5xx, a connection error
// or a timeout, after that model's retries, goes to the next model. A [Pool] opens each
// model once for every chain and choice a server offers: its default, the models a
// request may name, each caller's.
//
// This package is the service's own: its API serves the genui server and may change
// from one release to the next. The packages meant for import are a2ui, catalog, policy
// and schemas.
package models
