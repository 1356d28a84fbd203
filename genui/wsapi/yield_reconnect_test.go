package wsapi_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/genui/wsapi"
	"github.com/genuiserver/genui/internal/sessionhub"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

const initForm = `{"type":"init","graphId":"generateA2ui","input":{"conversation":[{"role":"user","parts":[{"type":"text","text":"A signup form"}]}]}}`

// A connection dropped mid-turn, the turn ended before the client came back: the session
// is kept for the grace period from the turn's end, and reconnect replays the whole turn
// from the durable stream, then done. Not reconnected, it is gone after the grace.
func TestReconnectAfterTheTurnEnded(t *testing.T) {
	servetest.PacedForm(t)
	s := newYieldServerWith(t, yieldConfig{model: servetest.PacedModel, window: time.Minute, hub: []sessionhub.Option{sessionhub.WithGrace(time.Second)}})
	for _, id := range []string{"dropped-session-1", "dropped-session-2"} {
		c := dialYield(t, s.URL, id)
		c.send(initForm)
		seen := []yieldMsg{c.next(), c.next()}
		c.ws.CloseNow()
		servetest.Eventually(t, "the turn did not end", func() bool { return s.svc.Running() == 0 && s.hub.Waiting() == 1 })
		if id == "dropped-session-2" {
			break
		}
		time.Sleep(200 * time.Millisecond)
		c2 := dialYield(t, s.URL, id)
		c2.send(`{"type":"reconnect","sessionId":"` + id + `"}`)
		done, progress := c2.until("done", "error", "yield")
		if done.Type != "done" || done.Result["finishReason"] != "stop" {
			t.Fatalf("end: %s", done.raw)
		}
		if len(progress) != 7 || progress[0].raw != seen[0].raw || progress[1].raw != seen[1].raw {
			t.Fatalf("%d progress messages; the first: %+v", len(progress), progress[:min(2, len(progress))])
		}
		// Nothing waits now.
		c2.send(`{"type":"reconnect","sessionId":"` + id + `"}`)
		if m := c2.next(); m.Type != "error" || !strings.Contains(m.Message, "not suspended") {
			t.Fatalf("a second reconnect: %s", m.raw)
		}
		c2.ws.Close(websocket.StatusNormalClosure, "")
		servetest.Eventually(t, "an idle session outlived its connection", func() bool { n, _, _ := s.svc.Conversations(); return n == 0 && s.hub.Len() == 0 })
	}
	time.Sleep(300 * time.Millisecond)
	if n, _, _ := s.svc.Conversations(); n != 1 {
		t.Fatalf("%d sessions within the grace, want 1", n)
	}
	servetest.Eventually(t, "the session outlived the grace", func() bool { n, _, _ := s.svc.Conversations(); return n == 0 && s.hub.Len() == 0 })
}

