package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"go.uber.org/goleak"
)

// aguiSSE writes an AG-UI run: RUN_STARTED, a text message, the surface's first message
// as an ACTIVITY_SNAPSHOT and each later one as an ACTIVITY_DELTA appending it, then
// last (RUN_FINISHED or RUN_ERROR) unless empty.
func aguiSSE(msgs [][]byte, last string) string {
	var b strings.Builder
	n := 0
	ev := func(data string) {
		n++
		fmt.Fprintf(&b, "id: s.%d\ndata: %s\n\n", n, data)
	}
	ev(`{"type":"RUN_STARTED","threadId":"t","runId":"r"}`)
	ev(`{"type":"TEXT_MESSAGE_START","messageId":"m","role":"assistant"}`)
	ev(`{"type":"TEXT_MESSAGE_CONTENT","messageId":"m","delta":"Here is your report."}`)
	ev(`{"type":"TEXT_MESSAGE_END","messageId":"m"}`)
	for i, m := range msgs {
		if i == 0 {
			ev(fmt.Sprintf(`{"type":"ACTIVITY_SNAPSHOT","messageId":"a2ui-surface-x","activityType":"a2ui-surface","replace":true,"content":{"a2ui_operations":[%s]}}`, m))
			continue
		}
		ev(fmt.Sprintf(`{"type":"ACTIVITY_DELTA","messageId":"a2ui-surface-x","activityType":"a2ui-surface","patch":[{"op":"add","path":"/a2ui_operations/-","value":%s}]}`, m))
	}
	if last != "" {
		ev(last)
	}
	return b.String()
}

// TestAGUITurn reads canned AG-UI runs: a whole run ends at RUN_FINISHED with the
// script rendered; broken runs fail with what is wrong.
func TestAGUITurn(t *testing.T) {
	defer goleak.VerifyNone(t)
	s, err := a2uiScriptFor(a2aVersion)
	if err != nil {
		t.Fatal(err)
	}
	msgs := scriptMessages(t, s)
	var mu sync.Mutex
	var answer, path, body string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 4096)
		k, _ := r.Body.Read(b)
		mu.Lock()
		path, body = r.URL.Path, string(b[:k])
		a := answer
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(a))
	}))
	defer srv.Close()
	hc := newHTTPClient(nil)
	defer hc.CloseIdleConnections()
	set := func(a string) {
		mu.Lock()
		answer = a
		mu.Unlock()
	}
	set(aguiSSE(msgs, `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`))
	end, err := aguiTurn(t.Context(), hc, srv.URL, s, aguiBody(policyText), 5*time.Second)
	if err != nil || end <= 0 {
		t.Fatalf("end %s, err %v", end, err)
	}
	mu.Lock()
	if path != aguiEndpoint || !strings.Contains(body, `"role":"user","content":"`+policyText+`"`) {
		t.Errorf("request %s %s", path, body)
	}
	mu.Unlock()
	for _, c := range []struct{ answer, want string }{
		{aguiSSE(msgs, `{"type":"RUN_ERROR","message":"boom","code":"INTERNAL"}`), "RUN_ERROR INTERNAL: boom"},
		{aguiSSE(msgs, ""), "not RUN_FINISHED"},
		{aguiSSE(msgs[:1], `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`), "missing"},
		{aguiSSE(nil, `{"type":"RUN_FINISHED","threadId":"t","runId":"r"}`), "no a2ui-surface activity"},
		{strings.Replace(aguiSSE(msgs, `{"type":"RUN_FINISHED"}`), "RUN_STARTED", "RUN_X", 1), "not RUN_STARTED"},
	} {
		set(c.answer)
		if _, err := aguiTurn(t.Context(), hc, srv.URL, s, aguiBody(policyText), 5*time.Second); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("want an error with %q, got %v", c.want, err)
		}
	}
}

