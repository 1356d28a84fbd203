package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/genuiserver/genui/internal/testkit/redistest"
)

// The redis phase: two replicas of the server sharing one Redis node, then a Redis
// Cluster, then the cluster with acknowledgements (--redis-wait-replicas 1), then the
// cluster with the shared limits on; the same turns through each, so that what a
// topology, the acknowledgements and the limits cost per turn are ratios of one run.

// redisSetup is one way of running the two replicas.
type redisSetup struct {
	name  string
	redis string   // which Redis: redisSingle or redisCluster
	flags []string // the replicas' flags besides the Redis URL
	what  string   // for the table
}

const (
	redisSingle  = "single"
	redisCluster = "cluster"
)

// redisSetups are the setups, the first the baseline of the topology ratio and the
// second that of the acknowledgement and limit figures.
var redisSetups = []redisSetup{
	{name: "single", redis: redisSingle, what: "one Redis node"},
	{name: "cluster", redis: redisCluster, what: "Redis Cluster, 3 masters with a replica each"},
	{name: "cluster+acks", redis: redisCluster, flags: []string{"--redis-wait-replicas", "1", "--redis-wait-timeout", "1s"},
		what: "the cluster, writes acknowledged by a replica"},
	{name: "cluster+limits", redis: redisCluster,
		// Limits high enough never to refuse a turn, counted in Redis all the same.
		flags: []string{"--rate-limit", "1000000", "--rate-burst", "1000000", "--caller-streams", "100000"},
		what:  "the cluster, shared rate and stream limits"},
}

// redisConvTurns is how many turns one held conversation of the phase has before its
// client starts another.
const redisConvTurns = 4

// RedisReport is the redis phase: per setup (two replicas of the server on a Redis
// topology, with the setup's flags), --redis-rounds rounds, each a block of
// --redis-concurrency closed-loop clients for --redis-duration then --redis-latency-turns
// turns one at a time, the setups taking turns within a round (the first setup of a round
// rotating). Every turn is POST /generateUi (NDJSON) with a session started on the first
// replica and a conversationId the server holds, a new one every 4 turns, each turn sent to
// the other replica than the last: each reads the session, holds and commits the
// conversation and logs the stream in Redis. Figures are medians over the rounds
// [min-max]: turns/s of the block; CPU per turn = Δ(utime+stime) of both replicas / turns
// of the block, and the same of every redis-server of the setup; end = the p50 of the
// one-at-a-time turns (request to result line).
type RedisReport struct {
	Replicas     int          `json:"replicas"`
	Concurrency  int          `json:"concurrency"`
	BlockS       float64      `json:"block_s"`
	LatencyTurns int          `json:"latency_turns"`
	Rounds       int          `json:"rounds"`
	Setups       []RedisSetup `json:"setups"`
	// ClusterTurnsRatio and ClusterCPURatio: cluster / single (turns/s; the replicas'
	// CPU per turn).
	ClusterTurnsRatio *float64 `json:"cluster_turns_ratio"`
	ClusterCPURatio   *float64 `json:"cluster_cpu_ratio"`
	// AcksEndRatio and AcksAddedEndMS: cluster+acks against cluster, p50 end at one turn at a
	// time; AcksTurnsRatio: turns/s.
	AcksEndRatio   *float64 `json:"acks_end_ratio"`
	AcksAddedEndMS *float64 `json:"acks_added_end_ms"`
	AcksTurnsRatio *float64 `json:"acks_turns_ratio"`
	// LimitsAddedCPUMS and LimitsCPURatio: cluster+limits against cluster, the replicas'
	// CPU per turn; LimitsAddedEndMS: p50 end.
	LimitsAddedCPUMS *float64 `json:"limits_added_cpu_ms"`
	LimitsCPURatio   *float64 `json:"limits_cpu_ratio"`
	LimitsAddedEndMS *float64 `json:"limits_added_end_ms"`
}

// RedisSetup is one setup's figures.
type RedisSetup struct {
	Name              string    `json:"name"`
	Redis             string    `json:"redis"`
	Flags             []string  `json:"flags"`
	Turns             int       `json:"turns"` // all rounds, blocks and one-at-a-time turns
	Errors            int       `json:"errors"`
	TurnsPerS         a2uiStat  `json:"turns_per_s"`
	CPUPerTurnMS      *a2uiStat `json:"cpu_per_turn_ms"`       // both replicas
	RedisCPUPerTurnMS *a2uiStat `json:"redis_cpu_per_turn_ms"` // every redis-server
	EndP50MS          a2uiStat  `json:"end_p50_ms"`
}

