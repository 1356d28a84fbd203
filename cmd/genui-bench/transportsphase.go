package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// The transports phase: the server's CPU per turn through each of its transports, on the
// server built from the tree ("after") and on a baseline binary ("before",
// --transports-baseline-bin) running side by side, to see what a change of the server
// costs each transport. Without a baseline it measures the one server.

const (
	// transportsTargetRatio is the target: through every transport, the server after
	// spends at most this many times the CPU per turn of the server before.
	transportsTargetRatio = 1.05
	// transportsWarmTurns is how many turns of each transport each server runs before
	// the rounds.
	transportsWarmTurns = 20
	// aguiEndpoint is the server's AG-UI endpoint.
	aguiEndpoint = "/ag-ui"
	// yieldPrefix is the path of the yield and resume endpoint, before the session id.
	yieldPrefix = "/session/"
)

// The transports of the phase, in the order of the report and of the blocks.
const (
	trGenUINDJSON = iota
	trGenUISSE
	trA2UINDJSON
	trA2A
	trAGUI
	trMCP
	trWS
	trYield
	numTransports
)

var transportNames = [numTransports]string{"genui NDJSON", "genui SSE", "A2UI NDJSON", "A2A", "AG-UI", "MCP", "/ws", "yield"}

// transportRequests says what each transport's turn is.
var transportRequests = [numTransports]string{
	`POST /generateUi NDJSON, a /startSession session with the basic catalog, "Show me a form"; the fake model's text and surface`,
	`POST /generateUi?stream=true (Genkit SSE), the same session and turn`,
	"POST /generateA2ui NDJSON, A2UI v0.9, default catalog, stateless; the fake model's A2UI script, unpaced",
	"POST /a2a message/stream (A2A v0.3 JSON-RPC, SSE) with the A2UI v0.9 extension, a new context per turn; the same script",
	"POST /ag-ui RunAgentInput (one user message, no tools), read as SSE to RUN_FINISHED; the same script",
	"POST /mcp tools/call generate_ui (Streamable HTTP, stateless), the result read whole; the same script",
	`GET /ws prompt (JSON-RPC 2.0), a new session per turn on the startSession session, made before the block; "Show me a form"`,
	`GET /session/{id} init of graph generateUi (yield and resume protocol), a new connection and id per turn, opened before the block, read to done; "Show me a form"`,
}

// The servers of the phase, in the order of the report.
const (
	trAfter = iota
	trBefore
)

var trServerNames = [2]string{"after", "before"}

// trServer is one server of the phase and what its blocks measured.
type trServer struct {
	name    string
	bin     string
	t       *target
	session string                   // the genui turns' session (basic catalog)
	genui   []byte                   // the genui turn's request
	cpu     [numTransports][]float64 // ms per turn, one per round: from the CPU-time clock
	ticks   [numTransports][]int     // utime+stime ticks of /proc/<pid>/stat, one per round
	tickCPU [numTransports][]float64 // ms per turn from the ticks, one per round
	end     [numTransports][]float64
	clockOK bool // every block read the CPU-time clock
	ticksOK bool // every block read /proc/<pid>/stat
}

// trBlock is a block of turns of one transport on one server, set up: turn runs its
// i-th turn and returns the time to its end; done (which may be nil) releases what the
// set-up took, after the CPU of the block is read.
type trBlock struct {
	turn func(i int) (time.Duration, error)
	done func()
}

