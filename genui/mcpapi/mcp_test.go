package mcpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/mcpapi"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/leaktest"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

// updateResponse changes the form's title.
const updateResponse = "Done.\n```a2ui\n" +
	`{"updateComponents":{"surfaceId":"form","components":[{"id":"title","component":"Text","text":"Join us today","variant":"h2"}]}}` + "\n```\n"

// newServer serves the API and /mcp over real HTTP, with a model that shows a sign-up
// form when asked for one and changes its title for anything else.
func newServer(t *testing.T) *httptest.Server {
	t.Helper()
	return newPacedServer(t, 10*time.Millisecond)
}

// newPacedServer is newServer with the model writing a chunk every pacing.
func newPacedServer(t *testing.T, pacing time.Duration) *httptest.Server {
	t.Helper()
	fake := fakegemini.New(fakegemini.WithPacing(pacing), fakegemini.WithResponder(func(r *fakegemini.Request) fakegemini.Reply {
		if strings.Contains(r.LastUserText(), "a sign-up form") {
			return fakegemini.Reply{Chunks: fakegemini.TextChunks(a2uitest.FormResponse, 20)}
		}
		return fakegemini.Reply{Chunks: fakegemini.TextChunks(updateResponse, 5)}
	}))
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	svc := servetest.Service(t, servetest.PacedModel)
	return servetest.Serve(t, svc, mcpapi.New(svc, mcpapi.WithLogger(servetest.Quiet)).Routes()...)
}

// connect returns a go-sdk client session with /mcp at protocol version (latest when
// empty), closed when t ends.
func connect(t *testing.T, url, version string, caps *mcp.ClientCapabilities) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect at %q: %v", version, err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// turn is a tool result's structuredContent.
type turn struct {
	ConversationID string            `json:"conversationId"`
	StreamID       string            `json:"streamId"`
	Messages       []json.RawMessage `json:"messages"`
	Text           string            `json:"text"`
}

func call(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, turn) {
	t.Helper()
	return callMeta(t, cs, name, args, nil)
}

func callMeta(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any, meta mcp.Meta) (*mcp.CallToolResult, turn) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Meta: meta, Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var out turn
	if !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("%s: structuredContent %s: %v", name, b, err)
		}
	}
	return res, out
}

func text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// generate_ui at each protocol version: listed with its schema, called, its A2UI valid
// against the official v0.9 schemas, the conversation continued by a second call and by
// the user's action through ui_action.
func TestGenerateUI(t *testing.T) {
	srv := newServer(t)
	for _, version := range []string{"", "2025-11-25", "2025-06-18"} {
		t.Run("version "+version, func(t *testing.T) {
			cs := connect(t, srv.URL, version, nil)
			if version != "" && cs.InitializeResult().ProtocolVersion != version {
				t.Fatalf("negotiated %s", cs.InitializeResult().ProtocolVersion)
			}
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
			}
			if strings.Join(names, ",") != "generate_ui,ui_action,ui_stream,ui_tool_result" {
				t.Fatalf("tools %v", names)
			}
			// generate_ui renders in the app; ui_action and ui_stream are the app's alone.
			if ui, _ := tools.Tools[0].Meta["ui"].(map[string]any); ui["resourceUri"] != mcpapi.AppURI || tools.Tools[0].Meta["ui/resourceUri"] != mcpapi.AppURI {
				t.Fatalf("generate_ui _meta %v", tools.Tools[0].Meta)
			}
			for _, tl := range tools.Tools[1:] {
				if ui, _ := tl.Meta["ui"].(map[string]any); fmt.Sprint(ui["visibility"]) != "[app]" {
					t.Fatalf("%s _meta %v", tl.Name, tl.Meta)
				}
			}
			checkApp(t, cs)
			res, out := call(t, cs, mcpapi.GenerateUI, map[string]any{"prompt": "a sign-up form"})
			if res.IsError || out.ConversationID == "" || out.StreamID == "" || len(out.Messages) < 2 || !strings.Contains(string(out.Messages[0]), `"createSurface"`) {
				t.Fatalf("%s %+v", text(res), out)
			}
			v := a2uitest.New(t, "v0.9", nil)
			for _, m := range out.Messages {
				v.CheckAll(t, m)
			}
			if want := `"form"`; !strings.Contains(text(res), "surface "+want) || !strings.Contains(text(res), out.ConversationID) {
				t.Fatalf("content %q", text(res))
			}
			// The same conversation, continued.
			res2, out2 := call(t, cs, mcpapi.GenerateUI, map[string]any{"prompt": "make it blue", "conversationId": out.ConversationID})
			if res2.IsError || out2.ConversationID != out.ConversationID || out2.StreamID == out.StreamID {
				t.Fatalf("%s %+v", text(res2), out2)
			}
			// The user's action.
			res3, out3 := call(t, cs, mcpapi.UIAction, map[string]any{"conversationId": out.ConversationID, "name": "join",
				"surfaceId": "form", "sourceComponentId": "submit", "context": map[string]any{"email": "a@b.c"}})
			if res3.IsError || out3.ConversationID != out.ConversationID {
				t.Fatalf("%s %+v", text(res3), out3)
			}
			for _, r := range []*mcp.CallToolResult{res, res2, res3} {
				checkOutput(t, tools.Tools, r)
			}
		})
	}
}

