package a2aapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/a2aapi"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/redistest"
)

// longList is what a model writes for a v0.9 surface "list" of the basic catalog: a
// Column "root" of n Text rows, in an ```a2ui block after a line of prose, top-down, one
// component per line, the root first, listing every row's id.
func longList(n int) string {
	var b strings.Builder
	b.WriteString("Here is the list.\n```a2ui\n")
	b.WriteString(`{"version":"v0.9","createSurface":{"surfaceId":"list","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}` + "\n")
	b.WriteString(`{"version":"v0.9","updateComponents":{"surfaceId":"list","components":[` + "\n" + `{"id":"root","component":"Column","children":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"row-%d"`, i)
	}
	b.WriteString("]}")
	for i := range n {
		fmt.Fprintf(&b, ",\n{\"id\":\"row-%d\",\"component\":\"Text\",\"text\":\"Row %d of the list\"}", i, i)
	}
	b.WriteString("\n]}}\n```\n")
	return b.String()
}

// listModel serves a fake Gemini that answers every request with a list of n rows, in
// the given chunks, one every pacing, as the model of the agents the test makes next.
func listModel(t *testing.T, n, chunks int, pacing time.Duration) *fakegemini.Server {
	t.Helper()
	reply := fakegemini.Reply{Chunks: fakegemini.TextChunks(longList(n), chunks)}
	fake := fakegemini.New(fakegemini.WithPacing(pacing), fakegemini.WithResponder(func(*fakegemini.Request) fakegemini.Reply {
		return reply
	}))
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "k")
	return fake
}

// rawA2UI returns the A2UI messages a task or a status update (the result of a
// response or of an SSE event, as its JSON) carries in its status message, as the server
// wrote them: one per DataPart for an A2A v0.3 reader, a list per DataPart for 1.0 (its
// task under "task" or its update under "statusUpdate").
func rawA2UI(t *testing.T, body []byte) [][]byte {
	t.Helper()
	type status struct {
		Message struct {
			Parts []struct {
				Kind string          `json:"kind"`
				Text *string         `json:"text"`
				Data json.RawMessage `json:"data"`
			} `json:"parts"`
		} `json:"message"`
	}
	var resp struct {
		Result struct {
			Status       status                  `json:"status"`
			Task         struct{ Status status } `json:"task"`
			StatusUpdate struct{ Status status } `json:"statusUpdate"`
		} `json:"result"`
	}
	if err := json.Unmarshal(body, &resp); err != nil {
		t.Fatalf("%v: %.300s", err, body)
	}
	var out [][]byte
	for _, st := range []status{resp.Result.Status, resp.Result.Task.Status, resp.Result.StatusUpdate.Status} {
		for _, p := range st.Message.Parts {
			switch {
			case p.Text != nil || len(p.Data) == 0:
			case p.Data[0] == '[':
				var list []json.RawMessage
				if err := json.Unmarshal(p.Data, &list); err != nil {
					t.Fatal(err)
				}
				for _, m := range list {
					out = append(out, m)
				}
			case bytes.Contains(p.Data, []byte(`"toolCall"`)):
			default:
				out = append(out, p.Data)
			}
		}
	}
	return out
}

// rpcBody posts one JSON-RPC request and returns its response as sent.
func rpcBody(t *testing.T, url, method string, params any, header map[string]string) []byte {
	t.Helper()
	res := send(t, url, method, params, header)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// finalOf is the final state msgs leave a client in (a2ui.Final), each message as the
// package's tests compare them (mustJSON of the decoded message).
func finalOf(t testing.TB, version string, msgs [][]byte) [][]byte {
	t.Helper()
	raw := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		raw[i] = m
	}
	var out [][]byte
	for _, m := range a2ui.Final(version, raw) {
		out = append(out, normal(t, m))
	}
	return out
}

func normal(t testing.TB, m []byte) []byte {
	t.Helper()
	var v any
	if err := json.Unmarshal(m, &v); err != nil {
		t.Fatalf("%v: %.300s", err, m)
	}
	return mustJSON(v)
}

func size(msgs [][]byte) int {
	n := 0
	for _, m := range msgs {
		n += len(m)
	}
	return n
}

