package a2aapi_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui/a2aapi"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
)

func TestAgentCard(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	for _, path := range []string{"/.well-known/agent-card.json", "/a2a/.well-known/agent-card.json"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var card map[string]any
		_ = json.NewDecoder(res.Body).Decode(&card)
		res.Body.Close()
		caps, _ := card["capabilities"].(map[string]any)
		exts, _ := caps["extensions"].([]any)
		if res.StatusCode != 200 || card["url"] != srv.URL+"/a2a" || card["protocolVersion"] != "0.3" || card["preferredTransport"] != "JSONRPC" ||
			caps["streaming"] != true || len(exts) != 3 || card["name"] == "" || card["version"] == "" {
			t.Fatalf("%s: %d %s", path, res.StatusCode, mustJSON(card))
		}
		var uris []string
		for _, e := range exts {
			m := e.(map[string]any)
			params := m["params"].(map[string]any)
			if params["acceptsInlineCatalogs"] != true || len(params["supportedCatalogIds"].([]any)) == 0 {
				t.Fatalf("extension %s", mustJSON(m))
			}
			uris = append(uris, m["uri"].(string))
		}
		if strings.Join(uris, " ") != extV091+" "+extV09+" "+extV08 {
			t.Fatalf("extensions %v", uris)
		}
		skills, _ := card["skills"].([]any)
		if len(skills) == 0 || len(skills[0].(map[string]any)["examples"].([]any)) == 0 {
			t.Fatalf("skills %s", mustJSON(skills))
		}
	}
	// Behind a proxy the card names the public URL.
	srv2, _ := newAgent(t, offline.Name, nil, a2aapi.WithPublicURL("https://ui.example.com/"))
	res, _ := http.Get(srv2.URL + "/.well-known/agent-card.json")
	var card map[string]any
	_ = json.NewDecoder(res.Body).Decode(&card)
	res.Body.Close()
	ifaces, _ := card["supportedInterfaces"].([]any)
	if card["url"] != "https://ui.example.com/a2a" || len(ifaces) != 3 || ifaces[1].(map[string]any)["url"] != "https://ui.example.com/a2a/v1" {
		t.Fatalf("public card: %s", mustJSON(card))
	}
}

// A turn as genui_a2a 0.10.1 sends it: the task first, a working status update per A2UI
// message (one per DataPart, each valid A2UI, version exactly "v0.9"), then the final
// input-required status, final:true, and the stream closes.
func TestStreamTurn(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	res, evs := stream(t, srv.URL+"/a2a", "message/stream", map[string]any{"configuration": nil, "metadata": nil,
		"message": map[string]any{"role": "user", "kind": "message", "messageId": "m1", "taskId": nil, "contextId": nil, "referenceTaskIds": nil, "extensions": nil,
			"parts": []any{map[string]any{"kind": "text", "metadata": nil, "text": "Book a table for two"}}, "metadata": nil}},
		map[string]string{"X-A2A-Extensions": extV09, "Accept": "text/event-stream"})
	if res.StatusCode != 200 || res.Header.Get("Content-Type") != "text/event-stream" || res.Header.Get("X-A2A-Extensions") != extV09 {
		t.Fatalf("%d %v", res.StatusCode, res.Header)
	}
	if len(evs) < 4 || evs[0].Result["kind"] != "task" || state(evs[0].Result) != "submitted" {
		t.Fatalf("first event: %+v", evs)
	}
	last := evs[len(evs)-1].Result
	if last["kind"] != "status-update" || state(last) != "input-required" || last["final"] != true {
		t.Fatalf("last event: %s", mustJSON(last))
	}
	v := a2uitest.New(t, "v0.9", nil)
	var msgs [][]byte
	for _, ev := range evs[1 : len(evs)-1] {
		if ev.Result["kind"] != "status-update" || state(ev.Result) != "working" || ev.Result["final"] != false {
			t.Fatalf("event %s", ev.Raw)
		}
		ps := statusParts(ev.Result)
		if len(ps) != 1 {
			t.Fatalf("%d parts in %s", len(ps), ev.Raw)
		}
		if ps[0]["kind"] == "data" {
			d := ps[0]["data"].(map[string]any)
			if d["version"] != "v0.9" || ps[0]["metadata"].(map[string]any)["mimeType"] != "application/json+a2ui" {
				t.Fatalf("DataPart %s", mustJSON(ps[0]))
			}
			msgs = append(msgs, mustJSON(d))
		}
	}
	// Dart's JSON, no capabilities: the basic catalog under Flutter's id.
	if len(msgs) < 3 || !strings.Contains(string(msgs[0]), `"createSurface"`) || !strings.Contains(string(msgs[0]), `"https://a2ui.org/specification/v0_9/basic_catalog.json"`) {
		t.Fatalf("A2UI messages: %s", msgs)
	}
	v.CheckAll(t, msgs...)
}

