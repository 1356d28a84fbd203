package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"
)

// TestWSClassify reads the messages of a prompt in genui/wsapi's layout and in others.
func TestWSClassify(t *testing.T) {
	for _, c := range []struct {
		msg  string
		kind wsKind
		ours bool
	}{
		{`{"jsonrpc":"2.0","method":"session_update","params":{"session_id":"s1","seq":1,"update":{"type":"agent_message_chunk","chunk":"Hi"}}}`, wsText, true},
		{`{"jsonrpc":"2.0","method":"session_update","params":{"session_id":"s1","seq":2,"update":{"type":"ui_update","event":{"type":"toolRequest"}}}}`, wsUIUpdate, true},
		{`{"jsonrpc":"2.0","method":"session_update","params":{"session_id":"s10","seq":2,"update":{"type":"ui_update","event":{}}}}`, wsUIUpdate, false},
		{`{"method":"session_update","jsonrpc":"2.0","params":{"update":{"event":{},"type":"ui_update"},"session_id":"s1"}}`, wsUIUpdate, true},
		{`{"jsonrpc":"2.0","id":3,"result":{"stop_reason":"end_turn"}}`, wsResponse, false},
		{`{"jsonrpc":"2.0","id":"call:c1","method":"client_tool","params":{"session_id":"s1"}}`, wsOther, false},
	} {
		kind, ours, _, err := wsClassify([]byte(c.msg), "s1")
		if err != nil || kind != c.kind || ours != c.ours {
			t.Errorf("%s: %v %v %v, want %v %v", c.msg, kind, ours, err, c.kind, c.ours)
		}
	}
	if _, _, _, err := wsClassify([]byte(`not json`), "s1"); err == nil {
		t.Error("not JSON: no error")
	}
}

// TestWSPrompt runs the client against a canned /ws server: initialize, new_session and
// prompts answered well and badly.
func TestWSPrompt(t *testing.T) {
	defer goleak.VerifyNone(t)
	const update = `{"jsonrpc":"2.0","method":"session_update","params":{"session_id":"s1","seq":%d,"update":{"type":"ui_update","event":{"type":"toolRequest"}}}}`
	answers := map[string][]string{
		"initialize":  {`{"jsonrpc":"2.0","id":1,"result":{"protocol_version":1}}`},
		"new_session": {`{"jsonrpc":"2.0","id":2,"result":{"session_id":"s1"}}`},
	}
	prompts := [][]string{
		{`{"jsonrpc":"2.0","method":"session_update","params":{"session_id":"s1","seq":1,"update":{"type":"agent_message_chunk","chunk":"Hi"}}}`,
			strings.Replace(update, "%d", "2", 1), `{"jsonrpc":"2.0","id":3,"result":{"stop_reason":"end_turn"}}`},
		{`{"jsonrpc":"2.0","id":4,"error":{"code":-32004,"message":"session busy"}}`},
		{`{"jsonrpc":"2.0","id":5,"result":{"stop_reason":"end_turn"}}`},
		{strings.Replace(update, "%d", "1", 1), `{"jsonrpc":"2.0","id":6,"result":{"stop_reason":"cancelled"}}`},
		{`{"jsonrpc":"2.0","method":"session_update","params":{"session_id":"other","seq":1,"update":{"type":"ui_update","event":{}}}}`},
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != wsPath {
			http.NotFound(w, r)
			return
		}
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		n := 0
		for {
			_, data, err := c.Read(r.Context())
			if err != nil {
				return
			}
			msgs := prompts[min(n, len(prompts)-1)]
			for method, a := range answers {
				if strings.Contains(string(data), `"method":"`+method+`"`) {
					msgs = a
				}
			}
			if strings.Contains(string(data), `"method":"prompt"`) {
				n++
			}
			for _, m := range msgs {
				if err := c.Write(r.Context(), websocket.MessageText, []byte(m)); err != nil {
					return
				}
			}
		}
	}))
	defer srv.Close()
	hc := wsHTTPClient()
	defer hc.CloseIdleConnections()
	ctx := t.Context()
	w, err := dialWS(ctx, hc, srv.URL, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer w.close()
	if err := w.initialize(ctx, 5*time.Second); err != nil {
		t.Fatal(err)
	}
	id, err := w.newSession(ctx, []byte(`{"sessionId":"x"}`), 5*time.Second)
	if err != nil || id != "s1" {
		t.Fatalf("new_session: %q %v", id, err)
	}
	text := []byte(`"Show me a form"`)
	r := w.prompt(ctx, id, text, 5*time.Second)
	if r.err != nil || r.updates != 1 || r.firstUI <= 0 || r.end < r.firstUI || r.received < 200 {
		t.Fatalf("good prompt: %+v", r)
	}
	for _, want := range []string{"-32004", "no ui_update", `"cancelled"`, "unexpected message"} {
		if r := w.prompt(ctx, id, text, 5*time.Second); r.err == nil || !strings.Contains(r.err.Error(), want) {
			t.Errorf("want an error with %q: %+v", want, r)
		}
	}
	if _, err := dialWS(ctx, hc, srv.URL+"/nope", time.Second); err == nil {
		t.Error("a path without /ws: no error")
	}
}

