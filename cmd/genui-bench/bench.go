package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/genai"

	"github.com/genuiserver/genui/schemas"
)

// bench holds what every phase shares: the fake model, the clients and the target.
type bench struct {
	cfg     *config
	stderr  io.Writer
	fake    *fakeModel
	hc      *http.Client // keep-alive client for turns and sessions
	gc      *genai.Client
	ghc     *http.Client // the genai client's
	bin     string       // child mode: the server binary
	tmp     string
	tgt     *target
	catalog []byte // compact basic catalog
	fdLimit uint64
	rep     *Report
}

func newBench(ctx context.Context, cfg *config, stderr io.Writer) (_ *bench, err error) {
	b := &bench{cfg: cfg, stderr: stderr, hc: newHTTPClient(nil), ghc: newHTTPClient(nil)}
	defer func() {
		if err != nil {
			b.close()
		}
	}()
	cat, err := schemas.SampleCatalog("basic")
	if err != nil {
		return nil, err
	}
	if b.catalog, err = json.Marshal(cat); err != nil {
		return nil, err
	}
	// Each open stream costs about two descriptors here (client and fake model side).
	want := uint64(2*cfg.streams + 1024)
	if cfg.streams10k && cfg.has("streams") {
		want = max(want, 2*10000+1024)
	}
	if cfg.has("ws") {
		// One descriptor per idle /ws connection here, and as many in the child server.
		want = max(want, uint64(cfg.wsConns)+1024)
	}
	if cfg.has("floor") {
		// One descriptor per stream here, and as many in the floor's proxy.
		want = max(want, uint64(slices.Max(cfg.openLevels))+1024)
	}
	b.fdLimit = raiseFileLimit(want)
	pace := a2uiPace{chunkTokens: cfg.a2uiChunkTokens, tokensPerS: cfg.a2uiTokensPerS, latency: cfg.a2uiLatency,
		a2aTokensPerS: cfg.a2aTokensPerS, openTokensPerS: cfg.openTokensPerS, openLatency: cfg.openLatency,
		rowsTokensPerS: cfg.rowsTokensPerS}
	if cfg.has("rows") {
		pace.rowsLevels = cfg.rowsLevels // the scripts are built only for the phase
	}
	if b.fake, err = newFakeModel(cfg.fakeAddr, cfg.modelLatency, cfg.pacing, cfg.streamLatency, cfg.textChunks, pace); err != nil {
		return nil, err
	}
	b.gc, err = genai.NewClient(ctx, &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI,
		HTTPClient: b.ghc, HTTPOptions: genai.HTTPOptions{BaseURL: b.fake.URL()}})
	if err != nil {
		return nil, fmt.Errorf("genai client: %w", err)
	}
	switch {
	case cfg.url == "" && cfg.needsServer():
		if b.bin = cfg.serverBin; b.bin == "" {
			if b.tmp, err = os.MkdirTemp("", "genui-bench-"); err != nil {
				return nil, err
			}
			b.logf("building ./cmd/genui-server")
			if b.bin, err = buildServer(ctx, b.tmp); err != nil {
				return nil, err
			}
		}
	case cfg.url != "":
		b.logf("fake Gemini at %s (start the server with GOOGLE_GEMINI_BASE_URL=%s)", b.fake.URL(), b.fake.URL())
		if b.tgt, err = urlTarget(ctx, b.hc, cfg.url, cfg.pid); err != nil {
			return nil, err
		}
	}
	return b, nil
}

func (b *bench) close() {
	b.tgt.Close()
	if b.fake != nil {
		b.fake.Close()
	}
	b.hc.CloseIdleConnections()
	b.ghc.CloseIdleConnections()
	if b.tmp != "" {
		_ = os.RemoveAll(b.tmp)
	}
}

// tempDir makes a directory under the bench's temporary directory.
func (b *bench) tempDir(prefix string) (string, error) {
	if b.tmp == "" {
		var err error
		if b.tmp, err = os.MkdirTemp("", "genui-bench-"); err != nil {
			return "", err
		}
	}
	return os.MkdirTemp(b.tmp, prefix)
}

func (b *bench) logf(format string, a ...any) {
	fmt.Fprintf(b.stderr, "genui-bench: "+format+"\n", a...)
}

func (b *bench) note(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	b.rep.Notes = append(b.rep.Notes, msg)
	b.logf("note: %s", msg)
}

// server returns the target for a phase: in child mode a fresh child unless --fresh=false.
func (b *bench) server(ctx context.Context) (*target, error) { return b.serverWith(ctx) }

// serverWith is server with extra flags for a fresh child.
func (b *bench) serverWith(ctx context.Context, extra ...string) (*target, error) {
	if b.cfg.url != "" {
		return b.tgt, nil
	}
	if b.tgt != nil {
		if err := b.tgt.alive(); err != nil {
			return nil, err
		}
		if !b.cfg.fresh {
			return b.tgt, nil
		}
		b.tgt.Close()
		b.tgt = nil
		b.hc.CloseIdleConnections()
	}
	t, err := startChild(ctx, b.hc, b.bin, b.childArgs(extra...), b.fake.URL())
	if err != nil {
		return nil, err
	}
	b.tgt = t
	b.rep.Target.PID, b.rep.Target.URL, b.rep.Target.Model = t.pid, t.base, t.model
	return t, nil
}

