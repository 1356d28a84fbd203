package genui_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/genuiserver/genui/internal/redistest"
)

func TestMain(m *testing.M) {
	// Genkit keeps a few process-wide goroutines; anything else still running after the
	// tests is a leak: no turn, stream or held conversation outlives its test.
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("go.opentelemetry.io/otel/sdk/trace.(*batchSpanProcessor).processQueue"),
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
		// One per genkit.Init and one per session store (the expirable LRU's cleanup has
		// no stop): they live as long as the process, not per request.
		goleak.IgnoreTopFunction("os/signal.NotifyContext.func1"),
		goleak.IgnoreAnyFunction("github.com/hashicorp/golang-lru/v2/expirable.NewLRU[...].func1"),
		redistest.IgnoreGoroutines(),
		// In the development environment each genkit.Init also starts Genkit's own
		// reflection server, which has no stop.
		goleak.IgnoreAnyFunction("github.com/firebase/genkit/go/genkit.Init.func1"),
		goleak.IgnoreAnyFunction("github.com/firebase/genkit/go/genkit.startReflectionServer.func2"),
	)
}
