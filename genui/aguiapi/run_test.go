package aguiapi_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
)

// checkRun checks what @ag-ui/client verifies of a run, and more: RUN_STARTED first, text
// messages opened and closed in order, tool calls the same, RUN_FINISHED or RUN_ERROR
// last; ids <stream>.1, .2, … in order; no null anywhere; every a2ui-surface activity
// a snapshot of operations that build the surface from nothing, then deltas that each
// append one message to them, every message valid A2UI v0.9 in that sequence.
func checkRun(t *testing.T, evs []event) {
	t.Helper()
	if len(evs) < 2 || evs[0].Type() != "RUN_STARTED" {
		t.Fatalf("the run does not start with RUN_STARTED: %v", types(evs))
	}
	if last := evs[len(evs)-1].Type(); last != "RUN_FINISHED" && last != "RUN_ERROR" {
		t.Fatalf("the run ends with %s", last)
	}
	stream, _, _ := strings.Cut(evs[0].ID, ".")
	openText, openCalls := "", map[string]bool{}
	// Each activity's operations, as the client holds them, are one sequence of
	// messages from the snapshot on, checked by a validator of its own.
	acts, valid := newActivities(), map[string]*a2uitest.Validator{}
	for i, e := range evs {
		if e.ID != stream+"."+strconv.Itoa(i+1) {
			t.Fatalf("event %d has id %q", i+1, e.ID)
		}
		if strings.Contains(string(e.Raw), "null") {
			t.Fatalf("a null in %s", e.Raw)
		}
		switch e.Type() {
		case "TEXT_MESSAGE_START":
			if openText != "" {
				t.Fatalf("a text message opens while %s is open", openText)
			}
			openText = e.Data["messageId"].(string)
		case "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END":
			if e.Data["messageId"] != openText {
				t.Fatalf("%s of %v, open: %q", e.Type(), e.Data["messageId"], openText)
			}
			if e.Type() == "TEXT_MESSAGE_END" {
				openText = ""
			} else if e.Data["delta"] == "" {
				t.Fatal("an empty delta")
			}
		case "TOOL_CALL_START":
			openCalls[e.Data["toolCallId"].(string)] = true
		case "TOOL_CALL_ARGS":
			if !openCalls[e.Data["toolCallId"].(string)] {
				t.Fatalf("args of a call not open: %s", e.Raw)
			}
		case "TOOL_CALL_END":
			delete(openCalls, e.Data["toolCallId"].(string))
		case "ACTIVITY_SNAPSHOT", "ACTIVITY_DELTA":
			id, added, replaced := acts.apply(t, e)
			if replaced {
				valid[id] = a2uitest.New(t, "v0.9", nil)
				var first map[string]json.RawMessage
				if _ = json.Unmarshal(added[0], &first); first["createSurface"] == nil && first["deleteSurface"] == nil {
					t.Fatalf("a snapshot that does not build its surface from nothing: %s", e.Raw)
				}
			}
			for _, op := range added {
				if err := valid[id].Check(op); err != nil {
					t.Fatalf("%s %s: %v\n%s", e.Type(), e.ID, err, op)
				}
			}
		case "RUN_FINISHED":
			if openText != "" || len(openCalls) > 0 {
				t.Fatalf("RUN_FINISHED with %q and %v open", openText, openCalls)
			}
		}
	}
}

// raws is the data of the events, one a line.
func raws(evs []event) string {
	var b strings.Builder
	for _, e := range evs {
		b.Write(e.Raw)
		b.WriteByte('\n')
	}
	return b.String()
}

// outcomeOf is the outcome of a RUN_FINISHED as sent.
func outcomeOf(e event) string {
	var v struct {
		Outcome json.RawMessage `json:"outcome"`
	}
	_ = json.Unmarshal(e.Raw, &v)
	return string(v.Outcome)
}

