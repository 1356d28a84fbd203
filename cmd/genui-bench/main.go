package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/url"
	"os"
	"os/signal"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// A child of the floor phase (this binary re-executed) serves, and is no bench.
	if mode := os.Getenv(floorEnv); mode != "" {
		if err := serveFloor(ctx, mode, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "genui-bench floor %s: %v\n", mode, err)
			stop()
			os.Exit(1)
		}
		return
	}
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "genui-bench:", err)
		stop()
		os.Exit(1)
	}
}

var allPhases = []string{"latency", "throughput", "sessions", "catalogs", "streams", "bytes", "a2ui", "conversations", "a2a", "ws", "redis", "open", "floor", "policy", "rows", "transports"}

// defaultPhases run without --phases; a2ui (about a minute of paced model output),
// conversations, a2a, ws, redis, floor, policy, rows and transports are opt-in; open (about a minute and a half) runs by default.
var defaultPhases = []string{"latency", "throughput", "sessions", "catalogs", "streams", "bytes", "open"}

type config struct {
	url        string
	serverBin  string
	serverArgs []string
	model      string
	fakeAddr   string
	pid        int
	fresh      bool

	phases      []string
	format      format
	turns       int
	latencyConc int
	duration    time.Duration
	concurrency []int
	timeout     time.Duration
	phaseLimit  time.Duration

	modelLatency  time.Duration
	pacing        time.Duration
	textChunks    int
	streamLatency time.Duration

	sessions     int
	sessionConc  int
	catalogs     int
	catalogBytes int
	catalogConc  int
	streams      int
	streams10k   bool

	a2uiTurns       int
	a2uiVersions    []string
	a2uiTokensPerS  float64
	a2uiChunkTokens int
	a2uiLatency     time.Duration

	convTurns         int
	convConversations int
	convLength        int
	convRounds        int

	a2aTurns      int
	a2aRounds     int
	a2aTokensPerS float64
	a2aBaseline   string

	wsConns      int
	wsIdleRounds int
	wsTurns      int
	wsRounds     int
	wsBaseline   string
	wsSession    string
	wsProfileDir string

	redisConc         int
	openLevels        []int
	openLatency       time.Duration
	openTokensPerS    float64
	openH2C           bool
	redisDuration     time.Duration
	redisLatencyTurns int
	redisRounds       int

	policyTurns  int
	policyRounds int

	rowsLevels      []int
	rowsTokensPerS  float64
	rowsBaselineBin string

	transportsTurns       int
	transportsRounds      int
	transportsBaselineBin string

	jsonOut     string
	markdownOut string
}

func (c *config) has(phase string) bool { return slices.Contains(c.phases, phase) }

// needsServer tells whether a phase to run measures a genui server: every one but floor.
func (c *config) needsServer() bool {
	return slices.ContainsFunc(c.phases, func(p string) bool { return p != "floor" })
}

