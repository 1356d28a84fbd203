// Package wsutil accepts the WebSocket connections of the service's WebSocket
// transports: coder/websocket's handshake, with every refusal a JSON error rather than
// its plain-text body; and serves them, pinging idle ones and closing those that do not
// answer (a client gone without closing).
package wsutil

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/internal/jsonenc"
	"github.com/genuiserver/genui/internal/reqlog"
)

// Accept upgrades r to a WebSocket. origins are the host patterns allowed besides r's own
// host ("*": any). A request that is not an upgrade gets 426 with notUpgrade as the
// message; any refusal is a JSON error {"error":{"status","message"}}, and Accept
// reports false.
func Accept(w http.ResponseWriter, r *http.Request, origins []string, notUpgrade string) (*websocket.Conn, bool) {
	if !headerHas(r.Header, "Connection", "upgrade") || !headerHas(r.Header, "Upgrade", "websocket") {
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", "websocket")
		WriteError(w, http.StatusUpgradeRequired, "FAILED_PRECONDITION", notUpgrade)
		return nil, false
	}
	opts := &websocket.AcceptOptions{OriginPatterns: origins}
	for _, o := range origins {
		if o == "*" {
			opts.InsecureSkipVerify = true
		}
	}
	jw := &jsonErrors{ResponseWriter: w}
	ws, err := websocket.Accept(jw, r, opts)
	if err != nil {
		return nil, false
	}
	return ws, true
}