// transports runs the transports phase (child mode): the server under test and, with
// --transports-baseline-bin, the baseline started side by side, both up until the end of
// the phase. After warm-up turns of every transport on both, --transports-rounds rounds;
// in each, for each transport, a block of --transports-turns turns on each server, one
// turn after another, the two blocks one right after the other (the first server
// alternating between rounds). CPU per turn of a block = Δ(utime+stime) of its server /
// its turns. A failed turn ends the phase with an error.
func (b *bench) transports(ctx context.Context) (*TransportsReport, error) {
	cfg := b.cfg
	fr := b.fake.policy
	s := fr.script
	rep := &TransportsReport{A2UIVersion: a2aVersion, Components: len(s.comps), Chunks: len(fr.frames),
		TurnsPerRound: cfg.transportsTurns, Rounds: cfg.transportsRounds, WarmupTurns: transportsWarmTurns,
		TargetRatio: transportsTargetRatio, BaselineBin: cfg.transportsBaselineBin}
	bins := []string{b.bin}
	if cfg.transportsBaselineBin != "" {
		bins = append(bins, cfg.transportsBaselineBin)
	}
	srv := make([]*trServer, len(bins))
	wsc := wsHTTPClient()
	defer func() {
		for _, v := range srv {
			if v != nil {
				v.t.Close()
			}
		}
		b.hc.CloseIdleConnections()
		wsc.CloseIdleConnections()
	}()
	for i, bin := range bins {
		t, err := startChild(ctx, b.hc, bin, b.childArgs(), b.fake.URL())
		if err != nil {
			return nil, fmt.Errorf("transports %s: %w", trServerNames[i], err)
		}
		srv[i] = &trServer{name: trServerNames[i], bin: bin, t: t, clockOK: true, ticksOK: true}
		rep.Servers = append(rep.Servers, TransportsServer{Name: trServerNames[i], Bin: bin, PID: t.pid})
		id, err := b.warmSession(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("transports %s: %w", trServerNames[i], err)
		}
		srv[i].session, srv[i].genui = id, turnBody(id, wsPromptText)
	}
	if b.rep.Target.PID == 0 {
		// No other phase has started a server yet: the header names the one under test.
		t := srv[trAfter].t
		b.rep.Target.PID, b.rep.Target.URL, b.rep.Target.Model = t.pid, t.base, t.model
	}
	if len(srv) > 1 {
		b.logf("transports: servers after (%s, pid %d) and before (%s, pid %d); %d round(s) of %d turns per transport and server",
			srv[trAfter].bin, srv[trAfter].t.pid, srv[trBefore].bin, srv[trBefore].t.pid, cfg.transportsRounds, cfg.transportsTurns)
	} else {
		b.logf("transports: one server (%s, pid %d), no --transports-baseline-bin; %d round(s) of %d turns per transport",
			srv[trAfter].bin, srv[trAfter].t.pid, cfg.transportsRounds, cfg.transportsTurns)
	}

	nonce := make([]byte, 6)
	_, _ = rand.Read(nonce)
	tag := hex.EncodeToString(nonce)
	seq := 0
	next := func(kind string) string {
		seq++
		return fmt.Sprintf("bench-%s-%s-%d", kind, tag, seq)
	}
	timeout := b.turnTimeout()
	a2uiBody := policyA2UIBody()
	mcpReq := mcpBodyText(policyText)
	aguiInput := aguiBody(policyText)
	promptText, _ := json.Marshal(wsPromptText)
	// oneCall checks that a turn made one model call.
	oneCall := func(calls int64, err error) error {
		if n := b.fake.calls.Load() - calls; err == nil && n != 1 {
			return fmt.Errorf("%d model calls for one turn", n)
		}
		return err
	}
	// simple is the block of a transport whose turns need no set-up.
	simple := func(one func() (time.Duration, error)) trBlock {
		return trBlock{turn: func(int) (time.Duration, error) {
			calls := b.fake.calls.Load()
			end, err := one()
			return end, oneCall(calls, err)
		}}
	}
	// settle waits until the server holds no more conversations than held0, when
	// /readyz tells.
	settle := func(t *target, held0 int64, okHeld bool) {
		if okHeld {
			waitSessionsGone(ctx, b.hc, t.base, held0, 10*time.Second)
		} else {
			time.Sleep(200 * time.Millisecond)
		}
	}
	setup := [numTransports]func(v *trServer, n int) (trBlock, error){
		trGenUINDJSON: func(v *trServer, _ int) (trBlock, error) {
			return simple(func() (time.Duration, error) {
				r := turn(ctx, b.hc, v.t.base, formatNDJSON, v.genui, timeout)
				return r.end, r.err
			}), nil
		},
		trGenUISSE: func(v *trServer, _ int) (trBlock, error) {
			return simple(func() (time.Duration, error) {
				r := turn(ctx, b.hc, v.t.base, formatSSE, v.genui, timeout)
				return r.end, r.err
			}), nil
		},
		trA2UINDJSON: func(v *trServer, _ int) (trBlock, error) {
			return simple(func() (time.Duration, error) {
				u := a2uiTurn(ctx, b.hc, v.t.base, s, a2uiBody, timeout)
				return u.result, u.err
			}), nil
		},
		trA2A: func(v *trServer, _ int) (trBlock, error) {
			return simple(func() (time.Duration, error) {
				r := a2aStreamTurn(ctx, b.hc, v.t.base, s, a2aBodyText(next("tr-a2a"), policyText), timeout)
				return r.end, r.err
			}), nil
		},
		trAGUI: func(v *trServer, _ int) (trBlock, error) {
			return simple(func() (time.Duration, error) {
				return aguiTurn(ctx, b.hc, v.t.base, s, aguiInput, timeout)
			}), nil
		},
		trMCP: func(v *trServer, _ int) (trBlock, error) {
			return simple(func() (time.Duration, error) {
				r := mcpCall(ctx, b.hc, v.t.base, s, mcpReq, timeout)
				return r.end, r.err
			}), nil
		},
		trWS: func(v *trServer, n int) (trBlock, error) {
			// As the ws phase: the connections (each with initialize) and a session per
			// turn are made before the block, so that the block is the prompts alone.
			held0, _, okHeld, err := heldStats(ctx, b.hc, v.t.base)
			if err != nil {
				return trBlock{}, err
			}
			type session struct {
				w  *wsConn
				id string
			}
			var conns []*wsConn
			done := func() {
				wsCloseAll(conns)
				settle(v.t, held0, okHeld)
			}
			params := fmt.Appendf(nil, `{"sessionId":%q}`, v.session)
			sessions := make([]session, 0, n)
			for i := range n {
				if i%wsSessionsPerConn == 0 {
					w, _, err := b.wsOpen(ctx, wsc, v.t.base, nil)
					if err != nil {
						done()
						return trBlock{}, fmt.Errorf("opening a connection: %w", err)
					}
					conns = append(conns, w)
				}
				w := conns[len(conns)-1]
				id, err := w.newSession(ctx, params, cfg.timeout)
				if err != nil {
					done()
					return trBlock{}, err
				}
				sessions = append(sessions, session{w, id})
			}
			return trBlock{turn: func(i int) (time.Duration, error) {
				calls := b.fake.calls.Load()
				r := sessions[i].w.prompt(ctx, sessions[i].id, promptText, timeout)
				return r.end, oneCall(calls, r.err)
			}, done: done}, nil
		},
		trYield: func(v *trServer, n int) (trBlock, error) {
			// A new conversation per turn: a connection to a new id, opened before the
			// block (the server sends nothing before init).
			held0, _, okHeld, err := heldStats(ctx, b.hc, v.t.base)
			if err != nil {
				return trBlock{}, err
			}
			conns := make([]*wsConn, 0, n)
			done := func() {
				wsCloseAll(conns)
				settle(v.t, held0, okHeld)
			}
			for range n {
				w, err := dialYield(ctx, wsc, v.t.base, next("tr-yield"), cfg.timeout)
				if err != nil {
					done()
					return trBlock{}, err
				}
				conns = append(conns, w)
			}
			init := yieldInit(v.session, promptText)
			return trBlock{turn: func(i int) (time.Duration, error) {
				calls := b.fake.calls.Load()
				end, err := conns[i].yieldTurn(ctx, init, timeout)
				return end, oneCall(calls, err)
			}, done: done}, nil
		},
	}
	// runBlock runs a block of n turns of transport k on v; with measure, it records the
	// block's CPU and the turns' times.
	runBlock := func(v *trServer, k, n int, measure bool) error {
		blk, err := setup[k](v, n)
		if err != nil {
			return fmt.Errorf("setting up the block: %w", err)
		}
		if blk.done != nil {
			defer blk.done()
		}
		clock0, cerr0 := processCPUClock(v.t.pid)
		cpu0, ok0 := cpuOf(v.t)
		for i := range n {
			end, err := blk.turn(i)
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("turn %d: %w", i+1, err)
			}
			if measure {
				v.end[k] = append(v.end[k], msOf(end))
			}
		}
		cpu1, ok1 := cpuOf(v.t)
		clock1, cerr1 := processCPUClock(v.t.pid)
		if !measure {
			return nil
		}
		if ok0 && ok1 {
			v.ticks[k] = append(v.ticks[k], int((cpu1-cpu0)*clockTick/time.Second))
			v.tickCPU[k] = append(v.tickCPU[k], msOf((cpu1-cpu0)/time.Duration(n)))
		} else {
			v.ticksOK = false
		}
		if cerr := errors.Join(cerr0, cerr1); cerr == nil {
			v.cpu[k] = append(v.cpu[k], msOf((clock1-clock0)/time.Duration(n)))
		} else if v.clockOK {
			v.clockOK = false
			b.logf("transports %s: %v", v.name, cerr)
		}
		return nil
	}

	// Warm-up: the first turns pay one-time costs.
	for _, v := range srv {
		for k := range numTransports {
			if err := runBlock(v, k, transportsWarmTurns, false); err != nil {
				return nil, fmt.Errorf("transports %s: warm-up %s: %w", v.name, transportNames[k], err)
			}
		}
	}
	if b.rep.Target.UsesFakeModel == nil {
		uses := true // every warm-up turn made its one model call to the fake
		b.rep.Target.UsesFakeModel = &uses
	}

	for rnd := range cfg.transportsRounds {
		order := []*trServer{srv[0]}
		if len(srv) > 1 {
			order = []*trServer{srv[trAfter], srv[trBefore]}
			if rnd%2 == 1 {
				order = []*trServer{srv[trBefore], srv[trAfter]}
			}
		}
		rep.FirstPerRound = append(rep.FirstPerRound, order[0].name)
		// The two blocks of a transport run one right after the other, so that the
		// machine's load drifting in between weighs little on their ratio.
		for k := range numTransports {
			for _, v := range order {
				if err := runBlock(v, k, cfg.transportsTurns, true); err != nil {
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					return nil, fmt.Errorf("transports round %d, %s server, %s: %w", rnd+1, v.name, transportNames[k], err)
				}
			}
		}
		for _, v := range order {
			if err := v.t.alive(); err != nil {
				return nil, fmt.Errorf("transports %s: %w", v.name, err)
			}
		}
		var line []string
		for k := range numTransports {
			f := transportNames[k] + " " + fmtCPURound(srv[trAfter].cpu[k])
			if len(srv) > 1 {
				f += " / " + fmtCPURound(srv[trBefore].cpu[k])
			}
			line = append(line, f)
		}
		what := "after"
		if len(srv) > 1 {
			what = "after / before"
		}
		b.logf("transports round %d (%s first): CPU per turn %s: %s", rnd+1, order[0].name, what, strings.Join(line, "; "))
	}

	rep.CPUSource = "clock"
	clockOK := true
	for _, v := range srv {
		clockOK = clockOK && v.clockOK
	}
	if !clockOK {
		rep.CPUSource = "ticks"
		b.note("transports: the servers' CPU-time clocks could not be read: CPU figures from /proc/<pid>/stat, in 10 ms ticks")
		for _, v := range srv {
			v.cpu = v.tickCPU
		}
	}
	within := len(srv) > 1
	for k := range numTransports {
		tk := b.transportKind(k, srv, rep.CPUSource)
		rep.Transports = append(rep.Transports, tk)
		within = within && tk.Within != nil && *tk.Within
	}
	if len(srv) > 1 {
		rep.AllWithin = ptr(within)
	}
	return rep, nil
}

