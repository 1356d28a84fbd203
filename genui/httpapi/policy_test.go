package httpapi_test

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/policytest"
)

// vectorAsk is the user message of the turn of vector i; the fake model knows the vector
// by it.
func vectorAsk(i int) string { return fmt.Sprintf("vector-%d: show me a picture", i) }

var vectorAskRE = regexp.MustCompile(`^vector-(\d+):`)

// vectorOf returns the vector a model call is for, or -1.
func vectorOf(req *fakegemini.Request) int {
	contents := req.Contents()
	if len(contents) == 0 || len(contents[0].Parts) == 0 {
		return -1
	}
	m := vectorAskRE.FindStringSubmatch(contents[0].Parts[0].Text)
	if m == nil {
		return -1
	}
	i, _ := strconv.Atoi(m[1])
	return i
}

// TestPolicyCorpus runs every vector of the hostile corpus through the HTTP API on the
// real genai client: what the policy refuses never reaches the client, the model is told
// the violation and repairs it, and the repair does reach the client.
func TestPolicyCorpus(t *testing.T) {
	corpus := policytest.Corpus()
	// The model writes the vector's output when its conversation is the user's message
	// alone, and the repair once it holds more (its output and the violations).
	respond := func(req *fakegemini.Request) fakegemini.Reply {
		i := vectorOf(req)
		if i < 0 || i >= len(corpus) {
			return fakegemini.Respond(fakegemini.Text("no vector"))
		}
		replies := corpus[i].Replies()
		if len(req.Contents()) == 1 {
			return replies[0]
		}
		return replies[1]
	}
	base, fake := newGeminiServer(t, []fakegemini.Option{fakegemini.WithResponder(respond)}, genui.WithPolicy(policytest.Policy()))

	// Every A2UI vector shows surface "s" of its version's one catalog, so a validator per
	// version judges each vector's messages as a fresh one would, without compiling the
	// specification's schemas again for each.
	validators := map[string]*a2uiValidator{"v0.9": {v: a2uitest.New(t, "v0.9", nil)}, "v0.8": {v: a2uitest.New(t, "v0.8", nil)}}

	var genuiRan, a2uiRan atomic.Int64
	t.Run("vectors", func(t *testing.T) {
		for i, v := range corpus {
			t.Run(v.Name, func(t *testing.T) {
				t.Parallel()
				if v.A2UI() {
					runA2UIVector(t, base, i, v, validators[v.Version])
				} else {
					runGenUIVector(t, base, i, v)
				}

				var reqs []*fakegemini.Request
				for _, req := range fake.Requests() {
					if vectorOf(req) == i {
						reqs = append(reqs, req)
					}
				}
				if err := v.CheckRepair(reqs); err != nil {
					t.Fatal(err)
				}
				if v.A2UI() {
					a2uiRan.Add(1)
					return
				}
				genuiRan.Add(1)
			})
		}
	})
	t.Logf("%d vectors over /generateUi, %d over /generateA2ui", genuiRan.Load(), a2uiRan.Load())
	if genuiRan.Load() < 8 || a2uiRan.Load() < 40 {
		t.Fatalf("too few vectors ran: %d over /generateUi (want at least 8), %d over /generateA2ui (want at least 40)", genuiRan.Load(), a2uiRan.Load())
	}
}

// a2uiValidator is a validator the parallel vectors share.
type a2uiValidator struct {
	mu sync.Mutex
	v  *a2uitest.Validator
}

// runA2UIVector sends vector i through POST /generateA2ui.
func runA2UIVector(t *testing.T, base string, i int, v policytest.Vector, val *a2uiValidator) {
	t.Helper()
	req := `{"conversation":` + userText(vectorAsk(i)) + `}`
	if v.Version == "v0.8" {
		req = `{"version":"v0.8","conversation":` + userText(vectorAsk(i)) + `}`
	}
	r := post(t, base+"/generateA2ui", nil, req)
	if strings.Contains(r.body, policytest.Needle) {
		t.Fatalf("%q reached the client over /generateA2ui:\n%s", policytest.Needle, r.body)
	}
	turn := parseA2UITurn(t, r.body)
	if r.status != 200 || turn.err != nil || turn.result == nil {
		t.Fatalf("the turn did not end with a result: %d\n%s", r.status, r.body)
	}
	if val == nil {
		t.Fatalf("no validator for A2UI %s", v.Version)
	}
	func() {
		val.mu.Lock()
		defer val.mu.Unlock()
		val.v.CheckAll(t, turn.messages...)
	}()
	if !strings.Contains(strings.Join(toStrings(turn.messages), "\n"), policytest.Safe) {
		t.Errorf("the repair's %s did not reach the client:\n%s", policytest.Safe, r.body)
	}
}

// runGenUIVector sends vector i through POST /generateUi with its sample catalog.
func runGenUIVector(t *testing.T, base string, i int, v policytest.Vector) {
	t.Helper()
	r := post(t, base+"/generateUi", nil, `{"data":{"catalog":`+v.CatalogJSON()+`,"conversation":`+userText(vectorAsk(i))+`}}`)
	if strings.Contains(r.body, policytest.Needle) {
		t.Fatalf("%q reached the client over /generateUi:\n%s", policytest.Needle, r.body)
	}
	var result, failed bool
	for _, l := range strings.Split(strings.TrimSuffix(r.body, "\n"), "\n") {
		var head struct{ Type string }
		if err := json.Unmarshal([]byte(l), &head); err != nil {
			t.Fatalf("line is not JSON: %q", l)
		}
		result = result || head.Type == "result"
		failed = failed || head.Type == "error"
	}
	if r.status != 200 || !result || failed {
		t.Fatalf("the turn did not end with a result: %d\n%s", r.status, r.body)
	}
	if !strings.Contains(r.body, `{"type":"toolRequest"`) || !strings.Contains(r.body, policytest.Safe) {
		t.Errorf("the repair's %s did not reach the client:\n%s", policytest.Safe, r.body)
	}
}
