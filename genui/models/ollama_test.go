package models_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/models"
	"github.com/genuiserver/genui/internal/testkit/fakeollama"
)

func openOllama(t *testing.T) (genui.Model, *fakeollama.Server) {
	t.Helper()
	fake := fakeollama.New()
	t.Cleanup(fake.Close)
	t.Setenv("OLLAMA_HOST", fake.URL())
	plugins, err := models.Plugins("ollama/llama3.2")
	if err != nil {
		t.Fatal(err)
	}
	g := genkit.Init(context.Background(), genkit.WithPlugins(plugins...))
	m, err := models.Open(context.Background(), g, "ollama/llama3.2", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	return m, fake
}

func ask(m genui.Model, maxTokens int) (*ai.ModelResponse, error) {
	req := &genui.ModelRequest{System: genui.NewPrompt("Be brief."), Messages: []*ai.Message{ai.NewUserTextMessage("hi")}, MaxOutputTokens: maxTokens}
	return m.Generate(context.Background(), req, func(context.Context, *ai.Part) error { return nil })
}

// What Ollama says besides the message: the token counts, an answer cut at num_predict,
// errors with their status and Retry-After, and a failure part-way.
func TestOllamaAnswers(t *testing.T) {
	m, fake := openOllama(t)
	fake.Enqueue(fakeollama.Reply{Chunks: fakeollama.TextChunks("a long answer", 3), DoneReason: "length",
		Usage: &fakeollama.Usage{PromptEvalCount: 40, EvalCount: 16}})
	resp, err := ask(m, 16)
	if err != nil {
		t.Fatal(err)
	}
	if resp.FinishReason != ai.FinishReasonLength || resp.Text() != "a long answer" || len(resp.Message.Content) != 1 ||
		resp.Usage.InputTokens != 40 || resp.Usage.OutputTokens != 16 || resp.Usage.TotalTokens != 56 {
		t.Fatalf("response %+v, usage %+v", resp, resp.Usage)
	}
	msgs := fake.Requests()[0].Messages()
	if len(msgs) != 2 || msgs[0].Role != "system" || msgs[0].Content != "Be brief." || fake.Requests()[0].Options()["num_predict"] != float64(16) {
		t.Fatalf("request %s", fake.Requests()[0].Raw)
	}

	for _, c := range []struct {
		reply  fakeollama.Reply
		status genui.Status
		wait   time.Duration
	}{
		{fakeollama.ErrorReply(fakeollama.Busy(2 * time.Second)), genui.StatusUnavailable, 2 * time.Second},
		{fakeollama.ErrorReply(&fakeollama.APIError{Status: 404, Message: `model "llama3.2" not found, try pulling it first`}), genui.StatusNotFound, 0},
		{fakeollama.Reply{Chunks: fakeollama.TextChunks("abc", 3), MidStream: &fakeollama.MidStreamFailure{After: 1,
			Err: &fakeollama.APIError{Message: "llama runner process has terminated"}}}, genui.StatusUnavailable, 0},
		{fakeollama.Reply{Chunks: fakeollama.TextChunks("abc", 3), MidStream: &fakeollama.MidStreamFailure{After: 2}}, genui.StatusUnavailable, 0},
	} {
		fake.Enqueue(c.reply)
		_, err := ask(m, 0)
		var e *genui.Error
		if !errors.As(err, &e) || e.Status != c.status || e.RetryAfter != c.wait {
			t.Errorf("%+v: got %v", c.reply, err)
		}
	}
}
