package wsapi_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/genui/wsapi"
	"github.com/genuiserver/genui/internal/sessionhub"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

// waitTurnsEnded waits until the fake model answered n calls to their end and no turn
// runs.
func waitTurnsEnded(t *testing.T, s *server, fake *fakegemini.Server, n int) {
	t.Helper()
	servetest.Eventually(t, "the turns did not end", func() bool {
		reqs := fake.Requests()
		if len(reqs) < n {
			return false
		}
		for _, r := range reqs {
			select {
			case <-r.Done():
			default:
				return false
			}
		}
		return s.svc.Running() == 0
	})
}

// A connection dropped mid-turn: the turn runs to its end, and the session is kept for
// the grace period after it; load_session then replays what the client missed of the
// turn from the durable stream (after the `after` it saw) and answers with the turn's
// end. After the grace, the session is gone.
func TestLoadAfterTheTurnEnded(t *testing.T) {
	fake := servetest.PacedForm(t)
	s := newServerWith(t, config{model: servetest.PacedModel, window: time.Minute, hub: []sessionhub.Option{sessionhub.WithGrace(2 * time.Second)}})
	c := dial(t, s.URL)
	sid := c.newSession(1, `{}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"prompt","params":{"session_id":"` + sid + `","prompt":[{"type":"text","text":"A signup form"}]}}`)
	seen := []msg{c.next(), c.next()}
	c.ws.CloseNow()
	waitTurnsEnded(t, s, fake, 1)
	time.Sleep(300 * time.Millisecond)

	c2 := dial(t, s.URL)
	res, rest := c2.call(1, "load_session", `{"session_id":"`+sid+`","after":2}`)
	if res.raw != `{"jsonrpc":"2.0","id":1,"result":{"stop_reason":"end_turn"}}` {
		t.Fatalf("load_session: %s", res.raw)
	}
	all := append(seen, rest...)
	for i, u := range all {
		if u.Method != "session_update" || u.Params["seq"] != float64(i+1) {
			t.Fatalf("update %d of %d: %s", i, len(all), u.raw)
		}
	}
	if len(all) != 6 || !strings.Contains(all[5].raw, `"submit-label"`) {
		t.Fatalf("%d updates; the last: %s", len(all), all[len(all)-1].raw)
	}
	// The session is this connection's now; loaded again, nothing is replayed: it is idle.
	res, before := c2.call(3, "load_session", `{"session_id":"`+sid+`"}`)
	if res.raw != `{"jsonrpc":"2.0","id":3,"result":{"session_id":"`+sid+`"}}` || len(before) != 0 {
		t.Fatalf("load_session of an idle session: %s after %d messages", res.raw, len(before))
	}
	res, _ = c2.call(4, "list_sessions", `{}`)
	if res.raw != `{"jsonrpc":"2.0","id":4,"result":{"sessions":[{"session_id":"`+sid+`","state":"idle"}]}}` {
		t.Fatalf("list_sessions: %s", res.raw)
	}
	// Closed with nothing running: gone at once.
	c2.ws.Close(websocket.StatusNormalClosure, "")
	servetest.Eventually(t, "an idle session outlived its connection", func() bool { n, _, _ := s.svc.Conversations(); return n == 0 && s.hub.Len() == 0 })

	// Dropped mid-turn and not loaded: gone after the turn's end and the grace.
	c3 := dial(t, s.URL)
	sid = c3.newSession(1, `{}`)
	c3.send(`{"jsonrpc":"2.0","id":2,"method":"prompt","params":{"session_id":"` + sid + `","prompt":[{"type":"text","text":"A signup form"}]}}`)
	c3.next()
	c3.ws.CloseNow()
	waitTurnsEnded(t, s, fake, 2)
	// The hub may see the turn's end a moment after the service counts it.
	servetest.Eventually(t, "the dropped session was not kept after the turn's end", func() bool { return s.hub.Waiting() == 1 })
	servetest.Eventually(t, "the session outlived the grace", func() bool { n, _, _ := s.svc.Conversations(); return n == 0 && s.hub.Len() == 0 })
	res, _ = dial(t, s.URL).call(1, "load_session", `{"session_id":"`+sid+`"}`)
	if res.Error == nil || res.Error.Code != -32001 {
		t.Fatalf("load_session after the grace: %s", res.raw)
	}
}

