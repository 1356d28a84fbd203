package a2aclient

import (
	"testing"

	"github.com/genuiserver/genui/genui/a2aapi"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/testkit/nodetest"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

// TestA2AWithAuthentication runs auth.test.mjs, which drives the A2A agent with the
// official JavaScript SDK (both lines) as a client without credentials and as two callers
// with API keys, each of whose tasks and contexts is, to the other, an unknown id. The
// agent runs on the offline model, every route but the card requiring a key, its card
// advertising the schemes, its JSON-RPC routes answering refusals as JSON-RPC errors.
func TestA2AWithAuthentication(t *testing.T) {
	node := nodetest.Require(t, "a2a-v03", "a2a-v1")
	authn, keys := servetest.Callers(t)
	svc := servetest.Service(t, offline.Name)
	agent := a2aapi.New(svc, a2aapi.WithLogger(quiet), a2aapi.WithSecuritySchemes(authn.Schemes()...))
	srv := servetest.ServeWith(t, svc, []httpapi.Option{httpapi.WithAuth(authn)}, agent.Routes()...)
	nodetest.Run(t, node, append([]string{"GENUI_URL=" + srv.URL}, keys...), "auth.test.mjs")
}
