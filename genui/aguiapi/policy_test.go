package aguiapi_test

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/policytest"
)

// Every A2UI vector of the hostile corpus over AG-UI: what the policy refuses never
// reaches the client, the model is asked to repair it (told the violation's code), and
// the repair does reach the client. A run is an A2UI v0.9 turn, so only the v0.9 vectors
// have a way in.
func TestPolicyCorpus(t *testing.T) {
	// One validator for every run: compiling the specification's schemas is what costs.
	valid := a2uitest.New(t, "v0.9", nil)
	n := 0
	for _, v := range policytest.Corpus() {
		if !v.A2UI() || v.Version != "v0.9" {
			continue
		}
		n++
		t.Run(v.Name, func(t *testing.T) {
			// A fake and a service of its own: a vector that goes wrong leaves nothing
			// queued for the next one.
			fake := fakegemini.New()
			t.Cleanup(fake.Close)
			t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
			t.Setenv("GEMINI_API_KEY", "k")
			srv := newServer(t, "googleai/gemini-2.5-flash", genui.WithPolicy(policytest.Policy()))
			fake.Enqueue(v.Replies()...)
			evs := run(t, srv.URL, input(user("m1", "Show me a picture")))

			checkPolicyRun(t, evs, valid)
			var text strings.Builder
			for _, e := range evs {
				if strings.Contains(string(e.Raw), policytest.Needle) || strings.Contains(mustJSON(e.Data), policytest.Needle) {
					t.Fatalf("%s reached the client: event %s: %s", policytest.Needle, e.ID, e.Raw)
				}
				if e.Type() == "TEXT_MESSAGE_CONTENT" {
					d, _ := e.Data["delta"].(string)
					text.WriteString(d)
				}
			}
			if strings.Contains(text.String(), policytest.Needle) {
				t.Fatalf("%s reached the client across text deltas: %q", policytest.Needle, text.String())
			}
			if !strings.Contains(raws(evs), policytest.Safe) {
				t.Fatalf("the repair (%s) did not reach the client:\n%s", policytest.Safe, raws(evs))
			}
			if err := v.CheckRepair(fake.Requests()); err != nil {
				t.Fatal(err)
			}
		})
	}
	t.Logf("%d vectors over AG-UI", n)
	if n < 36 {
		t.Fatalf("%d vectors over AG-UI, want at least 36", n)
	}
}

// checkPolicyRun checks a run that must succeed: RUN_STARTED first, RUN_FINISHED last and
// no RUN_ERROR, ids <stream>.1, .2, … in order, no null, every a2ui-surface activity a
// snapshot of operations that build the surface from nothing, then deltas that each
// append one message, every message valid A2UI v0.9 (against valid).
func checkPolicyRun(t *testing.T, evs []event, valid *a2uitest.Validator) {
	t.Helper()
	if len(evs) < 2 || evs[0].Type() != "RUN_STARTED" {
		t.Fatalf("the run does not start with RUN_STARTED: %v", types(evs))
	}
	if last := evs[len(evs)-1]; last.Type() != "RUN_FINISHED" {
		t.Fatalf("the run ends with %s", last.Raw)
	}
	stream, _, _ := strings.Cut(evs[0].ID, ".")
	acts := newActivities()
	for i, e := range evs {
		if e.ID != stream+"."+strconv.Itoa(i+1) {
			t.Fatalf("event %d has id %q", i+1, e.ID)
		}
		if strings.Contains(string(e.Raw), "null") {
			t.Fatalf("a null in %s", e.Raw)
		}
		switch e.Type() {
		case "RUN_ERROR":
			t.Fatalf("RUN_ERROR: %s", e.Raw)
		case "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA":
			_, added, replaced := acts.apply(t, e)
			var first map[string]json.RawMessage
			if _ = json.Unmarshal(added[0], &first); replaced && first["createSurface"] == nil && first["deleteSurface"] == nil {
				t.Fatalf("a snapshot that does not build its surface from nothing: %s", e.Raw)
			}
			for _, op := range added {
				if err := valid.Check(op); err != nil {
					t.Fatalf("%s %s: %v\n%s", e.Type(), e.ID, err, e.Raw)
				}
			}
		}
	}
}