// The user's action (a DataPart without a MIME type, in a new task of the same context,
// as genui_a2a sends it) updates the surface the client shows: no createSurface again.
func TestActionRoundTrip(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	hdr := map[string]string{"X-A2A-Extensions": extV09}
	_, evs := stream(t, srv.URL+"/a2a", "message/stream", map[string]any{"message": message(text("Book a table"))}, hdr)
	task := evs[0].Result
	ctxID, taskID := task["contextId"].(string), task["id"].(string)
	action := map[string]any{"kind": "data", "metadata": nil, "data": map[string]any{"version": "v0.9", "action": map[string]any{
		"surfaceId": "surface-1", "name": "send", "sourceComponentId": "send", "timestamp": "2026-11-22T12:00:00.000", "context": map[string]any{"reply": "Friday 7pm"}}}}
	msg := message(action)
	msg["contextId"], msg["referenceTaskIds"] = ctxID, []any{taskID}
	_, evs = stream(t, srv.URL+"/a2a", "message/stream", map[string]any{"message": msg}, hdr)
	if evs[0].Result["id"] == taskID || evs[0].Result["contextId"] != ctxID {
		t.Fatalf("the action's task: %s", evs[0].Raw)
	}
	data := dataParts(evs)
	all := string(mustJSON(data))
	if len(data) == 0 || strings.Contains(all, "createSurface") || !strings.Contains(all, `You sent \"send\" with {\"reply\":\"Friday 7pm\"}.`) {
		t.Fatalf("the action's turn: %s", all)
	}
	if state(evs[len(evs)-1].Result) != "input-required" {
		t.Fatalf("final %s", evs[len(evs)-1].Raw)
	}
}

// A client tool through input-required: the call as a DataPart of the final status; the
// result, in a message naming the task, continues it.
func TestClientToolThroughInputRequired(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	msg := message(text("Where am I? Use getLocation"))
	msg["metadata"] = map[string]any{"clientTools": []any{map[string]any{"name": "getLocation", "description": "The user's city"}}}
	_, evs := stream(t, srv.URL+"/a2a", "message/stream", map[string]any{"message": msg}, map[string]string{"X-A2A-Extensions": extV09})
	final := evs[len(evs)-1].Result
	ps := statusParts(final)
	if state(final) != "input-required" || len(ps) != 1 {
		t.Fatalf("final %s", evs[len(evs)-1].Raw)
	}
	call := ps[0]["data"].(map[string]any)["toolCall"].(map[string]any)
	if call["name"] != "getLocation" || call["callId"] == "" {
		t.Fatalf("call %s", mustJSON(ps[0]))
	}
	taskID := final["taskId"].(string)
	answer := message(map[string]any{"kind": "data", "data": map[string]any{"toolResult": map[string]any{"callId": call["callId"], "name": "getLocation", "output": map[string]any{"city": "Berlin"}}}})
	answer["taskId"] = taskID
	_, evs = stream(t, srv.URL+"/a2a", "message/stream", map[string]any{"message": answer}, map[string]string{"X-A2A-Extensions": extV09})
	if evs[0].Result["id"] != taskID || !strings.Contains(string(mustJSON(dataParts(evs))), "getLocation returned city: Berlin") || state(evs[len(evs)-1].Result) != "input-required" {
		t.Fatalf("the continued task: %s", mustJSON(evs))
	}
	// The same result again: the call was answered.
	_, evs = stream(t, srv.URL+"/a2a", "message/stream", map[string]any{"message": answer}, nil)
	if len(evs) != 1 || evs[0].Error == nil || evs[0].Error["code"] != float64(-32004) && evs[0].Error["code"] != float64(-32602) {
		t.Fatalf("an answered call: %s", mustJSON(evs))
	}
}

