package gemini_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/gemini"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/tools"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func newModel(t *testing.T, opts ...fakegemini.Option) (genui.Model, *fakegemini.Server) {
	t.Helper()
	fake := fakegemini.New(opts...)
	t.Cleanup(fake.Close)
	m, err := gemini.New(context.Background(), gemini.Config{Name: "googleai/gemini-2.5-flash", APIKey: "k", BaseURL: fake.URL(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return m, fake
}

func basic(t *testing.T) *catalog.Catalog {
	t.Helper()
	s, err := schemas.SampleCatalog("basic")
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func request(c *catalog.Catalog, text string) *genui.ModelRequest {
	return &genui.ModelRequest{Tools: tools.For(c), System: genui.NewPrompt("You compose UI. \u2603 <b>&</b>\n\"quoted\""), Messages: []*ai.Message{ai.NewUserTextMessage(text)}}
}

func collect(parts *[]*ai.Part) func(context.Context, *ai.Part) error {
	return func(_ context.Context, p *ai.Part) error {
		*parts = append(*parts, p)
		return nil
	}
}

// The system instruction and the tools reach Gemini exactly as encoded once per catalog,
// in a request body whose length is right, with no placeholder left.
func TestRequestCarriesTheEncodedSystemAndTools(t *testing.T) {
	m, fake := newModel(t)
	c := basic(t)
	fake.Enqueue(fakegemini.Respond(fakegemini.Text("Hi.")))
	req := request(c, "Hello")
	var parts []*ai.Part
	resp, err := m.Generate(context.Background(), req, collect(&parts))
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 1 || parts[0].Text != "Hi." || resp.FinishReason != ai.FinishReasonStop {
		t.Fatalf("%+v %+v", parts, resp)
	}
	r := fake.Requests()[0]
	if r.SystemText() != req.System.String() {
		t.Fatalf("system instruction %q", r.SystemText())
	}
	decls := r.FunctionDeclarations()
	if len(decls) != 2 || decls[0].Name != tools.AddOrUpdateSurface || decls[1].Name != tools.DeleteSurface {
		t.Fatalf("declarations %+v", decls)
	}
	var want any
	_ = json.Unmarshal(tools.For(c).Full[0].Schema, &want)
	got, _ := json.Marshal(decls[0].ParametersJSONSchema)
	wantJSON, _ := json.Marshal(want)
	if string(got) != string(wantJSON) {
		t.Fatalf("parametersJsonSchema differs from the catalog's tool schema")
	}
	if strings.Contains(string(r.Raw), "genui-system-") || strings.Contains(string(r.Raw), "genui-tools-") {
		t.Fatal("a placeholder reached Gemini")
	}
	if r.LastUserText() != "Hello" {
		t.Fatalf("contents %+v", r.Contents())
	}
}

// A repair round sends the model's own function call back with its id and thought
// signature, and the response with the same id.
func TestHistoryKeepsCallIDsAndThoughtSignatures(t *testing.T) {
	m, fake := newModel(t)
	c := basic(t)
	fake.Enqueue(fakegemini.Respond(
		fakegemini.Chunk{Parts: []fakegemini.Part{{Text: "thinking", Thought: true, ThoughtSignature: []byte("sig-1")}}},
		fakegemini.Chunk{Parts: []fakegemini.Part{{FunctionCall: &fakegemini.Call{Name: "deleteSurface", Args: map[string]any{"surfaceId": "s"}, ID: "call-7"}, ThoughtSignature: []byte("sig-2")}}},
	))
	req := request(c, "Remove it")
	var parts []*ai.Part
	resp, err := m.Generate(context.Background(), req, collect(&parts))
	if err != nil {
		t.Fatal(err)
	}
	// Thoughts are not passed on; the call is, with Gemini's id as its ref.
	if len(parts) != 1 || parts[0].ToolRequest == nil || parts[0].ToolRequest.Ref != "call-7" || len(resp.Message.Content) != 2 {
		t.Fatalf("parts %+v, message %+v", parts, resp.Message.Content)
	}
	req.Messages = append(req.Messages, resp.Message, &ai.Message{Role: ai.RoleTool, Content: []*ai.Part{
		ai.NewToolResponsePart(&ai.ToolResponse{Name: "deleteSurface", Ref: "call-7", Output: tools.Deleted})}})
	fake.Enqueue(fakegemini.Respond(fakegemini.Text("Done.")))
	if _, err := m.Generate(context.Background(), req, collect(&parts)); err != nil {
		t.Fatal(err)
	}
	contents := fake.Requests()[1].Contents()
	if len(contents) != 3 || contents[1].Role != "model" || contents[2].Role != "user" {
		t.Fatalf("contents %+v", contents)
	}
	model := contents[1].Parts
	if len(model) != 2 || !model[0].Thought || string(model[0].ThoughtSignature) != "sig-1" ||
		model[1].FunctionCall == nil || model[1].FunctionCall.ID != "call-7" || string(model[1].ThoughtSignature) != "sig-2" {
		t.Fatalf("model content %+v", model)
	}
	if fr := contents[2].Parts[0].FunctionResponse; fr == nil || fr.ID != "call-7" || fr.Response["status"] != "deleted" {
		t.Fatalf("function response %+v", contents[2].Parts[0])
	}
}

func TestErrorsKeepTheirMeaning(t *testing.T) {
	m, fake := newModel(t)
	c := basic(t)
	for _, tc := range []struct {
		reply  fakegemini.Reply
		status genui.Status
		retry  time.Duration
	}{
		{fakegemini.ErrorReply(fakegemini.RateLimited(23 * time.Second)), genui.StatusResourceExhausted, 23 * time.Second},
		{fakegemini.ErrorReply(fakegemini.Unavailable()), genui.StatusUnavailable, 0},
		{fakegemini.Reply{Chunks: []fakegemini.Chunk{fakegemini.Text("a"), fakegemini.Text("b")}, MidStream: &fakegemini.MidStreamFailure{After: 1}}, genui.StatusUnavailable, 0},
	} {
		fake.Enqueue(tc.reply)
		_, err := m.Generate(context.Background(), request(c, "x"), func(context.Context, *ai.Part) error { return nil })
		var e *genui.Error
		if !errors.As(err, &e) || e.Status != tc.status || e.RetryAfter != tc.retry {
			t.Errorf("%+v: got %v", tc.reply, err)
		}
	}
	// An endpoint that cannot be reached is UNAVAILABLE, so the turn retries it.
	fake.Close()
	_, err := m.Generate(context.Background(), request(c, "x"), func(context.Context, *ai.Part) error { return nil })
	var e *genui.Error
	if !errors.As(err, &e) || e.Status != genui.StatusUnavailable {
		t.Fatalf("unreachable: %v", err)
	}
	// Its message says why, not where: the endpoint's address stays in the cause.
	if cause := errors.Unwrap(e); e.Message != "the model could not be reached (connection refused); try again" || cause == nil || !strings.Contains(cause.Error(), "127.0.0.1") {
		t.Fatalf("unreachable: %q (cause %v)", e.Message, errors.Unwrap(e))
	}
}

// "Too many states" switches the catalog to the simplified tool schema, once and for good.
func TestSchemaRejectionSwitchesToTheSimplifiedSchema(t *testing.T) {
	m, fake := newModel(t)
	c := basic(t)
	fake.Enqueue(
		fakegemini.ErrorReply(&fakegemini.APIError{Code: 400, Message: "The specified schema produces a constraint that has too many states for serving."}),
		fakegemini.Respond(fakegemini.Text("ok")),
		fakegemini.Respond(fakegemini.Text("ok")),
	)
	for range 2 {
		if _, err := m.Generate(context.Background(), request(c, "x"), func(context.Context, *ai.Part) error { return nil }); err != nil {
			t.Fatal(err)
		}
	}
	reqs := fake.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d requests", len(reqs))
	}
	for i, r := range reqs {
		got, _ := json.Marshal(r.FunctionDeclarations()[0].ParametersJSONSchema)
		isSimple := strings.Contains(string(got), "as the catalog in the system prompt defines them")
		if (i > 0) != isSimple {
			t.Errorf("request %d: simplified=%v, %s", i, isSimple, got)
		}
	}
}

// With UnencryptedHTTP2, concurrent turns reach an http:// endpoint over HTTP/2 without
// TLS, all on the connection a first turn opened; without it, over HTTP/1.1, a
// connection each.
func TestUnencryptedHTTP2(t *testing.T) {
	for _, h2c := range []bool{true, false} {
		release := make(chan struct{})
		var warm atomic.Bool
		fake := fakegemini.New(fakegemini.WithResponder(func(*fakegemini.Request) fakegemini.Reply {
			if warm.Load() {
				<-release
			}
			return fakegemini.Respond(fakegemini.Text("ok"))
		}))
		m, err := gemini.New(context.Background(), gemini.Config{Name: "googleai/gemini-2.5-flash", APIKey: "k", BaseURL: fake.URL(),
			Logger: quiet, UnencryptedHTTP2: h2c})
		if err != nil {
			t.Fatal(err)
		}
		// A first turn opens the connection (turns that start together before it exists
		// may each dial one).
		var first []*ai.Part
		if _, err := m.Generate(context.Background(), request(basic(t), "hi"), collect(&first)); err != nil {
			t.Fatal(err)
		}
		warm.Store(true)
		const n = 8
		errs := make(chan error, n)
		for range n {
			go func() {
				var parts []*ai.Part
				_, err := m.Generate(context.Background(), request(basic(t), "hi"), collect(&parts))
				errs <- err
			}()
		}
		if err := fake.WaitRequests(context.Background(), n+1); err != nil {
			t.Fatal(err)
		}
		close(release)
		for range n {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		want, conns := "HTTP/1.1", n
		if h2c {
			want, conns = "HTTP/2.0", 1
		}
		for _, r := range fake.Requests() {
			if r.Proto != want {
				t.Fatalf("h2c %v: %s", h2c, r.Proto)
			}
		}
		if got := fake.Connections(); got != conns {
			t.Fatalf("h2c %v: %d connections for %d concurrent turns", h2c, got, n)
		}
		fake.Close()
	}
}
