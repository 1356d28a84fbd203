package genui

import (
	"context"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/tools"
)

// Model is the port through which a turn calls a model. Adapters translate it to a
// provider: Gemini and Vertex AI through google.golang.org/genai (package gemini), any
// Genkit model ([GenkitModel]), the offline model (package offline). Provider quirks stay
// in the adapter: error mapping (an adapter returns *Error values, with RetryAfter when the
// provider asks to wait), retry hints, schema fallbacks.
type Model interface {
	// Name is the model's name, e.g. "googleai/gemini-2.5-flash".
	Name() string
	// Generate makes one model call. It passes each text part and each whole tool request
	// to onPart as soon as the model produces it, in order, and returns the whole response:
	// the model message (every part, those streamed included), the finish reason and the
	// token usage. An error of onPart ends the call with that error.
	Generate(ctx context.Context, req *ModelRequest, onPart func(context.Context, *ai.Part) error) (*ai.ModelResponse, error)
}

// ServedBy records, in the context of a model call, the name of the model that served it.
// A Model that passes calls to other models (a fallback chain) calls it before it returns,
// so that the turn's log line, usage and metrics name the model that served each call;
// otherwise they name the Model.
func ServedBy(ctx context.Context, name string) {
	if p, ok := ctx.Value(servedKey{}).(*string); ok {
		*p = name
	}
}

type servedKey struct{}

// SignatureKey is the metadata key of a part's opaque signature from the model (a Gemini
// thought signature, []byte), which must go back to the model with the part.
const SignatureKey = "signature"

// ModelRequest is one model call of a turn.
type ModelRequest struct {
	// Catalog is the turn's catalog: a genui widget catalog, or an A2UI catalog
	// (Catalog.A2UI set).
	Catalog *catalog.Catalog
	// Tools are the UI tools of a genui turn; nil when the turn has none (an A2UI turn,
	// whose model writes A2UI messages as text).
	Tools *tools.Set
	// ClientTools are the tools the client runs, declared to the model after the UI
	// tools; nil when the request declares none.
	ClientTools *tools.ClientSet
	// System is the system prompt: the same for every turn of a catalog, so that
	// providers that cache prompt prefixes can reuse it.
	System Prompt
	// Messages is the conversation so far.
	Messages []*ai.Message
	// NoTools asks for text only (a closing message), with the tools still declared.
	NoTools bool
	// MaxOutputTokens is the largest output the provider may give (0: its own limit).
	MaxOutputTokens int
}
