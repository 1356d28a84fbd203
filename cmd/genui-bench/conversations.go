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
	"time"

	"github.com/genuiserver/genui/schemas"
)

// The client tool of the conversations phase, declared on every request of its round trips.
var getLocationTool = schemas.ClientTool{Name: "getLocation", Description: "The user's city",
	InputSchema: schemas.Object(`{"type":"object","properties":{}}`)}

// getLocationOutput is what the client's getLocation returns.
var getLocationOutput = json.RawMessage(`{"city":"Berlin"}`)

// Targets of the conversations phase: a held conversation holds less than twice what its
// client received, and a held turn costs the server no more CPU than a stateless one.
const (
	convHeldBytesTarget = 2.0
	convCPUTarget       = 1.0
)

func userText(text string) schemas.Message {
	return schemas.Message{Role: "user", Parts: []schemas.Part{{Type: schemas.PartText, Text: text}}}
}

// convTurnResult is one /generateUi turn (NDJSON) read whole by a client that keeps the
// conversation.
type convTurnResult struct {
	end      time.Duration // request to result line
	received int64         // response body bytes
	sent     int64         // request body bytes
	text     string        // all text of the turn
	surfaces []schemas.SurfaceDefinition
	calls    []schemas.Part // toolCall parts, as the stream gave them
	finish   string         // finishReason of the result
	err      error
}

// modelMessage is the model message a client appends to its history after the turn, as
// the web playground does: the turn's text, then one ui part per surface shown (in its
// latest version), then the calls of client tools.
func (r *convTurnResult) modelMessage() (schemas.Message, bool) {
	m := schemas.Message{Role: "model"}
	if r.text != "" {
		m.Parts = append(m.Parts, schemas.Part{Type: schemas.PartText, Text: r.text})
	}
	for i := range r.surfaces {
		m.Parts = append(m.Parts, schemas.Part{Type: schemas.PartUI, Definition: &r.surfaces[i]})
	}
	m.Parts = append(m.Parts, r.calls...)
	return m, len(m.Parts) > 0
}

// convTurn posts one /generateUi request and reads its NDJSON stream to the end.
func convTurn(ctx context.Context, hc *http.Client, base string, req *schemas.GenerateRequest, timeout time.Duration) (r convTurnResult) {
	body, err := json.Marshal(req)
	if err != nil {
		r.err = err
		return r
	}
	r.sent = int64(len(body))
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	res, err := postJSON(ctx, hc, base+"/generateUi", body, "application/x-ndjson")
	if err != nil {
		r.err = err
		return r
	}
	defer drain(res.Body)
	cr := &countingReader{r: res.Body}
	br := bufio.NewReaderSize(cr, 16<<10)
	var text bytes.Buffer
	for {
		line, rerr := br.ReadBytes('\n')
		if line = bytes.TrimSpace(line); len(line) > 0 && r.err == nil {
			if err := r.line(line, &text); err != nil {
				r.err = err
			} else if r.end == 0 && r.finish != "" {
				r.end = time.Since(start)
			}
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) && r.err == nil {
				r.err = fmt.Errorf("reading the stream: %w", rerr)
			}
			break
		}
	}
	r.received = cr.n
	r.text = text.String()
	if r.err == nil && r.end == 0 {
		r.err = errors.New("stream without a result line")
	}
	return r
}

