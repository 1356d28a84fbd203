package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/genuiserver/genui/schemas"
)

// The policy phase: the same turns on two servers running side by side, one with the
// default UI policy and one with every rule off (--policy-off all, which runs no policy
// code), to measure what checking every turn's UI against the policy costs the server's
// CPU.

const (
	// policyMarker in a user message makes the fake model answer with the v0.9 A2UI
	// script, unpaced (every chunk at once) whatever --a2a-tokens-per-s says.
	policyMarker = "genui-bench-policy"
	// policyTargetRatio is the target: the server with the policy spends at most this
	// many times the CPU per turn of the same server without it.
	policyTargetRatio = 1.05
	// policyWarmTurns is how many turns of each kind each server runs before the rounds.
	policyWarmTurns = 20
)

var policyMarkerBytes = []byte(policyMarker)

// policyText is the user message of the phase's A2UI turns.
const policyText = policyMarker + ": show me this week's report and a form to send it"

// policyA2UIBody is the phase's /generateA2ui request: v0.9, the default catalog,
// stateless.
func policyA2UIBody() []byte {
	b, _ := json.Marshal(schemas.GenerateA2UIRequest{Version: a2aVersion,
		Conversation: []schemas.Message{userText(policyText)}})
	return b
}

// The servers of the phase, in the order of the report, and their flags besides the base
// flags every child gets.
const (
	policyOn = iota
	policyOff
	numPolicyServers
)

var (
	policyServerNames = [numPolicyServers]string{"on", "off"}
	policyServerFlags = [numPolicyServers][]string{nil, {"--policy-off", "all"}}
)

// The kinds of turn of the phase, in the order of the report.
const (
	policyKindA2UI = iota
	policyKindGenUI
	numPolicyKinds
)

var policyKindNames = [numPolicyKinds]string{"A2UI", "genui"}

// policyServer is one server of the phase and what its blocks measured.
type policyServer struct {
	name    string
	t       *target
	session string                    // the genui turns' session (basic catalog)
	genui   []byte                    // the genui turn's request
	cpu     [numPolicyKinds][]float64 // ms per turn, one per round: from the CPU-time clock
	ticks   [numPolicyKinds][]int     // utime+stime ticks of /proc/<pid>/stat, one per round
	tickCPU [numPolicyKinds][]float64 // ms per turn from the ticks, one per round
	end     [numPolicyKinds][]float64
	clockOK bool // every block read the CPU-time clock
	ticksOK bool // every block read /proc/<pid>/stat
}

// processCPUClock returns the CPU time of a process (all its threads, exited ones
// included) from its CPU-time clock: clock_gettime on the clock of pid (as
// clock_getcpuclockid gives it), the kernel's sum_exec_runtime, which /proc/<pid>/stat
// splits into utime and stime and rounds down to 10 ms ticks. Linux lets any process
// read another's.
func processCPUClock(pid int) (time.Duration, error) {
	const cpuClockSched = 2 // CPUCLOCK_SCHED, a process's (not a thread's) clock
	id := (^pid)<<3 | cpuClockSched
	var ts unix.Timespec
	if err := unix.ClockGettime(int32(id), &ts); err != nil {
		return 0, fmt.Errorf("clock_gettime(the CPU-time clock of pid %d): %w", pid, err)
	}
	return time.Duration(ts.Nano()), nil
}

