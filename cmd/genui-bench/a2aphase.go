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
	"slices"
	"strings"
	"time"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/schemas"
)

// The a2a phase: the same A2UI turn through POST /generateA2ui (NDJSON), through the
// server's A2A agent (A2A v0.3 JSON-RPC message/stream, SSE, the A2UI v0.9 extension
// activated) and through its MCP tool generate_ui (mcppath.go), to measure what the A2A
// and MCP layers add to the turn's latency and to the server's CPU.

const (
	// a2aVersion is the A2UI version of the phase's turns, and a2aExtension the A2A
	// extension that activates it.
	a2aVersion   = "v0.9"
	a2aExtension = "https://a2ui.org/a2a-extension/a2ui/v0.9"
	// a2aMIME is the MIME type of the DataParts holding A2UI messages.
	a2aMIME = "application/json+a2ui"
	// a2aEndpoint is the agent's A2A v0.3 JSON-RPC endpoint.
	a2aEndpoint = "/a2a"
	// a2aMarker in a user message makes the fake model answer with the v0.9 A2UI script
	// at the a2a phase's pace.
	a2aMarker = "genui-bench-a2a"
	// a2aTargetRatio is the target: an A2A turn takes at most this many times what the
	// same /generateA2ui turn takes (time to the last A2UI message, to the end, CPU).
	a2aTargetRatio = 1.2
	// a2aMinTicks is the fewest CPU ticks per round that keep a tick within 5% of a round's CPU figure.
	a2aMinTicks = 20
)

var a2aMarkerBytes = []byte(a2aMarker)

// a2aText is the user message of every turn of the phase.
const a2aText = a2aMarker + ": show me this week's report and a form to send it"

// The two paths of the phase, in the order of the report.
const (
	pathGenerateA2UI = iota
	pathA2A
	pathMCP
	numPaths
)

var a2aPathNames = [numPaths]string{"/generateA2ui", "A2A", "MCP"}

// a2aNDJSONBody is the /generateA2ui request of the phase, in the conversation convID
// ("" for a stateless turn).
func a2aNDJSONBody(convID string) []byte {
	b, _ := json.Marshal(schemas.GenerateA2UIRequest{Version: a2aVersion, ConversationID: convID,
		Conversation: []schemas.Message{userText(a2aText)}})
	return b
}

// a2aBody is the message/stream request of the phase: a user message without contextId,
// which starts a task in a new context.
func a2aBody(messageID string) []byte { return a2aBodyText(messageID, a2aText) }

