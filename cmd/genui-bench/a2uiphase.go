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
	"strings"
	"time"
)

// a2uiBody is the request of an A2UI turn of a version: the default catalog of the
// version, and a user message carrying the marker that makes the fake model answer with
// the script.
func a2uiBody(version string) []byte {
	return fmt.Appendf(nil, `{"version":%q,"conversation":[{"role":"user","parts":[{"type":"text","text":"%s: show me this week's report and a form to send it"}]}]}`,
		protocolVersion(version), a2uiKey(version))
}

// a2uiTurnResult is one /generateA2ui turn seen by the client. Times are from just
// before the request is sent.
type a2uiTurnResult struct {
	start           time.Time
	firstMessage    time.Duration // first A2UI message
	firstRenderable time.Duration // see a2uiSurfaces.renderable
	complete        time.Duration // last A2UI message
	result          time.Duration // result line
	arrived         map[string]time.Duration
	modelCalls      int      // usage.modelCalls of the result; 0 when absent
	messages        int      // A2UI messages
	raw             [][]byte // the A2UI messages, as received
	received        int64    // response body bytes
	err             error
}

// a2uiTurn runs one /generateA2ui turn (NDJSON) of request body, applies each A2UI
// message to a client surface model as it arrives, and checks at the end that the client
// renders every component of the script.
func a2uiTurn(ctx context.Context, hc *http.Client, base string, s *a2uiScript, body []byte, timeout time.Duration) (r a2uiTurnResult) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r.arrived = map[string]time.Duration{}
	r.start = time.Now()
	res, err := postJSON(ctx, hc, base+"/generateA2ui", body, "application/x-ndjson")
	if err != nil {
		r.err = err
		return r
	}
	defer drain(res.Body)
	model := newA2UISurfaces(s.version)
	cr := &countingReader{r: res.Body}
	defer func() { r.received = cr.n }()
	br := bufio.NewReaderSize(cr, 64<<10)
	for {
		line, rerr := br.ReadBytes('\n')
		now := time.Since(r.start)
		if line = bytes.TrimSpace(line); len(line) > 0 && r.err == nil {
			r.err = r.line(model, s, line, now)
		}
		if rerr != nil {
			if !errors.Is(rerr, io.EOF) && r.err == nil {
				r.err = fmt.Errorf("reading the stream: %w", rerr)
			}
			break
		}
	}
	switch {
	case r.err != nil:
	case r.result == 0:
		r.err = errors.New("stream without a result line")
	case r.firstMessage == 0:
		r.err = errors.New("stream without an A2UI message")
	case r.firstRenderable == 0:
		r.err = errNoRenderable
	case r.modelCalls > 1:
		r.err = fmt.Errorf("the result counts %d model calls: the server asked the model to repair the script", r.modelCalls)
	}
	if r.err == nil {
		if miss := model.missing(s); len(miss) > 0 {
			r.err = fmt.Errorf("the client renders %d of the %d scripted components at the end; missing: %s",
				len(s.comps)-len(miss), len(s.comps), strings.Join(miss, ", "))
		}
	}
	return r
}

// line handles one line of the stream read at now.
func (r *a2uiTurnResult) line(model *a2uiSurfaces, s *a2uiScript, line []byte, now time.Duration) error {
	var msg map[string]json.RawMessage
	if err := json.Unmarshal(line, &msg); err != nil {
		return fmt.Errorf("not a JSON line: %s", truncate(line, 300))
	}
	if t, ok := msg["type"]; ok {
		var typ string
		_ = json.Unmarshal(t, &typ)
		switch typ {
		case "result":
			if r.result == 0 {
				r.result = now
			}
			var v struct {
				Usage struct {
					ModelCalls int `json:"modelCalls"`
				} `json:"usage"`
			}
			_ = json.Unmarshal(msg["result"], &v)
			r.modelCalls = v.Usage.ModelCalls
		case "error":
			return fmt.Errorf("error line: %s", truncate(line, 500))
		}
		return nil
	}
	if err := model.apply(msg, func(sid, id string) {
		if _, ok := r.arrived[id]; !ok && sid == s.surfaceID {
			r.arrived[id] = now
		}
	}); err != nil {
		return fmt.Errorf("%v: %s", err, truncate(line, 300))
	}
	if r.firstMessage == 0 {
		r.firstMessage = now
	}
	r.messages++
	r.raw = append(r.raw, bytes.Clone(line))
	r.complete = now
	if r.firstRenderable == 0 && model.renderable(s.surfaceID) {
		r.firstRenderable = now
	}
	return nil
}

