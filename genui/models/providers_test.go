package models_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/models"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/fakeollama"
	"github.com/genuiserver/genui/internal/testkit/fakeopenai"
	"github.com/genuiserver/genui/schemas"
)

// The provider matrix: each provider's real client (the genai SDK for Gemini, Genkit's
// compat_oai plugin for OpenAI-compatible endpoints, the service's Ollama model) against
// a scripted server of the provider's wire format, through the real genui.Service.

// step is one item of a scripted model response: a piece of text or a tool call.
type step struct {
	text string
	call string
	args map[string]any
}

func say(s string) step                          { return step{text: s} }
func call(name string, args map[string]any) step { return step{call: name, args: args} }

// scripted is a provider's fake as the matrix drives it.
type scripted interface {
	// respond enqueues a response of the steps, for which the provider reports in
	// input and out output tokens.
	respond(in, out int, steps ...step)
	// calls returns how many model calls the fake served.
	calls() int
	// toolNames returns the names of the tools call i declared.
	toolNames(i int) []string
	// results returns the tool results call i ends with, by tool name, as JSON.
	results(t *testing.T, i int) map[string]string
	// check checks what every call sent that the provider needs (e.g. the usage asked for).
	check(t *testing.T)
}

type provider struct {
	name, model string
	start       func(t *testing.T) scripted
}

var providers = []provider{
	{"gemini", "googleai/gemini-2.5-flash", startGemini},
	{"vertex", "vertexai/gemini-2.5-flash", startVertex},
	{"openai-compatible", "compat/gpt-4o-mini", startOpenAI},
	{"ollama", "ollama/llama3.2", startOllama},
}

// --- Gemini

type geminiFake struct{ *fakegemini.Server }