// line handles one NDJSON line: text, toolRequest (surfaces), toolCall, result or error.
func (r *convTurnResult) line(line []byte, text *bytes.Buffer) error {
	var ev struct {
		Type         string `json:"type"`
		Text         string `json:"text"`
		ToolRequests []struct {
			Name  string `json:"name"`
			Input struct {
				SurfaceID  string `json:"surfaceId"`
				Definition struct {
					Root    string           `json:"root"`
					Widgets []map[string]any `json:"widgets"`
				} `json:"definition"`
			} `json:"input"`
		} `json:"toolRequests"`
		CallID    string          `json:"callId"`
		Name      string          `json:"name"`
		Input     json.RawMessage `json:"input"`
		Signature string          `json:"signature"`
		Result    *struct {
			FinishReason string `json:"finishReason"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &ev); err != nil {
		return fmt.Errorf("not a JSON line: %s", truncate(line, 300))
	}
	switch ev.Type {
	case "text":
		text.WriteString(ev.Text)
	case "toolRequest":
		for _, tr := range ev.ToolRequests {
			id := tr.Input.SurfaceID
			i := slices.IndexFunc(r.surfaces, func(d schemas.SurfaceDefinition) bool { return d.SurfaceID == id })
			switch tr.Name {
			case "addOrUpdateSurface":
				d := schemas.SurfaceDefinition{SurfaceID: id, Root: tr.Input.Definition.Root, Widgets: tr.Input.Definition.Widgets}
				if d.Widgets == nil {
					d.Widgets = []map[string]any{}
				}
				if i >= 0 {
					r.surfaces[i] = d
				} else {
					r.surfaces = append(r.surfaces, d)
				}
			case "deleteSurface":
				if i >= 0 {
					r.surfaces = slices.Delete(r.surfaces, i, i+1)
				}
			}
		}
	case "toolCall":
		if ev.CallID == "" || ev.Name == "" {
			return fmt.Errorf("toolCall line without callId or name: %s", truncate(line, 300))
		}
		input := ev.Input
		if input == nil {
			input = json.RawMessage(`{}`)
		}
		r.calls = append(r.calls, schemas.Part{Type: schemas.PartToolCall, CallID: ev.CallID, Name: ev.Name, Input: schemas.Object(input), Signature: ev.Signature})
	case "result":
		if ev.Result == nil || ev.Result.FinishReason == "" {
			return fmt.Errorf("result line without finishReason: %s", truncate(line, 300))
		}
		r.finish = ev.Result.FinishReason
	case "error":
		return fmt.Errorf("error line: %s", truncate(line, 500))
	}
	return nil
}

// roundTrip is one client tool round trip: the call turn and its continuation.
type roundTrip struct {
	call, cont, whole time.Duration
	err               error
}

// clientToolRoundTrip runs a turn whose model calls getLocation, then continues it
// statelessly with the tool's result.
func (b *bench) clientToolRoundTrip(ctx context.Context, t *target) (rt roundTrip) {
	start := time.Now()
	req := &schemas.GenerateRequest{Catalog: b.catalog, ClientTools: []schemas.ClientTool{getLocationTool},
		Conversation: []schemas.Message{userText(toolMarker + ": where am I? Use getLocation")}}
	r := convTurn(ctx, b.hc, t.base, req, b.turnTimeout())
	switch {
	case r.err != nil:
		rt.err = fmt.Errorf("call turn: %w", r.err)
	case r.finish != "interrupted":
		rt.err = fmt.Errorf("call turn: finishReason %q, want \"interrupted\"", r.finish)
	case len(r.calls) != 1 || r.calls[0].Name != getLocationTool.Name:
		rt.err = fmt.Errorf("call turn: %d toolCall lines, want one of %s", len(r.calls), getLocationTool.Name)
	}
	if rt.err != nil {
		return rt
	}
	rt.call = r.end
	model, _ := r.modelMessage()
	call := r.calls[0]
	req.Conversation = append(req.Conversation, model, schemas.Message{Role: "user", Parts: []schemas.Part{
		{Type: schemas.PartToolResult, CallID: call.CallID, Name: call.Name, Output: getLocationOutput}}})
	r = convTurn(ctx, b.hc, t.base, req, b.turnTimeout())
	switch {
	case r.err != nil:
		rt.err = fmt.Errorf("continuation: %w", r.err)
	case r.finish != "stop":
		rt.err = fmt.Errorf("continuation: finishReason %q, want \"stop\"", r.finish)
	case len(r.calls) > 0:
		rt.err = fmt.Errorf("continuation: %d more toolCall lines", len(r.calls))
	}
	rt.cont, rt.whole = r.end, time.Since(start)
	return rt
}

// convRun is what one conversation cost: its turns, bytes and turn times.
type convRun struct {
	turns          int // turns that ended with a result
	received, sent int64
	times          []time.Duration
	err            error
}

// conversation runs n turns of one conversation, one after another. With id empty the
// client keeps the history and resends it (stateless); otherwise the server holds it
// under that conversationId and each request carries only the new user message.
func (b *bench) conversation(ctx context.Context, t *target, id string, n int) (c convRun) {
	req := &schemas.GenerateRequest{Catalog: b.catalog, ConversationID: id}
	var history []schemas.Message
	for i := range n {
		user := userText(fmt.Sprintf("Turn %d: show me a small form", i+1))
		if id == "" {
			history = append(history, user)
			req.Conversation = history
		} else {
			req.Conversation = []schemas.Message{user}
		}
		r := convTurn(ctx, b.hc, t.base, req, b.turnTimeout())
		c.received += r.received
		c.sent += r.sent
		if r.err == nil && r.finish != "stop" {
			r.err = fmt.Errorf("finishReason %q, want \"stop\"", r.finish)
		}
		if r.err != nil {
			c.err = fmt.Errorf("turn %d: %w", i+1, r.err)
			return c
		}
		c.turns++
		c.times = append(c.times, r.end)
		if m, ok := r.modelMessage(); ok && id == "" {
			history = append(history, m)
		}
	}
	return c
}

// heldStats reads the conversations the server holds in memory from GET /readyz; ok is
// false when it does not report them (a Redis store, another implementation).
func heldStats(ctx context.Context, hc *http.Client, base string) (held, size int64, ok bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/readyz", nil)
	if err != nil {
		return 0, 0, false, err
	}
	res, err := hc.Do(req)
	if err != nil {
		return 0, 0, false, err
	}
	defer drain(res.Body)
	if res.StatusCode != http.StatusOK {
		return 0, 0, false, httpError("GET /readyz", res)
	}
	var v struct {
		Conversations *struct {
			Held  *int64 `json:"held"`
			Bytes *int64 `json:"bytes"`
		} `json:"conversations"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 1<<20)).Decode(&v); err != nil {
		return 0, 0, false, fmt.Errorf("GET /readyz: %w", err)
	}
	if v.Conversations == nil || v.Conversations.Held == nil || v.Conversations.Bytes == nil {
		return 0, 0, false, nil
	}
	return *v.Conversations.Held, *v.Conversations.Bytes, true, nil
}