// redisRun is one setup while the phase runs.
type redisRun struct {
	setup   redisSetup
	reps    []*target
	redis   []int // redis-server pids
	workers []*redisWorker
	single  *redisWorker // the one-at-a-time turns'
	turns   []float64    // per round
	cpu     []float64
	rcpu    []float64
	end     []float64
	rep     RedisSetup
}

// redisWorker is one client: its session and where its conversation is.
type redisWorker struct {
	id      string
	session string
	n       int
}

// body is the worker's next turn, and the replica it goes to.
func (w *redisWorker) next(reps []*target) (*target, []byte) {
	conv := fmt.Sprintf("%s-%d", w.id, w.n/redisConvTurns)
	rep := reps[w.n%len(reps)]
	w.n++
	return rep, fmt.Appendf(nil, `{"data":{"sessionId":%q,"conversationId":%q,"conversation":[{"role":"user","parts":[{"type":"text","text":"Show me a form"}]}]}}`,
		w.session, conv)
}

// benchTB gives redistest what it needs of a test: Fatal and Skip end the set-up with an
// error, Cleanup runs when the phase ends.
type benchTB struct {
	b        *bench
	cleanups []func()
}

type redisAbort struct{ msg string }

func (*benchTB) Helper()                          {}
func (t *benchTB) Logf(format string, a ...any)   { t.b.logf("redis: "+format, a...) }
func (t *benchTB) Errorf(format string, a ...any) { panic(redisAbort{fmt.Sprintf(format, a...)}) }
func (t *benchTB) Fatal(a ...any)                 { panic(redisAbort{fmt.Sprint(a...)}) }
func (t *benchTB) Fatalf(format string, a ...any) { panic(redisAbort{fmt.Sprintf(format, a...)}) }
func (t *benchTB) Skipf(format string, a ...any)  { panic(redisAbort{fmt.Sprintf(format, a...)}) }
func (t *benchTB) Cleanup(f func())               { t.cleanups = append(t.cleanups, f) }
func (t *benchTB) TempDir() string                { return must(t.b.tempDir("redis-")) }
func must(s string, err error) string {
	if err != nil {
		panic(redisAbort{err.Error()})
	}
	return s
}

// close runs the cleanups, last first.
func (t *benchTB) close() {
	for _, f := range slices.Backward(t.cleanups) {
		f()
	}
}

// start runs f, turning redistest's Fatal into an error.
func (t *benchTB) start(f func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			a, ok := r.(redisAbort)
			if !ok {
				panic(r)
			}
			err = errors.New(a.msg)
		}
	}()
	f()
	return nil
}

