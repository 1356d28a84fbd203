package wsapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/genui/wsapi"
	"github.com/genuiserver/genui/internal/sessionhub"
	"github.com/genuiserver/genui/internal/testkit/servetest"
	"github.com/genuiserver/genui/schemas"
)

type yieldServer struct {
	*httptest.Server
	svc *genui.Service
	hub *sessionhub.Hub
	y   *wsapi.Server
}

func newYieldServer(t testing.TB, window time.Duration) *yieldServer {
	t.Helper()
	return newYieldServerWith(t, yieldConfig{model: offline.Name, window: window})
}

// config is what newServerWith serves.
type yieldConfig struct {
	model  string
	window time.Duration
	svc    []genui.Option
	hub    []sessionhub.Option
	y      []wsapi.Option
}

func newYieldServerWith(t testing.TB, cfg yieldConfig) *yieldServer {
	t.Helper()
	svc := servetest.Service(t, cfg.model, cfg.svc...)
	hub := sessionhub.New(svc, cfg.window, servetest.Quiet, cfg.hub...)
	t.Cleanup(hub.Close)
	y := wsapi.New(svc, append([]wsapi.Option{wsapi.WithHub(hub), wsapi.WithLogger(servetest.Quiet)}, cfg.y...)...)
	return &yieldServer{Server: servetest.Serve(t, svc, y.Routes()...), svc: svc, hub: hub, y: y}
}

// startSession returns a session of POST /startSession on the basic catalog.
func (s *yieldServer) startSession(t testing.TB) string {
	t.Helper()
	cat, err := schemas.SampleCatalog("basic")
	if err != nil {
		t.Fatal(err)
	}
	enc, _ := json.Marshal(cat)
	res, err := http.Post(s.URL+"/startSession", "application/json", strings.NewReader(`{"protocolVersion":"0.1.0","catalog":`+string(enc)+`}`))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var out struct{ Result string }
	if json.Unmarshal(b, &out); out.Result == "" {
		t.Fatalf("startSession: %d %s", res.StatusCode, b)
	}
	return out.Result
}

type yieldClient struct {
	t  testing.TB
	ws *websocket.Conn
}

func dialYield(t testing.TB, url, id string) *yieldClient {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/session/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(-1)
	t.Cleanup(func() { ws.CloseNow() })
	return &yieldClient{t: t, ws: ws}
}

func (c *yieldClient) send(msg string) {
	c.t.Helper()
	if err := c.ws.Write(context.Background(), websocket.MessageText, []byte(msg)); err != nil {
		c.t.Fatal(err)
	}
}

type yieldMsg struct {
	Type        string         `json:"type"`
	Effect      map[string]any `json:"effect"`
	SessionID   string         `json:"sessionId"`
	Recoverable *bool          `json:"recoverable"`
	Message     string         `json:"message"`
	Result      map[string]any `json:"result"`
	raw         string
}

func (c *yieldClient) next() yieldMsg {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		c.t.Fatalf("reading: %v", err)
	}
	var m yieldMsg
	if err := json.Unmarshal(b, &m); err != nil {
		c.t.Fatalf("not JSON: %s", b)
	}
	m.raw = string(b)
	return m
}

// until reads up to the first message of one of the types, returning what came before.
func (c *yieldClient) until(types ...string) (yieldMsg, []yieldMsg) {
	c.t.Helper()
	var before []yieldMsg
	for {
		m := c.next()
		for _, t := range types {
			if m.Type == t {
				return m, before
			}
		}
		before = append(before, m)
	}
}

const initWithTool = `{"type":"init","graphId":"generateUi","input":{"conversation":[{"role":"user","parts":[{"type":"text","text":"Where am I? Use getLocation"}]}],"clientTools":[{"name":"getLocation","description":"The user's city"}]}}`

