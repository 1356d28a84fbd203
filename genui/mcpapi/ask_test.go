package mcpapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
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

// newAskServer serves /mcp with a model that, asked to book a table, shows the surface's
// title and asks the user how many people come, then shows the answer (or "not given").
func newAskServer(t *testing.T) (string, *declared) {
	t.Helper()
	d := &declared{}
	fake := fakegemini.New(fakegemini.WithResponder(func(r *fakegemini.Request) fakegemini.Reply {
		d.add(r)
		if res := r.FunctionResponses(); len(res) > 0 {
			b, _ := json.Marshal(res[0].Response)
			shown := "not given"
			var v struct {
				Output struct {
					Answer string `json:"answer"`
				} `json:"output"`
			}
			if json.Unmarshal(b, &v) == nil && v.Output.Answer != "" {
				shown = v.Output.Answer
			} else if i := strings.Index(string(b), `"answer":"`); i >= 0 {
				shown = strings.SplitN(string(b)[i+len(`"answer":"`):], `"`, 2)[0]
			}
			return fakegemini.Respond(fakegemini.Text("Booked.\n```a2ui\n" +
				`{"updateComponents":{"surfaceId":"table","components":[{"id":"guests","component":"Text","text":` + strconv.Quote("Guests: "+shown) + `},` +
				`{"id":"root","component":"Column","children":["title","guests"]}]}}` + "\n```\n"))
		}
		if strings.Contains(r.LastUserText(), "book me a table") {
			return fakegemini.Respond(fakegemini.Text("Let me ask.\n```a2ui\n"+
				`{"createSurface":{"surfaceId":"table","catalogId":"`+a2uitest.BasicCatalogID+`"}}`+"\n"+
				`{"updateComponents":{"surfaceId":"table","components":[{"id":"root","component":"Column","children":["title"]},{"id":"title","component":"Text","text":"Your table","variant":"h2"}]}}`+"\n```\n"),
				fakegemini.FunctionCall(mcpapi.AskUser, map[string]any{"question": "For how many people?", "choices": []any{"2", "4"}}))
		}
		return fakegemini.Reply{Chunks: fakegemini.TextChunks(a2uitest.FormResponse, 5)}
	}))
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	svc := servetest.Service(t, servetest.PacedModel)
	return servetest.Serve(t, svc, mcpapi.New(svc, mcpapi.WithLogger(servetest.Quiet)).Routes()...).URL, d
}

// elicitor is a client that answers the server's questions as answer says.
type elicitor struct {
	mu    sync.Mutex
	asked []*mcp.ElicitParams
}

func (e *elicitor) connect(t *testing.T, url, version string, answer func(*mcp.ElicitParams) *mcp.ElicitResult, mrtr bool) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, &mcp.ClientOptions{
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			e.mu.Lock()
			e.asked = append(e.asked, req.Params)
			e.mu.Unlock()
			return answer(req.Params), nil
		},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: !mrtr},
	})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "/mcp", DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return cs
}

// A 2026-07-28 client that elicits: the model's question goes to the user as an input
// request of the generate_ui call, the SDK retries the call with the answer, and the
// result carries the A2UI of both rounds, each message once.
func TestAskUser(t *testing.T) {
	url, d := newAskServer(t)
	for _, tc := range []struct {
		name   string
		answer *mcp.ElicitResult
		want   string
	}{
		{"accept", &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "4"}}, "Guests: 4"},
		{"decline", &mcp.ElicitResult{Action: "decline"}, "Guests: not given"},
		{"cancel", &mcp.ElicitResult{Action: "cancel"}, "Guests: not given"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := &elicitor{}
			cs := e.connect(t, url, "", func(*mcp.ElicitParams) *mcp.ElicitResult { return tc.answer }, true)
			res, out := toolCall(t, cs, mcpapi.GenerateUI, map[string]any{"prompt": "book me a table"})
			if res.IsError {
				t.Fatal(text(res))
			}
			if !slices.Contains(d.last(), mcpapi.AskUser) {
				t.Fatalf("the model got %v", d.last())
			}
			if len(e.asked) != 1 || e.asked[0].Message != "For how many people?" {
				t.Fatalf("asked %+v", e.asked)
			}
			schema, _ := json.Marshal(e.asked[0].RequestedSchema)
			if !strings.Contains(string(schema), `"enum":["2","4"]`) {
				t.Fatalf("requested schema %s", schema)
			}
			// The result carries the surface once, in its final state.
			if len(out.ToolCalls) != 0 || len(out.Messages) != 2 || !strings.Contains(string(out.Messages[0]), `"createSurface"`) ||
				!strings.Contains(string(out.Messages[1]), tc.want) {
				t.Fatalf("result %+v", out)
			}
			v := a2uitest.New(t, "v0.9", nil)
			for _, m := range out.Messages {
				v.CheckAll(t, m)
			}
			if !strings.Contains(text(res), `surface "table"`) || !strings.Contains(text(res), "(2 A2UI messages)") {
				t.Fatalf("text %q", text(res))
			}
		})
	}
}