// A run with text and a surface: RUN_STARTED exactly as sent, the text streamed in one
// message, the surface as one activity message, a snapshot then deltas that each append
// one message, ending with the whole surface; RUN_FINISHED with the tokens used.
func TestRunWithSurface(t *testing.T) {
	srv := newServer(t, offline.Name)
	evs := run(t, srv.URL, input(user("m1", "Show a sign-up form")))
	checkRun(t, evs)
	if string(evs[0].Raw) != `{"type":"RUN_STARTED","threadId":"thread-1","runId":"run-1"}` {
		t.Fatalf("RUN_STARTED %s", evs[0].Raw)
	}
	want := []string{"RUN_STARTED", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END"}
	if got := types(evs); !slices.Equal(got[:4], want) {
		t.Fatalf("events %v", got)
	}
	var acts []event
	for _, e := range evs {
		if e.Type() == "ACTIVITY_SNAPSHOT" || e.Type() == "ACTIVITY_DELTA" {
			acts = append(acts, e)
		}
	}
	if len(acts) < 4 || acts[0].Type() != "ACTIVITY_SNAPSHOT" {
		t.Fatalf("activity events %v", types(acts))
	}
	for _, e := range acts[1:] {
		if e.Type() != "ACTIVITY_DELTA" {
			t.Fatalf("a surface snapshotted again within its run: %s", e.Raw)
		}
	}
	if string(acts[0].Raw) != `{"type":"ACTIVITY_SNAPSHOT","messageId":"a2ui-surface-surface-1","activityType":"a2ui-surface","replace":true,"content":{"a2ui_operations":[`+
		`{"version":"v0.9","createSurface":{"catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json","surfaceId":"surface-1"}}]}}` {
		t.Fatalf("the first snapshot: %s", acts[0].Raw)
	}
	if !strings.HasPrefix(string(acts[1].Raw), `{"type":"ACTIVITY_DELTA","messageId":"a2ui-surface-surface-1","activityType":"a2ui-surface","patch":[{"op":"add","path":"/a2ui_operations/-","value":{"version":"v0.9",`) {
		t.Fatalf("the first delta: %s", acts[1].Raw)
	}
	// The client's content: every message the run sent, in order, whose final state is
	// the whole surface.
	a := newActivities().applyAll(t, evs)
	ops := a.ops["a2ui-surface-surface-1"]
	if len(a.ops) != 1 || len(ops) != len(acts) || mustJSON(ops) != mustJSON(a.carried) {
		t.Fatalf("the activities %v: %d operations for %d events", a.ops, len(ops), len(acts))
	}
	final := a2ui.Final(a2ui.V09, ops)
	last := string(final[len(final)-1])
	for _, id := range []string{"root", "title", "message", "reply", "send"} {
		if !strings.Contains(last, `"id":"`+id+`"`) {
			t.Fatalf("the final state lacks %s: %s", id, final)
		}
	}
	fin := evs[len(evs)-1].Data
	usage, _ := fin["usage"].([]any)
	if fin["type"] != "RUN_FINISHED" || outcomeOf(evs[len(evs)-1]) != `{"type":"success"}` || len(usage) != 1 {
		t.Fatalf("RUN_FINISHED %s", evs[len(evs)-1].Raw)
	}
	if u := usage[0].(map[string]any); u["provider"] != "genui" || u["model"] != "offline" || u["inputTokens"] == nil {
		t.Fatalf("usage %v", u)
	}
}

// An action arrives without the surface it came from (@ag-ui/client strips activities):
// the answer is a complete surface.
func TestActionWithoutItsSurface(t *testing.T) {
	srv := newServer(t, offline.Name)
	in := input()
	in["forwardedProps"] = map[string]any{"a2uiAction": map[string]any{"userAction": map[string]any{
		"name": "send", "surfaceId": "surface-1", "sourceComponentId": "send", "timestamp": "2026-11-25T10:00:00Z", "context": map[string]any{"reply": "7pm"}}}}
	evs := run(t, srv.URL, in)
	checkRun(t, evs)
	if all := raws(evs); !strings.Contains(all, `You said: the action \"send\"`) || !strings.Contains(all, `"createSurface"`) {
		t.Fatalf("the action did not reach the model, or no surface came: %s", all)
	}
}

// With the surfaces the client holds (activity messages, their content as the client
// built it from the events), an action updates them: the run's first event of the surface
// is a snapshot holding the whole surface, what the client held included, and the
// content after the run holds the answer.
func TestActionOnTheSurfaceItHolds(t *testing.T) {
	srv := newServer(t, offline.Name)
	first := run(t, srv.URL, input(user("m1", "Hello")))
	held := newActivities().applyAll(t, first).ops["a2ui-surface-surface-1"]
	if len(held) < 2 {
		t.Fatalf("the first run's surface: %s", held)
	}
	activity := map[string]any{"id": "a2ui-surface-surface-1", "role": "activity", "activityType": "a2ui-surface", "content": map[string]any{"a2ui_operations": held}}
	in := input(user("m1", "Hello"), map[string]any{"id": "a1", "role": "assistant", "content": "Here is a surface for your message."}, activity)
	in["forwardedProps"] = map[string]any{"a2uiAction": map[string]any{"userAction": map[string]any{
		"name": "send", "surfaceId": "surface-1", "sourceComponentId": "send", "timestamp": "2026-11-25T10:00:00Z", "context": map[string]any{"reply": "7pm"}}}}
	evs := run(t, srv.URL, in)
	checkRun(t, evs)
	var snap event
	for _, e := range evs {
		if e.Type() == "ACTIVITY_SNAPSHOT" && e.Data["messageId"] == "a2ui-surface-surface-1" {
			snap = e
			break
		}
	}
	// The snapshot holds the surface the client held, and builds it from nothing.
	var content struct {
		Content struct {
			Ops []json.RawMessage `json:"a2ui_operations"`
		} `json:"content"`
	}
	_ = json.Unmarshal(snap.Raw, &content)
	if snap.Raw == nil || !strings.Contains(string(content.Content.Ops[0]), `"createSurface"`) {
		t.Fatalf("the action's snapshot: %s", snap.Raw)
	}
	if got, had := componentIDs(content.Content.Ops), componentIDs(held); len(had) == 0 || !isSubset(had, got) {
		t.Fatalf("the snapshot holds %v, the client held %v", got, had)
	}
	ops := newActivities().applyAll(t, evs).ops["a2ui-surface-surface-1"]
	if !strings.Contains(mustJSON(ops), `7pm`) {
		t.Fatalf("the surface after the action: %s", ops)
	}
}

// A frontend tool's call ends the run with an interrupt; the next run answers it with a
// tool message, a resume entry, or a cancelled one.
func TestFrontendToolRoundTrip(t *testing.T) {
	srv := newServer(t, offline.Name)
	tools := []any{map[string]any{"name": "getLocation", "description": "The user's city", "parameters": map[string]any{"type": "object", "properties": map[string]any{}}}}
	in := input(user("m1", "Where am I? Use getLocation."))
	in["tools"] = tools
	evs := run(t, srv.URL, in)
	checkRun(t, evs)
	var call event
	for _, e := range evs {
		if e.Type() == "TOOL_CALL_START" {
			call = e
		}
	}
	id, _ := call.Data["toolCallId"].(string)
	if id == "" || call.Data["toolCallName"] != "getLocation" {
		t.Fatalf("no call: %v", types(evs))
	}
	fin := evs[len(evs)-1]
	want := fmt.Sprintf(`{"type":"interrupt","interrupts":[{"id":%q,"reason":"tool_call","message":"The frontend tool getLocation was called: answer with its result.","toolCallId":%q,"responseSchema":{"description":"The result of getLocation: any JSON value."}}]}`, id, id)
	if outcomeOf(fin) != want {
		t.Fatalf("outcome %s", fin.Raw)
	}
	// What @ag-ui/client sends next: the call in an assistant message, then its answer.
	var textID string
	for _, e := range evs {
		if e.Type() == "TEXT_MESSAGE_START" {
			textID = e.Data["messageId"].(string)
		}
	}
	asked := map[string]any{"id": textID, "role": "assistant", "content": "Calling getLocation.",
		"toolCalls": []any{map[string]any{"id": id, "type": "function", "function": map[string]any{"name": "getLocation", "arguments": "{}"}}}}
	for name, tc := range map[string]struct {
		answer map[string]any
		resume []any
		want   string
	}{
		"tool message": {answer: map[string]any{"id": "r1", "role": "tool", "toolCallId": id, "content": `{"city":"Lisbon"}`}, want: "Lisbon"},
		"resume":       {resume: []any{map[string]any{"interruptId": id, "status": "resolved", "payload": map[string]any{"city": "Porto"}}}, want: "Porto"},
		"cancelled":    {resume: []any{map[string]any{"interruptId": id, "status": "cancelled"}}, want: "cancelled"},
	} {
		t.Run(name, func(t *testing.T) {
			msgs := []map[string]any{user("m1", "Where am I? Use getLocation."), asked}
			if tc.answer != nil {
				msgs = append(msgs, tc.answer)
			}
			next := input(msgs...)
			next["tools"] = tools
			if tc.resume != nil {
				next["resume"] = tc.resume
			}
			evs := run(t, srv.URL, next)
			checkRun(t, evs)
			if fin := evs[len(evs)-1]; outcomeOf(fin) != `{"type":"success"}` || !strings.Contains(raws(evs), tc.want) {
				t.Fatalf("%s", raws(evs))
			}
		})
	}
}

// Bad input gets a 400 naming the field before the stream starts.
func TestBadInput(t *testing.T) {
	srv := newServer(t, offline.Name)
	ok := `{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":"hi"}]`
	call := `{"id":"a","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"getLocation","arguments":"{}"}}]}`
	tools := `"tools":[{"name":"getLocation","description":"d","parameters":{"type":"object"}}]`
	for _, tc := range []struct{ body, field string }{
		{`not json`, ""},
		{`[]`, ""},
		{`{"runId":"r","messages":[]}`, "threadId"},
		{`{"threadId":"t","messages":[]}`, "runId"},
		{`{"threadId":"t","runId":"r"}`, "messages"},
		{`{"threadId":5,"runId":"r","messages":[]}`, "threadId"},
		{`{"threadId":"t","runId":"r","messages":{}}`, "messages"},
		{`{"threadId":"t","runId":"r","messages":[{"id":"m","role":"robot","content":"hi"}]}`, "messages[0].role"},
		{`{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":5}]}`, "messages[0].content"},
		{`{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":[{"type":"audio","source":{"type":"url","value":"x"}}]}]}`, "messages[0].content[0].type"},
		{ok + `,"state":[1]}`, "state"},
		{ok + `,"forwardedProps":"x"}`, "forwardedProps"},
		{ok + `,"context":[{"description":"A2UI Component Schema — available components for generating UI surfaces. Use these component names and properties when creating A2UI operations.","value":"[1,2]"}]}`, "context[0].value"},
		{ok + `,"context":[{"description":"c","value":{"catalogId":"x"}}]}`, "context[0].value"},
		{ok + `,"tools":[{"name":"getLocation","description":"d","parameters":[1]}]}`, "tools[0].parameters"},
		{ok + `,"tools":[{"name":"get location","description":"d"}]}`, "tools[0].name"},
		{ok + `,"resume":[{"interruptId":"c1","status":"approved"}]}`, "resume[0].status"},
		{ok + `,"resume":[{"interruptId":"nope","status":"resolved","payload":1}]}`, "resume[0].interruptId"},
		{`{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":"use getLocation"},` + call + `],` + tools + `,"resume":[{"interruptId":"c1","status":"resolved","payload":1},{"interruptId":"c1","status":"cancelled"}]}`, "resume[1].interruptId"},
		{`{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":"use getLocation"},` + call + `,{"id":"r","role":"tool","toolCallId":"c1","content":"x"}],` + tools + `,"resume":[{"interruptId":"c1","status":"resolved","payload":1}]}`, "resume[0].interruptId"},
		{`{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":"use getLocation"},` + call + `,{"id":"u","role":"user","content":"and?"}],` + tools + `}`, "messages[2]"},
		{`{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":"x"},{"id":"a","role":"assistant","toolCalls":[{"id":"c1","type":"function","function":{"name":"getLocation","arguments":"[1]"}}]}]}`, "messages[1].toolCalls[0].function.arguments"},
		{`{"threadId":"t","runId":"r","messages":[{"id":"m","role":"tool","toolCallId":"zz","content":"x"}]}`, "messages[0].toolCallId"},
		{`{"threadId":"t","runId":"r","messages":[],"forwardedProps":{"a2uiAction":{"userAction":{"name":5}}}}`, "forwardedProps.a2uiAction.userAction"},
	} {
		res := post(t, srv.URL, []byte(tc.body), nil)
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		var out struct {
			Error struct {
				Status  string         `json:"status"`
				Message string         `json:"message"`
				Details map[string]any `json:"details"`
			} `json:"error"`
		}
		if res.StatusCode != http.StatusBadRequest || res.Header.Get("Content-Type") != "application/json" || json.Unmarshal(b, &out) != nil || out.Error.Message == "" {
			t.Errorf("%s: %d %s %s", tc.body, res.StatusCode, res.Header.Get("Content-Type"), b)
			continue
		}
		field, _ := out.Error.Details["field"].(string)
		if tc.field != "" && (!strings.HasPrefix(field, tc.field) || !strings.HasPrefix(out.Error.Message, field)) {
			t.Errorf("%s: field %q, want %q: %s", tc.body, field, tc.field, out.Error.Message)
		}
		if strings.Contains(out.Error.Message, "conversation[") || strings.Contains(out.Error.Message, "clientTools[") {
			t.Errorf("%s: the core's field names leak: %s", tc.body, out.Error.Message)
		}
	}
}

// A model that fails after the stream started ends the run with RUN_ERROR, its message
// and code.
func TestRunError(t *testing.T) {
	fake := fakegemini.New()
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "k")
	srv := newServer(t, "googleai/gemini-2.5-flash")
	fake.Enqueue(fakegemini.Reply{Chunks: fakegemini.TextChunks("Let me think", 4), MidStream: &fakegemini.MidStreamFailure{After: 2}})
	evs := run(t, srv.URL, input(user("m1", "a form")))
	checkRun(t, evs)
	last := evs[len(evs)-1]
	if last.Type() != "RUN_ERROR" || last.Data["message"] == "" || last.Data["code"] == "" {
		t.Fatalf("%s", last.Raw)
	}
}

