package genui_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/schemas"
)

var locationTool = schemas.ClientTool{
	Name:        "getLocation",
	Description: "The user's city.",
	InputSchema: schemas.Object(`{"type":"object","properties":{"precise":{"type":"boolean"}},"required":["precise"]}`),
}

func callPart(name string, input map[string]any) *ai.Part {
	return ai.NewToolRequestPart(&ai.ToolRequest{Name: name, Input: input})
}

var surfacePart = callPart("addOrUpdateSurface", map[string]any{"surfaceId": "s1", "definition": map[string]any{
	"root": "t", "widgets": []any{map[string]any{"id": "t", "widget": map[string]any{"Text": map[string]any{"text": "Looking…"}}}}}})

// collectItems runs a streamed genui turn and returns its items.
func collectItems(t *testing.T, svc *genui.Service, req *schemas.GenerateRequest) []genui.Item {
	t.Helper()
	st, err := svc.Stream(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	return readAll(t, st)
}

func resultOf(t *testing.T, it genui.Item) schemas.Result {
	t.Helper()
	if it.Result == nil {
		t.Fatalf("the stream ended with %+v", it.Err)
	}
	var r schemas.Result
	if err := json.Unmarshal(it.Result, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// A call of a client tool comes after what the response showed, and ends the turn
// interrupted, listing the call.
func TestClientToolCallEndsTheTurn(t *testing.T) {
	m := &script{calls: []scripted{{parts: []*ai.Part{
		ai.NewTextPart("Let me look."),
		callPart("getLocation", map[string]any{"precise": true}),
		surfacePart,
	}}}}
	svc := newService(t, m)
	req := request(t)
	req.ClientTools = []schemas.ClientTool{locationTool}
	items := collectItems(t, svc, req)
	if len(items) != 4 {
		t.Fatalf("%d items: %+v", len(items), items)
	}
	if items[0].Event.Type != schemas.EventText || items[1].Event.Type != schemas.EventToolRequest || items[2].Event.Type != schemas.EventToolCall {
		t.Fatalf("order: %s %s %s", items[0].Event.Type, items[1].Event.Type, items[2].Event.Type)
	}
	tc := items[2].Event.ToolCall
	if tc.Name != "getLocation" || string(tc.Input) != `{"precise":true}` || len(tc.CallID) != 22 {
		t.Fatalf("call %+v", tc)
	}
	r := resultOf(t, items[3])
	b, _ := json.Marshal(r.Message.Content)
	want := `[{"text":"Let me look."},{"toolRequest":{"name":"getLocation","input":{"precise":true},"ref":"` + tc.CallID + `"},"metadata":{"interrupt":true}}]`
	if r.FinishReason != "interrupted" || string(b) != want {
		t.Fatalf("result %s %s\nwant %s", r.FinishReason, b, want)
	}
	// The model got the client tool beside the UI tools.
	if ct := m.reqs[0].ClientTools; ct == nil || len(ct.Tools) != 1 || ct.Tools[0].Name != "getLocation" || m.reqs[0].Tools == nil {
		t.Fatalf("model request tools: %+v %+v", m.reqs[0].Tools, ct)
	}
}

// Several calls in one response are all pending; a model's signature comes back with
// the first call.
func TestSeveralCallsInOneResponse(t *testing.T) {
	signed := ai.NewTextPart("Two things.")
	signed.Metadata = map[string]any{genui.SignatureKey: []byte("sig")}
	m := &script{calls: []scripted{{parts: []*ai.Part{
		signed,
		callPart("getLocation", map[string]any{"precise": false}),
		callPart("confirm", map[string]any{}),
	}}}}
	svc := newService(t, m)
	req := request(t)
	req.ClientTools = []schemas.ClientTool{locationTool, {Name: "confirm"}}
	items := collectItems(t, svc, req)
	var calls []*schemas.ToolCall
	for _, it := range items {
		if it.Event != nil && it.Event.ToolCall != nil {
			calls = append(calls, it.Event.ToolCall)
		}
	}
	if len(calls) != 2 || calls[0].Name != "getLocation" || calls[1].Name != "confirm" || calls[0].CallID == calls[1].CallID {
		t.Fatalf("calls %+v", calls)
	}
	if calls[0].Signature != "c2ln" || calls[1].Signature != "" {
		t.Fatalf("signatures %q %q", calls[0].Signature, calls[1].Signature)
	}
	if r := resultOf(t, items[len(items)-1]); r.FinishReason != "interrupted" || len(r.Message.Content) != 3 {
		t.Fatalf("result %+v", r)
	}
}

// An invalid input goes back to the model, as an invalid surface does; a valid call of
// the same response does not reach the client, and the model is told so.
func TestInvalidToolInputIsRepaired(t *testing.T) {
	m := &script{calls: []scripted{
		{parts: []*ai.Part{callPart("getLocation", map[string]any{"precise": "yes"}), callPart("confirm", map[string]any{})}},
		{parts: []*ai.Part{callPart("getLocation", map[string]any{"precise": true}), callPart("confirm", map[string]any{})}},
	}}
	svc := newService(t, m)
	req := request(t)
	req.ClientTools = []schemas.ClientTool{locationTool, {Name: "confirm"}}
	items := collectItems(t, svc, req)
	n := 0
	for _, it := range items {
		if it.Event != nil && it.Event.ToolCall != nil {
			n++
			if it.Event.Index != 2 {
				t.Fatalf("a call of the rejected response reached the client: %+v", it.Event)
			}
		}
	}
	r := resultOf(t, items[len(items)-1])
	if n != 2 || r.FinishReason != "interrupted" || r.Usage.ModelCalls != 2 {
		t.Fatalf("%d calls, result %+v", n, r)
	}
	answer := m.reqs[1].Messages[len(m.reqs[1].Messages)-1]
	b, _ := json.Marshal(answer)
	if answer.Role != ai.RoleTool || len(answer.Content) != 2 ||
		!strings.Contains(string(b), `"status":"rejected"`) || !strings.Contains(string(b), `/precise`) || !strings.Contains(string(b), `"status":"not-run"`) {
		t.Fatalf("the repair request: %s", b)
	}
}

// A continuation: the model sees its call and the client's result, paired, the UI tool
// requests of the same message answered beside it; the turn goes on without the request
// declaring the tool again.
func TestContinuationPairsCallsAndResults(t *testing.T) {
	m := &script{calls: []scripted{{parts: texts("You are in Berlin.")}}}
	svc := newService(t, m)
	req := request(t)
	req.Conversation = append(req.Conversation,
		schemas.Message{Role: "model", Parts: []schemas.Part{
			{Type: "text", Text: "Let me look."},
			{Type: "ui", Definition: &schemas.SurfaceDefinition{SurfaceID: "s1", Root: "t", Widgets: []map[string]any{{"id": "t", "widget": map[string]any{"Text": map[string]any{"text": "…"}}}}}},
			{Type: "toolCall", CallID: "c-1", Name: "getLocation", Input: schemas.Object(`{"precise":true}`), Signature: "c2ln"},
			{Type: "toolCall", CallID: "c-2", Name: "confirm"},
		}},
		schemas.Message{Role: "user", Parts: []schemas.Part{
			{Type: "toolResult", CallID: "c-2", Name: "confirm", Error: "the user said no"},
			{Type: "toolResult", CallID: "c-1", Name: "getLocation", Output: json.RawMessage(`{"city":"Berlin"}`)},
		}})
	items := collectItems(t, svc, req)
	if r := resultOf(t, items[len(items)-1]); r.FinishReason != "stop" {
		t.Fatalf("result %+v", r)
	}
	msgs := m.reqs[0].Messages
	if len(msgs) != 3 {
		t.Fatalf("%d model messages", len(msgs))
	}
	model, tool := msgs[1], msgs[2]
	var names []string
	for _, p := range model.Content {
		if p.IsToolRequest() {
			names = append(names, p.ToolRequest.Name+"/"+p.ToolRequest.Ref)
		}
	}
	if strings.Join(names, " ") != "addOrUpdateSurface/history-1-1 getLocation/c-1 confirm/c-2" {
		t.Fatalf("calls %v", names)
	}
	if sig, _ := model.Content[2].Metadata[genui.SignatureKey].([]byte); string(sig) != "sig" {
		t.Fatalf("signature %v", model.Content[2].Metadata)
	}
	b, _ := json.Marshal(tool)
	want := `{"content":[{"toolResponse":{"name":"addOrUpdateSurface","output":{"status":"updated"},"ref":"history-1-1"}},{"toolResponse":{"name":"getLocation","output":{"city":"Berlin"},"ref":"c-1"}},{"toolResponse":{"name":"confirm","output":{"error":"the user said no"},"ref":"c-2"}}],"role":"tool"}`
	if tool.Role != ai.RoleTool || string(b) != want {
		t.Fatalf("responses %s\nwant %s", b, want)
	}
}

// An A2UI turn, which has no UI tools, declares the client tools, and its calls end it.
func TestA2UIClientToolCall(t *testing.T) {
	m := &script{calls: []scripted{{parts: append(append([]*ai.Part{}, helloSurface...), callPart("getLocation", map[string]any{"precise": true}))}}}
	svc := newService(t, m)
	req := a2uiRequest("where am I?")
	req.ClientTools = []schemas.ClientTool{locationTool}
	st, err := svc.StreamA2UI(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	items := readAll(t, st)
	var msgs [][]byte
	var call *schemas.ToolCall
	for _, it := range items {
		switch {
		case it.Event != nil && it.Event.Type == schemas.EventA2UI:
			if call != nil {
				t.Fatal("an A2UI message after the call")
			}
			msgs = append(msgs, it.Event.A2UI)
		case it.Event != nil && it.Event.Type == schemas.EventToolCall:
			call = it.Event.ToolCall
		}
	}
	a2uitest.New(t, "v0.9", nil).CheckAll(t, msgs...)
	if call == nil || m.reqs[0].Tools != nil || m.reqs[0].ClientTools == nil {
		t.Fatalf("call %+v, tools %+v %+v", call, m.reqs[0].Tools, m.reqs[0].ClientTools)
	}
	if r := resultOf(t, items[len(items)-1]); r.FinishReason != "interrupted" {
		t.Fatalf("result %+v", r)
	}
}

// Bad declarations and bad continuations are INVALID_ARGUMENT errors naming the field.
func TestBadClientToolsAndResults(t *testing.T) {
	svc := newService(t, &script{})
	call := func(id string) schemas.Message {
		return schemas.Message{Role: "model", Parts: []schemas.Part{{Type: "toolCall", CallID: id, Name: "getLocation"}}}
	}
	result := func(id string, p ...schemas.Part) schemas.Message {
		return schemas.Message{Role: "user", Parts: append([]schemas.Part{{Type: "toolResult", CallID: id, Name: "getLocation", Output: json.RawMessage(`1`)}}, p...)}
	}
	user := schemas.Message{Role: "user", Parts: []schemas.Part{{Type: "text", Text: "hi"}}}
	for _, tc := range []struct {
		name  string
		tools []schemas.ClientTool
		conv  []schemas.Message
		id    string
		field string
		msg   string
	}{
		{"a UI tool's name", []schemas.ClientTool{{Name: "addOrUpdateSurface"}}, nil, "", "clientTools[0].name", "UI tool"},
		{"an invalid name", []schemas.ClientTool{{Name: "get location"}}, nil, "", "clientTools[0].name", "not a valid function name"},
		{"no name", []schemas.ClientTool{{Description: "x"}}, nil, "", "clientTools[0].name", "required"},
		{"a name twice", []schemas.ClientTool{{Name: "a"}, {Name: "a"}}, nil, "", "clientTools[1].name", "declared twice"},
		{"a remote $ref", []schemas.ClientTool{{Name: "a", InputSchema: schemas.Object(`{"type":"object","properties":{"x":{"$ref":"https://example.com/s.json"}}}`)}}, nil, "", "clientTools[0].inputSchema", "remote schema"},
		{"not an object schema", []schemas.ClientTool{{Name: "a", InputSchema: schemas.Object(`{"type":"string"}`)}}, nil, "", "clientTools[0].inputSchema.type", `must be "object"`},
		{"not a JSON Schema", []schemas.ClientTool{{Name: "a", InputSchema: schemas.Object(`{"type":"object","properties":5}`)}}, nil, "", "clientTools[0].inputSchema", "not a valid JSON Schema"},
		{"an array schema", []schemas.ClientTool{{Name: "a", InputSchema: schemas.Object(`[]`)}}, nil, "", "clientTools[0].inputSchema", "must be a JSON Schema object"},
		{"a result for an unknown call", nil, []schemas.Message{user, call("c1"), result("c2")}, "", "conversation[2].parts[0].callId", `no call "c2"`},
		{"a call left without a result", nil, []schemas.Message{user, call("c1"), user}, "", "conversation[2].parts", `no result for "c1"`},
		{"two results for one call", nil, []schemas.Message{user, call("c1"), result("c1", schemas.Part{Type: "toolResult", CallID: "c1", Name: "getLocation", Error: "x"})}, "", "conversation[2].parts[1].callId", "a second result"},
		{"a call id twice", nil, []schemas.Message{user, call("c1"), result("c1"), call("c1"), result("c1")}, "", "conversation[3].parts[0].callId", "used twice"},
		{"a result of another tool", nil, []schemas.Message{user, call("c1"), {Role: "user", Parts: []schemas.Part{{Type: "toolResult", CallID: "c1", Name: "other", Output: json.RawMessage(`1`)}}}}, "", "conversation[2].parts[0].name", `a call of "getLocation"`},
		{"a call in a user message", nil, []schemas.Message{{Role: "user", Parts: []schemas.Part{{Type: "toolCall", CallID: "c1", Name: "a"}}}}, "", "conversation[0].parts[0].type", "model messages"},
		{"a result in a model message", nil, []schemas.Message{user, {Role: "model", Parts: []schemas.Part{{Type: "toolResult", CallID: "c1", Name: "a", Output: json.RawMessage(`1`)}}}, user}, "", "conversation[1].parts[0].type", "user messages"},
		{"a result without output", nil, []schemas.Message{user, call("c1"), {Role: "user", Parts: []schemas.Part{{Type: "toolResult", CallID: "c1", Name: "getLocation"}}}}, "", "conversation[2].parts[0].output", "required"},
		{"output and error", nil, []schemas.Message{user, call("c1"), {Role: "user", Parts: []schemas.Part{{Type: "toolResult", CallID: "c1", Name: "getLocation", Output: json.RawMessage(`1`), Error: "e"}}}}, "", "conversation[2].parts[0]", "not both"},
		{"a call id out of pattern", nil, []schemas.Message{user, call("c 1"), result("c 1")}, "", "conversation[1].parts[0].callId", "not a call id"},
		{"an input that is not an object", nil, []schemas.Message{user, {Role: "model", Parts: []schemas.Part{{Type: "toolCall", CallID: "c1", Name: "a", Input: schemas.Object(`[1]`)}}}, user}, "", "conversation[1].parts[0].input", "must be an object"},
		{"a bad signature", nil, []schemas.Message{user, {Role: "model", Parts: []schemas.Part{{Type: "toolCall", CallID: "c1", Name: "a", Signature: "!!"}}}, user}, "", "conversation[1].parts[0].signature", "base64"},
		{"a model message while calls wait", nil, []schemas.Message{user, call("c1"), {Role: "model", Parts: []schemas.Part{{Type: "text", Text: "x"}}}, user}, "", "conversation[2].role", "need their results"},
		{"a short conversation id", nil, nil, "short", "conversationId", "8 to 128 characters"},
		{"a conversation id with a slash", nil, nil, "abc/defghij", "conversationId", `'/' is not allowed`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := request(t)
			req.ClientTools, req.ConversationID = tc.tools, tc.id
			if tc.conv != nil {
				req.Conversation = tc.conv
			}
			_, err := svc.Generate(context.Background(), req)
			e := genui.AsError(err)
			if e.Status != genui.StatusInvalidArgument || e.Details.(map[string]any)["field"] != tc.field || !strings.Contains(e.Message, tc.msg) {
				t.Fatalf("got %s %q %v; want field %s, %q", e.Status, e.Message, e.Details, tc.field, tc.msg)
			}
		})
	}
}

// The same declaration is compiled once.
func TestClientToolsAreCompiledOnce(t *testing.T) {
	m := &script{calls: []scripted{{parts: texts("a")}, {parts: texts("b")}}}
	svc := newService(t, m)
	for range 2 {
		req := request(t)
		req.ClientTools = []schemas.ClientTool{{Name: "getLocation", InputSchema: append(schemas.Object(nil), locationTool.InputSchema...)}}
		if _, err := svc.Generate(context.Background(), req); err != nil {
			t.Fatal(err)
		}
	}
	if m.reqs[0].ClientTools != m.reqs[1].ClientTools {
		t.Fatal("the same declaration compiled twice")
	}
}

// A client tool's input is model-written too: a URL its schema marks (format uri, or a
// URL's name) that the UI policy refuses does not reach the client, and the model is
// asked to repair the call.
func TestClientToolInputFollowsThePolicy(t *testing.T) {
	openLink := schemas.ClientTool{Name: "openLink", Description: "Opens a page in the app's browser.",
		InputSchema: schemas.Object(`{"type":"object","properties":{"target":{"type":"string","format":"uri"},"options":{"type":"object","properties":{"iconUrl":{"type":"string"}}}},"required":["target"]}`)}
	m := &script{calls: []scripted{
		{parts: []*ai.Part{callPart("openLink", map[string]any{"target": " javascript:alert(1)", "options": map[string]any{"iconUrl": "file:///etc/passwd"}})}},
		{parts: []*ai.Part{callPart("openLink", map[string]any{"target": "https://example.com/help"})}},
	}}
	svc := newService(t, m)
	req := request(t)
	req.ClientTools = []schemas.ClientTool{openLink}
	items := collectItems(t, svc, req)
	var calls []string
	for _, it := range items {
		if it.Event != nil && it.Event.ToolCall != nil {
			calls = append(calls, string(it.Event.ToolCall.Input))
		}
	}
	r := resultOf(t, items[len(items)-1])
	if len(calls) != 1 || calls[0] != `{"target":"https://example.com/help"}` || r.Usage.ModelCalls != 2 {
		t.Fatalf("calls %q, result %+v", calls, r)
	}
	b, _ := json.Marshal(m.reqs[1].Messages[len(m.reqs[1].Messages)-1])
	for _, want := range []string{`"status":"rejected"`, `"pointer":"/target","code":"unsafe_url"`, `"pointer":"/options/iconUrl","code":"unsafe_url"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the repair request lacks %s: %s", want, b)
		}
	}
	if strings.Contains(string(b), "alert") || strings.Contains(string(b), "passwd") {
		t.Errorf("the repair request repeats the URLs: %s", b)
	}
}
