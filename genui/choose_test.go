package genui_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/metrics"
	"github.com/genuiserver/genui/schemas"
)

// named is a model of a given name that answers every call with a text and 10+5 tokens,
// counting its calls; servedBy, when set, is the model it says served the call (as a
// fallback chain says).
type named struct {
	name     string
	servedBy string
	calls    atomic.Int32
}

func (m *named) Name() string { return m.name }

func (m *named) Generate(ctx context.Context, _ *genui.ModelRequest, onPart func(context.Context, *ai.Part) error) (*ai.ModelResponse, error) {
	m.calls.Add(1)
	p := ai.NewTextPart("from " + m.name)
	if err := onPart(ctx, p); err != nil {
		return nil, err
	}
	if m.servedBy != "" {
		genui.ServedBy(ctx, m.servedBy)
	}
	return &ai.ModelResponse{Message: &ai.Message{Role: ai.RoleModel, Content: []*ai.Part{p}}, FinishReason: ai.FinishReasonStop,
		Usage: &ai.GenerationUsage{InputTokens: 10, OutputTokens: 5, TotalTokens: 15}}, nil
}

// A request names one of the models the service allows, or none for the default; a
// model it does not allow is INVALID_ARGUMENT naming model and listing the choices; a
// caller with models of its own has its own default and choices.
func TestRequestChoosesTheModel(t *testing.T) {
	a, b, c := &named{name: "test/a"}, &named{name: "test/b"}, &named{name: "test/c"}
	svc := newService(t, a, genui.WithModels(b), genui.WithCallerModels("key:alice", c, c))
	turn := func(ctx context.Context, model string) (string, *genui.Error) {
		t.Helper()
		req := request(t)
		req.Model = model
		res, err := svc.Generate(ctx, req)
		if err != nil {
			return "", genui.AsError(err)
		}
		return res.Usage.Model, nil
	}
	for _, tc := range []struct {
		ctx        context.Context
		model, got string
	}{
		{context.Background(), "", "test/a"},
		{context.Background(), "test/a", "test/a"},
		{context.Background(), "test/b", "test/b"},
		{bob, "test/b", "test/b"},
		{alice, "", "test/c"},
		{alice, "test/c", "test/c"},
	} {
		if got, e := turn(tc.ctx, tc.model); e != nil || got != tc.got {
			t.Errorf("model %q: served by %q, %v; want %q", tc.model, got, e, tc.got)
		}
	}
	for _, tc := range []struct {
		ctx          context.Context
		model, words string
	}{
		{context.Background(), "test/c", `model: "test/c" is not a model this server lets you choose; expected one of: test/a, test/b`},
		{alice, "test/b", `model: "test/b" is not a model this server lets you choose; expected one of: test/c`},
		{context.Background(), strings.Repeat("x", 300), "model: must be a model's name of at most 256 bytes"},
	} {
		_, e := turn(tc.ctx, tc.model)
		if e == nil || e.Status != genui.StatusInvalidArgument || !strings.HasPrefix(e.Message, tc.words) || e.Details.(map[string]any)["field"] != "model" {
			t.Errorf("model %.20q: %v; want INVALID_ARGUMENT %q", tc.model, e, tc.words)
		}
	}
	if got := svc.Models(alice); strings.Join(got, ",") != "test/c" {
		t.Errorf("alice's models: %q", got)
	}
	if got := svc.Models(bob); strings.Join(got, ",") != "test/a,test/b" {
		t.Errorf("bob's models: %q", got)
	}
	if a.calls.Load() != 2 || b.calls.Load() != 2 || c.calls.Load() != 2 {
		t.Errorf("calls: a %d, b %d, c %d", a.calls.Load(), b.calls.Load(), c.calls.Load())
	}
}

// A held conversation keeps the model its last turn used: the one its first request
// named, until a request names another; a model no longer served gives way to the
// default.
func TestHeldConversationKeepsItsModel(t *testing.T) {
	store := conversation.NewMemory(100, 0, time.Hour)
	a, b := &named{name: "test/a"}, &named{name: "test/b"}
	svc := newService(t, a, genui.WithModels(b), genui.WithConversations(store))
	for i, step := range []struct{ model, served string }{{"test/b", "test/b"}, {"", "test/b"}, {"test/a", "test/a"}, {"", "test/a"}, {"test/b", "test/b"}} {
		req := heldRequest(t, text("turn"))
		req.Model = step.model
		res, e := generate(t, svc, req)
		if e != nil || res.Usage.Model != step.served {
			t.Fatalf("turn %d naming %q: %v %v; want %s", i+1, step.model, res, e, step.served)
		}
		if st := stored(t, store, convID); st.Model != step.served {
			t.Fatalf("turn %d: the conversation keeps %q", i+1, st.Model)
		}
	}
	// The server no longer serves test/b: the conversation's next turn gets the default.
	again := newService(t, a, genui.WithConversations(store))
	if res, e := generate(t, again, heldRequest(t, text("turn"))); e != nil || res.Usage.Model != "test/a" {
		t.Fatalf("after test/b is gone: %v %v", res, e)
	}
}

