package aguiclient

import (
	"testing"

	"github.com/genuiserver/genui/genui/aguiapi"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/testkit/nodetest"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

// TestAGUIClientWithAuthentication runs auth.test.mjs, which drives the AG-UI endpoint
// with @ag-ui/client's HttpAgent as a client without credentials and as two callers with
// API keys (in its headers), each of whose runs' durable streams is, to the other, an
// unknown stream. The endpoint runs on the offline model, every route requiring a key.
func TestAGUIClientWithAuthentication(t *testing.T) {
	node := nodetest.Require(t, "@ag-ui/client", "@ag-ui/core")
	authn, keys := servetest.Callers(t)
	svc := servetest.Service(t, offline.Name)
	srv := servetest.ServeWith(t, svc, []httpapi.Option{httpapi.WithAuth(authn)}, aguiapi.New(svc, aguiapi.WithLogger(quiet)).Routes()...)
	nodetest.Run(t, node, append([]string{"GENUI_URL=" + srv.URL}, keys...), "auth.test.mjs")
}
