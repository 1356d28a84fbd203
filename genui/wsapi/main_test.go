package wsapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/wsapi"
	"github.com/genuiserver/genui/internal/sessionhub"
	"github.com/genuiserver/genui/internal/testkit/leaktest"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

type server struct {
	*httptest.Server
	svc *genui.Service
	hub *sessionhub.Hub
	ws  *wsapi.Server
}

// newServer serves /ws on the named model; window is the reconnect window.
func newServer(t testing.TB, model string, window time.Duration, opts []wsapi.Option, gopts ...genui.Option) *server {
	t.Helper()
	return newServerWith(t, config{model: model, window: window, ws: opts, svc: gopts})
}

// config is what newServerWith serves.
type config struct {
	model  string
	window time.Duration
	ws     []wsapi.Option
	hub    []sessionhub.Option
	svc    []genui.Option
	// auth requires an API key on every route (servetest.AliceKey, servetest.BobKey).
	auth bool
}

func newServerWith(t testing.TB, cfg config) *server {
	t.Helper()
	svc := servetest.Service(t, cfg.model, cfg.svc...)
	hub := sessionhub.New(svc, cfg.window, servetest.Quiet, cfg.hub...)
	t.Cleanup(hub.Close)
	ws := wsapi.New(svc, append([]wsapi.Option{wsapi.WithHub(hub), wsapi.WithLogger(servetest.Quiet)}, cfg.ws...)...)
	var opts []httpapi.Option
	if cfg.auth {
		authn, _ := servetest.Callers(t)
		opts = append(opts, httpapi.WithAuth(authn))
	}
	return &server{Server: servetest.ServeWith(t, svc, opts, ws.Routes()...), svc: svc, hub: hub, ws: ws}
}

// client is one /ws connection.
type client struct {
	t  testing.TB
	ws *websocket.Conn
}

func dial(t testing.TB, url string) *client { return dialAs(t, url, "") }

// dialAs connects with an API key ("": none).
func dialAs(t testing.TB, url, key string) *client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var opts *websocket.DialOptions
	if key != "" {
		opts = &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + key}}}
	}
	ws, _, err := websocket.Dial(ctx, "ws"+strings.TrimPrefix(url, "http")+"/ws", opts)
	if err != nil {
		t.Fatal(err)
	}
	ws.SetReadLimit(-1)
	t.Cleanup(func() { ws.CloseNow() })
	return &client{t: t, ws: ws}
}

func (c *client) send(msg string) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, []byte(msg)); err != nil {
		c.t.Fatal(err)
	}
}

// read reads the next message, raw.
func (c *client) read() string {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, b, err := c.ws.Read(ctx)
	if err != nil {
		c.t.Fatalf("reading: %v", err)
	}
	return string(b)
}

// msg is a decoded message of the server.
type msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params map[string]any  `json:"params"`
	Result map[string]any  `json:"result"`
	Error  *struct {
		Code    int            `json:"code"`
		Message string         `json:"message"`
		Data    map[string]any `json:"data"`
	} `json:"error"`
	raw string
}

func (c *client) next() msg {
	c.t.Helper()
	raw := c.read()
	var m msg
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		c.t.Fatalf("not JSON: %s", raw)
	}
	m.raw = raw
	return m
}

// call sends a request and returns its response, collecting what came before it.
func (c *client) call(id int, method, params string) (msg, []msg) {
	c.t.Helper()
	c.send(`{"jsonrpc":"2.0","id":` + itoa(id) + `,"method":"` + method + `","params":` + params + `}`)
	var before []msg
	for {
		m := c.next()
		if string(m.ID) == itoa(id) && m.Method == "" {
			return m, before
		}
		before = append(before, m)
	}
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

func (c *client) newSession(id int, params string) string {
	c.t.Helper()
	res, _ := c.call(id, "new_session", params)
	if res.Error != nil {
		c.t.Fatalf("new_session: %s", res.raw)
	}
	return res.Result["session_id"].(string)
}

// answerPings keeps reading c's connection in the background, discarding nothing it
// expects: a live client, which answers the server's pings (a client that never reads
// does not, and looks dead).
func (c *client) answerPings() { c.ws.CloseRead(context.Background()) }
