// Package wsutil accepts the WebSocket connections of the service's WebSocket
// transports: coder/websocket's handshake, with every refusal a JSON error rather than
// its plain-text body.
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

	"github.com/coder/websocket"

	"github.com/genuiserver/genui/internal/jsonenc"
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

// read reads ws's messages until it fails or ctx ends, handing each to handle in
// order. Each is handled on a goroutine of its own, which Serve waits for: the reading
// goroutine, which an idle connection keeps, stays shallow, so its stack stays small. A
// panic while handling a message is logged, and closes the connection with status 1011.
func read(ctx context.Context, ws *websocket.Conn, log *slog.Logger, handle func(websocket.MessageType, []byte)) {
	done := make(chan bool)
	for {
		typ, data, err := ws.Read(ctx)
		if err != nil {
			return
		}
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
		if !<-done {
			return
		}
	}
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

// bufSize is the size of a connection's read and write buffers: an idle connection
// keeps them, and net/http's are 4 KiB each. A larger message is read or written through
// them in several calls.
const bufSize = 1 << 10

// Hijack hijacks the connection with buffers of bufSize. The bytes net/http read ahead
// go to the new reader's own buffer, where coder/websocket looks for them.
func (j *jsonErrors) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(j.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	n := brw.Reader.Buffered()
	if n > bufSize || brw.Writer.Buffered() > 0 {
		return conn, brw, nil
	}
	ahead, _ := brw.Reader.Peek(n)
	r := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(ahead)), conn), bufSize)
	if n > 0 {
		if _, err := r.Peek(n); err != nil {
			conn.Close()
			return nil, nil, err
		}
	}
	return conn, bufio.NewReadWriter(r, bufio.NewWriterSize(conn, bufSize)), nil
}

func (j *jsonErrors) Flush() { http.NewResponseController(j.ResponseWriter).Flush() }

// Conns is an endpoint's open connections, closed together when the server shuts down.
type Conns struct {
	mu   sync.Mutex
	m    map[*websocket.Conn]struct{}
	shut bool
}

// Add adds ws; after Shutdown it reports false, and ws should be closed.
func (cs *Conns) Add(ws *websocket.Conn) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.shut {
		return false
	}
	if cs.m == nil {
		cs.m = make(map[*websocket.Conn]struct{})
	}
	cs.m[ws] = struct{}{}
	return true
}

// Serve serves ws, accepted for r, on a goroutine of its own and returns at once: an
// idle connection then holds one shallow goroutine and no request. start makes the
// connection's handler of messages from the connection's context, which ends when it
// closes; closed then runs, with a context that has r's values and no end. After
// Shutdown, ws is closed with status 1001 instead.
func (cs *Conns) Serve(r *http.Request, ws *websocket.Conn, log *slog.Logger,
	start func(ctx context.Context) (handle func(websocket.MessageType, []byte), closed func(context.Context))) {
	base := context.WithoutCancel(r.Context())
	ctx, cancel := context.WithCancel(base)
	if !cs.Add(ws) {
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
		read(ctx, ws, log, handle)
	}()
}

// Remove removes ws.
func (cs *Conns) Remove(ws *websocket.Conn) {
	cs.mu.Lock()
	delete(cs.m, ws)
	cs.mu.Unlock()
}

// Shutdown closes every connection with status 1001 (going away) and refuses new ones.
func (cs *Conns) Shutdown() {
	cs.mu.Lock()
	cs.shut = true
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