// read reads ws's messages until it fails, handing each to handle in
// order. Each is handled on a goroutine of its own, which Serve waits for: the reading
// goroutine, which an idle connection keeps, stays shallow, so its stack stays small. A
// panic while handling a message is logged, and closes the connection with status 1011.
// ka, when not nil, learns when the connection is busy with a message.
func read(ws *websocket.Conn, log *slog.Logger, ka *keepalive, handle func(websocket.MessageType, []byte)) {
	done := make(chan bool)
	for {
		// Nothing but closing ws ends the read (Shutdown and the keepalive do): no
		// context that coder/websocket would watch for each message.
		typ, data, err := ws.Read(context.Background())
		if err != nil {
			return
		}
		ka.busy(true)
		go func() {
			ok := false
			defer func() {
				if v := recover(); v != nil {
					log.Error("panic serving a WebSocket message", "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
					ws.Close(websocket.StatusInternalError, "internal error")
				}
				done <- ok
			}()
			handle(typ, data)
			ok = true
		}()
		ok := <-done
		ka.busy(false)
		if !ok {
			return
		}
	}
}

// Default keepalive: an idle connection is pinged every 30 seconds, and closed when the
// pong does not come within 10 seconds.
const (
	DefaultPingInterval = 30 * time.Second
	DefaultPingTimeout  = 10 * time.Second
)

// keepalive is what the sweep of an endpoint's connections knows of one: when its last
// message was read or handled, whether one is being handled (its reader then reads
// nothing, so no pong could come), whether a ping of it is out.
type keepalive struct {
	last     atomic.Int64 // Unix ns
	handled  atomic.Bool
	pinging  atomic.Bool
	disabled bool // no keepalive: a nil-like value for read
}

func (k *keepalive) busy(b bool) {
	if k == nil || k.disabled {
		return
	}
	k.handled.Store(b)
	k.last.Store(time.Now().UnixNano())
}

// sweep pings, every interval/4, each connection idle for the interval, and closes one
// whose pong does not come within the timeout: a client gone without closing (a
// half-open connection) lets its sessions go then. It runs while the endpoint has
// connections: an idle connection holds neither a goroutine nor a timer of its own.
func (cs *Conns) sweep(interval, timeout time.Duration, stop <-chan struct{}) {
	tick := time.NewTicker(max(interval/4, time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
		}
		now := time.Now().UnixNano()
		cs.mu.Lock()
		var due []*websocket.Conn
		for ws, k := range cs.m {
			if !k.handled.Load() && !k.pinging.Load() && now-k.last.Load() >= int64(interval) {
				k.pinging.Store(true)
				due = append(due, ws)
			}
		}
		cs.mu.Unlock()
		for _, ws := range due {
			go cs.ping(ws, timeout)
		}
	}
}

// ping pings ws, and closes it when the pong does not come within timeout.
func (cs *Conns) ping(ws *websocket.Conn, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	err := ws.Ping(ctx)
	cancel()
	if err != nil {
		ws.CloseNow() // its read fails: Serve lets the connection go
		return
	}
	cs.mu.Lock()
	k := cs.m[ws]
	cs.mu.Unlock()
	if k != nil {
		k.last.Store(time.Now().UnixNano())
		k.pinging.Store(false)
	}
}

// Alive reports whether ws answers a ping within timeout (and before ctx ends). Its
// reader must be running, as Serve's is.
func Alive(ctx context.Context, ws *websocket.Conn, timeout time.Duration) bool {
	if timeout <= 0 {
		timeout = DefaultPingTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	return ws.Ping(ctx) == nil
}

// WriteError writes a JSON error response.
func WriteError(w http.ResponseWriter, code int, status, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("X-Content-Type-Options")
	w.WriteHeader(code)
	b := append([]byte(`{"error":{"status":"`), status...)
	b = append(b, `","message":`...)
	b = jsonenc.AppendString(b, message)
	w.Write(append(b, "}}\n"...))
}

func headerHas(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// jsonErrors turns the plain-text error coder/websocket writes when it refuses a
// handshake into a JSON error; a successful handshake hijacks the connection through it.
type jsonErrors struct {
	http.ResponseWriter
	code int
}

func (j *jsonErrors) WriteHeader(code int) {
	if code < 400 {
		j.ResponseWriter.WriteHeader(code)
		return
	}
	j.code = code
}

func (j *jsonErrors) Write(p []byte) (int, error) {
	if j.code == 0 {
		return j.ResponseWriter.Write(p)
	}
	status := "INVALID_ARGUMENT"
	switch j.code {
	case http.StatusForbidden:
		status = "PERMISSION_DENIED"
	case http.StatusInternalServerError:
		status = "INTERNAL"
	case http.StatusMethodNotAllowed, http.StatusUpgradeRequired:
		status = "FAILED_PRECONDITION"
	}
	WriteError(j.ResponseWriter, j.code, status, strings.TrimSpace(string(p)))
	return len(p), nil
}

// readSize and writeSize are the sizes of a connection's read and write buffers: an idle
// connection keeps them, and net/http's are 4 KiB each. A client's messages are small
// (a prompt, an answer): a larger one is read past the buffer, straight from the
// connection. The server's updates are larger, and each is written in one call when it
// fits.
const (
	readSize  = 1 << 9
	writeSize = 1 << 10
)

// Hijack hijacks the connection with buffers of readSize and writeSize. The bytes net/http read ahead
// go to the new reader's own buffer, where coder/websocket looks for them.
func (j *jsonErrors) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(j.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	n := brw.Reader.Buffered()
	if n > readSize || brw.Writer.Buffered() > 0 {
		return conn, brw, nil
	}
	ahead, _ := brw.Reader.Peek(n)
	r := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(ahead)), conn), readSize)
	if n > 0 {
		if _, err := r.Peek(n); err != nil {
			conn.Close()
			return nil, nil, err
		}
	}
	return conn, bufio.NewReadWriter(r, bufio.NewWriterSize(conn, writeSize)), nil
}

func (j *jsonErrors) Flush() { http.NewResponseController(j.ResponseWriter).Flush() }

// Conns is an endpoint's open connections, closed together when the server shuts down.
type Conns struct {
	// PingInterval is how long a connection may be idle before the server pings it
	// (default DefaultPingInterval; negative: never); PingTimeout how long the pong may
	// take before the connection is closed (default DefaultPingTimeout). Set them before
	// the first Serve.
	PingInterval, PingTimeout time.Duration

	mu   sync.Mutex
	m    map[*websocket.Conn]*keepalive
	shut bool
	// stop, while the sweep runs, ends it (closed when the last connection goes).
	stop chan struct{}
}