// modelTimes compares a turn with the fake model's record of its call: when the model
// had sent the chunk completing the first renderable part and the chunk completing the
// surface, and the largest delay between the moment the model had written what a
// component needs to be shown and the component's arrival. ok is false when the record
// does not match the script (another server's model, a call that did not finish).
func modelTimes(r *a2uiTurnResult, fr *a2uiFrames, sent []time.Time) (first, complete, lagMax time.Duration, ok bool) {
	if len(sent) != len(fr.frames) {
		return 0, 0, 0, false
	}
	at := func(offset int) time.Time { return sent[chunkAt(offset, fr.chunkBytes)] }
	first = at(fr.script.firstAt).Sub(r.start)
	complete = at(fr.script.lastAt).Sub(r.start)
	for _, c := range fr.script.comps {
		arrived, ok := r.arrived[c.id]
		if !ok {
			return 0, 0, 0, false
		}
		lagMax = max(lagMax, r.start.Add(arrived).Sub(at(c.avail)))
	}
	return first, complete, lagMax, true
}

// a2ui runs the a2ui phase: --a2ui-turns turns per version, one after another.
func (b *bench) a2ui(ctx context.Context, t *target) (*A2UIReport, error) {
	cfg := b.cfg
	rep := &A2UIReport{TokensPerS: cfg.a2uiTokensPerS, ChunkTokens: cfg.a2uiChunkTokens,
		ModelLatencyMS: msOf(cfg.a2uiLatency), TargetPct: a2uiTargetPct}
	for _, v := range cfg.a2uiVersions {
		fr := b.fake.a2ui[v]
		s := fr.script
		stream := fr.at[len(fr.at)-1]
		vr := A2UIVersionReport{Version: v, Components: len(s.comps), ScriptBytes: len(s.text),
			ScriptTokens: len(s.text) / 4, Chunks: len(fr.frames), ModelStreamMS: msOf(stream),
			ScriptFirstRenderablePct: round(100*float64(s.firstAt)/float64(len(s.text)), 1)}
		timeout := cfg.timeout + stream
		b.logf("a2ui %s: %d turns of %d components, %d tokens in %d chunks over %.1f s (first renderable part written at %.1f%% of the text)",
			v, cfg.a2uiTurns, len(s.comps), vr.ScriptTokens, vr.Chunks, stream.Seconds(), vr.ScriptFirstRenderablePct)
		var firstMsg, firstRend, complete, result, ratio, mFirst, mComplete, mRatio, lag []float64
		modelOK := true
		for i := range cfg.a2uiTurns {
			calls := b.fake.calls.Load()
			r := a2uiTurn(ctx, b.hc, t.base, s, a2uiBody(v), timeout)
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			n := int(b.fake.calls.Load() - calls)
			vr.Turns++
			vr.ModelCalls += n
			if r.err == nil && n != 1 {
				r.err = fmt.Errorf("%d model calls for one turn", n)
			}
			if r.err != nil {
				vr.Errors++
				if vr.FirstError == "" {
					vr.FirstError = r.err.Error()
				}
				b.logf("a2ui %s turn %d: %v", v, i+1, r.err)
				continue
			}
			pct := 100 * float64(r.firstRenderable) / float64(r.complete)
			firstMsg, firstRend = append(firstMsg, msOf(r.firstMessage)), append(firstRend, msOf(r.firstRenderable))
			complete, result = append(complete, msOf(r.complete)), append(result, msOf(r.result))
			ratio = append(ratio, pct)
			_, sent := b.fake.lastA2UICall()
			mf, mc, lm, ok := modelTimes(&r, fr, sent)
			modelOK = modelOK && ok
			if ok {
				mFirst, mComplete, lag = append(mFirst, msOf(mf)), append(mComplete, msOf(mc)), append(lag, msOf(lm))
				mRatio = append(mRatio, 100*float64(mf)/float64(mc))
			}
			b.logf("a2ui %s turn %d: first message %s, first renderable %s, complete %s (%.1f%%), result %s",
				v, i+1, fmtMS(msOf(r.firstMessage)), fmtMS(msOf(r.firstRenderable)), fmtMS(msOf(r.complete)), pct, fmtMS(msOf(r.result)))
		}
		if vr.Errors > 0 {
			b.note("a2ui %s: %d of %d turns failed, first: %s", v, vr.Errors, vr.Turns, vr.FirstError)
		}
		if len(ratio) == 0 {
			return nil, fmt.Errorf("a2ui %s: no successful turn: %s", v, vr.FirstError)
		}
		vr.FirstMessageMS, vr.FirstRenderableMS = statOf(firstMsg, 3), statOf(firstRend, 3)
		vr.CompleteMS, vr.ResultMS, vr.RatioPct = statOf(complete, 3), statOf(result, 3), statOf(ratio, 2)
		if modelOK {
			vr.ModelFirstRenderable, vr.ModelComplete = ptr(statOf(mFirst, 3)), ptr(statOf(mComplete, 3))
			vr.ModelRatioPct, vr.ServerLagMaxMS = ptr(statOf(mRatio, 2)), ptr(statOf(lag, 3))
		} else {
			b.note("a2ui %s: the fake model's record does not match the turns: no model-bound figures", v)
		}
		vr.Pass = vr.Errors == 0 && vr.Components >= a2uiMinComponents && vr.RatioPct.Median <= a2uiTargetPct
		rep.Versions = append(rep.Versions, vr)
	}
	return rep, nil
}