// childArgs are the flags of a child server: the base flags, extra, then --server-args.
func (b *bench) childArgs(extra ...string) []string {
	args := []string{"--model", b.cfg.model, "--log-level", "warn",
		"--sessions", strconv.Itoa(max(10000, b.cfg.sessions+1000, b.cfg.catalogs+1000))}
	return append(append(args, extra...), b.cfg.serverArgs...)
}

func (b *bench) run(ctx context.Context) (*Report, error) {
	cfg := b.cfg
	cpus, gov := hostInfo()
	b.rep = &Report{
		Schema:    "genui-bench/1",
		StartedAt: time.Now().UTC().Format(time.RFC3339),
		Target: TargetInfo{URL: cfg.url, Mode: "child", PID: cfg.pid, FakeModelURL: b.fake.URL(),
			CPUs: cpus, GoVersion: gov, FDLimit: b.fdLimit},
		Settings: Settings{Phases: cfg.phases, Format: cfg.format.String(), Turns: cfg.turns,
			LatencyConcurrency: cfg.latencyConc, PhaseDurationS: cfg.duration.Seconds(), Concurrency: cfg.concurrency,
			ModelLatencyMS: msOf(cfg.modelLatency), PacingMS: msOf(cfg.pacing), TextChunks: cfg.textChunks,
			Sessions: cfg.sessions, SessionConcurrency: cfg.sessionConc, Catalogs: cfg.catalogs, CatalogBytes: cfg.catalogBytes,
			CatalogConcurrency: cfg.catalogConc, Streams: cfg.streams,
			StreamModelLatencyS: cfg.streamLatency.Seconds(), FreshServerPerPhase: cfg.url == "" && cfg.fresh,
			A2UITurns: cfg.a2uiTurns, A2UIVersions: cfg.a2uiVersions, A2UITokensPerS: cfg.a2uiTokensPerS,
			A2UIChunkTokens: cfg.a2uiChunkTokens, A2UIModelLatencyMS: msOf(cfg.a2uiLatency),
			ConvTurns: cfg.convTurns, ConvConversations: cfg.convConversations, ConvLength: cfg.convLength, ConvRounds: cfg.convRounds,
			A2ATurns: cfg.a2aTurns, A2ARounds: cfg.a2aRounds, A2ATokensPerS: cfg.a2aTokensPerS, A2ABaseline: cfg.a2aBaseline,
			WSConnections: cfg.wsConns, WSIdleRounds: cfg.wsIdleRounds, WSTurns: cfg.wsTurns, WSRounds: cfg.wsRounds,
			WSBaseline: cfg.wsBaseline, WSSession: cfg.wsSession,
			RedisConcurrency: cfg.redisConc, RedisDurationS: cfg.redisDuration.Seconds(), RedisLatencyTurns: cfg.redisLatencyTurns,
			RedisRounds: cfg.redisRounds, PolicyTurns: cfg.policyTurns, PolicyRounds: cfg.policyRounds,
			RowsLevels: cfg.rowsLevels, RowsTokensPerS: cfg.rowsTokensPerS, RowsBaselineBin: cfg.rowsBaselineBin,
			TransportsTurns: cfg.transportsTurns, TransportsRounds: cfg.transportsRounds, TransportsBaselineBin: cfg.transportsBaselineBin},
		Notes: []string{},
	}
	switch {
	case cfg.url != "":
		b.rep.Target.Mode = "url"
		b.rep.Target.Model = b.tgt.model
		if cfg.pid == 0 {
			b.note("no --pid: RSS and CPU figures are unavailable")
		}
	case !cfg.needsServer():
		b.rep.Target.Mode = "none"
	}
	b.rep.Target.ProcStats = (cfg.url == "" && cfg.needsServer()) || cfg.pid != 0
	for _, phase := range cfg.phases {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if phase == "floor" {
			// It starts its own servers and measures no genui server.
			if err := b.runFloor(ctx); err != nil {
				return nil, err
			}
			continue
		}
		if phase == "policy" {
			// It starts its own pair of servers, which a URL cannot give.
			if err := b.runPolicy(ctx); err != nil {
				return nil, err
			}
			continue
		}
		if phase == "transports" {
			// It starts its own servers, the one under test and the baseline.
			if err := b.runTransports(ctx); err != nil {
				return nil, err
			}
			continue
		}
		if phase == "rows" && cfg.url == "" {
			// It starts a fresh server for each turn.
			if err := b.runRows(ctx); err != nil {
				return nil, err
			}
			continue
		}
		var extra []string
		if phase == "open" && cfg.openH2C {
			extra = append(extra, "--model-h2c") // the model over one HTTP/2 connection
		}
		t, err := b.serverWith(ctx, extra...)
		if err != nil {
			return nil, err
		}
		if b.rep.Target.UsesFakeModel == nil {
			if err := b.checkFake(ctx, t); err != nil {
				return nil, err
			}
		}
		began := time.Now()
		b.logf("phase %s (server %s, pid %d)", phase, t.base, t.pid)
		switch phase {
		case "latency":
			b.rep.Latency, err = b.latency(ctx, t)
		case "throughput":
			b.rep.Throughput, err = b.throughput(ctx, t)
		case "sessions":
			b.rep.Sessions, err = b.sessions(ctx, t)
		case "catalogs":
			b.rep.Catalogs, err = b.catalogs(ctx, t)
		case "streams":
			if !*b.rep.Target.UsesFakeModel {
				b.note("streams phase skipped: the server does not call the bench's fake model, so no model call can be held")
				continue
			}
			if b.rep.Streams, err = b.streams(ctx, t, cfg.streams); err == nil && cfg.streams10k {
				if t, err = b.server(ctx); err == nil {
					b.rep.Streams10k, err = b.streams(ctx, t, 10000)
				}
			}
		case "bytes":
			b.rep.Bytes, err = b.bytes(ctx, t)
		case "a2ui":
			if !*b.rep.Target.UsesFakeModel {
				b.note("a2ui phase skipped: the server does not call the bench's fake model, which writes the A2UI surface")
				continue
			}
			b.rep.A2UI, err = b.a2ui(ctx, t)
		case "conversations":
			if !*b.rep.Target.UsesFakeModel {
				b.note("conversations phase skipped: the server does not call the bench's fake model, which calls the client tool")
				continue
			}
			b.rep.Conversations, err = b.conversations(ctx, t)
		case "a2a":
			if !*b.rep.Target.UsesFakeModel {
				b.note("a2a phase skipped: the server does not call the bench's fake model, which writes the A2UI surface")
				continue
			}
			b.rep.A2A, err = b.a2a(ctx, t)
		case "ws":
			if !*b.rep.Target.UsesFakeModel {
				b.note("ws phase skipped: the server does not call the bench's fake model, so its turns are not comparable")
				continue
			}
			b.rep.WS, err = b.ws(ctx, t)
			if err == nil {
				t = b.tgt // the phase starts fresh servers of its own
			}
		case "open":
			if !*b.rep.Target.UsesFakeModel {
				b.note("open phase skipped: the server does not call the bench's fake model, which paces the streams")
				continue
			}
			b.rep.Open, err = b.open(ctx, t)
		case "rows":
			if !*b.rep.Target.UsesFakeModel {
				b.note("rows phase skipped: the server does not call the bench's fake model, which writes the rows")
				continue
			}
			b.rep.Rows, err = b.rows(ctx)
		case "redis":
			if !*b.rep.Target.UsesFakeModel {
				b.note("redis phase skipped: the server does not call the bench's fake model, so its turns are not comparable")
				continue
			}
			b.rep.Redis, err = b.redisPhase(ctx)
		}
		if err == nil {
			err = t.alive()
		}
		if err != nil {
			return nil, fmt.Errorf("phase %s: %w", phase, err)
		}
		b.logf("phase %s done in %s", phase, time.Since(began).Round(100*time.Millisecond))
	}
	b.summarise()
	return b.rep, nil
}