// transportKind gathers the figures of one transport on the servers.
func (b *bench) transportKind(k int, srv []*trServer, source string) TransportsKind {
	after := srv[trAfter]
	tk := TransportsKind{Transport: transportNames[k], Request: transportRequests[k], TurnsPerServer: len(after.end[k]),
		AfterEndMS: statOf(after.end[k], 3), AfterCPUPerTurnRoundsMS: after.cpu[k]}
	what := "transports " + tk.Transport + " "
	median := func(v *trServer) *float64 {
		if len(v.cpu[k]) == 0 {
			return nil
		}
		if source == "ticks" {
			return b.cpuPerTurn(what+v.name, "--transports-turns", v.cpu[k], v.ticks[k])
		}
		return ptr(statOf(v.cpu[k], 4).Median)
	}
	tk.AfterCPUPerTurnMS = median(after)
	if after.ticksOK {
		tk.AfterTicksRounds = after.ticks[k]
	}
	if len(srv) < 2 {
		return tk
	}
	before := srv[trBefore]
	tk.BeforeCPUPerTurnMS, tk.BeforeCPUPerTurnRoundsMS = median(before), before.cpu[k]
	tk.BeforeEndMS = ptr(statOf(before.end[k], 3))
	if before.ticksOK {
		tk.BeforeTicksRounds = before.ticks[k]
	}
	if len(after.cpu[k]) == 0 || len(after.cpu[k]) != len(before.cpu[k]) {
		b.note("transports %s: no CPU figures (neither the servers' CPU-time clocks nor their /proc/<pid>/stat could be read)", tk.Transport)
		return tk
	}
	var ratios []float64
	for r := range after.cpu[k] {
		if before.cpu[k][r] <= 0 {
			tk.CPURatioRounds = append(tk.CPURatioRounds, nil)
			continue
		}
		x := after.cpu[k][r] / before.cpu[k][r]
		tk.CPURatioRounds = append(tk.CPURatioRounds, ptr(round(x, 3)))
		ratios = append(ratios, x)
	}
	if len(ratios) < len(after.cpu[k]) {
		b.note("transports %s: %d round(s) where the before server's CPU reads 0: no ratio for them (raise --transports-turns)",
			tk.Transport, len(after.cpu[k])-len(ratios))
	}
	if len(ratios) > 0 {
		tk.CPURatio = ptr(statOf(ratios, 3).Median)
		tk.Within = ptr(*tk.CPURatio <= transportsTargetRatio)
	}
	if tk.AfterCPUPerTurnMS != nil && tk.BeforeCPUPerTurnMS != nil {
		tk.AddedCPUPerTurnMS = ptr(round(*tk.AfterCPUPerTurnMS-*tk.BeforeCPUPerTurnMS, 4))
		if *tk.BeforeCPUPerTurnMS > 0 {
			tk.CPURatioOfMedians = ptr(round(*tk.AfterCPUPerTurnMS / *tk.BeforeCPUPerTurnMS, 3))
		}
	}
	return tk
}

