package reflection_test

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// wait bounds every wait of the tests.
const wait = 10 * time.Second

// manager is an in-process Genkit runtime manager that behaves like RuntimeManagerV2 of the
// Genkit CLI 1.43.0 (tools-common/src/manager/manager-v2.ts): a WebSocket server keeping the
// registered runtimes by id (a second register with the same id replaces the first; a closed
// connection removes its runtime), answering register requests whose id is truthy with the
// telemetry URL, numbering its own requests "1", "2", … and routing streamChunk and
// runActionState to the request whose id is their (string) requestId.
type manager struct {
	t    testing.TB
	addr string

	mu           sync.Mutex
	srv          *httptest.Server
	peers        []*peer
	runtimes     map[string]*peer
	telemetryURL string
	registers    chan registration
}

type registration struct {
	peer   *peer
	id     json.RawMessage
	params struct {
		ID                       string   `json:"id"`
		PID                      *int     `json:"pid"`
		Name                     string   `json:"name"`
		GenkitVersion            string   `json:"genkitVersion"`
		ReflectionAPISpecVersion int      `json:"reflectionApiSpecVersion"`
		Envs                     []string `json:"envs"`
	}
}

func newManager(t testing.TB) *manager {
	t.Helper()
	m := &manager{t: t, runtimes: map[string]*peer{}, registers: make(chan registration, 100)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m.addr = ln.Addr().String()
	m.start(ln)
	t.Cleanup(m.stop)
	return m
}

func (m *manager) url() string { return "ws://" + m.addr }

func (m *manager) start(ln net.Listener) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(m.accept))
	srv.Listener.Close()
	srv.Listener = ln
	srv.Start()
	m.mu.Lock()
	m.srv = srv
	m.mu.Unlock()
}

// stop closes every connection and the listener, as a CLI that exits.
func (m *manager) stop() {
	m.mu.Lock()
	srv, peers := m.srv, m.peers
	m.srv, m.peers = nil, nil
	m.mu.Unlock()
	for _, p := range peers {
		p.ws.CloseNow()
	}
	if srv != nil {
		srv.Close()
	}
	for _, p := range peers {
		<-p.done
	}
}

// restart stops the manager and starts a new one on the same address.
func (m *manager) restart() {
	m.stop()
	m.mu.Lock()
	m.runtimes = map[string]*peer{}
	m.mu.Unlock()
	var ln net.Listener
	var err error
	for deadline := time.Now().Add(wait); ; time.Sleep(10 * time.Millisecond) {
		if ln, err = net.Listen("tcp", m.addr); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		m.t.Fatal(err)
	}
	m.start(ln)
}

func (m *manager) accept(w http.ResponseWriter, r *http.Request) {
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	ws.SetReadLimit(-1)
	p := &peer{m: m, ws: ws, calls: map[string]chan frame{}, other: make(chan frame, 100), done: make(chan struct{})}
	m.mu.Lock()
	m.peers = append(m.peers, p)
	m.mu.Unlock()
	p.read()
}

// runtimeCount is how many runtimes are registered now.
func (m *manager) runtimeCount() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.runtimes)
}

// connections is how many connections are open now.
func (m *manager) connections() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, p := range m.peers {
		select {
		case <-p.done:
		default:
			n++
		}
	}
	return n
}

// nextRegister waits for the next register request.
func (m *manager) nextRegister(t testing.TB) registration {
	t.Helper()
	select {
	case r := <-m.registers:
		return r
	case <-time.After(wait):
		t.Fatal("no register")
		panic("unreachable")
	}
}

// peer is one runtime connection.
type peer struct {
	m    *manager
	ws   *websocket.Conn
	done chan struct{}

	mu    sync.Mutex
	next  int
	calls map[string]chan frame // by request id: its notifications, then its response
	other chan frame            // everything else the runtime sent
}

// frame is any JSON-RPC message as received.
type frame struct {
	Raw     string          `json:"-"`
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Data    *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Details struct {
				Stack   string `json:"stack"`
				TraceID string `json:"traceId"`
			} `json:"details"`
		} `json:"data"`
	} `json:"error"`
}