// A run whose connection drops is read again with Last-Event-ID: the rest of its events,
// none lost or repeated, and no second model call.
func TestReconnect(t *testing.T) {
	fake := fakegemini.New(fakegemini.WithPacing(30 * time.Millisecond))
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "k")
	srv := newServer(t, "googleai/gemini-2.5-flash")
	fake.Enqueue(fakegemini.Reply{Chunks: fakegemini.TextChunks(formResponse, 20)})
	in := input(user("m1", "a form"))
	res := post(t, srv.URL, in, nil)
	had := readEvents(t, bufio.NewReader(res.Body), 4)
	res.Body.Close()
	res = post(t, srv.URL, in, map[string]string{"Last-Event-ID": had[len(had)-1].ID})
	rest := readEvents(t, bufio.NewReader(res.Body), -1)
	res.Body.Close()
	all := append(had, rest...)
	checkRun(t, all)
	if n := len(fake.Requests()); n != 1 {
		t.Fatalf("%d model calls", n)
	}
	if all[len(all)-1].Type() != "RUN_FINISHED" {
		t.Fatalf("%v", types(all))
	}
	// Once more from the start: the same events.
	res = post(t, srv.URL, in, map[string]string{"Last-Event-ID": strings.SplitN(had[0].ID, ".", 2)[0] + ".0"})
	again := readEvents(t, bufio.NewReader(res.Body), -1)
	res.Body.Close()
	if mustJSON(again) != mustJSON(all) {
		t.Fatal("a second reading differs")
	}
	for hdr, status := range map[string]int{"nope.3": http.StatusNotFound, "x": http.StatusBadRequest} {
		res = post(t, srv.URL, in, map[string]string{"Last-Event-ID": hdr})
		res.Body.Close()
		if res.StatusCode != status {
			t.Errorf("Last-Event-ID %s: %d", hdr, res.StatusCode)
		}
	}
}