// A host that renders A2UI itself gets the messages as an embedded resource too, for
// the user.
func TestNativeA2UIHost(t *testing.T) {
	srv := newServer(t)
	caps := &mcp.ClientCapabilities{Extensions: map[string]any{"io.modelcontextprotocol/ui": map[string]any{
		"mimeTypes": []string{"text/html;profile=mcp-app", mcpapi.A2UIMimeType}}}}
	a2uiMeta := mcp.Meta{"a2ui": map[string]any{"clientCapabilities": map[string]any{"v0.9": map[string]any{"supportedCatalogIds": []string{a2uitest.BasicCatalogID}}}}}
	for _, tc := range []struct {
		version string
		caps    *mcp.ClientCapabilities
		meta    mcp.Meta
	}{
		{"", caps, nil},     // 2026-07-28: its capabilities come with each request
		{"", nil, a2uiMeta}, // A2UI over MCP: the call's _meta
		{"2025-11-25", nil, a2uiMeta},
	} {
		version := tc.version
		cs := connect(t, srv.URL, version, tc.caps)
		res, out := callMeta(t, cs, mcpapi.GenerateUI, map[string]any{"prompt": "a sign-up form"}, tc.meta)
		var found bool
		for _, c := range res.Content {
			er, ok := c.(*mcp.EmbeddedResource)
			if !ok {
				continue
			}
			found = true
			var msgs []json.RawMessage
			if er.Resource.MIMEType != mcpapi.A2UIMimeType || json.Unmarshal([]byte(er.Resource.Text), &msgs) != nil || len(msgs) != len(out.Messages) ||
				er.Annotations == nil || len(er.Annotations.Audience) != 1 || er.Annotations.Audience[0] != "user" {
				t.Fatalf("%s: %+v %+v", version, er.Resource, er.Annotations)
			}
		}
		if !found {
			t.Fatalf("%s: no embedded A2UI for a host that renders it", version)
		}
	}
	// A host that does not gets none.
	res, _ := call(t, connect(t, srv.URL, "", nil), mcpapi.GenerateUI, map[string]any{"prompt": "a sign-up form"})
	for _, c := range res.Content {
		if _, ok := c.(*mcp.EmbeddedResource); ok {
			t.Fatal("embedded A2UI for a host that does not render it")
		}
	}
}

