package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The ws phase: GET /ws (JSON-RPC 2.0 over WebSocket, genui/wsapi). First the server's
// memory per idle connection holding one session; then the same turn as a prompt over /ws
// and as POST /generateUi in NDJSON, to measure what /ws adds to its latency and to the
// server's CPU.

const (
	// wsIdleTargetBytes is the target: an idle /ws connection with one session costs the
	// server at most this much.
	wsIdleTargetBytes = 14 << 10
	// wsTargetRatio is the target: a prompt over /ws takes at most this many times the
	// same turn over NDJSON (time to the first UI update, to the end).
	wsTargetRatio = 1.1
	// wsSessionsPerConn is how many sessions one connection of the turns holds: under the
	// server's default --ws-sessions (64).
	wsSessionsPerConn = 50
	// wsOpenConcurrency is how many idle connections are being opened at once.
	wsOpenConcurrency = 64
	// wsPromptText is the user's text of every turn of the phase, as in the latency phase.
	wsPromptText = "Show me a form"
)

// WSReport is the ws phase. Idle: per round, --ws-conns connections each with initialize
// and new_session, then idle; bytes_per_connection = ΔRSS / connections open, and
// idle_bytes_per_connection its median over the rounds. Turns: the same turn as a
// prompt over /ws (a new session per turn, made before the turns are timed) and over
// POST /generateUi NDJSON (held: a new conversationId per turn; or stateless), one turn at
// a time, in rounds of a block of turns per path; times in ms from just before the request
// is sent, per path the median over the rounds of each round's median [min-max of the
// round medians]. *_ratio = the /ws median / the NDJSON median; *_ratio_rounds the same
// per round; added_*_ms = /ws − NDJSON.
type WSReport struct {
	Session                string         `json:"session"` // what new_session carries: startSession or catalog
	IdleConnections        int            `json:"idle_connections"`
	IdleRounds             []WSIdleRound  `json:"idle_rounds"`
	IdleBytesPerConnection *int64         `json:"idle_bytes_per_connection"`
	IdleTargetBytes        int64          `json:"idle_target_bytes"` // at most
	IdleProfile            *WSIdleProfile `json:"idle_profile"`
	IdlePass               *bool          `json:"idle_pass"` // null without RSS figures
	Baseline               string         `json:"baseline"`  // held or stateless /generateUi turns
	TurnsPerRound          int            `json:"turns_per_round"`
	Rounds                 int            `json:"rounds"`
	NDJSON                 WSPathReport   `json:"ndjson"`
	WS                     WSPathReport   `json:"ws"`
	// NewSessionCPUMS: the server's CPU per new_session over the /ws blocks' set-up (their
	// connections' handshakes and initialize included), median over the rounds.
	NewSessionCPUMS    *float64  `json:"new_session_cpu_ms"`
	FirstUIRatio       *float64  `json:"first_ui_ratio"`
	EndRatio           *float64  `json:"end_ratio"`
	CPURatio           *float64  `json:"cpu_per_turn_ratio"`
	FirstUIRatioRounds []float64 `json:"first_ui_ratio_rounds"`
	EndRatioRounds     []float64 `json:"end_ratio_rounds"`
	AddedFirstUIMS     *float64  `json:"added_first_ui_ms"`
	AddedEndMS         *float64  `json:"added_end_ms"`
	AddedCPUPerTurnMS  *float64  `json:"added_cpu_per_turn_ms"`
	TargetRatio        float64   `json:"target_ratio"` // at most, for the time ratios
	// TurnsPass: no failed turn and both time ratios within the target.
	TurnsPass bool `json:"turns_pass"`
}

// WSIdleRound is one round of idle connections. sessions_left is how many of the
// round's sessions the server still held (GET /readyz conversations.held) 10 s after the
// connections closed, null when it does not report them.
type WSIdleRound struct {
	Connections        int     `json:"connections"` // opened, with their session
	Errors             int     `json:"errors"`
	OpenS              float64 `json:"open_s"`
	RSSBeforeBytes     *int64  `json:"rss_before_bytes"`
	RSSAfterBytes      *int64  `json:"rss_after_bytes"`
	BytesPerConnection *int64  `json:"bytes_per_connection"`
	Closed             int     `json:"closed"` // with a close handshake
	SessionsLeft       *int64  `json:"sessions_left"`
	FreshServer        bool    `json:"fresh_server"`
	FirstError         string  `json:"first_error,omitempty"`
}

