package reflection

import (
	"context"
	"os"
	"sync"

	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/core/logger"
	"github.com/firebase/genkit/go/core/tracing"
	"github.com/firebase/genkit/go/genkit"
)

// envGenkit is the variable that selects Genkit's environment ("dev" under the Genkit CLI).
const envGenkit = "GENKIT_ENV"

// InitGenkit calls genkit.Init so that [Start] is the only reflection runtime of the process
// when a Reflection API V2 manager is named ($GENKIT_REFLECTION_V2_SERVER or
// $GENKIT_REFLECTION_API_URL, see [Start]). Call it instead of genkit.Init, once, at start-up,
// before Start and before other goroutines read the environment.
//
// In the development environment genkit.Init starts a reflection server of its own: its V2
// client when $GENKIT_REFLECTION_V2_SERVER is set, else its V1 HTTP server
// (genkit/genkit.go:331-348). Under a V2 manager InitGenkit starts neither: for the duration
// of genkit.Init it hides $GENKIT_REFLECTION_V2_SERVER, $GENKIT_REFLECTION_API_URL and
// $GENKIT_ENV (plugins' Init sees the production environment, and Genkit's "Genkit
// initialized" log line says env=prod), restores them, and then
// installs what genkit.Init does for the development environment besides the reflection
// server: the handler that streams logs to the Dev UI's telemetry server
// (configureLogging, genkit/genkit.go:55-76). See the package documentation for why V1 is
// not started either.
//
// Without a V2 manager it is genkit.Init: under `genkit start` without
// --experimental-reflection-v2, Genkit's V1 server serves the CLI as usual.
func InitGenkit(ctx context.Context, opts ...genkit.GenkitOption) *genkit.Genkit {
	if managerURL() == "" || api.CurrentEnvironment() != api.EnvironmentDev {
		return genkit.Init(ctx, opts...)
	}
	for _, k := range []string{EnvServer, EnvAPIURL, envGenkit} {
		if v, ok := os.LookupEnv(k); ok {
			os.Unsetenv(k)
			defer os.Setenv(k, v)
		}
	}
	g := genkit.Init(ctx, opts...)
	devLogging()
	return g
}

// devLogging installs, once per process, the dev-mode log export genkit.Init would have.
var devLogging = sync.OnceFunc(func() {
	logger.AddHandler(tracing.LogExportHandler())
	tracing.EnableLogExport(os.Getenv("GENKIT_TELEMETRY_SERVER"))
})

// managerURL is the manager's URL from the environment, or "" when reflection V2 is off.
func managerURL() string {
	if u := os.Getenv(EnvServer); u != "" {
		return u
	}
	return os.Getenv(EnvAPIURL)
}
