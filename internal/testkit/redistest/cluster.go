package redistest

import (
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Cluster is a Redis Cluster of redis-server child processes on loopback: masters, each
// with its replicas, each keeping an append-only file, with a node timeout of 1.5 s so that a replica
// takes over a dead master's slots within a few seconds.
type Cluster struct {
	t                 TB
	Nodes             []*Server
	masters, replicas int
}

// NodeTimeout is the cluster's cluster-node-timeout.
const NodeTimeout = 1500 * time.Millisecond

// StartCluster starts a cluster of masters, each with replicas replicas, and waits until
// it serves every slot with every replica in sync. It stops when t ends.
func StartCluster(t TB, masters, replicas int) *Cluster {
	t.Helper()
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		binary(t) // skips, or fails in CI, as for redis-server
		t.Fatalf("redis-cli (Debian's redis-tools, which redis-server depends on) is missing: %v", err)
	}
	c := &Cluster{t: t, masters: masters, replicas: replicas}
	clusterArgs := func(s *Server) []string {
		return []string{"--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf",
			"--cluster-node-timeout", strconv.Itoa(int(NodeTimeout.Milliseconds())),
			"--repl-diskless-sync", "yes", "--repl-diskless-sync-delay", "0"}
	}
	for range masters * (1 + replicas) {
		c.Nodes = append(c.Nodes, startPersistent(t, clusterArgs))
	}
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr()
	}
	args := append([]string{"--cluster", "create"}, addrs...)
	args = append(args, "--cluster-replicas", strconv.Itoa(replicas), "--cluster-yes")
	if out, err := exec.Command(cli, args...).CombinedOutput(); err != nil {
		t.Fatalf("redistest: redis-cli --cluster create: %v\n%s", err, out)
	}
	c.WaitHealthy()
	return c
}

// URL returns the cluster's URL in go-redis's form: its seed nodes.
func (c *Cluster) URL() string {
	u := "redis://" + c.Nodes[0].Addr()
	for i, n := range c.Nodes[1:] {
		sep := "&"
		if i == 0 {
			sep = "?"
		}
		u += sep + "addr=" + n.Addr()
	}
	return u
}

// Client returns a cluster client with short timeouts, closed when t ends.
func (c *Cluster) Client(t TB) *redis.ClusterClient {
	t.Helper()
	quietOnce.Do(func() { redis.SetLogger(quiet{}) })
	addrs := make([]string, len(c.Nodes))
	for i, n := range c.Nodes {
		addrs[i] = n.Addr()
	}
	cc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, DialTimeout: 500 * time.Millisecond,
		ReadTimeout: time.Second, WriteTimeout: time.Second, ClusterStateReloadInterval: time.Second})
	t.Cleanup(func() { _ = cc.Close() })
	return cc
}

// node returns a plain client of one node, closed right after f.
func node(s *Server, f func(*redis.Client) error) error {
	cl := redis.NewClient(&redis.Options{Addr: s.Addr(), DialTimeout: 300 * time.Millisecond, ReadTimeout: time.Second,
		WriteTimeout: time.Second, MaxRetries: -1})
	defer cl.Close()
	return f(cl)
}

// role returns a running node's role ("master", "slave") and its replication info.
func role(s *Server) (string, string, error) {
	var info string
	err := node(s, func(cl *redis.Client) error {
		var err error
		info, err = cl.Info(context.Background(), "replication").Result()
		return err
	})
	if err != nil {
		return "", "", err
	}
	return infoField(info, "role"), info, nil
}

func infoField(info, key string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key+":"); ok {
			return v
		}
	}
	return ""
}

// Masters returns the running nodes that are masters.
func (c *Cluster) Masters() []*Server {
	var out []*Server
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		if r, _, err := role(n); err == nil && r == "master" {
			out = append(out, n)
		}
	}
	return out
}

// MasterOf returns the node that serves key now.
func (c *Cluster) MasterOf(key string) *Server {
	c.t.Helper()
	slot := clusterSlot(key)
	for _, m := range c.Masters() {
		var owns bool
		_ = node(m, func(cl *redis.Client) error {
			slots, err := cl.ClusterSlots(context.Background()).Result()
			if err != nil {
				return err
			}
			for _, r := range slots {
				if slot >= r.Start && slot <= r.End && len(r.Nodes) > 0 && r.Nodes[0].Addr == m.Addr() {
					owns = true
				}
			}
			return nil
		})
		if owns {
			return m
		}
	}
	c.t.Fatalf("redistest: no master serves the slot of %q", key)
	return nil
}

