package mcpapi_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"strings"

	"github.com/firebase/genkit/go/genkit"
	"github.com/labstack/echo/v4"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genuiserver/genui/genui"
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
	e := echo.New()
	mcpapi.New(svc, mcpapi.WithLogger(quiet)).Register(e)
	srv := httptest.NewServer(e)
	defer srv.Close()

	client := mcp.NewClient(&mcp.Implementation{Name: "host", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	if err != nil {
		panic(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpapi.GenerateUI, Arguments: map[string]any{"prompt": "a sign-up form"}})
	if err != nil {
		panic(err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	fmt.Println(text[:strings.Index(text, ".")+1])
	// Output:
	// Shown to the user: surface "surface-1" (3 A2UI messages).
}
