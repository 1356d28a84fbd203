package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// The floor phase: the open phase's measure (peak RSS per extra open stream on a slow
// model) taken on the smallest Go server doing the same plumbing, so that the report can
// say what net/http itself costs per open stream, a floor for genui's figure. A child,
// this binary re-executed, is a proxy: a plain HTTP/1.1 net/http handler that posts each
// request's body to the bench's fake model over one shared h2c connection, as genui's
// --model-h2c does, and copies the answer's lines to its client, flushing each. The body
// carries the open phase's marker, so the fake answers with the open phase's model (the
// same SSE events at the same times).

// floorEnv selects the floor phase's child mode (floorProxy); main looks at it before
// anything else.
const floorEnv = "GENUI_BENCH_FLOOR"

// floorUpstreamEnv gives the proxy the URL it posts to: the fake model's stream.
const floorUpstreamEnv = "GENUI_BENCH_FLOOR_UPSTREAM"

const floorProxy = "proxy"

// floorRequestBytes is the size of a request's body, which the proxy sends on to the model.
const floorRequestBytes = 3 << 10

// serveFloor runs this process as the floor phase's child of the given mode until ctx
// ends: it listens on a loopback port, prints the address on stdout and serves.
func serveFloor(ctx context.Context, mode string, stdout io.Writer) error {
	if mode != floorProxy {
		return fmt.Errorf("%s=%q: the mode is %s", floorEnv, mode, floorProxy)
	}
	up := os.Getenv(floorUpstreamEnv)
	if up == "" {
		return fmt.Errorf("%s is not set", floorUpstreamEnv)
	}
	// net/http's defaults: HTTP/1.1 without TLS.
	srv := &http.Server{Handler: proxyHandler(up)}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintln(stdout, ln.Addr()); err != nil {
		ln.Close()
		return err
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		return srv.Close()
	}
}

// proxyHandler posts each request's body to upstream over h2c and writes every
// non-empty line of the answer to its client as an SSE event, flushed. GET /goroutines
// tells the bench how many goroutines the process runs.
func proxyHandler(upstream string) http.Handler {
	// As genui's --model-h2c: HTTP/2 without TLS for an http:// URL, every call a stream
	// of one shared connection (a new one only past the upstream's concurrent streams,
	// 250 by net/http's default, as with the fake model).
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Protocols = new(http.Protocols)
	tr.Protocols.SetUnencryptedHTTP2(true)
	hc := &http.Client{Transport: tr}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		// The request's context: a client gone cancels the upstream call.
		req, err := http.NewRequestWithContext(r.Context(), http.MethodPost, upstream, bytes.NewReader(body))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		req.Header.Set("Content-Type", "application/json")
		res, err := hc.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		if res.StatusCode != http.StatusOK {
			http.Error(w, "upstream: "+res.Status, http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if len(sc.Bytes()) == 0 {
				continue
			}
			if _, err := w.Write(sc.Bytes()); err != nil {
				return
			}
			if _, err := io.WriteString(w, "\n\n"); err != nil {
				return
			}
			if err := rc.Flush(); err != nil {
				return
			}
		}
		if sc.Err() != nil {
			panic(http.ErrAbortHandler) // the client sees its stream cut, not a clean end
		}
	})
	mux.HandleFunc("GET /goroutines", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, strconv.Itoa(runtime.NumGoroutine()))
	})
	return mux
}

// floorChild is a child of the floor phase, listening at addr.
type floorChild struct {
	mode string
	cmd  *exec.Cmd
	addr string
	logs *tail
	done chan struct{} // closed once it has exited
	err  error         // its exit status, once done
}

// startFloorChild re-executes this binary in mode, with env added, and reads the
// address it prints.
func startFloorChild(ctx context.Context, mode string, env []string) (*floorChild, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	cmd := exec.CommandContext(ctx, exe)
	cmd.Env = append(append(os.Environ(), floorEnv+"="+mode), env...)
	// As the server's child: Ctrl-C reaches the bench, which kills it; and it dies with
	// the bench even if the bench is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	c := &floorChild{mode: mode, cmd: cmd, logs: &tail{max: 16 << 10}, done: make(chan struct{})}
	cmd.Stderr = c.logs
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, fmt.Errorf("floor %s: %w", mode, err)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("floor %s: starting %s: %w", mode, exe, err)
	}
	// A child that does not print its address in time is killed, which ends the read.
	stuck := time.AfterFunc(20*time.Second, func() { _ = cmd.Process.Kill() })
	line, rerr := bufio.NewReader(out).ReadString('\n')
	stuck.Stop()
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	c.addr = strings.TrimSpace(line)
	if _, _, err := net.SplitHostPort(c.addr); rerr != nil || err != nil {
		c.close()
		return nil, fmt.Errorf("floor %s: no address on its stdout (%v): %s", mode, errors.Join(rerr, err), c.logs)
	}
	return c, nil
}