// policy runs the policy phase (child mode): two servers started side by side, the
// default UI policy on one and --policy-off all on the other, both up until the end of
// the phase. After warm-up turns on both, --policy-rounds rounds; in each, on each server
// (the first alternating between rounds), a block of --policy-turns unpaced A2UI v0.9
// turns through POST /generateA2ui, then as many genui turns through POST /generateUi
// (NDJSON, the latency phase's request and script), one after another. CPU per turn of a
// block = Δ(utime+stime) of its server / its turns. A failed turn, or A2UI messages of a
// server other than those of the off server's first turn, ends the phase with an error.
func (b *bench) policy(ctx context.Context) (*PolicyReport, error) {
	cfg := b.cfg
	fr := b.fake.policy
	s := fr.script
	rep := &PolicyReport{Version: a2aVersion, Components: len(s.comps), Chunks: len(fr.frames),
		TurnsPerRound: cfg.policyTurns, Rounds: cfg.policyRounds, WarmupTurns: policyWarmTurns,
		TargetRatio: policyTargetRatio}
	var srv [numPolicyServers]*policyServer
	defer func() {
		for _, v := range srv {
			if v != nil {
				v.t.Close()
			}
		}
		b.hc.CloseIdleConnections()
	}()
	for i := range srv {
		t, err := startChild(ctx, b.hc, b.bin, b.childArgs(policyServerFlags[i]...), b.fake.URL())
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", policyServerNames[i], err)
		}
		srv[i] = &policyServer{name: policyServerNames[i], t: t, clockOK: true, ticksOK: true}
		rep.Servers = append(rep.Servers, PolicyServer{Name: policyServerNames[i], Flags: policyServerFlags[i], PID: t.pid})
		id, err := b.warmSession(ctx, t)
		if err != nil {
			return nil, fmt.Errorf("policy %s: %w", policyServerNames[i], err)
		}
		srv[i].session, srv[i].genui = id, turnBody(id, "Show me a form")
	}
	if b.rep.Target.PID == 0 {
		// No other phase has started a server yet: the header names the policy-on one.
		on := srv[policyOn].t
		b.rep.Target.PID, b.rep.Target.URL, b.rep.Target.Model = on.pid, on.base, on.model
	}
	b.logf("policy: servers on (pid %d) and off (--policy-off all, pid %d); A2UI %s surface of %d components in %d chunks, unpaced, then genui turns; %d round(s) of %d turns per kind and server",
		srv[policyOn].t.pid, srv[policyOff].t.pid, a2aVersion, len(s.comps), len(fr.frames), cfg.policyRounds, cfg.policyTurns)

	a2uiBody := policyA2UIBody()
	var want []string // the A2UI messages of the off server's first turn
	// a2uiOne runs one A2UI turn and checks it against want (set by the first turn).
	a2uiOne := func(v *policyServer) (time.Duration, error) {
		calls := b.fake.calls.Load()
		u := a2uiTurn(ctx, b.hc, v.t.base, s, a2uiBody, cfg.timeout)
		n := b.fake.calls.Load() - calls
		switch {
		case u.err != nil:
			return 0, u.err
		case n != 1:
			return 0, fmt.Errorf("%d model calls for one turn", n)
		}
		got, err := canonicalA2UI(u.raw)
		if err != nil {
			return 0, err
		}
		if want == nil {
			want = got
			return u.result, nil
		}
		if len(got) != len(want) {
			return 0, fmt.Errorf("%d A2UI messages, where the off server's turn gave %d", len(got), len(want))
		}
		for i := range got {
			if got[i] != want[i] {
				return 0, fmt.Errorf("A2UI message %d differs from the off server's: %s, want %s",
					i+1, truncate([]byte(got[i]), 300), truncate([]byte(want[i]), 300))
			}
		}
		return u.result, nil
	}
	// genuiOne runs one genui turn, the latency phase's.
	genuiOne := func(v *policyServer) (time.Duration, error) {
		calls := b.fake.calls.Load()
		r := turn(ctx, b.hc, v.t.base, formatNDJSON, v.genui, b.turnTimeout())
		if n := b.fake.calls.Load() - calls; r.err == nil && n != 1 {
			r.err = fmt.Errorf("%d model calls for one turn", n)
		}
		return r.end, r.err
	}
	one := [numPolicyKinds]func(*policyServer) (time.Duration, error){a2uiOne, genuiOne}

	// Warm-up: the first turns pay one-time costs. The off server goes first, so that its
	// first A2UI turn gives the messages every later turn of both servers must carry; the
	// genui turns' surfaces are compared between the servers too.
	var surfaces [numPolicyServers][]string
	for _, i := range []int{policyOff, policyOn} {
		v := srv[i]
		for k := range numPolicyKinds {
			for w := range policyWarmTurns {
				if _, err := one[k](v); err != nil {
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					return nil, fmt.Errorf("policy %s: warm-up %s turn %d: %w", v.name, policyKindNames[k], w+1, err)
				}
			}
		}
		calls := b.fake.calls.Load()
		sf, err := genuiSurfaces(ctx, b.hc, v.t.base, v.genui, b.turnTimeout())
		if n := b.fake.calls.Load() - calls; err == nil && n != 1 {
			err = fmt.Errorf("%d model calls for one turn", n)
		}
		if err != nil {
			return nil, fmt.Errorf("policy %s: warm-up genui turn: %w", v.name, err)
		}
		surfaces[i] = sf
	}
	if !slices.Equal(surfaces[policyOn], surfaces[policyOff]) {
		return nil, fmt.Errorf("policy: the genui turn's surface differs between the servers: on %s, off %s",
			truncate([]byte(strings.Join(surfaces[policyOn], " ")), 500), truncate([]byte(strings.Join(surfaces[policyOff], " ")), 500))
	}
	rep.A2UIMessages, rep.GenUISurfaces = len(want), len(surfaces[policyOff])
	if b.rep.Target.UsesFakeModel == nil {
		uses := true // every warm-up turn made its one model call to the fake
		b.rep.Target.UsesFakeModel = &uses
	}

	for rnd := range cfg.policyRounds {
		order := []int{policyOn, policyOff}
		if rnd%2 == 1 {
			order = []int{policyOff, policyOn}
		}
		rep.FirstPerRound = append(rep.FirstPerRound, policyServerNames[order[0]])
		for _, i := range order {
			v := srv[i]
			for k := range numPolicyKinds {
				clock0, cerr0 := processCPUClock(v.t.pid)
				cpu0, ok0 := cpuOf(v.t)
				for n := range cfg.policyTurns {
					end, err := one[k](v)
					if err != nil {
						if ctx.Err() != nil {
							return nil, ctx.Err()
						}
						return nil, fmt.Errorf("policy round %d, %s server, %s turn %d: %w", rnd+1, v.name, policyKindNames[k], n+1, err)
					}
					v.end[k] = append(v.end[k], msOf(end))
				}
				cpu1, ok1 := cpuOf(v.t)
				clock1, cerr1 := processCPUClock(v.t.pid)
				if ok0 && ok1 {
					v.ticks[k] = append(v.ticks[k], int((cpu1-cpu0)*clockTick/time.Second))
					v.tickCPU[k] = append(v.tickCPU[k], msOf((cpu1-cpu0)/time.Duration(cfg.policyTurns)))
				} else {
					v.ticksOK = false
				}
				if cerr := errors.Join(cerr0, cerr1); cerr == nil {
					v.cpu[k] = append(v.cpu[k], msOf((clock1-clock0)/time.Duration(cfg.policyTurns)))
				} else if v.clockOK {
					v.clockOK = false
					b.logf("policy %s: %v", v.name, cerr)
				}
			}
			if err := v.t.alive(); err != nil {
				return nil, fmt.Errorf("policy %s: %w", v.name, err)
			}
		}
		on, off := srv[policyOn], srv[policyOff]
		b.logf("policy round %d (%s first): CPU per turn A2UI on %s, off %s; genui on %s, off %s", rnd+1, policyServerNames[order[0]],
			fmtCPURound(on.cpu[policyKindA2UI]), fmtCPURound(off.cpu[policyKindA2UI]),
			fmtCPURound(on.cpu[policyKindGenUI]), fmtCPURound(off.cpu[policyKindGenUI]))
	}

	rep.CPUSource = "clock"
	if !srv[policyOn].clockOK || !srv[policyOff].clockOK {
		rep.CPUSource = "ticks"
		b.note("policy: the servers' CPU-time clocks could not be read: CPU figures from /proc/<pid>/stat, in 10 ms ticks")
		for _, v := range srv {
			v.cpu = v.tickCPU
		}
	}
	rep.A2UI = b.policyKind(policyKindA2UI, srv, rep.CPUSource, "POST /generateA2ui NDJSON, A2UI v0.9, default catalog, stateless; the fake model's A2UI script, unpaced")
	rep.GenUI = b.policyKind(policyKindGenUI, srv, rep.CPUSource, `POST /generateUi NDJSON, a /startSession session with the basic catalog, "Show me a form"; the fake model's text and surface`)
	rep.Pass = rep.A2UI.Met && rep.GenUI.Met
	return rep, nil
}