// yield → the connection drops → reconnect → the same effect → resume → done.
func TestYieldReconnectResume(t *testing.T) {
	s := newYieldServer(t, time.Minute)
	id := s.startSession(t)
	c := dialYield(t, s.URL, id)
	c.send(initWithTool)
	y, before := c.until("yield", "error", "done")
	if y.Type != "yield" || y.SessionID != id || y.Effect["type"] != "ClientTool" || y.Effect["name"] != "getLocation" || y.Effect["callId"] == "" {
		t.Fatalf("yield: %s", y.raw)
	}
	if len(before) == 0 || before[0].raw != `{"type":"progress","effect":{"type":"LlmComplete","model":"genui/offline"},"status":"executing"}` {
		t.Fatalf("before the yield: %+v", before)
	}
	c.ws.CloseNow()

	c2 := dialYield(t, s.URL, id)
	c2.send(`{"type":"reconnect","sessionId":"` + id + `"}`)
	if again := c2.next(); again.raw != y.raw {
		t.Fatalf("after reconnect:\n got %s\nwant %s", again.raw, y.raw)
	}
	c2.send(`{"type":"ping"}`)
	if m := c2.next(); m.raw != `{"type":"pong"}` {
		t.Fatalf("ping: %s", m.raw)
	}
	c2.send(`{"type":"resume","result":{"type":"success","value":{"city":"Lisbon"}}}`)
	done, before := c2.until("done", "error", "yield")
	if done.Type != "done" || done.Result["finishReason"] != "stop" {
		t.Fatalf("end: %s", done.raw)
	}
	var lisbon bool
	for _, m := range before {
		if m.Type != "progress" || m.Effect["type"] != "LlmComplete" {
			t.Fatalf("before done: %s", m.raw)
		}
		lisbon = lisbon || strings.Contains(m.raw, "Lisbon")
	}
	if !lisbon {
		t.Fatal("the surface does not show the tool's answer")
	}
	// The connection stays open: another init continues the conversation.
	c2.send(`{"type":"init","graphId":"generateUi","input":{"conversation":[{"role":"user","parts":[{"type":"text","text":"Thanks"}]}]}}`)
	if m, _ := c2.until("done", "error", "yield"); m.Type != "done" {
		t.Fatalf("a second init: %s", m.raw)
	}
}

func TestYieldErrorTable(t *testing.T) {
	s := newYieldServer(t, time.Minute)
	id := s.startSession(t)
	c := dialYield(t, s.URL, id)
	for _, tc := range []struct{ name, send, msg string }{
		{"invalid JSON", `{"type":`, "invalid JSON"},
		{"unknown type", `{"type":"launch"}`, `unknown message type "launch"`},
		{"no type", `{}`, "type: required"},
		{"empty graph id", `{"type":"init","graphId":"","input":{}}`, "graphId: required"},
		{"unknown graph id", `{"type":"init","graphId":"TestGraph","input":{}}`, `unknown graph "TestGraph"`},
		{"bad input", `{"type":"init","graphId":"generateUi","input":{"conversation":"hi"}}`, "input.conversation"},
		{"resume with nothing waiting", `{"type":"resume","result":{"type":"success","value":1}}`, "resume: the session"},
		{"bad result", `{"type":"resume","result":{"type":"maybe"}}`, `result.type: must be "success" or "error"`},
		{"reconnect to another session", `{"type":"reconnect","sessionId":"someone-else"}`, "sessionId: not the session of this path"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c.send(tc.send)
			m := c.next()
			if m.Type != "error" || m.Recoverable == nil || *m.Recoverable || m.SessionID != "" || !strings.Contains(m.Message, tc.msg) {
				t.Fatalf("got %s, want an unrecoverable error with %q", m.raw, tc.msg)
			}
		})
	}
}