func parseConfig(args []string, stderr io.Writer) (*config, error) {
	c := &config{}
	fs := flag.NewFlagSet("genui-bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: genui-bench [flags]

Measures a GenUI server over its public HTTP contract: added latency, throughput,
CPU per turn, memory per idle session, per catalog and per open stream, bytes per turn,
and (--phases a2ui, opt-in, about a minute) how early an A2UI surface streamed by
POST /generateA2ui becomes renderable: a 29-component surface written by the fake
model at 150 tokens/s, first renderable part vs complete surface (target <= 25%);
and (--phases conversations, opt-in) client tool round trips and multi-turn
conversations the client resends (stateless) vs conversations the server holds
(conversationId): bytes held vs bytes received (target < 2x), CPU per turn
(target: held <= stateless);
and (--phases a2a, opt-in, under a minute) the same A2UI turn through
POST /generateA2ui and through the A2A agent (message/stream with the A2UI
extension): A2A / generateA2ui for the time to the last A2UI message, to the end
and the server's CPU per turn (target <= 1.2x; --a2a-tokens-per-s 0: unpaced);
and (--phases ws, opt-in, under a minute) GET /ws, JSON-RPC 2.0 over WebSocket:
the server's memory per idle connection holding one session (target <= 14 KiB),
and a prompt over /ws next to the same turn over POST /generateUi NDJSON: time
to the first UI update, to the end and CPU per turn (target: within 10%);
and (--phases redis, opt-in, about a minute; needs redis-server and redis-cli) two
replicas on one Redis node and on a Redis Cluster it starts: turns/s and CPU per
turn, cluster / single, and what --redis-wait-replicas 1 adds to a turn and the
shared limits to its CPU;
and (--phases floor, opt-in, under a minute; no genui server) the open phase's
measure on net/http alone: the peak RSS per extra open stream of a plain HTTP/1.1
handler streaming an h2c call of the fake model answering as in the open phase
(--open-* flags), a floor for genui's figure;
and (--phases policy, opt-in, about a minute) two servers side by side, the default
UI policy on one and --policy-off all on the other: the server's CPU per turn of
unpaced A2UI turns and of genui turns, on / off (target <= 1.05x);
and (--phases rows, opt-in) one A2UI surface of a Column of N Text rows per level
(--rows), unpaced and paced, each turn on a fresh server: the A2UI bytes the client
received / the bytes of the surface's final state (target <= 3x), time, the
server's CPU and peak RSS, how the turn ended (result, a turn limit, cut at
--timeout); with --rows-baseline-bin, the same turns on that binary side by side;
and (--phases transports, opt-in, under a minute with a baseline) the server's CPU
per turn through each transport (genui NDJSON and SSE, A2UI NDJSON, A2A, AG-UI,
MCP, /ws, the yield protocol at /session/{id}), unpaced, of the server under test
and of --transports-baseline-bin side by side: after / before per transport
(target <= 1.05x, reported, not a failure).
By default it builds and starts ./cmd/genui-server against a fake Gemini it serves;
--url targets a running server instead. See "go doc ./cmd/genui-bench" for what
each figure means. Flags:
`)
		fs.PrintDefaults()
	}
	var phases, conc, format, serverArgs, a2uiVers string
	fs.StringVar(&c.url, "url", "", "base URL of a running server to measure (default: start a child server)")
	fs.StringVar(&c.serverBin, "server-bin", "", "server binary to start (default: go build ./cmd/genui-server into a temporary directory)")
	fs.StringVar(&serverArgs, "server-args", "", "extra space-separated flags for the child server")
	fs.StringVar(&c.model, "model", "googleai/gemini-2.5-flash", "--model of the child server (it must use GOOGLE_GEMINI_BASE_URL)")
	fs.StringVar(&c.fakeAddr, "fake-addr", "127.0.0.1:0", "listen address of the fake Gemini; with --url, start the server with GOOGLE_GEMINI_BASE_URL=http://<this address>")
	fs.IntVar(&c.pid, "pid", 0, "with --url: the server's process id, for RSS and CPU figures (Linux /proc)")
	fs.BoolVar(&c.fresh, "fresh", true, "start a fresh child server for each phase (child mode only)")
	fs.StringVar(&phases, "phases", strings.Join(defaultPhases, ","), "comma-separated phases to run: "+strings.Join(allPhases, ", ")+" (a2ui, about a minute, conversations, a2a, ws, redis, floor, policy, rows and transports run only when named)")
	fs.StringVar(&format, "format", "ndjson", "response format of the latency and throughput turns: ndjson or sse")
	fs.IntVar(&c.turns, "turns", 500, "latency phase: turns per level (and direct model calls per level)")
	fs.IntVar(&c.latencyConc, "latency-concurrency", 64, "latency phase: concurrency of the second level (p99 under load)")
	fs.DurationVar(&c.duration, "duration", 5*time.Second, "throughput phase: duration of each concurrency level")
	fs.StringVar(&conc, "concurrency", "1,16,64,256", "throughput phase: comma-separated concurrency levels")
	fs.DurationVar(&c.timeout, "timeout", 30*time.Second, "timeout of one turn (added to --model-latency)")
	fs.DurationVar(&c.phaseLimit, "phase-limit", 60*time.Second, "longest time one level of the latency, sessions, catalogs or streams phase may take")
	fs.DurationVar(&c.modelLatency, "model-latency", 0, "fake model: delay before its first event (latency and throughput phases)")
	fs.DurationVar(&c.pacing, "pacing", 0, "fake model: delay before each following event (token pacing)")
	fs.IntVar(&c.textChunks, "text-chunks", 1, "fake model: events the text is split into before the function call")
	fs.DurationVar(&c.streamLatency, "stream-model-latency", 30*time.Second, "streams phase: how long the slow model holds each answer")
	fs.IntVar(&c.sessions, "sessions", 10000, "sessions phase: sessions to create")
	fs.IntVar(&c.sessionConc, "session-concurrency", 16, "sessions phase: concurrent clients")
	fs.IntVar(&c.catalogs, "catalogs", 300, "catalogs phase: sessions to create, each with its own catalog")
	fs.IntVar(&c.catalogBytes, "catalog-bytes", 16<<10, "catalogs phase: size of each catalog as compact JSON (the child server refuses more than its --catalog-limit, 2 MiB by default)")
	fs.IntVar(&c.catalogConc, "catalog-concurrency", 4, "catalogs phase: concurrent clients")
	fs.IntVar(&c.streams, "streams", 1000, "streams phase: streams held open at once")
	fs.BoolVar(&c.streams10k, "streams-10k", false, "streams phase: also hold 10,000 streams open and report errors")
	fs.IntVar(&c.a2uiTurns, "a2ui-turns", 5, "a2ui phase: turns per A2UI version, one after another")
	fs.StringVar(&a2uiVers, "a2ui-versions", strings.Join(a2uiVersions, ","), "a2ui phase: comma-separated A2UI versions to measure: "+strings.Join(a2uiVersions, ", "))
	fs.Float64Var(&c.a2uiTokensPerS, "a2ui-tokens-per-s", 150, "a2ui phase: the fake model's output rate, tokens (text bytes/4) per second")
	fs.IntVar(&c.a2uiChunkTokens, "a2ui-chunk-tokens", 16, "a2ui phase: tokens per streamed text chunk (Gemini sends roughly 10 to 40)")
	fs.DurationVar(&c.a2uiLatency, "a2ui-model-latency", 0, "a2ui phase: the fake model's delay before its first token")
	fs.IntVar(&c.convTurns, "conv-turns", 20, "conversations phase: client tool round trips (a call turn and its continuation), one after another")
	fs.IntVar(&c.convConversations, "conv-conversations", 20, "conversations phase: conversations per mode (stateless, held) in each round")
	fs.IntVar(&c.convLength, "conv-length", 10, "conversations phase: turns per conversation")
	fs.IntVar(&c.convRounds, "conv-rounds", 5, "conversations phase: rounds, each running the stateless then the held conversations")
	fs.IntVar(&c.a2aTurns, "a2a-turns", 20, "a2a phase: turns per path (/generateA2ui, A2A) in each round, one after another")
	fs.IntVar(&c.a2aRounds, "a2a-rounds", 3, "a2a phase: rounds, each a block of turns of each path (CPU per turn: median over the rounds)")
	fs.Float64Var(&c.a2aTokensPerS, "a2a-tokens-per-s", 2000, "a2a phase: the fake model's output rate, tokens per second (0: unpaced, every chunk at once, so that the server's own time and CPU show)")
	fs.StringVar(&c.a2aBaseline, "a2a-baseline", "held", "a2a phase: the /generateA2ui turns are held (a new conversationId each, as A2A holds each context's conversation) or stateless")
	fs.IntVar(&c.wsConns, "ws-conns", 2000, "ws phase: idle /ws connections opened per round, each with initialize and new_session")
	fs.IntVar(&c.wsIdleRounds, "ws-idle-rounds", 3, "ws phase: rounds of idle connections, each on a fresh server in child mode (bytes per connection: median over the rounds)")
	fs.IntVar(&c.wsTurns, "ws-turns", 1000, "ws phase: turns per path (/ws prompt, /generateUi NDJSON) in each round, one after another")
	fs.IntVar(&c.wsRounds, "ws-rounds", 5, "ws phase: rounds, each a block of turns of each path (figures: medians over the rounds)")
	fs.StringVar(&c.wsBaseline, "ws-baseline", "held", "ws phase: the /generateUi turns are held (a new conversationId each, as each /ws prompt runs on a new session the server holds) or stateless")
	fs.StringVar(&c.wsSession, "ws-session", "startSession", "ws phase: what new_session carries: startSession (the sessionId of a /startSession session with the basic catalog, which the /generateUi turns carry too) or catalog (the basic catalog inline, in the /generateUi turns too)")
	var openLevels string
	fs.StringVar(&openLevels, "open-streams", "1000,2000,6000,10000", "open and floor phases: the levels, turns held open at once, ascending (the figures compare each with the one before)")
	fs.DurationVar(&c.openLatency, "open-model-latency", 2*time.Second, "open and floor phases: the fake model's delay before its first token")
	fs.Float64Var(&c.openTokensPerS, "open-tokens-per-s", 150, "open and floor phases: the fake model's output rate, tokens per second")
	fs.BoolVar(&c.openH2C, "open-h2c", true, "open phase: start the server with --model-h2c, the model over one HTTP/2 connection")
	fs.IntVar(&c.redisConc, "redis-concurrency", 16, "redis phase: closed-loop clients of each setup's block")
	fs.DurationVar(&c.redisDuration, "redis-duration", 3*time.Second, "redis phase: length of each setup's block of closed-loop clients, per round")
	fs.IntVar(&c.redisLatencyTurns, "redis-latency-turns", 100, "redis phase: turns one at a time after each block (end p50)")
	fs.IntVar(&c.redisRounds, "redis-rounds", 3, "redis phase: rounds, each running every setup once (figures: medians over the rounds)")
	fs.IntVar(&c.policyTurns, "policy-turns", 200, "policy phase: turns of each kind (A2UI, genui) per server in each round, one after another")
	fs.IntVar(&c.policyRounds, "policy-rounds", 20, "policy phase: rounds, each a block of turns of each kind on each server, the first server alternating (CPU per turn: medians over the rounds)")
	var rowsLevels string
	fs.StringVar(&rowsLevels, "rows", "100,500,2000,20000", "rows phase: comma-separated levels, the rows of the Column the fake model writes")
	fs.Float64Var(&c.rowsTokensPerS, "rows-tokens-per-s", 2000, "rows phase: the fake model's output rate of the paced turns, tokens (text bytes/4) per second")
	fs.StringVar(&c.rowsBaselineBin, "rows-baseline-bin", "", "rows phase: a second server binary (e.g. built from an earlier commit) to run the same turns on, side by side (child mode only)")
	fs.IntVar(&c.transportsTurns, "transports-turns", 100, "transports phase: turns of each transport per server in each round, one after another")
	fs.IntVar(&c.transportsRounds, "transports-rounds", 5, "transports phase: rounds, each a block of turns of each transport on each server, the first server alternating (CPU per turn: medians over the rounds)")
	fs.StringVar(&c.transportsBaselineBin, "transports-baseline-bin", "", "transports phase: the baseline server binary (e.g. built from an earlier commit) to run the same turns on, side by side (child mode only; without it the phase measures the one server)")
	fs.StringVar(&c.wsProfileDir, "ws-profile", "", "ws phase, child mode: write the server's heap profiles before and with the idle connections, and its goroutines with them, into this directory")
	fs.StringVar(&c.jsonOut, "json", "", "also write the report as JSON to this file (-: JSON to stdout, the table to stderr)")
	fs.StringVar(&c.markdownOut, "markdown", "", "also write the report as Markdown to this file (e.g. docs/benchmarks.md): date, machine, this command line, a section per phase run with its tables")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (see --help)", fs.Arg(0))
	}
	for p := range strings.SplitSeq(phases, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if !slices.Contains(allPhases, p) {
			return nil, fmt.Errorf("--phases: unknown phase %q (want %s)", p, strings.Join(allPhases, ", "))
		}
		if !slices.Contains(c.phases, p) {
			c.phases = append(c.phases, p)
		}
	}
	if len(c.phases) == 0 {
		return nil, errors.New("--phases: no phase selected")
	}
	for s := range strings.SplitSeq(conc, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--concurrency: %q is not a positive integer", s)
		}
		c.concurrency = append(c.concurrency, n)
	}
	for v := range strings.SplitSeq(a2uiVers, ",") {
		if v = strings.TrimSpace(v); v == "" {
			continue
		}
		if !slices.Contains(a2uiVersions, v) {
			return nil, fmt.Errorf("--a2ui-versions: unknown version %q (want %s)", v, strings.Join(a2uiVersions, ", "))
		}
		if !slices.Contains(c.a2uiVersions, v) {
			c.a2uiVersions = append(c.a2uiVersions, v)
		}
	}
	if len(c.a2uiVersions) == 0 && c.has("a2ui") {
		return nil, errors.New("--a2ui-versions: no version given")
	}
	if len(c.concurrency) == 0 && c.has("throughput") {
		return nil, errors.New("--concurrency: no level given")
	}
	switch format {
	case "ndjson":
		c.format = formatNDJSON
	case "sse":
		c.format = formatSSE
	default:
		return nil, fmt.Errorf("--format: %q is neither ndjson nor sse", format)
	}
	c.serverArgs = strings.Fields(serverArgs)
	switch {
	case c.turns < 1:
		return nil, errors.New("--turns must be at least 1")
	case c.latencyConc < 1:
		return nil, errors.New("--latency-concurrency must be at least 1")
	case c.duration <= 0 || c.timeout <= 0 || c.phaseLimit <= 0:
		return nil, errors.New("--duration, --timeout and --phase-limit must be positive")
	case c.modelLatency < 0 || c.pacing < 0 || c.streamLatency <= 0:
		return nil, errors.New("--model-latency and --pacing cannot be negative, --stream-model-latency must be positive")
	case c.textChunks < 1:
		return nil, errors.New("--text-chunks must be at least 1")
	case c.sessions < 1 || c.sessionConc < 1 || c.streams < 1:
		return nil, errors.New("--sessions, --session-concurrency and --streams must be at least 1")
	case c.catalogs < 1 || c.catalogConc < 1:
		return nil, errors.New("--catalogs and --catalog-concurrency must be at least 1")
	case c.catalogBytes < minCatalogBytes:
		return nil, fmt.Errorf("--catalog-bytes must be at least %d", minCatalogBytes)
	case c.a2uiTurns < 1 || c.a2uiChunkTokens < 1:
		return nil, errors.New("--a2ui-turns and --a2ui-chunk-tokens must be at least 1")
	case !(c.a2uiTokensPerS > 0) || c.a2uiLatency < 0:
		return nil, errors.New("--a2ui-tokens-per-s must be positive, --a2ui-model-latency cannot be negative")
	case c.convTurns < 1 || c.convConversations < 1 || c.convLength < 1 || c.convRounds < 1:
		return nil, errors.New("--conv-turns, --conv-conversations, --conv-length and --conv-rounds must be at least 1")
	case c.a2aTurns < 1 || c.a2aRounds < 1:
		return nil, errors.New("--a2a-turns and --a2a-rounds must be at least 1")
	case !(c.a2aTokensPerS >= 0) || math.IsInf(c.a2aTokensPerS, 1):
		return nil, errors.New("--a2a-tokens-per-s must be positive, or 0 for an unpaced model")
	case c.a2aBaseline != "held" && c.a2aBaseline != "stateless":
		return nil, fmt.Errorf("--a2a-baseline: %q is neither held nor stateless", c.a2aBaseline)
	case c.wsConns < 1 || c.wsIdleRounds < 1 || c.wsTurns < 1 || c.wsRounds < 1:
		return nil, errors.New("--ws-conns, --ws-idle-rounds, --ws-turns and --ws-rounds must be at least 1")
	case c.wsBaseline != "held" && c.wsBaseline != "stateless":
		return nil, fmt.Errorf("--ws-baseline: %q is neither held nor stateless", c.wsBaseline)
	case c.wsSession != wsSpecStartSession && c.wsSession != wsSpecCatalog:
		return nil, fmt.Errorf("--ws-session: %q is neither %s nor %s", c.wsSession, wsSpecStartSession, wsSpecCatalog)
	case c.wsProfileDir != "" && c.url != "":
		return nil, errors.New("--ws-profile needs a child server (it serves pprof on a port the bench chooses); with --url, profile the server yourself")
	case c.redisConc < 1 || c.redisLatencyTurns < 1 || c.redisRounds < 1 || c.redisDuration <= 0:
		return nil, errors.New("--redis-concurrency, --redis-latency-turns and --redis-rounds must be at least 1, --redis-duration positive")
	case c.url != "" && slices.Contains(c.phases, "redis"):
		return nil, errors.New("--phases redis starts its own servers (two replicas per setup, on Redis it starts); it does not apply with --url")
	case c.policyTurns < 1 || c.policyRounds < 1:
		return nil, errors.New("--policy-turns and --policy-rounds must be at least 1")
	case !(c.rowsTokensPerS > 0) || math.IsInf(c.rowsTokensPerS, 1):
		return nil, errors.New("--rows-tokens-per-s must be positive")
	case c.rowsBaselineBin != "" && c.url != "":
		return nil, errors.New("--rows-baseline-bin starts a second child server; it does not apply with --url")
	case c.transportsTurns < 1 || c.transportsRounds < 1:
		return nil, errors.New("--transports-turns and --transports-rounds must be at least 1")
	case c.transportsBaselineBin != "" && c.url != "":
		return nil, errors.New("--transports-baseline-bin starts a second child server; it does not apply with --url")
	case c.pid != 0 && c.url == "":
		return nil, errors.New("--pid only applies with --url (the child server's pid is known)")
	case c.pid < 0:
		return nil, errors.New("--pid must be positive")
	case !(c.openTokensPerS > 0) || math.IsInf(c.openTokensPerS, 1) || c.openLatency < 0:
		return nil, errors.New("--open-tokens-per-s must be positive, --open-model-latency cannot be negative")
	}
	for f := range strings.SplitSeq(openLevels, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--open-streams: %q is not a number of streams", f)
		}
		c.openLevels = append(c.openLevels, n)
	}
	for f := range strings.SplitSeq(rowsLevels, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n < 1 {
			return nil, fmt.Errorf("--rows: %q is not a number of rows", f)
		}
		if !slices.Contains(c.rowsLevels, n) {
			c.rowsLevels = append(c.rowsLevels, n)
		}
	}
	if len(c.rowsLevels) == 0 && c.has("rows") {
		return nil, errors.New("--rows: no level given")
	}
	if c.url != "" {
		u, err := url.Parse(c.url)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("--url: %q is not an http(s) URL", c.url)
		}
		c.url = strings.TrimRight(c.url, "/")
		if c.serverBin != "" || len(c.serverArgs) > 0 {
			return nil, errors.New("--server-bin and --server-args start a child server; they do not apply with --url")
		}
	}
	return c, nil
}

// run is the whole command; main only wires signals and the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseConfig(args, stderr)
	if err != nil {
		return err
	}
	start := time.Now()
	b, err := newBench(ctx, cfg, stderr)
	if err != nil {
		return err
	}
	defer b.close()
	rep, err := b.run(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("interrupted (%w)", err)
		}
		return err
	}
	rep.WallS = round(time.Since(start).Seconds(), 1)
	b.logf("done in %s", time.Since(start).Round(100*time.Millisecond))
	// With --json - the JSON alone goes to stdout, so that it can be piped; the table
	// goes to stderr.
	tableOut := stdout
	if cfg.jsonOut == "-" {
		tableOut = stderr
	}
	if err := writeTable(tableOut, rep); err != nil {
		return err
	}
	if cfg.jsonOut != "" {
		out, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		out = append(out, '\n')
		if cfg.jsonOut == "-" {
			_, err = stdout.Write(out)
		} else {
			err = os.WriteFile(cfg.jsonOut, out, 0o644)
		}
		if err != nil {
			return fmt.Errorf("--json: %w", err)
		}
	}
	if cfg.markdownOut != "" {
		return writeMarkdownFile(cfg.markdownOut, rep, args)
	}
	return nil
}

func hostInfo() (cpus int, goVersion string) { return runtime.NumCPU(), runtime.Version() }
