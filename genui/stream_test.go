package genui_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/durable"
	"github.com/genuiserver/genui/schemas"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// surfaces is a model answering every call with n valid surfaces of the basic catalog.
type surfaces int

func (surfaces) Name() string { return "test/surfaces" }

func (n surfaces) Generate(ctx context.Context, _ *genui.ModelRequest, onPart func(context.Context, *ai.Part) error) (*ai.ModelResponse, error) {
	msg := &ai.Message{Role: ai.RoleModel}
	for i := range int(n) {
		p := ai.NewToolRequestPart(&ai.ToolRequest{Name: "addOrUpdateSurface", Input: map[string]any{
			"surfaceId": fmt.Sprint("s", i),
			"definition": map[string]any{"root": "t", "widgets": []any{
				map[string]any{"id": "t", "widget": map[string]any{"Text": map[string]any{"text": "hello <&>"}}}}},
		}})
		msg.Content = append(msg.Content, p)
		if err := onPart(ctx, p); err != nil {
			return nil, err
		}
	}
	return &ai.ModelResponse{Message: msg, FinishReason: ai.FinishReasonStop}, nil
}

// modelFunc adapts a function to genui.Model.
type modelFunc func(ctx context.Context) (*ai.ModelResponse, error)

func (modelFunc) Name() string { return "test/func" }

func (f modelFunc) Generate(ctx context.Context, _ *genui.ModelRequest, _ func(context.Context, *ai.Part) error) (*ai.ModelResponse, error) {
	return f(ctx)
}