// aguiBody is a RunAgentInput of one user message of text: no tools, no context (the
// basic catalog), no state.
func aguiBody(text string) []byte {
	return fmt.Appendf(nil, `{"threadId":"bench-thread","runId":"bench-run","messages":[{"id":"m1","role":"user","content":%q}],"tools":[],"context":[],"state":{},"forwardedProps":{}}`, text)
}

// aguiEvent is what the client reads of an AG-UI event.
type aguiEvent struct {
	Type         string `json:"type"`
	MessageID    string `json:"messageId"`
	ActivityType string `json:"activityType"`
	Content      *struct {
		Ops []json.RawMessage `json:"a2ui_operations"`
	} `json:"content"`
	Patch []struct {
		Op    string          `json:"op"`
		Path  string          `json:"path"`
		Value json.RawMessage `json:"value"`
	} `json:"patch"`
	Message string `json:"message"`
	Code    string `json:"code"`
}

// aguiTurn runs one AG-UI run: POST /ag-ui with input, the SSE stream read to its end.
// It keeps each a2ui-surface activity's operations as @ag-ui/client does (a snapshot
// replaces them, a delta appends its message), and checks that the run starts with
// RUN_STARTED and ends with RUN_FINISHED, and that a client applying the activities'
// operations renders every component of the script. It returns the time to
// RUN_FINISHED.
func aguiTurn(ctx context.Context, hc *http.Client, base string, s *a2uiScript, input []byte, timeout time.Duration) (end time.Duration, err error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	res, err := postJSON(ctx, hc, base+aguiEndpoint, input, "text/event-stream")
	if err != nil {
		return 0, err
	}
	defer drain(res.Body)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		return 0, fmt.Errorf("POST %s: Content-Type %q, not an SSE stream: %s", aguiEndpoint, ct, bytes.TrimSpace(b))
	}
	ops := map[string][]json.RawMessage{}
	var order []string // the activities, in the order they came
	events, last := 0, ""
	event := func(data []byte) error {
		var ev aguiEvent
		if err := json.Unmarshal(data, &ev); err != nil {
			return fmt.Errorf("an event is not JSON: %s", truncate(data, 300))
		}
		events++
		switch {
		case last == "RUN_FINISHED" || last == "RUN_ERROR":
			return fmt.Errorf("an event after %s: %s", last, truncate(data, 300))
		case events == 1 && ev.Type != "RUN_STARTED":
			return fmt.Errorf("the run starts with %q, not RUN_STARTED", ev.Type)
		}
		last = ev.Type
		switch ev.Type {
		case "RUN_ERROR":
			return fmt.Errorf("RUN_ERROR %s: %s", ev.Code, ev.Message)
		case "RUN_FINISHED":
			end = time.Since(start)
		case "ACTIVITY_SNAPSHOT":
			if ev.ActivityType != "a2ui-surface" || ev.Content == nil || len(ev.Content.Ops) == 0 {
				return fmt.Errorf("a snapshot without a2ui operations: %s", truncate(data, 300))
			}
			if _, ok := ops[ev.MessageID]; !ok {
				order = append(order, ev.MessageID)
			}
			ops[ev.MessageID] = ev.Content.Ops
		case "ACTIVITY_DELTA":
			held, ok := ops[ev.MessageID]
			if !ok || len(ev.Patch) != 1 || ev.Patch[0].Op != "add" || ev.Patch[0].Path != "/a2ui_operations/-" {
				return fmt.Errorf("a delta other than one message appended to an activity of the run: %s", truncate(data, 300))
			}
			ops[ev.MessageID] = append(held, ev.Patch[0].Value)
		}
		return nil
	}
	br := bufio.NewReaderSize(res.Body, 64<<10)
	var data []byte
	pending := false
	for {
		line, rerr := br.ReadBytes('\n')
		if len(line) > 0 && err == nil {
			line = bytes.TrimRight(line, "\r\n")
			switch {
			case len(line) == 0:
				if pending {
					err = event(data)
				}
				data, pending = data[:0], false
			case bytes.HasPrefix(line, []byte("data:")):
				if pending {
					data = append(data, '\n')
				}
				data = append(data, bytes.TrimPrefix(line[len("data:"):], []byte(" "))...)
				pending = true
			}
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) && err == nil {
				err = fmt.Errorf("reading the stream: %w", rerr)
			}
			break
		}
	}
	switch {
	case err != nil:
		return 0, err
	case pending:
		return 0, errors.New("the stream ended inside an event")
	case last != "RUN_FINISHED":
		return 0, fmt.Errorf("the stream ended with %q, not RUN_FINISHED", last)
	case len(order) == 0:
		return 0, errors.New("the run holds no a2ui-surface activity")
	}
	model := newA2UISurfaces(s.version)
	for _, id := range order {
		for _, op := range ops[id] {
			var msg map[string]json.RawMessage
			if err := json.Unmarshal(op, &msg); err != nil {
				return 0, fmt.Errorf("an A2UI operation that is not an object: %s", truncate(op, 300))
			}
			if err := model.apply(msg, nil); err != nil {
				return 0, fmt.Errorf("%v: %s", err, truncate(op, 300))
			}
		}
	}
	if miss := model.missing(s); len(miss) > 0 {
		return 0, fmt.Errorf("the client renders %d of the %d scripted components at the end; missing: %s",
			len(s.comps)-len(miss), len(s.comps), strings.Join(miss, ", "))
	}
	return end, nil
}