func (p *peer) read() {
	defer func() {
		p.m.mu.Lock()
		for id, r := range p.m.runtimes {
			if r == p {
				delete(p.m.runtimes, id)
			}
		}
		p.m.mu.Unlock()
		close(p.done)
	}()
	for {
		_, data, err := p.ws.Read(context.Background())
		if err != nil {
			return
		}
		var f frame
		if err := json.Unmarshal(data, &f); err != nil {
			p.m.t.Errorf("the runtime sent invalid JSON: %s", data)
			continue
		}
		f.Raw = string(data)
		switch f.Method {
		case "register":
			var r registration
			r.peer, r.id = p, f.ID
			// Like the CLI: params failing its schema are dropped; only a truthy id is answered.
			if json.Unmarshal(f.Params, &r.params) != nil || r.params.ID == "" || r.params.PID == nil {
				p.other <- f
				continue
			}
			p.m.mu.Lock()
			p.m.runtimes[r.params.ID] = p
			url := p.m.telemetryURL
			p.m.mu.Unlock()
			if s := string(f.ID); s != "" && s != `""` && s != "0" && s != "null" {
				p.writeJSON(map[string]any{"jsonrpc": "2.0", "id": f.ID, "result": map[string]any{"telemetryServerUrl": url}})
			}
			p.m.registers <- r
		case "streamChunk", "runActionState":
			var np struct {
				RequestID any `json:"requestId"`
			}
			_ = json.Unmarshal(f.Params, &np)
			id, ok := np.RequestID.(string) // the CLI drops a numeric requestId
			if ch := p.call(id); ok && ch != nil {
				ch <- f
			} else {
				p.other <- f
			}
		case "":
			var id string
			if json.Unmarshal(f.ID, &id) == nil {
				if ch := p.call(id); ch != nil {
					p.mu.Lock()
					delete(p.calls, id)
					p.mu.Unlock()
					ch <- f
					continue
				}
			}
			p.other <- f
		default:
			p.other <- f
		}
	}
}

func (p *peer) call(id string) chan frame {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.calls[id]
}

func (p *peer) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return p.writeRaw(b)
}

func (p *peer) writeRaw(b []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	defer cancel()
	return p.ws.Write(ctx, websocket.MessageText, b)
}

// request sends a request, numbered like the CLI's.
func (p *peer) request(t testing.TB, method string, params any) *call {
	t.Helper()
	p.mu.Lock()
	p.next++
	id := strconv.Itoa(p.next)
	ch := make(chan frame, 1000)
	p.calls[id] = ch
	p.mu.Unlock()
	msg := map[string]any{"jsonrpc": "2.0", "id": id, "method": method}
	if params != nil {
		msg["params"] = params
	}
	if err := p.writeJSON(msg); err != nil {
		t.Fatal(err)
	}
	return &call{t: t, id: id, ch: ch}
}

func (p *peer) notify(t testing.TB, method string, params any) {
	t.Helper()
	if err := p.writeJSON(map[string]any{"jsonrpc": "2.0", "method": method, "params": params}); err != nil {
		t.Fatal(err)
	}
}

// roundTrip sends a request and waits for its response.
func (p *peer) roundTrip(t testing.TB, method string, params any) frame {
	t.Helper()
	_, res := p.request(t, method, params).wait()
	return res
}

// nextOther waits for a message that belongs to no request.
func (p *peer) nextOther(t testing.TB) frame {
	t.Helper()
	select {
	case f := <-p.other:
		return f
	case <-time.After(wait):
		t.Fatal("no message from the runtime")
		panic("unreachable")
	}
}

// call is a request in flight.
type call struct {
	t  testing.TB
	id string
	ch chan frame
}

// next waits for the next notification of the call, or its response.
func (c *call) next() frame {
	c.t.Helper()
	select {
	case f := <-c.ch:
		return f
	case <-time.After(wait):
		c.t.Fatalf("request %s: no answer", c.id)
		panic("unreachable")
	}
}

// wait collects the call's notifications until its response.
func (c *call) wait() (notes []frame, res frame) {
	c.t.Helper()
	for {
		f := c.next()
		if f.Method == "" {
			return notes, f
		}
		notes = append(notes, f)
	}
}

// result decodes a successful response.
func result[T any](t testing.TB, f frame) T {
	t.Helper()
	var v T
	if f.Error != nil {
		t.Fatalf("error response: %s", f.Raw)
	}
	if err := json.Unmarshal(f.Result, &v); err != nil {
		t.Fatalf("result %s: %v", f.Result, err)
	}
	return v
}

// wantError checks an error response's code and, when set, its Genkit status code.
func wantError(t testing.TB, f frame, code, status int) {
	t.Helper()
	if f.Error == nil || f.Error.Code != code {
		t.Fatalf("want error %d, got %s", code, f.Raw)
	}
	if f.Error.Data == nil || f.Error.Data.Code != status || f.Error.Data.Message == "" {
		t.Fatalf("want error data with Genkit status %d, got %s", status, f.Raw)
	}
}

// eventually polls cond until it holds.
func eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(wait); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}