// WSIdleProfile is one more round of idle connections on a server serving pprof (child
// mode): the growth of its goroutines, of runtime.MemStats after a forced GC
// (HeapAlloc: live heap; HeapInuse: heap spans in use; StackInuse: goroutine stacks) and
// of the conversation store's bytes (GET /readyz), each per connection.
type WSIdleProfile struct {
	Connections                 int      `json:"connections"`
	GoroutinesPerConnection     float64  `json:"goroutines_per_connection"`
	LiveHeapBytesPerConnection  int64    `json:"live_heap_bytes_per_connection"`
	HeapInuseBytesPerConnection int64    `json:"heap_inuse_bytes_per_connection"`
	StackBytesPerConnection     int64    `json:"stack_bytes_per_connection"`
	StoreBytesPerConnection     *int64   `json:"store_bytes_per_connection"`
	Files                       []string `json:"files,omitempty"` // --ws-profile
}

// WSPathReport: the turns of one path over all rounds. cpu_per_turn_ms = the median over
// the rounds of Δ(utime+stime) of the server over the round's block / its turns (null
// without a pid); response_bytes = the median bytes a turn's client received (the NDJSON
// body; the /ws messages).
type WSPathReport struct {
	Path               string    `json:"path"`
	Turns              int       `json:"turns"`
	Errors             int       `json:"errors"`
	FirstUIMS          *a2uiStat `json:"first_ui_ms"`
	EndMS              *a2uiStat `json:"end_ms"`
	FirstUIRoundsMS    []float64 `json:"first_ui_rounds_ms"` // each round's median
	EndRoundsMS        []float64 `json:"end_rounds_ms"`
	CPUPerTurnMS       *float64  `json:"cpu_per_turn_ms"`
	CPUPerTurnRoundsMS []float64 `json:"cpu_per_turn_rounds_ms"`
	ResponseBytes      *int64    `json:"response_bytes"`
	FirstError         string    `json:"first_error,omitempty"`
}

// ws runs the ws phase: the idle rounds (each on a fresh server in child mode), then the
// turns (on another).
func (b *bench) ws(ctx context.Context, t *target) (*WSReport, error) {
	cfg := b.cfg
	rep := &WSReport{Session: cfg.wsSession, IdleConnections: cfg.wsConns, IdleTargetBytes: wsIdleTargetBytes,
		Baseline: cfg.wsBaseline, TurnsPerRound: cfg.wsTurns, Rounds: cfg.wsRounds, TargetRatio: wsTargetRatio}
	if need := uint64(cfg.wsConns + 256); b.fdLimit < need {
		b.note("ws: the descriptor limit is %d, about %d are needed here and in the server: expect errors", b.fdLimit, need)
	}
	fresh := cfg.url == "" && cfg.fresh
	hc := wsHTTPClient()
	defer hc.CloseIdleConnections()
	var perConn []float64
	for rnd := range cfg.wsIdleRounds + 1 {
		profile := rnd == cfg.wsIdleRounds
		if profile {
			if !fresh {
				break // the profile needs a child that serves pprof
			}
			addr, err := freeLoopback()
			if err != nil {
				return nil, err
			}
			if t, err = b.serverWith(ctx, "--pprof-addr", addr); err != nil {
				return nil, err
			}
			if rep.IdleProfile, err = b.wsIdleProfile(ctx, t, hc, "http://"+addr); err != nil {
				return nil, err
			}
			break
		}
		if rnd > 0 && fresh {
			var err error
			if t, err = b.server(ctx); err != nil {
				return nil, err
			}
		}
		r, err := b.wsIdleRound(ctx, t, hc, rnd)
		if err != nil {
			return nil, err
		}
		r.FreshServer = fresh
		rep.IdleRounds = append(rep.IdleRounds, r)
		if r.BytesPerConnection != nil {
			perConn = append(perConn, float64(*r.BytesPerConnection))
		}
	}
	if !fresh && cfg.wsIdleRounds > 1 {
		b.note("ws: the idle rounds share one server (--url or --fresh=false): after the first, the memory the earlier connections freed is reused")
	}
	if len(perConn) > 0 {
		rep.IdleBytesPerConnection = ptr(int64(statOf(perConn, 0).Median))
		rep.IdlePass = ptr(*rep.IdleBytesPerConnection <= wsIdleTargetBytes)
	}
	if fresh {
		var err error
		if t, err = b.server(ctx); err != nil {
			return nil, err
		}
	}
	if err := b.wsTurns(ctx, t, hc, rep); err != nil {
		return nil, err
	}
	return rep, nil
}