// Bad arguments and unknown handles are tool errors naming the field.
func TestToolErrors(t *testing.T) {
	srv := newServer(t)
	cs := connect(t, srv.URL, "", nil)
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{mcpapi.GenerateUI, map[string]any{}, "prompt"},
		{mcpapi.GenerateUI, map[string]any{"prompt": "  "}, "prompt: must not be empty"},
		{mcpapi.GenerateUI, map[string]any{"prompt": 3}, "prompt"},
		{mcpapi.GenerateUI, map[string]any{"prompt": "x", "conversationId": "nope"}, "conversationId: unknown or expired conversation"},
		{mcpapi.UIAction, map[string]any{"conversationId": "nope", "name": "a", "surfaceId": "s", "sourceComponentId": "c"}, "conversationId: unknown or expired conversation"},
		{mcpapi.UIAction, map[string]any{"conversationId": "nope", "name": "", "surfaceId": "s", "sourceComponentId": "c"}, "name: must not be empty"},
		{mcpapi.UIAction, map[string]any{"conversationId": "c", "name": "a", "surfaceId": "s", "sourceComponentId": "c", "timestamp": "yesterday"}, "timestamp: not an RFC 3339 time"},
	} {
		res, _ := call(t, cs, tc.name, tc.args)
		t.Logf("%s %v: %s", tc.name, tc.args, text(res))
		if !res.IsError || !strings.Contains(text(res), tc.want) {
			t.Errorf("%s %v: isError=%v %q, want %q", tc.name, tc.args, res.IsError, text(res), tc.want)
		}
	}
}

// The endpoint answers GET with 405 (stateless: no standalone stream).
func TestGETIsNotAllowed(t *testing.T) {
	srv := newServer(t)
	res, err := http.Get(srv.URL + "/mcp")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("GET /mcp: %d", res.StatusCode)
	}
}

// keyTransport sends an API key with every request.
type keyTransport string

func (k keyTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+string(k))
	return http.DefaultTransport.RoundTrip(r)
}

// With authentication on, a request without credentials is refused before any MCP work
// (401, WWW-Authenticate); a caller's conversation is unknown to another caller.
func TestAuthentication(t *testing.T) {
	newServer(t) // the model
	authn, _ := servetest.Callers(t)
	svc := servetest.Service(t, servetest.PacedModel)
	srv := servetest.ServeWith(t, svc, []httpapi.Option{httpapi.WithAuth(authn)},
		mcpapi.New(svc, mcpapi.WithLogger(servetest.Quiet)).Routes()...)

	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") || !strings.Contains(string(body), `"jsonrpc":"2.0"`) {
		t.Fatalf("without credentials: %d %q %s", res.StatusCode, res.Header.Get("WWW-Authenticate"), body)
	}
	if _, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true, MaxRetries: -1}, nil); err == nil {
		t.Fatal("connected without credentials")
	}

	as := func(key string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
		cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: srv.URL + "/mcp", DisableStandaloneSSE: true,
			HTTPClient: &http.Client{Transport: keyTransport(key)}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	alice, bob := as(servetest.AliceKey), as(servetest.BobKey)
	res1, out := call(t, alice, mcpapi.GenerateUI, map[string]any{"prompt": "a sign-up form"})
	if res1.IsError {
		t.Fatal(text(res1))
	}
	theirs, _ := call(t, bob, mcpapi.GenerateUI, map[string]any{"prompt": "more", "conversationId": out.ConversationID})
	unknown, _ := call(t, bob, mcpapi.GenerateUI, map[string]any{"prompt": "more", "conversationId": "never-was"})
	if !theirs.IsError || text(theirs) != text(unknown) {
		t.Fatalf("another caller's conversation: %q; an unknown one: %q", text(theirs), text(unknown))
	}
	if res2, _ := call(t, alice, mcpapi.GenerateUI, map[string]any{"prompt": "more", "conversationId": out.ConversationID}); res2.IsError {
		t.Fatalf("the caller's own conversation: %s", text(res2))
	}
}

// checkOutput checks a turn's structuredContent against the output schema its tool
// lists (the server sets it without the SDK's check).
func checkOutput(t *testing.T, tools []*mcp.Tool, res *mcp.CallToolResult) {
	t.Helper()
	var schema jsonschema.Schema
	b, _ := json.Marshal(tools[0].OutputSchema) // every turn tool has the same
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	resolved, err := schema.Resolve(nil)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	b, _ = json.Marshal(res.StructuredContent)
	json.Unmarshal(b, &v)
	if err := resolved.Validate(v); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
}

