package models

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"regexp"
	"strings"
	"unicode"

	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/compat_oai"
	"github.com/firebase/genkit/go/plugins/ollama"
	"github.com/openai/openai-go/option"

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
	if err := Check(name, os.Getenv); err != nil {
		return nil, err
	}
	provider, _, _ := strings.Cut(name, "/")
	switch provider {
	case "genui", "googleai", "vertexai":
		return nil, nil
	case "ollama":
		return []api.Plugin{&ollama.Ollama{ServerAddress: ollamaHost(), Timeout: 300}}, nil
	}
	key := os.Getenv("OPENAI_API_KEY")
	if key == "" {
		key = "unused" // local endpoints often need none
	}
	// The SDK's own retries are off: the service's (or a chain's) retry each call once
	// policy, honouring the provider's Retry-After, and pass it on when it keeps failing.
	return []api.Plugin{&compat_oai.OpenAICompatible{Provider: provider, APIKey: key, BaseURL: os.Getenv("OPENAI_BASE_URL"),
		Opts: []option.RequestOption{option.WithMaxRetries(0)}}}, nil
}

// knownProviders are the providers served without an OpenAI-compatible endpoint.
var knownProviders = map[string]bool{"genui": true, "googleai": true, "vertexai": true, "ollama": true, "openai": true}

var providerName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

const expected = "expected offline, googleai/<model>, vertexai/<model>, ollama/<model>, or <provider>/<model> of the OpenAI-compatible endpoint at OPENAI_BASE_URL"

// Check reports whether Plugins and Open can serve the model name (a name returned by
// Resolve) with the environment getenv reads: the name's shape, and what its provider
// needs (a key, a project, an endpoint).
func Check(name string, getenv func(string) string) error {
	provider, model, ok := strings.Cut(name, "/")
	switch {
	case !ok || provider == "" || model == "":
		return fmt.Errorf("%q is not <provider>/<model>; %s", name, expected)
	case !providerName.MatchString(provider):
		return fmt.Errorf("%q: the provider %q is not a name of A-Z a-z 0-9 . _ -; %s", name, provider, expected)
	case strings.ContainsFunc(model, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }):
		return fmt.Errorf("%q: the model name has spaces or control characters; %s", name, expected)
	case provider == "genui" && name != offline.Name:
		return fmt.Errorf("%q: the only genui model is %s (offline)", name, offline.Name)
	case provider == "googleai" && getenv("GEMINI_API_KEY") == "" && getenv("GOOGLE_API_KEY") == "":
		return fmt.Errorf("%q needs GEMINI_API_KEY or GOOGLE_API_KEY in the environment", name)
	case provider == "vertexai" && getenv("GOOGLE_CLOUD_PROJECT") == "":
		return fmt.Errorf("%q needs GOOGLE_CLOUD_PROJECT in the environment (and Application Default Credentials)", name)
	case !knownProviders[provider] && getenv("OPENAI_BASE_URL") == "":
		return fmt.Errorf("%q: %q is not googleai, vertexai, ollama or openai; set OPENAI_BASE_URL to its OpenAI-compatible endpoint", name, provider)
	}
	return nil
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

// Option configures Open.
type Option func(*options)

type options struct{ h2c bool }

// WithUnencryptedHTTP2 makes a Gemini or Vertex AI model reach an http:// endpoint
// (GOOGLE_GEMINI_BASE_URL, GOOGLE_VERTEX_BASE_URL) over HTTP/2 without TLS, one
// connection for every turn, as an https:// endpoint is reached over TLS.
func WithUnencryptedHTTP2(on bool) Option { return func(o *options) { o.h2c = on } }

// Open returns the model named name, for a Genkit instance initialised with
// Plugins(name). It also registers the offline model in g, so that Genkit tooling lists
// it whatever model serves.
func Open(ctx context.Context, g *genkit.Genkit, name string, log *slog.Logger, opts ...Option) (genui.Model, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	offline.Define(g)
	provider, model, _ := strings.Cut(name, "/")
	switch provider {
	case "genui":
		return offline.New(), nil
	case "googleai":
		return gemini.New(ctx, gemini.Config{Name: name, APIKey: apiKey(), Logger: log, UnencryptedHTTP2: o.h2c})
	case "vertexai":
		return gemini.New(ctx, gemini.Config{Name: name, Project: os.Getenv("GOOGLE_CLOUD_PROJECT"),
			Location: os.Getenv("GOOGLE_CLOUD_LOCATION"), Logger: log, UnencryptedHTTP2: o.h2c})
	case "ollama":
		defineOllama(g, ollamaHost(), model)
		return genui.GenkitModel(g, name)
	}
	m, err := genui.GenkitModel(g, name)
	if err != nil {
		return nil, err
	}
	return compatModel{m}, nil
}