// Seed 004: a failed effect (the model call) is yielded, the client can retry it: a
// resume with success runs the turn again; after a reconnect the same failed effect is
// yielded again; a resume with an error gives it up.
func TestFailedEffectIsYielded(t *testing.T) {
	fake := servetest.PacedForm(t)
	fake.Enqueue(fakegemini.ErrorReply(fakegemini.Unavailable()))
	s := newYieldServerWith(t, yieldConfig{model: servetest.PacedModel, window: time.Minute, svc: []genui.Option{genui.WithRetry(0, 0)}})
	const id = "failing-session-1"
	c := dialYield(t, s.URL, id)
	c.send(initForm)
	y, before := c.until("yield", "error", "done")
	if len(before) != 1 || before[0].raw != `{"type":"progress","effect":{"type":"LlmComplete","model":"`+servetest.PacedModel+`"},"status":"executing"}` {
		t.Fatalf("before the yield: %+v", before)
	}
	if y.Type != "yield" || y.SessionID != id || y.Effect["type"] != "LlmComplete" || y.Effect["model"] != servetest.PacedModel {
		t.Fatalf("yield: %s", y.raw)
	}
	if e, _ := y.Effect["error"].(map[string]any); e["status"] != "UNAVAILABLE" || e["message"] == "" {
		t.Fatalf("the failed effect's error: %s", y.raw)
	}
	// The connection drops; the session waits for the retry.
	c.ws.CloseNow()
	time.Sleep(100 * time.Millisecond)
	if n, _, _ := s.svc.Conversations(); n != 1 {
		t.Fatalf("%d sessions after the connection dropped, want the one waiting for the retry", n)
	}
	c = dialYield(t, s.URL, id)
	c.send(`{"type":"reconnect","sessionId":"` + id + `"}`)
	if again := c.next(); again.raw != y.raw {
		t.Fatalf("after reconnect:\n got %s\nwant %s", again.raw, y.raw)
	}
	c.send(`{"type":"resume","result":{"type":"success","value":null}}`)
	done, progress := c.until("done", "error", "yield")
	if done.Type != "done" || len(progress) != 7 {
		t.Fatalf("the retry: %s after %d progress messages", done.raw, len(progress))
	}
	if len(fake.Requests()) != 2 {
		t.Fatalf("%d model calls, want 2", len(fake.Requests()))
	}

	// Failed again, given up: done, null; nothing waits.
	fake.Enqueue(fakegemini.ErrorReply(fakegemini.Unavailable()))
	c.send(`{"type":"init","graphId":"generateA2ui","input":{"conversation":[{"role":"user","parts":[{"type":"text","text":"Another"}]}]}}`)
	if y, _ := c.until("yield", "error", "done"); y.Type != "yield" || y.Effect["type"] != "LlmComplete" {
		t.Fatalf("the second failure: %s", y.raw)
	}
	c.send(`{"type":"resume","result":{"type":"error","message":"never mind"}}`)
	if m := c.next(); m.raw != `{"type":"done","result":null}` {
		t.Fatalf("given up: %s", m.raw)
	}
	c.send(`{"type":"reconnect","sessionId":"` + id + `"}`)
	if m := c.next(); m.Type != "error" || !strings.Contains(m.Message, "not suspended") {
		t.Fatalf("after giving up: %s", m.raw)
	}
}

// A failed effect of a turn answering a client tool, given up: the session is as it was
// before the turn, waiting for the tool, and yields the same call again; answered again,
// the interaction ends.
func TestFailedEffectGivenUpYieldsWhatTheSessionWaitsFor(t *testing.T) {
	fake := servetest.PacedForm(t)
	fake.Enqueue(fakegemini.Respond(fakegemini.FunctionCall("getLocation", nil)), fakegemini.ErrorReply(fakegemini.Unavailable()))
	s := newYieldServerWith(t, yieldConfig{model: servetest.PacedModel, window: time.Minute, svc: []genui.Option{genui.WithRetry(0, 0)}})
	const id = "failing-session-2"
	c := dialYield(t, s.URL, id)
	c.send(`{"type":"init","graphId":"generateA2ui","input":{"conversation":[{"role":"user","parts":[{"type":"text","text":"Where am I?"}]}],"clientTools":[{"name":"getLocation","description":"The user's city"}]}}`)
	call, _ := c.until("yield", "error", "done")
	if call.Type != "yield" || call.Effect["type"] != "ClientTool" {
		t.Fatalf("yield: %s", call.raw)
	}
	c.send(`{"type":"resume","result":{"type":"success","value":{"city":"Lisbon"}}}`)
	if y, _ := c.until("yield", "error", "done"); y.Type != "yield" || y.Effect["type"] != "LlmComplete" || y.Effect["error"] == nil {
		t.Fatalf("the failed effect: %s", y.raw)
	}
	c.send(`{"type":"resume","result":{"type":"error","message":"not now"}}`)
	if again := c.next(); again.raw != call.raw {
		t.Fatalf("given up:\n got %s\nwant %s", again.raw, call.raw)
	}
	c.send(`{"type":"resume","result":{"type":"success","value":{"city":"Lisbon"}}}`)
	if m, _ := c.until("done", "error", "yield"); m.Type != "done" {
		t.Fatalf("answered again: %s", m.raw)
	}
}