// TestYieldTurn runs turns against a canned /session/{id} endpoint: init, progress
// events, then done; a yield, an error or done without a surface fail.
func TestYieldTurn(t *testing.T) {
	defer goleak.VerifyNone(t)
	var mu sync.Mutex
	var answer []string
	var got, path string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer c.CloseNow()
		_, data, err := c.Read(r.Context())
		if err != nil {
			return
		}
		mu.Lock()
		got, path = string(data), r.URL.Path
		a := answer
		mu.Unlock()
		for _, m := range a {
			if c.Write(r.Context(), websocket.MessageText, []byte(m)) != nil {
				return
			}
		}
		_, _, _ = c.Read(r.Context()) // until the client closes
	}))
	defer srv.Close()
	hc := wsHTTPClient()
	defer hc.CloseIdleConnections()
	progress := []string{
		`{"type":"progress","effect":{"type":"LlmComplete","model":"m"},"status":"executing"}`,
		`{"type":"progress","effect":{"type":"LlmComplete","event":{"type":"text","text":"Here"}},"status":"executing"}`,
		`{"type":"progress","effect":{"type":"LlmComplete","event":{"type":"toolRequest","toolRequest":{"name":"addOrUpdateSurface"}}},"status":"executing"}`,
	}
	text := []byte(`"Show me a form"`)
	for _, c := range []struct {
		answer []string
		want   string
	}{
		{append(progress[:3:3], `{"type":"done","result":{"message":{}}}`), ""},
		{append(progress[:2:2], `{"type":"done","result":{"message":{}}}`), "without a tool request"},
		{append(progress[:3:3], `{"type":"done","result":null}`), "without a result"},
		{append(progress[:3:3], `{"type":"yield","effect":{"type":"ClientTool","name":"x","input":{},"callId":"c"},"sessionId":"s"}`), "unexpected message"},
		{[]string{`{"type":"error","message":"input.catalog: bad","recoverable":false}`}, "input.catalog: bad"},
	} {
		mu.Lock()
		answer = c.answer
		mu.Unlock()
		w, err := dialYield(t.Context(), hc, srv.URL, "bench-yield-1", 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		end, err := w.yieldTurn(t.Context(), yieldInit("sess-1", text), 5*time.Second)
		_ = w.close()
		switch {
		case c.want == "" && (err != nil || end <= 0):
			t.Errorf("end %s, err %v", end, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("want an error with %q, got %v", c.want, err)
		}
		mu.Lock()
		if path != "/session/bench-yield-1" || got != `{"type":"init","graphId":"generateUi","input":{"sessionId":"sess-1","conversation":[{"role":"user","parts":[{"type":"text","text":"Show me a form"}]}]}}` {
			t.Errorf("request %s %s", path, got)
		}
		mu.Unlock()
	}
}

// TestTransportsPhase runs the transports phase briefly against the real server, the
// tree's binary standing as its own baseline: every transport's turns succeed on both
// servers, and every figure is there.
func TestTransportsPhase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	defer goleak.VerifyNone(t)
	bin := buildServerBin(t)
	began := time.Now()
	rep, table := runJSON(t, "--server-bin", bin, "--phases", "transports", "--transports-baseline-bin", bin,
		"--transports-rounds", "2", "--transports-turns", "5")
	t.Logf("phase and report in %s", time.Since(began).Round(time.Millisecond))
	p := rep.Transports
	if p == nil || p.A2UIVersion != "v0.9" || p.Components < a2uiMinComponents || p.TurnsPerRound != 5 || p.Rounds != 2 ||
		p.WarmupTurns != transportsWarmTurns || p.TargetRatio != 1.05 || p.BaselineBin != bin || p.CPUSource == "" ||
		strings.Join(p.FirstPerRound, ",") != "after,before" || len(p.Servers) != 2 || p.AllWithin == nil {
		t.Fatalf("transports: %+v", p)
	}
	if a, b := p.Servers[0], p.Servers[1]; a.Name != "after" || b.Name != "before" || a.Bin != bin || b.Bin != bin ||
		a.PID == 0 || b.PID == 0 || a.PID == b.PID {
		t.Fatalf("servers: %+v", p.Servers)
	}
	if len(p.Transports) != numTransports {
		t.Fatalf("%d transports", len(p.Transports))
	}
	all := true
	for i, k := range p.Transports {
		if k.Transport != transportNames[i] || k.Request == "" || k.TurnsPerServer != 10 ||
			k.AfterCPUPerTurnMS == nil || *k.AfterCPUPerTurnMS <= 0 || k.BeforeCPUPerTurnMS == nil || *k.BeforeCPUPerTurnMS <= 0 ||
			len(k.AfterCPUPerTurnRoundsMS) != 2 || len(k.BeforeCPUPerTurnRoundsMS) != 2 || len(k.CPURatioRounds) != 2 ||
			k.CPURatio == nil || *k.CPURatio <= 0 || k.CPURatioOfMedians == nil || k.AddedCPUPerTurnMS == nil ||
			k.AfterEndMS.Median <= 0 || k.BeforeEndMS == nil || k.BeforeEndMS.Median <= 0 ||
			k.Within == nil || *k.Within != (*k.CPURatio <= 1.05) {
			t.Errorf("%s: %+v", k.Transport, k)
			continue
		}
		all = all && *k.Within
	}
	if *p.AllWithin != all {
		t.Errorf("all_within %v, transports %v", *p.AllWithin, all)
	}
	if s := rep.Summary; s.TransportsCPURatioMax == nil || *s.TransportsCPURatioMax <= 0 {
		t.Fatalf("summary: %+v", s)
	}
	if st := rep.Settings; st.TransportsTurns != 5 || st.TransportsRounds != 2 || st.TransportsBaselineBin != bin {
		t.Fatalf("settings: %+v", st)
	}
	if rep.Target.PID == 0 || rep.Target.UsesFakeModel == nil || !*rep.Target.UsesFakeModel {
		t.Fatalf("target: %+v", rep.Target)
	}
	for _, v := range p.Servers {
		if _, err := readCPU(v.PID); err == nil {
			t.Errorf("server %s (pid %d) is still there", v.Name, v.PID)
		}
	}
	for _, want := range []string{"TRANSPORTS (", "server before: pid", "after / before", "ratio of medians", "AG-UI", "yield", targetTransports} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q", want)
		}
	}
}

// TestTransportsFlags checks the phase's flags.
func TestTransportsFlags(t *testing.T) {
	var stderr strings.Builder
	c, err := parseConfig([]string{"--phases", "transports"}, &stderr)
	if err != nil || c.transportsTurns != 100 || c.transportsRounds != 5 || c.transportsBaselineBin != "" {
		t.Fatalf("defaults: %+v, %v", c, err)
	}
	for _, args := range [][]string{
		{"--transports-turns", "0"},
		{"--transports-rounds", "0"},
		{"--url", "http://127.0.0.1:1", "--transports-baseline-bin", "/bin/true"},
	} {
		if _, err := parseConfig(append([]string{"--phases", "transports"}, args...), &stderr); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
