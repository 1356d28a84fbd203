package mcpapi_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui/mcpapi"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

// BenchmarkTurn measures one A2UI turn (a form written in 20 chunks by a zero-latency
// fake Gemini) as generate_ui over /mcp, next to the same turn over /generateA2ui, each
// on a conversation of its own that the server holds: the client (plain HTTP posts), the
// fake and the server share the process.
func BenchmarkTurn(b *testing.B) {
	fake := fakegemini.New(fakegemini.WithResponder(func(*fakegemini.Request) fakegemini.Reply {
		return fakegemini.Reply{Chunks: fakegemini.TextChunks(a2uitest.FormResponse, 20)}
	}))
	defer fake.Close()
	b.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	b.Setenv("GEMINI_API_KEY", "k")
	svc := servetest.Service(b, servetest.PacedModel)
	srv := servetest.Serve(b, svc, mcpapi.New(svc, mcpapi.WithLogger(servetest.Quiet)).Routes()...)
	client := &http.Client{}
	post := func(b *testing.B, path, body, want string, header map[string]string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(out), want) {
			b.Fatalf("%s", out)
		}
	}
	b.Run("generateA2ui", func(b *testing.B) {
		b.ReportAllocs()
		run := strconv.FormatInt(time.Now().UnixNano(), 36)
		n := 0
		for b.Loop() {
			n++
			post(b, "/generateA2ui", `{"conversationId":"bench-`+run+`-`+strconv.Itoa(n)+`","conversation":[{"role":"user","parts":[{"type":"text","text":"a sign-up form"}]}]}`,
				`"finishReason":"stop"`, nil)
		}
	})
	b.Run("mcp", func(b *testing.B) {
		b.ReportAllocs()
		header := map[string]string{"Accept": "application/json, text/event-stream", "MCP-Protocol-Version": "2025-11-25"}
		for b.Loop() {
			post(b, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"generate_ui","arguments":{"prompt":"a sign-up form"}}}`,
				`"structuredContent"`, header)
		}
	})
	client.CloseIdleConnections()
}