// TestWSPhase runs the ws phase briefly against the real server: the idle connections
// and their profile, every turn of both paths, and sane figures.
func TestWSPhase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	defer goleak.VerifyNone(t)
	bin := buildServerBin(t)
	dir := t.TempDir()
	rep, table := runJSON(t, "--server-bin", bin, "--phases", "ws", "--ws-conns", "60", "--ws-idle-rounds", "2",
		"--ws-turns", "8", "--ws-rounds", "2", "--ws-profile", dir)
	w := rep.WS
	if w == nil || w.Session != wsSpecStartSession || w.IdleConnections != 60 || len(w.IdleRounds) != 2 || w.Baseline != "held" ||
		w.TurnsPerRound != 8 || w.Rounds != 2 || w.TargetRatio != 1.1 || w.IdleTargetBytes != 14<<10 {
		t.Fatalf("ws: %+v", w)
	}
	for _, r := range w.IdleRounds {
		if r.Connections != 60 || r.Errors != 0 || r.Closed != 60 || r.RSSBeforeBytes == nil || r.BytesPerConnection == nil ||
			r.SessionsLeft == nil || *r.SessionsLeft != 0 || !r.FreshServer {
			t.Errorf("idle round: %+v", r)
		}
	}
	if w.IdleBytesPerConnection == nil || w.IdlePass == nil {
		t.Errorf("idle: %+v", w)
	}
	// Each connection holds at least the goroutine that reads it and a session.
	if p := w.IdleProfile; p == nil || p.Connections != 60 || p.GoroutinesPerConnection < 0.9 || p.LiveHeapBytesPerConnection <= 0 ||
		p.StackBytesPerConnection <= 0 || p.StoreBytesPerConnection == nil || *p.StoreBytesPerConnection <= 0 || len(p.Files) != 3 {
		t.Fatalf("profile: %+v", p)
	} else {
		for _, f := range p.Files {
			if st, err := os.Stat(f); err != nil || st.Size() == 0 {
				t.Errorf("%s: %v", f, err)
			}
		}
	}
	for _, p := range []WSPathReport{w.NDJSON, w.WS} {
		if p.Turns != 16 || p.Errors != 0 || p.FirstError != "" || p.FirstUIMS == nil || p.FirstUIMS.Median <= 0 ||
			p.EndMS.Median < p.FirstUIMS.Median || len(p.FirstUIRoundsMS) != 2 || len(p.EndRoundsMS) != 2 ||
			p.CPUPerTurnMS == nil || len(p.CPUPerTurnRoundsMS) != 2 || p.ResponseBytes == nil || *p.ResponseBytes < 200 {
			t.Errorf("%s: %+v", p.Path, p)
		}
	}
	if w.FirstUIRatio == nil || *w.FirstUIRatio <= 0 || w.EndRatio == nil || *w.EndRatio <= 0 || len(w.EndRatioRounds) != 2 ||
		w.AddedEndMS == nil || w.NewSessionCPUMS == nil {
		t.Fatalf("ratios: %+v", w)
	}
	// CPU ticks are 10 ms: a handful of turns may show none, so the ratio may be absent.
	if w.CPURatio != nil && *w.CPURatio < 0 {
		t.Errorf("CPU ratio %v", *w.CPURatio)
	}
	s := rep.Summary
	if s.WSIdleConnectionBytes == nil || *s.WSIdleConnectionBytes != *w.IdleBytesPerConnection || s.WSEndRatio == nil ||
		*s.WSEndRatio != *w.EndRatio || s.WSFirstUIRatio == nil || (s.WSCPURatio == nil) != (w.CPURatio == nil) {
		t.Fatalf("summary: %+v", s)
	}
	if st := rep.Settings; st.WSConnections != 60 || st.WSIdleRounds != 2 || st.WSTurns != 8 || st.WSRounds != 2 ||
		st.WSBaseline != "held" || st.WSSession != wsSpecStartSession {
		t.Fatalf("settings: %+v", st)
	}
	for _, want := range []string{"WS (GET /ws", "idle connection with one session", targetWSIdle, "goroutines", "/ws prompt",
		"/generateUi NDJSON", "first UI update", targetWS, "CPU per new_session"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q", want)
		}
	}
}

// TestWSPhaseCatalog runs the turns with the catalog inline in new_session and in every
// /generateUi request, stateless.
func TestWSPhaseCatalog(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	defer goleak.VerifyNone(t)
	bin := buildServerBin(t)
	rep, _ := runJSON(t, "--server-bin", bin, "--phases", "ws", "--ws-conns", "20", "--ws-idle-rounds", "1",
		"--ws-turns", "4", "--ws-rounds", "1", "--ws-session", "catalog", "--ws-baseline", "stateless", "--fresh=false")
	w := rep.WS
	if w == nil || w.Session != wsSpecCatalog || w.Baseline != "stateless" || len(w.IdleRounds) != 1 || w.IdleRounds[0].Connections != 20 ||
		w.IdleRounds[0].FreshServer || w.IdleProfile != nil || w.NDJSON.Errors != 0 || w.WS.Errors != 0 || w.WS.Turns != 4 || w.EndRatio == nil {
		t.Fatalf("ws: %+v", w)
	}
}
