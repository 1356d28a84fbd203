package a2aapi_test

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/a2aapi"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

// messageID is the id of an event's status message.
func messageID(ev event) string {
	st, _ := ev.Result["status"].(map[string]any)
	msg, _ := st["message"].(map[string]any)
	id, _ := msg["messageId"].(string)
	return id
}

// awaitState reads a task with tasks/get until it is in state want.
func awaitState(t *testing.T, url, id, want string) map[string]any {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, got := rpc(t, url, "tasks/get", map[string]any{"id": id}, nil)
		res, _ := got["result"].(map[string]any)
		if state(res) == want {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("task %s is not %s: %s", id, want, mustJSON(got))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// a2uiOf returns the A2UI messages of the events' status messages, as JSON.
func a2uiOf(evs []event) [][]byte {
	var out [][]byte
	for _, d := range dataParts(evs) {
		out = append(out, mustJSON(d))
	}
	return out
}

// The offline model answers at once: the server flushes a whole turn faster than its
// client reads it. A client that reads three events and goes away, as the turn is
// written or once it has been (end), then resubscribes gets the task, then the whole
// turn from its start in the order it was generated (A2A 1.0, 3.1.6 and 3.5.2; the
// backfill v0.3, 7.9, leaves to the server), each status message under the id it had:
// dropping the ones it has, the client holds every message of the turn once. The task
// holds the turn whole: each surface in the final state those messages leave it in.
func TestResubscribeAfterAnUnpacedStream(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	hdr := map[string]string{"X-A2A-Extensions": extV09}
	for _, end := range []bool{false, true} {
		for run := range 10 {
			res := send(t, srv.URL+"/a2a", "message/stream", map[string]any{"message": message(text("Book a table for two"))}, hdr)
			had := readEvents(t, bufio.NewReader(res.Body), 3)
			taskID, _ := had[0].Result["id"].(string)
			if end {
				awaitState(t, srv.URL+"/a2a", taskID, "input-required") // the server wrote it all
			}
			res.Body.Close()
			_, evs := stream(t, srv.URL+"/a2a", "tasks/resubscribe", map[string]any{"id": taskID}, hdr)
			if len(evs) < 2 || evs[0].Result["kind"] != "task" || evs[0].Result["id"] != taskID {
				t.Fatalf("end %v, run %d: resubscribed: %s", end, run, mustJSON(evs))
			}
			last := evs[len(evs)-1].Result
			if last["kind"] != "status-update" || state(last) != "input-required" || last["final"] != true {
				t.Fatalf("end %v, run %d: the resubscription ends with %s", end, run, evs[len(evs)-1].Raw)
			}
			task := awaitState(t, srv.URL+"/a2a", taskID, "input-required")
			var want [][]byte
			for _, p := range statusParts(task) {
				if p["kind"] == "data" {
					want = append(want, mustJSON(p["data"]))
				}
			}
			// The turn from its start: what the client had comes first, the same.
			for i, ev := range had[1:] {
				if messageID(evs[1+i]) != messageID(ev) || string(mustJSON(statusParts(evs[1+i].Result))) != string(mustJSON(statusParts(ev.Result))) {
					t.Fatalf("end %v, run %d: event %d: had %s, resubscribed %s", end, run, i+1, ev.Raw, evs[1+i].Raw)
				}
			}
			// Another resubscription, after the end, sends the same turn.
			_, whole := stream(t, srv.URL+"/a2a", "tasks/resubscribe", map[string]any{"id": taskID}, hdr)
			turn := a2uiOf(whole[1:])
			got := a2uiOf(evs[1:])
			if string(slices.Concat(got...)) != string(slices.Concat(turn...)) {
				t.Fatalf("end %v, run %d: resubscribed\n%s\nthe turn\n%s", end, run, slices.Concat(got...), slices.Concat(turn...))
			}
			if fin := finalOf(t, "v0.9", turn); string(slices.Concat(fin...)) != string(slices.Concat(want...)) {
				t.Fatalf("end %v, run %d: the task holds\n%s\nthe turn's final state\n%s", end, run, slices.Concat(want...), slices.Concat(fin...))
			}
			a2uitest.New(t, "v0.9", nil).CheckAll(t, got...)
			a2uitest.New(t, "v0.9", nil).CheckAll(t, want...)
		}
	}
}

// A task canceled while it waited for input: a resubscription ends with its canceled
// status, not with the input-required status its turn ended with.
func TestResubscribeToATaskCanceledWhileWaiting(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	_, evs := stream(t, srv.URL+"/a2a", "message/stream", map[string]any{"message": message(text("Hello"))}, nil)
	taskID, _ := evs[0].Result["id"].(string)
	if _, got := rpc(t, srv.URL+"/a2a", "tasks/cancel", map[string]any{"id": taskID}, nil); state(got["result"].(map[string]any)) != "canceled" {
		t.Fatalf("tasks/cancel: %s", mustJSON(got))
	}
	_, evs = stream(t, srv.URL+"/a2a", "tasks/resubscribe", map[string]any{"id": taskID}, nil)
	last := evs[len(evs)-1].Result
	if state(evs[0].Result) != "canceled" || state(last) != "canceled" || last["final"] != true {
		t.Fatalf("resubscribed: %s", mustJSON(evs))
	}
	for _, ev := range evs[1 : len(evs)-1] {
		if state(ev.Result) != "working" {
			t.Fatalf("event %s", ev.Raw)
		}
	}
}

// A request carrying both X-A2A-Extensions and A2A-Extensions asks for the URIs of both:
// the newest A2UI version among them wins, every time (a2a-go keeps one of the two
// names, by chance).
func TestExtensionsInBothHeaders(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	for _, tc := range []struct {
		legacy, modern, mime, version string
	}{
		{extV08, extV091, "application/a2ui+json", "v0.9"},
		{extV091, extV08, "application/a2ui+json", "v0.9"},
		{extV08, extV09, "application/json+a2ui", "v0.9"},
		{extV08 + ", " + extV09, extV08, "application/json+a2ui", "v0.9"},
	} {
		for i := range 12 {
			req := map[string]any{"message": message(text("Hello"))}
			hdr := map[string]string{"X-A2A-Extensions": tc.legacy, "A2A-Extensions": tc.modern}
			res, evs := stream(t, srv.URL+"/a2a", "message/stream", req, hdr)
			var part map[string]any
			for _, ev := range evs {
				for _, p := range statusParts(ev.Result) {
					if p["kind"] == "data" && part == nil {
						part = p
					}
				}
			}
			if part == nil {
				t.Fatalf("%+v: no DataPart: %s", tc, mustJSON(evs))
			}
			meta, _ := part["metadata"].(map[string]any)
			data, _ := part["data"].(map[string]any)
			if meta["mimeType"] != tc.mime || data["version"] != tc.version {
				t.Fatalf("%+v, request %d: %s", tc, i, mustJSON(part))
			}
			echoed := res.Header.Get("X-A2A-Extensions")
			for _, u := range strings.Split(tc.legacy+","+tc.modern, ",") {
				if !strings.Contains(echoed, strings.TrimSpace(u)) {
					t.Fatalf("%+v: echoed %q", tc, echoed)
				}
			}
		}
	}
}

// The agent card answers CORS as the server's policy says (its allowed origins), not as
// a2a-go would (any origin, with credentials).
func TestCardCORSFollowsTheServer(t *testing.T) {
	svc := servetest.Service(t, offline.Name)
	agent := a2aapi.New(svc, a2aapi.WithLogger(quiet))
	srv := servetest.ServeWith(t, svc, []httpapi.Option{httpapi.WithAllowOrigins("https://app.example")}, agent.Routes()...)
	open, _ := newAgent(t, offline.Name, nil) // the default policy: any origin
	get := func(url, origin string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, url, nil)
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var card map[string]any
		if err := json.NewDecoder(res.Body).Decode(&card); err != nil || res.StatusCode != http.StatusOK || card["name"] == nil {
			t.Fatalf("GET %s: %d %v", url, res.StatusCode, err)
		}
		res.Body.Close()
		return res
	}
	for _, path := range []string{"/.well-known/agent-card.json", "/a2a/.well-known/agent-card.json"} {
		for _, tc := range []struct {
			url, origin, allow string
		}{
			{srv.URL, "https://evil.example", ""},
			{srv.URL, "https://app.example", "https://app.example"},
			{srv.URL, "", ""},
			{open.URL, "https://any.example", "*"},
		} {
			res := get(tc.url+path, tc.origin)
			h := res.Header
			if h.Get("Access-Control-Allow-Origin") != tc.allow || h.Get("Access-Control-Allow-Credentials") != "" {
				t.Errorf("%s from %q: %v", path, tc.origin, h)
			}
			if tc.origin != "" && !slices.Contains(h.Values("Vary"), "Origin") {
				t.Errorf("%s from %q: Vary %v", path, tc.origin, h.Values("Vary"))
			}
		}
	}
	// A preflight from an origin the server does not allow gets no CORS answer either.
	req, _ := http.NewRequest(http.MethodOptions, srv.URL+"/.well-known/agent-card.json", nil)
	req.Header.Set("Origin", "https://evil.example")
	req.Header.Set("Access-Control-Request-Method", "GET")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.Header.Get("Access-Control-Allow-Origin") != "" {
		t.Fatalf("preflight from a foreign origin: %v", res.Header)
	}
}

// Browsers preflight every A2A endpoint with the headers of both A2A versions: all are
// allowed.
func TestCORSPreflightAllowsTheA2AHeaders(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	asked := []string{"content-type", "x-a2a-extensions", "a2a-extensions", "a2a-version"}
	for _, path := range []string{"/a2a", "/a2a/", "/", "/a2a/v1", "/a2a/v1/rest/message:stream", "/.well-known/agent-card.json", "/a2a/.well-known/agent-card.json"} {
		req, _ := http.NewRequest(http.MethodOptions, srv.URL+path, nil)
		req.Header.Set("Origin", "http://app.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", strings.Join(asked, ","))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		allowed := strings.Split(strings.ToLower(strings.ReplaceAll(res.Header.Get("Access-Control-Allow-Headers"), " ", "")), ",")
		if res.StatusCode >= 300 || res.Header.Get("Access-Control-Allow-Origin") == "" || !strings.Contains(res.Header.Get("Access-Control-Allow-Methods"), "POST") {
			t.Fatalf("%s: %d %v", path, res.StatusCode, res.Header)
		}
		for _, h := range asked {
			if !slices.Contains(allowed, h) {
				t.Errorf("%s: %s is not allowed: %v", path, h, res.Header)
			}
		}
	}
}

// A turn whose model cannot be reached fails: the stream ends with a failed status,
// final, and closes; its message says what happened and its status, but not the model's
// internal URL. tasks/get agrees.
func TestFailedTurn(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	internalURL := "http://" + ln.Addr().String() + "/internal-model"
	ln.Close() // nothing listens there
	t.Setenv("GOOGLE_GEMINI_BASE_URL", internalURL)
	t.Setenv("GEMINI_API_KEY", "k")
	srv, _ := newAgent(t, "googleai/gemini-2.5-flash", []genui.Option{genui.WithRetry(0, 0)})
	for _, path := range []string{"/a2a", "/a2a/"} {
		res := send(t, srv.URL+path, "message/stream", map[string]any{"message": message(text("a form"))}, map[string]string{"X-A2A-Extensions": extV09})
		evs := readEvents(t, bufio.NewReader(res.Body), -1) // to its end: the stream closes
		res.Body.Close()
		if len(evs) < 2 || evs[0].Result["kind"] != "task" {
			t.Fatalf("%s: %s", path, mustJSON(evs))
		}
		last := evs[len(evs)-1].Result
		ps := statusParts(last)
		if last["kind"] != "status-update" || state(last) != "failed" || last["final"] != true || len(ps) != 1 {
			t.Fatalf("%s: the stream ends with %s", path, evs[len(evs)-1].Raw)
		}
		msg, _ := ps[0]["text"].(string)
		if !strings.Contains(msg, "is unavailable; try again") || !strings.Contains(msg, "UNAVAILABLE") {
			t.Fatalf("%s: failed with %q", path, msg)
		}
		taskID, _ := evs[0].Result["id"].(string)
		_, got := rpc(t, srv.URL+"/a2a", "tasks/get", map[string]any{"id": taskID}, nil)
		task, _ := got["result"].(map[string]any)
		if state(task) != "failed" || len(statusParts(task)) != 1 || statusParts(task)[0]["text"] != msg {
			t.Fatalf("%s: tasks/get: %s", path, mustJSON(got))
		}
		for _, b := range []string{string(mustJSON(evs)), string(mustJSON(got))} {
			for _, leak := range []string{internalURL, ln.Addr().String(), "http://", "dial tcp"} {
				if strings.Contains(b, leak) {
					t.Fatalf("%s: a client reads %q: %s", path, leak, b)
				}
			}
		}
	}
}

// A client handed the agent's URL with a trailing slash (http://host/a2a/) posts to it
// and finds the card under it, with the slash doubled as genui_a2a joins the strings, or
// not; so does one handed the server's bare URL with a slash.
func TestTrailingSlash(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	for _, path := range []string{"/a2a//.well-known/agent-card.json", "/a2a/.well-known/agent-card.json", "//.well-known/agent-card.json", "/a2a", "/a2a/"} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var card map[string]any
		_ = json.NewDecoder(res.Body).Decode(&card)
		res.Body.Close()
		if res.StatusCode != http.StatusOK || card["url"] != srv.URL+"/a2a" {
			t.Fatalf("%s: %d %s", path, res.StatusCode, mustJSON(card))
		}
	}
	res, evs := stream(t, srv.URL+"/a2a/", "message/stream", map[string]any{"message": message(text("Hello"))}, map[string]string{"X-A2A-Extensions": extV09})
	if res.StatusCode != http.StatusOK || len(evs) < 3 || evs[0].Result["kind"] != "task" || state(evs[len(evs)-1].Result) != "input-required" {
		t.Fatalf("POST /a2a/: %d %s", res.StatusCode, mustJSON(evs))
	}
	taskID, _ := evs[0].Result["id"].(string)
	if _, got := rpc(t, srv.URL+"/a2a/", "tasks/get", map[string]any{"id": taskID}, nil); state(got["result"].(map[string]any)) != "input-required" {
		t.Fatalf("tasks/get at /a2a/: %s", mustJSON(got))
	}
}

