package genui_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/metrics"
	"github.com/genuiserver/genui/policy"
	"github.com/genuiserver/genui/schemas"
)

// imageSurface is an addOrUpdateSurface call showing an image of the basic catalog.
func imageSurface(url string) *ai.Part {
	return callPart("addOrUpdateSurface", map[string]any{"surfaceId": "s1", "definition": map[string]any{
		"root": "i", "widgets": []any{map[string]any{"id": "i", "widget": map[string]any{"Image": map[string]any{"url": url}}}}}})
}

// Each caller's turns follow its own policy: a host one caller may show is refused to
// another; the system prompt states the policy of the turn's caller; every refusal is
// counted by rule; a service without a policy lets the URL through.
func TestCallerPolicies(t *testing.T) {
	partner, err := policy.New(policy.WithHosts("*.partner.example"))
	if err != nil {
		t.Fatal(err)
	}
	def, err := policy.New(policy.WithHosts("example.com"))
	if err != nil {
		t.Fatal(err)
	}
	url := "https://img.partner.example/a.png"
	run := func(ctx context.Context, opts ...genui.Option) (*script, []genui.Item, *metrics.Metrics) {
		m := &script{calls: []scripted{{parts: []*ai.Part{imageSurface(url)}}, {parts: []*ai.Part{imageSurface("https://example.com/b.png")}}}}
		met := metrics.New()
		svc := newService(t, m, append(opts, genui.WithMetrics(met))...)
		st, err := svc.Stream(ctx, request(t))
		if err != nil {
			t.Fatal(err)
		}
		return m, readAll(t, st), met
	}
	surfaces := func(items []genui.Item) string {
		var out []string
		for _, it := range items {
			if it.Event != nil && it.Event.ToolRequest != nil {
				out = append(out, string(it.Event.ToolRequest.Input))
			}
		}
		return strings.Join(out, "\n")
	}
	opts := []genui.Option{genui.WithPolicy(def), genui.WithCallerPolicy("key:bob", partner)}

	m, items, met := run(bob, opts...)
	if got := surfaces(items); !strings.Contains(got, url) || len(m.reqs) != 1 {
		t.Fatalf("bob's policy allows the partner's host: %s (%d model calls)", got, len(m.reqs))
	}
	if sys := m.reqs[0].System.String(); !strings.Contains(sys, "hosts only *.partner.example") {
		t.Errorf("bob's system prompt does not state his policy:\n%s", sys)
	}

	m, items, met = run(alice, opts...)
	if got := surfaces(items); strings.Contains(got, url) || !strings.Contains(got, "https://example.com/b.png") || len(m.reqs) != 2 {
		t.Fatalf("alice's turn: %s (%d model calls)", got, len(m.reqs))
	}
	if sys := m.reqs[0].System.String(); !strings.Contains(sys, "hosts only example.com") {
		t.Errorf("alice's system prompt does not state the default policy:\n%s", sys)
	}
	b, _ := json.Marshal(m.reqs[1].Messages[len(m.reqs[1].Messages)-1])
	if !strings.Contains(string(b), `"code":"unsafe_url"`) || strings.Contains(string(b), "img.partner") {
		t.Errorf("the repair request: %s", b)
	}
	fams, _ := met.Gatherer().Gather()
	counted := false
	for _, f := range fams {
		if f.GetName() == "genui_policy_violations_total" {
			for _, mt := range f.GetMetric() {
				counted = counted || mt.GetLabel()[0].GetValue() == "unsafe_url" && mt.GetCounter().GetValue() == 1
			}
		}
	}
	if !counted {
		t.Error("genui_policy_violations_total{rule=\"unsafe_url\"} is not 1")
	}

	// No policy: the URL passes, as before the policy existed.
	m, items, _ = run(alice, genui.WithPolicy(nil))
	if got := surfaces(items); !strings.Contains(got, url) || len(m.reqs) != 1 || strings.Contains(m.reqs[0].System.String(), "UI policy") {
		t.Fatalf("without a policy: %s (%d model calls)", got, len(m.reqs))
	}
}

// What a model still writes after its repairs ends the turn with FAILED_PRECONDITION:
// the violations with their rule, and never the URL.
func TestPolicyFailure(t *testing.T) {
	bad := imageSurface("javascript:alert('PWN')")
	m := &script{calls: []scripted{{parts: []*ai.Part{bad}}, {parts: []*ai.Part{bad}}, {parts: []*ai.Part{bad}}}}
	svc := newService(t, m)
	st, err := svc.Stream(context.Background(), request(t))
	if err != nil {
		t.Fatal(err)
	}
	items := readAll(t, st)
	last := items[len(items)-1]
	for _, it := range items {
		if it.Event != nil && it.Event.Type == schemas.EventToolRequest {
			t.Fatalf("a refused surface reached the client: %s", it.Event.ToolRequest.Input)
		}
	}
	if last.Err == nil || last.Err.Status != genui.StatusFailedPrecondition ||
		!strings.Contains(last.Err.Message, "the UI policy refuses") || !strings.Contains(last.Err.Message, "[unsafe_url]") || strings.Contains(last.Err.Message, "PWN") {
		t.Fatalf("the turn ended with %+v", last.Err)
	}
}