// A stored session that cannot be read (seed 004's "session state inconsistent"): an
// error with recoverable false, and the session let go; a store that cannot be reached
// is an error with recoverable true and the sessionId, and the session resumes once it
// is back.
func TestStoreErrors(t *testing.T) {
	inner := conversation.NewMemory(100, 1<<20, time.Hour)
	convs := &flakyStore{Store: inner}
	const corrupt = "corrupt-session-1"
	_, hold, err := inner.Begin(context.Background(), corrupt)
	if err != nil {
		t.Fatal(err)
	}
	if err := hold.Commit(context.Background(), conversation.Update{Kind: "a2ui", Session: []byte("{not json")}); err != nil {
		t.Fatal(err)
	}
	s := newYieldServerWith(t, yieldConfig{model: offline.Name, window: time.Minute, svc: []genui.Option{genui.WithConversations(convs)}})
	c := dialYield(t, s.URL, corrupt)
	for i, m := range []string{`{"type":"reconnect","sessionId":"` + corrupt + `"}`, `{"type":"resume","result":{"type":"success","value":1}}`} {
		c.send(m)
		got := c.next()
		// The first answer says so; the session is then deleted, and unknown.
		want := "cannot be read"
		if i > 0 {
			want = "unknown or expired"
		}
		if got.Type != "error" || got.Recoverable == nil || *got.Recoverable || got.SessionID != "" || !strings.Contains(got.Message, want) {
			t.Fatalf("%s: %s", m, got.raw)
		}
	}
	if st, _ := inner.Peek(context.Background(), corrupt); st != nil && st.Session != nil {
		t.Fatalf("the store still holds the session: %q", st.Session)
	}
	if n := s.hub.Len(); n != 0 {
		t.Fatalf("%d sessions in the hub", n)
	}

	id := s.startSession(t)
	c = dialYield(t, s.URL, id)
	c.send(initWithTool)
	y, _ := c.until("yield", "error", "done")
	if y.Type != "yield" {
		t.Fatalf("yield: %s", y.raw)
	}
	c.ws.CloseNow()
	time.Sleep(100 * time.Millisecond)
	convs.down.Store(true)
	c = dialYield(t, s.URL, id)
	c.send(`{"type":"reconnect","sessionId":"` + id + `"}`)
	if m := c.next(); m.Type != "error" || m.Recoverable == nil || !*m.Recoverable || m.SessionID != id {
		t.Fatalf("the store down: %s", m.raw)
	}
	convs.down.Store(false)
	c.send(`{"type":"reconnect","sessionId":"` + id + `"}`)
	if m := c.next(); m.raw != y.raw {
		t.Fatalf("the store back:\n got %s\nwant %s", m.raw, y.raw)
	}
}

// flakyStore is a conversation store that cannot be reached while down.
type flakyStore struct {
	conversation.Store
	down atomic.Bool
}

func (f *flakyStore) Begin(ctx context.Context, id string) (*conversation.State, conversation.Hold, error) {
	if f.down.Load() {
		return nil, nil, conversation.ErrUnavailable
	}
	return f.Store.Begin(ctx, id)
}

func (f *flakyStore) Peek(ctx context.Context, id string) (*conversation.State, error) {
	if f.down.Load() {
		return nil, conversation.ErrUnavailable
	}
	return f.Store.Peek(ctx, id)
}

// A message over the read limit closes the connection with status 1009.
func TestYieldOversizedMessage(t *testing.T) {
	s := newYieldServerWith(t, yieldConfig{model: offline.Name, window: time.Minute, y: []wsapi.Option{wsapi.WithReadLimit(1024)}})
	id := s.startSession(t)
	c := dialYield(t, s.URL, id)
	c.send(`{"type":"init","graphId":"generateUi","input":{"conversation":[{"role":"user","parts":[{"type":"text","text":"` + strings.Repeat("x", 2048) + `"}]}]}}`)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, b, err := c.ws.Read(ctx)
	if got := websocket.CloseStatus(err); got != websocket.StatusMessageTooBig {
		t.Fatalf("got %v (%s, %s), want a close with status 1009", got, err, b)
	}
}

// The server pings an idle connection and closes it when no pong comes.
func TestYieldKeepalive(t *testing.T) {
	s := newYieldServerWith(t, yieldConfig{model: offline.Name, window: time.Minute, y: []wsapi.Option{wsapi.WithKeepalive(100*time.Millisecond, 100*time.Millisecond)}})
	id := s.startSession(t)
	live := dialYield(t, s.URL, id)
	live.ws.CloseRead(context.Background())
	dead := dialYield(t, s.URL, "another-session-1")
	dead.send(`{"type":"ping"}`)
	servetest.Eventually(t, "the dead connection was not closed", func() bool { return s.y.Conns() == 1 })
	time.Sleep(500 * time.Millisecond)
	if n := s.y.Conns(); n != 1 {
		t.Fatalf("%d connections, want the live one", n)
	}
}
