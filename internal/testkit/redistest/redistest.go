// Package redistest runs private redis-servers for tests and benchmarks: child processes
// on free loopback ports, killed when the test ends. One node (without persistence), a
// Redis Cluster or a Sentinel-managed primary (whose data nodes keep append-only files, as
// Redis advises for replicated nodes), each able to lose its primary.
package redistest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"
)

// TB is what the package needs of a test: testing.TB has it, and a benchmark's command
// can provide it (Fatal and Skip then end the set-up, Cleanup runs when it is done).
type TB interface {
	Helper()
	Logf(format string, args ...any)
	Errorf(format string, args ...any)
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Cleanup(func())
	TempDir() string
}

// Server is a redis-server child process owned by one test.
type Server struct {
	t    TB
	bin  string
	dir  string
	port int
	// args are what the server runs with besides its port and directory: cluster
	// options, or a sentinel's configuration file.
	args func(s *Server) []string
	// persist keeps the data in an append-only file, so that a restarted server comes
	// back with it.
	persist bool

	mu   sync.Mutex
	proc *process // nil while stopped
}

type process struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once the process has been reaped
}

// wait reaps the process.
func (p *process) wait() {
	_ = p.cmd.Wait()
	close(p.exited)
}

// IgnoreGoroutines is a goleak option that ignores the goroutine waiting for a server
// (re)started after goleak.IgnoreCurrent was taken.
func IgnoreGoroutines() goleak.Option {
	return goleak.IgnoreAnyFunction("github.com/genuiserver/genui/internal/testkit/redistest.(*process).wait")
}

// IgnoreClientGoroutines ignores, besides the servers' (IgnoreGoroutines), the goroutines
// a client keeps while it lives: a Sentinel client's subscription to the sentinels'
// announcements of a new primary, a cluster client's reload of its slot map and the
// housekeeping of its node clients.
func IgnoreClientGoroutines() []goleak.Option {
	return []goleak.Option{IgnoreGoroutines(),
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9.(*sentinelFailover).listen"),
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9.(*channel).initHealthCheck.func1"),
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9.(*channel).initMsgChan.func1"),
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9.(*clusterStateHolder).LazyReload.func1"),
		goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/maintnotifications.(*CircuitBreakerManager).cleanupLoop")}
}

// startTimeout bounds how long a server may take to answer PING.
const startTimeout = 10 * time.Second

// Start starts a redis-server for t and stops it when t ends. It skips t under -short, and
// when redis-server is not on PATH, unless the environment variable CI is set, in which
// case it fails t.
func Start(t TB) *Server {
	t.Helper()
	return startWith(t, nil)
}

// binary returns the path of redis-server, or skips (fails in CI) t. A test skips under
// -short (a benchmark's command, outside a test binary, never does).
func binary(t TB) string {
	t.Helper()
	if testing.Testing() && testing.Short() {
		t.Skipf("skipped under -short: needs redis-server")
	}
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("redis-server is required in CI: %v", err)
		}
		t.Skipf("redis-server not found on PATH (apt-get install redis-server): %v", err)
	}
	return bin
}

// startWith starts a server with more arguments.
func startWith(t TB, args func(*Server) []string) *Server {
	t.Helper()
	return startServer(t, &Server{args: args})
}

// startPersistent starts a server with more arguments that keeps its data across
// restarts in an append-only file, written before each reply (so a kill loses nothing
// a client was answered) and synced to disk every second. Redis advises persistence for
// replicated nodes: a node restarted empty can be promoted, and its replicas then copy
// its empty dataset.
func startPersistent(t TB, args func(*Server) []string) *Server {
	t.Helper()
	return startServer(t, &Server{args: args, persist: true})
}

func startServer(t TB, s *Server) *Server {
	t.Helper()
	s.t, s.bin, s.dir = t, binary(t), t.TempDir()
	var err error
	// A port found free may be taken before the server binds it; try a few.
	for attempt := 1; ; attempt++ {
		s.port, err = freePort()
		if err == nil {
			err = s.start()
		}
		if err == nil {
			break
		}
		if attempt == 3 {
			t.Fatalf("redistest: %v", err)
		}
	}
	t.Cleanup(s.Stop)
	return s
}

