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
	"strconv"
	"strings"
	"time"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/schemas"
)

// The rows phase: the fake model writes one A2UI surface, a Column of N Text rows, and
// the client measures what reaching it cost: the bytes it received next to the bytes of
// the surface's final state, the time, and the server's CPU and peak RSS. A2UI v0.9 has
// no "append child", so a server streaming a growing list re-sends its parent; re-sent
// after every chunk, the bytes grow with the square of the list. With
// --rows-baseline-bin the same turns run on a second server binary, side by side.

const (
	// rowsMarker, followed by the rows, the pace and a colon
	// ("genui-bench-rows-2000-paced:"), in a user message makes the fake model answer with
	// the rows script of that length at that pace.
	rowsMarker = "genui-bench-rows-"
	// rowsSurface is the surface the script creates.
	rowsSurface = "rows"
	// rowsWarmupRows is the length of the warm-up turn each server runs before its
	// measured turn.
	rowsWarmupRows = 10
	// rowsTargetRatio is the target: the A2UI bytes a client receives are at most this
	// many times the bytes of the surface's final state.
	rowsTargetRatio = 3
)

var rowsMarkerBytes = []byte(rowsMarker)

// The paces of the phase, in the order of the report: every chunk at once, or at
// --rows-tokens-per-s.
const (
	rowsUnpaced = "unpaced"
	rowsPaced   = "paced"
)

var rowsPaces = []string{rowsUnpaced, rowsPaced}

// The servers of the phase: the one under test (--server-bin or ./cmd/genui-server), and
// the one it is compared with (--rows-baseline-bin).
const (
	rowsCurrent  = "current"
	rowsBaseline = "baseline"
)

// rowsID names the script of n rows at a pace in the fake's table.
func rowsID(n int, pace string) string { return strconv.Itoa(n) + "-" + pace }

// rowsKey is what a user message holds to ask for the script of n rows at a pace.
func rowsKey(n int, pace string) string { return rowsMarker + rowsID(n, pace) + ":" }