// stopSweep ends the sweep, if it runs; cs.mu is held.
func (cs *Conns) stopSweep() {
	if cs.stop != nil {
		close(cs.stop)
		cs.stop = nil
	}
}

// interval returns how long a connection may be idle before it is pinged; 0: never.
func (cs *Conns) interval() time.Duration {
	switch {
	case cs.PingInterval < 0:
		return 0
	case cs.PingInterval == 0:
		return DefaultPingInterval
	}
	return cs.PingInterval
}

// Timeout returns how long a pong may take.
func (cs *Conns) Timeout() time.Duration {
	if cs.PingTimeout <= 0 {
		return DefaultPingTimeout
	}
	return cs.PingTimeout
}

// Add adds ws; after Shutdown it reports false, and ws should be closed.
func (cs *Conns) Add(ws *websocket.Conn) bool { return cs.add(ws) != nil }

// add adds ws and returns what the keepalive knows of it; nil after Shutdown.
func (cs *Conns) add(ws *websocket.Conn) *keepalive {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.shut {
		return nil
	}
	if cs.m == nil {
		cs.m = make(map[*websocket.Conn]*keepalive)
	}
	interval := cs.interval()
	k := &keepalive{disabled: interval == 0}
	k.last.Store(time.Now().UnixNano())
	cs.m[ws] = k
	if interval > 0 && cs.stop == nil {
		cs.stop = make(chan struct{})
		go cs.sweep(interval, cs.Timeout(), cs.stop)
	}
	return k
}

// Serve serves ws, accepted for r, on a goroutine of its own and returns at once: an
// idle connection then holds one shallow goroutine and no request. start makes the
// connection's handler of messages from the connection's context, which ends when it
// closes; closed then runs, with a context that has r's caller and log info and no end. After
// Shutdown, ws is closed with status 1001 instead.
func (cs *Conns) Serve(r *http.Request, ws *websocket.Conn, log *slog.Logger,
	start func(ctx context.Context) (handle func(websocket.MessageType, []byte), closed func(context.Context))) {
	base := requestValues(r.Context())
	ctx, cancel := context.WithCancel(base)
	ka := cs.add(ws)
	if ka == nil {
		cancel()
		ws.Close(websocket.StatusGoingAway, "the server is shutting down; reconnect")
		return
	}
	handle, closed := start(ctx)
	go func() {
		defer func() {
			cs.Remove(ws)
			cancel()
			closed(base)
			ws.CloseNow()
		}()
		read(ws, log, ka, handle)
	}()
}

// requestValues returns a context with what a connection's turns need of its upgrade's
// request context — its caller, its request's log info — and no end: not net/http's
// chain of contexts, which the connection would otherwise keep as long as it is open.
func requestValues(rctx context.Context) context.Context {
	ctx := context.Background()
	if info := reqlog.FromContext(rctx); info != nil {
		ctx = reqlog.NewContext(ctx, info)
	}
	return auth.NewContext(ctx, auth.FromContext(rctx))
}

// Remove removes ws.
func (cs *Conns) Remove(ws *websocket.Conn) {
	cs.mu.Lock()
	delete(cs.m, ws)
	if len(cs.m) == 0 {
		cs.stopSweep()
	}
	cs.mu.Unlock()
}

// Shutdown closes every connection with status 1001 (going away) and refuses new ones.
func (cs *Conns) Shutdown() {
	cs.mu.Lock()
	cs.shut = true
	cs.stopSweep()
	var all []*websocket.Conn
	for ws := range cs.m {
		all = append(all, ws)
	}
	cs.mu.Unlock()
	for _, ws := range all {
		go ws.Close(websocket.StatusGoingAway, "the server is shutting down; reconnect")
	}
}

// Len returns the number of open connections.
func (cs *Conns) Len() int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return len(cs.m)
}