// A client tool called by a turn whose connection dropped mid-turn: load_session after
// the turn's end replays what the client missed of the turn and sends the client_tool
// request; its answer ends the interaction.
func TestLoadAfterATurnThatCalledAClientTool(t *testing.T) {
	s := newServer(t, offline.Name, time.Minute, nil)
	c := dial(t, s.URL)
	sid := c.newSession(1, `{"clientTools":[{"name":"getLocation","description":"The user's city"}]}`)
	// Dropped before the turn could send anything: the turn ends with no client.
	c.send(`{"jsonrpc":"2.0","id":2,"method":"prompt","params":{"session_id":"` + sid + `","prompt":[{"type":"text","text":"Where am I? Use getLocation"}]}}`)
	c.ws.CloseNow()
	servetest.Eventually(t, "the turn did not end", func() bool { return s.svc.Running() == 0 && s.hub.Waiting() == 1 })

	c2 := dial(t, s.URL)
	c2.send(`{"jsonrpc":"2.0","id":1,"method":"load_session","params":{"session_id":"` + sid + `"}}`)
	var got []msg
	for {
		m := c2.next()
		got = append(got, m)
		if m.Method == "client_tool" {
			break
		}
	}
	// The turn's updates come first, replayed from the start, unless they reached the
	// dropped connection's socket before the server saw it close.
	for i, u := range got[:len(got)-1] {
		if u.Method != "session_update" || u.Params["seq"] != float64(i+1) {
			t.Fatalf("before the request: %s", u.raw)
		}
	}
	req := got[len(got)-1]
	c2.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"city":"Lisbon"}}`)
	res, _ := func() (msg, []msg) {
		var before []msg
		for {
			m := c2.next()
			if string(m.ID) == "1" {
				return m, before
			}
			before = append(before, m)
		}
	}()
	if res.raw != `{"jsonrpc":"2.0","id":1,"result":{"stop_reason":"end_turn"}}` {
		t.Fatalf("load_session: %s", res.raw)
	}
}

// A half-open connection (its client gone without closing, so that it answers no ping)
// does not keep its session from a reconnecting client: load_session pings it, closes it
// and takes the session over. A live connection keeps its session from another
// anonymous client.
func TestLoadTakesOverFromAHalfOpenConnection(t *testing.T) {
	s := newServer(t, offline.Name, time.Minute, []wsapi.Option{wsapi.WithKeepalive(-1, 200*time.Millisecond)})
	live := dial(t, s.URL)
	kept := live.newSession(1, `{}`)
	live.answerPings()
	dead := dial(t, s.URL)
	sid := dead.newSession(1, `{}`) // then never reads again: it answers no ping

	c := dial(t, s.URL)
	res, _ := c.call(1, "load_session", `{"session_id":"`+kept+`"}`)
	if res.Error == nil || res.Error.Code != -32001 {
		t.Fatalf("load_session of a live connection's session: %s", res.raw)
	}
	started := time.Now()
	res, _ = c.call(2, "load_session", `{"session_id":"`+sid+`"}`)
	if res.raw != `{"jsonrpc":"2.0","id":2,"result":{"session_id":"`+sid+`"}}` {
		t.Fatalf("load_session of a half-open connection's session: %s", res.raw)
	}
	if took := time.Since(started); took > 2*time.Second {
		t.Fatalf("the take-over took %v", took)
	}
	res, _ = c.call(3, "prompt", `{"session_id":"`+sid+`","prompt":[{"type":"text","text":"Hello"}]}`)
	if res.Error != nil {
		t.Fatal(res.raw)
	}
	servetest.Eventually(t, "the half-open connection was not closed", func() bool { return s.ws.Conns() == 2 })
}

// The same authenticated caller takes its session over from its other connection at
// once, even a live one, whose waiting prompt is told so; another caller cannot.
func TestLoadTakesOverFromTheSameCaller(t *testing.T) {
	s := newServerWith(t, config{model: offline.Name, window: time.Minute, auth: true})
	a := dialAs(t, s.URL, servetest.AliceKey)
	sid := a.newSession(1, `{"clientTools":[{"name":"getLocation","description":"The user's city"}]}`)
	a.send(`{"jsonrpc":"2.0","id":2,"method":"prompt","params":{"session_id":"` + sid + `","prompt":[{"type":"text","text":"Where am I? Use getLocation"}]}}`)
	var req msg
	for req.Method != "client_tool" {
		req = a.next()
	}

	bob := dialAs(t, s.URL, servetest.BobKey)
	res, _ := bob.call(1, "load_session", `{"session_id":"`+sid+`"}`)
	if res.Error == nil || res.Error.Code != -32001 {
		t.Fatalf("bob's load_session of alice's session: %s", res.raw)
	}

	a2 := dialAs(t, s.URL, servetest.AliceKey)
	a2.send(`{"jsonrpc":"2.0","id":1,"method":"load_session","params":{"session_id":"` + sid + `"}}`)
	if again := a2.next(); again.raw != req.raw {
		t.Fatalf("after the take-over:\n got %s\nwant %s", again.raw, req.raw)
	}
	if m := a.next(); string(m.ID) != "2" || m.Error == nil || m.Error.Code != -32001 || !strings.Contains(m.Error.Message, "session taken over") {
		t.Fatalf("the first connection's prompt: %s", m.raw)
	}
	res, _ = a.call(3, "list_sessions", `{}`)
	if res.raw != `{"jsonrpc":"2.0","id":3,"result":{"sessions":[]}}` {
		t.Fatalf("the first connection's sessions: %s", res.raw)
	}
	a2.send(`{"jsonrpc":"2.0","id":` + string(req.ID) + `,"result":{"city":"Lisbon"}}`)
	for {
		m := a2.next()
		if string(m.ID) == "1" {
			if m.raw != `{"jsonrpc":"2.0","id":1,"result":{"stop_reason":"end_turn"}}` {
				t.Fatalf("load_session: %s", m.raw)
			}
			break
		}
	}
}

// The server pings an idle connection and closes it when no pong comes: its sessions are
// let go. A client that answers stays.
func TestKeepalive(t *testing.T) {
	s := newServer(t, offline.Name, time.Minute, []wsapi.Option{wsapi.WithKeepalive(100*time.Millisecond, 100*time.Millisecond)})
	live := dial(t, s.URL)
	live.newSession(1, `{}`)
	live.answerPings()
	dead := dial(t, s.URL)
	dead.newSession(1, `{}`)
	servetest.Eventually(t, "the dead connection was not closed", func() bool {
		n, _, _ := s.svc.Conversations()
		return s.ws.Conns() == 1 && n == 1 && s.hub.Len() == 1
	})
	time.Sleep(500 * time.Millisecond) // several intervals
	if n := s.ws.Conns(); n != 1 {
		t.Fatalf("%d connections, want the live one", n)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if _, _, err := dead.ws.Read(ctx); err == nil {
		t.Fatal("the dead connection reads on")
	}
}

// A message over the read limit closes the connection with status 1009.
func TestOversizedMessage(t *testing.T) {
	s := newServer(t, offline.Name, time.Minute, []wsapi.Option{wsapi.WithReadLimit(1024)})
	c := dial(t, s.URL)
	sid := c.newSession(1, `{}`)
	c.send(`{"jsonrpc":"2.0","id":2,"method":"prompt","params":{"session_id":"` + sid + `","prompt":[{"type":"text","text":"` + strings.Repeat("x", 2048) + `"}]}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, b, err := c.ws.Read(ctx)
	if got := websocket.CloseStatus(err); got != websocket.StatusMessageTooBig {
		t.Fatalf("got %v (%s, %s), want a close with status 1009", got, err, b)
	}
	servetest.Eventually(t, "the session outlived its connection", func() bool { n, _, _ := s.svc.Conversations(); return n == 0 })
}

// A model that cannot be reached: the prompt's error is -32006 (retry), and the session
// stays for the retry.
func TestModelUnavailable(t *testing.T) {
	fake := servetest.PacedForm(t)
	fake.Enqueue(fakegemini.ErrorReply(fakegemini.Unavailable()))
	s := newServerWith(t, config{model: servetest.PacedModel, window: time.Minute, svc: []genui.Option{genui.WithRetry(0, 0)}})
	c := dial(t, s.URL)
	sid := c.newSession(1, `{}`)
	res, _ := c.call(2, "prompt", `{"session_id":"`+sid+`","prompt":[{"type":"text","text":"A signup form"}]}`)
	if res.Error == nil || res.Error.Code != -32006 || res.Error.Data["status"] != "UNAVAILABLE" {
		t.Fatalf("prompt: %s", res.raw)
	}
	res, _ = c.call(3, "prompt", `{"session_id":"`+sid+`","prompt":[{"type":"text","text":"A signup form"}]}`)
	if res.raw != `{"jsonrpc":"2.0","id":3,"result":{"stop_reason":"end_turn"}}` {
		t.Fatalf("the retry: %s", res.raw)
	}
}
