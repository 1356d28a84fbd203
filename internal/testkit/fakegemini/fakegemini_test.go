package fakegemini

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"google.golang.org/genai"
)

func newClient(t *testing.T, s *Server) *genai.Client {
	t.Helper()
	c, err := genai.NewClient(context.Background(), &genai.ClientConfig{
		APIKey: "test", Backend: genai.BackendGeminiAPI, HTTPOptions: genai.HTTPOptions{BaseURL: s.URL()},
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func newServer(t *testing.T, opts ...Option) (*Server, *genai.Client) {
	s := New(opts...)
	t.Cleanup(s.Close)
	return s, newClient(t, s)
}

func stream(t *testing.T, c *genai.Client, ctx context.Context, prompt string) ([]*genai.GenerateContentResponse, error) {
	t.Helper()
	var out []*genai.GenerateContentResponse
	for resp, err := range c.Models.GenerateContentStream(ctx, "gemini-2.5-flash", genai.Text(prompt), nil) {
		if err != nil {
			return out, err
		}
		out = append(out, resp)
	}
	return out, nil
}

func TestStreamText(t *testing.T) {
	s, c := newServer(t)
	s.Enqueue(Respond(TextChunks("Hello, world!", 3)...))
	got, err := stream(t, c, context.Background(), "hi there")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("got %d events, want 3", len(got))
	}
	var text strings.Builder
	for i, r := range got {
		text.WriteString(r.Text())
		cand := r.Candidates[0]
		if wantStop := i == 2; (cand.FinishReason == genai.FinishReasonStop) != wantStop {
			t.Errorf("event %d finishReason %q", i, cand.FinishReason)
		}
		if cand.Content.Role != "model" || r.ModelVersion != "gemini-2.5-flash" || r.ResponseID != got[0].ResponseID {
			t.Errorf("event %d: role %q model %q id %q", i, cand.Content.Role, r.ModelVersion, r.ResponseID)
		}
	}
	if text.String() != "Hello, world!" {
		t.Errorf("text %q", text.String())
	}
	u := got[2].UsageMetadata
	if u == nil || u.PromptTokenCount < 1 || u.CandidatesTokenCount < 1 || u.TotalTokenCount != u.PromptTokenCount+u.CandidatesTokenCount {
		t.Errorf("usage %+v", u)
	}
	reqs := s.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	r := reqs[0]
	if r.Model != "gemini-2.5-flash" || !r.Stream || r.LastUserText() != "hi there" || r.Header.Get("x-goog-api-key") != "test" {
		t.Errorf("request %+v, last user text %q", r, r.LastUserText())
	}
	if want := (len(r.Raw) + 3) / 4; int(u.PromptTokenCount) != want {
		t.Errorf("promptTokenCount %d, want %d", u.PromptTokenCount, want)
	}
	<-r.Done()
	if r.Cancelled() {
		t.Error("request marked cancelled")
	}
}

func TestGenerateContentMergesChunks(t *testing.T) {
	s, c := newServer(t)
	s.Enqueue(Respond(Text("Hel"), Text("lo"), FunctionCall("getWeather", map[string]any{"city": "Paris"})))
	cfg := &genai.GenerateContentConfig{
		SystemInstruction: genai.NewContentFromText("be brief", genai.RoleUser),
		Tools: []*genai.Tool{{FunctionDeclarations: []*genai.FunctionDeclaration{{
			Name: "getWeather", Description: "weather", Parameters: &genai.Schema{Type: genai.TypeObject},
		}}}},
	}
	resp, err := c.Models.GenerateContent(context.Background(), "gemini-2.5-flash", genai.Text("weather?"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	parts := resp.Candidates[0].Content.Parts
	if len(parts) != 2 || parts[0].Text != "Hello" || parts[1].FunctionCall == nil {
		t.Fatalf("parts %+v", parts)
	}
	if fc := resp.FunctionCalls()[0]; fc.Name != "getWeather" || fc.Args["city"] != "Paris" {
		t.Errorf("function call %+v", fc)
	}
	if resp.Candidates[0].FinishReason != genai.FinishReasonStop || resp.UsageMetadata.TotalTokenCount == 0 {
		t.Errorf("finish %q usage %+v", resp.Candidates[0].FinishReason, resp.UsageMetadata)
	}
	r := s.Requests()[0]
	if r.Stream || r.SystemText() != "be brief" || len(r.FunctionDeclarations()) != 1 || r.FunctionDeclarations()[0].Name != "getWeather" {
		t.Errorf("request stream=%v system=%q decls=%+v", r.Stream, r.SystemText(), r.FunctionDeclarations())
	}
}

func TestStreamFunctionCall(t *testing.T) {
	_, c := newServer(t, WithResponder(func(r *Request) Reply {
		return Respond(Text("Calling."), FunctionCall("lookup", map[string]any{"q": r.LastUserText()}))
	}))
	got, err := stream(t, c, context.Background(), "cats")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Text() != "Calling." {
		t.Fatalf("events %d", len(got))
	}
	fcs := got[1].FunctionCalls()
	if len(fcs) != 1 || fcs[0].Name != "lookup" || fcs[0].Args["q"] != "cats" || got[1].Candidates[0].Content.Parts[0].Text != "" {
		t.Errorf("function calls %+v", fcs)
	}
}

func TestErrors(t *testing.T) {
	s, c := newServer(t)
	s.Enqueue(ErrorReply(RateLimited(1500*time.Millisecond)), ErrorReply(Unavailable()))
	_, err := stream(t, c, context.Background(), "hi")
	var apiErr genai.APIError
	if !errors.As(err, &apiErr) || apiErr.Code != 429 || apiErr.Status != "RESOURCE_EXHAUSTED" {
		t.Fatalf("err %v", err)
	}
	if len(apiErr.Details) != 1 || apiErr.Details[0]["retryDelay"] != "1.500s" {
		t.Errorf("details %+v", apiErr.Details)
	}
	_, err = c.Models.GenerateContent(context.Background(), "gemini-2.5-flash", genai.Text("hi"), nil)
	if !errors.As(err, &apiErr) || apiErr.Code != 503 || apiErr.Status != "UNAVAILABLE" {
		t.Fatalf("err %v", err)
	}
	_, err = c.Models.GenerateContent(context.Background(), "gemini-9-ultra", genai.Text("hi"), nil)
	if !errors.As(err, &apiErr) || apiErr.Code != 404 || apiErr.Status != "NOT_FOUND" {
		t.Fatalf("unknown model err %v", err)
	}
}

func TestMidStreamFailure(t *testing.T) {
	s, c := newServer(t)
	s.Enqueue(
		Reply{Chunks: TextChunks("abcdef", 3), MidStream: &MidStreamFailure{After: 1, Err: Unavailable()}},
		Reply{Chunks: TextChunks("abcdef", 3), MidStream: &MidStreamFailure{After: 2}},
	)
	got, err := stream(t, c, context.Background(), "hi")
	var apiErr genai.APIError
	if len(got) != 1 || !errors.As(err, &apiErr) || apiErr.Code != 503 {
		t.Fatalf("got %d events, err %v", len(got), err)
	}
	// A cut connection ends the genai iterator with io.ErrUnexpectedEOF (genai v1.77.0; v1.41.0
	// ended it without an error).
	got, err = stream(t, c, context.Background(), "hi")
	if len(got) != 2 || !errors.Is(err, io.ErrUnexpectedEOF) || got[1].Candidates[0].FinishReason != "" {
		t.Fatalf("got %d events, err %v", len(got), err)
	}
	for _, r := range s.Requests() {
		<-r.Done()
		if r.Cancelled() {
			t.Error("injected failure marked as cancellation")
		}
	}
}

func TestModels(t *testing.T) {
	s, c := newServer(t, WithModels("gemini-a", "models/gemini-b", "gemini-c"))
	var names []string
	for m, err := range c.Models.All(context.Background()) {
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, m.Name)
		if len(m.SupportedActions) == 0 || m.SupportedActions[0] != "generateContent" {
			t.Errorf("actions %v", m.SupportedActions)
		}
	}
	if strings.Join(names, ",") != "models/gemini-a,models/gemini-b,models/gemini-c" {
		t.Errorf("names %v", names)
	}
	m, err := c.Models.Get(context.Background(), "gemini-b", nil)
	if err != nil || m.Name != "models/gemini-b" {
		t.Fatalf("get %+v %v", m, err)
	}
	if _, err := c.Models.Get(context.Background(), "gemini-x", nil); err == nil {
		t.Error("want error for unknown model")
	}
	if len(s.Requests()) != 0 {
		t.Error("model calls captured as generate requests")
	}
}

func post(t *testing.T, url, key, body string) (*http.Response, []byte) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("x-goog-api-key", key)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, b
}

func TestHTTPErrors(t *testing.T) {
	s := New(WithAPIKey("secret"))
	defer s.Close()
	gen := s.URL() + "/v1beta/models/gemini-2.5-flash:generateContent"
	ok := `{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`
	for _, tc := range []struct {
		url, key, body string
		code           int
		status         string
	}{
		{gen, "", ok, 403, "PERMISSION_DENIED"},
		{gen, "wrong", ok, 400, "INVALID_ARGUMENT"},
		{gen, "secret", `{"contents":`, 400, "INVALID_ARGUMENT"},
		{gen, "secret", `{}`, 400, "INVALID_ARGUMENT"},
		{gen, "secret", `{"contents":"x"}`, 400, "INVALID_ARGUMENT"},
		{s.URL() + "/v1beta/nothing", "secret", ok, 404, "NOT_FOUND"},
		{s.URL() + "/v1beta/models/gemini-2.5-flash:embedStuff", "secret", ok, 404, "NOT_FOUND"},
		{gen + "?key=secret", "", ok, 200, ""},
	} {
		resp, body := post(t, tc.url, tc.key, tc.body)
		if resp.StatusCode != tc.code {
			t.Errorf("%s key=%q body=%s: status %d, want %d: %s", tc.url, tc.key, tc.body, resp.StatusCode, tc.code, body)
			continue
		}
		if tc.code == 200 {
			continue
		}
		var e struct{ Error genai.APIError }
		if err := json.Unmarshal(body, &e); err != nil || e.Error.Code != tc.code || e.Error.Status != tc.status || e.Error.Message == "" {
			t.Errorf("%s: body %s (%v)", tc.url, body, err)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("content type %q", ct)
		}
	}
	if n := len(s.Requests()); n != 1 {
		t.Errorf("%d requests captured, want 1", n)
	}
}

func TestWireFormat(t *testing.T) {
	s := New()
	defer s.Close()
	s.Enqueue(Respond(Text("a"), FunctionCall("f", nil)))
	resp, b := post(t, s.URL()+"/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", "k",
		`{"contents":[{"role":"user","parts":[{"text":"hi"}]}]}`)
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("content type %q", ct)
	}
	events := strings.Split(string(b), "\n\n")
	if len(events) != 3 || events[2] != "" {
		t.Fatalf("body %q", b)
	}
	for i, ev := range events[:2] {
		data, ok := strings.CutPrefix(ev, "data: ")
		var m map[string]any
		if !ok || strings.Contains(ev, "\n") || json.Unmarshal([]byte(data), &m) != nil {
			t.Fatalf("event %d %q", i, ev)
		}
		part := m["candidates"].([]any)[0].(map[string]any)["content"].(map[string]any)["parts"].([]any)[0].(map[string]any)
		if len(part) != 1 {
			t.Errorf("part with several kinds: %v", part)
		}
	}
	if !strings.Contains(events[1], `"functionCall":{"name":"f","args":{}}`) || !strings.Contains(events[1], `"finishReason":"STOP"`) ||
		strings.Contains(events[0], "finishReason") {
		t.Errorf("events %q", events)
	}
}

func TestCancellation(t *testing.T) {
	s, c := newServer(t, WithPacing(time.Hour))
	s.Enqueue(Respond(Text("first"), Text("never")))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	for resp, err := range c.Models.GenerateContentStream(ctx, "gemini-2.5-flash", genai.Text("hi"), nil) {
		if err != nil {
			break
		}
		if n++; resp.Text() != "first" {
			t.Errorf("text %q", resp.Text())
		}
		cancel()
	}
	r := s.Requests()[0]
	select {
	case <-r.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("handler did not stop after cancellation")
	}
	if n != 1 || !r.Cancelled() {
		t.Errorf("events %d cancelled %v", n, r.Cancelled())
	}
}

func TestCloseAbortsInFlight(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	// The unary request waits in latency, the stream after its first event.
	s := New(WithLatency(time.Hour), WithPacing(time.Hour), WithResponder(func(r *Request) Reply {
		return Reply{Chunks: []Chunk{Text("a"), Text("b")}, Latency: map[bool]time.Duration{true: -1}[r.Stream]}
	}))
	c := newClient(t, s)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Models.GenerateContent(context.Background(), "gemini-2.5-flash", genai.Text("hi"), nil)
		errc <- err
	}()
	events := make(chan int, 1)
	go func() {
		got, _ := stream(t, c, context.Background(), "hi")
		events <- len(got)
	}()
	if err := s.WaitRequests(context.Background(), 2); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // let the stream send its first event
	start := time.Now()
	s.Close()
	s.Close()
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close took %v", d)
	}
	if err := <-errc; err == nil {
		t.Error("want client error after Close")
	}
	if n := <-events; n != 1 {
		t.Errorf("stream got %d events, want 1", n)
	}
	for _, r := range s.Requests() {
		if !r.Cancelled() {
			t.Errorf("request (stream=%v) not marked cancelled", r.Stream)
		}
	}
	if err := s.WaitRequests(context.Background(), 3); err == nil {
		t.Error("WaitRequests after Close should fail")
	}
}