// dialYield opens a connection to the yield and resume endpoint of session id.
func dialYield(ctx context.Context, hc *http.Client, base, id string, timeout time.Duration) (*wsConn, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	u := "ws://" + strings.TrimPrefix(base, "http://") + yieldPrefix + id
	if rest, ok := strings.CutPrefix(base, "https://"); ok {
		u = "wss://" + rest + yieldPrefix + id
	}
	c, res, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		if res != nil && res.Body != nil {
			return nil, httpError("GET "+yieldPrefix+"{id}", res)
		}
		return nil, fmt.Errorf("GET %s{id}: %w", yieldPrefix, err)
	}
	c.SetReadLimit(16 << 20)
	return &wsConn{c: c}, nil
}

// yieldInit is the init message of a generateUi turn of the startSession session sid
// with the user's text (a JSON string).
func yieldInit(sid string, text []byte) []byte {
	return fmt.Appendf(nil, `{"type":"init","graphId":"generateUi","input":{"sessionId":%q,"conversation":[{"role":"user","parts":[{"type":"text","text":%s}]}]}}`, sid, text)
}

// yieldTurn sends init and reads the turn's messages up to done, which must hold a
// result after at least one progress carrying a tool request (a surface). A yield or an
// error ends the turn with an error. It returns the time to done.
func (w *wsConn) yieldTurn(ctx context.Context, init []byte, timeout time.Duration) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	if err := w.c.Write(ctx, websocket.MessageText, init); err != nil {
		return 0, fmt.Errorf("init: %w", err)
	}
	surfaces := 0
	for {
		data, err := w.read(ctx)
		now := time.Since(start)
		if err != nil {
			return 0, fmt.Errorf("reading: %w", err)
		}
		if rest, ok := bytes.CutPrefix(data, []byte(`{"type":"progress",`)); ok {
			if bytes.Contains(rest, toolKey) {
				surfaces++
			}
			continue
		}
		var m struct {
			Type    string          `json:"type"`
			Result  json.RawMessage `json:"result"`
			Message string          `json:"message"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			return 0, fmt.Errorf("a message that is not JSON: %s", truncate(data, 300))
		}
		switch m.Type {
		case "progress":
			if bytes.Contains(data, toolKey) {
				surfaces++
			}
		case "done":
			switch {
			case len(m.Result) == 0 || string(m.Result) == "null":
				return 0, fmt.Errorf("done without a result: %s", truncate(data, 300))
			case surfaces == 0:
				return 0, errors.New("done without a tool request before it")
			}
			return now, nil
		case "error":
			return 0, fmt.Errorf("error: %s", m.Message)
		default:
			return 0, fmt.Errorf("an unexpected message: %s", truncate(data, 300))
		}
	}
}
