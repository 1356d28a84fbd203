package mcpapi_test

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genuiserver/genui/genui/mcpapi"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

// appCaps are the capabilities of a host that shows MCP Apps.
var appCaps = &mcp.ClientCapabilities{Extensions: map[string]any{"io.modelcontextprotocol/ui": map[string]any{
	"mimeTypes": []string{mcpapi.AppMimeType}}}}

var timeZoneRE = regexp.MustCompile(`"timeZone":"([^"]*)"`)

// declared records the functions of each model request.
type declared struct {
	mu  sync.Mutex
	all [][]string
}

func (d *declared) add(r *fakegemini.Request) {
	var names []string
	for _, f := range r.FunctionDeclarations() {
		names = append(names, f.Name)
	}
	d.mu.Lock()
	d.all = append(d.all, names)
	d.mu.Unlock()
}

func (d *declared) last() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.all[len(d.all)-1]
}

// newToolServer serves /mcp with a model that asks the app for the user's context when
// asked for "my day", and then shows their time zone (or the error the app gave).
func newToolServer(t *testing.T, opts ...mcpapi.Option) (*mcpServer, *declared) {
	t.Helper()
	d := &declared{}
	fake := fakegemini.New(fakegemini.WithResponder(func(r *fakegemini.Request) fakegemini.Reply {
		d.add(r)
		res := r.FunctionResponses()
		if strings.Contains(r.LastUserText(), "go on") {
			// The user went on: the calls were answered just before.
			for _, c := range r.Contents() {
				for _, p := range c.Parts {
					if p.FunctionResponse != nil {
						res = []fakegemini.FunctionResponse{*p.FunctionResponse}
					}
				}
			}
		}
		if len(res) > 0 {
			b, _ := json.Marshal(res[0].Response)
			shown := "unknown"
			if m := timeZoneRE.FindSubmatch(b); m != nil {
				shown = string(m[1])
			} else if strings.Contains(string(b), "error") {
				shown = "not given"
			}
			return fakegemini.Respond(fakegemini.Text("Here is your day.\n```a2ui\n" +
				`{"createSurface":{"surfaceId":"day","catalogId":"` + a2uitest.BasicCatalogID + `"}}` + "\n" +
				`{"updateComponents":{"surfaceId":"day","components":[{"id":"root","component":"Text","text":` + strconv.Quote("Your time zone: "+shown) + `}]}}` + "\n```\n"))
		}
		if strings.Contains(r.LastUserText(), "my day") {
			return fakegemini.Respond(fakegemini.FunctionCall("get_user_context", nil))
		}
		return fakegemini.Reply{Chunks: fakegemini.TextChunks(a2uitest.FormResponse, 5)}
	}))
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	svc := servetest.Service(t, servetest.PacedModel)
	m := mcpapi.New(svc, append([]mcpapi.Option{mcpapi.WithLogger(servetest.Quiet)}, opts...)...)
	return &mcpServer{URL: servetest.Serve(t, svc, m.Routes()...).URL}, d
}

type mcpServer struct{ URL string }

type toolTurn struct {
	turn
	ToolCalls []struct {
		CallID string          `json:"callId"`
		Name   string          `json:"name"`
		Input  json.RawMessage `json:"input"`
	} `json:"toolCalls"`
}