// runFloor runs the floor phase, which needs no genui server.
func (b *bench) runFloor(ctx context.Context) error {
	began := time.Now()
	b.logf("phase floor (net/http alone: a proxy to the fake model, a child of the bench)")
	var err error
	if b.rep.Floor, err = b.floor(ctx); err != nil {
		return fmt.Errorf("phase floor: %w", err)
	}
	b.logf("phase floor done in %s", time.Since(began).Round(100*time.Millisecond))
	return nil
}

// runPolicy runs the policy phase, which starts its own servers (child mode only).
func (b *bench) runPolicy(ctx context.Context) error {
	if b.cfg.url != "" {
		b.note("policy phase skipped: it compares two servers it starts itself (the UI policy on and --policy-off all); with --url there is one server, and nothing to compare it with")
		return nil
	}
	b.closeChild()
	began := time.Now()
	b.logf("phase policy (two servers of its own: the default UI policy, --policy-off all)")
	var err error
	if b.rep.Policy, err = b.policy(ctx); err != nil {
		return fmt.Errorf("phase policy: %w", err)
	}
	b.logf("phase policy done in %s", time.Since(began).Round(100*time.Millisecond))
	return nil
}

// runTransports runs the transports phase, which starts its own servers (child mode
// only).
func (b *bench) runTransports(ctx context.Context) error {
	if b.cfg.url != "" {
		b.note("transports phase skipped: it starts its own servers (the one under test and --transports-baseline-bin) side by side; with --url there is no binary to start")
		return nil
	}
	b.closeChild()
	began := time.Now()
	if b.cfg.transportsBaselineBin != "" {
		b.logf("phase transports (two servers of its own: the one under test and %s)", b.cfg.transportsBaselineBin)
	} else {
		b.logf("phase transports (a server of its own; no --transports-baseline-bin to compare it with)")
	}
	var err error
	if b.rep.Transports, err = b.transports(ctx); err != nil {
		return fmt.Errorf("phase transports: %w", err)
	}
	b.logf("phase transports done in %s", time.Since(began).Round(100*time.Millisecond))
	return nil
}