// freeLoopback returns a loopback address free a moment ago.
func freeLoopback() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// wsSessionParams returns what new_session carries, and the session id of the
// startSession session it names ("" with the catalog inline).
func (b *bench) wsSessionParams(ctx context.Context, t *target) (params []byte, sid string, err error) {
	if b.cfg.wsSession == wsSpecCatalog {
		return fmt.Appendf(nil, `{"catalog":%s}`, b.catalog), "", nil
	}
	if sid, err = b.warmSession(ctx, t); err != nil {
		return nil, "", err
	}
	return fmt.Appendf(nil, `{"sessionId":%q}`, sid), sid, nil
}

// wsOpen opens a connection with initialize and, with params, new_session.
func (b *bench) wsOpen(ctx context.Context, hc *http.Client, base string, params []byte) (*wsConn, string, error) {
	w, err := dialWS(ctx, hc, base, b.cfg.timeout)
	if err != nil {
		return nil, "", err
	}
	if err := w.initialize(ctx, b.cfg.timeout); err != nil {
		_ = w.close()
		return nil, "", err
	}
	if params == nil {
		return w, "", nil
	}
	id, err := w.newSession(ctx, params, b.cfg.timeout)
	if err != nil {
		_ = w.close()
		return nil, "", err
	}
	return w, id, nil
}

// wsOpenIdle opens n connections, each with initialize and new_session, at most
// wsOpenConcurrency at once; it returns those that opened.
func (b *bench) wsOpenIdle(ctx context.Context, hc *http.Client, base string, params []byte, n int) (conns []*wsConn, errs int, first error) {
	out := make([]*wsConn, n)
	errv := make([]error, n)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(n, wsOpenConcurrency) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= n || ctx.Err() != nil {
					return
				}
				out[i], _, errv[i] = b.wsOpen(ctx, hc, base, params)
			}
		})
	}
	wg.Wait()
	for i, w := range out {
		if w != nil {
			conns = append(conns, w)
		} else if errv[i] != nil {
			errs++
			first = cmpErr(first, errv[i])
		}
	}
	return conns, errs, first
}

