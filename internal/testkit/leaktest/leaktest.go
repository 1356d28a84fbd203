// Package leaktest fails a test binary that leaves goroutines behind, apart from those
// that live as long as the process: Genkit's, the HTTP client's idle connections', the
// session store's.
package leaktest

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/genuiserver/genui/internal/testkit/redistest"
)

// processWide are the goroutines that live as long as the process, not per request.
var processWide = []goleak.Option{
	goleak.IgnoreTopFunction("go.opentelemetry.io/otel/sdk/trace.(*batchSpanProcessor).processQueue"),
	goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
	goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	goleak.IgnoreTopFunction("net/http.(*persistConn).readLoop"),
	// One per genkit.Init (it installs a signal context it never stops) and one per
	// expirable LRU (its cleanup goroutine has no stop in golang-lru v2).
	goleak.IgnoreTopFunction("os/signal.NotifyContext.func1"),
	goleak.IgnoreAnyFunction("github.com/hashicorp/golang-lru/v2/expirable.NewLRU[...].func1"),
	// In the development environment each genkit.Init also starts Genkit's own
	// reflection server, which has no stop.
	goleak.IgnoreAnyFunction("github.com/firebase/genkit/go/genkit.Init.func1"),
	goleak.IgnoreAnyFunction("github.com/firebase/genkit/go/genkit.startReflectionServer.func2"),
	redistest.IgnoreGoroutines(),
}

// VerifyTestMain runs the tests of m, then fails if any goroutine other than the
// process-wide ones (and those extra ignores) is still running.
func VerifyTestMain(m *testing.M, extra ...goleak.Option) {
	goleak.VerifyTestMain(m, append(processWide[:len(processWide):len(processWide)], extra...)...)
}