// The server speaks only when spoken to, and a waiting session expires after the window.
func TestSilenceAndExpiry(t *testing.T) {
	s := newYieldServer(t, 300*time.Millisecond)
	id := s.startSession(t)
	c := dialYield(t, s.URL, id)
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, b, err := c.ws.Read(ctx); err == nil {
		t.Fatalf("the server spoke first: %s", b)
	}
	c = dialYield(t, s.URL, id) // the read's timeout closed the first connection
	c.send(initWithTool)
	if y, _ := c.until("yield", "error", "done"); y.Type != "yield" {
		t.Fatalf("yield: %s", y.raw)
	}
	c.ws.CloseNow()
	time.Sleep(500 * time.Millisecond)
	c2 := dialYield(t, s.URL, id)
	c2.send(`{"type":"reconnect","sessionId":"` + id + `"}`)
	if m := c2.next(); m.Type != "error" || *m.Recoverable || !strings.Contains(m.Message, "expired") && !strings.Contains(m.Message, "unknown") {
		t.Fatalf("after the window: %s", m.raw)
	}
	if n, _, _ := s.svc.Conversations(); n != 0 {
		t.Fatalf("%d conversations left after the window", n)
	}
}

func TestYieldRefusedBeforeUpgrade(t *testing.T) {
	s := newYieldServer(t, time.Minute)
	for path, want := range map[string]string{
		"/session/x":            `{"error":{"status":"INVALID_ARGUMENT","message":"id: the session id in /session/{id} must be 8 to 128 characters of A-Z a-z 0-9 . _ -"}}`,
		"/session/valid-id-123": `{"error":{"status":"FAILED_PRECONDITION","message":"/session/{id} is a WebSocket endpoint: connect with a WebSocket client and send {\"type\":\"init\",…}"}}`,
	} {
		res, err := http.Get(s.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if strings.TrimSpace(string(b)) != want || res.Header.Get("Content-Type") != "application/json" {
			t.Errorf("%s: %d %s", path, res.StatusCode, b)
		}
	}
}

// With yieldActions, a surface waits for the user's action as a yielded effect: one
// session runs the whole interaction, across a reconnect.
func TestUserActionYield(t *testing.T) {
	s := newYieldServer(t, time.Minute)
	id := s.startSession(t)
	c := dialYield(t, s.URL, id)
	c.send(`{"type":"init","graphId":"generateUi","yieldActions":true,"input":{"conversation":[{"role":"user","parts":[{"type":"text","text":"Show a form"}]}]}}`)
	y, _ := c.until("yield", "error", "done")
	if want := `{"type":"yield","effect":{"type":"UserAction","surfaceIds":["surface-1"]},"sessionId":"` + id + `"}`; y.raw != want {
		t.Fatalf("got %s\nwant %s", y.raw, want)
	}
	c.ws.CloseNow()
	c = dialYield(t, s.URL, id)
	c.send(`{"type":"reconnect","sessionId":"` + id + `"}`)
	if again := c.next(); again.raw != y.raw {
		t.Fatalf("after reconnect: %s", again.raw)
	}
	c.send(`{"type":"resume","result":{"type":"success","value":{"surfaceId":"surface-1","widgetId":"send","eventType":"onTap","isAction":true}}}`)
	if m, _ := c.until("yield", "error", "done"); m.Type != "yield" || m.Effect["type"] != "UserAction" {
		t.Fatalf("after the action: %s", m.raw)
	}
	c.send(`{"type":"resume","result":{"type":"success","value":5}}`)
	if m := c.next(); m.Type != "error" || *m.Recoverable || !strings.Contains(m.Message, "result.value") {
		t.Fatalf("a value that is no action: %s", m.raw)
	}
	c.send(`{"type":"resume","result":{"type":"error","message":"the user left"}}`)
	if m := c.next(); m.raw != `{"type":"done","result":null}` {
		t.Fatalf("the user left: %s", m.raw)
	}
	c.send(`{"type":"resume","result":{"type":"success","value":"hi"}}`)
	if m := c.next(); m.Type != "error" || !strings.Contains(m.Message, "not suspended") {
		t.Fatalf("after done: %s", m.raw)
	}
}