// redisPhase runs the phase; it needs child servers and redis-server and redis-cli.
func (b *bench) redisPhase(ctx context.Context) (*RedisReport, error) {
	cfg := b.cfg
	tb := &benchTB{b: b}
	defer tb.close()
	var single *redistest.Server
	var cluster *redistest.Cluster
	b.logf("redis: starting one redis-server and a cluster of 3 masters with a replica each")
	if err := tb.start(func() {
		single = redistest.Start(tb)
		cluster = redistest.StartCluster(tb, 3, 1)
	}); err != nil {
		return nil, fmt.Errorf("starting Redis (the phase needs redis-server and redis-cli on PATH: apt-get install redis-server): %v", err)
	}
	pids := map[string][]int{redisSingle: {single.PID()}}
	for _, n := range cluster.Nodes {
		pids[redisCluster] = append(pids[redisCluster], n.PID())
	}
	urls := map[string][]string{redisSingle: {"--redis-url", single.URL()}, redisCluster: {"--redis-cluster-url", cluster.URL()}}

	hc := newHTTPClient(nil)
	defer hc.CloseIdleConnections()
	var runs []*redisRun
	defer func() {
		for _, r := range runs {
			for _, t := range r.reps {
				t.Close()
			}
		}
	}()
	for _, s := range redisSetups {
		r := &redisRun{setup: s, redis: pids[s.redis], rep: RedisSetup{Name: s.name, Redis: s.what, Flags: s.flags}}
		runs = append(runs, r)
		args := append([]string{"--model", cfg.model, "--log-level", "warn"}, urls[s.redis]...)
		args = append(append(args, s.flags...), cfg.serverArgs...)
		for range 2 {
			t, err := startChild(ctx, hc, b.bin, args, b.fake.URL())
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.name, err)
			}
			r.reps = append(r.reps, t)
		}
		// A session per client, started on the first replica; one warm-up turn each.
		for w := range cfg.redisConc + 1 {
			id, err := startSession(ctx, hc, r.reps[0].base, sessionBody(b.catalog), cfg.timeout)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", s.name, err)
			}
			wk := &redisWorker{id: fmt.Sprintf("bench-%s-%d", strings.ReplaceAll(s.name, "+", "-"), w), session: id}
			for range 2 {
				rep, body := wk.next(r.reps)
				if res := turn(ctx, hc, rep.base, formatNDJSON, body, b.turnTimeout()); res.err != nil {
					return nil, fmt.Errorf("%s: warm-up turn: %w", s.name, res.err)
				}
			}
			if w == cfg.redisConc {
				r.single = wk
			} else {
				r.workers = append(r.workers, wk)
			}
		}
	}

	first := ""
	for round := range cfg.redisRounds {
		for i := range runs {
			r := runs[(round+i)%len(runs)]
			b.logf("redis: round %d, %s: %d clients for %s, then %d turns one at a time", round+1, r.setup.name, cfg.redisConc, cfg.redisDuration, cfg.redisLatencyTurns)
			if err := b.redisBlock(ctx, hc, r, &first); err != nil {
				return nil, err
			}
			for _, t := range r.reps {
				if err := t.alive(); err != nil {
					return nil, fmt.Errorf("%s: %w", r.setup.name, err)
				}
			}
		}
	}
	if first != "" {
		b.note("redis: first failed turn: %s", first)
	}

	rep := &RedisReport{Replicas: 2, Concurrency: cfg.redisConc, BlockS: cfg.redisDuration.Seconds(),
		LatencyTurns: cfg.redisLatencyTurns, Rounds: cfg.redisRounds}
	for _, r := range runs {
		r.rep.TurnsPerS = statOf(r.turns, 1)
		r.rep.EndP50MS = statOf(r.end, 2)
		if len(r.cpu) == cfg.redisRounds {
			r.rep.CPUPerTurnMS = ptr(statOf(r.cpu, 3))
			r.rep.RedisCPUPerTurnMS = ptr(statOf(r.rcpu, 3))
		}
		rep.Setups = append(rep.Setups, r.rep)
	}
	ratio := func(x, y float64) *float64 {
		if y == 0 {
			return nil
		}
		return ptr(round(x/y, 3))
	}
	cpu := func(s RedisSetup) float64 {
		if s.CPUPerTurnMS == nil {
			return 0
		}
		return s.CPUPerTurnMS.Median
	}
	sg, cl, acks, lim := rep.Setups[0], rep.Setups[1], rep.Setups[2], rep.Setups[3]
	rep.ClusterTurnsRatio = ratio(cl.TurnsPerS.Median, sg.TurnsPerS.Median)
	if cpu(sg) > 0 {
		rep.ClusterCPURatio = ratio(cpu(cl), cpu(sg))
	}
	rep.AcksEndRatio = ratio(acks.EndP50MS.Median, cl.EndP50MS.Median)
	rep.AcksAddedEndMS = ptr(round(acks.EndP50MS.Median-cl.EndP50MS.Median, 2))
	rep.AcksTurnsRatio = ratio(acks.TurnsPerS.Median, cl.TurnsPerS.Median)
	if cpu(cl) > 0 {
		rep.LimitsAddedCPUMS = ptr(round(cpu(lim)-cpu(cl), 3))
		rep.LimitsCPURatio = ratio(cpu(lim), cpu(cl))
	}
	rep.LimitsAddedEndMS = ptr(round(lim.EndP50MS.Median-cl.EndP50MS.Median, 2))
	return rep, nil
}