// runRows runs the rows phase in child mode, where it starts a fresh server for each
// turn.
func (b *bench) runRows(ctx context.Context) error {
	b.closeChild()
	began := time.Now()
	b.logf("phase rows (a fresh server per turn)")
	var err error
	if b.rep.Rows, err = b.rows(ctx); err != nil {
		return fmt.Errorf("phase rows: %w", err)
	}
	b.logf("phase rows done in %s", time.Since(began).Round(100*time.Millisecond))
	return nil
}

// checkFake runs one turn and tells whether it reached the fake model.
func (b *bench) checkFake(ctx context.Context, t *target) error {
	id, err := startSession(ctx, b.hc, t.base, sessionBody(b.catalog), b.cfg.timeout)
	if err != nil {
		return fmt.Errorf("the server refused a session with the basic catalog: %w", err)
	}
	before := b.fake.calls.Load()
	r := turn(ctx, b.hc, t.base, b.cfg.format, turnBody(id, "Show me a form"), b.turnTimeout())
	uses := b.fake.calls.Load() > before
	b.rep.Target.UsesFakeModel = &uses
	if !uses {
		b.note("the server did not call the bench's fake model (point its GOOGLE_GEMINI_BASE_URL at %s): "+
			"added latency compares its own model with the fake", b.fake.URL())
	}
	if r.err != nil {
		return fmt.Errorf("a first turn failed: %w", r.err)
	}
	return nil
}

func (b *bench) turnTimeout() time.Duration {
	return b.cfg.timeout + b.cfg.modelLatency + b.cfg.pacing*time.Duration(b.cfg.textChunks)
}

// cpu returns the server's CPU time, or false without a pid.
func cpuOf(t *target) (time.Duration, bool) {
	if t.pid == 0 {
		return 0, false
	}
	d, err := readCPU(t.pid)
	return d, err == nil
}

func selfCPU() time.Duration {
	d, _ := readCPU(os.Getpid())
	return d
}

// runLoad runs fn on c workers. With n > 0 it stops after n calls in all; it always
// stops starting calls at the deadline. It returns the results and the time until the
// last call ended.
func runLoad[R any](ctx context.Context, c, n int, deadline time.Time, fn func(context.Context) R) ([]R, time.Duration) {
	var next atomic.Int64
	per := make([][]R, c)
	var wg sync.WaitGroup
	start := time.Now()
	for w := range c {
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(deadline) {
				if n > 0 && next.Add(1) > int64(n) {
					return
				}
				per[w] = append(per[w], fn(ctx))
			}
		})
	}
	wg.Wait()
	return slices.Concat(per...), time.Since(start)
}

func (b *bench) warmSession(ctx context.Context, t *target) (string, error) {
	return startSession(ctx, b.hc, t.base, sessionBody(b.catalog), b.cfg.timeout)
}

// directCall is one model call straight to the fake with the genai client.
func (b *bench) directCall(ctx context.Context) (r turnResult) {
	ctx, cancel := context.WithTimeout(ctx, b.turnTimeout())
	defer cancel()
	contents := genai.Text("Show me a form")
	start := time.Now()
	for resp, err := range b.gc.Models.GenerateContentStream(ctx, fakeModelName, contents, nil) {
		if err != nil {
			r.err = err
			return r
		}
		if r.ttfc == 0 && len(resp.FunctionCalls()) > 0 {
			r.ttfc = time.Since(start)
		}
	}
	r.end = time.Since(start)
	if r.ttfc == 0 {
		r.err = fmt.Errorf("direct call: no function call")
	}
	return r
}

// split returns the sorted ttfc and end times of the successful results, and the errors.
func split(rs []turnResult) (ttfc, end []time.Duration, errs int, first error) {
	for _, r := range rs {
		if r.err != nil {
			errs++
			if first == nil {
				first = r.err
			}
			continue
		}
		ttfc = append(ttfc, r.ttfc)
		end = append(end, r.end)
	}
	slices.Sort(ttfc)
	slices.Sort(end)
	return ttfc, end, errs, first
}

// serverTurn warms a session and returns a function running one turn of it through the
// server.
func (b *bench) serverTurn(ctx context.Context, t *target) (func(context.Context) turnResult, error) {
	id, err := b.warmSession(ctx, t)
	if err != nil {
		return nil, err
	}
	body := turnBody(id, "Show me a form")
	return func(ctx context.Context) turnResult {
		return turn(ctx, b.hc, t.base, b.cfg.format, body, b.turnTimeout())
	}, nil
}