// A v0.9.1 client: its extension, capabilities keyed "v0.9.1", its action in a DataPart
// of MIME type application/a2ui+json; the A2UI it gets comes in DataParts of that type,
// valid v0.9 (version "v0.9"), and the action updates the surface it shows.
func TestV091ClientAction(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	hdr := map[string]string{"X-A2A-Extensions": extV091}
	caps := map[string]any{"a2uiClientCapabilities": map[string]any{"v0.9.1": map[string]any{
		"supportedCatalogIds": []any{"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}}}
	check := func(evs []event) [][]byte {
		t.Helper()
		var msgs [][]byte
		for _, ev := range evs {
			for _, p := range statusParts(ev.Result) {
				if p["kind"] != "data" {
					continue
				}
				if meta, _ := p["metadata"].(map[string]any); meta["mimeType"] != "application/a2ui+json" {
					t.Fatalf("DataPart %s", mustJSON(p))
				}
				msgs = append(msgs, mustJSON(p["data"]))
			}
		}
		if len(msgs) == 0 || state(evs[len(evs)-1].Result) != "input-required" {
			t.Fatalf("turn: %s", mustJSON(evs))
		}
		return msgs
	}
	msg := message(text("Book a table"))
	msg["metadata"] = caps
	_, evs := stream(t, srv.URL+"/a2a", "message/stream", map[string]any{"message": msg}, hdr)
	first := check(evs)
	var create struct {
		CreateSurface struct {
			SurfaceID string `json:"surfaceId"`
		} `json:"createSurface"`
	}
	_ = json.Unmarshal(first[0], &create)
	if create.CreateSurface.SurfaceID == "" {
		t.Fatalf("first message: %s", first[0])
	}
	action := map[string]any{"kind": "data", "metadata": map[string]any{"mimeType": "application/a2ui+json"}, "data": map[string]any{"version": "v0.9.1", "action": map[string]any{
		"surfaceId": create.CreateSurface.SurfaceID, "name": "send", "sourceComponentId": "send", "timestamp": "2026-11-22T12:00:00Z", "context": map[string]any{"reply": "Friday 7pm"}}}}
	msg = message(action)
	msg["metadata"] = caps
	msg["contextId"], msg["referenceTaskIds"] = evs[0].Result["contextId"], []any{evs[0].Result["id"]}
	_, evs = stream(t, srv.URL+"/a2a", "message/stream", map[string]any{"message": msg}, hdr)
	second := check(evs)
	all := string(slices.Concat(second...))
	if strings.Contains(all, "createSurface") || !strings.Contains(all, `You sent \"send\" with {\"reply\":\"Friday 7pm\"}.`) {
		t.Fatalf("the action's turn: %s", all)
	}
	a2uitest.New(t, "v0.9", nil).CheckAll(t, append(first, second...)...)
}

// A v0.8 client gets v0.8 over A2A: every message valid against the v0.8 schemas, each
// surface's components against its catalog.
func TestV08OverA2AIsValid(t *testing.T) {
	srv, _ := newAgent(t, offline.Name, nil)
	for _, tc := range []struct {
		path, method string
		hdr          map[string]string
		params       map[string]any
	}{
		{"/a2a", "message/stream", map[string]string{"X-A2A-Extensions": extV08}, map[string]any{"message": message(text("Show me a form to report a bug"))}},
		{"/a2a/v1", "SendStreamingMessage", map[string]string{"A2A-Extensions": extV08, "A2A-Version": "1.0"}, map[string]any{"message": map[string]any{
			"messageId": "m1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": "Show me a form to report a bug"}}}}},
	} {
		_, evs := stream(t, srv.URL+tc.path, tc.method, tc.params, tc.hdr)
		var msgs [][]byte
		for _, ev := range evs {
			r := ev.Result
			if su, ok := r["statusUpdate"].(map[string]any); ok {
				r = su // A2A 1.0
			}
			for _, p := range statusParts(r) {
				if d, ok := p["data"].(map[string]any); ok {
					msgs = append(msgs, mustJSON(d))
				}
			}
		}
		all := string(slices.Concat(msgs...))
		if len(msgs) < 2 || !strings.Contains(all, `"beginRendering"`) || !strings.Contains(all, `"surfaceUpdate"`) || strings.Contains(all, `"createSurface"`) {
			t.Fatalf("%s: v0.8 A2UI: %s", tc.method, mustJSON(evs))
		}
		a2uitest.New(t, "v0.8", nil).CheckAll(t, msgs...)
	}
}
