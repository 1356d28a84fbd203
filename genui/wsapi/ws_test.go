package wsapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/genui/wsapi"
	"github.com/genuiserver/genui/internal/sessionhub"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/servetest"
	"github.com/genuiserver/genui/schemas"
)

// The flow of seed 003's example clients: initialize, new_session with what ACP clients
// send, a prompt whose updates stream before its result.
func TestSeedFlow(t *testing.T) {
	s := newServer(t, offline.Name, time.Minute, nil)
	c := dial(t, s.URL)
	res, _ := c.call(1, "initialize", `{"protocol_version":1}`)
	if want := `{"jsonrpc":"2.0","id":1,"result":{"protocol_version":1,"agent_capabilities":{"load_session":true,"prompt_capabilities":{"image":true,"embedded_context":true},"client_tools":true,"ui":["genui","a2ui/v0.8","a2ui/v0.9"]},"agent_info":{"name":"genui","title":"GenUI server","version":"1.0.0"}}}`; res.raw != want {
		t.Fatalf("initialize:\n got %s\nwant %s", res.raw, want)
	}
	sid := c.newSession(2, `{"cwd":"/tmp","mcp_servers":[]}`)
	res, updates := c.call(3, "prompt", `{"session_id":"`+sid+`","prompt":[{"type":"text","text":"Hello!"}]}`)
	if res.raw != `{"jsonrpc":"2.0","id":3,"result":{"stop_reason":"end_turn"}}` {
		t.Fatalf("prompt: %s", res.raw)
	}
	var text, ui int
	for i, u := range updates {
		if u.Method != "session_update" || u.Params["session_id"] != sid || u.Params["seq"] != float64(i+1) {
			t.Fatalf("update %d: %s", i, u.raw)
		}
		switch up := u.Params["update"].(map[string]any); up["type"] {
		case "agent_message_chunk":
			text++
		case "ui_update":
			ui++
			if ev := up["event"].(map[string]any); ev["version"] != "v0.9" {
				t.Fatalf("not an A2UI v0.9 message: %s", u.raw)
			}
		default:
			t.Fatalf("update %d: %s", i, u.raw)
		}
	}
	if text == 0 || ui == 0 {
		t.Fatalf("%d text chunks, %d UI updates", text, ui)
	}
	// The session holds the conversation: the next prompt sends only its text.
	res, _ = c.call(4, "prompt", `{"session_id":"`+sid+`","prompt":[{"type":"text","text":"remove it"}]}`)
	if res.Error != nil {
		t.Fatal(res.raw)
	}
}

// A genui session's UI updates are the NDJSON stream's lines, byte for byte.
func TestUIUpdateIsTheNDJSONLine(t *testing.T) {
	s := newServer(t, offline.Name, time.Minute, nil)
	c := dial(t, s.URL)
	cat, err := schemas.SampleCatalog("basic")
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := json.Marshal(cat)
	sid := c.newSession(1, `{"catalog":`+string(enc)+`}`)
	_, updates := c.call(2, "prompt", `{"session_id":"`+sid+`","prompt":[{"type":"text","text":"Show a greeting card"}]}`)
	found := false
	for _, u := range updates {
		if i := strings.Index(u.raw, `"event":{"type":"toolRequest","toolRequests":[{"name":"addOrUpdateSurface","input":{`); i >= 0 {
			found = true
		}
	}
	if !found {
		t.Fatalf("no surface update in %d updates", len(updates))
	}
}