func (b *bench) latency(ctx context.Context, t *target) (*LatencyReport, error) {
	cfg := b.cfg
	server, err := b.serverTurn(ctx, t)
	if err != nil {
		return nil, err
	}
	rep := &LatencyReport{Format: cfg.format.String()}
	levels := []int{1}
	if cfg.latencyConc != 1 {
		levels = append(levels, cfg.latencyConc)
	}
	for _, c := range levels {
		// Warm up both paths: one connection per client, the server's first turns.
		far := time.Now().Add(cfg.phaseLimit)
		runLoad(ctx, c, max(20, 2*c), far, server)
		runLoad(ctx, c, max(20, 2*c), far, b.directCall)
		b.logf("latency: %d turns at concurrency %d through the server, then direct", cfg.turns, c)
		cpu0, okCPU := cpuOf(t)
		limit := time.Now().Add(cfg.phaseLimit)
		srs, selapsed := runLoad(ctx, c, cfg.turns, limit, server)
		cpu1, _ := cpuOf(t)
		limitHit := time.Now().After(limit)
		drs, delapsed := runLoad(ctx, c, cfg.turns, time.Now().Add(cfg.phaseLimit), b.directCall)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st, se, serrs, sfirst := split(srs)
		dt, de, derrs, dfirst := split(drs)
		if sfirst != nil {
			b.note("latency c=%d: %d of %d turns failed, first: %v", c, serrs, len(srs), sfirst)
		}
		if dfirst != nil {
			b.note("latency c=%d: %d of %d direct calls failed, first: %v", c, derrs, len(drs), dfirst)
		}
		if len(st) == 0 || len(dt) == 0 {
			return nil, fmt.Errorf("latency c=%d: no successful turn (server: %v, direct: %v)", c, sfirst, dfirst)
		}
		v := LatencyLevel{Concurrency: c, Turns: len(srs), Errors: serrs, DirectCalls: len(drs), DirectErrors: derrs,
			ServerTTFCP50MS: msOf(pct(st, .50)), ServerTTFCP90MS: msOf(pct(st, .90)), ServerTTFCP99MS: msOf(pct(st, .99)),
			ServerEndP50MS: msOf(pct(se, .50)), ServerEndP90MS: msOf(pct(se, .90)), ServerEndP99MS: msOf(pct(se, .99)),
			DirectTTFCP50MS: msOf(pct(dt, .50)), DirectTTFCP90MS: msOf(pct(dt, .90)), DirectTTFCP99MS: msOf(pct(dt, .99)),
			DirectEndP50MS: msOf(pct(de, .50)), DirectEndP90MS: msOf(pct(de, .90)), DirectEndP99MS: msOf(pct(de, .99)),
			ServerTurnsPerS: round(float64(len(st))/selapsed.Seconds(), 1), DirectCallsPerS: round(float64(len(dt))/delapsed.Seconds(), 1),
			ServerElapsedS: round(selapsed.Seconds(), 3), DirectElapsedS: round(delapsed.Seconds(), 3), ServerPhaseLimitHit: limitHit,
		}
		v.AddedTTFCP50MS = msOf(pct(st, .50) - pct(dt, .50))
		v.AddedTTFCP90MS = msOf(pct(st, .90) - pct(dt, .90))
		v.AddedTTFCP99MS = msOf(pct(st, .99) - pct(dt, .99))
		v.AddedEndP50MS = msOf(pct(se, .50) - pct(de, .50))
		v.AddedEndP90MS = msOf(pct(se, .90) - pct(de, .90))
		v.AddedEndP99MS = msOf(pct(se, .99) - pct(de, .99))
		if okCPU && len(srs) > 0 {
			v.ServerCPUPerTurnMS = ptr(msOf((cpu1 - cpu0) / time.Duration(len(srs))))
		}
		if limitHit {
			b.note("latency c=%d: --phase-limit %s reached after %d turns", c, cfg.phaseLimit, len(srs))
		}
		rep.Levels = append(rep.Levels, v)
	}
	return rep, nil
}