// tasks/get, tasks/cancel of a running task (its model call stops), of a finished one,
// of an unknown one.
func TestGetAndCancel(t *testing.T) {
	fake := fakegemini.New(fakegemini.WithPacing(200 * time.Millisecond))
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "k")
	srv, _ := newAgent(t, "googleai/gemini-2.5-flash", nil)
	fake.Enqueue(fakegemini.Reply{Chunks: fakegemini.TextChunks(formResponse, 20)})
	res := send(t, srv.URL+"/a2a", "message/stream", map[string]any{"message": message(text("a form"))}, map[string]string{"X-A2A-Extensions": extV09})
	defer res.Body.Close()
	r := bufio.NewReader(res.Body)
	first := readEvents(t, r, 1)
	taskID := first[0].Result["id"].(string)
	_, got := rpc(t, srv.URL+"/a2a", "tasks/get", map[string]any{"id": taskID}, nil)
	if res := got["result"].(map[string]any); res["id"] != taskID || state(res) != "working" {
		t.Fatalf("tasks/get of a running task: %s", mustJSON(got))
	}
	if err := fake.WaitRequests(t.Context(), 1); err != nil {
		t.Fatal(err)
	}
	_, got = rpc(t, srv.URL+"/a2a", "tasks/cancel", map[string]any{"id": taskID}, nil)
	if res, _ := got["result"].(map[string]any); res == nil || state(res) != "canceled" {
		t.Fatalf("tasks/cancel: %s", mustJSON(got))
	}
	rest := readEvents(t, r, -1)
	if len(rest) == 0 {
		t.Fatal("the stream ended without a final status")
	}
	if last := rest[len(rest)-1].Result; state(last) != "canceled" || last["final"] != true {
		t.Fatalf("the canceled stream ends with %s", rest[len(rest)-1].Raw)
	}
	select {
	case <-fake.Requests()[0].Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the model call goes on")
	}
	if !fake.Requests()[0].Cancelled() {
		t.Fatal("the model call was not cancelled")
	}
	_, got = rpc(t, srv.URL+"/a2a", "tasks/get", map[string]any{"id": taskID, "historyLength": 0}, nil)
	if res := got["result"].(map[string]any); state(res) != "canceled" || res["history"] != nil {
		t.Fatalf("tasks/get of the canceled task: %s", mustJSON(got))
	}
	_, got = rpc(t, srv.URL+"/a2a", "tasks/cancel", map[string]any{"id": taskID}, nil)
	if e, _ := got["error"].(map[string]any); e == nil || e["code"] != float64(-32002) {
		t.Fatalf("cancel of a canceled task: %s", mustJSON(got))
	}
	_, got = rpc(t, srv.URL+"/a2a", "tasks/get", map[string]any{"id": "nope"}, nil)
	if e, _ := got["error"].(map[string]any); e == nil || e["code"] != float64(-32001) {
		t.Fatalf("an unknown task: %s", mustJSON(got))
	}
}