// The input-required result on the wire, and the retry's checks: a state this server did
// not give, or whose turn is not the caller's, and answers that are not elicitation
// results are tool errors naming the field.
func TestAskUserByHand(t *testing.T) {
	url, _ := newAskServer(t)
	e := &elicitor{}
	cs := e.connect(t, url, "", nil, false)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	args := map[string]any{"prompt": "book me a table"}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpapi.GenerateUI, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if !res.NeedsInput() || len(res.InputRequests) != 1 || res.RequestState == "" || len(res.Content) != 0 || res.StructuredContent != nil {
		t.Fatalf("result %+v", res)
	}
	var callID string
	for id, r := range res.InputRequests {
		if ep, ok := r.(*mcp.ElicitParams); !ok || ep.Message != "For how many people?" {
			t.Fatalf("input request %T %+v", r, r)
		}
		callID = id
	}
	accept := mcp.InputResponseMap{callID: &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "2"}}}
	forged, _ := json.Marshal(map[string]any{"c": "conv-12345678", "s": []string{"not-a-stream-of-yours"}})
	for _, tc := range []struct {
		state     string
		responses mcp.InputResponseMap
		want      string
	}{
		{"not base64!", accept, "requestState: not a state this server gave"},
		{base64.RawURLEncoding.EncodeToString(forged), accept, "requestState: unknown or expired"},
		{res.RequestState, nil, "inputResponses: required"},
		{res.RequestState, mcp.InputResponseMap{callID: &mcp.ListRootsResult{}}, fmt.Sprintf("inputResponses[%q]: not the result of an elicitation", callID)},
		{res.RequestState, mcp.InputResponseMap{"other-call": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "2"}}}, "inputResponses"},
	} {
		r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpapi.GenerateUI, Arguments: args, RequestState: tc.state, InputResponses: tc.responses})
		if err != nil {
			t.Fatalf("%s: %v", tc.want, err)
		}
		if !r.IsError || !strings.Contains(text(r), tc.want) {
			t.Errorf("state %q: %v %q, want %q", tc.state, r.IsError, text(r), tc.want)
		}
	}
	r, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: mcpapi.GenerateUI, Arguments: args, RequestState: res.RequestState, InputResponses: accept})
	if err != nil || r.IsError || r.NeedsInput() {
		t.Fatalf("%v %+v", err, r)
	}
	if !strings.Contains(text(r), "(2 A2UI messages)") {
		t.Fatalf("text %q", text(r))
	}
}

// Clients of earlier revisions get no ask_user, even when they elicit: the server is
// stateless and their revisions have no input requests.
func TestNoAskUserBefore2026(t *testing.T) {
	url, d := newAskServer(t)
	e := &elicitor{}
	cs := e.connect(t, url, "2025-11-25", func(*mcp.ElicitParams) *mcp.ElicitResult { return &mcp.ElicitResult{Action: "cancel"} }, true)
	toolCall(t, cs, mcpapi.GenerateUI, map[string]any{"prompt": "a sign-up form"})
	if slices.Contains(d.last(), mcpapi.AskUser) {
		t.Fatalf("the model got %v", d.last())
	}
}