// Kill kills a node with SIGKILL, as a crash would. A master's slots are then taken over
// by its replica: Kill waits for that.
func (c *Cluster) Kill(s *Server) {
	c.t.Helper()
	slots := c.slotsOf(s)
	s.Stop()
	if len(slots) == 0 {
		return
	}
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if owner := c.ownerOf(slots[0]); owner != nil && owner != s {
			if r, _, err := role(owner); err == nil && r == "master" {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("redistest: no replica took over the slots of %s in 60 s: %s", s.Addr(), c)
}

// slotsOf lists the first slot of each range a master serves.
func (c *Cluster) slotsOf(m *Server) []int {
	var out []int
	_ = node(m, func(cl *redis.Client) error {
		slots, err := cl.ClusterSlots(context.Background()).Result()
		for _, r := range slots {
			if len(r.Nodes) > 0 && r.Nodes[0].Addr == m.Addr() {
				out = append(out, r.Start)
			}
		}
		return err
	})
	return out
}

// ownerOf returns the node a running node names the master of slot.
func (c *Cluster) ownerOf(slot int) *Server {
	for _, n := range c.Nodes {
		if !n.Running() {
			continue
		}
		var addr string
		err := node(n, func(cl *redis.Client) error {
			slots, err := cl.ClusterSlots(context.Background()).Result()
			for _, r := range slots {
				if slot >= r.Start && slot <= r.End && len(r.Nodes) > 0 {
					addr = r.Nodes[0].Addr
				}
			}
			return err
		})
		if err != nil {
			continue
		}
		for _, m := range c.Nodes {
			if m.Addr() == addr {
				return m
			}
		}
		return nil
	}
	return nil
}

// Recover starts the stopped nodes again (with their data and cluster configuration, so
// that they rejoin as replicas of whoever took over their slots) and waits until the
// cluster is healthy again.
func (c *Cluster) Recover() {
	c.t.Helper()
	for _, n := range c.Nodes {
		if !n.Running() {
			if err := n.start(); err != nil {
				c.t.Fatalf("redistest: restart node %s: %v", n.Addr(), err)
			}
		}
	}
	c.WaitHealthy()
}

// WaitHealthy waits until every running node sees the cluster serve all its slots, and
// every replica is linked to its master and in sync, so that any master may fail next.
func (c *Cluster) WaitHealthy() {
	c.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	var last string
	for time.Now().Before(deadline) {
		if last = c.unhealthy(); last == "" {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	c.t.Fatalf("redistest: the cluster is not healthy after 60 s: %s", last)
}

// unhealthy says what keeps the cluster from being healthy, or "".
func (c *Cluster) unhealthy() string {
	ctx := context.Background()
	masters := 0
	for _, n := range c.Nodes {
		if !n.Running() {
			return n.Addr() + " is stopped"
		}
		var info string
		if err := node(n, func(cl *redis.Client) error {
			var err error
			info, err = cl.ClusterInfo(ctx).Result()
			return err
		}); err != nil {
			return n.Addr() + ": " + err.Error()
		}
		if !strings.Contains(info, "cluster_state:ok") {
			return n.Addr() + " sees the cluster down"
		}
		r, repl, err := role(n)
		if err != nil {
			return n.Addr() + ": " + err.Error()
		}
		if r == "slave" && (infoField(repl, "master_link_status") != "up" || infoField(repl, "master_sync_in_progress") != "0") {
			return n.Addr() + " is not in sync with its master"
		}
		if r == "master" {
			masters++
			if k, _ := strconv.Atoi(infoField(repl, "connected_slaves")); k < c.replicas {
				return n.Addr() + " has fewer replicas than it should"
			}
		}
	}
	if masters != c.masters {
		return fmt.Sprintf("%d masters, not %d", masters, c.masters)
	}
	return ""
}

// clusterSlot is the hash slot of a key (CRC16 of its hash tag, or of the key).
func clusterSlot(key string) int {
	if i := strings.IndexByte(key, '{'); i >= 0 {
		if j := strings.IndexByte(key[i+1:], '}'); j > 0 {
			key = key[i+1 : i+1+j]
		}
	}
	return int(crc16(key) % 16384)
}

func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// String describes the cluster's nodes and their roles, for failures.
func (c *Cluster) String() string {
	var sb strings.Builder
	for _, n := range c.Nodes {
		r := "stopped"
		if n.Running() {
			r, _, _ = role(n)
		}
		fmt.Fprintf(&sb, "%s %s; ", n.Addr(), r)
	}
	return sb.String()
}

// EachTopology runs f in a subtest for each topology a store must work on: one node
// ("single"), a cluster of three masters with a replica each ("cluster"), and a primary
// with a replica managed by three sentinels ("sentinel"), each with its client and the
// number of replicas each primary has (0, 1, 1), which a store may wait for.
func EachTopology(t *testing.T, f func(t *testing.T, client redis.UniversalClient, replicas int)) {
	t.Run("single", func(t *testing.T) { f(t, Start(t).Client(t), 0) })
	t.Run("cluster", func(t *testing.T) { f(t, StartCluster(t, 3, 1).Client(t), 1) })
	t.Run("sentinel", func(t *testing.T) { f(t, StartSentinels(t).Client(t), 1) })
}
