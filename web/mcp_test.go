package web_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/gemini"
	"github.com/genuiserver/genui/genui/mcpapi"
	"github.com/genuiserver/genui/genui/transport"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/servetest"
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
	srv := newE2EServer(t, b.e2e, &seen, func(svc *genui.Service) []transport.Route {
		return mcpapi.New(svc, mcpapi.WithLogger(quiet)).Routes()
	})
	// A model that pauses mid-surface, for the surface growing in the app; one that asks
	// the app for the user's context and location first.
	slowSrv := mcpServerOn(t, slowA2UI)
	toolSrv := mcpServerOn(t, appToolModel)
	recordFile := filepath.Join(t.TempDir(), "mcp-record.json")

	b.run(t, "mcp.test.mjs", "GENUI_URL="+srv.URL+"/", "GENUI_SLOW_URL="+slowSrv.URL+"/", "GENUI_TOOLS_URL="+toolSrv.URL+"/", "MCP_RECORD="+recordFile)

	var rec struct {
		Results []struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Messages  []json.RawMessage `json:"messages"`
				ToolCalls []json.RawMessage `json:"toolCalls"`
			} `json:"structuredContent"`
		} `json:"results"`
		AppCalls []struct {
			Name string `json:"name"`
		} `json:"appCalls"`
		Timing struct {
			FirstComponentMs int `json:"firstComponentMs"`
			ResultMs         int `json:"resultMs"`
		} `json:"timing"`
	}
	readRecord(t, recordFile, &rec)
	actions := 0
	for _, c := range rec.AppCalls {
		switch c.Name {
		case mcpapi.UIAction:
			actions++
		case mcpapi.UIStream, mcpapi.UIToolResult:
		default:
			t.Errorf("the app called %s", c.Name)
		}
	}
	if len(rec.Results) != 6 || actions != 1 {
		t.Fatalf("record: %d results, %d actions; want generate_ui's three times, ui_action's and ui_tool_result's twice", len(rec.Results), actions)
	}
	if rec.Timing.FirstComponentMs == 0 || rec.Timing.FirstComponentMs >= rec.Timing.ResultMs {
		t.Fatalf("the first component showed after %d ms, generate_ui returned after %d ms", rec.Timing.FirstComponentMs, rec.Timing.ResultMs)
	}
	t.Logf("the first component showed in the app after %d ms, generate_ui returned after %d ms", rec.Timing.FirstComponentMs, rec.Timing.ResultMs)
	v := a2uitest.New(t, "v0.9", nil)
	n := 0
	for _, r := range rec.Results {
		if r.IsError || (len(r.StructuredContent.Messages) == 0 && len(r.StructuredContent.ToolCalls) == 0) {
			t.Fatalf("a result without A2UI: %+v", r)
		}
		for _, m := range r.StructuredContent.Messages {
			v.CheckAll(t, m)
			n++
		}
	}
	t.Logf("%d A2UI messages in %d tool results, valid", n, len(rec.Results))
}

// mcpServerOn serves /mcp on a Gemini model that answers as responder.
func mcpServerOn(t *testing.T, responder fakegemini.Responder) *httptest.Server {
	t.Helper()
	fake := fakegemini.New(fakegemini.WithResponder(responder))
	t.Cleanup(fake.Close)
	m, err := gemini.New(context.Background(), gemini.Config{Name: "googleai/gemini-2.5-flash", APIKey: "test-key", BaseURL: fake.URL(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := genui.New(genkit.Init(context.Background()), m, genui.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	return servetest.Serve(t, svc, mcpapi.New(svc, mcpapi.WithLogger(quiet)).Routes()...)
}

var (
	timeZoneRE = regexp.MustCompile(`"timeZone":"([^"]*)"`)
	errorRE    = regexp.MustCompile(`"error":"([^"]*)"`)
)

// appToolModel asks the app for the user's context, then for their location, then shows
// what it got: the time zone and the location's error (a sandboxed frame has none).
func appToolModel(req *fakegemini.Request) fakegemini.Reply {
	var got []fakegemini.FunctionResponse
	for _, c := range req.Contents() {
		for _, p := range c.Parts {
			if p.FunctionResponse != nil {
				got = append(got, *p.FunctionResponse)
			}
		}
	}
	switch len(got) {
	case 0:
		return fakegemini.Respond(fakegemini.FunctionCall("get_user_context", nil))
	case 1:
		return fakegemini.Respond(fakegemini.FunctionCall("get_location", nil))
	}
	ctx, _ := json.Marshal(got[0].Response)
	loc, _ := json.Marshal(got[1].Response)
	tz, where := "unknown", "known"
	if m := timeZoneRE.FindSubmatch(ctx); m != nil {
		tz = string(m[1])
	}
	if m := errorRE.FindSubmatch(loc); m != nil {
		where = "not given"
	}
	return fakegemini.Respond(fakegemini.Text("Here is your day.\n```a2ui\n" +
		`{"createSurface":{"surfaceId":"day","catalogId":"` + a2uitest.BasicCatalogID + `"}}` + "\n" +
		`{"updateComponents":{"surfaceId":"day","components":[{"id":"root","component":"Column","children":["tz","where"]},` +
		`{"id":"tz","component":"Text","text":` + strconv.Quote("Your time zone: "+tz) + `},` +
		`{"id":"where","component":"Text","text":` + strconv.Quote("Your location: "+where) + `}]}}` + "\n```\n"))
}