// checkList checks that msgs are the final state of the list surface, whole: one
// createSurface, one updateComponents of the root and its rows, rows of them, in order.
func checkList(t *testing.T, what string, msgs [][]byte, rows int) {
	t.Helper()
	if len(msgs) != 2 {
		t.Fatalf("%s: %d A2UI messages, want 2 (createSurface, updateComponents)", what, len(msgs))
	}
	var create struct {
		Version       string `json:"version"`
		CreateSurface *struct {
			SurfaceID string `json:"surfaceId"`
		} `json:"createSurface"`
	}
	var update struct {
		Version          string `json:"version"`
		UpdateComponents *struct {
			SurfaceID  string `json:"surfaceId"`
			Components []struct {
				ID        string   `json:"id"`
				Component string   `json:"component"`
				Children  []string `json:"children"`
				Text      string   `json:"text"`
			} `json:"components"`
		} `json:"updateComponents"`
	}
	if json.Unmarshal(msgs[0], &create) != nil || create.CreateSurface == nil || create.CreateSurface.SurfaceID != "list" || create.Version != "v0.9" {
		t.Fatalf("%s: first message %.300s", what, msgs[0])
	}
	if json.Unmarshal(msgs[1], &update) != nil || update.UpdateComponents == nil || update.Version != "v0.9" {
		t.Fatalf("%s: second message %.300s", what, msgs[1])
	}
	comps := update.UpdateComponents.Components
	byID := map[string]int{}
	for i, c := range comps {
		byID[c.ID] = i
	}
	root, ok := byID["root"]
	if !ok {
		t.Fatalf("%s: no root among %d components", what, len(comps))
	}
	if len(comps) != rows+1 || len(byID) != rows+1 || comps[root].Component != "Column" || len(comps[root].Children) != rows {
		t.Fatalf("%s: %d components (%d ids), the root listing %d rows, want %d", what, len(comps), len(byID), len(comps[root].Children), rows)
	}
	for i, id := range comps[root].Children {
		c := comps[byID[id]]
		if id != fmt.Sprintf("row-%d", i) || c.ID != id || c.Component != "Text" || c.Text != fmt.Sprintf("Row %d of the list", i) {
			t.Fatalf("%s: row %d: %q, %+v", what, i, id, c)
		}
	}
}