// A stream dropped mid-turn: the turn goes on, and tasks/resubscribe sends what A2A asks
// of it: the task first (1.0, 3.1.6: "The operation MUST return a Task object as the
// first event in the stream, representing the current state of the task at the time of
// subscription"), then the turn's status updates in the order they were generated
// (3.5.2), backfilled from the turn's start (v0.3, 7.9, leaves "whether it attempts to
// backfill some missed events" to the server), then the final status. Every status
// message has the id it had in the first stream: dropping those it has, the client holds
// every message of the turn once.
func TestResubscribeAfterADroppedStream(t *testing.T) {
	fake := fakegemini.New(fakegemini.WithPacing(50 * time.Millisecond))
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "k")
	srv, _ := newAgent(t, "googleai/gemini-2.5-flash", nil)
	valid := strings.Replace(formResponse, `,"placeholder":"you@example.com"`, "", 1)
	fake.Enqueue(fakegemini.Reply{Chunks: fakegemini.TextChunks(valid, 20)})
	hdr := map[string]string{"X-A2A-Extensions": extV09}
	res := send(t, srv.URL+"/a2a", "message/stream", map[string]any{"message": message(text("a form"))}, hdr)
	had := readEvents(t, bufio.NewReader(res.Body), 3)
	res.Body.Close()
	taskID := had[0].Result["id"].(string)
	_, evs := stream(t, srv.URL+"/a2a", "tasks/resubscribe", map[string]any{"id": taskID}, hdr)
	if len(evs) < 2 || evs[0].Result["kind"] != "task" || evs[0].Result["id"] != taskID || len(statusParts(evs[0].Result)) > 0 {
		t.Fatalf("resubscribed: %s", mustJSON(evs))
	}
	if last := evs[len(evs)-1].Result; state(last) != "input-required" || last["final"] != true {
		t.Fatalf("resubscribed stream ends with %s", evs[len(evs)-1].Raw)
	}
	// The turn from its start: what the client had comes first, the same.
	for i, ev := range had[1:] {
		if messageID(evs[1+i]) != messageID(ev) || string(mustJSON(statusParts(evs[1+i].Result))) != string(mustJSON(statusParts(ev.Result))) {
			t.Fatalf("event %d: had %s, resubscribed %s", i+1, ev.Raw, evs[1+i].Raw)
		}
	}
	all := evs[1:]
	var msgs [][]byte
	for _, d := range dataParts(all) {
		msgs = append(msgs, mustJSON(d))
	}
	if n := strings.Count(string(mustJSON(dataParts(all))), `"createSurface"`); n != 1 {
		t.Fatalf("%d createSurface in %s", n, mustJSON(dataParts(all)))
	}
	a2uitest.New(t, "v0.9", nil).CheckAll(t, msgs...)
	if !strings.Contains(string(mustJSON(dataParts(all))), `"submit-label"`) {
		t.Fatalf("the surface is incomplete: %s", msgs)
	}
	// Once the turn has ended, a resubscription sends the same: the task, then the turn.
	_, again := stream(t, srv.URL+"/a2a", "tasks/resubscribe", map[string]any{"id": taskID}, hdr)
	if len(again) != 1+len(all) || state(again[0].Result) != "input-required" || state(again[len(again)-1].Result) != "input-required" {
		t.Fatalf("after the end: %s", mustJSON(again))
	}
	for i, ev := range again[1:] {
		if messageID(ev) != messageID(all[i]) || string(mustJSON(statusParts(ev.Result))) != string(mustJSON(statusParts(all[i].Result))) {
			t.Fatalf("event %d again: %s, first %s", i+1, ev.Raw, all[i].Raw)
		}
	}
}

// What a client asks for decides the A2UI it gets.
func TestVersionsAndCatalogs(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	firstData := func(hdr map[string]string, metadata map[string]any) (map[string]any, map[string]any) {
		t.Helper()
		msg := message(text("Hello"))
		if metadata != nil {
			msg["metadata"] = metadata
		}
		_, evs := stream(t, srv.URL+"/a2a", "message/stream", map[string]any{"message": msg}, hdr)
		for _, ev := range evs {
			for _, p := range statusParts(ev.Result) {
				if p["kind"] == "data" {
					return p["data"].(map[string]any), p["metadata"].(map[string]any)
				}
			}
		}
		t.Fatalf("no DataPart: %s", mustJSON(evs))
		return nil, nil
	}
	// v0.8.
	d, _ := firstData(map[string]string{"X-A2A-Extensions": extV08}, nil)
	if d["beginRendering"] == nil && d["surfaceUpdate"] == nil {
		t.Fatalf("v0.8: %s", mustJSON(d))
	}
	// v0.9.1, asked among others in one header.
	d, meta := firstData(map[string]string{"X-A2A-Extensions": extV09 + "," + extV091}, nil)
	if meta["mimeType"] != "application/a2ui+json" || d["version"] != "v0.9" {
		t.Fatalf("v0.9.1: %s %s", mustJSON(d), mustJSON(meta))
	}
	// Flutter's catalog id, sent in the capabilities.
	d, _ = firstData(map[string]string{"X-A2A-Extensions": extV09}, map[string]any{"a2uiClientCapabilities": map[string]any{"v0.9": map[string]any{"supportedCatalogIds": []any{"https://a2ui.org/specification/v0_9/basic_catalog.json"}}}})
	if d["createSurface"].(map[string]any)["catalogId"] != "https://a2ui.org/specification/v0_9/basic_catalog.json" {
		t.Fatalf("Flutter's id: %s", mustJSON(d))
	}
	// No capabilities from Dart (Flutter): the basic catalog under Flutter's id; from
	// anything else, under the specification's.
	d, _ = firstData(map[string]string{"X-A2A-Extensions": extV09, "User-Agent": "Dart/3.9 (dart:io)"}, nil)
	if d["createSurface"].(map[string]any)["catalogId"] != "https://a2ui.org/specification/v0_9/basic_catalog.json" {
		t.Fatalf("Flutter without capabilities: %s", mustJSON(d))
	}
	d, _ = firstData(nil, nil)
	if d["createSurface"].(map[string]any)["catalogId"] != "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json" {
		t.Fatalf("no capabilities: %s", mustJSON(d))
	}
}