func startGemini(t *testing.T) scripted {
	f := fakegemini.New()
	t.Cleanup(f.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", f.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	return geminiFake{f}
}

func (f geminiFake) respond(in, out int, steps ...step) {
	var chunks []fakegemini.Chunk
	for _, s := range steps {
		if s.call != "" {
			chunks = append(chunks, fakegemini.FunctionCall(s.call, s.args))
		} else {
			chunks = append(chunks, fakegemini.TextChunks(s.text, 4)...)
		}
	}
	f.Enqueue(fakegemini.Reply{Chunks: chunks,
		Usage: &fakegemini.Usage{PromptTokenCount: in, CandidatesTokenCount: out, TotalTokenCount: in + out}})
}

func (f geminiFake) calls() int { return len(f.Requests()) }

func (f geminiFake) toolNames(i int) []string {
	var names []string
	for _, d := range f.Requests()[i].FunctionDeclarations() {
		names = append(names, d.Name)
	}
	return names
}

func (f geminiFake) results(t *testing.T, i int) map[string]string {
	out := map[string]string{}
	for _, r := range f.Requests()[i].FunctionResponses() {
		b, _ := json.Marshal(r.Response)
		out[r.Name] = string(b)
	}
	return out
}

func (f geminiFake) check(t *testing.T) {
	for i, r := range f.Requests() {
		if !r.Stream {
			t.Errorf("call %d was not streamed", i)
		}
	}
}

// --- OpenAI-compatible

type openaiFake struct{ *fakeopenai.Server }

func startOpenAI(t *testing.T) scripted {
	f := fakeopenai.New(fakeopenai.WithAPIKey("sk-test"))
	t.Cleanup(f.Close)
	t.Setenv("OPENAI_BASE_URL", f.URL())
	t.Setenv("OPENAI_API_KEY", "sk-test")
	return openaiFake{f}
}

func (f openaiFake) respond(in, out int, steps ...step) {
	var chunks []fakeopenai.Chunk
	for i, s := range steps {
		if s.call != "" {
			chunks = append(chunks, fakeopenai.ToolCall("call_"+s.call+string(rune('a'+i)), s.call, s.args))
		} else {
			chunks = append(chunks, fakeopenai.TextChunks(s.text, 4)...)
		}
	}
	f.Enqueue(fakeopenai.Reply{Chunks: chunks,
		Usage: &fakeopenai.Usage{PromptTokens: in, CompletionTokens: out, TotalTokens: in + out}})
}

func (f openaiFake) calls() int { return len(f.Requests()) }

func (f openaiFake) toolNames(i int) []string {
	var names []string
	for _, tool := range f.Requests()[i].Tools() {
		names = append(names, tool.Function.Name)
	}
	return names
}

// results reads the tool messages of call i, each answering a call of the assistant
// message before them by its id, as OpenAI requires.
func (f openaiFake) results(t *testing.T, i int) map[string]string {
	t.Helper()
	msgs := f.Requests()[i].Messages()
	results := f.Requests()[i].ToolResults()
	if len(results) == 0 {
		return nil
	}
	asked := msgs[len(msgs)-len(results)-1]
	if asked.Role != "assistant" {
		t.Fatalf("call %d: the tool messages follow a %s message", i, asked.Role)
	}
	names := map[string]string{}
	for _, c := range asked.ToolCalls {
		names[c.ID] = c.Function.Name
	}
	out := map[string]string{}
	for _, r := range results {
		name, ok := names[r.ToolCallID]
		if !ok {
			t.Fatalf("call %d: a tool message answers %q, not a call of the assistant message %+v", i, r.ToolCallID, asked.ToolCalls)
		}
		out[name] = r.Text()
	}
	return out
}

func (f openaiFake) check(t *testing.T) {
	for i, r := range f.Requests() {
		if !r.Stream || !r.IncludeUsage {
			t.Errorf("call %d: stream %v, stream_options.include_usage %v: the usage of a streamed answer must be asked for", i, r.Stream, r.IncludeUsage)
		}
		if r.Header.Get("Authorization") != "Bearer sk-test" {
			t.Errorf("call %d: Authorization %q", i, r.Header.Get("Authorization"))
		}
	}
}

// --- Ollama

type ollamaFake struct{ *fakeollama.Server }

func startOllama(t *testing.T) scripted {
	f := fakeollama.New()
	t.Cleanup(f.Close)
	t.Setenv("OLLAMA_HOST", f.URL())
	return ollamaFake{f}
}

func (f ollamaFake) respond(in, out int, steps ...step) {
	var chunks []fakeollama.Chunk
	for _, s := range steps {
		if s.call != "" {
			chunks = append(chunks, fakeollama.Call(s.call, s.args))
		} else {
			chunks = append(chunks, fakeollama.TextChunks(s.text, 4)...)
		}
	}
	f.Enqueue(fakeollama.Reply{Chunks: chunks, Usage: &fakeollama.Usage{PromptEvalCount: in, EvalCount: out}})
}

func (f ollamaFake) calls() int { return len(f.Requests()) }

func (f ollamaFake) toolNames(i int) []string {
	var names []string
	for _, tool := range f.Requests()[i].Tools() {
		names = append(names, tool.Function.Name)
	}
	return names
}

func (f ollamaFake) results(t *testing.T, i int) map[string]string {
	out := map[string]string{}
	for _, r := range f.Requests()[i].ToolResults() {
		out[r.ToolName] = r.Content
	}
	return out
}

func (f ollamaFake) check(t *testing.T) {
	for i, r := range f.Requests() {
		if !r.Stream {
			t.Errorf("call %d was not streamed", i)
		}
		if n, _ := r.Options()["num_predict"].(float64); n <= 0 {
			t.Errorf("call %d: options %v lack num_predict", i, r.Options())
		}
	}
}

// --- the service

func newService(t *testing.T, model string) *genui.Service {
	t.Helper()
	plugins, err := models.Plugins(model)
	if err != nil {
		t.Fatal(err)
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	g := genkit.Init(context.Background(), genkit.WithPlugins(plugins...))
	m, err := models.Open(context.Background(), g, model, quiet)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := genui.New(g, m, genui.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// turn is what a client received of a turn.
type turn struct {
	events []schemas.Event
	result *schemas.Result
}

func (tn *turn) of(typ schemas.EventType) []schemas.Event {
	var out []schemas.Event
	for _, e := range tn.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

func run(t *testing.T, st *genui.Stream, err error) *turn {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tn := &turn{}
	err = st.Each(ctx, func(it genui.Item) error {
		switch {
		case it.Err != nil:
			t.Errorf("the turn failed: %v", it.Err)
		case it.Result != nil:
			tn.result = &schemas.Result{}
			return json.Unmarshal(it.Result, tn.result)
		case it.Event != nil:
			tn.events = append(tn.events, *it.Event)
		}
		return nil
	})
	if err != nil || tn.result == nil {
		t.Fatalf("the turn ended without a result (%v)", err)
	}
	return tn
}

func checkUsage(t *testing.T, tn *turn, calls, in, out int) {
	t.Helper()
	if u := tn.result.Usage; u == nil || u.ModelCalls != calls || u.InputTokens != in || u.OutputTokens != out || u.TotalTokens != in+out {
		t.Errorf("usage %+v, want %d calls, %d tokens in, %d out", u, calls, in, out)
	}
}

func userText(s string) []schemas.Message {
	return []schemas.Message{{Role: "user", Parts: []schemas.Part{{Type: schemas.PartText, Text: s}}}}
}

func basicCatalog(t *testing.T) schemas.Catalog {
	t.Helper()
	c, err := schemas.SampleCatalog("basic")
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

const a2uiForm = "Here is the form.\n```a2ui\n" +
	`{"createSurface":{"surfaceId":"form","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}` + "\n" +
	`{"updateComponents":{"surfaceId":"form","components":[` + "\n" +
	`{"id":"root","component":"Column","children":["title","submit"]},` + "\n" +
	`{"id":"title","component":"Text","text":"Join us","variant":"h2"},` + "\n" +
	`{"id":"submit","component":"Button","child":"submit-label","action":{"event":{"name":"join"}}},` + "\n" +
	`{"id":"submit-label","component":"Text","text":"Join"}` + "\n" +
	"]}}\n```\n"

var surface = map[string]any{
	"surfaceId": "s1",
	"definition": map[string]any{"root": "c", "widgets": []any{
		map[string]any{"id": "c", "widget": map[string]any{"Column": map[string]any{"children": []any{"t"}}}},
		map[string]any{"id": "t", "widget": map[string]any{"Text": map[string]any{"text": "Hi"}}},
	}},
}

var invalidSurface = map[string]any{"surfaceId": "s1", "definition": map[string]any{"root": "c", "widgets": []any{
	map[string]any{"id": "c", "widget": map[string]any{"Carousel": map[string]any{}}},
}}}

const getLocation = `[{"name":"getLocation","description":"The user's city","inputSchema":{"type":"object","properties":{"precise":{"type":"boolean"}},"required":["precise"]}}]`

func TestProviders(t *testing.T) {
	for _, p := range providers {
		t.Run(p.name, func(t *testing.T) {
			t.Run("a2ui", func(t *testing.T) { testA2UI(t, p) })
			t.Run("genui", func(t *testing.T) { testGenUI(t, p) })
			t.Run("client-tool", func(t *testing.T) { testClientTool(t, p) })
			t.Run("repair", func(t *testing.T) { testRepair(t, p) })
		})
	}
}

// An A2UI turn: the model writes A2UI as text, each message streams as it is complete.
func testA2UI(t *testing.T, p provider) {
	fake := p.start(t)
	svc := newService(t, p.model)
	fake.respond(1200, 150, say(a2uiForm))
	st, err := svc.StreamA2UI(context.Background(), &schemas.GenerateA2UIRequest{Conversation: userText("a sign-up form")})
	tn := run(t, st, err)
	msgs := tn.of(schemas.EventA2UI)
	if len(msgs) < 2 || !strings.Contains(string(msgs[0].A2UI), `"createSurface"`) || !strings.Contains(string(msgs[len(msgs)-1].A2UI), `"submit-label"`) {
		t.Fatalf("the A2UI messages: %+v", msgs)
	}
	if tn.result.FinishReason != "stop" {
		t.Errorf("finish reason %q", tn.result.FinishReason)
	}
	checkUsage(t, tn, 1, 1200, 150)
	if names := fake.toolNames(0); len(names) != 0 {
		t.Errorf("an A2UI turn declared tools %v", names)
	}
	fake.check(t)
}

// A genui turn: text, then the surface the model adds with its tool call.
func testGenUI(t *testing.T, p provider) {
	fake := p.start(t)
	svc := newService(t, p.model)
	fake.respond(900, 60, say("Here you go."), call("addOrUpdateSurface", surface))
	st, err := svc.Stream(context.Background(), &schemas.GenerateRequest{Catalog: basicCatalog(t), Conversation: userText("make a UI")})
	tn := run(t, st, err)
	reqs := tn.of(schemas.EventToolRequest)
	if len(reqs) != 1 || reqs[0].ToolRequest.Name != "addOrUpdateSurface" ||
		string(reqs[0].ToolRequest.Input) != `{"definition":{"root":"c","widgets":[{"id":"c","widget":{"Column":{"children":["t"]}}},{"id":"t","widget":{"Text":{"text":"Hi"}}}]},"surfaceId":"s1"}` {
		t.Fatalf("the tool requests: %+v", tn.events)
	}
	if texts := tn.of(schemas.EventText); len(texts) == 0 || tn.result.Message.Content[0].Text != "Here you go." {
		t.Errorf("the text: %+v, result %+v", texts, tn.result.Message)
	}
	checkUsage(t, tn, 1, 900, 60)
	if names := sorted(fake.toolNames(0)); names != "addOrUpdateSurface,deleteSurface" {
		t.Errorf("declared tools %s", names)
	}
	fake.check(t)
}

// A client tool: the model calls it, the turn ends interrupted, and the next turn gives
// the model the call's result.
func testClientTool(t *testing.T, p provider) {
	fake := p.start(t)
	svc := newService(t, p.model)
	fake.respond(1000, 30, say("Looking."), call("getLocation", map[string]any{"precise": true}))
	req := &schemas.GenerateRequest{Catalog: basicCatalog(t), Conversation: userText("where am I?"), ClientTools: clientTools(t)}
	st, err := svc.Stream(context.Background(), req)
	tn := run(t, st, err)
	calls := tn.of(schemas.EventToolCall)
	if len(calls) != 1 || calls[0].ToolCall.Name != "getLocation" || string(calls[0].ToolCall.Input) != `{"precise":true}` {
		t.Fatalf("the calls: %+v", tn.events)
	}
	if tn.result.FinishReason != schemas.FinishInterrupted {
		t.Fatalf("finish reason %q", tn.result.FinishReason)
	}
	checkUsage(t, tn, 1, 1000, 30)
	if names := sorted(fake.toolNames(0)); names != "addOrUpdateSurface,deleteSurface,getLocation" {
		t.Errorf("declared tools %s", names)
	}

	c := calls[0].ToolCall
	req.Conversation = append(req.Conversation,
		schemas.Message{Role: "model", Parts: []schemas.Part{{Type: schemas.PartText, Text: "Looking."},
			{Type: "toolCall", CallID: c.CallID, Name: c.Name, Input: schemas.Object(c.Input), Signature: c.Signature}}},
		schemas.Message{Role: "user", Parts: []schemas.Part{{Type: "toolResult", CallID: c.CallID, Name: c.Name, Output: json.RawMessage(`{"city":"Berlin"}`)}}})
	fake.respond(1100, 12, say("You are in Berlin."))
	st, err = svc.Stream(context.Background(), req)
	tn = run(t, st, err)
	if tn.result.FinishReason != "stop" || len(tn.result.Message.Content) == 0 || tn.result.Message.Content[0].Text != "You are in Berlin." {
		t.Fatalf("the continued turn: %+v", tn.result)
	}
	checkUsage(t, tn, 1, 1100, 12)
	if got := fake.results(t, 1); got["getLocation"] != `{"city":"Berlin"}` {
		t.Errorf("the model read the results %v", got)
	}
	fake.check(t)
}

// sorted joins tool names in order: Genkit (v1.13.1) hands a plugin the tools of a call
// in no fixed order.
func sorted(names []string) string {
	slices.Sort(names)
	return strings.Join(names, ",")
}

func clientTools(t *testing.T) []schemas.ClientTool {
	t.Helper()
	var ts []schemas.ClientTool
	if err := json.Unmarshal([]byte(getLocation), &ts); err != nil {
		t.Fatal(err)
	}
	return ts
}

// A repair: the model's first surface is invalid and never reaches the client; told
// why, the model sends a valid one. The turn counts both calls' tokens.
func testRepair(t *testing.T, p provider) {
	fake := p.start(t)
	svc := newService(t, p.model)
	fake.respond(900, 40, call("addOrUpdateSurface", invalidSurface))
	fake.respond(1000, 50, call("addOrUpdateSurface", surface))
	st, err := svc.Stream(context.Background(), &schemas.GenerateRequest{Catalog: basicCatalog(t), Conversation: userText("make a UI")})
	tn := run(t, st, err)
	reqs := tn.of(schemas.EventToolRequest)
	if len(reqs) != 1 || strings.Contains(string(reqs[0].ToolRequest.Input), "Carousel") || reqs[0].Index != 2 {
		t.Fatalf("the tool requests: %+v", tn.events)
	}
	checkUsage(t, tn, 2, 1900, 90)
	if fake.calls() != 2 {
		t.Fatalf("%d model calls", fake.calls())
	}
	feedback := fake.results(t, 1)["addOrUpdateSurface"]
	if !strings.Contains(feedback, `"rejected"`) || !strings.Contains(feedback, `Carousel`) {
		t.Errorf("the repair request's feedback: %s", feedback)
	}
	fake.check(t)
}