// policyKind gathers the figures of one kind of turn on both servers.
// source is where the CPU figures come from: "clock" (the CPU-time clock, in ns) or
// "ticks" (/proc/<pid>/stat, in 10 ms ticks).
func (b *bench) policyKind(k int, srv [numPolicyServers]*policyServer, source, request string) PolicyKind {
	on, off := srv[policyOn], srv[policyOff]
	pk := PolicyKind{Kind: policyKindNames[k], Request: request, TurnsPerServer: len(on.end[k]),
		OnEndMS: statOf(on.end[k], 3), OffEndMS: statOf(off.end[k], 3)}
	if on.ticksOK && off.ticksOK {
		pk.OnTicksRounds, pk.OffTicksRounds = on.ticks[k], off.ticks[k]
	}
	if len(on.cpu[k]) == 0 || len(on.cpu[k]) != len(off.cpu[k]) {
		b.note("policy %s: no CPU figures (neither the servers' CPU-time clocks nor their /proc/<pid>/stat could be read)", pk.Kind)
		return pk
	}
	what := "policy " + pk.Kind + " "
	if source == "ticks" {
		// Only then does a figure rest on ticks: note those too few.
		pk.OnCPUPerTurnMS = b.cpuPerTurn(what+"on", "--policy-turns", on.cpu[k], on.ticks[k])
		pk.OffCPUPerTurnMS = b.cpuPerTurn(what+"off", "--policy-turns", off.cpu[k], off.ticks[k])
	} else {
		pk.OnCPUPerTurnMS, pk.OffCPUPerTurnMS = ptr(statOf(on.cpu[k], 4).Median), ptr(statOf(off.cpu[k], 4).Median)
	}
	pk.OnCPUPerTurnRoundsMS, pk.OffCPUPerTurnRoundsMS = on.cpu[k], off.cpu[k]
	var ratios []float64
	for r := range on.cpu[k] {
		if off.cpu[k][r] <= 0 {
			pk.CPURatioRounds = append(pk.CPURatioRounds, nil)
			continue
		}
		x := on.cpu[k][r] / off.cpu[k][r]
		pk.CPURatioRounds = append(pk.CPURatioRounds, ptr(round(x, 3)))
		ratios = append(ratios, x)
	}
	if len(ratios) < len(on.cpu[k]) {
		b.note("policy %s: %d round(s) where the off server's CPU reads 0: no ratio for them (raise --policy-turns)",
			pk.Kind, len(on.cpu[k])-len(ratios))
	}
	if len(ratios) > 0 {
		pk.CPURatio = ptr(statOf(ratios, 3).Median)
		pk.Met = *pk.CPURatio <= policyTargetRatio
	}
	if pk.OnCPUPerTurnMS != nil && pk.OffCPUPerTurnMS != nil {
		pk.AddedCPUPerTurnMS = ptr(round(*pk.OnCPUPerTurnMS-*pk.OffCPUPerTurnMS, 4))
		if *pk.OffCPUPerTurnMS > 0 {
			pk.CPURatioOfMedians = ptr(round(*pk.OnCPUPerTurnMS / *pk.OffCPUPerTurnMS, 3))
		}
	}
	return pk
}

