package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/genuiserver/genui/schemas"
)

// The open phase: N turns at once on a slow model (by default 2 s to its first token,
// then 150 tokens/s), as a busy replica holds them, level after level (N ascending) on a
// fresh server: what one open stream costs the server in memory (peak RSS, live heap),
// goroutines and descriptors, and how much later than the model's own time its first
// A2UI message comes.

// openMarker in a user message makes the fake model answer with the v0.9 A2UI script at
// the open phase's pace.
const openMarker = "genui-bench-open"

var openMarkerBytes = []byte(openMarker)

// openBody is the phase's request: a stateless /generateA2ui turn.
func openBody() []byte {
	b, _ := json.Marshal(schemas.GenerateA2UIRequest{Version: a2aVersion,
		Conversation: []schemas.Message{userText(openMarker + ": show me this week's report and a form to send it")}})
	return b
}

// openSample is what the phase reads of the server while the streams are open.
type openSample struct {
	goroutines, heapInuse, fds int64
}

// sampleServer reads the server's goroutines and live heap (its /metrics) and its open
// descriptors (/proc/<pid>/fd).
func sampleServer(ctx context.Context, hc *http.Client, t *target) (openSample, error) {
	var s openSample
	m, err := scrapeMetrics(ctx, hc, t.base, "go_goroutines", "go_memstats_heap_inuse_bytes")
	if err != nil {
		return s, err
	}
	s.goroutines, s.heapInuse = int64(m["go_goroutines"]), int64(m["go_memstats_heap_inuse_bytes"])
	if t.pid != 0 {
		fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", t.pid))
		if err != nil {
			return s, err
		}
		s.fds = int64(len(fds))
	}
	return s, nil
}

// scrapeMetrics reads the named gauges of the server's /metrics (Prometheus's text
// format, read with its own parser).
func scrapeMetrics(ctx context.Context, hc *http.Client, base string, names ...string) (map[string]float64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/metrics", nil)
	if err != nil {
		return nil, err
	}
	res, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer drain(res.Body)
	if res.StatusCode != http.StatusOK {
		return nil, httpError("GET /metrics", res)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		return nil, fmt.Errorf("GET /metrics: %w", err)
	}
	out := map[string]float64{}
	for _, n := range names {
		f := fams[n]
		if f == nil || len(f.GetMetric()) == 0 || f.GetMetric()[0].GetGauge() == nil {
			return nil, fmt.Errorf("GET /metrics: no gauge %s", n)
		}
		out[n] = f.GetMetric()[0].GetGauge().GetValue()
	}
	return out, nil
}

// modelFirstMessage is when the model has written the first A2UI message (the chunk that
// completes createSurface), from its request's arrival.
func modelFirstMessage(fr *a2uiFrames) time.Duration {
	i := min((fr.script.ready+fr.chunkBytes-1)/fr.chunkBytes, len(fr.at)) - 1
	return fr.at[max(i, 0)]
}

func fmtStatp(s *a2uiStat) string {
	if s == nil {
		return "n/a"
	}
	return fmtStat(*s, 0, " ms")
}

// open runs the open phase on t, a fresh server (started with --model-h2c by
// --open-h2c).
func (b *bench) open(ctx context.Context, t *target) (*OpenReport, error) {
	cfg := b.cfg
	fr := b.fake.open
	rep := &OpenReport{Endpoint: "/generateA2ui", Version: a2aVersion, TokensPerS: cfg.openTokensPerS, ModelLatencyMS: msOf(cfg.openLatency),
		ModelStreamMS: msOf(fr.at[len(fr.at)-1]), H2C: cfg.openH2C, FDLimit: b.fdLimit}
	rep.ModelFirstMessageMS = msOf(modelFirstMessage(fr))
	if cfg.url != "" && cfg.openH2C {
		b.note("open: --url: the bench does not start the server, so not with --model-h2c either")
	}
	// Warm-up: one turn pays the one-time costs.
	if r := a2uiTurn(ctx, b.hc, t.base, fr.script, openBody(), cfg.timeout+fr.at[len(fr.at)-1]); r.err != nil {
		return nil, fmt.Errorf("open: warm-up turn: %w", r.err)
	}
	b.hc.CloseIdleConnections()
	time.Sleep(500 * time.Millisecond)
	base, err := sampleServer(ctx, b.hc, t)
	if err != nil {
		return nil, fmt.Errorf("open: %w", err)
	}
	rep.Baseline = OpenServer{Goroutines: base.goroutines, HeapInuseBytes: base.heapInuse, FDs: base.fds}
	if t.pid != 0 {
		rss, _, err := readRSS(t.pid)
		if err != nil {
			return nil, err
		}
		rep.Baseline.RSSBytes = rss
	}
	levels := slices.Sorted(slices.Values(cfg.openLevels))
	for _, n := range levels {
		// The bench holds a descriptor per stream, and one per model call unless h2c.
		need := uint64(n + 256)
		if !cfg.openH2C {
			need += uint64(n)
		}
		if b.fdLimit < need {
			b.note("open: %d streams need about %d descriptors in the bench, which may have %d: level skipped", n, need, b.fdLimit)
			continue
		}
		lv, err := b.openLevel(ctx, t, n, base)
		if err != nil {
			return nil, err
		}
		rep.Levels = append(rep.Levels, *lv)
		if lv.Errors > 0 {
			b.note("open %d: %d turns failed, first: %s", n, lv.Errors, lv.FirstError)
		}
	}
	// Per stream: the slope between consecutive levels (and from the baseline for the
	// first), so that what does not grow with the streams drops out.
	prev := OpenLevel{PeakRSSBytes: rep.Baseline.RSSBytes, PeakHeapInuseBytes: rep.Baseline.HeapInuseBytes,
		PeakGoroutines: rep.Baseline.Goroutines, PeakFDs: rep.Baseline.FDs}
	for i := range rep.Levels {
		lv := &rep.Levels[i]
		dn := float64(lv.MaxConcurrent - prev.MaxConcurrent)
		if dn > 0 {
			if t.pid != 0 && lv.PeakRSSBytes > 0 {
				lv.RSSPerStreamBytes = ptr(int64(float64(lv.PeakRSSBytes-prev.PeakRSSBytes) / dn))
				lv.FDsPerStream = ptr(round(float64(lv.PeakFDs-prev.PeakFDs)/dn, 3))
			}
			lv.HeapPerStreamBytes = ptr(int64(float64(lv.PeakHeapInuseBytes-prev.PeakHeapInuseBytes) / dn))
			lv.GoroutinesPerStream = ptr(round(float64(lv.PeakGoroutines-prev.PeakGoroutines)/dn, 3))
		}
		prev = *lv
	}
	return rep, nil
}

