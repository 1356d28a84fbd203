// Package models chooses, once at start-up, the adapter of the genui.Model port that
// serves a model name: Gemini and Vertex AI through google.golang.org/genai (package
// gemini), the offline model (package offline), or any other provider through its Genkit
// plugin (Ollama, OpenAI-compatible endpoints) and [genui.GenkitModel].
//
// This package is the service's own: its API serves the genui server and may change
// from one release to the next. The packages meant for import are a2ui, catalog, policy
// and schemas.
package models