func (b *bench) throughput(ctx context.Context, t *target) (*ThroughputReport, error) {
	cfg := b.cfg
	server, err := b.serverTurn(ctx, t)
	if err != nil {
		return nil, err
	}
	runLoad(ctx, 1, 20, time.Now().Add(cfg.phaseLimit), server)
	rep := &ThroughputReport{Format: cfg.format.String(), DurationS: cfg.duration.Seconds()}
	var cpuAll, benchAll time.Duration
	turnsAll, okCPU := 0, t.pid != 0
	for _, c := range cfg.concurrency {
		b.logf("throughput: concurrency %d for %s", c, cfg.duration)
		var sampler *rssSampler
		hwmReset := false
		if t.pid != 0 {
			hwmReset = resetPeak(t.pid) == nil
			sampler = sampleRSS(t.pid)
		}
		cpu0, ok0 := cpuOf(t)
		self0 := selfCPU()
		rs, elapsed := runLoad(ctx, c, 0, time.Now().Add(cfg.duration), server)
		cpu1, ok1 := cpuOf(t)
		self1 := selfCPU()
		var peak *int64
		if sampler != nil {
			p := sampler.Stop()
			if _, hwm, err := readRSS(t.pid); err == nil && hwmReset {
				p = max(p, hwm)
			}
			if p > 0 {
				peak = &p
			}
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		st, se, errs, first := split(rs)
		if first != nil {
			b.note("throughput c=%d: %d of %d turns failed, first: %v", c, errs, len(rs), first)
		}
		v := ThroughputLevel{Concurrency: c, Turns: len(st), Errors: errs, ElapsedS: round(elapsed.Seconds(), 3),
			TurnsPerS: round(float64(len(st))/elapsed.Seconds(), 1), TTFCP50MS: msOf(pct(st, .5)), TTFCP99MS: msOf(pct(st, .99)),
			EndP99MS: msOf(pct(se, .99)), PeakRSSBytes: peak}
		if len(st) > 0 {
			if ok0 && ok1 {
				v.CPUPerTurnMS = ptr(msOf((cpu1 - cpu0) / time.Duration(len(st))))
			}
			v.BenchCPUPerTurnMS = msOf((self1 - self0) / time.Duration(len(st)))
		}
		okCPU = okCPU && ok0 && ok1
		cpuAll += cpu1 - cpu0
		benchAll += self1 - self0
		turnsAll += len(st)
		rep.Levels = append(rep.Levels, v)
		b.logf("throughput: concurrency %d: %.0f turns/s, %d errors", c, v.TurnsPerS, errs)
	}
	if turnsAll > 0 {
		if okCPU {
			rep.CPUPerTurnMS = ptr(msOf(cpuAll / time.Duration(turnsAll)))
		}
		rep.BenchCPUMS = msOf(benchAll / time.Duration(turnsAll))
	}
	return rep, nil
}

func (b *bench) sessions(ctx context.Context, t *target) (*SessionsReport, error) {
	cfg := b.cfg
	body := sessionBody(b.catalog)
	// The first session compiles the catalog, which every later one shares.
	if _, err := b.warmSession(ctx, t); err != nil {
		return nil, err
	}
	rep := &SessionsReport{Sessions: cfg.sessions, Concurrency: cfg.sessionConc}
	var before int64
	if t.pid != 0 {
		time.Sleep(300 * time.Millisecond)
		var err error
		if before, err = medianRSS(ctx, t.pid, 5, 100*time.Millisecond); err != nil {
			return nil, err
		}
		rep.RSSBeforeBytes = &before
	}
	b.logf("sessions: creating %d sessions at concurrency %d", cfg.sessions, cfg.sessionConc)
	cpu0, ok0 := cpuOf(t)
	limit := time.Now().Add(cfg.phaseLimit)
	rs, elapsed := runLoad(ctx, cfg.sessionConc, cfg.sessions, limit, func(ctx context.Context) error {
		_, err := startSession(ctx, b.hc, t.base, body, cfg.timeout)
		return err
	})
	cpu1, ok1 := cpuOf(t)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.PhaseLimitHit = len(rs) < cfg.sessions
	var first error
	for _, err := range rs {
		if err != nil {
			rep.Errors++
			first = cmpErr(first, err)
		}
	}
	created := len(rs) - rep.Errors
	if first != nil {
		b.note("sessions: %d of %d failed, first: %v", rep.Errors, len(rs), first)
	}
	if rep.PhaseLimitHit {
		b.note("sessions: --phase-limit %s reached after %d sessions", cfg.phaseLimit, len(rs))
	}
	rep.CreatedPerS = round(float64(created)/elapsed.Seconds(), 1)
	if created > 0 && ok0 && ok1 {
		rep.CPUPerSessionMS = ptr(msOf((cpu1 - cpu0) / time.Duration(created)))
	}
	if t.pid != 0 && created > 0 {
		time.Sleep(time.Second)
		after, err := medianRSS(ctx, t.pid, 5, 100*time.Millisecond)
		if err != nil {
			return nil, err
		}
		rep.RSSAfterBytes = &after
		rep.BytesPerSession = ptr((after - before) / int64(created))
	}
	return rep, nil
}

func cmpErr(first, err error) error {
	if first == nil {
		return err
	}
	return first
}

// streams holds n turns open on the slow model and measures the server's RSS per stream.
func (b *bench) streams(ctx context.Context, t *target, n int) (*StreamsReport, error) {
	cfg := b.cfg
	rep := &StreamsReport{Streams: n, FDLimit: b.fdLimit}
	if need := uint64(2*n + 256); b.fdLimit < need {
		b.note("streams %d: the descriptor limit is %d, about %d are needed here and in the server: expect errors", n, b.fdLimit, need)
	}
	id, err := b.warmSession(ctx, t)
	if err != nil {
		return nil, err
	}
	if r := turn(ctx, b.hc, t.base, formatNDJSON, turnBody(id, "Show me a form"), b.turnTimeout()); r.err != nil {
		return nil, fmt.Errorf("warm-up turn: %w", r.err)
	}
	var before int64
	if t.pid != 0 {
		time.Sleep(300 * time.Millisecond)
		if before, err = medianRSS(ctx, t.pid, 5, 100*time.Millisecond); err != nil {
			return nil, err
		}
		rep.RSSBeforeBytes = &before
	}
	b.logf("streams: opening %d streams on a model that answers after %s", n, cfg.streamLatency)
	hc := newHTTPClient(nil) // its own connections, all closed at the end
	defer hc.CloseIdleConnections()
	sctx, cancelAll := context.WithCancel(ctx)
	defer cancelAll()
	body := turnBody(id, holdMarker+": keep this stream open")
	type stream struct {
		res *http.Response
		id  string
		err error
	}
	out := make([]stream, n)
	var opened atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 256) // connections being opened at once
	start := time.Now()
	for i := range out {
		wg.Go(func() {
			select {
			case sem <- struct{}{}:
			case <-sctx.Done():
				out[i].err = sctx.Err()
				return
			}
			res, err := postJSON(sctx, hc, t.base+formatNDJSON.path(), body, formatNDJSON.accept())
			<-sem
			if err != nil {
				out[i].err = err
				return
			}
			out[i].res, out[i].id = res, res.Header.Get("X-Genkit-Stream-Id")
			opened.Add(1)
		})
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(cfg.phaseLimit):
		b.note("streams %d: --phase-limit %s reached while opening", n, cfg.phaseLimit)
		cancelAll()
		<-done
	case <-ctx.Done():
		cancelAll()
		<-done
		return nil, ctx.Err()
	}
	rep.OpenS = round(time.Since(start).Seconds(), 2)
	rep.Opened = int(opened.Load())
	for _, s := range out {
		if s.err != nil {
			rep.Errors++
			if rep.FirstError == "" {
				rep.FirstError = s.err.Error()
			}
		}
	}
	if rep.Errors > 0 {
		b.note("streams %d: %d failed to open, first: %s", n, rep.Errors, rep.FirstError)
	}
	// Every model call should now be pending in the fake.
	if !b.fake.waitHeld(ctx, int64(rep.Opened), 10*time.Second) {
		b.note("streams %d: the fake model holds %d calls for %d open streams", n, b.fake.held.Load(), rep.Opened)
	}
	if t.pid != 0 && rep.Opened > 0 {
		time.Sleep(300 * time.Millisecond)
		open, err := medianRSS(ctx, t.pid, 5, 100*time.Millisecond)
		if err != nil {
			return nil, err
		}
		rep.RSSOpenBytes = &open
		rep.BytesPerStream = ptr((open - before) / int64(rep.Opened))
	}
	rep.ModelCallsHeld = int(b.fake.held.Load())
	// An open stream whose model call is not pending failed after its headers (or the
	// server does not call the model at once): an error too.
	if missing := rep.Opened - rep.ModelCallsHeld; missing > 0 {
		rep.Errors += missing
		b.note("streams %d: %d open streams have no pending model call", n, missing)
	}
	b.logf("streams: cancelling %d streams", rep.Opened)
	var cancelled atomic.Int64
	cancelBodies := make(chan stream)
	var cw sync.WaitGroup
	allCancels, stopCancels := context.WithTimeout(ctx, 30*time.Second)
	defer stopCancels()
	for range 16 {
		cw.Go(func() {
			for s := range cancelBodies {
				if s.id == "" || allCancels.Err() != nil {
					continue
				}
				cctx, cancel := context.WithTimeout(allCancels, 5*time.Second)
				res, err := postJSON(cctx, b.hc, t.base+"/generateUi/cancel", fmt.Appendf(nil, `{"streamId":%q}`, s.id), "application/json")
				if err == nil {
					cancelled.Add(1)
					drain(res.Body)
				}
				cancel()
			}
		})
	}
	for _, s := range out {
		if s.res != nil {
			cancelBodies <- s
		}
	}
	close(cancelBodies)
	cw.Wait()
	rep.Cancelled = int(cancelled.Load())
	cancelAll()
	for _, s := range out {
		if s.res != nil {
			_ = s.res.Body.Close()
		}
	}
	if !b.fake.waitHeld(ctx, 0, 15*time.Second) {
		b.note("streams %d: %d model calls still held 15 s after cancelling", n, b.fake.held.Load())
	}
	return rep, nil
}

