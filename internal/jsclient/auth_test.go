package jsclient

import (
	"testing"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/nodetest"
	"github.com/genuiserver/genui/internal/servetest"
)

// The API keys of the two callers of TestGenkitJSClientWithAuthentication.
const (
	aliceKey = "alice-key-0123456789abcdef"
	bobKey   = "bob-key-0123456789abcdef"
)

// TestGenkitJSClientWithAuthentication runs auth.test.mjs, which calls the API through
// runFlow and streamFlow from genkit/beta/client as a client without credentials and as
// two callers with API keys (in the calls' headers), each of whose streams, sessions and
// held conversations is, to the other, an unknown id. The API runs on the offline model,
// every route requiring a key.
func TestGenkitJSClientWithAuthentication(t *testing.T) {
	node := nodetest.Require(t, "genkit")
	authn, err := auth.New(auth.WithAPIKey("alice", aliceKey), auth.WithAPIKey("bob", bobKey))
	if err != nil {
		t.Fatal(err)
	}
	svc := servetest.Service(t, offline.Name)
	srv := servetest.ServeWith(t, svc, []httpapi.Option{httpapi.WithAuth(authn)})
	nodetest.Run(t, node, []string{"GENUI_URL=" + srv.URL, "GENUI_ALICE_KEY=" + aliceKey, "GENUI_BOB_KEY=" + bobKey}, "auth.test.mjs")
}
