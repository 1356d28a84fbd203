package httpapi_test

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
)

// Client tools the offline model calls when the user's text names them.
const clientTools = `[{"name":"getLocation","description":"The user's city","inputSchema":{"type":"object","properties":{"precise":{"type":"boolean"}}}},{"name":"confirm","description":"Asks the user to confirm"}]`

var (
	callIDs = regexp.MustCompile(`"(callId|ref)":"[A-Za-z0-9_-]{22}(\.[A-Za-z0-9_-]{8})?"`)
	usages  = regexp.MustCompile(`"usage":\{[^}]*\}`)
)

// normalized replaces the random call ids of a body with CALL and the token counts with …
func normalized(body string) string {
	body = callIDs.ReplaceAllString(body, `"$1":"CALL"`)
	return usages.ReplaceAllString(body, `"usage":{…}`)
}

// callIDsOf returns the call ids of a body's toolCall lines, in order.
func callIDsOf(t testing.TB, body string) []string {
	t.Helper()
	var ids []string
	for _, line := range strings.Split(strings.TrimSpace(body), "\n") {
		var ev struct {
			Type, CallID string
		}
		if json.Unmarshal([]byte(line), &ev) == nil && ev.Type == "toolCall" {
			ids = append(ids, ev.CallID)
		}
	}
	return ids
}

func genuiBody(t *testing.T, extra, conv string) string {
	t.Helper()
	return `{"catalog":` + mustJSON(t, basicCatalog(t)) + extra + `,"conversation":` + conv + `}`
}

// The model message a client keeps after a turn that called getLocation, and the user
// message answering it.
func continuation(id, result string) string {
	return `[{"role":"user","parts":[{"type":"text","text":"Where am I? Use getLocation"}]},` +
		`{"role":"model","parts":[{"type":"text","text":"Calling getLocation."},{"type":"toolCall","callId":"` + id + `","name":"getLocation","input":{}}]},` +
		`{"role":"user","parts":[{"type":"toolResult","callId":"` + id + `","name":"getLocation",` + result + `}]}]`
}

func resultSurface(text string) string {
	return `{"definition":{"root":"root","widgets":[{"id":"root","widget":{"Column":{"children":["message","reply","send"]}}},{"id":"message","widget":{"Text":{"text":` + mustJSONString(text) + `}}},{"id":"reply","widget":{"TextField":{"hintText":"Type a reply"}}},{"id":"send-label","widget":{"Text":{"text":"Send"}}},{"id":"send","widget":{"ElevatedButton":{"child":"send-label"}}}]},"surfaceId":"surface-1"}`
}

func mustJSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestClientToolRoundTripNDJSON(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	r := post(t, srv.URL+"/generateUi", nil, genuiBody(t, `,"clientTools":`+clientTools, userText("Where am I? Use getLocation")))
	want := `{"type":"text","text":"Calling getLocation."}` + "\n" +
		`{"type":"toolCall","callId":"CALL","name":"getLocation","input":{}}` + "\n" +
		`{"type":"result","result":{"message":{"role":"model","content":[{"text":"Calling getLocation."},{"toolRequest":{"name":"getLocation","input":{},"ref":"CALL"},"metadata":{"interrupt":true}}]},"finishReason":"interrupted","usage":{…}}}` + "\n"
	if r.status != 200 || normalized(r.body) != want {
		t.Fatalf("the call:\n%s\nwant:\n%s", r.body, want)
	}
	ids := callIDsOf(t, r.body)
	if len(ids) != 1 || !strings.Contains(r.body, `"ref":"`+ids[0]+`"`) {
		t.Fatalf("call ids %v", ids)
	}
	// The durable stream replays the call as it was.
	again := post(t, srv.URL+"/generateUi?streamId="+r.header.Get("X-Genkit-Stream-Id"), nil, "")
	if again.body != r.body {
		t.Fatalf("resumed:\n%s\nwant:\n%s", again.body, r.body)
	}

	// The continuation shows the result; the request need not declare the tool again.
	r = post(t, srv.URL+"/generateUi", nil, genuiBody(t, "", continuation(ids[0], `"output":{"city":"Berlin","lat":52.52}`)))
	want = `{"type":"text","text":"Here is what the client returned."}` + "\n" +
		`{"type":"toolRequest","toolRequests":[{"name":"addOrUpdateSurface","input":` + resultSurface("getLocation returned city: Berlin, lat: 52.52") + `}]}` + "\n" +
		`{"type":"result","result":{"message":{"role":"model","content":[{"text":"Here is what the client returned."}]},"finishReason":"stop","usage":{…}}}` + "\n"
	if r.status != 200 || normalized(r.body) != want {
		t.Fatalf("the continuation:\n%s\nwant:\n%s", r.body, want)
	}

	// An error result.
	r = post(t, srv.URL+"/generateUi", nil, genuiBody(t, "", continuation(ids[0], `"error":"the user declined"`)))
	if r.status != 200 || !strings.Contains(r.body, `"text":"getLocation failed: the user declined"`) || !strings.Contains(r.body, `"finishReason":"stop"`) {
		t.Fatalf("an error result:\n%s", r.body)
	}
}