// a2aBodyText is a message/stream request of a user message of text without contextId.
func a2aBodyText(messageID, text string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"role":"user","kind":"message","messageId":%q,"parts":[{"kind":"text","text":%q}]}}}`,
		messageID, text)
}

// a2aTurnResult is one turn of either path seen by the client. Times are from just
// before the request is sent.
type a2aTurnResult struct {
	firstMessage time.Duration // first A2UI message
	lastMessage  time.Duration // last A2UI message
	end          time.Duration // the result line, or the final status
	messages     int           // A2UI messages
	raw          [][]byte      // the A2UI messages, as received
	received     int64         // response body bytes
	err          error
}

// canonicalA2UI returns A2UI messages in a form that does not depend on how they were
// encoded (key order, spacing), numbers as written.
func canonicalA2UI(raw [][]byte) ([]string, error) {
	out := make([]string, len(raw))
	for i, m := range raw {
		dec := json.NewDecoder(bytes.NewReader(m))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("A2UI message %d: %v", i+1, err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		out[i] = string(b)
	}
	return out, nil
}

// sameA2UI compares the A2UI messages of a turn with the reference turn's.
func sameA2UI(raw [][]byte, want []string) error {
	got, err := canonicalA2UI(raw)
	if err != nil {
		return err
	}
	if len(got) != len(want) {
		return fmt.Errorf("%d A2UI messages, where the /generateA2ui turn gave %d", len(got), len(want))
	}
	for i := range got {
		if got[i] != want[i] {
			return fmt.Errorf("A2UI message %d differs from the /generateA2ui turn's: %s, want %s",
				i+1, truncate([]byte(got[i]), 200), truncate([]byte(want[i]), 200))
		}
	}
	return nil
}

// a2aEvent is what the client reads of an event of a message/stream response: a
// JSON-RPC response whose result is the task or a status update.
type a2aEvent struct {
	Result *struct {
		Kind   string `json:"kind"`
		Final  bool   `json:"final"`
		Status *struct {
			State   string `json:"state"`
			Message *struct {
				Parts []struct {
					Kind     string          `json:"kind"`
					Text     string          `json:"text"`
					Data     json.RawMessage `json:"data"`
					Metadata struct {
						MimeType string `json:"mimeType"`
					} `json:"metadata"`
				} `json:"parts"`
			} `json:"message"`
		} `json:"status"`
	} `json:"result"`
	Error json.RawMessage `json:"error"`
}

// a2aStream is the state of a client reading a message/stream response.
type a2aStream struct {
	r      *a2aTurnResult
	model  *a2uiSurfaces
	events int
	final  string // the final status's state, once it came
}

// event handles the data of one SSE event, read at now.
func (st *a2aStream) event(data []byte, now time.Duration) error {
	var ev a2aEvent
	if err := json.Unmarshal(data, &ev); err != nil {
		return fmt.Errorf("an event is not JSON: %s", truncate(data, 300))
	}
	st.events++
	switch {
	case len(ev.Error) > 0 && !bytes.Equal(ev.Error, []byte("null")):
		return fmt.Errorf("JSON-RPC error: %s", truncate(ev.Error, 500))
	case ev.Result == nil:
		return fmt.Errorf("an event without result: %s", truncate(data, 300))
	case st.final != "":
		return fmt.Errorf("an event after the final status: %s", truncate(data, 300))
	case st.events == 1:
		if ev.Result.Kind != "task" {
			return fmt.Errorf("the first event is a %q, not the task: %s", ev.Result.Kind, truncate(data, 300))
		}
		return nil
	case ev.Result.Kind != "status-update" || ev.Result.Status == nil:
		return fmt.Errorf("an event of kind %q after the task, not a status update: %s", ev.Result.Kind, truncate(data, 300))
	}
	s := ev.Result.Status
	if ev.Result.Final {
		st.final = s.State
		st.r.end = now
	} else if s.State != "working" {
		return fmt.Errorf("a status update of state %q that is not final", s.State)
	}
	if s.Message == nil {
		return nil
	}
	for _, p := range s.Message.Parts {
		if p.Kind != "data" || p.Metadata.MimeType != a2aMIME {
			continue
		}
		var msg map[string]json.RawMessage
		if err := json.Unmarshal(p.Data, &msg); err != nil {
			return fmt.Errorf("an A2UI DataPart whose data is not an object: %s", truncate(p.Data, 300))
		}
		if err := st.model.apply(msg, nil); err != nil {
			return fmt.Errorf("%v: %s", err, truncate(p.Data, 300))
		}
		if st.r.firstMessage == 0 {
			st.r.firstMessage = now
		}
		st.r.lastMessage = now
		st.r.messages++
		st.r.raw = append(st.r.raw, bytes.Clone(p.Data))
	}
	return nil
}

// a2aTurn runs one A2A turn: message/stream with the A2UI extension, the SSE stream read
// to its end. It applies each A2UI message to a client surface model as it arrives, and
// checks that the stream is the task, working status updates, then a final status of
// state input-required (a surface waits for the user), and that the client renders every
// component of the script.
func a2aTurn(ctx context.Context, hc *http.Client, base string, s *a2uiScript, messageID string, timeout time.Duration) (r a2aTurnResult) {
	return a2aStreamTurn(ctx, hc, base, s, a2aBody(messageID), timeout)
}

// a2aStreamTurn is a2aTurn of a message/stream request body.
func a2aStreamTurn(ctx context.Context, hc *http.Client, base string, s *a2uiScript, body []byte, timeout time.Duration) (r a2aTurnResult) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	res, err := postJSON(ctx, hc, base+a2aEndpoint, body, "text/event-stream", "X-A2A-Extensions", a2aExtension)
	if err != nil {
		r.err = err
		return r
	}
	defer drain(res.Body)
	if ct := res.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/event-stream") {
		b, _ := io.ReadAll(io.LimitReader(res.Body, 512))
		r.err = fmt.Errorf("POST %s: Content-Type %q, not an SSE stream: %s", a2aEndpoint, ct, bytes.TrimSpace(b))
		return r
	}
	if ext := res.Header.Get("X-A2A-Extensions"); !strings.Contains(ext, a2aExtension) {
		r.err = fmt.Errorf("POST %s: the response does not activate the A2UI extension (X-A2A-Extensions %q)", a2aEndpoint, ext)
		return r
	}
	st := &a2aStream{r: &r, model: newA2UISurfaces(s.version)}
	cr := &countingReader{r: res.Body}
	br := bufio.NewReaderSize(cr, 64<<10)
	var data []byte
	pending := false // data lines without the blank line ending their event
	for {
		line, rerr := br.ReadBytes('\n')
		now := time.Since(start)
		if len(line) > 0 && r.err == nil {
			line = bytes.TrimRight(line, "\r\n")
			switch {
			case len(line) == 0:
				if pending {
					r.err = st.event(data, now)
				}
				data, pending = data[:0], false
			case bytes.HasPrefix(line, []byte("data:")):
				if pending {
					data = append(data, '\n')
				}
				data = append(data, bytes.TrimPrefix(line[len("data:"):], []byte(" "))...)
				pending = true
			}
			// Comments (keep-alives), id: and event: lines carry nothing the client needs.
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) && r.err == nil {
				r.err = fmt.Errorf("reading the stream: %w", rerr)
			}
			break
		}
	}
	r.received = cr.n
	switch {
	case r.err != nil:
	case pending:
		r.err = errors.New("the stream ended inside an event")
	case st.events == 0:
		r.err = errors.New("an empty stream")
	case st.final == "":
		r.err = errors.New("the stream ended without a final status")
	case st.final != "input-required":
		r.err = fmt.Errorf("the final status is %q, want \"input-required\" (a surface waits for the user)", st.final)
	case r.messages == 0:
		r.err = errors.New("the stream holds no A2UI message")
	}
	if r.err == nil {
		if miss := st.model.missing(s); len(miss) > 0 {
			r.err = fmt.Errorf("the client renders %d of the %d scripted components at the end; missing: %s",
				len(s.comps)-len(miss), len(s.comps), strings.Join(miss, ", "))
		}
	}
	return r
}

// a2aPathRun gathers the figures of one path over the rounds.
type a2aPathRun struct {
	rep                     A2APathReport
	first, last, end, bytes []float64
	cpu                     []float64 // ms per turn, one per round
	ticks                   []int     // CPU ticks of the server per round
	cpuOK                   bool
}

func (p *a2aPathRun) add(r a2aTurnResult) {
	p.rep.Turns++
	if r.err != nil {
		p.rep.Errors++
		if p.rep.FirstError == "" {
			p.rep.FirstError = r.err.Error()
		}
		return
	}
	p.first, p.last, p.end = append(p.first, msOf(r.firstMessage)), append(p.last, msOf(r.lastMessage)), append(p.end, msOf(r.end))
	p.bytes = append(p.bytes, float64(r.received))
}

// a2a runs the a2a phase: after a warm-up turn of each path, --a2a-rounds rounds, each a
// block of --a2a-turns turns of each path (the first path alternating between rounds),
// one turn at a time.
func (b *bench) a2a(ctx context.Context, t *target) (*A2AReport, error) {
	cfg := b.cfg
	fr := b.fake.a2a
	s := fr.script
	stream := fr.at[len(fr.at)-1]
	rep := &A2AReport{Version: a2aVersion, Extension: a2aExtension, Baseline: cfg.a2aBaseline,
		TokensPerS: cfg.a2aTokensPerS, Paced: cfg.a2aTokensPerS > 0, ChunkTokens: cfg.a2uiChunkTokens,
		Components: len(s.comps), Chunks: len(fr.frames), ModelStreamMS: msOf(stream),
		TurnsPerRound: cfg.a2aTurns, Rounds: cfg.a2aRounds, TargetRatio: a2aTargetRatio}
	if rep.Paced {
		rep.ModelLatencyMS = msOf(cfg.a2uiLatency)
	}
	timeout := cfg.timeout + stream
	nonce := make([]byte, 6)
	_, _ = rand.Read(nonce)
	tag := hex.EncodeToString(nonce)
	seq := 0
	// turn runs one turn of a path; want, unless nil, the A2UI messages it must carry.
	turn := func(path int, want []string) a2aTurnResult {
		seq++
		calls := b.fake.calls.Load()
		var r a2aTurnResult
		switch path {
		case pathA2A:
			r = a2aTurn(ctx, b.hc, t.base, s, fmt.Sprintf("bench-a2a-%s-%d", tag, seq), timeout)
		case pathMCP:
			r = mcpTurn(ctx, b.hc, t.base, s, timeout)
		default:
			conv := ""
			if cfg.a2aBaseline == "held" {
				conv = fmt.Sprintf("bench-a2a-%s-%d", tag, seq)
			}
			u := a2uiTurn(ctx, b.hc, t.base, s, a2aNDJSONBody(conv), timeout)
			r = a2aTurnResult{firstMessage: u.firstMessage, lastMessage: u.complete, end: u.result,
				messages: u.messages, raw: u.raw, received: u.received, err: u.err}
		}
		n := b.fake.calls.Load() - calls
		switch {
		case r.err != nil:
		case n != 1:
			r.err = fmt.Errorf("%d model calls for one turn", n)
		case want != nil:
			r.err = sameA2UI(r.raw, want)
		}
		if r.err != nil {
			r.err = fmt.Errorf("%s: %w", a2aPathNames[path], r.err)
		}
		return r
	}
	pace := "unpaced (every chunk at once)"
	if rep.Paced {
		pace = fmt.Sprintf("%.0f tokens/s, %.2f s", cfg.a2aTokensPerS, stream.Seconds())
	}
	b.logf("a2a: A2UI %s surface of %d components in %d chunks, %s; %d round(s) of %d turns per path, /generateA2ui (%s), A2A message/stream and MCP generate_ui",
		a2aVersion, len(s.comps), len(fr.frames), pace, cfg.a2aRounds, cfg.a2aTurns, cfg.a2aBaseline)
	// Warm-up: the first turns of each path pay one-time costs. The /generateA2ui turn
	// gives the A2UI messages every turn must carry.
	w := turn(pathGenerateA2UI, nil)
	if w.err != nil {
		return nil, fmt.Errorf("a2a: warm-up turn: %w", w.err)
	}
	want, err := canonicalA2UI(w.raw)
	if err != nil {
		return nil, fmt.Errorf("a2a: warm-up turn: %w", err)
	}
	rep.A2UIMessages = len(want)
	// MCP's result hands the turn over whole: the surface in its final state.
	raw := make([]json.RawMessage, len(w.raw))
	for i, m := range w.raw {
		raw[i] = m
	}
	final := make([][]byte, 0, 2)
	for _, m := range a2ui.Final(a2ui.V09, raw) {
		final = append(final, m)
	}
	wantFinal, err := canonicalA2UI(final)
	if err != nil {
		return nil, fmt.Errorf("a2a: warm-up turn: %w", err)
	}
	wants := [numPaths][]string{want, want, wantFinal}
	for _, path := range []int{pathA2A, pathMCP} {
		if w := turn(path, wants[path]); w.err != nil {
			b.note("a2a: the warm-up %s turn failed: %v", a2aPathNames[path], w.err)
		}
	}
	var runs [numPaths]*a2aPathRun
	for i := range runs {
		runs[i] = &a2aPathRun{cpuOK: true}
	}
	for rnd := range cfg.a2aRounds {
		// Each path goes first in turn.
		var order []int
		for i := range numPaths {
			order = append(order, (i+rnd)%numPaths)
		}
		for _, path := range order {
			p := runs[path]
			cpu0, ok0 := cpuOf(t)
			for range cfg.a2aTurns {
				r := turn(path, wants[path])
				if err := ctx.Err(); err != nil {
					return nil, err
				}
				if r.err != nil {
					b.logf("a2a round %d: %v", rnd+1, r.err)
				}
				p.add(r)
			}
			cpu1, ok1 := cpuOf(t)
			if ok0 && ok1 {
				p.ticks = append(p.ticks, int((cpu1-cpu0)*clockTick/time.Second))
				v := msOf((cpu1 - cpu0) / time.Duration(cfg.a2aTurns))
				p.cpu = append(p.cpu, v)
				p.rep.CPUPerTurnRoundsMS = append(p.rep.CPUPerTurnRoundsMS, v)
			} else {
				p.cpuOK = false
			}
		}
		b.logf("a2a round %d: end median /generateA2ui %s, A2A %s, MCP %s; CPU per turn %s, %s, %s", rnd+1,
			fmtMS(statOf(runs[0].end, 3).Median), fmtMS(statOf(runs[1].end, 3).Median), fmtMS(statOf(runs[2].end, 3).Median),
			fmtCPURound(runs[0].cpu), fmtCPURound(runs[1].cpu), fmtCPURound(runs[2].cpu))
	}
	for path, p := range runs {
		p.rep.Path = a2aPathNames[path]
		if len(p.end) > 0 {
			p.rep.FirstMessageMS, p.rep.LastMessageMS = ptr(statOf(p.first, 3)), ptr(statOf(p.last, 3))
			p.rep.EndMS, p.rep.ResponseBytes = ptr(statOf(p.end, 3)), ptr(int64(statOf(p.bytes, 0).Median))
			p.rep.A2UIMessages = len(want)
		}
		if p.cpuOK {
			p.rep.CPUPerTurnMS = b.cpuPerTurn("a2a "+a2aPathNames[path], "--a2a-turns", p.cpu, p.ticks)
		}
		b.noteFailures("a2a "+p.rep.Path, p.rep.Errors, p.rep.Turns, p.rep.FirstError)
	}
	rep.GenerateA2UI, rep.A2A, rep.MCP = runs[pathGenerateA2UI].rep, runs[pathA2A].rep, runs[pathMCP].rep
	g, a, m := &rep.GenerateA2UI, &rep.A2A, &rep.MCP
	ratio := medianRatio
	added := func(x, y *a2uiStat) *float64 { return medianAdded(x, y, 3) }
	rep.LastMessageRatio, rep.EndRatio = ratio(a.LastMessageMS, g.LastMessageMS), ratio(a.EndMS, g.EndMS)
	rep.AddedFirstMessageMS, rep.AddedLastMessageMS = added(a.FirstMessageMS, g.FirstMessageMS), added(a.LastMessageMS, g.LastMessageMS)
	rep.AddedEndMS = added(a.EndMS, g.EndMS)
	if a.CPUPerTurnMS != nil && g.CPUPerTurnMS != nil {
		if *g.CPUPerTurnMS > 0 {
			rep.CPURatio = ptr(round(*a.CPUPerTurnMS / *g.CPUPerTurnMS, 3))
			rep.AddedCPUPerTurnMS = ptr(round(*a.CPUPerTurnMS-*g.CPUPerTurnMS, 4))
		} else {
			b.note("a2a: the /generateA2ui turns took less than one CPU tick (10 ms) per round: no CPU ratio (raise --a2a-turns)")
		}
	}
	rep.MCPLastMessageRatio, rep.MCPEndRatio = ratio(m.LastMessageMS, g.LastMessageMS), ratio(m.EndMS, g.EndMS)
	rep.MCPAddedLastMessageMS, rep.MCPAddedEndMS = added(m.LastMessageMS, g.LastMessageMS), added(m.EndMS, g.EndMS)
	if m.CPUPerTurnMS != nil && g.CPUPerTurnMS != nil && *g.CPUPerTurnMS > 0 {
		rep.MCPCPURatio = ptr(round(*m.CPUPerTurnMS / *g.CPUPerTurnMS, 3))
		rep.MCPAddedCPUPerTurnMS = ptr(round(*m.CPUPerTurnMS-*g.CPUPerTurnMS, 4))
	}
	for _, path := range []int{pathA2A, pathMCP} {
		if len(runs[path].end) == 0 {
			b.note("a2a: no successful %s turn: no ratio", a2aPathNames[path])
		}
	}
	within := func(x *float64) bool { return x == nil || *x <= a2aTargetRatio }
	rep.Pass = g.Errors == 0 && a.Errors == 0 && m.Errors == 0 && rep.LastMessageRatio != nil && rep.EndRatio != nil &&
		within(rep.LastMessageRatio) && within(rep.EndRatio) && within(rep.CPURatio) &&
		rep.MCPLastMessageRatio != nil && within(rep.MCPLastMessageRatio) && within(rep.MCPEndRatio) && within(rep.MCPCPURatio)
	return rep, nil
}

// fmtCPURound prints the latest round's CPU per turn of a path.
func fmtCPURound(cpu []float64) string {
	if len(cpu) == 0 {
		return "n/a"
	}
	return fmtMS(cpu[len(cpu)-1])
}

// medianRatio is x's median over y's (nil when either is missing).
func medianRatio(x, y *a2uiStat) *float64 {
	if x == nil || y == nil || y.Median <= 0 {
		return nil
	}
	return ptr(round(x.Median/y.Median, 3))
}

// medianAdded is x's median less y's, to digits decimals (nil when either is missing).
func medianAdded(x, y *a2uiStat, digits int) *float64 {
	if x == nil || y == nil {
		return nil
	}
	return ptr(round(x.Median-y.Median, digits))
}

// cpuPerTurn is the median of the rounds' CPU per turn (nil without rounds), with a note
// when a round's figure rests on too few clock ticks; flag is what raises the turns.
func (b *bench) cpuPerTurn(what, flag string, cpu []float64, ticks []int) *float64 {
	if len(cpu) == 0 {
		return nil
	}
	if n := slices.Min(ticks); n < a2aMinTicks {
		b.note("%s: a round's CPU rests on %d ticks of %d ms (one tick is %.0f%% of it): raise %s for a finer CPU figure",
			what, n, time.Second/clockTick/time.Millisecond, 100/float64(max(n, 1)), flag)
	}
	return ptr(statOf(cpu, 4).Median)
}

// noteFailures notes the turns of a path that failed, with the first error.
func (b *bench) noteFailures(what string, failed, turns int, first string) {
	if failed > 0 {
		b.note("%s: %d of %d turns failed, first: %s", what, failed, turns, first)
	}
}
