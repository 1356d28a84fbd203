package web_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/mcpapi"
	"github.com/genuiserver/genui/internal/a2uitest"
)

// TestMCPAppInChromium drives the MCP App end to end (web/e2e/mcp.test.mjs): the official
// MCP SDK client (@modelcontextprotocol/sdk 1.32.2, in node) calls /mcp on the offline
// model and reads generate_ui's UI resource; the official AppBridge
// (@modelcontextprotocol/ext-apps 2.0.4) plays the host in headless Chromium, the app in a
// sandboxed frame under the default CSP; @a2ui/lit draws the result's surface, and a click
// comes back as the app's tools/call of ui_action. Every A2UI message of every tool
// result is then checked against the specification's schemas.
func TestMCPAppInChromium(t *testing.T) {
	b := needBrowser(t)
	if _, err := os.Stat(filepath.Join(b.e2e, "node_modules", "@modelcontextprotocol", "ext-apps", "package.json")); err != nil {
		skipOrFail(t, "web/e2e/node_modules/@modelcontextprotocol/ext-apps is missing")
	}
	seen := exchanges{path: "/mcp"}
	srv := newE2EServer(t, b.e2e, &seen, func(svc *genui.Service, e *echo.Echo) {
		mcpapi.New(svc, mcpapi.WithLogger(quiet)).Register(e)
	})
	recordFile := filepath.Join(t.TempDir(), "mcp-record.json")

	b.run(t, "mcp.test.mjs", "GENUI_URL="+srv.URL+"/", "MCP_RECORD="+recordFile)

	var rec struct {
		Results []struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Messages []json.RawMessage `json:"messages"`
			} `json:"structuredContent"`
		} `json:"results"`
		AppCalls []struct {
			Name string `json:"name"`
		} `json:"appCalls"`
	}
	readRecord(t, recordFile, &rec)
	if len(rec.Results) != 2 || len(rec.AppCalls) != 1 || rec.AppCalls[0].Name != mcpapi.UIAction {
		t.Fatalf("record: %d results, app calls %+v; want generate_ui's and ui_action's", len(rec.Results), rec.AppCalls)
	}
	v := a2uitest.New(t, "v0.9", nil)
	n := 0
	for _, r := range rec.Results {
		if r.IsError || len(r.StructuredContent.Messages) == 0 {
			t.Fatalf("a result without A2UI: %+v", r)
		}
		for _, m := range r.StructuredContent.Messages {
			v.CheckAll(t, m)
			n++
		}
	}
	t.Logf("%d A2UI messages in %d tool results, valid", n, len(rec.Results))
}
