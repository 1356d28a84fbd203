package fakegemini

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/googlegenai"
)

func initGenkit(t *testing.T, s *Server) *genkit.Genkit {
	t.Setenv("GOOGLE_GEMINI_BASE_URL", s.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	t.Setenv("GOOGLE_API_KEY", "")
	return genkit.Init(context.Background(), genkit.WithPlugins(&googlegenai.GoogleAI{}))
}

type weatherIn struct {
	City string `json:"city"`
}

func TestGenkitStreaming(t *testing.T) {
	s := New()
	defer s.Close()
	s.Enqueue(Respond(TextChunks("Hello from the fake.", 4)...))
	g := initGenkit(t, s)
	var chunks []string
	resp, err := genkit.Generate(context.Background(), g,
		ai.WithModelName("googleai/gemini-2.5-flash"), ai.WithPrompt("hi"),
		ai.WithStreaming(func(_ context.Context, c *ai.ModelResponseChunk) error {
			chunks = append(chunks, c.Text())
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != 4 || strings.Join(chunks, "") != "Hello from the fake." || resp.Text() != "Hello from the fake." {
		t.Errorf("chunks %q text %q", chunks, resp.Text())
	}
	if resp.FinishReason != ai.FinishReasonStop || resp.Usage == nil || resp.Usage.InputTokens == 0 || resp.Usage.OutputTokens == 0 {
		t.Errorf("finish %q usage %+v", resp.FinishReason, resp.Usage)
	}
	r := s.Requests()[0]
	if !r.Stream || r.LastUserText() != "hi" || r.Header.Get("x-goog-api-key") != "test-key" ||
		!strings.Contains(r.Header.Get("x-goog-api-client"), "genkit-go") {
		t.Errorf("request stream=%v text=%q header=%v", r.Stream, r.LastUserText(), r.Header)
	}
}

func TestGenkitToolRequest(t *testing.T) {
	s := New()
	defer s.Close()
	s.Enqueue(Respond(Text("Let me check."), FunctionCall("getWeather", map[string]any{"city": "Paris"})))
	g := initGenkit(t, s)
	tool := genkit.DefineTool(g, "getWeather", "Returns the weather of a city",
		func(_ *ai.ToolContext, in weatherIn) (string, error) { return "sunny in " + in.City, nil })
	resp, err := genkit.Generate(context.Background(), g,
		ai.WithModelName("googleai/gemini-2.5-flash"), ai.WithPrompt("weather in Paris?"),
		ai.WithTools(tool), ai.WithReturnToolRequests(true))
	if err != nil {
		t.Fatal(err)
	}
	trs := resp.ToolRequests()
	if len(trs) != 1 || trs[0].ToolRequest.Name != "getWeather" {
		t.Fatalf("tool requests %+v", trs)
	}
	if in, _ := trs[0].ToolRequest.Input.(map[string]any); in["city"] != "Paris" {
		t.Errorf("input %#v", trs[0].ToolRequest.Input)
	}
	decls := s.Requests()[0].FunctionDeclarations()
	if len(decls) != 1 || decls[0].Name != "getWeather" || decls[0].Parameters["type"] != "OBJECT" {
		t.Errorf("declarations %+v", decls)
	}
}

func TestGenkitToolLoop(t *testing.T) {
	s := New()
	defer s.Close()
	s.Enqueue(Respond(FunctionCall("getWeather", map[string]any{"city": "Oslo"})))
	s.Enqueue(Respond(Text("It is sunny.")))
	g := initGenkit(t, s)
	var mu sync.Mutex
	var calls []string
	tool := genkit.DefineTool(g, "getWeather", "Returns the weather of a city",
		func(_ *ai.ToolContext, in weatherIn) (map[string]any, error) {
			mu.Lock()
			defer mu.Unlock()
			calls = append(calls, in.City)
			return map[string]any{"sky": "sunny"}, nil
		})
	resp, err := genkit.Generate(context.Background(), g,
		ai.WithModelName("googleai/gemini-2.5-flash"), ai.WithPrompt("weather in Oslo?"), ai.WithTools(tool),
		ai.WithStreaming(func(context.Context, *ai.ModelResponseChunk) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text() != "It is sunny." || len(calls) != 1 || calls[0] != "Oslo" {
		t.Errorf("text %q calls %v", resp.Text(), calls)
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	frs := reqs[1].FunctionResponses()
	contents := reqs[1].Contents()
	if len(frs) != 1 || frs[0].Name != "getWeather" || frs[0].Response["sky"] != "sunny" || contents[len(contents)-1].Role != "user" {
		t.Errorf("function responses %+v, contents %+v", frs, contents)
	}
}
