package wsclient

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/genui/wsapi"
	"github.com/genuiserver/genui/internal/sessionhub"
	"github.com/genuiserver/genui/internal/testkit/nodetest"
	"github.com/genuiserver/genui/internal/testkit/servetest"
	"github.com/genuiserver/genui/schemas"
)

// TestWSClientWithAuthentication runs auth.test.mjs, which drives GET /ws and GET
// /session/{id} with the ws package as a client without credentials (refused before the
// upgrade) and as two callers with API keys (in the query, as a browser sends them, or in
// a header), each of whose sessions is, to the other, an unknown id. Both endpoints share
// one hub of sessions, on the offline model, every route requiring a key.
func TestWSClientWithAuthentication(t *testing.T) {
	node := nodetest.Require(t, "ws")
	authn, keys := servetest.Callers(t)
	svc := servetest.Service(t, offline.Name)
	hub := sessionhub.New(svc, window, servetest.Quiet)
	t.Cleanup(hub.Close)
	ws := wsapi.New(svc, wsapi.WithHub(hub), wsapi.WithLogger(servetest.Quiet))
	srv := servetest.ServeWith(t, svc, []httpapi.Option{httpapi.WithAuth(authn)}, ws.Routes()...)

	// The genui catalog a session of /session/{id} starts with.
	basic, err := schemas.SampleCatalog("basic")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := json.Marshal(basic)
	if err != nil {
		t.Fatal(err)
	}
	catalogFile := filepath.Join(t.TempDir(), "basic.json")
	if err := os.WriteFile(catalogFile, raw, 0o644); err != nil {
		t.Fatal(err)
	}

	nodetest.Run(t, node, append([]string{"GENUI_URL=" + srv.URL, "GENUI_CATALOG_FILE=" + catalogFile}, keys...), "auth.test.mjs")
}