func TestClientToolRoundTripSSE(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	r := post(t, srv.URL+"/generateUi?stream=true", nil, `{"data":`+genuiBody(t, `,"clientTools":`+clientTools, userText("Where am I? Use getLocation"))+`}`)
	want := `data: {"message":{"role":"model","index":0,"content":[{"text":"Calling getLocation."}]}}` + "\n\n" +
		`data: {"message":{"role":"model","index":0,"content":[{"toolRequest":{"name":"getLocation","input":{},"ref":"CALL"},"metadata":{"interrupt":true}}]}}` + "\n\n" +
		`data: {"result":{"message":{"role":"model","content":[{"text":"Calling getLocation."},{"toolRequest":{"name":"getLocation","input":{},"ref":"CALL"},"metadata":{"interrupt":true}}]},"finishReason":"interrupted","usage":{…}}}` + "\n\n"
	if r.status != 200 || normalized(r.body) != want {
		t.Fatalf("SSE:\n%s\nwant:\n%s", r.body, want)
	}
}

func TestClientToolRoundTripJSON(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	r := post(t, srv.URL+"/generateUi", map[string]string{"Accept": "application/json"}, genuiBody(t, `,"clientTools":`+clientTools, userText("Use confirm and getLocation")))
	want := `{"result":{"message":{"role":"model","content":[{"text":"Calling confirm and getLocation."},{"toolRequest":{"name":"confirm","input":{},"ref":"CALL"},"metadata":{"interrupt":true}},{"toolRequest":{"name":"getLocation","input":{},"ref":"CALL"},"metadata":{"interrupt":true}}]},"finishReason":"interrupted","usage":{…}}}` + "\n"
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" || normalized(r.body) != want {
		t.Fatalf("JSON:\n%s\nwant:\n%s", r.body, want)
	}
}

// The continued turn shows the result, then makes the next call the user asked for.
func TestSecondCallInTheContinuedTurn(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	ask := "Where am I? Use getLocation, then confirm"
	r := post(t, srv.URL+"/generateUi", nil, genuiBody(t, `,"clientTools":`+clientTools, userText(ask)))
	ids := callIDsOf(t, r.body)
	if len(ids) != 1 || !strings.Contains(r.body, `"name":"getLocation"`) {
		t.Fatalf("the first call:\n%s", r.body)
	}
	conv := strings.Replace(continuation(ids[0], `"output":{"city":"Rome"}`), "Where am I? Use getLocation", ask, 1)
	r = post(t, srv.URL+"/generateUi", nil, genuiBody(t, `,"clientTools":`+clientTools, conv))
	want := `{"type":"text","text":"Here is what the client returned."}` + "\n" +
		`{"type":"toolRequest","toolRequests":[{"name":"addOrUpdateSurface","input":` + resultSurface("getLocation returned city: Rome") + `}]}` + "\n" +
		`{"type":"text","text":" Next, calling confirm."}` + "\n" +
		`{"type":"toolCall","callId":"CALL","name":"confirm","input":{}}` + "\n" +
		`{"type":"result","result":{"message":{"role":"model","content":[{"text":"Here is what the client returned. Next, calling confirm."},{"toolRequest":{"name":"confirm","input":{},"ref":"CALL"},"metadata":{"interrupt":true}}]},"finishReason":"interrupted","usage":{…}}}` + "\n"
	if r.status != 200 || normalized(r.body) != want {
		t.Fatalf("the continued turn:\n%s\nwant:\n%s", r.body, want)
	}
}

