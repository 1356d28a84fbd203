package redistest

import (
	"context"
	"testing"
	"time"
)

// The topologies start, serve, and fail over when a primary dies.
func TestClusterFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: needs redis-server (starts six servers and kills one)")
	}
	c := StartCluster(t, 3, 1)
	cc := c.Client(t)
	ctx := context.Background()
	// Written and acknowledged by the replica (WAIT on the writing connection), so that
	// the failover cannot lose it.
	mc, err := cc.MasterForKey(ctx, "{k}x")
	if err != nil {
		t.Fatal(err)
	}
	conn := mc.Conn()
	if err := conn.Set(ctx, "{k}x", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := conn.Wait(ctx, 1, 10*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d %v", n, err)
	}
	conn.Close()
	m := c.MasterOf("{k}x")
	start := time.Now()
	c.Kill(m)
	for {
		err := cc.Set(ctx, "{k}y", "2", 0).Err()
		if err == nil {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatalf("no failover in 30 s: %s: %v", c, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("failover in %v", time.Since(start))
	if v, err := cc.Get(ctx, "{k}x").Result(); err != nil || v != "1" {
		t.Fatalf("after the failover: %q %v", v, err)
	}
	c.Recover()
	if c.MasterOf("{k}x") == m {
		t.Fatal("the killed master is master again")
	}
}

func TestSentinelFailover(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: needs redis-server (starts five servers and kills one)")
	}
	s := StartSentinels(t)
	cl := s.Client(t)
	ctx := context.Background()
	conn := cl.Conn()
	if err := conn.Set(ctx, "x", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if n, err := conn.Wait(ctx, 1, 10*time.Second).Result(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d %v", n, err)
	}
	conn.Close()
	old := s.KillPrimary()
	start := time.Now()
	for {
		if err := cl.Set(ctx, "y", "2", 0).Err(); err == nil {
			break
		}
		if time.Since(start) > 30*time.Second {
			t.Fatal("no failover in 30 s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("failover in %v", time.Since(start))
	if v, err := cl.Get(ctx, "x").Result(); err != nil || v != "1" {
		t.Fatalf("after the failover: %q %v", v, err)
	}
	s.Recover()
	if s.Primary() == old {
		t.Fatal("the killed primary is primary again")
	}
}
