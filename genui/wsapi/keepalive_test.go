package wsapi

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The keepalive: a connection busy with a message is not pinged (its reader is not
// reading, so no pong could come); an idle one that answers stays; one that does not
// answer is closed.
func TestConnsKeepalive(t *testing.T) {
	var cs conns
	cs.pingInterval, cs.pingTimeout = 50*time.Millisecond, 50*time.Millisecond
	closed := make(chan struct{}, 2)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, ok := accept(w, r, nil, "not an upgrade")
		if !ok {
			return
		}
		cs.serve(r, ws, jsonrpcEndpoint, slog.New(slog.NewTextHandler(io.Discard, nil)),
			func(ctx context.Context) handler {
				return handlerFunc(func(_ websocket.MessageType, b []byte) {
					if string(b) == "slow" {
						time.Sleep(400 * time.Millisecond) // many intervals
					}
					ws.Write(ctx, websocket.MessageText, b)
				})
			},
			func(context.Context, handler) { closed <- struct{}{} })
	}))
	defer srv.Close()
	dial := func() *websocket.Conn {
		ws, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.URL, "http"), nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.CloseNow() })
		return ws
	}
	read := func(ws *websocket.Conn) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_, b, err := ws.Read(ctx)
		return string(b), err
	}

	// Busy: the client does not read (answers no ping) while the server handles its
	// message; the connection survives, and the answer comes.
	busy := dial()
	busy.Write(context.Background(), websocket.MessageText, []byte("slow"))
	time.Sleep(300 * time.Millisecond)
	if got, err := read(busy); err != nil || got != "slow" {
		t.Fatalf("after a slow message: %q, %v", got, err)
	}

	// Idle and not answering (no longer read): closed.
	select {
	case <-closed:
	case <-time.After(2 * time.Second):
		t.Fatal("a connection that answers no ping was not closed")
	}
	if _, err := read(busy); err == nil {
		t.Fatal("the closed connection reads on")
	}

	// Idle and answering (reading): it stays over many intervals.
	live := dial()
	live.CloseRead(context.Background())
	time.Sleep(400 * time.Millisecond)
	select {
	case <-closed:
		t.Fatal("a connection that answers was closed")
	default:
	}
	if n := cs.len(endpoints); n != 1 {
		t.Fatalf("%d connections, want the live one", n)
	}
	live.CloseNow()
	<-closed
}

// handlerFunc is a handler of a function.
type handlerFunc func(websocket.MessageType, []byte)

func (f handlerFunc) handle(typ websocket.MessageType, data []byte) { f(typ, data) }
