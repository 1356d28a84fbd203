package fakeopenai_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/firebase/genkit/go/plugins/compat_oai"

	"github.com/genuiserver/genui/internal/testkit/fakeopenai"
)

func post(t *testing.T, url, key, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

// The events of a streamed answer, as OpenAI sends them: the role first, text deltas,
// a tool call's arguments in pieces, the finish reason, the usage, [DONE].
func TestStreamWire(t *testing.T) {
	s := fakeopenai.New()
	defer s.Close()
	s.Enqueue(fakeopenai.Reply{Chunks: []fakeopenai.Chunk{fakeopenai.Text("Hi"),
		fakeopenai.ToolCall("call_1", "f", map[string]any{"a": 1})}, Usage: &fakeopenai.Usage{PromptTokens: 7, CompletionTokens: 3, TotalTokens: 10}})
	res, body := post(t, s.URL()+"/chat/completions", "k",
		`{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`)
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream; charset=utf-8" {
		t.Fatalf("%d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	c := `"id":"chatcmpl-fake000001","object":"chat.completion.chunk","created":1767225600,"model":"gpt-4o-mini"`
	want := []string{
		`{` + c + `,"choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`,
		`{` + c + `,"choices":[{"index":0,"delta":{"content":"Hi"},"logprobs":null,"finish_reason":null}]}`,
		`{` + c + `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"f","arguments":"{\""}}]},"logprobs":null,"finish_reason":null}]}`,
		`{` + c + `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"a\""}}]},"logprobs":null,"finish_reason":null}]}`,
		`{` + c + `,"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]},"logprobs":null,"finish_reason":null}]}`,
		`{` + c + `,"choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}`,
		`{` + c + `,"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3,"total_tokens":10}}`,
		`[DONE]`,
	}
	if got := "data: " + strings.Join(want, "\n\ndata: ") + "\n\n"; body != got {
		t.Fatalf("got:\n%s\nwant:\n%s", body, got)
	}
	r := s.Requests()[0]
	if !r.Stream || !r.IncludeUsage || r.LastUserText() != "hi" {
		t.Fatalf("request %+v", r)
	}

	// Without include_usage, no usage chunk; without stream, one completion.
	_, body = post(t, s.URL()+"/chat/completions", "k", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream":true}`)
	if strings.Contains(body, "usage") || !strings.HasSuffix(body, "data: [DONE]\n\n") {
		t.Fatalf("got:\n%s", body)
	}
	s.Enqueue(fakeopenai.Respond(fakeopenai.Text("a"), fakeopenai.Text("b"), fakeopenai.ToolCall("call_2", "g", nil)))
	_, body = post(t, s.URL()+"/chat/completions", "k", `{"model":"gpt-4o-mini","messages":[{"role":"user","content":[{"type":"text","text":"hi"}]}]}`)
	if want := `{"choices":[{"index":0,"message":{"role":"assistant","content":"ab","tool_calls":[{"id":"call_2","type":"function","function":{"name":"g","arguments":"{}"}}]},"logprobs":null,"finish_reason":"tool_calls"}],"created":1767225600,"id":"chatcmpl-fake000003","model":"gpt-4o-mini","object":"chat.completion","usage":{"prompt_tokens":23,"completion_tokens":3,"total_tokens":26}}`; body != want {
		t.Fatalf("got:\n%s\nwant:\n%s", body, want)
	}
	if got := s.Requests()[2].LastUserText(); got != "hi" {
		t.Fatalf("the text of content parts: %q", got)
	}
}

func TestErrors(t *testing.T) {
	s := fakeopenai.New(fakeopenai.WithAPIKey("good"))
	defer s.Close()
	chat := `{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}],"stream":true}`
	for _, c := range []struct {
		key, body string
		status    int
		want      string
	}{
		{"", chat, 401, `"message":"You didn't provide an API key.`},
		{"bad", chat, 401, `"code":"invalid_api_key"`},
		{"good", `{"model":"nope","messages":[{"role":"user","content":"hi"}]}`, 404, `"code":"model_not_found"`},
		{"good", `{"model":"gpt-4o-mini","messages":[]}`, 400, `"type":"invalid_request_error"`},
		{"good", `{`, 400, `could not parse the JSON body`},
	} {
		res, body := post(t, s.URL()+"/chat/completions", c.key, c.body)
		if res.StatusCode != c.status || !strings.Contains(body, c.want) {
			t.Errorf("key %q body %s: %d %s", c.key, c.body, res.StatusCode, body)
		}
	}
	if len(s.Requests()) != 0 {
		t.Fatal("rejected requests were captured")
	}

	s.Enqueue(fakeopenai.ErrorReply(fakeopenai.RateLimited(1500 * time.Millisecond)))
	res, body := post(t, s.URL()+"/chat/completions", "good", chat)
	if res.StatusCode != 429 || res.Header.Get("Retry-After") != "2" ||
		body != `{"error":{"code":"rate_limit_exceeded","message":"Rate limit reached for requests. Please try again later.","param":null,"type":"requests"}}` {
		t.Fatalf("%d %v %s", res.StatusCode, res.Header, body)
	}

	s.Enqueue(fakeopenai.Reply{Chunks: []fakeopenai.Chunk{fakeopenai.Text("a"), fakeopenai.Text("b")},
		MidStream: &fakeopenai.MidStreamFailure{After: 2, Err: fakeopenai.Unavailable()}})
	_, body = post(t, s.URL()+"/chat/completions", "good", chat)
	if strings.Count(body, "data: ") != 3 || !strings.HasSuffix(body, `"type":"server_error"}}`+"\n\n") || strings.Contains(body, "[DONE]") {
		t.Fatalf("the mid-stream failure:\n%s", body)
	}

	req, _ := http.NewRequest(http.MethodGet, s.URL()+"/models", nil)
	req.Header.Set("Authorization", "Bearer good")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Data []struct{ ID string } }
	_ = json.NewDecoder(res.Body).Decode(&list)
	res.Body.Close()
	if len(list.Data) != 3 || list.Data[0].ID != "gpt-4o-mini" {
		t.Fatalf("models %+v", list)
	}
}

// Genkit's compat_oai plugin, through the openai-go client: the streamed pieces of a
// call's arguments make its input, and the usage chunk the response's usage.
func TestGenkitCompatOAI(t *testing.T) {
	s := fakeopenai.New()
	defer s.Close()
	ctx := context.Background()
	g := genkit.Init(ctx, genkit.WithPlugins(&compat_oai.OpenAICompatible{Provider: "fake", APIKey: "k", BaseURL: s.URL()}))
	tool := genkit.DefineTool(g, "lookup", "Looks up.", func(*ai.ToolContext, struct {
		Q string `json:"q"`
	}) (string, error) {
		return "", nil
	})
	s.Enqueue(fakeopenai.Respond(append(fakeopenai.TextChunks("Let me look.", 3),
		fakeopenai.Chunk{Call: &fakeopenai.Call{ID: "call_9", Name: "lookup", Arguments: `{"q":"the weather in Berlin"}`}, Pieces: 5})...))
	var streamed strings.Builder
	resp, err := genkit.Generate(ctx, g, ai.WithModelName("fake/gpt-4o-mini"), ai.WithPrompt("weather?"),
		ai.WithTools(tool), ai.WithReturnToolRequests(true),
		ai.WithStreaming(func(_ context.Context, c *ai.ModelResponseChunk) error {
			streamed.WriteString(c.Text())
			return nil
		}))
	if err != nil {
		t.Fatal(err)
	}
	reqs := resp.ToolRequests()
	if streamed.String() != "Let me look." || resp.Text() != "Let me look." || len(reqs) != 1 || reqs[0].ToolRequest.Ref != "call_9" ||
		reqs[0].ToolRequest.Input.(map[string]any)["q"] != "the weather in Berlin" {
		t.Fatalf("streamed %q, response %q, tool requests %+v", streamed.String(), resp.Text(), reqs)
	}
	r := s.Requests()[0]
	u := resp.Usage
	if !r.IncludeUsage || u == nil || u.InputTokens != max(1, (len(r.Raw)+3)/4) || u.OutputTokens != 3+8 { // three text chunks of 4 bytes, 29 bytes of arguments
		t.Fatalf("include_usage %v, usage %+v", r.IncludeUsage, u)
	}
	if tools := r.Tools(); len(tools) != 1 || tools[0].Function.Name != "lookup" || tools[0].Function.Parameters["type"] != "object" {
		t.Fatalf("tools %+v", tools)
	}
}
