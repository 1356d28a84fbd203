package genui

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/compat_oai"
	"github.com/firebase/genkit/go/plugins/googlegenai"
	"github.com/firebase/genkit/go/plugins/ollama"
)

// Default model names.
const (
	DefaultGeminiModel = "googleai/gemini-2.5-flash"
	DefaultVertexModel = "vertexai/gemini-2.5-flash"
)

// ResolveModel returns the model to use for the configured name: "" picks Gemini when
// GEMINI_API_KEY or GOOGLE_API_KEY is set, Vertex AI when GOOGLE_CLOUD_PROJECT is set, and
// the offline model otherwise; "offline" is an alias of [OfflineModel].
func ResolveModel(name string) string {
	switch {
	case name == "offline":
		return OfflineModel
	case name != "":
		return name
	case os.Getenv("GEMINI_API_KEY") != "" || os.Getenv("GOOGLE_API_KEY") != "":
		return DefaultGeminiModel
	case os.Getenv("GOOGLE_CLOUD_PROJECT") != "":
		return DefaultVertexModel
	}
	return OfflineModel
}

// NewGenkit initialises Genkit with the plugin that serves model (a name returned by
// [ResolveModel]) and the offline model, which is always available.
//
//   - googleai/<model>: Gemini API; needs GEMINI_API_KEY or GOOGLE_API_KEY
//     (GOOGLE_GEMINI_BASE_URL overrides the endpoint).
//   - vertexai/<model>: Vertex AI; needs GOOGLE_CLOUD_PROJECT and Application Default
//     Credentials (GOOGLE_CLOUD_LOCATION, default us-central1).
//   - ollama/<model>: a local Ollama server at OLLAMA_HOST (default http://localhost:11434).
//   - <provider>/<model>: any OpenAI-compatible endpoint at OPENAI_BASE_URL with
//     OPENAI_API_KEY.
func NewGenkit(ctx context.Context, model string) (*genkit.Genkit, error) {
	provider, name, ok := strings.Cut(model, "/")
	if !ok || name == "" {
		return nil, fmt.Errorf("model %q: expected <provider>/<model>, e.g. %s, or offline", model, DefaultGeminiModel)
	}
	var plugins []api.Plugin
	var ol *ollama.Ollama
	switch provider {
	case "genui":
	case "googleai":
		if os.Getenv("GEMINI_API_KEY") == "" && os.Getenv("GOOGLE_API_KEY") == "" {
			return nil, fmt.Errorf("model %q needs GEMINI_API_KEY or GOOGLE_API_KEY", model)
		}
		plugins = append(plugins, &googlegenai.GoogleAI{})
	case "vertexai":
		if os.Getenv("GOOGLE_CLOUD_PROJECT") == "" {
			return nil, fmt.Errorf("model %q needs GOOGLE_CLOUD_PROJECT", model)
		}
		loc := os.Getenv("GOOGLE_CLOUD_LOCATION")
		if loc == "" {
			loc = "us-central1"
		}
		plugins = append(plugins, &googlegenai.VertexAI{ProjectID: os.Getenv("GOOGLE_CLOUD_PROJECT"), Location: loc})
	case "ollama":
		host := os.Getenv("OLLAMA_HOST")
		if host == "" {
			host = "http://localhost:11434"
		}
		if !strings.Contains(host, "://") {
			host = "http://" + host
		}
		ol = &ollama.Ollama{ServerAddress: host, Timeout: 300}
		plugins = append(plugins, ol)
	default:
		base := os.Getenv("OPENAI_BASE_URL")
		if base == "" && provider != "openai" {
			return nil, fmt.Errorf("model %q: set OPENAI_BASE_URL to the OpenAI-compatible endpoint of %q", model, provider)
		}
		key := os.Getenv("OPENAI_API_KEY")
		if key == "" {
			key = "unused" // local endpoints often need none
		}
		plugins = append(plugins, &compat_oai.OpenAICompatible{Provider: provider, APIKey: key, BaseURL: base})
	}
	g := genkit.Init(ctx, genkit.WithPlugins(plugins...), genkit.WithDefaultModel(model))
	DefineOfflineModel(g)
	if ol != nil {
		ol.DefineModel(g, ollama.ModelDefinition{Name: name, Type: "chat"},
			&ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true, Tools: true, SystemRole: true, Media: true}})
	}
	return g, nil
}