// A2A 1.0 JSON-RPC: the same turn, 1.0 names and JSON, A2UI DataParts holding a list.
func TestA2A10Stream(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	res, evs := stream(t, srv.URL+"/a2a/v1", "SendStreamingMessage", map[string]any{"message": map[string]any{
		"messageId": "m1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "Hello"}}}},
		map[string]string{"A2A-Extensions": extV09, "A2A-Version": "1.0"})
	if res.StatusCode != 200 || len(evs) < 3 {
		t.Fatalf("%d %s", res.StatusCode, mustJSON(evs))
	}
	task, _ := evs[0].Result["task"].(map[string]any)
	if task == nil || task["status"].(map[string]any)["state"] != "TASK_STATE_SUBMITTED" {
		t.Fatalf("first: %s", evs[0].Raw)
	}
	var list []any
	for _, ev := range evs {
		su, _ := ev.Result["statusUpdate"].(map[string]any)
		if su == nil {
			continue
		}
		msg, _ := su["status"].(map[string]any)["message"].(map[string]any)
		for _, p := range asList(msg["parts"]) {
			if l, ok := p.(map[string]any)["data"].([]any); ok {
				list = append(list, l...)
			}
		}
	}
	if len(list) < 3 || !strings.Contains(string(mustJSON(list[0])), "createSurface") {
		t.Fatalf("1.0 A2UI parts: %s", mustJSON(evs))
	}
	var msgs [][]byte
	for _, m := range list {
		msgs = append(msgs, mustJSON(m))
	}
	a2uitest.New(t, "v0.9", nil).CheckAll(t, msgs...)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// Errors carry the A2A and JSON-RPC codes, and invalid params name the field.
func TestErrors(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	post := func(body string) map[string]any {
		t.Helper()
		res, err := http.Post(srv.URL+"/a2a", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
			t.Fatalf("%s: %v (%s)", body, err, res.Header.Get("Content-Type"))
		}
		e, _ := out["error"].(map[string]any)
		if e == nil {
			t.Fatalf("%s: no error: %s", body, mustJSON(out))
		}
		return e
	}
	for _, tc := range []struct {
		body string
		code float64
		msg  string
	}{
		{`{`, -32700, ""},
		{`{"jsonrpc":"2.0","id":1}`, -32600, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/nothing","params":{}}`, -32601, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","kind":"message","messageId":"m","parts":"x"}}}`, -32602, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","kind":"message","messageId":"m","parts":[{"kind":"data","data":{"version":"v0.9","action":{"name":5}}}]}}}`, -32602, "message.parts[0].data.action"},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","kind":"message","messageId":"m","parts":[{"kind":"text","text":"hi"}],"metadata":{"a2uiClientCapabilities":{"v0.9":{"supportedCatalogIds":["urn:nothing"]}}}}}}`, -32602, "message.metadata.a2uiClientCapabilities"},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","kind":"message","messageId":"m","parts":[{"kind":"file","file":{"uri":"https://x.test/a.pdf","mimeType":"application/pdf"}}]}}}`, -32005, "message.parts[0]"},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","kind":"message","messageId":"m","taskId":"nope","parts":[{"kind":"text","text":"hi"}]}}}`, -32001, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","kind":"message","messageId":"m","parts":[{"kind":"text","text":"hi"}],"metadata":{"clientTools":[{"name":"addOrUpdateSurface"}]}}}}`, -32602, "message.metadata.clientTools[0].name"},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/get","params":{"id":"x"}}`, -32003, ""},
		{`{"jsonrpc":"2.0","id":1,"method":5,"params":{}}`, -32600, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","kind":"message","messageId":"m","parts":[{"kind":"nothing","text":"hi"}]}}}`, -32602, ""},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","kind":"message","parts":[{"kind":"text","text":"hi"}]}}}`, -32602, "message.messageId"},
		{`{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","kind":"message","messageId":"m","parts":[{"kind":"text","text":"hi"}]},"configuration":{"historyLength":-1}}}`, -32602, "configuration.historyLength"},
		{`{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x","historyLength":-1}}`, -32602, "historyLength"},
	} {
		e := post(tc.body)
		msg, _ := e["message"].(string)
		if e["code"] != tc.code || !strings.Contains(msg, tc.msg) {
			t.Errorf("%s: %s", tc.body, mustJSON(e))
		}
	}
}