func toolCall(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (*mcp.CallToolResult, toolTurn) {
	t.Helper()
	res, _ := call(t, cs, name, args)
	var out toolTurn
	if !res.IsError {
		b, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(b, &out)
	}
	return res, out
}

// A turn that calls one of the app's tools ends with the call in its result; the
// conversation waits for it holding nothing but its stored state, and the app's answer
// through ui_tool_result continues it, on any revision.
func TestAppTools(t *testing.T) {
	srv, d := newToolServer(t)
	for _, tc := range []struct {
		version string
		caps    *mcp.ClientCapabilities
	}{{"", appCaps}, {"2025-11-25", nil}} {
		t.Run("version "+tc.version, func(t *testing.T) {
			cs := connect(t, srv.URL, tc.version, tc.caps)
			res, out := toolCall(t, cs, mcpapi.GenerateUI, map[string]any{"prompt": "plan my day"})
			if res.IsError {
				t.Fatal(text(res))
			}
			if names := d.last(); !slices.Contains(names, "get_user_context") || !slices.Contains(names, "get_location") {
				t.Fatalf("the model got %v", names)
			}
			if len(out.ToolCalls) != 1 || out.ToolCalls[0].Name != "get_user_context" || out.ToolCalls[0].CallID == "" || string(out.ToolCalls[0].Input) != "{}" {
				t.Fatalf("toolCalls %+v", out.ToolCalls)
			}
			if !strings.Contains(text(res), "waits for the app showing it to answer get_user_context") {
				t.Fatalf("the model was told %q", text(res))
			}
			tools, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			checkOutput(t, tools.Tools, res)
			c := out.ToolCalls[0]
			// Waiting, the conversation refuses a result for no call of its own.
			bad, _ := toolCall(t, cs, mcpapi.UIToolResult, map[string]any{"conversationId": out.ConversationID,
				"results": []any{map[string]any{"callId": "nope", "name": c.Name, "output": map[string]any{}}}})
			if !bad.IsError || !strings.HasPrefix(text(bad), "results[0].callId:") {
				t.Fatalf("a result for no call: %q", text(bad))
			}
			res, next := toolCall(t, cs, mcpapi.UIToolResult, map[string]any{"conversationId": out.ConversationID,
				"results": []any{map[string]any{"callId": c.CallID, "name": c.Name,
					"output": map[string]any{"locale": "fr-FR", "timeZone": "Europe/Paris", "now": "2026-12-07T10:00:00+01:00"}}}})
			if res.IsError {
				t.Fatal(text(res))
			}
			if next.ConversationID != out.ConversationID || len(next.ToolCalls) != 0 || len(next.Messages) != 2 ||
				!strings.Contains(string(next.Messages[1]), "Your time zone: Europe/Paris") {
				t.Fatalf("after the result: %+v", next)
			}
			v := a2uitest.New(t, "v0.9", nil)
			for _, m := range next.Messages {
				v.CheckAll(t, m)
			}
			// The call is answered: a second answer is refused.
			again, _ := toolCall(t, cs, mcpapi.UIToolResult, map[string]any{"conversationId": out.ConversationID,
				"results": []any{map[string]any{"callId": c.CallID, "name": c.Name, "error": "again"}}})
			if !again.IsError || !strings.HasPrefix(text(again), "results[0].callId:") {
				t.Fatalf("a second answer: %q", text(again))
			}
		})
	}
}

// An error the app gives goes to the model, which goes on without what it asked for.
func TestAppToolError(t *testing.T) {
	srv, _ := newToolServer(t)
	cs := connect(t, srv.URL, "", appCaps)
	_, out := toolCall(t, cs, mcpapi.GenerateUI, map[string]any{"prompt": "plan my day"})
	if len(out.ToolCalls) != 1 {
		t.Fatalf("%+v", out)
	}
	res, next := toolCall(t, cs, mcpapi.UIToolResult, map[string]any{"conversationId": out.ConversationID,
		"results": []any{map[string]any{"callId": out.ToolCalls[0].CallID, "name": "get_user_context", "error": "the host gave no context"}}})
	if res.IsError || len(next.Messages) != 2 || !strings.Contains(string(next.Messages[1]), "Your time zone: not given") {
		t.Fatalf("%q %+v", text(res), next)
	}
}

// A new prompt while the conversation waits answers the calls "not answered", as a host
// without the app does when the model goes on.
func TestAppToolsWithoutTheApp(t *testing.T) {
	srv, _ := newToolServer(t)
	cs := connect(t, srv.URL, "2025-11-25", nil)
	_, out := toolCall(t, cs, mcpapi.GenerateUI, map[string]any{"prompt": "plan my day"})
	if len(out.ToolCalls) != 1 {
		t.Fatalf("%+v", out)
	}
	res, next := toolCall(t, cs, mcpapi.GenerateUI, map[string]any{"prompt": "go on without it", "conversationId": out.ConversationID})
	if res.IsError || len(next.ToolCalls) != 0 || !strings.Contains(string(next.Messages[len(next.Messages)-1]), "Your time zone: not given") {
		t.Fatalf("%q %+v", text(res), next)
	}
}

// A 2026-07-28 host that says it shows no MCP Apps, or a server without app tools,
// gives the model none.
func TestNoAppTools(t *testing.T) {
	srv, d := newToolServer(t)
	noApps := &mcp.ClientCapabilities{Extensions: map[string]any{"io.modelcontextprotocol/ui": map[string]any{"mimeTypes": []string{mcpapi.A2UIMimeType}}}}
	for _, caps := range []*mcp.ClientCapabilities{nil, noApps} {
		res, out := toolCall(t, connect(t, srv.URL, "", caps), mcpapi.GenerateUI, map[string]any{"prompt": "a sign-up form"})
		if res.IsError || len(out.ToolCalls) != 0 || len(d.last()) != 0 {
			t.Fatalf("caps %v: the model got %v", caps, d.last())
		}
	}
	off, d2 := newToolServer(t, mcpapi.WithoutAppTools())
	toolCall(t, connect(t, off.URL, "2025-11-25", nil), mcpapi.GenerateUI, map[string]any{"prompt": "a sign-up form"})
	if len(d2.last()) != 0 {
		t.Fatalf("WithoutAppTools: the model got %v", d2.last())
	}
}

// ui_tool_result's arguments are checked, each problem naming its field.
func TestToolResultErrors(t *testing.T) {
	srv, _ := newToolServer(t)
	cs := connect(t, srv.URL, "", appCaps)
	_, out := toolCall(t, cs, mcpapi.GenerateUI, map[string]any{"prompt": "plan my day"})
	id := out.ConversationID
	for _, tc := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"conversationId": "", "results": []any{map[string]any{"callId": "a", "name": "b", "output": 1}}}, "conversationId: must not be empty"},
		{map[string]any{"conversationId": id}, "results"},
		{map[string]any{"conversationId": id, "results": []any{}}, "results"},
		{map[string]any{"conversationId": id, "results": []any{map[string]any{"callId": "", "name": "b", "output": 1}}}, "results[0].callId: must not be empty"},
		{map[string]any{"conversationId": id, "results": []any{map[string]any{"callId": "a", "name": " ", "output": 1}}}, "results[0].name: must not be empty"},
		{map[string]any{"conversationId": id, "results": []any{map[string]any{"callId": "a", "name": "b"}}}, "results[0].output: required"},
		{map[string]any{"conversationId": id, "results": []any{map[string]any{"callId": "a", "name": "b", "output": 1, "error": "x"}}}, "results[0]: give either output or error"},
		{map[string]any{"conversationId": id, "results": []any{map[string]any{"callId": out.ToolCalls[0].CallID, "name": "get_location", "output": 1}}}, "results[0].name:"},
		{map[string]any{"conversationId": "never-was", "results": []any{map[string]any{"callId": "a", "name": "b", "output": 1}}}, "conversationId: unknown or expired conversation"},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpapi.UIToolResult, Arguments: tc.args})
		cancel()
		var got string
		if err != nil {
			got = err.Error()
		} else if res.IsError {
			got = text(res)
		}
		if !strings.Contains(got, tc.want) {
			t.Errorf("%v: %q, want %q", tc.args, got, tc.want)
		}
	}
}
