package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
)

const geminiModel = "googleai/gemini-2.5-flash"

// newGeminiServer serves the API with the real googlegenai plugin talking to a fake
// Gemini endpoint.
func newGeminiServer(t *testing.T, fopts []fakegemini.Option, opts ...genui.Option) (string, *fakegemini.Server) {
	t.Helper()
	return newGeminiServerWith(t, fopts, opts, nil)
}

func newGeminiServerWith(t *testing.T, fopts []fakegemini.Option, opts []genui.Option, hopts []httpapi.Option) (string, *fakegemini.Server) {
	t.Helper()
	fake := fakegemini.New(fopts...)
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	srv, _ := newServerWith(t, geminiModel, opts, hopts)
	return srv.URL, fake
}

var surfaceArgs = map[string]any{
	"surfaceId": "s1",
	"definition": map[string]any{"root": "c", "widgets": []any{
		map[string]any{"id": "c", "widget": map[string]any{"Column": map[string]any{"children": []any{"t"}}}},
		map[string]any{"id": "t", "widget": map[string]any{"Text": map[string]any{"text": "Hi <there> & you"}}},
	}},
}

const surfaceInput = `{"definition":{"root":"c","widgets":[{"id":"c","widget":{"Column":{"children":["t"]}}},{"id":"t","widget":{"Text":{"text":"Hi <there> & you"}}}]},"surfaceId":"s1"}`

func TestGeminiStreamsExactBytesWithOneModelCall(t *testing.T) {
	base, fake := newGeminiServer(t, nil)
	id := startSession(t, base)
	body := `{"data":{"sessionId":"` + id + `","conversation":` + userText("make a UI") + `}}`
	usage := &fakegemini.Usage{PromptTokenCount: 100, CandidatesTokenCount: 20, TotalTokenCount: 120}

	fake.Enqueue(fakegemini.Reply{Chunks: []fakegemini.Chunk{fakegemini.Text("Here you go."), fakegemini.FunctionCall("addOrUpdateSurface", surfaceArgs)}, Usage: usage})
	r := post(t, base+"/generateUi?stream=true", nil, body)
	want := `data: {"message":{"role":"model","index":0,"content":[{"text":"Here you go."}]}}` + "\n\n" +
		`data: {"message":{"role":"model","index":0,"content":[{"toolRequest":{"name":"addOrUpdateSurface","input":` + surfaceInput + `,"ref":"0"}}]}}` + "\n\n" +
		`data: {"result":{"message":{"role":"model","content":[{"text":"Here you go."}]},"finishReason":"stop","usage":{"inputTokens":100,"outputTokens":20,"totalTokens":120,"modelCalls":1,"model":"googleai/gemini-2.5-flash"}}}` + "\n\n"
	if r.status != 200 || r.body != want {
		t.Fatalf("SSE body:\n%s\nwant:\n%s", r.body, want)
	}

	fake.Enqueue(fakegemini.Reply{Chunks: []fakegemini.Chunk{fakegemini.Text("Here you go."), fakegemini.FunctionCall("addOrUpdateSurface", surfaceArgs)}, Usage: usage})
	r = post(t, base+"/generateUi", nil, body)
	want = `{"type":"text","text":"Here you go."}` + "\n" +
		`{"type":"toolRequest","toolRequests":[{"name":"addOrUpdateSurface","input":` + surfaceInput + `}]}` + "\n" +
		`{"type":"result","result":{"message":{"role":"model","content":[{"text":"Here you go."}]},"finishReason":"stop","usage":{"inputTokens":100,"outputTokens":20,"totalTokens":120,"modelCalls":1,"model":"googleai/gemini-2.5-flash"}}}` + "\n"
	if r.status != 200 || r.body != want {
		t.Fatalf("NDJSON body:\n%s\nwant:\n%s", r.body, want)
	}

	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the model was called %d times for 2 turns; want one call per turn", len(reqs))
	}
	// The catalog reaches Gemini as the full JSON Schema of the tool, anyOf included.
	decls := reqs[0].FunctionDeclarations()
	var add *fakegemini.FunctionDeclaration
	for i := range decls {
		if decls[i].Name == "addOrUpdateSurface" {
			add = &decls[i]
		}
	}
	if add == nil || add.ParametersJSONSchema == nil || add.Parameters != nil {
		t.Fatalf("addOrUpdateSurface declaration: %+v", decls)
	}
	b, _ := json.Marshal(add.ParametersJSONSchema)
	if !strings.Contains(string(b), `"anyOf"`) || !strings.Contains(string(b), `"ElevatedButton"`) {
		t.Fatalf("parametersJsonSchema lacks the catalog: %s", b)
	}
	if !strings.Contains(reqs[0].SystemText(), `"ElevatedButton"`) {
		t.Fatalf("system prompt lacks the catalog")
	}
}