// A session's model: its spec's for its first turn, then what the last turn used; set
// with SetSessionModel, or named by a turn.
func TestSessionModel(t *testing.T) {
	a, b := &named{name: "test/a"}, &named{name: "test/b"}
	svc := newService(t, a, genui.WithModels(b))
	ctx := context.Background()
	spec := &genui.SessionSpec{Generate: request(t)}
	spec.Generate.Model = "test/b"
	if err := svc.OpenSession(ctx, "session-0001", spec); err != nil {
		t.Fatal(err)
	}
	turn := func(opts ...genui.TurnOption) string {
		t.Helper()
		st, err := svc.SessionTurn(ctx, "session-0001", []schemas.Message{{Role: "user", Parts: []schemas.Part{text("go")}}}, opts...)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		model := ""
		if err := st.Each(ctx, func(it genui.Item) error {
			if it.Err != nil {
				return it.Err
			}
			if it.Result != nil {
				model = resultModel(t, it.Result)
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return model
	}
	if got := turn(); got != "test/b" {
		t.Errorf("first turn: %q; want the spec's test/b", got)
	}
	if got := turn(genui.WithTurnModel("test/a")); got != "test/a" {
		t.Errorf("a turn naming test/a: %q", got)
	}
	if got := turn(); got != "test/a" {
		t.Errorf("the turn after: %q; want test/a, kept", got)
	}
	if err := svc.SetSessionModel(ctx, "session-0001", "test/b"); err != nil {
		t.Fatal(err)
	}
	if got := turn(); got != "test/b" {
		t.Errorf("after SetSessionModel: %q", got)
	}
	if e := genui.AsError(svc.SetSessionModel(ctx, "session-0001", "test/z")); e.Status != genui.StatusInvalidArgument || e.Details.(map[string]any)["field"] != "model" {
		t.Errorf("SetSessionModel of an unknown model: %v", e)
	}
}

func resultModel(t *testing.T, raw []byte) string {
	t.Helper()
	var r schemas.Result
	if err := json.Unmarshal(raw, &r); err != nil || r.Usage == nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	return r.Usage.Model
}

// A model that passes a call on (a fallback chain) says which model served it: the
// usage and the token metrics name that one; callers are labelled by what configuration
// names.
func TestUsageNamesTheServingModel(t *testing.T) {
	m := metrics.New()
	chain := &named{name: "test/first", servedBy: "test/second"}
	svc := newService(t, chain, genui.WithMetrics(m), genui.WithCallerTokenBudget("jwt:iss|carol", 0))
	carol := auth.NewContext(context.Background(), auth.Caller{ID: "jwt:iss|carol", Method: auth.MethodJWT})
	dave := auth.NewContext(context.Background(), auth.Caller{ID: "jwt:iss|dave", Method: auth.MethodJWT})
	for _, ctx := range []context.Context{context.Background(), alice, carol, dave} {
		res, err := svc.Generate(ctx, request(t))
		if err != nil || res.Usage.Model != "test/second" || res.Usage.InputTokens != 10 {
			t.Fatalf("%v %v", res, err)
		}
	}
	for _, caller := range []string{"anonymous", "key:alice", "jwt:iss|carol", "other"} {
		in := labelled(t, m, "genui_tokens_total", map[string]string{"caller": caller, "model": "test/second", "kind": "input"})
		out := labelled(t, m, "genui_tokens_total", map[string]string{"caller": caller, "model": "test/second", "kind": "output"})
		if in != 10 || out != 5 {
			t.Errorf("genui_tokens_total of %s: input %v, output %v", caller, in, out)
		}
	}
}

// labelled reads the counter name of the labels from m.
func labelled(t *testing.T, m *metrics.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
	metric:
		for _, mt := range f.GetMetric() {
			if len(mt.GetLabel()) != len(labels) {
				continue
			}
			for _, l := range mt.GetLabel() {
				if labels[l.GetName()] != l.GetValue() {
					continue metric
				}
			}
			return mt.GetCounter().GetValue()
		}
	}
	return 0
}
