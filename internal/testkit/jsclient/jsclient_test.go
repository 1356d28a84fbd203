package jsclient

import (
	"testing"

	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/testkit/nodetest"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

// TestGenkitJSClient runs compat.test.mjs, which uses the official Genkit JS client, against
// the server.
func TestGenkitJSClient(t *testing.T) {
	node := nodetest.Require(t, "genkit")
	svc := servetest.Service(t, offline.Name)
	srv := servetest.Serve(t, svc)
	nodetest.Run(t, node, []string{"GENUI_URL=" + srv.URL}, "compat.test.mjs")
}
