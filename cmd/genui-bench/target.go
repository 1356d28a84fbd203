package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// target is the server under test: a child process or a URL.
type target struct {
	base  string
	pid   int    // 0: unknown, no RSS or CPU figures
	model string // "model" of /readyz
	child *exec.Cmd
	logs  *tail
	done  chan struct{} // closed when the child has exited
	err   error         // the child's exit status, once done
}

// buildServer builds ./cmd/genui-server of this module into dir.
func buildServer(ctx context.Context, dir string) (string, error) {
	bin := filepath.Join(dir, "genui-server")
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/genuiserver/genui/cmd/genui-server")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("building the server (run from the genui module, or pass --server-bin or --url): %v\n%s", err, out)
	}
	return bin, nil
}

// startChild starts the server binary on a free loopback port, pointed at the fake
// model, and waits until /readyz answers.
func startChild(ctx context.Context, hc *http.Client, bin string, args []string, fakeURL string) (*target, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, append([]string{"--addr", addr}, args...)...)
	cmd.Env = append(os.Environ(), "GEMINI_API_KEY=k", "GOOGLE_GEMINI_BASE_URL="+fakeURL)
	// Its own process group: Ctrl-C reaches the bench, which kills the child; and the
	// child dies with the bench even if the bench is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	t := &target{base: "http://" + addr, child: cmd, logs: &tail{max: 16 << 10}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = t.logs, t.logs
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", bin, err)
	}
	t.pid = cmd.Process.Pid
	go func() {
		t.err = cmd.Wait()
		close(t.done)
	}()
	if err := t.waitReady(ctx, hc, 20*time.Second); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// urlTarget checks that the server at base answers /readyz.
func urlTarget(ctx context.Context, hc *http.Client, base string, pid int) (*target, error) {
	t := &target{base: base, pid: pid}
	if err := t.waitReady(ctx, hc, 5*time.Second); err != nil {
		return nil, err
	}
	if pid != 0 {
		if _, _, err := readRSS(pid); err != nil {
			return nil, fmt.Errorf("--pid %d: %w", pid, err)
		}
	}
	return t, nil
}

func (t *target) waitReady(ctx context.Context, hc *http.Client, d time.Duration) error {
	deadline := time.Now().Add(d)
	var last error
	for {
		if t.done != nil {
			select {
			case <-t.done:
				return fmt.Errorf("server exited during start-up (%v):\n%s", t.err, t.logs)
			default:
			}
		}
		rctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		req, _ := http.NewRequestWithContext(rctx, http.MethodGet, t.base+"/readyz", nil)
		res, err := hc.Do(req)
		if err == nil {
			body, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				var r struct {
					Model string `json:"model"`
				}
				_ = json.Unmarshal(body, &r)
				t.model = r.Model
				cancel()
				return nil
			}
			err = fmt.Errorf("GET /readyz: %s: %s", res.Status, bytes.TrimSpace(body))
		}
		cancel()
		last = err
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if time.Now().After(deadline) {
			if t.logs != nil {
				return fmt.Errorf("server at %s not ready after %s: %v\n%s", t.base, d, last, t.logs)
			}
			return fmt.Errorf("server at %s is not reachable or not ready: %v", t.base, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// alive reports an error if the child server has exited.
func (t *target) alive() error {
	if t.done == nil {
		return nil
	}
	select {
	case <-t.done:
		return fmt.Errorf("server exited (%v):\n%s", t.err, t.logs)
	default:
		return nil
	}
}

// Close kills the child server, if any, and waits for it.
func (t *target) Close() {
	if t == nil || t.child == nil {
		return
	}
	select {
	case <-t.done:
	default:
		_ = t.child.Process.Kill()
		<-t.done
	}
}

// tail keeps the last max bytes written to it.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.b) == 0 {
		return "(no server output)"
	}
	return string(t.b)
}

// readRSS returns VmRSS and VmHWM of a process, in bytes.
func readRSS(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		name, val, ok := strings.Cut(line, ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		f := strings.Fields(val)
		if len(f) != 2 || f[1] != "kB" {
			return 0, 0, fmt.Errorf("/proc/%d/status: unexpected %q", pid, line)
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, 0, err
		}
		if name == "VmRSS" {
			rss = n << 10
		} else {
			hwm = n << 10
		}
	}
	if rss == 0 {
		return 0, 0, fmt.Errorf("/proc/%d/status: no VmRSS", pid)
	}
	return rss, hwm, nil
}

// clockTick is USER_HZ, the unit of utime and stime in /proc/<pid>/stat: 100 on every
// Linux architecture Go supports.
const clockTick = 100

// readCPU returns utime+stime of a process (all its threads).
func readCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// The command name may hold spaces and parentheses: fields start after the last ')'.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state); utime and stime are fields 14 and 15.
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: malformed", pid)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return time.Duration(u+s) * time.Second / clockTick, nil
}

// resetPeak resets VmHWM to the current RSS (Linux 4.0+, same user or root).
func resetPeak(pid int) error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0)
}

// medianRSS samples VmRSS n times, every gap, and returns the median.
func medianRSS(ctx context.Context, pid, n int, gap time.Duration) (int64, error) {
	var xs []int64
	for i := range n {
		if i > 0 {
			select {
			case <-ctx.Done():
				return 0, ctx.Err()
			case <-time.After(gap):
			}
		}
		rss, _, err := readRSS(pid)
		if err != nil {
			return 0, err
		}
		xs = append(xs, rss)
	}
	sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
	return xs[len(xs)/2], nil
}

// rssSampler records the largest VmRSS seen every 20 ms until stopped.
type rssSampler struct {
	stop chan struct{}
	done chan struct{}
	peak int64
}

func sampleRSS(pid int) *rssSampler {
	s := &rssSampler{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			if rss, _, err := readRSS(pid); err == nil {
				s.peak = max(s.peak, rss)
			}
			select {
			case <-s.stop:
				return
			case <-tick.C:
			}
		}
	}()
	return s
}

// Stop stops sampling and returns the peak.
func (s *rssSampler) Stop() int64 {
	close(s.stop)
	<-s.done
	return s.peak
}

// raiseFileLimit raises RLIMIT_NOFILE to at least want if it can (and the soft limit to
// the hard one otherwise). Children inherit it. It returns the resulting soft limit.
func raiseFileLimit(want uint64) uint64 {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return 0
	}
	if lim.Cur >= want {
		// Setrlimit also stops Go from restoring the original soft limit for children.
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
		return lim.Cur
	}
	if lim.Max < want {
		raised := syscall.Rlimit{Cur: want, Max: want}
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &raised); err == nil {
			return want
		}
	}
	lim.Cur = min(want, lim.Max)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	}
	return lim.Cur
}