// wsCloseAll closes conns, wsOpenConcurrency at once, and returns how many closed with
// a close handshake.
func wsCloseAll(conns []*wsConn) int {
	var closed atomic.Int64
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(len(conns), wsOpenConcurrency) {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= len(conns) {
					return
				}
				if conns[i].close() == nil {
					closed.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return int(closed.Load())
}

// waitSessionsGone waits until the server holds at most held0 conversations (the
// sessions of closed connections deleted), up to d; it returns how many more it holds,
// or false when /readyz does not report them.
func waitSessionsGone(ctx context.Context, hc *http.Client, base string, held0 int64, d time.Duration) (int64, bool) {
	deadline := time.Now().Add(d)
	for {
		held, _, ok, err := heldStats(ctx, hc, base)
		if err != nil || !ok {
			return 0, false
		}
		if held <= held0 || time.Now().After(deadline) || ctx.Err() != nil {
			return max(held-held0, 0), true
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// wsWarm opens and closes one connection with a session, which pays the first ones'
// one-time costs, and returns what new_session carries and the conversations the server
// holds once that session is gone.
func (b *bench) wsWarm(ctx context.Context, t *target, hc *http.Client) (params []byte, held0 int64, okHeld bool, err error) {
	params, _, err = b.wsSessionParams(ctx, t)
	if err != nil {
		return nil, 0, false, err
	}
	held0, _, okHeld, err = heldStats(ctx, b.hc, t.base)
	if err != nil {
		return nil, 0, false, err
	}
	w, _, err := b.wsOpen(ctx, hc, t.base, params)
	if err != nil {
		return nil, 0, false, fmt.Errorf("ws: a first connection: %w", err)
	}
	_ = w.close()
	if okHeld {
		waitSessionsGone(ctx, b.hc, t.base, held0, 5*time.Second)
	}
	return params, held0, okHeld, nil
}

// wsIdleRound opens --ws-conns idle connections with a session each and measures the
// server's RSS before and with them.
func (b *bench) wsIdleRound(ctx context.Context, t *target, hc *http.Client, rnd int) (WSIdleRound, error) {
	cfg := b.cfg
	var r WSIdleRound
	params, held0, okHeld, err := b.wsWarm(ctx, t, hc)
	if err != nil {
		return r, err
	}
	var before int64
	if t.pid != 0 {
		time.Sleep(300 * time.Millisecond)
		if before, err = medianRSS(ctx, t.pid, 5, 100*time.Millisecond); err != nil {
			return r, err
		}
		r.RSSBeforeBytes = &before
	}
	b.logf("ws: idle round %d: opening %d connections, each with initialize and new_session (%s)", rnd+1, cfg.wsConns, cfg.wsSession)
	start := time.Now()
	conns, errs, first := b.wsOpenIdle(ctx, hc, t.base, params, cfg.wsConns)
	r.OpenS, r.Connections, r.Errors = round(time.Since(start).Seconds(), 2), len(conns), errs
	if first != nil {
		r.FirstError = first.Error()
		b.note("ws: idle round %d: %d of %d connections failed, first: %v", rnd+1, errs, cfg.wsConns, first)
	}
	if t.pid != 0 && len(conns) > 0 {
		time.Sleep(time.Second)
		after, err := medianRSS(ctx, t.pid, 5, 100*time.Millisecond)
		if err != nil {
			wsCloseAll(conns)
			return r, err
		}
		r.RSSAfterBytes = &after
		r.BytesPerConnection = ptr((after - before) / int64(len(conns)))
	}
	r.Closed = wsCloseAll(conns)
	if okHeld {
		left, _ := waitSessionsGone(ctx, b.hc, t.base, held0, 10*time.Second)
		r.SessionsLeft = &left
		if left > 0 {
			b.note("ws: idle round %d: the server still holds %d sessions 10 s after their connections closed", rnd+1, left)
		}
	}
	per := "n/a"
	if r.BytesPerConnection != nil {
		per = fmtBytes(*r.BytesPerConnection)
	}
	b.logf("ws: idle round %d: %d connections open in %.2f s, %s per connection", rnd+1, r.Connections, r.OpenS, per)
	return r, ctx.Err()
}

// memStats are the figures of runtime.MemStats the profile uses.
type memStats struct{ heapAlloc, heapInuse, stackInuse int64 }

// readMemStats reads runtime.MemStats from the server's pprof heap profile in text, after
// a forced GC; with file set it also saves the profile (binary) there.
func readMemStats(ctx context.Context, hc *http.Client, pprof, file string) (memStats, error) {
	var m memStats
	body, err := getText(ctx, hc, pprof+"/debug/pprof/heap?debug=1&gc=1")
	if err != nil {
		return m, err
	}
	found := 0
	for line := range strings.Lines(body) {
		name, val, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "# "), " = ")
		if !ok {
			continue
		}
		if name == "Stack" { // "StackInuse / StackSys"
			val, _, _ = strings.Cut(val, " / ")
		}
		n, err := strconv.ParseInt(val, 10, 64)
		if err != nil {
			continue
		}
		switch name {
		case "HeapAlloc":
			m.heapAlloc, found = n, found+1
		case "HeapInuse":
			m.heapInuse, found = n, found+1
		case "Stack":
			m.stackInuse, found = n, found+1
		}
	}
	if found != 3 {
		return m, errors.New("pprof: the heap profile holds no runtime.MemStats")
	}
	if file != "" {
		raw, err := getText(ctx, hc, pprof+"/debug/pprof/heap")
		if err == nil {
			err = os.WriteFile(file, []byte(raw), 0o644)
		}
		if err != nil {
			return m, err
		}
	}
	return m, nil
}

// goroutines reads the server's goroutine count from pprof; with file set it also saves
// the goroutines, grouped by stack, there.
func goroutines(ctx context.Context, hc *http.Client, pprof, file string) (int64, error) {
	body, err := getText(ctx, hc, pprof+"/debug/pprof/goroutine?debug=1")
	if err != nil {
		return 0, err
	}
	first, _, _ := strings.Cut(body, "\n")
	n, err := strconv.ParseInt(strings.TrimPrefix(first, "goroutine profile: total "), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("pprof: unexpected goroutine profile: %q", first)
	}
	if file != "" {
		if err := os.WriteFile(file, []byte(body), 0o644); err != nil {
			return 0, err
		}
	}
	return n, nil
}

func getText(ctx context.Context, hc *http.Client, u string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return "", err
	}
	res, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer drain(res.Body)
	if res.StatusCode != http.StatusOK {
		return "", httpError("GET "+req.URL.Path, res)
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, 256<<20))
	return string(b), err
}

// wsIdleProfile opens --ws-conns idle connections on a server serving pprof at pprof and
// measures the growth of its goroutines, heap and stacks (after forced GCs) and of its
// conversation store.
func (b *bench) wsIdleProfile(ctx context.Context, t *target, hc *http.Client, pprof string) (*WSIdleProfile, error) {
	cfg := b.cfg
	params, held0, okHeld, err := b.wsWarm(ctx, t, hc)
	if err != nil {
		return nil, err
	}
	file := func(name string) string {
		if cfg.wsProfileDir == "" {
			return ""
		}
		return filepath.Join(cfg.wsProfileDir, name)
	}
	if cfg.wsProfileDir != "" {
		if err := os.MkdirAll(cfg.wsProfileDir, 0o755); err != nil {
			return nil, err
		}
	}
	time.Sleep(300 * time.Millisecond)
	m0, err := readMemStats(ctx, b.hc, pprof, file("heap-before.pb.gz"))
	if err != nil {
		return nil, err
	}
	g0, err := goroutines(ctx, b.hc, pprof, "")
	if err != nil {
		return nil, err
	}
	_, bytes0, _, err := heldStats(ctx, b.hc, t.base)
	if err != nil {
		return nil, err
	}
	b.logf("ws: profile round: opening %d connections on a server serving pprof", cfg.wsConns)
	conns, errs, first := b.wsOpenIdle(ctx, hc, t.base, params, cfg.wsConns)
	defer func() {
		wsCloseAll(conns)
		if okHeld {
			waitSessionsGone(ctx, b.hc, t.base, held0, 10*time.Second)
		}
	}()
	if first != nil {
		b.note("ws: profile round: %d of %d connections failed, first: %v", errs, cfg.wsConns, first)
	}
	if len(conns) == 0 {
		return nil, fmt.Errorf("ws: profile round: no connection opened: %v", first)
	}
	time.Sleep(500 * time.Millisecond)
	m1, err := readMemStats(ctx, b.hc, pprof, file("heap-idle.pb.gz"))
	if err != nil {
		return nil, err
	}
	g1, err := goroutines(ctx, b.hc, pprof, file("goroutines-idle.txt"))
	if err != nil {
		return nil, err
	}
	_, bytes1, okBytes, err := heldStats(ctx, b.hc, t.base)
	if err != nil {
		return nil, err
	}
	n := int64(len(conns))
	p := &WSIdleProfile{Connections: len(conns), GoroutinesPerConnection: round(float64(g1-g0)/float64(n), 2),
		LiveHeapBytesPerConnection: (m1.heapAlloc - m0.heapAlloc) / n, HeapInuseBytesPerConnection: (m1.heapInuse - m0.heapInuse) / n,
		StackBytesPerConnection: (m1.stackInuse - m0.stackInuse) / n}
	if okBytes {
		p.StoreBytesPerConnection = ptr((bytes1 - bytes0) / n)
	}
	if cfg.wsProfileDir != "" {
		p.Files = []string{file("heap-before.pb.gz"), file("heap-idle.pb.gz"), file("goroutines-idle.txt")}
	}
	b.logf("ws: profile round: %.2f goroutines, %s of live heap and %s of stacks per connection", p.GoroutinesPerConnection,
		fmtBytes(p.LiveHeapBytesPerConnection), fmtBytes(p.StackBytesPerConnection))
	return p, nil
}

// The two paths of the turns, in the order of the report.
const (
	wsPathNDJSON = iota
	wsPathWS
)

var wsPathNames = [2]string{"/generateUi NDJSON", "/ws prompt"}

// wsPathRun gathers the figures of one path over the rounds.
type wsPathRun struct {
	rep          WSPathReport
	first, end   []float64 // the round's turns, ms
	firstRounds  []float64 // each round's median
	endRounds    []float64
	bytes        []float64
	cpu          []float64 // ms per turn, one per round
	ticks        []int
	cpuOK        bool
	newSessionMS []float64 // /ws: CPU per new_session, one per round
}

func (p *wsPathRun) add(first, end time.Duration, received int64, err error) {
	p.rep.Turns++
	if err != nil {
		p.rep.Errors++
		if p.rep.FirstError == "" {
			p.rep.FirstError = err.Error()
		}
		return
	}
	p.first, p.end = append(p.first, msOf(first)), append(p.end, msOf(end))
	p.bytes = append(p.bytes, float64(received))
}

// endRound keeps the round's medians.
func (p *wsPathRun) endRound() {
	if len(p.end) > 0 {
		p.firstRounds = append(p.firstRounds, statOf(p.first, 4).Median)
		p.endRounds = append(p.endRounds, statOf(p.end, 4).Median)
	}
	p.first, p.end = p.first[:0], p.end[:0]
}

// wsTurns runs the turns: after a warm-up block of each path, --ws-rounds rounds, each a
// block of --ws-turns turns of each path (the first path alternating between rounds), one
// turn at a time.
func (b *bench) wsTurns(ctx context.Context, t *target, hc *http.Client, rep *WSReport) error {
	cfg := b.cfg
	params, sid, err := b.wsSessionParams(ctx, t)
	if err != nil {
		return err
	}
	nonce := make([]byte, 6)
	_, _ = rand.Read(nonce)
	tag := hex.EncodeToString(nonce)
	seq := 0
	text, _ := json.Marshal(wsPromptText)
	ndjsonBody := func() []byte {
		seq++
		conv := ""
		if cfg.wsBaseline == "held" {
			conv = fmt.Sprintf(`,"conversationId":"bench-ws-%s-%d"`, tag, seq)
		}
		what := fmt.Sprintf(`"sessionId":%q`, sid)
		if cfg.wsSession == wsSpecCatalog {
			what = `"catalog":` + string(b.catalog)
		}
		return fmt.Appendf(nil, `{"data":{%s%s,"conversation":[{"role":"user","parts":[{"type":"text","text":%s}]}]}}`, what, conv, text)
	}
	timeout := b.turnTimeout()
	oneCall := func(calls int64, err error) error {
		if n := b.fake.calls.Load() - calls; err == nil && n != 1 {
			return fmt.Errorf("%d model calls for one turn", n)
		}
		return err
	}
	// ndjsonBlock runs n NDJSON turns.
	ndjsonBlock := func(p *wsPathRun, n int) error {
		cpu0, ok0 := cpuOf(t)
		for range n {
			body := ndjsonBody()
			calls := b.fake.calls.Load()
			r := turn(ctx, b.hc, t.base, formatNDJSON, body, timeout)
			if err := ctx.Err(); err != nil {
				return err
			}
			r.err = oneCall(calls, r.err)
			if r.err != nil {
				r.err = fmt.Errorf("%s: %w", wsPathNames[wsPathNDJSON], r.err)
				b.logf("ws: %v", r.err)
			}
			if p != nil {
				p.add(r.ttfc, r.end, r.body, r.err)
			}
		}
		cpu1, ok1 := cpuOf(t)
		if p != nil {
			p.cpuRound(cpu0, cpu1, ok0 && ok1, n)
		}
		return nil
	}
	// wsBlock opens the connections and sessions of n turns, then runs them, then
	// closes the connections and waits for the server to delete their sessions.
	wsBlock := func(p *wsPathRun, n int) error {
		held0, _, okHeld, err := heldStats(ctx, b.hc, t.base)
		if err != nil {
			return err
		}
		type session struct {
			w  *wsConn
			id string
		}
		var conns []*wsConn
		defer func() {
			wsCloseAll(conns)
			if okHeld {
				waitSessionsGone(ctx, b.hc, t.base, held0, 10*time.Second)
			} else {
				time.Sleep(200 * time.Millisecond)
			}
		}()
		s0, okS0 := cpuOf(t)
		sessions := make([]session, 0, n)
		for i := range n {
			if i%wsSessionsPerConn == 0 {
				w, _, err := b.wsOpen(ctx, hc, t.base, nil)
				if err != nil {
					return fmt.Errorf("ws: opening a connection: %w", err)
				}
				conns = append(conns, w)
			}
			w := conns[len(conns)-1]
			id, err := w.newSession(ctx, params, cfg.timeout)
			if err != nil {
				return fmt.Errorf("ws: %w", err)
			}
			sessions = append(sessions, session{w, id})
		}
		s1, okS1 := cpuOf(t)
		cpu0, ok0 := cpuOf(t)
		for _, s := range sessions {
			calls := b.fake.calls.Load()
			r := s.w.prompt(ctx, s.id, text, timeout)
			if err := ctx.Err(); err != nil {
				return err
			}
			r.err = oneCall(calls, r.err)
			if r.err != nil {
				r.err = fmt.Errorf("%s: %w", wsPathNames[wsPathWS], r.err)
				b.logf("ws: %v", r.err)
			}
			if p != nil {
				p.add(r.firstUI, r.end, r.received, r.err)
			}
		}
		cpu1, ok1 := cpuOf(t)
		if p != nil {
			p.cpuRound(cpu0, cpu1, ok0 && ok1, n)
			if okS0 && okS1 {
				p.newSessionMS = append(p.newSessionMS, msOf((s1-s0)/time.Duration(n)))
			}
		}
		return nil
	}
	base := "held: a new conversationId per turn"
	if cfg.wsBaseline == "stateless" {
		base = "stateless"
	}
	b.logf("ws: %d round(s) of %d turns per path: /ws prompt (a new session per turn) and /generateUi NDJSON (%s); model latency %s, pacing %s",
		cfg.wsRounds, cfg.wsTurns, base, cfg.modelLatency, cfg.pacing)
	// Warm-up: the first turns of each path pay one-time costs.
	warm := min(cfg.wsTurns, 20)
	if err := ndjsonBlock(nil, warm); err != nil {
		return err
	}
	if err := wsBlock(nil, warm); err != nil {
		return err
	}
	runs := [2]*wsPathRun{{cpuOK: true}, {cpuOK: true}}
	for rnd := range cfg.wsRounds {
		order := []int{wsPathNDJSON, wsPathWS}
		if rnd%2 == 1 {
			order = []int{wsPathWS, wsPathNDJSON}
		}
		for _, path := range order {
			var err error
			if path == wsPathWS {
				err = wsBlock(runs[path], cfg.wsTurns)
			} else {
				err = ndjsonBlock(runs[path], cfg.wsTurns)
			}
			if err != nil {
				return err
			}
			runs[path].endRound()
		}
		last := func(xs []float64) string {
			if len(xs) == 0 {
				return "n/a"
			}
			return fmtMS(xs[len(xs)-1])
		}
		b.logf("ws round %d: end median NDJSON %s, /ws %s; CPU per turn %s, %s", rnd+1,
			last(runs[0].endRounds), last(runs[1].endRounds), fmtCPURound(runs[0].cpu), fmtCPURound(runs[1].cpu))
	}
	for path, p := range runs {
		p.rep.Path = wsPathNames[path]
		p.rep.FirstUIRoundsMS, p.rep.EndRoundsMS = p.firstRounds, p.endRounds
		if len(p.endRounds) > 0 {
			p.rep.FirstUIMS, p.rep.EndMS = ptr(statOf(p.firstRounds, 3)), ptr(statOf(p.endRounds, 3))
			p.rep.ResponseBytes = ptr(int64(statOf(p.bytes, 0).Median))
		}
		if p.cpuOK {
			p.rep.CPUPerTurnMS = b.cpuPerTurn("ws "+wsPathNames[path], "--ws-turns", p.cpu, p.ticks)
		}
		b.noteFailures("ws "+p.rep.Path, p.rep.Errors, p.rep.Turns, p.rep.FirstError)
	}
	if ns := runs[wsPathWS].newSessionMS; len(ns) > 0 {
		rep.NewSessionCPUMS = ptr(statOf(ns, 4).Median)
	}
	rep.NDJSON, rep.WS = runs[wsPathNDJSON].rep, runs[wsPathWS].rep
	n, w := &rep.NDJSON, &rep.WS
	ratio := medianRatio
	added := func(x, y *a2uiStat) *float64 { return medianAdded(x, y, 4) }
	perRound := func(x, y []float64) []float64 {
		if len(x) != len(y) {
			return nil // a round without a successful turn of a path
		}
		out := make([]float64, len(x))
		for i := range x {
			if y[i] > 0 {
				out[i] = round(x[i]/y[i], 3)
			}
		}
		return out
	}
	rep.FirstUIRatio, rep.EndRatio = ratio(w.FirstUIMS, n.FirstUIMS), ratio(w.EndMS, n.EndMS)
	rep.AddedFirstUIMS, rep.AddedEndMS = added(w.FirstUIMS, n.FirstUIMS), added(w.EndMS, n.EndMS)
	rep.FirstUIRatioRounds, rep.EndRatioRounds = perRound(w.FirstUIRoundsMS, n.FirstUIRoundsMS), perRound(w.EndRoundsMS, n.EndRoundsMS)
	if w.CPUPerTurnMS != nil && n.CPUPerTurnMS != nil {
		if *n.CPUPerTurnMS > 0 {
			rep.CPURatio = ptr(round(*w.CPUPerTurnMS / *n.CPUPerTurnMS, 3))
			rep.AddedCPUPerTurnMS = ptr(round(*w.CPUPerTurnMS-*n.CPUPerTurnMS, 4))
		} else {
			b.note("ws: the NDJSON turns took less than one CPU tick (10 ms) per round: no CPU ratio (raise --ws-turns)")
		}
	}
	within := func(x *float64) bool { return x != nil && *x <= wsTargetRatio }
	rep.TurnsPass = n.Errors == 0 && w.Errors == 0 && within(rep.FirstUIRatio) && within(rep.EndRatio)
	return nil
}

// cpuRound records the server's CPU per turn over a block of n turns.
func (p *wsPathRun) cpuRound(cpu0, cpu1 time.Duration, ok bool, n int) {
	if !ok {
		p.cpuOK = false
		return
	}
	p.ticks = append(p.ticks, int((cpu1-cpu0)*clockTick/time.Second))
	v := msOf((cpu1 - cpu0) / time.Duration(n))
	p.cpu = append(p.cpu, v)
	p.rep.CPUPerTurnRoundsMS = append(p.rep.CPUPerTurnRoundsMS, v)
}

// writeWS prints the ws phase.
func writeWS(p func(string, ...any), w *WSReport) {
	verdict := func(ok bool) string {
		if ok {
			return "pass"
		}
		return "FAIL"
	}
	list := func(xs []float64, prec int, unit string) string {
		if len(xs) == 0 {
			return "n/a"
		}
		s := make([]string, len(xs))
		for i, x := range xs {
			s[i] = strconv.FormatFloat(x, 'f', prec, 64) + unit
		}
		return strings.Join(s, " / ")
	}
	spec := "the sessionId of a /startSession session with the basic catalog"
	if w.Session == wsSpecCatalog {
		spec = "the basic catalog inline"
	}
	p("")
	p("WS (GET /ws, JSON-RPC 2.0 over WebSocket; new_session carries %s)", spec)
	p("idle connections, each with initialize and new_session (server RSS, median of 5 samples)")
	p("round\tconnections\terr\topen\tRSS before -> after\tper connection\tclosed\tsessions left after 10 s")
	for i, r := range w.IdleRounds {
		left := "n/a"
		if r.SessionsLeft != nil {
			left = strconv.FormatInt(*r.SessionsLeft, 10)
		}
		fresh := ""
		if r.FreshServer {
			fresh = " (fresh server)"
		}
		p("%d%s\t%d\t%d\t%.2f s\t%s -> %s\t%s\t%d\t%s", i+1, fresh, r.Connections, r.Errors, r.OpenS,
			fmtBytesp(r.RSSBeforeBytes), fmtBytesp(r.RSSAfterBytes), fmtBytesp(r.BytesPerConnection), r.Closed, left)
	}
	target := targetWSIdle
	if w.IdlePass != nil {
		target += ": " + verdict(*w.IdlePass)
	}
	p("idle connection with one session (median over the rounds)\t%s\t%s", fmtBytesp(w.IdleBytesPerConnection), target)
	if pr := w.IdleProfile; pr != nil {
		p("profile (pprof, forced GC; %d connections): per connection %.2f goroutines, live heap %s, heap in use %s, stacks %s, conversation store %s",
			pr.Connections, pr.GoroutinesPerConnection, fmtBytes(pr.LiveHeapBytesPerConnection), fmtBytes(pr.HeapInuseBytesPerConnection),
			fmtBytes(pr.StackBytesPerConnection), fmtBytesp(pr.StoreBytesPerConnection))
		if len(pr.Files) > 0 {
			p("profiles: %s", strings.Join(pr.Files, ", "))
		}
	}
	base := "held: a new conversationId per turn"
	if w.Baseline == "stateless" {
		base = "stateless"
	}
	p("the same turn as a /ws prompt (a new session per turn, made before the turns are timed) and as /generateUi NDJSON (%s);", base)
	p("%d round(s) of %d turns per path, one at a time; ms from request; median over the rounds of each round's median [min-max]", w.Rounds, w.TurnsPerRound)
	p("path\tturns\terr\tfirst UI update\tend\tCPU/turn (median)\tCPU/turn per round\tresponse")
	stat := func(s *a2uiStat) string {
		if s == nil {
			return "n/a"
		}
		return fmtStat(*s, 3, "")
	}
	for _, v := range []*WSPathReport{&w.NDJSON, &w.WS} {
		p("%s\t%d\t%d\t%s\t%s\t%s\t%s\t%s", v.Path, v.Turns, v.Errors, stat(v.FirstUIMS), stat(v.EndMS), fmtMSp(v.CPUPerTurnMS),
			list(v.CPUPerTurnRoundsMS, 3, ""), fmtBytesp(v.ResponseBytes))
	}
	p("CPU per new_session (/ws, connection set-up included): %s", fmtMSp(w.NewSessionCPUMS))
	p("/ws against NDJSON (medians over the rounds)")
	p("figure\t/ws / NDJSON\tadded by /ws\tper round\ttarget")
	row := func(name string, ratio, added *float64, rounds []float64, target string) {
		r := "n/a"
		if ratio != nil {
			r = fmt.Sprintf("%.3fx", *ratio)
			if target != "" {
				target += ": " + verdict(*ratio <= w.TargetRatio)
			}
		}
		p("%s\t%s\t%s\t%s\t%s", name, r, fmtMSp(added), list(rounds, 3, "x"), target)
	}
	row("first UI update", w.FirstUIRatio, w.AddedFirstUIMS, w.FirstUIRatioRounds, targetWS)
	row("end", w.EndRatio, w.AddedEndMS, w.EndRatioRounds, targetWS)
	row("CPU per turn", w.CPURatio, w.AddedCPUPerTurnMS, nil, "")
}