// checkApp lists and reads the app: one self-contained HTML page under 1 MiB, that loads
// nothing over the network.
func checkApp(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx := context.Background()
	list, err := cs.ListResources(ctx, nil)
	if err != nil || len(list.Resources) != 1 || list.Resources[0].URI != mcpapi.AppURI || list.Resources[0].MIMEType != mcpapi.AppMimeType {
		t.Fatalf("resources: %v %+v", err, list)
	}
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: mcpapi.AppURI})
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("read: %v %+v", err, res)
	}
	c := res.Contents[0]
	if c.MIMEType != mcpapi.AppMimeType || !strings.HasPrefix(c.Text, "<!doctype html>") || len(c.Text) > 1<<20 {
		t.Fatalf("the app: %s, %d bytes", c.MIMEType, len(c.Text))
	}
	for _, remote := range []string{"<script src", "<link", "@import", "url(http", "fetch(", "XMLHttpRequest", "WebSocket("} {
		if strings.Contains(c.Text, remote) {
			t.Errorf("the app contains %q", remote)
		}
	}
	if n := strings.Count(c.Text, "</script>"); n != 1 {
		t.Errorf("%d closing script tags", n)
	}
}

// ui_stream gives the app the A2UI of a generate_ui call while it runs, found by the
// call's arguments: the first message long before the call returns, and in all the
// same messages, in the same order, as the result.
func TestUIStream(t *testing.T) {
	srv := newPacedServer(t, 40*time.Millisecond) // 20 chunks: the turn takes about 0.8 s
	cs := connect(t, srv.URL, "", nil)
	args := map[string]any{"prompt": "a sign-up form"}
	start := time.Now()
	type generated struct {
		res  *mcp.CallToolResult
		out  turn
		took time.Duration
	}
	done := make(chan generated, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpapi.GenerateUI, Arguments: args})
		g := generated{res: res, took: time.Since(start)}
		if err == nil && !res.IsError {
			b, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(b, &g.out)
		}
		done <- g
	}()
	var streamed []json.RawMessage
	var first time.Duration
	cursor := 0
	for polls := 0; ; polls++ {
		if polls > 100 {
			t.Fatal("ui_stream never said the turn was done")
		}
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpapi.UIStream,
			Arguments: map[string]any{"prompt": args["prompt"], "after": cursor, "waitMs": 5000}})
		if err != nil || res.IsError {
			t.Fatalf("ui_stream: %v %s", err, text(res))
		}
		var out struct {
			StreamID string            `json:"streamId"`
			Messages []json.RawMessage `json:"messages"`
			Cursor   int               `json:"cursor"`
			Done     bool              `json:"done"`
		}
		b, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatal(err)
		}
		if len(out.Messages) > 0 && first == 0 {
			first = time.Since(start)
		}
		streamed = append(streamed, out.Messages...)
		cursor = out.Cursor
		if out.Done {
			break
		}
	}
	g := <-done
	if g.res == nil || g.res.IsError || len(g.out.Messages) == 0 {
		t.Fatalf("generate_ui: %+v", g)
	}
	// The result carries the final state of what streamed: each surface once.
	if !sameJSON(mustJSON(a2ui.Final(a2ui.V09, streamed)), mustJSON(g.out.Messages)) {
		t.Fatalf("the result (%d messages) is not the final state of the %d streamed", len(g.out.Messages), len(streamed))
	}
	if first == 0 || first >= g.took {
		t.Fatalf("the first message came at %v, the result at %v", first, g.took)
	}
	t.Logf("first message after %v, the result after %v (%d messages)", first, g.took, len(streamed))

	// Bad arguments name the field.
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"prompt": ""}, "prompt: must not be empty"},
		{map[string]any{"prompt": "x", "after": -1}, "after: must not be negative"},
		{map[string]any{"prompt": "x", "waitMs": 60000}, "waitMs: must be between 0 and 20000"},
	} {
		if res, _ := call(t, cs, mcpapi.UIStream, tc.args); !res.IsError || !strings.Contains(text(res), tc.want) {
			t.Errorf("%v: %q, want %q", tc.args, text(res), tc.want)
		}
	}
	// A call that never runs: nothing, once the wait is over.
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpapi.UIStream, Arguments: map[string]any{"prompt": "never asked", "waitMs": 200}})
	if err != nil || res.IsError || !strings.Contains(text(res), `"messages":[]`) {
		t.Fatalf("a call that never ran: %v %s", err, text(res))
	}
}