// Two calls in one response: both wait, and the continuation answers both.
func TestTwoCallsInOneResponse(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	r := post(t, srv.URL+"/generateUi", nil, genuiBody(t, `,"clientTools":`+clientTools, userText("Use getLocation and confirm")))
	ids := callIDsOf(t, r.body)
	if len(ids) != 2 || !strings.Contains(r.body, `"name":"getLocation"`) || !strings.Contains(r.body, `"name":"confirm"`) {
		t.Fatalf("two calls:\n%s", r.body)
	}
	conv := `[{"role":"user","parts":[{"type":"text","text":"Use getLocation and confirm"}]},` +
		`{"role":"model","parts":[{"type":"text","text":"Calling getLocation and confirm."},{"type":"toolCall","callId":"` + ids[0] + `","name":"getLocation"},{"type":"toolCall","callId":"` + ids[1] + `","name":"confirm"}]},` +
		`{"role":"user","parts":[{"type":"toolResult","callId":"` + ids[1] + `","name":"confirm","output":"yes"},{"type":"toolResult","callId":"` + ids[0] + `","name":"getLocation","output":{"city":"Lyon"}}]}]`
	r = post(t, srv.URL+"/generateUi", nil, genuiBody(t, "", conv))
	if r.status != 200 || !strings.Contains(r.body, `getLocation returned city: Lyon\nconfirm returned yes`) {
		t.Fatalf("continuation:\n%s", r.body)
	}
	// Only one of the two results: the other call is named.
	conv = strings.Replace(conv, `{"type":"toolResult","callId":"`+ids[1]+`","name":"confirm","output":"yes"},`, "", 1)
	r = post(t, srv.URL+"/generateUi", nil, genuiBody(t, "", conv))
	if r.status != 400 || !strings.Contains(r.body, `"field":"conversation[2].parts"`) || !strings.Contains(r.body, `no result for \"`+ids[1]+`\" (confirm, conversation[1].parts[2])`) {
		t.Fatalf("a missing result: %d %s", r.status, r.body)
	}
}

// A2UI: the call, then the result in a new surface; every A2UI line valid.
func TestA2UIClientToolRoundTrip(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	for _, held := range []bool{false, true} {
		conv := `[{"role":"user","parts":[{"type":"text","text":"Where am I? Use getLocation"}]}]`
		extra := `,"clientTools":` + clientTools
		if held {
			extra += `,"conversationId":"a2ui-conv-1"`
		}
		r := post(t, srv.URL+"/generateA2ui", nil, `{"conversation":`+conv+extra+`}`)
		ids := callIDsOf(t, r.body)
		if r.status != 200 || len(ids) != 1 || !strings.Contains(r.body, `"finishReason":"interrupted"`) {
			t.Fatalf("the call: %d %s", r.status, r.body)
		}
		if held {
			conv = `[{"role":"user","parts":[{"type":"toolResult","callId":"` + ids[0] + `","name":"getLocation","output":{"city":"Oslo"}}]}]`
			extra = `,"conversationId":"a2ui-conv-1"`
		} else {
			conv = `[{"role":"user","parts":[{"type":"text","text":"Where am I? Use getLocation"}]},` +
				`{"role":"model","parts":[{"type":"text","text":"Calling getLocation."},{"type":"toolCall","callId":"` + ids[0] + `","name":"getLocation","input":{}}]},` +
				`{"role":"user","parts":[{"type":"toolResult","callId":"` + ids[0] + `","name":"getLocation","output":{"city":"Oslo"}}]}]`
			extra = ""
		}
		r = post(t, srv.URL+"/generateA2ui", nil, `{"conversation":`+conv+extra+`}`)
		var msgs [][]byte
		for _, line := range strings.Split(strings.TrimSpace(r.body), "\n") {
			if !strings.HasPrefix(line, `{"type":`) {
				msgs = append(msgs, []byte(line))
			}
		}
		if r.status != 200 || len(msgs) < 3 || !strings.Contains(r.body, `"text":"getLocation returned city: Oslo"`) || !strings.Contains(r.body, `"finishReason":"stop"`) {
			t.Fatalf("held=%v, the continuation: %d %s", held, r.status, r.body)
		}
		a2uitest.New(t, "v0.9", nil).CheckAll(t, msgs...)
	}
}