func newService(t testing.TB, m genui.Model, opts ...genui.Option) *genui.Service {
	t.Helper()
	svc, err := genui.New(genkit.Init(context.Background()), m, append([]genui.Option{genui.WithLogger(quiet)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func request(t testing.TB) *schemas.GenerateRequest {
	t.Helper()
	c, err := schemas.SampleCatalog("basic")
	if err != nil {
		t.Fatal(err)
	}
	return &schemas.GenerateRequest{Catalog: schemas.CatalogOf(c), Conversation: []schemas.Message{{Role: "user", Parts: []schemas.Part{{Type: "text", Text: "Hello"}}}}}
}

func readAll(t testing.TB, st *genui.Stream) []genui.Item {
	t.Helper()
	defer st.Close()
	var items []genui.Item
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := st.Each(ctx, func(it genui.Item) error {
		items = append(items, it)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return items
}

func TestStreamEndsWithTheResult(t *testing.T) {
	svc := newService(t, surfaces(3))
	st, err := svc.Stream(context.Background(), request(t))
	if err != nil {
		t.Fatal(err)
	}
	items := readAll(t, st)
	if len(items) != 4 || items[0].Event.ToolRequest.Ref != "0" || items[2].Event.ToolRequest.Ref != "2" || items[3].Seq != 4 {
		t.Fatalf("%+v", items)
	}
	// The input is stored as it was encoded once, HTML characters included.
	if got := string(items[1].Event.ToolRequest.Input); got != `{"definition":{"root":"t","widgets":[{"id":"t","widget":{"Text":{"text":"hello <&>"}}}]},"surfaceId":"s1"}` {
		t.Fatalf("input %s", got)
	}
	// The result leaves out the tool requests the stream carried.
	if got := string(items[3].Result); got != `{"message":{"role":"model","content":[]},"finishReason":"stop","usage":{"modelCalls":1,"model":"test/surfaces"}}` {
		t.Fatalf("result %s", got)
	}
	// Resuming after two items gives the rest; the whole turn ran once.
	again, err := svc.Resume(context.Background(), st.ID(), 2)
	if err != nil {
		t.Fatal(err)
	}
	if rest := readAll(t, again); len(rest) != 2 || rest[0].Seq != 3 || rest[1].Result == nil {
		t.Fatalf("%+v", rest)
	}
	if s := svc.Stats().Streamed.Load(); s != 3 {
		t.Fatalf("streamed %d", s)
	}
}

func TestUnknownStreamIsNotFound(t *testing.T) {
	svc := newService(t, surfaces(1))
	_, err := svc.Resume(context.Background(), "nope", 0)
	var e *genui.Error
	if !errors.As(err, &e) || e.Status != genui.StatusNotFound || !errors.Is(err, durable.ErrStreamNotFound) {
		t.Fatalf("%v", err)
	}
	if err := svc.Cancel(context.Background(), "nope"); !errors.As(err, &e) || e.Status != genui.StatusNotFound {
		t.Fatalf("%v", err)
	}
}

func TestPanicInATurnEndsTheStreamWithAnError(t *testing.T) {
	svc := newService(t, modelFunc(func(context.Context) (*ai.ModelResponse, error) { panic("boom") }))
	st, err := svc.Stream(context.Background(), request(t))
	if err != nil {
		t.Fatal(err)
	}
	items := readAll(t, st)
	if len(items) != 1 || items[0].Err == nil || items[0].Err.Status != genui.StatusInternal || strings.Contains(items[0].Err.Message, "boom") {
		t.Fatalf("%+v", items)
	}
}

func TestShutdownCancelsTurnsAfterTheDeadline(t *testing.T) {
	svc := newService(t, modelFunc(func(ctx context.Context) (*ai.ModelResponse, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	st, err := svc.Stream(context.Background(), request(t))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		svc.Shutdown(ctx)
	}()
	items := readAll(t, st)
	if len(items) != 1 || items[0].Err == nil || items[0].Err.Status != genui.StatusUnavailable {
		t.Fatalf("%+v", items)
	}
}

func TestCancelEndsTheStream(t *testing.T) {
	svc := newService(t, modelFunc(func(ctx context.Context) (*ai.ModelResponse, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}))
	st, err := svc.Stream(context.Background(), request(t))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		time.Sleep(50 * time.Millisecond)
		if err := svc.Cancel(context.Background(), st.ID()); err != nil {
			t.Error(err)
		}
	}()
	items := readAll(t, st)
	if len(items) != 1 || items[0].Err == nil || items[0].Err.Status != genui.StatusCancelled {
		t.Fatalf("%+v", items)
	}
}

// BenchmarkStreamEvent measures what the durable path adds per streamed event: the record
// encoded once, stored, the reader woken, the record decoded (in-memory log). The model
// emits 100 surfaces per turn; validating them is included.
func BenchmarkStreamEvent(b *testing.B) {
	const perTurn = 100
	svc := newService(b, surfaces(perTurn))
	req := request(b)
	b.ReportAllocs()
	b.ResetTimer()
	for n := 0; n < b.N; n += perTurn {
		st, err := svc.Stream(context.Background(), req)
		if err != nil {
			b.Fatal(err)
		}
		if items := readAll(b, st); len(items) != perTurn+1 {
			b.Fatalf("%d items", len(items))
		}
	}
}

// Unread counts the turns that go on with no client reading their stream: in their grace
// period, until they are cancelled.
func TestUnreadCountsStreamsInTheirGracePeriod(t *testing.T) {
	svc := newService(t, modelFunc(func(ctx context.Context) (*ai.ModelResponse, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	}), genui.WithGrace(1200*time.Millisecond))
	st, err := svc.Stream(context.Background(), request(t))
	if err != nil {
		t.Fatal(err)
	}
	reading, leave := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- st.Each(reading, func(genui.Item) error { return nil }) }()
	until := func(what string, cond func() bool) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: Unread() = %d, Running() = %d", what, svc.Unread(), svc.Running())
			}
		}
	}
	until("the turn runs", func() bool { return svc.Running() == 1 })
	time.Sleep(700 * time.Millisecond) // the watch loop looks at least once
	if n := svc.Unread(); n != 0 {
		t.Fatalf("a stream its client reads: Unread() = %d", n)
	}
	leave()
	until("the client left", func() bool { return svc.Unread() == 1 })
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the turn was not cancelled after the grace period")
	}
	until("the turn ended", func() bool { return svc.Unread() == 0 && svc.Running() == 0 })
}

// flakyLog fails the first tries of each stream's final record with fail, after storing
// it or not.
type flakyLog struct {
	durable.Log
	fail  error
	tries int // how many tries fail; the rest succeed
	store bool
}

func (l *flakyLog) Create(ctx context.Context, id string) (durable.Producer, error) {
	p, err := l.Log.Create(ctx, id)
	return &flakyProducer{Producer: p, log: l}, err
}

type flakyProducer struct {
	durable.Producer
	log    *flakyLog
	failed int
	stored bool
}

func (p *flakyProducer) Append(ctx context.Context, data []byte, final bool) error {
	if !final || p.failed >= p.log.tries {
		if p.stored {
			return nil // the failed try stored it
		}
		return p.Producer.Append(ctx, data, final)
	}
	p.failed++
	if p.log.store && !p.stored {
		p.stored = true
		if err := p.Producer.Append(ctx, data, final); err != nil {
			return err
		}
	}
	return p.log.fail
}

// A stream's end is told only once stored: while the log is unavailable (a Redis
// failover) it is tried again; if it cannot be stored, the client is told the error,
// not a result a resume could not read.
func TestStreamEndIsToldOnceStored(t *testing.T) {
	unavailable := fmt.Errorf("stream log unavailable: %w", durable.ErrUnavailable)
	for _, tc := range []struct {
		name   string
		log    *flakyLog
		result bool
	}{
		{"unavailable twice", &flakyLog{fail: unavailable, tries: 2}, true},
		{"stored, answer lost", &flakyLog{fail: unavailable, tries: 1, store: true}, true},
		{"failed", &flakyLog{fail: errors.New("the log refused it"), tries: 1}, false},
		{"lost", &flakyLog{fail: fmt.Errorf("%w: the stream is no longer running", durable.ErrStreamNotFound), tries: 1}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.log.Log = durable.NewMemoryLog(time.Minute)
			svc := newService(t, surfaces(1), genui.WithStreams(tc.log))
			st, err := svc.Stream(context.Background(), request(t))
			if err != nil {
				t.Fatal(err)
			}
			items := readAll(t, st)
			if len(items) != 2 {
				t.Fatalf("%+v", items)
			}
			if got := items[1].Result != nil; got != tc.result {
				t.Fatalf("told a result: %v, want %v (%+v)", got, tc.result, items[1])
			}
			// A stream the log lost is as retryable as a log out of reach.
			if e := items[1].Err; tc.name == "lost" && (e == nil || e.Status != genui.StatusUnavailable) {
				t.Fatalf("a lost stream ended with %+v", e)
			}
			again, err := svc.Resume(context.Background(), st.ID(), 1)
			if err != nil {
				t.Fatal(err)
			}
			rest := readAll(t, again)
			if tc.result && (len(rest) != 1 || string(rest[0].Result) != string(items[1].Result)) {
				t.Fatalf("resumed: %+v", rest)
			}
			if !tc.result && (len(rest) != 1 || rest[0].Err == nil) {
				t.Fatalf("resumed: %+v", rest)
			}
		})
	}
}