// convMode gathers the figures of one mode over the rounds.
type convMode struct {
	rep            ConvModeReport
	cpu            []float64 // ms per turn, one per round
	cpuOK          bool
	received, sent []float64
	times          []float64
}

// runRound runs --conv-conversations conversations of one mode and records the server's
// CPU per turn over them.
func (b *bench) runRound(ctx context.Context, t *target, m *convMode, rnd int, held bool, nonce string) error {
	cfg := b.cfg
	cpu0, ok0 := cpuOf(t)
	turns := 0
	for i := range cfg.convConversations {
		id := ""
		if held {
			id = fmt.Sprintf("bench-conv-%s-r%d-c%d", nonce, rnd, i)
		}
		c := b.conversation(ctx, t, id, cfg.convLength)
		if err := ctx.Err(); err != nil {
			return err
		}
		m.rep.Conversations++
		m.rep.Turns += c.turns
		turns += c.turns
		if c.err != nil {
			m.rep.Errors++
			if m.rep.FirstError == "" {
				m.rep.FirstError = c.err.Error()
			}
			continue
		}
		m.received, m.sent = append(m.received, float64(c.received)), append(m.sent, float64(c.sent))
		for _, d := range c.times {
			m.times = append(m.times, msOf(d))
		}
	}
	cpu1, ok1 := cpuOf(t)
	if ok0 && ok1 && turns > 0 {
		v := msOf((cpu1 - cpu0) / time.Duration(turns))
		m.cpu = append(m.cpu, v)
		m.rep.CPUPerTurnRoundsMS = append(m.rep.CPUPerTurnRoundsMS, v)
	} else {
		m.cpuOK = false
	}
	return nil
}