func TestGeminiRateLimitIsRetriedBeforeStreaming(t *testing.T) {
	base, fake := newGeminiServer(t, nil, genui.WithRetry(3, 5*time.Second))
	id := startSession(t, base)
	body := `{"data":{"sessionId":"` + id + `","conversation":` + userText("make a UI") + `}}`
	fake.Enqueue(
		fakegemini.ErrorReply(fakegemini.RateLimited(20*time.Millisecond)),
		fakegemini.ErrorReply(fakegemini.Unavailable()),
		fakegemini.Respond(fakegemini.FunctionCall("addOrUpdateSurface", surfaceArgs)),
	)
	r := post(t, base+"/generateUi", nil, body)
	if !strings.Contains(r.body, `{"type":"toolRequest"`) || !strings.Contains(r.body, `"modelCalls":1`) || len(fake.Requests()) != 3 {
		t.Fatalf("after %d model requests: %s", len(fake.Requests()), r.body)
	}
}

func TestGeminiRateLimitIsMapped(t *testing.T) {
	base, fake := newGeminiServer(t, nil, genui.WithRetry(0, 0))
	id := startSession(t, base)
	body := `{"data":{"sessionId":"` + id + `","conversation":` + userText("make a UI") + `}}`

	fake.Enqueue(fakegemini.ErrorReply(fakegemini.RateLimited(2 * time.Second)))
	r := post(t, base+"/generateUi?stream=true", nil, body)
	want := `data: {"error":{"status":"RESOURCE_EXHAUSTED","message":"model error (HTTP 429 RESOURCE_EXHAUSTED): You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.","details":{"retryDelay":"2s"}}}` + "\n\n"
	if r.status != 200 || r.body != want {
		t.Fatalf("SSE:\n%s\nwant:\n%s", r.body, want)
	}

	fake.Enqueue(fakegemini.ErrorReply(fakegemini.RateLimited(2 * time.Second)))
	r = post(t, base+"/generateUi", nil, body)
	if want := `{"type":"error","error":{"status":"RESOURCE_EXHAUSTED",`; !strings.HasPrefix(r.body, want) || strings.Count(r.body, "\n") != 1 {
		t.Fatalf("NDJSON: %s", r.body)
	}

	fake.Enqueue(fakegemini.ErrorReply(fakegemini.RateLimited(2 * time.Second)))
	r = post(t, base+"/generateUi", map[string]string{"Accept": "application/json"}, body)
	if r.status != http.StatusTooManyRequests || !strings.HasPrefix(r.body, `{"error":{"status":"RESOURCE_EXHAUSTED"`) {
		t.Fatalf("JSON: %d %s", r.status, r.body)
	}

	fake.Enqueue(fakegemini.ErrorReply(fakegemini.Unavailable()))
	r = post(t, base+"/generateUi", nil, body)
	if !strings.HasPrefix(r.body, `{"type":"error","error":{"status":"UNAVAILABLE"`) {
		t.Fatalf("503: %s", r.body)
	}
}

func TestGeminiMidStreamErrorEndsTheStream(t *testing.T) {
	base, fake := newGeminiServer(t, nil)
	id := startSession(t, base)
	body := `{"data":{"sessionId":"` + id + `","conversation":` + userText("make a UI") + `}}`
	fake.Enqueue(fakegemini.Reply{
		Chunks:    []fakegemini.Chunk{fakegemini.FunctionCall("addOrUpdateSurface", surfaceArgs), fakegemini.Text("more")},
		MidStream: &fakegemini.MidStreamFailure{After: 1, Err: fakegemini.Unavailable()},
	})
	r := post(t, base+"/generateUi", nil, body)
	lines := strings.Split(strings.TrimSuffix(r.body, "\n"), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], `{"type":"toolRequest"`) || !strings.HasPrefix(lines[1], `{"type":"error","error":{"status":"UNAVAILABLE"`) {
		t.Fatalf("got:\n%s", r.body)
	}
	if len(fake.Requests()) != 1 {
		t.Fatalf("a call that already streamed must not be retried: %d requests", len(fake.Requests()))
	}
}