// genuiSurfaces runs one genui turn (NDJSON) and returns its tool requests (the
// surfaces), each as canonical JSON, after checking that the stream ends with a result
// and holds no error.
func genuiSurfaces(ctx context.Context, hc *http.Client, base string, body []byte, timeout time.Duration) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := postJSON(ctx, hc, base+formatNDJSON.path(), body, formatNDJSON.accept())
	if err != nil {
		return nil, err
	}
	defer drain(res.Body)
	var out []string
	result := false
	br := bufio.NewReaderSize(res.Body, 64<<10)
	for {
		line, rerr := br.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 {
			switch kind, _ := classify(formatNDJSON, line); kind {
			case eventError:
				return nil, fmt.Errorf("error line: %s", truncate(line, 500))
			case eventResult:
				result = true
			case eventTool:
				c, err := canonicalA2UI([][]byte{line})
				if err != nil {
					return nil, fmt.Errorf("a toolRequest line: %v", err)
				}
				out = append(out, c[0])
			}
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) {
				return nil, fmt.Errorf("reading the stream: %w", rerr)
			}
			break
		}
	}
	switch {
	case len(out) == 0:
		return nil, errors.New("stream without a toolRequest event")
	case !result:
		return nil, errors.New("stream without a result event")
	}
	return out, nil
}
