// Package servetest serves the service over real HTTP for tests: a service on a named
// model, its API, and the transports a test adds.
package servetest

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/models"
	"github.com/genuiserver/genui/genui/transport"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
)

// Quiet is a logger that drops everything.
var Quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// Service returns a service on the named model, logging to Quiet: "offline", or a
// provider/model whose plugin reads its key and base URL from the environment (as the
// fake Gemini's tests set them).
func Service(t testing.TB, model string, opts ...genui.Option) *genui.Service {
	t.Helper()
	plugins, err := models.Plugins(model)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	g := genkit.Init(ctx, genkit.WithPlugins(plugins...))
	m, err := models.Open(ctx, g, model, Quiet)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := genui.New(g, m, append([]genui.Option{genui.WithLogger(Quiet)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// Serve serves svc's API, and the routes of other transports, over loopback HTTP until t
// ends.
func Serve(t testing.TB, svc *genui.Service, routes ...transport.Route) *httptest.Server {
	t.Helper()
	return ServeWith(t, svc, nil, routes...)
}

// The API keys of the two callers tests authenticate as: key:alice and key:bob.
const (
	AliceKey = "alice-key-0123456789abcdef"
	BobKey   = "bob-key-0123456789abcdef"
)

// Callers returns an authenticator accepting AliceKey and BobKey, and the environment
// that gives them to node tests (GENUI_ALICE_KEY, GENUI_BOB_KEY).
func Callers(t testing.TB) (*auth.Authenticator, []string) {
	t.Helper()
	a, err := auth.New(auth.WithAPIKey("alice", AliceKey), auth.WithAPIKey("bob", BobKey))
	if err != nil {
		t.Fatal(err)
	}
	return a, []string{"GENUI_ALICE_KEY=" + AliceKey, "GENUI_BOB_KEY=" + BobKey}
}

// ServeWith is [Serve] with opts, httpapi's options, applied after the logger option: to
// serve the API with authentication (httpapi.WithAuth), say.
func ServeWith(t testing.TB, svc *genui.Service, opts []httpapi.Option, routes ...transport.Route) *httptest.Server {
	t.Helper()
	e := httpapi.New(svc, append([]httpapi.Option{httpapi.WithLogger(Quiet), httpapi.WithRoutes(routes...)}, opts...)...)
	srv := httptest.NewServer(e)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		http.DefaultClient.CloseIdleConnections()
	})
	return srv
}

// Eventually waits up to 10 seconds, polling every 10 ms, for cond; then fails with what.
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// PacedModel names the Gemini model PacedForm serves.
const PacedModel = "googleai/gemini-2.5-flash"

// PacedForm serves a fake Gemini writing a2uitest.FormResponse in 20 chunks, one every
// 20 ms (a turn of about 400 ms), as the PacedModel of the services the test makes next.
func PacedForm(t *testing.T) *fakegemini.Server {
	t.Helper()
	fake := fakegemini.New(fakegemini.WithPacing(20*time.Millisecond), fakegemini.WithResponder(func(*fakegemini.Request) fakegemini.Reply {
		return fakegemini.Reply{Chunks: fakegemini.TextChunks(a2uitest.FormResponse, 20)}
	}))
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	return fake
}