func TestClientDisconnectCancelsTheModelCallAfterTheGracePeriod(t *testing.T) {
	const grace = 500 * time.Millisecond
	base, fake := newGeminiServerWith(t, []fakegemini.Option{fakegemini.WithLatency(10 * time.Second)}, []genui.Option{genui.WithGrace(grace)}, nil)
	id := startSession(t, base)
	body := `{"data":{"sessionId":"` + id + `","conversation":` + userText("make a UI") + `}}`
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/generateUi?stream=true", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	// Headers arrive before the model answers.
	if res.StatusCode != 200 {
		t.Fatalf("status %d", res.StatusCode)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer wcancel()
	if err := fake.WaitRequests(wctx, 1); err != nil {
		t.Fatal(err)
	}
	cancel()
	res.Body.Close()
	gone := time.Now()
	select {
	case <-fake.Requests()[0].Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the model call was not cancelled after the client went away")
	}
	if waited := time.Since(gone); waited < grace {
		t.Fatalf("cancelled after %v, before the %v grace period", waited, grace)
	}
	if !fake.Requests()[0].Cancelled() {
		t.Fatal("the fake did not see its request cancelled")
	}
}

func TestInvalidSurfaceIsRepairedNotStreamed(t *testing.T) {
	base, fake := newGeminiServer(t, nil)
	id := startSession(t, base)
	body := `{"data":{"sessionId":"` + id + `","conversation":` + userText("make a UI") + `}}`
	bad := map[string]any{"surfaceId": "s1", "definition": map[string]any{"root": "c", "widgets": []any{
		map[string]any{"id": "c", "widget": map[string]any{"Carousel": map[string]any{}}},
	}}}
	fake.Enqueue(
		fakegemini.Respond(fakegemini.FunctionCall("addOrUpdateSurface", bad)),
		fakegemini.Respond(fakegemini.FunctionCall("addOrUpdateSurface", surfaceArgs)),
	)
	r := post(t, base+"/generateUi?stream=true", nil, body)
	if strings.Contains(r.body, "Carousel") || !strings.Contains(r.body, `"index":2,"content":[{"toolRequest":{"name":"addOrUpdateSurface","input":`+surfaceInput) || !strings.Contains(r.body, `"modelCalls":2`) {
		t.Fatalf("got:\n%s", r.body)
	}
	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls", len(reqs))
	}
	fr := reqs[1].FunctionResponses()
	if len(fr) != 1 || fr[0].Response["status"] != "rejected" {
		t.Fatalf("the repair request lacks the violations: %+v", fr)
	}
	feedback, _ := json.Marshal(fr[0].Response["violations"])
	if !strings.Contains(string(feedback), `"pointer":"/definition/widgets/0/widget/Carousel"`) ||
		!strings.Contains(string(feedback), `unknown widget \"Carousel\"; the catalog's widgets are CheckboxGroup, Column`) {
		t.Fatalf("feedback: %s", feedback)
	}

	// Invalid every time: one error event listing the violations, no surface.
	fake.Enqueue(
		fakegemini.Respond(fakegemini.FunctionCall("addOrUpdateSurface", bad)),
		fakegemini.Respond(fakegemini.FunctionCall("addOrUpdateSurface", bad)),
		fakegemini.Respond(fakegemini.FunctionCall("addOrUpdateSurface", bad)),
	)
	r = post(t, base+"/generateUi", nil, body)
	if strings.Count(r.body, "\n") != 1 || !strings.HasPrefix(r.body, `{"type":"error","error":{"status":"FAILED_PRECONDITION"`) || !strings.Contains(r.body, `"violations":[`) {
		t.Fatalf("got:\n%s", r.body)
	}
}

