package aguiapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/longlist"
)

// size is the number of bytes of messages.
func size(msgs []json.RawMessage) int {
	n := 0
	for _, m := range msgs {
		n += len(m)
	}
	return n
}

// runBody posts a run and returns the whole SSE body, and its events.
func runBody(t *testing.T, url string, in any) ([]byte, []event) {
	t.Helper()
	res := post(t, url, in, nil)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK || res.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s (%v): %.300s", res.StatusCode, res.Header.Get("Content-Type"), err, body)
	}
	return body, readEvents(t, bufio.NewReader(bytes.NewReader(body)), -1)
}

// A list of 2,000 rows, written top-down one component per line, streams over AG-UI in
// a snapshot and deltas: the SSE body is at most 3.5 times the bytes of the final state
// of the A2UI messages it carries (the builder sends at most 3 times; the events' own
// bytes are the rest), and the activity the client builds from the events is every
// message, in order, valid, whose final state holds all 2,000 rows. A runaway list of
// 20,000 rows ends the run within seconds at the components limit, in a RUN_ERROR that
// names it, after valid A2UI.
func TestLongLists(t *testing.T) {
	fake := fakegemini.New()
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "k")
	srv := newServer(t, "googleai/gemini-2.5-flash", genui.WithLimits(genui.DefaultLimits()))

	t.Run("2000 rows", func(t *testing.T) {
		fake.Enqueue(fakegemini.Respond(fakegemini.TextChunks(longlist.Text(2000), 4000)...))
		body, evs := runBody(t, srv.URL, input(user("m1", "my contacts")))
		checkRun(t, evs) // every message valid, in the order the client applies them
		if last := evs[len(evs)-1]; last.Type() != "RUN_FINISHED" {
			t.Fatalf("the run ended with %.300s", last.Raw)
		}
		acts := newActivities().applyAll(t, evs)
		ops := acts.ops["a2ui-surface-s"]
		if len(acts.ops) != 1 || len(ops) != len(acts.carried) {
			t.Fatalf("%d activities; the surface's content holds %d of the %d messages carried", len(acts.ops), len(ops), len(acts.carried))
		}
		final := size(a2ui.Final(a2ui.V09, acts.carried))
		if len(body) > final*7/2 {
			t.Fatalf("an SSE body of %d bytes for a final state of %d (%.2f×): %d messages carried in %d bytes",
				len(body), final, float64(len(body))/float64(final), len(acts.carried), size(acts.carried))
		}
		state := a2ui.Final(a2ui.V09, ops)
		ids := componentIDs(state)
		rows := 0
		for _, id := range ids {
			if id != "root" && strings.HasPrefix(id, "r") {
				rows++
			}
		}
		if rows != 2000 || len(ids) != 2001 || ids[0] != "root" {
			t.Fatalf("the final state holds %d components, %d rows", len(ids), rows)
		}
		// The root, as the client has it last, lists every row.
		var root struct {
			Update struct {
				Components []struct {
					ID       string   `json:"id"`
					Children []string `json:"children"`
				} `json:"components"`
			} `json:"updateComponents"`
		}
		if err := json.Unmarshal(state[len(state)-1], &root); err != nil || root.Update.Components[0].ID != "root" || len(root.Update.Components[0].Children) != 2000 {
			t.Fatalf("the final root (%v): %.300s", err, state[len(state)-1])
		}
		t.Logf("2,000 rows: %d events, an SSE body of %d bytes carrying %d A2UI messages of %d bytes, for a final state of %d bytes (%.2f×)",
			len(evs), len(body), len(acts.carried), size(acts.carried), final, float64(len(body))/float64(final))
	})

	t.Run("runaway", func(t *testing.T) {
		fake.Enqueue(fakegemini.Respond(fakegemini.TextChunks(longlist.Text(20000), 2000)...))
		began := time.Now()
		body, evs := runBody(t, srv.URL, input(user("m1", "everything")))
		took := time.Since(began)
		checkRun(t, evs)
		last := evs[len(evs)-1]
		var end struct {
			Type     string `json:"type"`
			Message  string `json:"message"`
			Code     string `json:"code"`
			Metadata struct {
				Details struct {
					Limit string `json:"limit"`
					Value int    `json:"value"`
				} `json:"details"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(last.Raw, &end)
		if end.Type != "RUN_ERROR" || end.Code != string(genui.StatusResourceExhausted) || end.Metadata.Details.Limit != genui.LimitComponents ||
			end.Metadata.Details.Value != 10000 || !strings.Contains(end.Message, "limit components (10000)") {
			t.Fatalf("the run ended with %.500s", last.Raw)
		}
		// What was sent before the limit is valid (checkRun checked every message, in the
		// order the client applies them), and shows the rows up to it.
		acts := newActivities().applyAll(t, evs)
		ops := acts.ops["a2ui-surface-s"]
		ids := componentIDs(a2ui.Final(a2ui.V09, ops))
		if len(ids) < 9000 || len(ids) > 10000 {
			t.Fatalf("%d components shown before the limit", len(ids))
		}
		if final := size(a2ui.Final(a2ui.V09, acts.carried)); len(body) > final*7/2 {
			t.Fatalf("an SSE body of %d bytes for a final state of %d", len(body), final)
		}
		// The model call ended with the run.
		for i, r := range fake.Requests() {
			select {
			case <-r.Done():
			case <-time.After(5 * time.Second):
				t.Fatalf("model call %d goes on after the run", i)
			}
		}
		if took > 30*time.Second {
			t.Fatalf("the runaway run took %v", took)
		}
		t.Logf("20,000 rows: stopped after %v, %d components shown, an SSE body of %d bytes: %s", took.Round(time.Millisecond), len(ids), len(body), end.Message)
	})
}