// A request body over the limit is refused whole, with a JSON error, not cut and misread;
// and what a handler leaves of a body is never read as the connection's next request.
func TestBodyLimit(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil, a2aapi.WithBodyLimit(1<<20))
	for _, tc := range []struct{ path, body string }{
		{"/a2a", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"x"}}`},
		{"/a2a/v1", `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"x"}}`},
		{"/a2a/v1/rest/message:send", `{"message":{"role":"ROLE_USER","messageId":"m","parts":[{"text":"hi"}]}}`},
	} {
		res, err := http.Post(srv.URL+tc.path, "application/json", strings.NewReader(tc.body+strings.Repeat(" ", 1<<20)))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		t.Logf("%s: %d %s %s", tc.path, res.StatusCode, res.Header.Get("Content-Type"), b)
		if tc.path == "/a2a" && (res.StatusCode != http.StatusRequestEntityTooLarge || !bytes.Contains(b, []byte(`"code":-32600`))) ||
			!json.Valid(b) || res.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s %s", tc.path, res.StatusCode, res.Header.Get("Content-Type"), b)
		}
		if code, out := rpc(t, srv.URL+"/a2a", "tasks/get", map[string]any{"id": "x"}, nil); code != http.StatusOK || out["error"] == nil {
			t.Errorf("after %s: %d %s", tc.path, code, mustJSON(out))
		}
	}
}

// Browsers preflight the A2A endpoints and the card with the A2A headers.
func TestCORSPreflight(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	for _, path := range []string{"/a2a", "/a2a/v1", "/.well-known/agent-card.json"} {
		req, _ := http.NewRequest(http.MethodOptions, srv.URL+path, nil)
		req.Header.Set("Origin", "http://app.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type,x-a2a-extensions,a2a-version")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode >= 300 || res.Header.Get("Access-Control-Allow-Origin") == "" || !strings.Contains(strings.ToLower(res.Header.Get("Access-Control-Allow-Headers")), "x-a2a-extensions") {
			t.Fatalf("%s: %d %v", path, res.StatusCode, res.Header)
		}
	}
}

// message/send, as the A2UI Lit shell sends it: the task at the end of its turn, its
// status message holding every part of the turn.
func TestSendMessage(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	_, got := rpc(t, srv.URL+"/a2a", "message/send", map[string]any{"message": message(text("Hello"),
		map[string]any{"kind": "data", "data": map[string]any{"useStreaming": false}, "mimeType": "application/json"})}, map[string]string{"X-A2A-Extensions": extV09})
	res, _ := got["result"].(map[string]any)
	if res == nil || res["kind"] != "task" || state(res) != "input-required" {
		t.Fatalf("message/send: %s", mustJSON(got))
	}
	var msgs [][]byte
	for _, p := range statusParts(res) {
		if p["kind"] == "data" {
			msgs = append(msgs, mustJSON(p["data"]))
		}
	}
	if len(msgs) < 3 {
		t.Fatalf("status parts: %s", mustJSON(res))
	}
	a2uitest.New(t, "v0.9", nil).CheckAll(t, msgs...)
}

// A task keeps its turn's parts once, and each reader gets them on its own wire: the
// v0.3 client one A2UI message per DataPart, an A2A 1.0 client a list with its media type.
func TestTaskReadOnEitherWire(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	_, got := rpc(t, srv.URL+"/a2a", "message/send", map[string]any{"message": message(text("Hello"))}, map[string]string{"X-A2A-Extensions": extV09})
	res, _ := got["result"].(map[string]any)
	id, _ := res["id"].(string)
	v03 := statusParts(res)
	_, got = rpc(t, srv.URL+"/a2a", "tasks/get", map[string]any{"id": id}, nil)
	res, _ = got["result"].(map[string]any)
	if again := statusParts(res); len(v03) < 4 || string(mustJSON(again)) != string(mustJSON(v03)) {
		t.Fatalf("tasks/get: %s\nmessage/send: %s", mustJSON(again), mustJSON(v03))
	}
	_, got = rpc(t, srv.URL+"/a2a/v1", "GetTask", map[string]any{"id": id}, nil)
	res, _ = got["result"].(map[string]any)
	v1 := statusParts(res)
	if len(v1) != len(v03) {
		t.Fatalf("GetTask: %s", mustJSON(got))
	}
	for i, p := range v1 {
		if p["kind"] == "data" || p["text"] != v03[i]["text"] {
			t.Fatalf("part %d: %s, on v0.3 %s", i, mustJSON(p), mustJSON(v03[i]))
		}
		if v03[i]["kind"] != "data" {
			continue
		}
		list, _ := p["data"].([]any)
		if p["mediaType"] != "application/json+a2ui" || len(list) != 1 || string(mustJSON(list[0])) != string(mustJSON(v03[i]["data"])) {
			t.Fatalf("part %d: %s, on v0.3 %s", i, mustJSON(p), mustJSON(v03[i]))
		}
	}
}

// A message sent not to block (v0.3 blocking: false, 1.0 returnImmediately) gets its task
// at once, submitted; the turn runs on, and tasks/get shows its end.
func TestSendMessageReturnImmediately(t *testing.T) {
	fake := fakegemini.New(fakegemini.WithPacing(20 * time.Millisecond))
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "k")
	srv, _ := newAgent(t, "googleai/gemini-2.5-flash", nil)
	for _, tc := range []struct{ path, method, get string }{
		{"/a2a", "message/send", "tasks/get"},
		{"/a2a/v1", "SendMessage", "GetTask"},
	} {
		fake.Enqueue(fakegemini.Reply{Chunks: fakegemini.TextChunks(formResponse, 20)})
		params := map[string]any{"message": message(text("a form")), "configuration": map[string]any{"blocking": false}}
		if tc.method == "SendMessage" {
			params = map[string]any{"message": map[string]any{"role": "ROLE_USER", "messageId": "m", "parts": []any{map[string]any{"text": "a form"}}},
				"configuration": map[string]any{"returnImmediately": true}}
		}
		_, got := rpc(t, srv.URL+tc.path, tc.method, params, map[string]string{"X-A2A-Extensions": extV09, "A2A-Extensions": extV09})
		res, _ := got["result"].(map[string]any)
		if task, ok := res["task"].(map[string]any); ok {
			res = task // A2A 1.0 wraps the result
		}
		id, _ := res["id"].(string)
		st, _ := res["status"].(map[string]any)
		if id == "" || (st["state"] != "submitted" && st["state"] != "TASK_STATE_SUBMITTED") {
			t.Fatalf("%s: %s", tc.method, mustJSON(got))
		}
		deadline := time.Now().Add(10 * time.Second)
		for {
			_, got = rpc(t, srv.URL+"/a2a", "tasks/get", map[string]any{"id": id}, nil)
			res, _ = got["result"].(map[string]any)
			if state(res) == "input-required" {
				break
			}
			if s := state(res); s != "working" || time.Now().After(deadline) {
				t.Fatalf("%s, then tasks/get: %s", tc.method, mustJSON(got))
			}
			time.Sleep(20 * time.Millisecond)
		}
		if parts := statusParts(res); len(parts) < 3 {
			t.Fatalf("the ended task: %s", mustJSON(res))
		}
	}
}

// Flutter in a browser sends no Dart User-Agent, but Dart's JSON (every unset field null):
// it too gets the basic catalog under Flutter's id.
func TestFlutterWebGetsFlutterCatalogID(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	_, evs := stream(t, srv.URL+"/a2a", "message/stream", map[string]any{"configuration": nil, "metadata": nil,
		"message": map[string]any{"role": "user", "kind": "message", "messageId": "m1", "taskId": nil, "contextId": nil, "referenceTaskIds": nil, "extensions": nil,
			"parts": []any{map[string]any{"kind": "text", "metadata": nil, "text": "Hello"}}, "metadata": nil}},
		map[string]string{"X-A2A-Extensions": extV09, "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0"})
	data := dataParts(evs)
	if len(data) == 0 || data[0]["createSurface"].(map[string]any)["catalogId"] != "https://a2ui.org/specification/v0_9/basic_catalog.json" {
		t.Fatalf("Flutter web: %s", mustJSON(data))
	}
}