// A list of 2,000 rows streams component by component, its root re-sent as it grows: at
// most three times the bytes of its final state, every message valid. What hands the turn
// over whole (the task as tasks/get and GetTask return it, message/send's result, the
// task store) carries the surface once, in its final state.
func TestLongListTurn(t *testing.T) {
	const rows = 2000
	listModel(t, rows, rows/4, time.Millisecond) // four rows at a time, as a model writes them
	gopts := []genui.Option{genui.WithLimits(genui.DefaultLimits())}
	srv, _ := newAgent(t, "googleai/gemini-2.5-flash", gopts)
	hdr := map[string]string{"X-A2A-Extensions": extV09}

	// message/stream.
	_, evs := stream(t, srv.URL+"/a2a", "message/stream", map[string]any{"message": message(text("List 2,000 rows"))}, hdr)
	last := evs[len(evs)-1]
	if len(evs) < 3 || last.Result["kind"] != "status-update" || last.Result["final"] != true || state(last.Result) != "input-required" {
		t.Fatalf("the stream ends with %.500s", last.Raw)
	}
	var streamed [][]byte
	for _, ev := range evs[1 : len(evs)-1] {
		if ev.Error != nil || state(ev.Result) != "working" {
			t.Fatalf("event %.500s", ev.Raw)
		}
		streamed = append(streamed, rawA2UI(t, []byte(ev.Raw))...)
	}
	if got := rawA2UI(t, []byte(last.Raw)); len(got) != 0 {
		t.Fatalf("the final status update carries %d A2UI messages: the stream did", len(got))
	}
	a2uitest.New(t, "v0.9", nil).CheckAll(t, streamed...)
	final := finalOf(t, "v0.9", streamed)
	checkList(t, "the final state", final, rows)
	streamedBytes, finalBytes := size(streamed), size(final)
	t.Logf("streamed %d A2UI messages, %d bytes; the final state %d bytes (%.2fx)", len(streamed), streamedBytes, finalBytes, float64(streamedBytes)/float64(finalBytes))
	if streamedBytes > 3*finalBytes {
		t.Errorf("streamed %d bytes, over 3x the final state's %d", streamedBytes, finalBytes)
	}

	// The task, whole, on either wire.
	taskID, _ := evs[0].Result["id"].(string)
	whole := func(t *testing.T, what string, body []byte) {
		t.Helper()
		msgs := rawA2UI(t, body)
		for i := range msgs {
			msgs[i] = normal(t, msgs[i])
		}
		checkList(t, what, msgs, rows)
		if !bytes.Equal(bytes.Join(msgs, nil), bytes.Join(final, nil)) {
			t.Fatalf("%s: not the final state of the stream", what)
		}
		a2uitest.New(t, "v0.9", nil).CheckAll(t, msgs...)
		t.Logf("%s: %d bytes (%.2fx the final state)", what, len(body), float64(len(body))/float64(finalBytes))
		if float64(len(body)) > 1.2*float64(finalBytes) {
			t.Errorf("%s: %d bytes, over 1.2x the final state's %d", what, len(body), finalBytes)
		}
	}
	whole(t, "tasks/get", rpcBody(t, srv.URL+"/a2a", "tasks/get", map[string]any{"id": taskID}, nil))
	whole(t, "GetTask (A2A 1.0)", rpcBody(t, srv.URL+"/a2a/v1", "GetTask", map[string]any{"id": taskID}, map[string]string{"A2A-Version": "1.0"}))

	// message/send: the task at the end of its turn, its history the user's message.
	body := rpcBody(t, srv.URL+"/a2a", "message/send", map[string]any{"message": message(text("List 2,000 rows"))}, hdr)
	var sent struct {
		Result struct {
			Status  struct{ State string }
			History []struct {
				Role  string
				Parts []any
			}
		}
	}
	if err := json.Unmarshal(body, &sent); err != nil || sent.Result.Status.State != "input-required" ||
		len(sent.Result.History) != 1 || sent.Result.History[0].Role != "user" || len(sent.Result.History[0].Parts) != 1 {
		t.Fatalf("message/send: %v %.500s", err, body)
	}
	whole(t, "message/send", body)

	// The task store keeps the turn so.
	t.Run("stored", func(t *testing.T) {
		redis := redistest.Start(t).Client(t)
		prefix := redistest.UniquePrefix()
		srv, _ := newAgent(t, "googleai/gemini-2.5-flash", gopts, a2aapi.WithTaskStore(a2aapi.NewRedisTasks(redis, time.Minute, prefix)))
		whole(t, "message/send (Redis)", rpcBody(t, srv.URL+"/a2a", "message/send", map[string]any{"message": message(text("List 2,000 rows"))}, hdr))
		keys, err := redis.Keys(context.Background(), prefix+"a2a-task:*").Result()
		if err != nil || len(keys) != 1 {
			t.Fatalf("stored tasks: %v %v", keys, err)
		}
		stored, err := redis.StrLen(context.Background(), keys[0]).Result()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("the stored task: %d bytes (%.2fx the final state)", stored, float64(stored)/float64(finalBytes))
		if float64(stored) > 1.2*float64(finalBytes) {
			t.Errorf("the stored task: %d bytes, over 1.2x the final state's %d", stored, finalBytes)
		}
	})
}