// Addr returns the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// URL returns the server's redis:// URL (database 0).
func (s *Server) URL() string { return "redis://" + s.Addr() + "/0" }

// Log returns what the server wrote to its log, across its restarts.
func (s *Server) Log() string {
	b, err := os.ReadFile(filepath.Join(s.dir, "redis.log"))
	if err != nil {
		return err.Error()
	}
	return string(b)
}

// PID returns the server's process id, 0 while it is stopped.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.cmd.Process.Pid
}

// Port returns the server's port.
func (s *Server) Port() int { return s.port }

// Running reports whether the server runs.
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil
}

// Stop kills the server (SIGKILL: no shutdown, no last words to its replicas or
// sentinels) and returns once its port refuses connections. Stopping a stopped server
// does nothing.
func (s *Server) Stop() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return
	}
	_ = s.proc.cmd.Process.Kill()
	<-s.proc.exited
	s.proc = nil
	deadline := time.Now().Add(startTimeout)
	for {
		c, err := net.DialTimeout("tcp", s.Addr(), 100*time.Millisecond)
		if err != nil {
			return
		}
		_ = c.Close()
		if time.Now().After(deadline) {
			s.t.Errorf("redistest: port %d still accepts connections after the server was killed", s.port)
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// Restart starts the server again on the same port (stopping it first if it runs). The
// new server starts empty, unless the server keeps its data (a cluster's or the
// sentinels' data nodes).
func (s *Server) Restart() {
	s.t.Helper()
	s.Stop()
	if err := s.start(); err != nil {
		s.t.Fatalf("redistest: restart: %v", err)
	}
}

// start runs redis-server on s.port and waits until it answers PING.
func (s *Server) start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc != nil {
		return errors.New("already running")
	}
	var args []string
	if s.args != nil {
		args = s.args(s)
	}
	cmd := exec.Command(s.bin, append(args,
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", map[bool]string{false: "no", true: "yes"}[s.persist],
		"--appendfsync", "everysec",
		"--dir", s.dir,
		"--daemonize", "no",
	)...)
	// An *os.File as output needs no copying goroutine.
	logPath := filepath.Join(s.dir, "redis.log")
	out, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer out.Close()
	cmd.Stdout, cmd.Stderr = out, out
	setParentDeath(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	p := &process{cmd: cmd, exited: make(chan struct{})}
	go p.wait()
	if err := waitForPing(s.Addr(), p.exited); err != nil {
		_ = cmd.Process.Kill()
		<-p.exited
		log, _ := os.ReadFile(logPath)
		return fmt.Errorf("redis-server on port %d: %v\n%s", s.port, err, log)
	}
	s.proc = p
	return nil
}

// waitForPing polls addr until it answers PING with PONG.
func waitForPing(addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(startTimeout)
	for {
		err := ping(addr)
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return errors.New("exited before answering PING")
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("no answer to PING within %v: %v", startTimeout, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func ping(addr string) error {
	c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(500 * time.Millisecond))
	if _, err := c.Write([]byte("*1\r\n$4\r\nPING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return fmt.Errorf("PING answered %q", line)
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Client returns a client of s with short timeouts and no retries, closed when t ends.
// go-redis's own logging of failed dials, which these tests provoke on purpose, is off.
func (s *Server) Client(t TB) *redis.Client {
	t.Helper()
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	c := redis.NewClient(&redis.Options{
		Addr:          s.Addr(),
		DialTimeout:   500 * time.Millisecond,
		ReadTimeout:   500 * time.Millisecond,
		WriteTimeout:  500 * time.Millisecond,
		MaxRetries:    -1,
		DialerRetries: 1,
	})
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

var quietOnce sync.Once

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

var prefixes atomic.Int64

// UniquePrefix returns a key prefix no other caller in the process gets, to isolate the
// keys of one test on a shared server.
func UniquePrefix() string { return fmt.Sprintf("t%d:", prefixes.Add(1)) }