// rowsScript is what the fake model writes for n rows: a line of prose, then an ```a2ui
// block: createSurface (the basic catalog), then updateComponents with a Column "root"
// listing every row, and the rows, one component per line, top-down.
func rowsScript(n int) string {
	var b strings.Builder
	b.Grow(80 * (n + 8))
	fmt.Fprintf(&b, "Here is the list you asked for, %d rows long.\n```a2ui\n", n)
	fmt.Fprintf(&b, `{"createSurface":{"surfaceId":%q,"catalogId":%q}}`+"\n", rowsSurface, a2ui.DefaultCatalogID(a2ui.V09))
	fmt.Fprintf(&b, `{"updateComponents":{"surfaceId":%q,"components":[`+"\n", rowsSurface)
	b.WriteString(`{"id":"root","component":"Column","children":[`)
	for i := 1; i <= n; i++ {
		if i > 1 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"row-%d"`, i)
	}
	b.WriteString("]},\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, `{"id":"row-%d","component":"Text","text":"Row %d of the list"}`, i, i)
		if i < n {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("]}}\n```\n")
	return b.String()
}

// rowsBody is the phase's request for n rows at a pace: /generateA2ui, v0.9, the default
// (basic) catalog, stateless.
func rowsBody(n int, pace string) []byte {
	b, _ := json.Marshal(schemas.GenerateA2UIRequest{Version: a2ui.V09,
		Conversation: []schemas.Message{userText(fmt.Sprintf("%s show me a list of %d rows", rowsKey(n, pace), n))}})
	return b
}

// How a rows turn ended.
const (
	rowsEndResult = "result" // the result line
	rowsEndError  = "error"  // an error line (a turn limit: status RESOURCE_EXHAUSTED)
	rowsEndCut    = "cut"    // --timeout reached first
	rowsEndFailed = "failed" // anything else: an HTTP or transport error, a stream without an end
)

// rowsTurnResult is one rows turn seen by the client. Times are from just before the
// request is sent.
type rowsTurnResult struct {
	firstMessage    time.Duration
	firstRenderable time.Duration // the first A2UI message after which the root has children
	lastMessage     time.Duration
	end             time.Duration // the result or error line, or the cut
	msgs            []json.RawMessage
	a2uiBytes       int64 // of the A2UI messages (their lines without the newline)
	body            int64 // the whole response body
	ended           string
	status          string // of the error line
	limit           string // details.limit of the error line
	value           any    // details.value of the error line
	message         string // the error line's message, or what failed
}

// rowsTurn runs one /generateA2ui turn (NDJSON) of request body, bounded by timeout. It
// keeps the A2UI messages whole for the final state and decodes them only until the
// surface shows a row, so that the client costs the machine little next to the server.
func rowsTurn(ctx context.Context, hc *http.Client, base string, body []byte, timeout time.Duration) (r rowsTurnResult, err error) {
	tctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	cut := func() bool { return tctx.Err() != nil && ctx.Err() == nil }
	res, perr := postJSON(tctx, hc, base+"/generateA2ui", body, "application/x-ndjson")
	if perr != nil {
		r.end = time.Since(start)
		switch {
		case ctx.Err() != nil:
			return r, ctx.Err()
		case cut():
			r.ended = rowsEndCut
		default:
			r.ended, r.message = rowsEndFailed, perr.Error()
		}
		return r, nil
	}
	defer res.Body.Close()
	cr := &countingReader{r: res.Body}
	br := bufio.NewReaderSize(cr, 256<<10)
	created := false
	for r.ended == "" {
		line, rerr := br.ReadBytes('\n')
		now := time.Since(start)
		if line = bytes.TrimSpace(line); len(line) > 0 {
			r.line(line, now, &created)
		}
		if rerr != nil && r.ended == "" {
			r.end = now
			switch {
			case ctx.Err() != nil:
				return r, ctx.Err()
			case cut():
				r.ended = rowsEndCut
			case errors.Is(rerr, io.EOF):
				r.ended, r.message = rowsEndFailed, "the stream ended without a result or error line"
			default:
				r.ended, r.message = rowsEndFailed, "reading the stream: "+rerr.Error()
			}
		}
	}
	r.body = cr.n
	return r, nil
}

// line handles one line of the stream, read at now.
func (r *rowsTurnResult) line(line []byte, now time.Duration, created *bool) {
	if bytes.HasPrefix(line, []byte(`{"type":`)) {
		var v struct {
			Type  string `json:"type"`
			Error struct {
				Status  string `json:"status"`
				Message string `json:"message"`
				Details struct {
					Limit string `json:"limit"`
					Value any    `json:"value"`
				} `json:"details"`
			} `json:"error"`
		}
		if err := json.Unmarshal(line, &v); err != nil {
			r.ended, r.end, r.message = rowsEndFailed, now, "not a JSON line: "+truncate(line, 300)
			return
		}
		switch v.Type {
		case "result":
			r.ended, r.end = rowsEndResult, now
		case "error":
			r.ended, r.end = rowsEndError, now
			r.status, r.message = v.Error.Status, v.Error.Message
			r.limit, r.value = v.Error.Details.Limit, v.Error.Details.Value
		}
		return
	}
	// An A2UI message.
	r.msgs = append(r.msgs, line)
	r.a2uiBytes += int64(len(line))
	if r.firstMessage == 0 {
		r.firstMessage = now
	}
	r.lastMessage = now
	if r.firstRenderable == 0 && rootShown(line, created) {
		r.firstRenderable = now
	}
}

// rootShown decodes an A2UI message and reports whether, after it, the client holds the
// surface (createSurface, noted in created) and a root with children.
func rootShown(line []byte, created *bool) bool {
	var m struct {
		CreateSurface *struct {
			SurfaceID string `json:"surfaceId"`
		} `json:"createSurface"`
		UpdateComponents *struct {
			SurfaceID  string `json:"surfaceId"`
			Components []struct {
				ID       string          `json:"id"`
				Children json.RawMessage `json:"children"`
			} `json:"components"`
		} `json:"updateComponents"`
	}
	if json.Unmarshal(line, &m) != nil {
		return false
	}
	if c := m.CreateSurface; c != nil && c.SurfaceID == rowsSurface {
		*created = true
	}
	u := m.UpdateComponents
	if !*created || u == nil || u.SurfaceID != rowsSurface {
		return false
	}
	for _, c := range u.Components {
		var kids []json.RawMessage
		if c.ID == "root" && json.Unmarshal(c.Children, &kids) == nil && len(kids) > 0 {
			return true
		}
	}
	return false
}

// rowsFinal compacts a turn's A2UI messages into the surface's final state
// (a2ui.Final) and returns its bytes and the rows it shows: the root's children that
// are Text components of the final state.
func rowsFinal(msgs []json.RawMessage) (finalBytes int64, rows int) {
	for _, m := range a2ui.Final(a2ui.V09, msgs) {
		finalBytes += int64(len(m))
		var v struct {
			UpdateComponents *struct {
				SurfaceID  string `json:"surfaceId"`
				Components []struct {
					ID        string   `json:"id"`
					Component string   `json:"component"`
					Children  []string `json:"children"`
				} `json:"components"`
			} `json:"updateComponents"`
		}
		if json.Unmarshal(m, &v) != nil || v.UpdateComponents == nil || v.UpdateComponents.SurfaceID != rowsSurface {
			continue
		}
		texts := map[string]bool{}
		var root []string
		for _, c := range v.UpdateComponents.Components {
			switch {
			case c.ID == "root":
				root = c.Children
			case c.Component == "Text":
				texts[c.ID] = true
			}
		}
		rows = 0
		for _, id := range root {
			if texts[id] {
				rows++
			}
		}
	}
	return finalBytes, rows
}

// rowsRun is one server's measured turn of a level at a pace.
type rowsRun struct {
	res       rowsTurnResult
	cpu       *time.Duration
	cpuSource string // clock or ticks
	peak      *int64
	pid       int
	modelSent int64 // text bytes the fake model had sent when its call ended
	hwmReset  bool  // VmHWM was reset before the turn
}

// rows runs the rows phase: for each --rows level and pace, one turn on a fresh child
// of each server (in child mode), the first server alternating between levels.
func (b *bench) rows(ctx context.Context) (*RowsReport, error) {
	cfg := b.cfg
	rep := &RowsReport{Endpoint: "POST /generateA2ui NDJSON", Version: a2ui.V09, CatalogID: a2ui.DefaultCatalogID(a2ui.V09),
		ChunkTokens: cfg.a2uiChunkTokens, TokensPerS: cfg.rowsTokensPerS, TimeoutS: cfg.timeout.Seconds(),
		WarmupRows: rowsWarmupRows, FreshServerPerTurn: cfg.url == "", BaselineBin: cfg.rowsBaselineBin,
		TargetRatio: rowsTargetRatio, Pass: true}
	servers := []string{rowsCurrent}
	if cfg.rowsBaselineBin != "" {
		servers = []string{rowsBaseline, rowsCurrent}
	}
	if cfg.url != "" {
		// One server, not ours to restart: warm it once.
		if err := b.rowsWarmup(ctx, b.tgt); err != nil {
			return nil, err
		}
	}
	b.logf("rows: levels %v, paces %s (%.0f tokens/s), %d-token chunks; servers %s; each turn bounded by --timeout %s",
		cfg.rowsLevels, strings.Join(rowsPaces, " and "), cfg.rowsTokensPerS, cfg.a2uiChunkTokens, strings.Join(servers, ", "), cfg.timeout)
	sampledOnly := false
	for li, n := range cfg.rowsLevels {
		order := servers
		if len(servers) == 2 && li%2 == 1 {
			order = []string{rowsCurrent, rowsBaseline}
		}
		for _, pace := range rowsPaces {
			fr := b.fake.rows[rowsID(n, pace)]
			if fr == nil {
				return nil, fmt.Errorf("rows: the fake model has no script of %d rows %s", n, pace)
			}
			lv := RowsLevel{Rows: n, Pace: pace, Components: len(fr.script.comps), ScriptBytes: len(fr.script.text),
				Chunks: len(fr.frames), ModelStreamMS: msOf(fr.at[len(fr.at)-1]), FirstServer: order[0]}
			for _, server := range order {
				run, err := b.rowsOne(ctx, server, n, pace, fr)
				if err != nil {
					return nil, err
				}
				if run.peak != nil && !run.hwmReset && !sampledOnly {
					sampledOnly = true
					b.note("rows: VmHWM could not be reset (/proc/<pid>/clear_refs): peak RSS is the largest VmRSS sampled every 20 ms during the turn")
				}
				turn := b.rowsTurnReport(server, n, pace, run)
				if server == rowsBaseline {
					lv.Baseline = &turn
				} else {
					lv.Current = turn
					if turn.ReceivedPerFinal == nil || *turn.ReceivedPerFinal > rowsTargetRatio {
						rep.Pass = false
					}
				}
			}
			if c, bl := lv.Current, lv.Baseline; bl != nil {
				lv.BaselineCut = bl.Ended == rowsEndCut
				lv.ReceivedRatio = ratioOf(float64(bl.A2UIBytes), float64(c.A2UIBytes))
				lv.TimeRatio = ratioOf(bl.EndMS, c.EndMS)
				if bl.CPUMS != nil && c.CPUMS != nil {
					lv.CPURatio = ratioOf(*bl.CPUMS, *c.CPUMS)
				}
				if bl.PeakRSSBytes != nil && c.PeakRSSBytes != nil {
					lv.PeakRSSRatio = ratioOf(float64(*bl.PeakRSSBytes), float64(*c.PeakRSSBytes))
				}
			}
			rep.Levels = append(rep.Levels, lv)
		}
	}
	return rep, nil
}

// ratioOf returns a / b rounded, or nil when b is not positive.
func ratioOf(a, b float64) *float64 {
	if !(b > 0) {
		return nil
	}
	return ptr(round(a/b, 2))
}

// rowsWarmup runs the warm-up turn on a server: it must end with its result and every
// row.
func (b *bench) rowsWarmup(ctx context.Context, t *target) error {
	calls := b.fake.calls.Load()
	r, err := rowsTurn(ctx, b.hc, t.base, rowsBody(rowsWarmupRows, rowsUnpaced), b.cfg.timeout)
	if err != nil {
		return err
	}
	if r.ended != rowsEndResult {
		return fmt.Errorf("rows: the warm-up turn ended with %s: %s %s", r.ended, r.status, r.message)
	}
	if _, rows := rowsFinal(r.msgs); rows != rowsWarmupRows {
		return fmt.Errorf("rows: the warm-up turn showed %d of its %d rows", rows, rowsWarmupRows)
	}
	if b.rep.Target.UsesFakeModel == nil {
		uses := b.fake.calls.Load() > calls
		b.rep.Target.UsesFakeModel = &uses
	}
	return nil
}

// rowsOne runs one measured turn: in child mode on a fresh child of the server after
// its warm-up turn, the child killed afterwards.
func (b *bench) rowsOne(ctx context.Context, server string, n int, pace string, fr *a2uiFrames) (*rowsRun, error) {
	t := b.tgt
	if b.cfg.url == "" {
		bin := b.bin
		if server == rowsBaseline {
			bin = b.cfg.rowsBaselineBin
		}
		var err error
		if t, err = startChild(ctx, b.hc, bin, b.childArgs(), b.fake.URL()); err != nil {
			return nil, fmt.Errorf("rows %s server: %w", server, err)
		}
		defer func() {
			t.Close()
			b.hc.CloseIdleConnections()
		}()
		if b.rep.Target.PID == 0 && server == rowsCurrent {
			b.rep.Target.PID, b.rep.Target.URL, b.rep.Target.Model = t.pid, t.base, t.model
		}
		if err := b.rowsWarmup(ctx, t); err != nil {
			return nil, fmt.Errorf("%s server: %w", server, err)
		}
	}
	run := &rowsRun{pid: t.pid}
	var sampler *rssSampler
	hwmReset := false
	if t.pid != 0 {
		hwmReset = resetPeak(t.pid) == nil
		sampler = sampleRSS(t.pid)
	}
	clock0, cerr0 := processCPUClock(t.pid)
	ticks0, ok0 := cpuOf(t)
	res, err := rowsTurn(ctx, b.hc, t.base, rowsBody(n, pace), b.cfg.timeout)
	clock1, cerr1 := processCPUClock(t.pid)
	ticks1, ok1 := cpuOf(t)
	if sampler != nil {
		p := sampler.Stop()
		if _, hwm, err := readRSS(t.pid); err == nil && hwmReset {
			p = max(p, hwm)
		}
		if p > 0 {
			run.peak = &p
		}
		run.hwmReset = hwmReset
	}
	if err != nil {
		return nil, err
	}
	switch {
	case t.pid == 0:
	case cerr0 == nil && cerr1 == nil:
		run.cpu, run.cpuSource = ptr(clock1-clock0), "clock"
	case ok0 && ok1:
		run.cpu, run.cpuSource = ptr(ticks1-ticks0), "ticks"
	}
	run.res = res
	if t.child != nil {
		t.Close() // ends the model call of a cut turn, so that the fake's record is whole
	}
	_, sent := b.fake.lastA2UICall()
	run.modelSent = int64(min(len(sent)*fr.chunkBytes, len(fr.script.text)))
	return run, nil
}

// rowsTurnReport gathers the figures of one measured turn and logs them.
func (b *bench) rowsTurnReport(server string, n int, pace string, run *rowsRun) RowsTurn {
	r := run.res
	finalBytes, rows := rowsFinal(r.msgs)
	turn := RowsTurn{Server: server, PID: run.pid, ModelSentBytes: run.modelSent, A2UIMessages: len(r.msgs),
		A2UIBytes: r.a2uiBytes, BodyBytes: r.body, FinalBytes: finalBytes, Rows: rows, Ended: r.ended, EndMS: msOf(r.end),
		ErrorStatus: r.status, Limit: r.limit, LimitValue: r.value, Message: r.message, CPUSource: run.cpuSource,
		PeakRSSBytes: run.peak}
	turn.ReceivedPerFinal = ratioOf(float64(r.a2uiBytes), float64(finalBytes))
	if r.firstMessage > 0 {
		turn.FirstMessageMS, turn.LastMessageMS = ptr(msOf(r.firstMessage)), ptr(msOf(r.lastMessage))
	}
	if r.firstRenderable > 0 {
		turn.FirstRenderableMS = ptr(msOf(r.firstRenderable))
		if r.lastMessage > 0 {
			turn.FirstRenderablePct = ptr(round(100*float64(r.firstRenderable)/float64(r.lastMessage), 1))
		}
	}
	if run.cpu != nil {
		turn.CPUMS = ptr(msOf(*run.cpu))
	}
	b.logf("rows %d %s, %s server: %s; %d A2UI messages, %s received for a final state of %s (%s), %d rows, end %s, CPU %s, peak RSS %s",
		n, pace, server, rowsEnding(&turn), turn.A2UIMessages, fmtBytes(turn.A2UIBytes), fmtBytes(turn.FinalBytes),
		fmtRatio(turn.ReceivedPerFinal), turn.Rows, fmtMS(turn.EndMS), fmtMSp(turn.CPUMS), fmtBytesp(turn.PeakRSSBytes))
	if r.ended == rowsEndFailed || (r.ended == rowsEndError && r.status != "RESOURCE_EXHAUSTED") {
		b.note("rows %d %s, %s server: the turn %s", n, pace, server, rowsEnding(&turn))
	}
	return turn
}

// rowsEnding says how a turn ended, for people.
func rowsEnding(t *RowsTurn) string {
	switch t.Ended {
	case rowsEndResult:
		return "result"
	case rowsEndError:
		if t.Limit != "" {
			return fmt.Sprintf("%s %s=%v", t.ErrorStatus, t.Limit, t.LimitValue)
		}
		return fmt.Sprintf("error %s: %s", t.ErrorStatus, t.Message)
	case rowsEndCut:
		return fmt.Sprintf("cut at %.0f s", t.EndMS/1000)
	}
	return "failed: " + t.Message
}

// fmtRatio prints a ratio as "3.41x", or n/a.
func fmtRatio(x *float64) string {
	if x == nil {
		return "n/a"
	}
	return fmt.Sprintf("%.2fx", *x)
}
