package jsclient

import (
	"testing"

	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/testkit/nodetest"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

// TestGenkitJSClientWithAuthentication runs auth.test.mjs, which calls the API through
// runFlow and streamFlow from genkit/beta/client as a client without credentials and as
// two callers with API keys (in the calls' headers), each of whose streams, sessions and
// held conversations is, to the other, an unknown id. The API runs on the offline model,
// every route requiring a key.
func TestGenkitJSClientWithAuthentication(t *testing.T) {
	node := nodetest.Require(t, "genkit")
	authn, keys := servetest.Callers(t)
	svc := servetest.Service(t, offline.Name)
	srv := servetest.ServeWith(t, svc, []httpapi.Option{httpapi.WithAuth(authn)})
	nodetest.Run(t, node, append([]string{"GENUI_URL=" + srv.URL}, keys...), "auth.test.mjs")
}
