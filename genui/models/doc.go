// Package models chooses, once at start-up, the adapter of the genui.Model port that
// serves a model name: Gemini and Vertex AI through google.golang.org/genai (package
// gemini), the offline model (package offline), or any other provider through its Genkit
// plugin (Ollama, OpenAI-compatible endpoints) and [genui.GenkitModel].
package models
