package genui

import (
	"context"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
)

type nopModel struct{}

func (nopModel) Name() string { return "test/nop" }

func (nopModel) Generate(context.Context, *ModelRequest, func(context.Context, *ai.Part) error) (*ai.ModelResponse, error) {
	return &ai.ModelResponse{FinishReason: ai.FinishReasonStop}, nil
}

// Model calls are recorded as spans only where spans go somewhere: in the Genkit
// development environment, or with a telemetry server.
func TestModelSpansOnlyWhereTracesGo(t *testing.T) {
	for _, tc := range []struct {
		env, server string
		traced      bool
	}{{"", "", false}, {"prod", "", false}, {"dev", "", true}, {"", "http://127.0.0.1:4033", true}} {
		t.Setenv("GENKIT_ENV", tc.env)
		t.Setenv("GENKIT_TELEMETRY_SERVER", tc.server)
		s, err := New(genkit.Init(context.Background()), nopModel{})
		if err != nil {
			t.Fatal(err)
		}
		if _, traced := s.model.(traced); traced != tc.traced {
			t.Errorf("GENKIT_ENV=%q GENKIT_TELEMETRY_SERVER=%q: traced %v", tc.env, tc.server, traced)
		}
	}
}