// openLevel holds n turns at once on t and measures the server while they run.
func (b *bench) openLevel(ctx context.Context, t *target, n int, base openSample) (*OpenLevel, error) {
	cfg := b.cfg
	fr := b.fake.open
	lv := &OpenLevel{Streams: n}
	if t.pid != 0 {
		if err := resetPeak(t.pid); err != nil {
			b.note("open: cannot reset the server's peak RSS (%v): it is the process's peak so far", err)
		}
	}
	b.logf("open: %d turns at once, the model %s to its first token then %.0f tokens/s (%s in all)", n,
		fmtMS(msOf(cfg.openLatency)), cfg.openTokensPerS, fmtMS(msOf(fr.at[len(fr.at)-1])))
	hc := newHTTPClient(nil) // its own connections, closed at the end
	defer hc.CloseIdleConnections()
	body := openBody()
	timeout := cfg.timeout + fr.at[len(fr.at)-1] + time.Duration(n/100)*time.Second
	results := make([]a2uiTurnResult, n)
	var inflight, maxInflight atomic.Int64
	var wg sync.WaitGroup
	sem := make(chan struct{}, 256) // requests being sent at once
	start := time.Now()
	for i := range results {
		wg.Go(func() {
			sem <- struct{}{}
			cur := inflight.Add(1)
			for {
				m := maxInflight.Load()
				if cur <= m || maxInflight.CompareAndSwap(m, cur) {
					break
				}
			}
			<-sem
			results[i] = a2uiTurn(ctx, hc, t.base, fr.script, body, timeout)
			inflight.Add(-1)
		})
	}
	// Sample the server while the streams are open, keeping the largest of each figure.
	stop := sampleEvery(250*time.Millisecond, func() {
		s, err := sampleServer(ctx, b.hc, t)
		if err != nil {
			return
		}
		lv.PeakGoroutines = max(lv.PeakGoroutines, s.goroutines)
		lv.PeakHeapInuseBytes = max(lv.PeakHeapInuseBytes, s.heapInuse)
		lv.PeakFDs = max(lv.PeakFDs, s.fds)
	})
	wg.Wait()
	stop()
	lv.WallS = round(time.Since(start).Seconds(), 2)
	lv.MaxConcurrent = int(maxInflight.Load())
	var firsts, ends []float64
	for _, r := range results {
		if r.err != nil {
			lv.Errors++
			if lv.FirstError == "" {
				lv.FirstError = r.err.Error()
			}
			continue
		}
		firsts, ends = append(firsts, msOf(r.firstMessage)), append(ends, msOf(r.result))
	}
	if len(firsts) > 0 {
		lv.FirstMessageMS, lv.EndMS = ptr(statOf(firsts, 2)), ptr(statOf(ends, 2))
		lv.AddedFirstMessageMS = ptr(round(lv.FirstMessageMS.Median-msOf(modelFirstMessage(fr)), 2))
	}
	if t.pid != 0 {
		_, hwm, err := readRSS(t.pid)
		if err != nil {
			return nil, err
		}
		lv.PeakRSSBytes = hwm
	}
	// Afterwards: every goroutine and descriptor of the streams is gone.
	hc.CloseIdleConnections()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s, err := sampleServer(ctx, b.hc, t)
		if err == nil {
			lv.AfterGoroutines, lv.AfterFDs = s.goroutines, s.fds
		}
		if err == nil && s.goroutines <= base.goroutines+16 || time.Now().After(deadline) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	b.logf("open %d: at most %d at once, %d failed; peak RSS %s, goroutines %d, descriptors %d; first A2UI message %s, end %s", n,
		lv.MaxConcurrent, lv.Errors, fmtBytes(lv.PeakRSSBytes), lv.PeakGoroutines, lv.PeakFDs,
		fmtStatp(lv.FirstMessageMS), fmtStatp(lv.EndMS))
	return lv, nil
}

// sampleEvery calls f every d, on a goroutine of its own, until the stop it returns is
// called; stop returns once f is no longer running.
func sampleEvery(d time.Duration, f func()) (stop func()) {
	done, sampled := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(d)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			f()
		}
	}()
	return func() {
		close(done)
		<-sampled
	}
}
