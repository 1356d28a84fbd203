package wsapi_test

import (
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/policytest"
)

// TestPolicyCorpus runs each vector of the hostile corpus as a session's turn: the model
// writes what the policy refuses, then repairs it. Nothing of what the policy refuses
// reaches the client, the repair does, the turn ends normally, and the model's second
// call names the violation.
func TestPolicyCorpus(t *testing.T) {
	var genuiN, a2uiN int
	for _, v := range policytest.Corpus() {
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
			s := newServerWith(t, config{model: "googleai/gemini-2.5-flash", window: time.Minute,
				svc: []genui.Option{genui.WithPolicy(policytest.Policy())}})

			fake.Enqueue(v.Replies()...)
			params := `{"a2uiVersion":"` + v.Version + `"}`
			if !v.A2UI() {
				params = `{"catalog":` + v.CatalogJSON() + `}`
			}

			c := dial(t, s.URL)
			var received []string
			collect := func(res msg, before []msg) {
				for _, m := range before {
					received = append(received, m.raw)
				}
				received = append(received, res.raw)
			}
			res, before := c.call(1, "new_session", params)
			collect(res, before)
			if res.Error != nil {
				t.Fatalf("new_session: %s", res.raw)
			}
			sid, _ := res.Result["session_id"].(string)
			res, before = c.call(2, "prompt", `{"session_id":"`+sid+`","prompt":[{"type":"text","text":"Show me the picture"}]}`)
			collect(res, before)
			all := strings.Join(received, "\n")
			if res.raw != `{"jsonrpc":"2.0","id":2,"result":{"stop_reason":"end_turn"}}` {
				t.Fatalf("prompt: %s\nreceived:\n%s", res.raw, all)
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
	t.Logf("%d vectors over /ws (%d genui, %d A2UI)", genuiN+a2uiN, genuiN, a2uiN)
	if genuiN < 8 || a2uiN < 40 {
		t.Fatalf("%d genui and %d A2UI vectors ran, want at least 8 and 40", genuiN, a2uiN)
	}
}