// redisBlock runs one round of a setup: the closed-loop block, then the turns one at a
// time.
func (b *bench) redisBlock(ctx context.Context, hc *http.Client, r *redisRun, first *string) error {
	cfg := b.cfg
	var mu sync.Mutex
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		r.rep.Errors++
		if *first == "" {
			*first = r.setup.name + ": " + err.Error()
		}
	}
	cpu := func(pids []int) (time.Duration, bool) {
		var sum time.Duration
		for _, p := range pids {
			d, err := readCPU(p)
			if err != nil {
				return 0, false
			}
			sum += d
		}
		return sum, true
	}
	var repPIDs []int
	for _, t := range r.reps {
		repPIDs = append(repPIDs, t.pid)
	}
	cpu0, ok0 := cpu(repPIDs)
	rcpu0, rok0 := cpu(r.redis)
	deadline := time.Now().Add(cfg.redisDuration)
	start := time.Now()
	done := make([]int, len(r.workers))
	var wg sync.WaitGroup
	for i, w := range r.workers {
		wg.Go(func() {
			for ctx.Err() == nil && time.Now().Before(deadline) {
				rep, body := w.next(r.reps)
				if res := turn(ctx, hc, rep.base, formatNDJSON, body, b.turnTimeout()); res.err != nil {
					fail(res.err)
					continue
				}
				done[i]++
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	cpu1, ok1 := cpu(repPIDs)
	rcpu1, rok1 := cpu(r.redis)
	if err := ctx.Err(); err != nil {
		return err
	}
	n := 0
	for _, d := range done {
		n += d
	}
	r.rep.Turns += n
	if n == 0 {
		return fmt.Errorf("redis: %s: no turn succeeded (first failure: %s)", r.setup.name, *first)
	}
	r.turns = append(r.turns, float64(n)/elapsed.Seconds())
	if ok0 && ok1 && rok0 && rok1 {
		r.cpu = append(r.cpu, msOf((cpu1-cpu0)/time.Duration(n)))
		r.rcpu = append(r.rcpu, msOf((rcpu1-rcpu0)/time.Duration(n)))
	}

	var ends []time.Duration
	for range cfg.redisLatencyTurns {
		rep, body := r.single.next(r.reps)
		res := turn(ctx, hc, rep.base, formatNDJSON, body, b.turnTimeout())
		if res.err != nil {
			fail(res.err)
			continue
		}
		ends = append(ends, res.end)
	}
	r.rep.Turns += len(ends)
	if len(ends) == 0 {
		return fmt.Errorf("redis: %s: no one-at-a-time turn succeeded (first failure: %s)", r.setup.name, *first)
	}
	slices.Sort(ends)
	r.end = append(r.end, msOf(pct(ends, .5)))
	return nil
}

// writeRedis prints the redis phase.
func writeRedis(p func(string, ...any), r *RedisReport) {
	p("")
	p("REDIS (%d replicas; %d clients for %.0f s, then %d turns one at a time, per setup and round; %d rounds; median [min-max] over the rounds)",
		r.Replicas, r.Concurrency, r.BlockS, r.LatencyTurns, r.Rounds)
	p("setup\tturns\terr\tturns/s\treplicas' CPU/turn\tRedis CPU/turn\tend p50 (one at a time)")
	for _, s := range r.Setups {
		c, rc := "n/a", "n/a"
		if s.CPUPerTurnMS != nil {
			c, rc = fmtStat(*s.CPUPerTurnMS, 3, " ms"), fmtStat(*s.RedisCPUPerTurnMS, 3, " ms")
		}
		p("%s (%s)\t%d\t%d\t%s\t%s\t%s\t%s", s.Name, s.Redis, s.Turns, s.Errors, fmtStat(s.TurnsPerS, 1, ""), c, rc, fmtStat(s.EndP50MS, 2, " ms"))
	}
	x := func(v *float64) string {
		if v == nil {
			return "n/a"
		}
		return strconv.FormatFloat(*v, 'f', 3, 64) + "x"
	}
	ms := func(v *float64) string {
		if v == nil {
			return "n/a"
		}
		return fmt.Sprintf("%+.3f ms", *v)
	}
	p("cluster / single: turns/s %s, replicas' CPU per turn %s", x(r.ClusterTurnsRatio), x(r.ClusterCPURatio))
	p("acknowledgements (cluster+acks / cluster): end p50 %s (%s per turn), turns/s %s", x(r.AcksEndRatio), ms(r.AcksAddedEndMS), x(r.AcksTurnsRatio))
	p("shared limits (cluster+limits / cluster): replicas' CPU per turn %s (%s), end p50 %s", x(r.LimitsCPURatio), ms(r.LimitsAddedCPUMS), ms(r.LimitsAddedEndMS))
}
