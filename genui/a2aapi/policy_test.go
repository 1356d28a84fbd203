package a2aapi_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/policytest"
)

// Every A2UI vector of the hostile corpus, streamed over A2A v0.3 JSON-RPC to a client of
// its version: what the policy refuses never reaches the client (no event, no task as
// tasks/get or GetTask return it), the model is asked once to repair it, naming the
// violation, and its repair reaches the client, valid against the specification.
func TestPolicyCorpus(t *testing.T) {
	n := 0
	for _, v := range policytest.Corpus() {
		if !v.A2UI() {
			continue
		}
		n++
		t.Run(v.Name, func(t *testing.T) { policyVector(t, v) })
	}
	t.Logf("%d vectors over A2A", n)
	if n < 40 {
		t.Fatalf("only %d A2UI vectors ran, want at least 40", n)
	}
}

func policyVector(t *testing.T, v policytest.Vector) {
	fake := fakegemini.New()
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "k")
	srv, _ := newAgent(t, "googleai/gemini-2.5-flash", []genui.Option{genui.WithPolicy(policytest.Policy())})
	fake.Enqueue(v.Replies()...)

	ext := extV09
	if v.Version == "v0.8" {
		ext = extV08
	}
	res, evs := stream(t, srv.URL+"/a2a", "message/stream", map[string]any{"message": message(text("Show me a picture"))}, map[string]string{"X-A2A-Extensions": ext})
	if res.StatusCode != 200 || len(evs) < 2 || evs[0].Result["kind"] != "task" {
		t.Fatalf("%d %s", res.StatusCode, mustJSON(evs))
	}
	last := evs[len(evs)-1].Result
	if s := state(last); last["kind"] != "status-update" || last["final"] != true || (s != "input-required" && s != "completed") {
		t.Fatalf("the stream ends with %s", evs[len(evs)-1].Raw)
	}

	// What the client received: every event as sent and as decoded, and the text of the
	// turn as a client joins it.
	var received []string
	var joined strings.Builder
	for _, ev := range evs {
		if ev.Error != nil {
			t.Errorf("error event: %s", ev.Raw)
		}
		received = append(received, ev.Raw, string(mustJSON(ev.Result)))
		for _, p := range statusParts(ev.Result) {
			if s, ok := p["text"].(string); ok {
				joined.WriteString(s)
			}
		}
	}
	received = append(received, joined.String())
	taskID, _ := evs[0].Result["id"].(string)
	_, got := rpc(t, srv.URL+"/a2a", "tasks/get", map[string]any{"id": taskID}, nil)
	task, _ := got["result"].(map[string]any)
	if task == nil || state(task) != state(last) {
		t.Fatalf("tasks/get: %s, the stream ended %s", mustJSON(got), state(last))
	}
	received = append(received, string(mustJSON(got)))
	_, got = rpc(t, srv.URL+"/a2a/v1", "GetTask", map[string]any{"id": taskID}, map[string]string{"A2A-Version": "1.0"})
	if got["result"] == nil {
		t.Fatalf("GetTask: %s", mustJSON(got))
	}
	received = append(received, string(mustJSON(got)))
	for _, b := range received {
		// The server's random ids may hold the needle's letters by chance.
		if strings.Contains(serverIDs.ReplaceAllString(b, ""), policytest.Needle) {
			t.Fatalf("the client received %q: %s", policytest.Needle, b)
		}
	}

	msgs := a2uiOf(evs)
	if all := string(mustJSON(dataParts(evs))); !strings.Contains(all, policytest.Safe) {
		t.Fatalf("the repair did not reach the client: %s", mustJSON(evs))
	}
	a2uitest.New(t, v.Version, nil).CheckAll(t, msgs...)

	if err := v.CheckRepair(fake.Requests()); err != nil {
		t.Fatal(err)
	}
}

// serverIDs are the ids the server makes at random, in JSON.
var serverIDs = regexp.MustCompile(`"(messageId|taskId|contextId)":"[^"]*"`)
