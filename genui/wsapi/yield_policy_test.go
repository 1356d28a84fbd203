package wsapi_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/policytest"
)

// TestPolicyCorpus runs each vector of the hostile corpus as an interaction's turn: the
// model writes what the policy refuses, then repairs it. Nothing of what the policy
// refuses reaches the client, the repair does, the turn ends with done, and the model's
// second call names the violation.
func TestYieldPolicyCorpus(t *testing.T) {
	var genuiN, a2uiN int
	for i, v := range policytest.Corpus() {
		t.Run(v.Name, func(t *testing.T) {
			if v.A2UI() {
				a2uiN++
			} else {
				genuiN++
			}
			fake := fakegemini.New()
			t.Cleanup(fake.Close)
			t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
			t.Setenv("GEMINI_API_KEY", "test-key")
			s := newYieldServerWith(t, yieldConfig{model: "googleai/gemini-2.5-flash", window: time.Minute,
				svc: []genui.Option{genui.WithPolicy(policytest.Policy())}})

			const conversation = `"conversation":[{"role":"user","parts":[{"type":"text","text":"Show me the picture"}]}]`
			fake.Enqueue(v.Replies()...)
			init := `{"type":"init","graphId":"generateA2ui","input":{"version":"` + v.Version + `",` + conversation + `}}`
			if !v.A2UI() {
				init = `{"type":"init","graphId":"generateUi","input":{"catalog":` + v.CatalogJSON() + `,` + conversation + `}}`
			}

			c := dialYield(t, s.URL, fmt.Sprintf("policy-vector-%d", i))
			c.send(init)
			end, before := c.until("done", "error", "yield")
			received := make([]string, 0, len(before)+1)
			for _, m := range before {
				received = append(received, m.raw)
			}
			received = append(received, end.raw)
			all := strings.Join(received, "\n")
			if end.Type != "done" || end.Result["finishReason"] != "stop" {
				t.Fatalf("end: %s\nreceived:\n%s", end.raw, all)
			}
			for _, m := range received {
				if strings.Contains(m, policytest.Needle) {
					t.Fatalf("what the policy refuses reached the client: %s", m)
				}
			}
			if !strings.Contains(all, policytest.Safe) {
				t.Fatalf("the repair did not reach the client:\n%s", all)
			}
			if err := v.CheckRepair(fake.Requests()); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Logf("%d vectors over /session (%d genui, %d A2UI)", genuiN+a2uiN, genuiN, a2uiN)
	if genuiN < 8 || a2uiN < 40 {
		t.Fatalf("%d genui and %d A2UI vectors ran, want at least 8 and 40", genuiN, a2uiN)
	}
}