// alive reports an error if the child has exited.
func (c *floorChild) alive() error {
	select {
	case <-c.done:
		return fmt.Errorf("floor %s exited (%v): %s", c.mode, c.err, c.logs)
	default:
		return nil
	}
}

// close kills the child and waits for it.
func (c *floorChild) close() {
	if c == nil {
		return
	}
	_ = c.cmd.Process.Kill()
	<-c.done
}

// floorBody is a request of floorRequestBytes bytes.
func floorBody() []byte {
	head := `{"contents":[{"role":"user","parts":[{"text":"` + openMarker + ` `
	tail := `"}]}]}`
	return []byte(head + strings.Repeat("x", floorRequestBytes-len(head)-len(tail)) + tail)
}

// floor runs the floor phase: it starts its own proxy to the fake model, and no genui
// server.
func (b *bench) floor(ctx context.Context) (*FloorReport, error) {
	cfg := b.cfg
	fr := b.fake.open
	// The child ends with the phase, whatever happens.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	px, err := startFloorChild(ctx, floorProxy, []string{floorUpstreamEnv + "=" + b.fake.URL() + "/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse"})
	if err != nil {
		return nil, err
	}
	defer px.close()
	pid := px.cmd.Process.Pid
	rep := &FloorReport{TokensPerS: cfg.openTokensPerS, ModelLatencyMS: msOf(cfg.openLatency),
		ModelFirstEventMS: msOf(fr.at[0]), ModelStreamMS: msOf(fr.at[len(fr.at)-1]), Events: len(fr.frames),
		RequestBytes: floorRequestBytes, ProxyPID: pid, FDLimit: b.fdLimit}
	for _, f := range fr.frames {
		rep.EventBytes += len(f)
	}
	target := "http://" + px.addr + "/"
	// Warm-up: one stream pays the one-time costs (the h2c connection among them).
	if _, err := floorStream(ctx, b.hc, target, floorBody(), len(fr.frames), cfg.timeout+fr.at[len(fr.at)-1], nil); err != nil {
		return nil, fmt.Errorf("floor: warm-up stream: %w", err)
	}
	b.hc.CloseIdleConnections()
	time.Sleep(500 * time.Millisecond)
	base, err := sampleFloor(ctx, b.hc, px)
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	rep.Baseline = base
	if rep.Baseline.RSSBytes, _, err = readRSS(pid); err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	b.logf("floor: proxy pid %d at %s; baseline RSS %s", pid, px.addr, fmtBytes(rep.Baseline.RSSBytes))
	for _, n := range slices.Sorted(slices.Values(cfg.openLevels)) {
		// The bench holds a descriptor per stream, the proxy one (and one per 250
		// upstream streams); the proxy has the bench's limit.
		if need := uint64(n + 256); b.fdLimit < need {
			b.note("floor: %d streams need about %d descriptors in the bench and in the proxy, which may have %d: level skipped", n, need, b.fdLimit)
			continue
		}
		lv, err := b.floorLevel(ctx, px, target, n)
		if err != nil {
			return nil, err
		}
		if err := px.alive(); err != nil {
			return nil, err
		}
		rep.Levels = append(rep.Levels, *lv)
		if lv.Errors > 0 {
			b.note("floor %d: %d streams failed, first: %s", n, lv.Errors, lv.FirstError)
		}
		if lv.MaxOpen < n {
			// The machine could not start them all before the first ones ended; the
			// figures per stream still count n.
			b.note("floor %d: at most %d streams open at once", n, lv.MaxOpen)
		}
	}
	perStream(rep)
	return rep, nil
}

// perStream sets each level's figures per extra stream: its growth over the level
// before (the baseline for the first) / the growth in streams.
func perStream(rep *FloorReport) {
	prev := FloorLevel{PeakRSSBytes: rep.Baseline.RSSBytes, PeakGoroutines: rep.Baseline.Goroutines, PeakFDs: rep.Baseline.FDs}
	for i := range rep.Levels {
		lv := &rep.Levels[i]
		if dn := float64(lv.Streams - prev.Streams); dn > 0 && lv.PeakRSSBytes > 0 {
			lv.RSSPerStreamBytes = ptr(int64(float64(lv.PeakRSSBytes-prev.PeakRSSBytes) / dn))
			lv.GoroutinesPerStream = ptr(round(float64(lv.PeakGoroutines-prev.PeakGoroutines)/dn, 3))
			lv.FDsPerStream = ptr(round(float64(lv.PeakFDs-prev.PeakFDs)/dn, 3))
		}
		prev = *lv
	}
}