func TestConversationReachesGeminiWellFormed(t *testing.T) {
	base, fake := newGeminiServer(t, nil)
	id := startSession(t, base)
	conv := `[{"role":"user","parts":[{"type":"text","text":"look"},{"type":"image","base64":"aGk=","mimeType":"image/png"}]},
	{"role":"model","parts":[{"type":"text","text":"ok"},{"type":"ui","definition":{"surfaceId":"s1","root":"t","widgets":[{"id":"t","widget":{"Text":{"text":"hi"}}}]}}]},
	{"role":"user","parts":[{"type":"uiEvent","event":{"surfaceId":"s1","widgetId":"f","eventType":"onChanged","value":"x"}},{"type":"uiEvent","event":{"surfaceId":"s1","widgetId":"b","eventType":"onTap","isAction":true,"value":{"f":"x"}}}]}]`
	fake.Enqueue(fakegemini.Respond(fakegemini.FunctionCall("addOrUpdateSurface", surfaceArgs)))
	r := post(t, base+"/generateUi", nil, `{"data":{"sessionId":"`+id+`","conversation":`+conv+`}}`)
	if r.status != 200 || !strings.Contains(r.body, `"type":"result"`) {
		t.Fatalf("%d %s", r.status, r.body)
	}
	var body struct {
		Contents []struct {
			Role  string           `json:"role"`
			Parts []map[string]any `json:"parts"`
		} `json:"contents"`
	}
	if err := json.Unmarshal(fake.Requests()[0].Raw, &body); err != nil {
		t.Fatal(err)
	}
	c := body.Contents
	if len(c) != 4 {
		t.Fatalf("%d contents: %s", len(c), fake.Requests()[0].Raw)
	}
	if c[0].Role != "user" || c[0].Parts[0]["text"] != "look" || c[0].Parts[1]["inlineData"] == nil {
		t.Fatalf("user text+image: %+v", c[0])
	}
	if c[1].Role != "model" || c[1].Parts[0]["text"] != "ok" || c[1].Parts[1]["functionCall"] == nil {
		t.Fatalf("replayed ui part: %+v", c[1])
	}
	if fr, _ := c[2].Parts[0]["functionResponse"].(map[string]any); fr == nil || fr["name"] != "addOrUpdateSurface" {
		t.Fatalf("ui part must be answered by a function response: %+v", c[2])
	}
	text, _ := c[3].Parts[0]["text"].(string)
	if c[3].Role != "user" || len(c[3].Parts) != 1 || !strings.Contains(text, `"widgetId": "f"`) || !strings.Contains(text, `"widgetId": "b"`) {
		t.Fatalf("uiEvents must be one text part: %+v", c[3])
	}
}

func TestClosingMessageIsOptIn(t *testing.T) {
	base, fake := newGeminiServer(t, nil)
	id := startSession(t, base)
	fake.Enqueue(
		fakegemini.Respond(fakegemini.FunctionCall("addOrUpdateSurface", surfaceArgs)),
		fakegemini.Respond(fakegemini.Text("Done.")),
	)
	r := post(t, base+"/generateUi", nil, `{"data":{"sessionId":"`+id+`","closingMessage":true,"conversation":`+userText("make a UI")+`}}`)
	if !strings.Contains(r.body, `{"type":"text","text":"Done."}`) || !strings.Contains(r.body, `"content":[{"text":"Done."}]`) || !strings.Contains(r.body, `"modelCalls":2`) {
		t.Fatalf("%s", r.body)
	}
	if fr := fake.Requests()[1].FunctionResponses(); len(fr) != 1 || fr[0].Response["status"] != "updated" {
		t.Fatalf("second call must carry the tool acknowledgement: %+v", fr)
	}
}

func TestSchemaTooComplexFallsBackToASimplifiedSchema(t *testing.T) {
	base, fake := newGeminiServer(t, nil)
	id := startSession(t, base)
	body := `{"data":{"sessionId":"` + id + `","conversation":` + userText("make a UI") + `}}`
	tooComplex := &fakegemini.APIError{Code: 400, Status: "INVALID_ARGUMENT",
		Message: "The specified schema produces a constraint that has too many states for serving. Typical causes of this error are schemas with lots of text."}
	fake.Enqueue(
		fakegemini.ErrorReply(tooComplex),
		fakegemini.Respond(fakegemini.FunctionCall("addOrUpdateSurface", surfaceArgs)),
		fakegemini.Respond(fakegemini.FunctionCall("addOrUpdateSurface", surfaceArgs)),
	)
	for turn := 0; turn < 2; turn++ {
		r := post(t, base+"/generateUi", nil, body)
		if !strings.Contains(r.body, `{"type":"toolRequest","toolRequests":[{"name":"addOrUpdateSurface","input":`+surfaceInput+`}]}`) {
			t.Fatalf("turn %d: %s", turn, r.body)
		}
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests", len(reqs))
	}
	schemaOf := func(r *fakegemini.Request) string {
		for _, d := range r.FunctionDeclarations() {
			if d.Name == "addOrUpdateSurface" {
				b, _ := json.Marshal(d.ParametersJSONSchema)
				return string(b)
			}
		}
		return ""
	}
	if !strings.Contains(schemaOf(reqs[0]), `"anyOf"`) {
		t.Fatal("the first request must carry the full catalog")
	}
	for i, r := range reqs[1:] {
		s := schemaOf(r)
		if strings.Contains(s, `"anyOf"`) || !strings.Contains(s, "ElevatedButton") {
			t.Fatalf("request %d: want the simplified schema (remembered per catalog), got %s", i+1, s)
		}
		if !strings.Contains(r.SystemText(), `"anyOf"`) {
			t.Fatalf("request %d: the full catalog must stay in the system prompt", i+1)
		}
	}
}
