package fakeollama_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/internal/testkit/fakeollama"
)

func do(t *testing.T, method, url, body string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res, string(b)
}

const done = `"done":true,"done_reason":"stop","total_duration":1500000000,"load_duration":20000000,` +
	`"prompt_eval_count":%d,"prompt_eval_duration":300000000,"eval_count":%d,"eval_duration":1100000000}`

// The lines of a streamed answer, as Ollama sends them: content pieces, a tool call with
// its arguments an object, and the last line with the counts.
func TestChatWire(t *testing.T) {
	s := fakeollama.New()
	defer s.Close()
	s.Enqueue(fakeollama.Reply{Chunks: []fakeollama.Chunk{fakeollama.Text("Hi"), fakeollama.Text(" there"),
		fakeollama.Call("f", map[string]any{"a": 1})}, Usage: &fakeollama.Usage{PromptEvalCount: 12, EvalCount: 5}})
	res, body := do(t, http.MethodPost, s.URL()+"/api/chat",
		`{"model":"llama3.2","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}],"options":{"num_predict":100}}`)
	head := `{"model":"llama3.2","created_at":"2026-01-01T00:00:00.000000000Z",`
	want := head + `"message":{"role":"assistant","content":"Hi"},"done":false}` + "\n" +
		head + `"message":{"role":"assistant","content":" there"},"done":false}` + "\n" +
		head + `"message":{"role":"assistant","content":"","tool_calls":[{"function":{"index":0,"name":"f","arguments":{"a":1}}}]},"done":false}` + "\n" +
		head + `"message":{"role":"assistant","content":""},` + strings.Replace(strings.Replace(done, "%d", "12", 1), "%d", "5", 1) + "\n"
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "application/x-ndjson" || body != want {
		t.Fatalf("%d %s:\n%s\nwant:\n%s", res.StatusCode, res.Header.Get("Content-Type"), body, want)
	}
	r := s.Requests()[0]
	if !r.Stream || r.SystemText() != "be brief" || r.LastUserText() != "hi" || r.Options()["num_predict"] != float64(100) {
		t.Fatalf("request %+v", r)
	}

	// Not streamed: one object, the counts estimated.
	s.Enqueue(fakeollama.Respond(fakeollama.Text("a"), fakeollama.Text("b")))
	_, body = do(t, http.MethodPost, s.URL()+"/api/chat", `{"model":"llama3.2:latest","stream":false,"messages":[{"role":"user","content":"hi"}]}`)
	if want := `{"model":"llama3.2:latest","created_at":"2026-01-01T00:00:00.000000000Z","message":{"role":"assistant","content":"ab"},` +
		strings.Replace(strings.Replace(done, "%d", "22", 1), "%d", "2", 1); body != want {
		t.Fatalf("got:\n%s\nwant:\n%s", body, want)
	}
}

func TestErrorsAndListing(t *testing.T) {
	s := fakeollama.New()
	defer s.Close()
	res, body := do(t, http.MethodPost, s.URL()+"/api/chat", `{"model":"mistral","messages":[]}`)
	if res.StatusCode != 404 || body != `{"error":"model \"mistral\" not found, try pulling it first"}` {
		t.Fatalf("%d %s", res.StatusCode, body)
	}
	s.Enqueue(fakeollama.ErrorReply(fakeollama.Busy(time.Second)))
	res, body = do(t, http.MethodPost, s.URL()+"/api/chat", `{"model":"llama3.2","messages":[{"role":"user","content":"hi"}]}`)
	if res.StatusCode != 503 || res.Header.Get("Retry-After") != "1" || !strings.HasPrefix(body, `{"error":"server busy`) {
		t.Fatalf("%d %v %s", res.StatusCode, res.Header, body)
	}
	s.Enqueue(fakeollama.Reply{Chunks: fakeollama.TextChunks("abcdef", 3),
		MidStream: &fakeollama.MidStreamFailure{After: 1, Err: &fakeollama.APIError{Message: "llama runner process has terminated"}}})
	_, body = do(t, http.MethodPost, s.URL()+"/api/chat", `{"model":"llama3.2","messages":[{"role":"user","content":"hi"}]}`)
	if lines := strings.Split(strings.TrimSpace(body), "\n"); len(lines) != 2 || lines[1] != `{"error":"llama runner process has terminated"}` {
		t.Fatalf("the mid-stream failure:\n%s", body)
	}

	_, body = do(t, http.MethodGet, s.URL()+"/api/tags", "")
	if !strings.HasPrefix(body, `{"models":[{"details":`) || !strings.Contains(body, `"name":"llama3.2:latest"`) || !strings.Contains(body, `"name":"qwen2.5:7b"`) {
		t.Fatalf("tags %s", body)
	}
	_, body = do(t, http.MethodPost, s.URL()+"/api/show", `{"model":"llama3.2"}`)
	if !strings.Contains(body, `"capabilities":["completion","tools"]`) {
		t.Fatalf("show %s", body)
	}
	res, _ = do(t, http.MethodPost, s.URL()+"/api/show", `{"model":"nope"}`)
	if res.StatusCode != 404 {
		t.Fatalf("show of an unknown model: %d", res.StatusCode)
	}
}
