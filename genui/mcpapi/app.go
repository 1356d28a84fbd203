package mcpapi

import (
	"bytes"
	"context"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genuiserver/genui/web"
)

// AppURI is the UI resource generate_ui's results render in: an MCP App.
const AppURI = "ui://genui/surface-v09"

// AppMimeType is an MCP App's MIME type.
const AppMimeType = "text/html;profile=mcp-app"

// appHTML is the app: one self-contained page, its script and styles inline (the host's
// default CSP allows nothing else, and no network), which renders the A2UI of each tool
// result with @a2ui/lit and sends the user's actions back through the host. It is put
// together when first read, not at start-up.
var appHTML = sync.OnceValue(func() string {
	// A script element ends at the first "</script": one inside the script's strings
	// is written "<\/script", the same string in JavaScript.
	script := bytes.ReplaceAll(web.MCPAppScript(), []byte("</script"), []byte(`<\/script`))
	return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>GenUI</title>
<style>
:root { color-scheme: light dark; }
html, body { margin: 0; background: var(--color-background-primary, transparent);
  color: var(--color-text-primary, CanvasText); font-family: var(--font-sans, system-ui, sans-serif);
  font-size: var(--font-text-md-size, 15px); }
main { display: flex; flex-direction: column; gap: 12px; padding: 8px; }
.surface { border-radius: var(--border-radius-lg, 10px); }
#status { margin: 8px; color: var(--color-text-secondary, GrayText); font-size: var(--font-text-sm-size, 13px); }
#status.error { color: var(--color-text-danger, #b3261e); }
#status.busy::before { content: "⏳ "; }
</style>
</head>
<body>
<p id="status" hidden></p>
<main id="surfaces"></main>
<script>
` + string(script) + `
</script>
</body>
</html>
`
})

// addApp registers the app's resource.
func (s *Server) addApp() {
	// The app asks for the user's location when a turn calls get_location; a host may
	// let its frame have it.
	meta := mcp.Meta{"ui": map[string]any{"prefersBorder": false, "permissions": map[string]any{"geolocation": map[string]any{}}}}
	s.mcp.AddResource(&mcp.Resource{
		URI:         AppURI,
		Name:        "genui-surface",
		Title:       "GenUI surface",
		Description: "Shows the A2UI surfaces of generate_ui's results, and sends the user's actions back.",
		MIMEType:    AppMimeType,
		Meta:        meta,
	}, func(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: AppURI, MIMEType: AppMimeType, Text: appHTML(), Meta: meta}}}, nil
	})
}