// conversations runs the conversations phase: client tool round trips, then
// conversations the client keeps and conversations the server holds, in alternating
// rounds.
func (b *bench) conversations(ctx context.Context, t *target) (*ConversationsReport, error) {
	cfg := b.cfg
	rep := &ConversationsReport{RoundTrips: cfg.convTurns, Conversations: cfg.convConversations,
		TurnsPerConversation: cfg.convLength, Rounds: cfg.convRounds,
		HeldBytesTarget: convHeldBytesTarget, CPURatioTarget: convCPUTarget}

	b.logf("conversations: %d client tool round trips (%s)", cfg.convTurns, getLocationTool.Name)
	var call, cont, whole []float64
	for i := range cfg.convTurns {
		rt := b.clientToolRoundTrip(ctx, t)
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if rt.err != nil {
			rep.RoundTripErrors++
			if rep.RoundTripFirstError == "" {
				rep.RoundTripFirstError = rt.err.Error()
			}
			b.logf("conversations: round trip %d: %v", i+1, rt.err)
			continue
		}
		call, cont, whole = append(call, msOf(rt.call)), append(cont, msOf(rt.cont)), append(whole, msOf(rt.whole))
	}
	if rep.RoundTripErrors > 0 {
		b.note("conversations: %d of %d client tool round trips failed, first: %s", rep.RoundTripErrors, cfg.convTurns, rep.RoundTripFirstError)
	}
	if len(whole) > 0 {
		rep.CallTurnMS, rep.ContinuationMS, rep.RoundTripMS = ptr(statOf(call, 3)), ptr(statOf(cont, 3)), ptr(statOf(whole, 3))
	}

	nonce := make([]byte, 6)
	_, _ = rand.Read(nonce)
	tag := hex.EncodeToString(nonce)
	// Warm up both paths (the inline catalog, the store) before the baseline.
	for _, id := range []string{"", "bench-conv-" + tag + "-warm"} {
		if c := b.conversation(ctx, t, id, min(cfg.convLength, 3)); c.err != nil {
			return nil, fmt.Errorf("warm-up conversation (conversationId %q): %w", id, c.err)
		}
	}
	held0, bytes0, okHeld, err := heldStats(ctx, b.hc, t.base)
	if err != nil {
		return nil, err
	}
	b.logf("conversations: %d rounds of %d conversations of %d turns, stateless then held", cfg.convRounds, cfg.convConversations, cfg.convLength)
	stateless, held := &convMode{cpuOK: true}, &convMode{cpuOK: true}
	for rnd := range cfg.convRounds {
		if err := b.runRound(ctx, t, stateless, rnd, false, tag); err != nil {
			return nil, err
		}
		if err := b.runRound(ctx, t, held, rnd, true, tag); err != nil {
			return nil, err
		}
	}
	held1, bytes1, okHeld1, err := heldStats(ctx, b.hc, t.base)
	if err != nil {
		return nil, err
	}
	for _, m := range []*convMode{stateless, held} {
		if len(m.received) > 0 {
			m.rep.ReceivedBytesPerConversation = int64(statOf(m.received, 0).Median)
			m.rep.SentBytesPerConversation = int64(statOf(m.sent, 0).Median)
			m.rep.TurnMS = ptr(statOf(m.times, 3))
		}
		if m.cpuOK && len(m.cpu) > 0 {
			m.rep.CPUPerTurnMS = ptr(statOf(m.cpu, 4).Median)
		}
	}
	rep.Stateless, rep.Held = stateless.rep, held.rep
	for name, m := range map[string]*convMode{"stateless": stateless, "held": held} {
		if m.rep.Errors > 0 {
			b.note("conversations %s: %d of %d conversations failed, first: %s", name, m.rep.Errors, m.rep.Conversations, m.rep.FirstError)
		}
	}
	if s, h := rep.Stateless.CPUPerTurnMS, rep.Held.CPUPerTurnMS; s != nil && h != nil {
		if *s > 0 {
			rep.CPURatio = ptr(round(*h / *s, 3))
		} else {
			b.note("conversations: the stateless turns took less than one CPU tick (10 ms) per round: no CPU ratio (raise --conv-conversations)")
		}
	}
	switch {
	case !okHeld || !okHeld1:
		b.note("conversations: GET /readyz reports no conversations held in memory: held bytes unavailable")
	case held1-held0 <= 0:
		b.note("conversations: /readyz counts %d conversations held after the held runs, %d before", held1, held0)
	default:
		n, size := held1-held0, bytes1-bytes0
		rep.HeldConversations, rep.HeldBytes = &n, &size
		rep.HeldBytesPerConversation = ptr(size / n)
		if want := int64(held.rep.Conversations); n != want {
			b.note("conversations: the server holds %d more conversations after %d held ones (dropped or expired?)", n, want)
		}
		if r := rep.Held.ReceivedBytesPerConversation; r > 0 {
			rep.HeldBytesRatio = ptr(round(float64(size)/float64(n)/float64(r), 3))
		}
	}
	return rep, nil
}
