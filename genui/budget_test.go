package genui_test

import (
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/quota"
)

// A caller's turns start while its tokens are below its budget; the turn that crosses it
// completes and counts; the next is RESOURCE_EXHAUSTED with a retry hint until the
// window ends; another caller, whose own budget is set apart, is still served; Usage
// says what each used.
func TestTokenBudget(t *testing.T) {
	used := &ai.GenerationUsage{InputTokens: 70, OutputTokens: 40}
	m := &script{calls: []scripted{
		{parts: texts("one."), usage: used},
		{parts: texts("two."), usage: used},
		{parts: texts("bob's."), usage: used},
	}}
	svc := newService(t, m, genui.WithQuota(quota.New(quota.Limits{})),
		genui.WithTokenBudget(100), genui.WithCallerTokenBudget("key:bob", 1000))

	if _, err := svc.Generate(alice, request(t)); err != nil {
		t.Fatalf("alice's first turn: %v", err)
	}
	_, err := svc.Generate(alice, request(t))
	e := genui.AsError(err)
	d, _ := e.Details.(map[string]any)
	if e.Status != genui.StatusResourceExhausted || d["limit"] != "tokens" || e.RetryAfter <= 0 || e.RetryAfter > time.Hour || e.RetryAfterSeconds() < 1 {
		t.Fatalf("alice over her budget: %v (%v)", err, e.Details)
	}
	if _, err := svc.Generate(bob, request(t)); err != nil {
		t.Fatalf("bob, with a budget of his own: %v", err)
	}
	u, err := svc.Usage(alice)
	if err != nil || u.Input != 70 || u.Output != 40 || u.Budget != 100 || time.Until(u.ResetAt) > time.Hour {
		t.Errorf("alice's usage: %+v, %v", u, err)
	}
	if u, _ := svc.Usage(bob); u.Total() != 110 || u.Budget != 1000 {
		t.Errorf("bob's usage: %+v", u)
	}
}