// A runaway model writing a list of 20,000 rows: the turn stops at the limit of
// components per surface, within seconds; what the client was shown before is valid, and
// the task fails with a message naming the limit, which a client tells from a limit of the
// model's (to retry). No goroutine is left (TestMain).
func TestRunawayListStopsAtALimit(t *testing.T) {
	const rows = 20000
	start := time.Now()
	fake := listModel(t, rows, 200, 0)
	limits := genui.DefaultLimits()
	srv, _ := newAgent(t, "googleai/gemini-2.5-flash", []genui.Option{genui.WithLimits(limits)})
	hdr := map[string]string{"X-A2A-Extensions": extV09}
	_, evs := stream(t, srv.URL+"/a2a", "message/stream", map[string]any{"message": message(text("List 20,000 rows"))}, hdr)
	last := evs[len(evs)-1]
	turnTime := time.Since(start)
	if len(evs) < 3 || last.Result["final"] != true || state(last.Result) != "failed" {
		t.Fatalf("the stream ends with %.500s", last.Raw)
	}
	ps := statusParts(last.Result)
	if len(ps) != 1 {
		t.Fatalf("the final status: %.500s", last.Raw)
	}
	msg, _ := ps[0]["text"].(string)
	t.Logf("failed with %q", msg)
	want := fmt.Sprintf("limit of %d components on one surface (%s)", limits.Components, genui.LimitComponents)
	if !strings.Contains(msg, want) || !strings.HasSuffix(msg, "(RESOURCE_EXHAUSTED)") || strings.Contains(msg, "try again") {
		t.Fatalf("failed with %q, want it to name %q, not to ask for a retry", msg, want)
	}
	for _, leak := range []string{fake.URL(), "127.0.0.1", "http://", "its limit"} {
		if strings.Contains(last.Raw, leak) {
			t.Fatalf("the client reads %q: %s", leak, last.Raw)
		}
	}

	var streamed [][]byte
	for _, ev := range evs[1 : len(evs)-1] {
		if ev.Error != nil || state(ev.Result) != "working" {
			t.Fatalf("event %.500s", ev.Raw)
		}
		streamed = append(streamed, rawA2UI(t, []byte(ev.Raw))...)
	}
	a2uitest.New(t, "v0.9", nil).CheckAll(t, streamed...)
	final := finalOf(t, "v0.9", streamed)
	var shown struct {
		UpdateComponents struct {
			Components []struct {
				ID       string   `json:"id"`
				Children []string `json:"children"`
			} `json:"components"`
		} `json:"updateComponents"`
	}
	if len(final) != 2 || json.Unmarshal(final[1], &shown) != nil || len(shown.UpdateComponents.Components) == 0 {
		t.Fatalf("what was shown: %d messages", len(final))
	}
	comps := shown.UpdateComponents.Components
	var root []string
	for _, c := range comps {
		if c.ID == "root" {
			root = c.Children
		}
	}
	t.Logf("shown: %d components, the root listing %d rows; streamed %d A2UI messages, %d bytes, the final state %d bytes (%.2fx)",
		len(comps), len(root), len(streamed), size(streamed), size(final), float64(size(streamed))/float64(size(final)))
	if len(comps) > limits.Components || len(root) != len(comps)-1 || len(comps) < limits.Components/2 {
		t.Fatalf("shown: %d components, the root listing %d", len(comps), len(root))
	}

	// The failed task, whole: the surface as shown, once, and the same message.
	taskID, _ := evs[0].Result["id"].(string)
	body := rpcBody(t, srv.URL+"/a2a", "tasks/get", map[string]any{"id": taskID}, nil)
	var task struct{ Result map[string]any }
	if err := json.Unmarshal(body, &task); err != nil || state(task.Result) != "failed" {
		t.Fatalf("tasks/get: %v %.500s", err, body)
	}
	ps = statusParts(task.Result)
	if got, _ := ps[len(ps)-1]["text"].(string); got != msg {
		t.Fatalf("tasks/get: the task failed with %q, the stream with %q", got, msg)
	}
	got := rawA2UI(t, body)
	for i := range got {
		got[i] = normal(t, got[i])
	}
	if !bytes.Equal(bytes.Join(got, nil), bytes.Join(final, nil)) {
		t.Fatalf("tasks/get: %d A2UI messages, not what was shown", len(got))
	}
	t.Logf("tasks/get: %d bytes", len(body))

	// The model call ends, and the turn ended at the limit in seconds (the race detector
	// on a busy machine included).
	select {
	case <-fake.Requests()[0].Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the model call goes on")
	}
	t.Logf("the turn took %v (the model call cancelled: %v), the test %v", turnTime, fake.Requests()[0].Cancelled(), time.Since(start))
	if turnTime > 30*time.Second {
		t.Fatalf("the runaway turn took %v", turnTime)
	}
}