// The catalog comes from the context entry that holds one; the surface is created with
// it.
func TestCatalogFromContext(t *testing.T) {
	srv := newServer(t, offline.Name)
	in := input(user("m1", "Hello"))
	basic, err := os.ReadFile("../../a2ui/spec/v0_9/basic_catalog.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(basic, &doc); err != nil {
		t.Fatal(err)
	}
	doc["catalogId"] = "https://example.com/catalogs/mine.json"
	cat := mustJSON(doc)
	in["context"] = []any{map[string]any{"description": "The user's locale", "value": "pt-PT"}, map[string]any{"description": "A2UI Component Schema — available components for generating UI surfaces. Use these component names and properties when creating A2UI operations.", "value": cat}}
	evs := run(t, srv.URL, in)
	if !strings.Contains(raws(evs), `"catalogId":"https://example.com/catalogs/mine.json"`) {
		t.Fatalf("%s", raws(evs))
	}
}

// A browser app on another origin may call the endpoint: its preflight is answered,
// Last-Event-ID allowed.
func TestPreflight(t *testing.T) {
	srv := newServer(t, offline.Name)
	req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/ag-ui", nil)
	req.Header.Set("Origin", "https://app.example")
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type,last-event-id")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	h := res.Header
	if res.StatusCode != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") == "" ||
		!strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") || !strings.Contains(h.Get("Access-Control-Allow-Headers"), "last-event-id") {
		t.Fatalf("%d %v", res.StatusCode, h)
	}
}