func TestErrors(t *testing.T) {
	s := newServer(t, offline.Name, time.Minute, []wsapi.Option{wsapi.WithLimits(2, 16, 3)})
	c := dial(t, s.URL)
	sid := c.newSession(1, `{}`)
	oc := dial(t, s.URL)
	other := oc.newSession(1, `{}`)
	oc.answerPings() // a live connection: load_session does not take its session over
	for _, tc := range []struct {
		name, send string
		code       int
		msg        string
	}{
		{"parse", `{"jsonrpc":"2.0","id":1,`, -32700, "parse error"},
		{"not an object", `"hello"`, -32600, "a message must be a JSON object"},
		{"no jsonrpc", `{"id":1,"method":"initialize"}`, -32600, `jsonrpc must be "2.0"`},
		{"method not a string", `{"jsonrpc":"2.0","id":1,"method":5}`, -32600, "method must be a string"},
		{"id an object", `{"jsonrpc":"2.0","id":{},"method":"initialize"}`, -32600, "id must be"},
		{"empty batch", `[]`, -32600, "an empty batch"},
		{"batch over the limit", `[1,2,3,4]`, -32005, "at most 3 per batch"},
		{"unknown method", `{"jsonrpc":"2.0","id":1,"method":"foo","params":{}}`, -32601, `method not found: "foo"`},
		{"params not an object", `{"jsonrpc":"2.0","id":1,"method":"prompt","params":"x"}`, -32602, "params: expected an object"},
		{"no session id", `{"jsonrpc":"2.0","id":1,"method":"prompt","params":{"prompt":[{"type":"text","text":"x"}]}}`, -32602, "params.session_id: required"},
		{"bad block", `{"jsonrpc":"2.0","id":1,"method":"prompt","params":{"session_id":"` + sid + `","prompt":[{"type":"audio","data":"x"}]}}`, -32602, `params.prompt[0].type: "audio" is not supported`},
		{"wrong type", `{"jsonrpc":"2.0","id":1,"method":"prompt","params":{"session_id":"` + sid + `","prompt":"hi"}}`, -32602, "params.prompt: got string, want array"},
		{"a block's field", `{"jsonrpc":"2.0","id":1,"method":"prompt","params":{"session_id":"` + sid + `","prompt":[{"type":"text","text":"a"},{"type":"text","text":5}]}}`, -32602, "params.prompt[1].text: got number, want string"},
		{"ACP's spelling", `{"jsonrpc":"2.0","id":1,"method":"session/cancel","params":{}}`, -32602, "params.sessionId: required"},
		{"unknown startSession session", `{"jsonrpc":"2.0","id":1,"method":"new_session","params":{"sessionId":"unknown-session"}}`, -32001, "params.sessionId: unknown or expired session"},
		{"bad client tool", `{"jsonrpc":"2.0","id":1,"method":"new_session","params":{"clientTools":[{"name":"1bad"}]}}`, -32602, "params.clientTools[0].name"},
		{"unknown session", `{"jsonrpc":"2.0","id":1,"method":"prompt","params":{"session_id":"nope-nope-nope","prompt":[{"type":"text","text":"x"}]}}`, -32001, "session not found"},
		{"another connection's session", `{"jsonrpc":"2.0","id":1,"method":"prompt","params":{"session_id":"` + other + `","prompt":[{"type":"text","text":"x"}]}}`, -32001, "session not found"},
		{"load another connection's session", `{"jsonrpc":"2.0","id":1,"method":"load_session","params":{"session_id":"` + other + `"}}`, -32001, "session not found"},
		{"resume an idle session", `{"jsonrpc":"2.0","id":1,"method":"resume_session","params":{"session_id":"` + sid + `"}}`, -32002, "session not waiting"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.send(tc.send)
			m := c.next()
			if m.Error == nil || m.Error.Code != tc.code || !strings.Contains(m.Error.Message, tc.msg) {
				t.Fatalf("got %s, want code %d with %q", m.raw, tc.code, tc.msg)
			}
		})
	}
	// The connection survived them all, and a third session is over the limit.
	c.newSession(2, `{}`)
	res, _ := c.call(3, "new_session", `{}`)
	if res.Error == nil || res.Error.Code != -32005 {
		t.Fatalf("a third session: %s", res.raw)
	}
}

func TestBatch(t *testing.T) {
	s := newServer(t, offline.Name, time.Minute, nil)
	c := dial(t, s.URL)
	sid := c.newSession(1, `{}`)
	c.send(`[{"jsonrpc":"2.0","id":"a","method":"list_sessions"},{"jsonrpc":"2.0","method":"cancel","params":{"session_id":"` + sid + `"}},5,{"jsonrpc":"2.0","id":"b","method":"prompt","params":{"session_id":"` + sid + `","prompt":[{"type":"text","text":"hi"}]}}]`)
	var batch string
	for {
		m := c.read()
		if strings.HasPrefix(m, "[") {
			batch = m
			break
		}
		if !strings.Contains(m, `"method":"session_update"`) {
			t.Fatalf("before the batch's response: %s", m)
		}
	}
	want := `[{"jsonrpc":"2.0","id":"a","result":{"sessions":[{"session_id":"` + sid + `","state":"idle"}]}},{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"invalid request: a message must be a JSON object"}},{"jsonrpc":"2.0","id":"b","result":{"stop_reason":"end_turn"}}]`
	if batch != want {
		t.Fatalf("batch:\n got %s\nwant %s", batch, want)
	}
	// A batch of notifications only is answered with nothing.
	c.send(`[{"jsonrpc":"2.0","method":"cancel","params":{"session_id":"` + sid + `"}}]`)
	res, _ := c.call(9, "list_sessions", `{}`)
	if res.Error != nil {
		t.Fatal(res.raw)
	}
}

