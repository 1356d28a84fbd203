package redistest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// Sentinels is a primary with a replica, watched by three sentinels (redis-server
// --sentinel), all child processes on loopback; the data nodes keep append-only files. A
// sentinel declares the primary down after a second, and two of them agree to fail over.
type Sentinels struct {
	t         TB
	Data      []*Server // the primary and its replica, whichever is which now
	Sentinels []*Server
}

// MasterName is the name the sentinels know the primary by.
const MasterName = "genui-primary"

// StartSentinels starts a primary, a replica of it and three sentinels, and waits until
// the sentinels know both. It stops when t ends.
func StartSentinels(t TB) *Sentinels {
	t.Helper()
	s := &Sentinels{t: t}
	// A data node starts as a replica of the primary there is, as its configuration would
	// say once the sentinels rewrote it (a node that came back a primary would wait some
	// 20 s for the sentinels to make it a replica again).
	args := func(sv *Server) []string {
		a := []string{"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"}
		if p := s.primary(sv); p != nil {
			a = append(a, "--replicaof", "127.0.0.1", strconv.Itoa(p.port))
		}
		return a
	}
	primary := startPersistent(t, args)
	s.Data = []*Server{primary}
	s.Data = append(s.Data, startPersistent(t, args))
	for range 3 {
		s.Sentinels = append(s.Sentinels, startWith(t, func(sv *Server) []string {
			// A sentinel rewrites its configuration file: each start writes it anew,
			// naming the primary the other sentinels know (a restarted sentinel learns
			// the rest from them).
			conf := filepath.Join(sv.dir, "sentinel.conf")
			body := fmt.Sprintf("sentinel monitor %s 127.0.0.1 %d 2\nsentinel down-after-milliseconds %s 1000\n"+
				"sentinel failover-timeout %s 5000\nsentinel parallel-syncs %s 1\n",
				MasterName, s.primaryPort(primary), MasterName, MasterName, MasterName)
			if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
				t.Errorf("redistest: %v", err)
			}
			return []string{conf, "--sentinel"}
		}))
	}
	s.WaitHealthy()
	return s
}

// primaryPort is the port of the primary now: the running data node that is a master.
func (s *Sentinels) primaryPort(fallback *Server) int {
	if p := s.Primary(); p != nil {
		return p.port
	}
	return fallback.port
}

// URL returns the sentinels' URL in go-redis's form.
func (s *Sentinels) URL() string {
	u := "redis://" + s.Sentinels[0].Addr()
	for i, n := range s.Sentinels[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += sep + "addr=" + n.Addr()
	}
	return u + "&master_name=" + MasterName
}

// Client returns a failover client with short timeouts, closed when t ends.
func (s *Sentinels) Client(t TB) *redis.Client {
	t.Helper()
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	addrs := make([]string, len(s.Sentinels))
	for i, n := range s.Sentinels {
		addrs[i] = n.Addr()
	}
	c := redis.NewFailoverClient(&redis.FailoverOptions{MasterName: MasterName, SentinelAddrs: addrs,
		DialTimeout: 500 * time.Millisecond, ReadTimeout: time.Second, WriteTimeout: time.Second})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// Primary returns the running data node that is the primary now, or nil.
func (s *Sentinels) Primary() *Server { return s.primary(nil) }

// primary is Primary among the data nodes but one (which may be starting, its lock held).
func (s *Sentinels) primary(but *Server) *Server {
	for _, d := range s.Data {
		if d != but && d.Running() {
			if r, _, err := role(d); err == nil && r == "master" {
				return d
			}
		}
	}
	return nil
}

// KillPrimary kills the primary with SIGKILL, as a crash would, waits until the
// sentinels have promoted its replica, and returns it.
func (s *Sentinels) KillPrimary() *Server {
	s.t.Helper()
	p := s.Primary()
	if p == nil {
		s.t.Fatal("redistest: no primary to kill")
	}
	p.Stop()
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if np := s.Primary(); np != nil && np != p && s.sentinelsName(np) {
			return p
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("redistest: no replica of %s was promoted in 60 s", p.Addr())
	return p
}

// sentinelsName reports whether every sentinel names p the primary.
func (s *Sentinels) sentinelsName(p *Server) bool {
	for _, sn := range s.Sentinels {
		sc := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr(), DialTimeout: 300 * time.Millisecond, MaxRetries: -1})
		addr, err := sc.GetMasterAddrByName(context.Background(), MasterName).Result()
		sc.Close()
		if err != nil || len(addr) != 2 || addr[1] != strconv.Itoa(p.port) {
			return false
		}
	}
	return true
}

// Recover starts the stopped data nodes again (with their data; the sentinels make them
// replicas of the primary they promoted) and waits until all is healthy again.
func (s *Sentinels) Recover() {
	s.t.Helper()
	for _, d := range s.Data {
		if !d.Running() {
			if err := d.start(); err != nil {
				s.t.Fatalf("redistest: restart %s: %v", d.Addr(), err)
			}
		}
	}
	s.WaitHealthy()
}

// WaitHealthy waits until one data node is the primary every sentinel names, the other
// its replica in sync, and every sentinel sees the replica and the other sentinels, so
// that the primary may fail next.
func (s *Sentinels) WaitHealthy() {
	s.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		if last = s.unhealthy(); last == "" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	s.t.Fatalf("redistest: the sentinels are not healthy after 60 s: %s", last)
}

func (s *Sentinels) unhealthy() string {
	ctx := context.Background()
	p := s.Primary()
	if p == nil {
		return "no primary"
	}
	for _, d := range s.Data {
		if d == p {
			continue
		}
		if !d.Running() {
			return d.Addr() + " is stopped"
		}
		r, repl, err := role(d)
		if err != nil {
			return err.Error()
		}
		if r != "slave" || infoField(repl, "master_port") != strconv.Itoa(p.port) ||
			infoField(repl, "master_link_status") != "up" || infoField(repl, "master_sync_in_progress") != "0" {
			return d.Addr() + " is not a replica in sync with " + p.Addr()
		}
	}
	for _, sn := range s.Sentinels {
		var addr []string
		var replicas, sentinels []map[string]string
		err := node(sn, func(cl *redis.Client) error {
			sc := redis.NewSentinelClient(&redis.Options{Addr: sn.Addr(), DialTimeout: 300 * time.Millisecond, MaxRetries: -1})
			defer sc.Close()
			var err error
			if addr, err = sc.GetMasterAddrByName(ctx, MasterName).Result(); err != nil {
				return err
			}
			if replicas, err = sc.Replicas(ctx, MasterName).Result(); err != nil {
				return err
			}
			sentinels, err = sc.Sentinels(ctx, MasterName).Result()
			return err
		})
		if err != nil {
			return sn.Addr() + ": " + err.Error()
		}
		if len(addr) != 2 || addr[1] != strconv.Itoa(p.port) {
			return fmt.Sprintf("sentinel %s names %v, not %s", sn.Addr(), addr, p.Addr())
		}
		up := 0
		for _, r := range replicas {
			if r["flags"] == "slave" && r["master-link-status"] == "ok" {
				up++
			}
		}
		if up < len(s.Data)-1 || len(sentinels) < len(s.Sentinels)-1 {
			return fmt.Sprintf("sentinel %s sees %d replicas up and %d other sentinels", sn.Addr(), up, len(sentinels))
		}
	}
	return ""
}