func (b *bench) bytes(ctx context.Context, t *target) (*BytesReport, error) {
	id, err := b.warmSession(ctx, t)
	if err != nil {
		return nil, err
	}
	body := turnBody(id, "Show me a form")
	var wire atomic.Int64
	hc := newHTTPClient(&wire)
	defer hc.CloseIdleConnections()
	rep := &BytesReport{}
	for _, f := range []format{formatNDJSON, formatSSE} {
		var bodies, wires []int64
		for i := range 11 {
			w0 := wire.Load()
			r := turn(ctx, hc, t.base, f, body, b.turnTimeout())
			if r.err != nil {
				return nil, fmt.Errorf("%s turn: %w", f, r.err)
			}
			if i > 0 { // the first one also carries the connection's set-up
				bodies, wires = append(bodies, r.body), append(wires, wire.Load()-w0)
			}
		}
		slices.Sort(bodies)
		slices.Sort(wires)
		if f == formatSSE {
			rep.SSEBodyBytes, rep.SSEWireBytes = bodies[len(bodies)/2], wires[len(wires)/2]
		} else {
			rep.NDJSONBodyBytes, rep.NDJSONWireBytes = bodies[len(bodies)/2], wires[len(wires)/2]
		}
	}
	return rep, nil
}

func (b *bench) summarise() {
	s, r := &b.rep.Summary, b.rep
	if r.Latency != nil {
		for _, v := range r.Latency.Levels {
			switch v.Concurrency {
			case 1:
				s.AddedTTFCP50C1MS = ptr(v.AddedTTFCP50MS)
			case 64:
				s.AddedTTFCP99C64MS = ptr(v.AddedTTFCP99MS)
			}
		}
	}
	if r.Throughput != nil {
		s.CPUPerTurnMS = r.Throughput.CPUPerTurnMS
		for _, v := range r.Throughput.Levels {
			switch v.Concurrency {
			case 64:
				s.TurnsPerSC64 = ptr(v.TurnsPerS)
				s.CPUPerTurnC64MS = v.CPUPerTurnMS
			case 256:
				s.PeakRSSC256Bytes = v.PeakRSSBytes
			}
		}
	}
	if r.Sessions != nil {
		s.IdleSessionBytes = r.Sessions.BytesPerSession
	}
	if r.Catalogs != nil {
		s.CatalogBytesPerJSONByte = r.Catalogs.BytesPerJSONByte
	}
	if r.Streams != nil {
		s.OpenStreamBytes = r.Streams.BytesPerStream
	}
	if r.Streams10k != nil {
		s.Streams10kErrors = ptr(r.Streams10k.Errors)
	}
	if r.Bytes != nil {
		s.TurnBytesNDJSON, s.TurnBytesSSE = ptr(r.Bytes.NDJSONBodyBytes), ptr(r.Bytes.SSEBodyBytes)
	}
	if r.A2UI != nil {
		for _, v := range r.A2UI.Versions {
			switch v.Version {
			case "v0.9":
				s.A2UIFirstRenderablePct = ptr(v.RatioPct.Median)
			case "v0.8":
				s.A2UIV08FirstRenderablePct = ptr(v.RatioPct.Median)
			}
		}
	}
	if c := r.Conversations; c != nil {
		s.ConvHeldBytesRatio, s.ConvCPURatio = c.HeldBytesRatio, c.CPURatio
		if c.RoundTripMS != nil {
			s.ClientToolRoundTripMS = ptr(c.RoundTripMS.Median)
		}
	}
	if a := r.A2A; a != nil {
		s.A2ALastMessageRatio, s.A2AEndRatio, s.A2ACPURatio, s.A2AAddedEndMS = a.LastMessageRatio, a.EndRatio, a.CPURatio, a.AddedEndMS
		s.MCPLastMessageRatio, s.MCPCPURatio = a.MCPLastMessageRatio, a.MCPCPURatio
	}
	if o := r.Open; o != nil {
		s.OpenRSSPerStreamBytes, s.OpenGoroutinesPerStream, s.OpenFDsPerStream = o.goal()
	}
	if f := r.Floor; f != nil {
		s.FloorRSSPerStreamBytes = f.goal()
	}
	if rd := r.Redis; rd != nil {
		s.RedisClusterTurnsRatio, s.RedisClusterCPURatio = rd.ClusterTurnsRatio, rd.ClusterCPURatio
		s.RedisAcksAddedEndMS, s.RedisLimitsAddedCPUMS = rd.AcksAddedEndMS, rd.LimitsAddedCPUMS
	}
	if p := r.Policy; p != nil {
		s.PolicyA2UICPURatio, s.PolicyGenUICPURatio = p.A2UI.CPURatio, p.GenUI.CPURatio
	}
	if rw := r.Rows; rw != nil {
		s.RowsReceivedPerFinalMax, s.RowsBaselineReceivedRatio2000 = rw.goal()
	}
	if tr := r.Transports; tr != nil {
		s.TransportsCPURatioMax = tr.goal()
	}
	if w := r.WS; w != nil {
		s.WSIdleConnectionBytes, s.WSFirstUIRatio, s.WSEndRatio, s.WSCPURatio = w.IdleBytesPerConnection, w.FirstUIRatio, w.EndRatio, w.CPURatio
	}
}

// closeChild stops the child server before a phase that starts servers of its own, when
// the next phase gets a fresh child anyway (--fresh): none idles next to the phase's.
func (b *bench) closeChild() {
	if b.tgt != nil && b.cfg.fresh {
		b.tgt.Close()
		b.tgt = nil
		b.hc.CloseIdleConnections()
	}
}
