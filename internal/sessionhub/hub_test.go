package sessionhub_test

import (
	"context"
	"testing"
	"time"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/sessionhub"
	"github.com/genuiserver/genui/internal/testkit/leaktest"
	"github.com/genuiserver/genui/internal/testkit/servetest"
	"github.com/genuiserver/genui/schemas"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

var (
	alice = auth.NewContext(context.Background(), auth.Caller{ID: "key:alice", Method: auth.MethodAPIKey})
	bob   = auth.NewContext(context.Background(), auth.Caller{ID: "key:bob", Method: auth.MethodAPIKey})
	anon  = context.Background()
)

// getLocation is the client tool the offline model calls when the user's text names it.
var getLocation = []schemas.ClientTool{{Name: "getLocation", Description: "The user's city"}}

func open(t *testing.T, svc *genui.Service, ctx context.Context, id string) {
	t.Helper()
	if err := svc.OpenSession(ctx, id, &genui.SessionSpec{A2UI: &schemas.GenerateA2UIRequest{ClientTools: getLocation}}); err != nil {
		t.Fatal(err)
	}
}

// turn runs a turn of session id to its end.
func turn(t *testing.T, svc *genui.Service, ctx context.Context, id, text string) {
	t.Helper()
	st, err := svc.SessionTurn(ctx, id, []schemas.Message{{Role: "user", Parts: []schemas.Part{{Type: schemas.PartText, Text: text}}}})
	if err != nil {
		t.Fatal(err)
	}
	st.Each(ctx, func(genui.Item) error { return nil })
}

// An authenticated caller's sessions are kept under its scoped key: the hub forgets
// them by that key, whether deleted as their connection closes or at the end of the
// reconnect window.
func TestAuthenticatedSessionsAreForgotten(t *testing.T) {
	svc := servetest.Service(t, offline.Name)
	hub := sessionhub.New(svc, 100*time.Millisecond, servetest.Quiet)
	t.Cleanup(hub.Close)
	for _, tc := range []struct {
		name string
		ctx  context.Context
	}{{"anonymous", anon}, {"authenticated", alice}} {
		t.Run(tc.name, func(t *testing.T) {
			owner := new(int)
			idle, waiting := "idle-session-"+tc.name, "waiting-session-"+tc.name
			open(t, svc, tc.ctx, idle)
			open(t, svc, tc.ctx, waiting)
			turn(t, svc, tc.ctx, waiting, "Where am I? Use getLocation")
			for _, id := range []string{idle, waiting} {
				if _, err := hub.Attach(tc.ctx, id, owner); err != nil {
					t.Fatal(err)
				}
			}
			if n := hub.Len(); n != 2 {
				t.Fatalf("%d sessions in the hub, want 2", n)
			}
			hub.Detach(tc.ctx, owner)
			// The idle one goes at once, the waiting one at the end of the window.
			if n := hub.Len(); n != 1 {
				t.Fatalf("%d sessions in the hub after the connection closed, want the waiting one", n)
			}
			servetest.Eventually(t, "the waiting session outlived the window in the hub", func() bool { return hub.Len() == 0 })
			servetest.Eventually(t, "the waiting session outlived the window in the store", func() bool { n, _, _ := svc.Conversations(); return n == 0 })
		})
	}
}

// A session another connection holds is taken over by the same authenticated caller,
// or from a connection that does not answer a ping; not otherwise.
func TestClaim(t *testing.T) {
	svc := servetest.Service(t, offline.Name)
	hub := sessionhub.New(svc, time.Minute, servetest.Quiet)
	t.Cleanup(hub.Close)

	open(t, svc, alice, "alice-session")
	first, second := &prober{alive: true}, &prober{alive: true}
	if _, err := hub.Attach(alice, "alice-session", first); err != nil {
		t.Fatal(err)
	}
	if _, err := hub.Claim(bob, "alice-session", second); err != nil {
		// bob's id is another key: a session of bob's own, not alice's.
		t.Fatalf("bob's claim of his own id: %v", err)
	}
	if _, err := hub.Attach(alice, "alice-session", second); err != sessionhub.ErrAttached {
		t.Fatalf("attach of a held session: %v", err)
	}
	s, err := hub.Claim(alice, "alice-session", second)
	if err != nil || !hub.Owner(s, second) || first.pinged || first.dropped {
		t.Fatalf("alice's claim: %v (pinged %v, dropped %v)", err, first.pinged, first.dropped)
	}

	open(t, svc, anon, "anon-session")
	a, b := &prober{alive: true}, &prober{}
	if _, err := hub.Attach(anon, "anon-session", a); err != nil {
		t.Fatal(err)
	}
	if _, err := hub.Claim(anon, "anon-session", b); err != sessionhub.ErrAttached || !a.pinged || a.dropped {
		t.Fatalf("claim from a live connection: %v (pinged %v, dropped %v)", err, a.pinged, a.dropped)
	}
	a.alive = false
	s, err = hub.Claim(anon, "anon-session", b)
	if err != nil || !hub.Owner(s, b) || !a.dropped {
		t.Fatalf("claim from a dead connection: %v (dropped %v)", err, a.dropped)
	}
	for _, o := range []any{first, second, a, b} {
		hub.Detach(anon, o)
		hub.Detach(alice, o)
		hub.Detach(bob, o)
	}
	servetest.Eventually(t, "sessions left in the hub", func() bool { return hub.Len() == 0 })
}

type prober struct{ alive, pinged, dropped bool }

func (p *prober) Alive(context.Context) bool { p.pinged = true; return p.alive }
func (p *prober) Drop()                      { p.dropped = true }

// A turn that ends while no connection holds its session keeps the session for the
// grace period: a client attaching it then learns the missed turn's stream.
func TestMissedTurnKeptForTheGrace(t *testing.T) {
	svc := servetest.Service(t, offline.Name)
	hub := sessionhub.New(svc, time.Minute, servetest.Quiet, sessionhub.WithGrace(300*time.Millisecond))
	t.Cleanup(hub.Close)
	owner := new(int)
	for _, ctx := range []context.Context{anon, alice} {
		open(t, svc, ctx, "missed-session")
		s, err := hub.Attach(ctx, "missed-session", owner)
		if err != nil {
			t.Fatal(err)
		}
		st, err := svc.SessionTurn(ctx, "missed-session", []schemas.Message{{Role: "user", Parts: []schemas.Part{{Type: schemas.PartText, Text: "Hello"}}}})
		if err != nil {
			t.Fatal(err)
		}
		hub.Started(s, st.ID())
		hub.Detach(ctx, owner) // the connection goes mid-turn
		st.Each(ctx, func(genui.Item) error { return nil })
		hub.Ended(ctx, s, st.ID())
		if n := hub.Waiting(); n != 1 {
			t.Fatalf("%d sessions kept, want the one whose turn's end no client read", n)
		}
		// Within the grace: attached again, the missed stream is there, once.
		s, err = hub.Attach(ctx, "missed-session", owner)
		if err != nil {
			t.Fatal(err)
		}
		if got := hub.Missed(s); got != st.ID() {
			t.Fatalf("missed %q, want %q", got, st.ID())
		}
		if got := hub.Missed(s); got != "" {
			t.Fatalf("missed again: %q", got)
		}
		// Let go once more with nothing missed: deleted at once.
		hub.Detach(ctx, owner)
		if n := hub.Len(); n != 0 {
			t.Fatalf("%d sessions left", n)
		}
		servetest.Eventually(t, "the session outlived its connection", func() bool { n, _, _ := svc.Conversations(); return n == 0 })

		// Not attached again: deleted after the grace.
		open(t, svc, ctx, "missed-session")
		s, _ = hub.Attach(ctx, "missed-session", owner)
		st, err = svc.SessionTurn(ctx, "missed-session", []schemas.Message{{Role: "user", Parts: []schemas.Part{{Type: schemas.PartText, Text: "Hello"}}}})
		if err != nil {
			t.Fatal(err)
		}
		hub.Started(s, st.ID())
		hub.Detach(ctx, owner)
		st.Each(ctx, func(genui.Item) error { return nil })
		hub.Ended(ctx, s, st.ID())
		time.Sleep(100 * time.Millisecond)
		if n, _, _ := svc.Conversations(); n != 1 || hub.Len() != 1 {
			t.Fatalf("deleted within the grace: %d conversations, %d in the hub", n, hub.Len())
		}
		servetest.Eventually(t, "the session outlived the grace in the hub", func() bool { return hub.Len() == 0 })
		servetest.Eventually(t, "the session outlived the grace in the store", func() bool { n, _, _ := svc.Conversations(); return n == 0 })
	}
}
