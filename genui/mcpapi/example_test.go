package mcpapi_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"

	"github.com/firebase/genkit/go/genkit"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/mcpapi"
	"github.com/genuiserver/genui/genui/offline"
)

// Serving /mcp, and calling generate_ui as an MCP host would, with the built-in offline
// model.
func Example() {
	ctx := context.Background()
	g := genkit.Init(ctx)
	quiet := slog.New(slog.DiscardHandler)
	svc, err := genui.New(g, offline.New(), genui.WithLogger(quiet))
	if err != nil {
		panic(err)
	}
	// The server: the HTTP API, with /mcp behind its middleware stack.
	mcp := mcpapi.New(svc, mcpapi.WithLogger(quiet))
	srv := httptest.NewServer(httpapi.New(svc, httpapi.WithLogger(quiet), httpapi.WithRoutes(mcp.Routes()...)))
	defer srv.Close()

	client := sdk.NewClient(&sdk.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: mcpapi.GenerateUI, Arguments: map[string]any{"prompt": "a sign-up form"}})
	if err != nil {
		panic(err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	fmt.Println(text[:strings.Index(text, ".")+1])
	// Output:
	// Shown to the user: surface "surface-1" (3 A2UI messages).
}