// A client tool's call is a request to the client; a dropped connection's session waits,
// and load_session on a new connection sends the same request again.
func TestClientToolAcrossReconnect(t *testing.T) {
	s := newServer(t, offline.Name, time.Minute, nil)
	c := dial(t, s.URL)
	sid := c.newSession(1, `{"clientTools":[{"name":"getLocation","description":"The user's city"}]}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"prompt","params":{"session_id":"` + sid + `","prompt":[{"type":"text","text":"Where am I? Use getLocation"}]}}`)
	var req msg
	for req.Method != "client_tool" {
		req = c.next()
	}
	if req.Params["session_id"] != sid || req.Params["name"] != "getLocation" || string(req.ID) != `"call:`+req.Params["call_id"].(string)+`"` {
		t.Fatalf("client_tool request: %s", req.raw)
	}
	c.ws.CloseNow()

	c2 := dial(t, s.URL)
	c2.send(`{"jsonrpc":"2.0","id":1,"method":"load_session","params":{"session_id":"` + sid + `","cwd":"/","mcp_servers":[]}}`)
	again := c2.next()
	if again.raw != req.raw {
		t.Fatalf("after the reconnect:\n got %s\nwant %s", again.raw, req.raw)
	}
	c2.send(`{"jsonrpc":"2.0","id":` + string(again.ID) + `,"result":{"city":"Lisbon"}}`)
	var lisbon bool
	for {
		m := c2.next()
		if string(m.ID) == "1" {
			if m.raw != `{"jsonrpc":"2.0","id":1,"result":{"stop_reason":"end_turn"}}` {
				t.Fatalf("load_session: %s", m.raw)
			}
			break
		}
		lisbon = lisbon || strings.Contains(m.raw, "Lisbon")
	}
	if !lisbon {
		t.Fatal("the surface does not show the tool's answer")
	}
}

// A session with nothing running goes with its connection.
func TestSessionGoesWithItsConnection(t *testing.T) {
	s := newServer(t, offline.Name, time.Minute, nil)
	c := dial(t, s.URL)
	sid := c.newSession(1, `{}`)
	c.ws.Close(websocket.StatusNormalClosure, "")
	deadline := time.Now().Add(5 * time.Second)
	for {
		if n, _, _ := s.svc.Conversations(); n == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the session outlived its connection")
		}
		time.Sleep(10 * time.Millisecond)
	}
	res, _ := dial(t, s.URL).call(1, "load_session", `{"session_id":"`+sid+`"}`)
	if res.Error == nil || res.Error.Code != -32001 {
		t.Fatalf("load_session: %s", res.raw)
	}
}

// 1,000 connections dropped mid-turn, anonymous and as authenticated callers: every turn
// ends within the grace period, every session is deleted (a grace period after its
// turn's end, which no client read), the hub forgets them all, and no goroutine of the
// endpoint is left.
func TestDisconnectStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: a storm of 1,000 connections")
	}
	fake := fakegemini.New(fakegemini.WithPacing(20*time.Millisecond), fakegemini.WithResponder(func(*fakegemini.Request) fakegemini.Reply {
		return fakegemini.Reply{Chunks: fakegemini.TextChunks(strings.Repeat("a slow answer ", 40), 40)}
	}))
	defer fake.Close()
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	const total, wave = 1000, 100
	calls := 0
	for _, authenticated := range []bool{false, true} {
		name := map[bool]string{false: "anonymous", true: "authenticated"}[authenticated]
		t.Run(name, func(t *testing.T) {
			s := newServerWith(t, config{model: "googleai/gemini-2.5-flash", window: time.Minute, auth: authenticated,
				svc: []genui.Option{genui.WithGrace(100 * time.Millisecond)}, hub: []sessionhub.Option{sessionhub.WithGrace(100 * time.Millisecond)}})
			n := total / 2
			for w := 0; w < n/wave; w++ {
				var wg sync.WaitGroup
				for i := 0; i < wave; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						key := ""
						if authenticated {
							key = []string{servetest.AliceKey, servetest.BobKey}[i%2]
						}
						c := dialAs(t, s.URL, key)
						sid := c.newSession(1, `{}`)
						c.send(`{"jsonrpc":"2.0","id":2,"method":"prompt","params":{"session_id":"` + sid + `","prompt":[{"type":"text","text":"hi"}]}}`)
						if m := c.next(); m.Method != "session_update" {
							t.Errorf("the turn's first message: %s", m.raw)
						}
						c.ws.CloseNow()
					}()
				}
				wg.Wait()
			}
			calls += n
			deadline := time.Now().Add(30 * time.Second)
			for {
				convs, _, _ := s.svc.Conversations()
				left, hubbed := endpointGoroutines(), s.hub.Len()
				if convs == 0 && left == 0 && hubbed == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d sessions, %d in the hub and %d goroutines of the endpoint left after the storm", convs, hubbed, left)
				}
				time.Sleep(50 * time.Millisecond)
			}
		})
	}
	if n := len(fake.Requests()); n != calls {
		t.Errorf("%d model calls, want %d", n, calls)
	}
	for i, r := range fake.Requests() {
		select {
		case <-r.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("model call %d goes on after the storm", i)
		}
	}
}

// endpointGoroutines counts the goroutines running the endpoint's code.
func endpointGoroutines() int {
	buf := make([]byte, 16<<20)
	buf = buf[:runtime.Stack(buf, true)]
	n := 0
	for _, g := range bytes.Split(buf, []byte("\n\n")) {
		if bytes.Contains(g, []byte("genui/wsapi.")) && !bytes.Contains(g, []byte("wsapi_test.")) {
			n++
		}
	}
	return n
}

var _ = context.Background