// The server holds the conversation: each request sends only its new message; "remove
// it" deletes the latest surface of the held history.
func TestHeldConversationOverHTTP(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	send := func(extra, conv string) response {
		t.Helper()
		return post(t, srv.URL+"/generateUi", nil, genuiBody(t, `,"conversationId":"http-conv-1"`+extra, conv))
	}
	if r := send("", userText("Hello")); !strings.Contains(r.body, `"surfaceId":"surface-1"`) {
		t.Fatalf("first turn: %s", r.body)
	}
	r := send(`,"clientTools":`+clientTools, userText("Where am I? Use getLocation"))
	ids := callIDsOf(t, r.body)
	if len(ids) != 1 || !strings.HasSuffix(ids[0], ids[0][22:]) || len(ids[0]) != 31 {
		t.Fatalf("the call: %v %s", ids, r.body)
	}
	r = send("", `[{"role":"user","parts":[{"type":"toolResult","callId":"`+ids[0]+`","name":"getLocation","output":{"city":"Berlin"}}]}]`)
	if !strings.Contains(r.body, `getLocation returned city: Berlin`) || !strings.Contains(r.body, `"surfaceId":"surface-2"`) {
		t.Fatalf("the continuation: %s", r.body)
	}
	// The same result again: 409, naming the call.
	r = send("", `[{"role":"user","parts":[{"type":"toolResult","callId":"`+ids[0]+`","name":"getLocation","output":{"city":"Paris"}}]}]`)
	if r.status != 409 || r.header.Get("Content-Type") != "application/json" ||
		r.body != `{"error":{"status":"ABORTED","message":"conversation[0].parts[0].callId: the call \"`+ids[0]+`\" was answered already; nothing was changed","details":{"callId":"`+ids[0]+`","field":"conversation[0].parts[0].callId"}}}`+"\n" {
		t.Fatalf("a second result: %d %s", r.status, r.body)
	}
	r = send("", userText("remove it"))
	if !strings.Contains(r.body, `{"name":"deleteSurface","input":{"surfaceId":"surface-2"}}`) {
		t.Fatalf("remove it: %s", r.body)
	}
	// The held history remembers the deletion: the next "remove it" deletes the surface
	// shown before, and then none is left to delete.
	r = send("", userText("remove it"))
	if !strings.Contains(r.body, `{"name":"deleteSurface","input":{"surfaceId":"surface-1"}}`) {
		t.Fatalf("remove it again: %s", r.body)
	}
	r = send("", userText("remove it"))
	if strings.Contains(r.body, `deleteSurface`) || !strings.Contains(r.body, `addOrUpdateSurface`) {
		t.Fatalf("remove it with no surface left: %s", r.body)
	}
}

// Bad declarations and results over HTTP: 400 naming the field.
func TestBadClientToolsOverHTTP(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	for _, tc := range []struct{ extra, conv, field string }{
		{`,"clientTools":[{"name":"deleteSurface"}]`, userText("hi"), "clientTools[0].name"},
		{`,"clientTools":[{"name":"9lives"}]`, userText("hi"), "clientTools[0].name"},
		{`,"clientTools":[{"name":"a","inputSchema":{"$ref":"http://example.com/x.json"}}]`, userText("hi"), "clientTools[0].inputSchema"},
		{`,"clientTools":[{"name":"a","inputSchema":"x"}]`, userText("hi"), "clientTools[0].inputSchema"},
		{"", `[{"role":"user","parts":[{"type":"toolResult","callId":"x1","name":"a","output":1}]}]`, "conversation[0].parts[0].callId"},
		{`,"conversationId":"tiny"`, userText("hi"), "conversationId"},
		{`,"conversationId":"held-but-unknown-call"`, `[{"role":"user","parts":[{"type":"toolResult","callId":"x1","name":"a","output":1}]}]`, "conversation[0].parts[0].callId"},
	} {
		r := post(t, srv.URL+"/generateUi", nil, genuiBody(t, tc.extra, tc.conv))
		if r.status != 400 || !strings.Contains(r.body, `"field":"`+tc.field+`"`) || !strings.HasPrefix(r.body, `{"error":{"status":"INVALID_ARGUMENT","message":"`+tc.field) {
			t.Errorf("%s %s: %d %s", tc.extra, tc.conv, r.status, r.body)
		}
	}
}

// A held conversation of 10 turns holds less than twice what its client received.
func TestHeldConversationBytes(t *testing.T) {
	for _, path := range []string{"/generateUi", "/generateA2ui"} {
		srv, svc := newServer(t, offline.Name)
		received := 0
		for i := range 10 {
			text := "Hello, turn " + strings.Repeat("x", i)
			body := `{"conversationId":"bytes-conv-1","conversation":` + userText(text) + `}`
			if path == "/generateUi" {
				body = genuiBody(t, `,"conversationId":"bytes-conv-1"`, userText(text))
			}
			r := post(t, srv.URL+path, nil, body)
			if r.status != 200 || !strings.Contains(r.body, `"finishReason":"stop"`) {
				t.Fatalf("%s turn %d: %d %s", path, i, r.status, r.body)
			}
			received += len(r.body)
		}
		n, held, ok := svc.Conversations()
		if !ok || n != 1 || held == 0 || float64(held) >= 2*float64(received) {
			t.Fatalf("%s: %d conversations holding %d bytes; the client received %d", path, n, held, received)
		}
		t.Logf("%s: 10 turns held in %d bytes; the client received %d (%.2fx)", path, held, received, float64(held)/float64(received))
	}
}