// A surface deleted and created again within a run: the deleteSurface is a delta, which
// leaves the content ending with it; the surface created again is a snapshot of its own,
// replacing the content with what builds it.
func TestSurfaceDeletedAndCreatedAgain(t *testing.T) {
	fake := fakegemini.New()
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "k")
	srv := newServer(t, "googleai/gemini-2.5-flash")
	const create = `{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}`
	fake.Enqueue(fakegemini.Respond(fakegemini.TextChunks("Here.\n```a2ui\n"+create+"\n"+
		`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Text","text":"First"}]}}`+"\n"+
		`{"version":"v0.9","deleteSurface":{"surfaceId":"s"}}`+"\n"+create+"\n"+
		`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Text","text":"Second"}]}}`+"\n```\n", 1)...))
	evs := run(t, srv.URL, input(user("m1", "a surface, twice")))
	checkRun(t, evs)
	var got []string
	a := newActivities()
	for _, e := range evs {
		if _, added, replaced := a.apply(t, e); added != nil {
			kind := "delta"
			if replaced {
				kind = "snapshot"
			}
			var ops []string
			for _, m := range added {
				var msg map[string]json.RawMessage
				_ = json.Unmarshal(m, &msg)
				for k := range msg {
					if k != "version" {
						ops = append(ops, k)
					}
				}
			}
			got = append(got, kind+" "+strings.Join(ops, ","))
		}
	}
	want := []string{"snapshot createSurface", "delta updateComponents", "delta deleteSurface", "snapshot createSurface", "delta updateComponents"}
	if !slices.Equal(got, want) {
		t.Fatalf("activity events %q, want %q\n%s", got, want, raws(evs))
	}
	if ops := a.ops["a2ui-surface-s"]; len(ops) != 2 || !strings.Contains(string(ops[1]), `"Second"`) {
		t.Fatalf("the content after the run: %s", ops)
	}
}
