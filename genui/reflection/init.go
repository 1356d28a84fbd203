package reflection

import (
	"context"
	"os"

	"github.com/firebase/genkit/go/genkit"
)

// InitGenkit calls genkit.Init without letting Genkit start its own Reflection API V2
// client: it hides GENKIT_REFLECTION_V2_SERVER from Init, so that [Start] is the only V2
// runtime the manager sees. Call it instead of genkit.Init, before Start.
func InitGenkit(ctx context.Context, opts ...genkit.GenkitOption) *genkit.Genkit {
	if u, ok := os.LookupEnv(EnvServer); ok {
		os.Unsetenv(EnvServer)
		defer os.Setenv(EnvServer, u)
	}
	return genkit.Init(ctx, opts...)
}