// floorLevel holds n streams through the proxy at once, reads each to its end, and
// measures the proxy.
func (b *bench) floorLevel(ctx context.Context, px *floorChild, target string, n int) (*FloorLevel, error) {
	cfg := b.cfg
	fr := b.fake.open
	pid := px.cmd.Process.Pid
	lv := &FloorLevel{Streams: n}
	if err := resetPeak(pid); err != nil {
		b.note("floor: cannot reset the proxy's peak RSS (%v): it is the process's peak so far", err)
	}
	b.logf("floor: %d streams at once through the proxy, the upstream %s to its first event then %.0f tokens/s (%s in all)", n,
		fmtMS(msOf(cfg.openLatency)), cfg.openTokensPerS, fmtMS(msOf(fr.at[len(fr.at)-1])))
	hc := floorClient(n)
	defer hc.CloseIdleConnections()
	body := floorBody()
	timeout := cfg.timeout + fr.at[len(fr.at)-1] + time.Duration(n/100)*time.Second
	ends := make([]time.Duration, n)
	errs := make([]error, n)
	var open gauge
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Go(func() { ends[i], errs[i] = floorStream(ctx, hc, target, body, len(fr.frames), timeout, &open) })
	}
	// Sample the proxy while the streams are open, keeping the largest of each figure.
	stop := sampleEvery(250*time.Millisecond, func() {
		if s, err := sampleFloor(ctx, b.hc, px); err == nil {
			lv.PeakGoroutines, lv.PeakFDs = max(lv.PeakGoroutines, s.Goroutines), max(lv.PeakFDs, s.FDs)
		}
	})
	wg.Wait()
	stop()
	lv.WallS = round(time.Since(start).Seconds(), 2)
	lv.MaxOpen = int(open.max.Load())
	var ms []float64
	for i, err := range errs {
		if err != nil {
			if lv.Errors++; lv.FirstError == "" {
				lv.FirstError = err.Error()
			}
			continue
		}
		ms = append(ms, msOf(ends[i]))
	}
	if len(ms) > 0 {
		lv.EndMS = ptr(statOf(ms, 2))
	}
	_, hwm, err := readRSS(pid)
	if err != nil {
		return nil, fmt.Errorf("floor: %w", err)
	}
	lv.PeakRSSBytes = hwm
	b.logf("floor %d: at most %d open at once, %d failed; the proxy's peak RSS %s, goroutines %d, descriptors %d; end %s", n,
		lv.MaxOpen, lv.Errors, fmtBytes(lv.PeakRSSBytes), lv.PeakGoroutines, lv.PeakFDs, fmtStatp(lv.EndMS))
	return lv, nil
}

// floorClient is an HTTP/1.1 client for n streams at once to one host. It dials at
// most 256 connections at once, so that the proxy's accept queue (4,096 by default on
// Linux) does not overflow into SYN retries.
func floorClient(n int) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second}
	dialing := make(chan struct{}, 256)
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			select {
			case dialing <- struct{}{}:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			defer func() { <-dialing }()
			return d.DialContext(ctx, network, addr)
		},
		MaxIdleConnsPerHost: n,
		DisableCompression:  true,
	}
	return &http.Client{Transport: tr}
}

// gauge counts what is open now and the most ever open at once.
type gauge struct{ cur, max atomic.Int64 }

func (g *gauge) add(d int64) {
	c := g.cur.Add(d)
	for {
		m := g.max.Load()
		if c <= m || g.max.CompareAndSwap(m, c) {
			return
		}
	}
}

// floorStream posts body to the proxy and reads its answer to the end, which must hold
// events non-empty lines. open (if not nil) counts the stream as open from its
// response's headers to its end. It returns the time from the request to the end.
func floorStream(ctx context.Context, hc *http.Client, target string, body []byte, events int, timeout time.Duration, open *gauge) (time.Duration, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	res, err := postJSON(ctx, hc, target, body, "text/event-stream")
	if err != nil {
		return 0, err
	}
	defer drain(res.Body)
	if open != nil {
		open.add(1)
		defer open.add(-1)
	}
	got := 0
	sc := bufio.NewScanner(res.Body)
	for sc.Scan() {
		if len(sc.Bytes()) > 0 {
			got++
		}
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("after %d events: %w", got, err)
	}
	if got != events {
		return 0, fmt.Errorf("%d events, want %d", got, events)
	}
	return time.Since(start), nil
}

// sampleFloor reads the proxy's goroutines (GET /goroutines) and open descriptors
// (/proc/<pid>/fd).
func sampleFloor(ctx context.Context, hc *http.Client, px *floorChild) (FloorProxy, error) {
	var s FloorProxy
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+px.addr+"/goroutines", nil)
	if err != nil {
		return s, err
	}
	res, err := hc.Do(req)
	if err != nil {
		return s, err
	}
	defer drain(res.Body)
	if res.StatusCode != http.StatusOK {
		return s, httpError("GET /goroutines", res)
	}
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		return s, err
	}
	if s.Goroutines, err = strconv.ParseInt(string(raw), 10, 64); err != nil {
		return s, fmt.Errorf("GET /goroutines: %w", err)
	}
	fds, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", px.cmd.Process.Pid))
	if err != nil {
		return s, err
	}
	s.FDs = int64(len(fds))
	return s, nil
}
