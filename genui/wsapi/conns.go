package wsapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/internal/reqlog"
)

// Default keepalive: an idle connection is pinged every 30 seconds, and closed when the
// pong does not come within 10 seconds.
const (
	defaultPingInterval = 30 * time.Second
	defaultPingTimeout  = 10 * time.Second
)

// conns is the server's open connections, of every endpoint: counted, pinged when idle,
// and closed together when the server shuts down.
type conns struct {
	// pingInterval is how long a connection may be idle before the server pings it
	// (default defaultPingInterval; negative: never); pingTimeout how long the pong may
	// take before the connection is closed (default defaultPingTimeout). Set before the
	// first serve.
	pingInterval, pingTimeout time.Duration

	mu   sync.Mutex
	m    map[*websocket.Conn]*keepalive
	n    [endpoints]int // open connections by endpoint
	shut bool
	// stop, while the sweep runs, ends it (closed when the last connection goes).
	stop chan struct{}
}

// keepalive is what the sweep of the connections knows of one: when its last message
// was read or handled, whether one is being handled (its reader then reads nothing, so
// no pong could come), whether a ping of it is out; and its endpoint.
type keepalive struct {
	last     atomic.Int64 // Unix ns
	handled  atomic.Bool
	pinging  atomic.Bool
	disabled bool // no keepalive: a nil-like value for read
	ep       endpointID
}

func (k *keepalive) busy(b bool) {
	if k == nil || k.disabled {
		return
	}
	k.handled.Store(b)
	k.last.Store(time.Now().UnixNano())
}

// interval returns how long a connection may be idle before it is pinged; 0: never.
func (cs *conns) interval() time.Duration {
	switch {
	case cs.pingInterval < 0:
		return 0
	case cs.pingInterval == 0:
		return defaultPingInterval
	}
	return cs.pingInterval
}

// timeout returns how long a pong may take.
func (cs *conns) timeout() time.Duration {
	if cs.pingTimeout <= 0 {
		return defaultPingTimeout
	}
	return cs.pingTimeout
}

// add adds ws, a connection of ep, and returns what the keepalive knows of it; nil after
// shutdown.
func (cs *conns) add(ws *websocket.Conn, ep endpointID) *keepalive {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.shut {
		return nil
	}
	if cs.m == nil {
		cs.m = make(map[*websocket.Conn]*keepalive)
	}
	interval := cs.interval()
	k := &keepalive{disabled: interval == 0, ep: ep}
	k.last.Store(time.Now().UnixNano())
	cs.m[ws] = k
	cs.n[ep]++
	if interval > 0 && cs.stop == nil {
		cs.stop = make(chan struct{})
		go cs.sweep(interval, cs.timeout(), cs.stop)
	}
	return k
}

// remove removes ws.
func (cs *conns) remove(ws *websocket.Conn) {
	cs.mu.Lock()
	if k := cs.m[ws]; k != nil {
		cs.n[k.ep]--
		delete(cs.m, ws)
	}
	if len(cs.m) == 0 {
		cs.stopSweep()
	}
	cs.mu.Unlock()
}

// stopSweep ends the sweep, if it runs; cs.mu is held.
func (cs *conns) stopSweep() {
	if cs.stop != nil {
		close(cs.stop)
		cs.stop = nil
	}
}

// serve serves ws, accepted for r at ep, on a goroutine of its own and returns at once:
// an idle connection then holds one shallow goroutine and no request. open makes the
// connection's handler from the connection's context, which ends when it closes; closed
// then runs with the handler and a context that has r's caller and log info and no end.
// After shutdown, ws is closed with status 1001 instead.
func (cs *conns) serve(r *http.Request, ws *websocket.Conn, ep endpointID, log *slog.Logger,
	open func(ctx context.Context) handler, closed func(context.Context, handler)) {
	base := requestValues(r.Context())
	ctx, cancel := context.WithCancel(base)
	ka := cs.add(ws, ep)
	if ka == nil {
		cancel()
		ws.Close(websocket.StatusGoingAway, "the server is shutting down; reconnect")
		return
	}
	h := open(ctx)
	go func() {
		defer func() {
			cs.remove(ws)
			cancel()
			closed(base, h)
			ws.CloseNow()
		}()
		read(ws, log, ka, h)
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

// read reads ws's messages until it fails, handing each to h in order. Each is handled
// on a goroutine of its own, which read waits for: the reading goroutine, which an idle
// connection keeps, stays shallow, so its stack stays small. A panic while handling a
// message is logged, and closes the connection with status 1011. ka, when not nil,
// learns when the connection is busy with a message.
func read(ws *websocket.Conn, log *slog.Logger, ka *keepalive, h handler) {
	done := make(chan bool)
	for {
		// Nothing but closing ws ends the read (shutdown and the keepalive do): no
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
			h.handle(typ, data)
			ok = true
		}()
		ok := <-done
		ka.busy(false)
		if !ok {
			return
		}
	}
}

// sweep pings, every interval/4, each connection idle for the interval, and closes one
// whose pong does not come within the timeout: a client gone without closing (a
// half-open connection) lets its sessions go then. It runs while the server has
// connections: an idle connection holds neither a goroutine nor a timer of its own.
func (cs *conns) sweep(interval, timeout time.Duration, stop <-chan struct{}) {
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
func (cs *conns) ping(ws *websocket.Conn, timeout time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	err := ws.Ping(ctx)
	cancel()
	if err != nil {
		ws.CloseNow() // its read fails: serve lets the connection go
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

// alive reports whether ws answers a ping within the pong's timeout (and before ctx
// ends). Its reader must be running, as serve's is.
func (cs *conns) alive(ctx context.Context, ws *websocket.Conn) bool {
	ctx, cancel := context.WithTimeout(ctx, cs.timeout())
	defer cancel()
	return ws.Ping(ctx) == nil
}

// shutdown closes every connection with status 1001 (going away) and refuses new ones.
func (cs *conns) shutdown() {
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

// len returns the number of open connections of ep; all of them when ep is endpoints.
func (cs *conns) len(ep endpointID) int {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if ep == endpoints {
		return len(cs.m)
	}
	return cs.n[ep]
}
