package genui_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/schemas"
)

// script is a model answering each call with the next scripted response: text parts
// streamed one by one (a nil response with err fails the call before anything streams).
type script struct {
	mu    sync.Mutex
	calls []scripted
	reqs  []*genui.ModelRequest
	// noStream gives the parts only in the final response.
	noStream bool
}

type scripted struct {
	parts  []*ai.Part
	err    error
	wait   <-chan struct{} // held before the last part
	finish ai.FinishReason // default stop
	usage  *ai.GenerationUsage
}

func (*script) Name() string { return "test/script" }

func (s *script) Generate(ctx context.Context, req *genui.ModelRequest, onPart func(context.Context, *ai.Part) error) (*ai.ModelResponse, error) {
	s.mu.Lock()
	s.reqs = append(s.reqs, req)
	if len(s.calls) == 0 {
		s.mu.Unlock()
		return nil, errors.New("no more scripted responses")
	}
	c := s.calls[0]
	s.calls = s.calls[1:]
	s.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	msg := &ai.Message{Role: ai.RoleModel, Content: c.parts}
	if !s.noStream {
		for i, p := range c.parts {
			if i == len(c.parts)-1 && c.wait != nil {
				select {
				case <-c.wait:
				case <-ctx.Done():
					return nil, ctx.Err()
				}
			}
			if err := onPart(ctx, p); err != nil {
				return nil, err
			}
		}
	}
	finish := c.finish
	if finish == "" {
		finish = ai.FinishReasonStop
	}
	return &ai.ModelResponse{Message: msg, FinishReason: finish, Usage: c.usage}, nil
}

func texts(ss ...string) []*ai.Part {
	out := make([]*ai.Part, len(ss))
	for i, s := range ss {
		out[i] = ai.NewTextPart(s)
	}
	return out
}

const basic = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"

var helloSurface = texts("Hi.\n```a2ui\n",
	`{"createSurface":{"surfaceId":"s","catalogId":"`+basic+`"}}`+"\n",
	`{"updateComponents":{"surfaceId":"s","components":[`+"\n",
	`{"id":"root","component":"Column","children":["t"]},`+"\n",
	`{"id":"t","component":"Text","text":"Hello"}`+"\n",
	"]}}\n```\n")

func a2uiRequest(text string) *schemas.GenerateA2UIRequest {
	return &schemas.GenerateA2UIRequest{Conversation: []schemas.Message{{Role: "user", Parts: []schemas.Part{{Type: "text", Text: text}}}}}
}

// collect runs a streamed A2UI turn and returns its A2UI messages and its final item.
func collect(t *testing.T, svc *genui.Service, req *schemas.GenerateA2UIRequest) ([][]byte, genui.Item) {
	t.Helper()
	st, err := svc.StreamA2UI(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var msgs [][]byte
	var last genui.Item
	if err := st.Each(context.Background(), func(it genui.Item) error {
		if it.Event != nil && it.Event.Type == schemas.EventA2UI {
			msgs = append(msgs, it.Event.A2UI)
		}
		last = it
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return msgs, last
}

// A tool call in an A2UI turn is not A2UI: the model is told so and writes the surface.
func TestA2UIToolCallIsRepaired(t *testing.T) {
	m := &script{calls: []scripted{
		{parts: []*ai.Part{ai.NewToolRequestPart(&ai.ToolRequest{Name: "render_a2ui", Input: map[string]any{}})}},
		{parts: helloSurface},
	}}
	svc := newService(t, m)
	msgs, last := collect(t, svc, a2uiRequest("hello"))
	if last.Err != nil || len(msgs) != 3 {
		t.Fatalf("%d messages, end %+v", len(msgs), last)
	}
	a2uitest.New(t, "v0.9", nil).CheckAll(t, msgs...)
	if len(m.reqs) != 2 || m.reqs[0].Tools != nil {
		t.Fatalf("%d model calls; tools %v", len(m.reqs), m.reqs[0].Tools)
	}
	// The call is answered by a function response, as the model's API requires.
	answer := m.reqs[1].Messages[len(m.reqs[1].Messages)-1]
	b, _ := json.Marshal(answer)
	if answer.Role != ai.RoleTool || len(answer.Content) != 1 || !answer.Content[0].IsToolResponse() || !strings.Contains(string(b), `there is no tool \"render_a2ui\"`) {
		t.Fatalf("the repair request: %s", b)
	}
}

// A model call that fails before anything of it reached the client is retried.
func TestA2UIRetriesBeforeAnythingStreamed(t *testing.T) {
	m := &script{calls: []scripted{
		{err: &genui.Error{Status: genui.StatusUnavailable, Message: "overloaded"}},
		{parts: helloSurface},
	}}
	svc := newService(t, m, genui.WithRetry(2, time.Second))
	msgs, last := collect(t, svc, a2uiRequest("hello"))
	if last.Err != nil || len(msgs) != 3 || len(m.reqs) != 2 {
		t.Fatalf("%d messages, %d calls, end %+v", len(msgs), len(m.reqs), last)
	}
}

// A model that gives its text only with its final response still yields the surface.
func TestA2UIModelThatDoesNotStream(t *testing.T) {
	m := &script{noStream: true, calls: []scripted{{parts: helloSurface}}}
	svc := newService(t, m)
	msgs, last := collect(t, svc, a2uiRequest("hello"))
	if last.Err != nil || len(msgs) != 3 {
		t.Fatalf("%d messages, end %+v", len(msgs), last)
	}
	res, err := svc.GenerateA2UI(context.Background(), a2uiRequest("hello"))
	if err == nil || res != nil {
		t.Fatalf("the script is exhausted; want an error, got %v", res)
	}
}

// GenerateA2UI returns the turn's surfaces in the result's A2UI data part, each in its
// final state: its createSurface and one update of its components.
func TestGenerateA2UIResult(t *testing.T) {
	m := &script{calls: []scripted{{parts: helloSurface}}}
	svc := newService(t, m)
	res, err := svc.GenerateA2UI(context.Background(), a2uiRequest("hello"))
	if err != nil {
		t.Fatal(err)
	}
	c := res.Message.Content
	if len(c) != 2 || c[0].Text != "Hi.\n" || c[1].Data == nil || len(c[1].Data.Envelopes) != 2 || c[1].Metadata["mimeType"] != schemas.A2UIMimeType {
		t.Fatalf("result content %+v", c)
	}
}

// Cancelling a turn mid-surface leaves the client a valid partial surface and ends the
// stream with CANCELLED.
func TestA2UICancelMidSurface(t *testing.T) {
	hold := make(chan struct{})
	m := &script{calls: []scripted{{parts: helloSurface, wait: hold}}}
	svc := newService(t, m)
	st, err := svc.StreamA2UI(context.Background(), a2uiRequest("hello"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var msgs [][]byte
	var last genui.Item
	done := make(chan error, 1)
	go func() {
		done <- st.Each(context.Background(), func(it genui.Item) error {
			if it.Event != nil && it.Event.Type == schemas.EventA2UI {
				msgs = append(msgs, it.Event.A2UI)
				if len(msgs) == 3 {
					// The root and its child are out; the block has not ended.
					go func() { _ = svc.Cancel(context.Background(), st.ID()) }()
				}
			}
			last = it
			return nil
		})
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if last.Err == nil || last.Err.Status != genui.StatusCancelled {
		t.Fatalf("end %+v", last)
	}
	a2uitest.New(t, "v0.9", nil).CheckAll(t, msgs...)
}
