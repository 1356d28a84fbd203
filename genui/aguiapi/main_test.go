package aguiapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/aguiapi"
	"github.com/genuiserver/genui/internal/testkit/leaktest"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newServer serves the API and the AG-UI endpoint with the named model over real HTTP.
func newServer(t testing.TB, model string, gopts ...genui.Option) *httptest.Server {
	t.Helper()
	svc := servetest.Service(t, model, gopts...)
	return servetest.Serve(t, svc, aguiapi.New(svc, aguiapi.WithLogger(quiet)).Routes()...)
}

// event is one SSE event of a run: its id, its raw data, and the data decoded.
type event struct {
	ID   string
	Raw  []byte
	Data map[string]any
}

func (e event) Type() string { s, _ := e.Data["type"].(string); return s }

func post(t testing.TB, url string, input any, header map[string]string) *http.Response {
	t.Helper()
	body, ok := input.([]byte)
	if !ok {
		body, _ = json.Marshal(input)
	}
	req, _ := http.NewRequest(http.MethodPost, url+"/ag-ui", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// readEvents reads n events (all of them when n < 0), checking the framing: an id line,
// one data line, a blank line, LF only; keepalive comments are skipped.
func readEvents(t testing.TB, r *bufio.Reader, n int) []event {
	t.Helper()
	var out []event
	for n < 0 || len(out) < n {
		var ev event
		for {
			line, err := r.ReadString('\n')
			if err == io.EOF && line == "" {
				if ev.ID != "" {
					t.Fatalf("an event without its blank line: %+v", ev)
				}
				return out
			}
			if err != nil {
				t.Fatalf("reading the stream: %v", err)
			}
			if strings.Contains(line, "\r") {
				t.Fatalf("CR in the stream: %q", line)
			}
			line = strings.TrimSuffix(line, "\n")
			switch {
			case line == "" && ev.Raw != nil:
				out = append(out, ev)
			case line == "" || strings.HasPrefix(line, ":"):
				continue
			case strings.HasPrefix(line, "id: "):
				ev.ID = line[4:]
				continue
			case strings.HasPrefix(line, "data: ") && ev.Raw == nil:
				ev.Raw = []byte(line[6:])
				if err := json.Unmarshal(ev.Raw, &ev.Data); err != nil {
					t.Fatalf("data not JSON: %s", ev.Raw)
				}
				continue
			default:
				t.Fatalf("unexpected line %q", line)
			}
			break
		}
	}
	return out
}

// run posts a run and reads all of its events, which must be a 200 SSE stream.
func run(t testing.TB, url string, input any) []event {
	t.Helper()
	res := post(t, url, input, nil)
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("%d %s: %s", res.StatusCode, res.Header.Get("Content-Type"), b)
	}
	return readEvents(t, bufio.NewReader(res.Body), -1)
}

func types(evs []event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.Type()
	}
	return out
}

func input(messages ...map[string]any) map[string]any {
	if messages == nil {
		messages = []map[string]any{}
	}
	return map[string]any{"threadId": "thread-1", "runId": "run-1", "messages": messages, "tools": []any{}, "context": []any{}, "state": map[string]any{}, "forwardedProps": map[string]any{}}
}