func TestLatencyAndOverrides(t *testing.T) {
	s, c := newServer(t, WithLatency(time.Hour))
	s.Enqueue(Reply{Chunks: []Chunk{Text("x")}, Latency: -1, FinishReason: "MAX_TOKENS",
		Usage: &Usage{PromptTokenCount: 7, CandidatesTokenCount: 3, TotalTokenCount: 10}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := c.Models.GenerateContent(ctx, "gemini-2.5-flash", genai.Text("hi"), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Candidates[0].FinishReason != genai.FinishReasonMaxTokens || resp.UsageMetadata.TotalTokenCount != 10 {
		t.Errorf("finish %q usage %+v", resp.Candidates[0].FinishReason, resp.UsageMetadata)
	}
}

func TestTextChunks(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want []string
	}{
		{"abcdefg", 3, []string{"ab", "cd", "efg"}},
		{"héllo", 5, []string{"h", "é", "l", "l", "o"}},
		{"ab", 5, []string{"a", "b"}},
		{"", 3, []string{""}},
		{"abc", 0, []string{"abc"}},
	} {
		var got []string
		for _, c := range TextChunks(tc.s, tc.n) {
			got = append(got, c.Parts[0].Text)
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("TextChunks(%q, %d) = %q", tc.s, tc.n, got)
		}
	}
}

func TestOneKindPerPart(t *testing.T) {
	r := Respond(Chunk{Parts: []Part{{Text: "x", FunctionCall: &Call{Name: "f", Args: map[string]any{}}}}})
	b, _ := json.Marshal(r.build(&Request{Model: "m"}, "id", false)[0].Candidates[0].Content.Parts)
	if string(b) != `[{"functionCall":{"name":"f","args":{}}}]` {
		t.Errorf("%s", b)
	}
}
