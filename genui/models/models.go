package models

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/compat_oai"
	"github.com/firebase/genkit/go/plugins/ollama"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/gemini"
	"github.com/genuiserver/genui/genui/offline"
)

// Default model names.
const (
	DefaultGemini = "googleai/gemini-2.5-flash"
	DefaultVertex = "vertexai/gemini-2.5-flash"
)

// Resolve returns the model to use for the configured name: "" picks Gemini when
// GEMINI_API_KEY or GOOGLE_API_KEY is set, Vertex AI when GOOGLE_CLOUD_PROJECT is set, and
// the offline model otherwise; "offline" is an alias of [offline.Name].
func Resolve(name string) string {
	switch {
	case name == "offline":
		return offline.Name
	case name != "":
		return name
	case apiKey() != "":
		return DefaultGemini
	case os.Getenv("GOOGLE_CLOUD_PROJECT") != "":
		return DefaultVertex
	}
	return offline.Name
}

func apiKey() string {
	if k := os.Getenv("GEMINI_API_KEY"); k != "" {
		return k
	}
	return os.Getenv("GOOGLE_API_KEY")
}

// Plugins returns the Genkit plugins that Open needs for the model name (a name returned
// by Resolve): none for Gemini, Vertex AI and the offline model.
//
//   - googleai/<model>: the Gemini API; needs GEMINI_API_KEY or GOOGLE_API_KEY
//     (GOOGLE_GEMINI_BASE_URL overrides the endpoint).
//   - vertexai/<model>: Vertex AI; needs GOOGLE_CLOUD_PROJECT and Application Default
//     Credentials (GOOGLE_CLOUD_LOCATION, default us-central1).
//   - ollama/<model>: a local Ollama server at OLLAMA_HOST (default http://localhost:11434).
//   - <provider>/<model>: any OpenAI-compatible endpoint at OPENAI_BASE_URL with
//     OPENAI_API_KEY (openai/<model> uses OpenAI itself).
func Plugins(name string) ([]api.Plugin, error) {
	provider, model, ok := strings.Cut(name, "/")
	if !ok || model == "" {
		return nil, fmt.Errorf("model %q: expected <provider>/<model>, e.g. %s, or offline", name, DefaultGemini)
	}
	switch provider {
	case "genui":
		if name != offline.Name {
			return nil, fmt.Errorf("model %q: the only genui model is %s", name, offline.Name)
		}
		return nil, nil
	case "googleai":
		if apiKey() == "" {
			return nil, fmt.Errorf("model %q needs GEMINI_API_KEY or GOOGLE_API_KEY", name)
		}
		return nil, nil
	case "vertexai":
		if os.Getenv("GOOGLE_CLOUD_PROJECT") == "" {
			return nil, fmt.Errorf("model %q needs GOOGLE_CLOUD_PROJECT", name)
		}
		return nil, nil
	case "ollama":
		return []api.Plugin{&ollama.Ollama{ServerAddress: ollamaHost(), Timeout: 300}}, nil
	}
	base := os.Getenv("OPENAI_BASE_URL")
	if base == "" && provider != "openai" {
		return nil, fmt.Errorf("model %q: set OPENAI_BASE_URL to the OpenAI-compatible endpoint of %q", name, provider)
	}
	key := os.Getenv("OPENAI_API_KEY")
	if key == "" {
		key = "unused" // local endpoints often need none
	}
	return []api.Plugin{&compat_oai.OpenAICompatible{Provider: provider, APIKey: key, BaseURL: base}}, nil
}

func ollamaHost() string {
	host := os.Getenv("OLLAMA_HOST")
	if host == "" {
		host = "http://localhost:11434"
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	return host
}

// Open returns the model named name, for a Genkit instance initialised with
// Plugins(name). It also registers the offline model in g, so that Genkit tooling lists
// it whatever model serves.
func Open(ctx context.Context, g *genkit.Genkit, name string, log *slog.Logger) (genui.Model, error) {
	offline.Define(g)
	provider, model, _ := strings.Cut(name, "/")
	switch provider {
	case "genui":
		return offline.New(), nil
	case "googleai":
		return gemini.New(ctx, gemini.Config{Name: name, APIKey: apiKey(), Logger: log})
	case "vertexai":
		return gemini.New(ctx, gemini.Config{Name: name, Project: os.Getenv("GOOGLE_CLOUD_PROJECT"),
			Location: os.Getenv("GOOGLE_CLOUD_LOCATION"), Logger: log})
	case "ollama":
		if p, ok := genkit.LookupPlugin(g, "ollama").(*ollama.Ollama); ok {
			p.DefineModel(g, ollama.ModelDefinition{Name: model, Type: "chat"},
				&ai.ModelOptions{Supports: &ai.ModelSupports{Multiturn: true, Tools: true, SystemRole: true, Media: true}})
		}
	}
	return genui.GenkitModel(g, name)
}