func user(id, text string) map[string]any {
	return map[string]any{"id": id, "role": "user", "content": text}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// What a model writes for a small form, one JSON message per line.
const formResponse = "Here is the form.\n```a2ui\n" +
	`{"createSurface":{"surfaceId":"form","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}` + "\n" +
	`{"updateComponents":{"surfaceId":"form","components":[` + "\n" +
	`{"id":"root","component":"Column","children":["title","email","submit"]},` + "\n" +
	`{"id":"title","component":"Text","text":"Join us","variant":"h2"},` + "\n" +
	`{"id":"email","component":"TextField","label":"Email","value":{"path":"/form/email"}},` + "\n" +
	`{"id":"submit","component":"Button","child":"submit-label","action":{"event":{"name":"join","context":{"email":{"path":"/form/email"}}}}},` + "\n" +
	`{"id":"submit-label","component":"Text","text":"Join"}` + "\n" +
	"]}}\n```\n"

// activities holds the a2ui-surface activity messages of a run as @ag-ui/client builds
// them from its events: an ACTIVITY_SNAPSHOT replaces a message's content, an
// ACTIVITY_DELTA applies its JSON Patch to it. The server's deltas each append one A2UI
// message to the operations of an activity it sent a snapshot of earlier in the run;
// apply fails on any other.
type activities struct {
	ops map[string][]json.RawMessage // each activity's content.a2ui_operations
	// carried are the A2UI messages the events carried, in order: a snapshot's
	// operations, a delta's value.
	carried []json.RawMessage
}

func newActivities() *activities { return &activities{ops: map[string][]json.RawMessage{}} }

// apply applies one event of a run. For an activity event it returns the activity's
// message id, the messages the event adds to its content (a snapshot's: all of them),
// and whether it replaced the content.
func (a *activities) apply(t testing.TB, e event) (id string, added []json.RawMessage, replaced bool) {
	t.Helper()
	if e.Type() != "ACTIVITY_SNAPSHOT" && e.Type() != "ACTIVITY_DELTA" {
		return "", nil, false
	}
	var ev struct {
		MessageID    string `json:"messageId"`
		ActivityType string `json:"activityType"`
		Replace      *bool  `json:"replace"`
		Content      *struct {
			Ops []json.RawMessage `json:"a2ui_operations"`
		} `json:"content"`
		Patch []struct {
			Op    string          `json:"op"`
			Path  string          `json:"path"`
			Value json.RawMessage `json:"value"`
		} `json:"patch"`
	}
	if err := json.Unmarshal(e.Raw, &ev); err != nil || ev.MessageID == "" || ev.ActivityType != "a2ui-surface" {
		t.Fatalf("event %s: not an a2ui-surface activity (%v): %.300s", e.ID, err, e.Raw)
	}
	if e.Type() == "ACTIVITY_SNAPSHOT" {
		if ev.Replace == nil || !*ev.Replace || ev.Content == nil || len(ev.Content.Ops) == 0 || ev.Patch != nil {
			t.Fatalf("event %s: a snapshot that does not replace the content with operations: %.300s", e.ID, e.Raw)
		}
		a.ops[ev.MessageID] = ev.Content.Ops
		a.carried = append(a.carried, ev.Content.Ops...)
		return ev.MessageID, ev.Content.Ops, true
	}
	held, ok := a.ops[ev.MessageID]
	if !ok {
		t.Fatalf("event %s: a delta of an activity the run has not sent: %.300s", e.ID, e.Raw)
	}
	if ev.Content != nil || ev.Replace != nil || len(ev.Patch) != 1 || ev.Patch[0].Op != "add" || ev.Patch[0].Path != "/a2ui_operations/-" || len(ev.Patch[0].Value) == 0 {
		t.Fatalf("event %s: a delta other than one message added to the operations: %.300s", e.ID, e.Raw)
	}
	v := ev.Patch[0].Value
	a.ops[ev.MessageID] = append(held, v)
	a.carried = append(a.carried, v)
	return ev.MessageID, []json.RawMessage{v}, false
}

// applyAll applies the events of a run.
func (a *activities) applyAll(t testing.TB, evs []event) *activities {
	t.Helper()
	for _, e := range evs {
		a.apply(t, e)
	}
	return a
}

// componentIDs returns the ids of the components of A2UI v0.9 messages, each once, in
// the order they first come.
func componentIDs(msgs []json.RawMessage) []string {
	var out []string
	seen := map[string]bool{}
	for _, m := range msgs {
		var msg struct {
			Update struct {
				Components []struct {
					ID string `json:"id"`
				} `json:"components"`
			} `json:"updateComponents"`
		}
		_ = json.Unmarshal(m, &msg)
		for _, c := range msg.Update.Components {
			if !seen[c.ID] {
				seen[c.ID] = true
				out = append(out, c.ID)
			}
		}
	}
	return out
}

// isSubset reports whether every string of a is in b.
func isSubset(a, b []string) bool {
	in := map[string]bool{}
	for _, s := range b {
		in[s] = true
	}
	for _, s := range a {
		if !in[s] {
			return false
		}
	}
	return true
}
