package redisconn_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/genuiserver/genui/internal/redisconn"
	"github.com/genuiserver/genui/internal/testkit/redistest"
)

func TestValidate(t *testing.T) {
	for _, c := range []struct {
		cfg  redisconn.Config
		flag string // "" when valid
		says string
	}{
		{cfg: redisconn.Config{}},
		{cfg: redisconn.Config{URL: "redis://127.0.0.1:6379/0"}},
		{cfg: redisconn.Config{URL: "rediss://user:pw@redis.example.com:6380"}},
		{cfg: redisconn.Config{URL: "unix:///run/redis.sock"}},
		{cfg: redisconn.Config{ClusterURL: "redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002"}},
		{cfg: redisconn.Config{SentinelURL: "redis://127.0.0.1:26379?addr=127.0.0.1:26380&master_name=mymaster"}},
		{cfg: redisconn.Config{URL: "ftp://127.0.0.1"}, flag: "redis-url", says: "scheme"},
		{cfg: redisconn.Config{URL: "redis://:s3cret-pw@host:bad"}, flag: "redis-url", says: "invalid port"},
		{cfg: redisconn.Config{ClusterURL: "http://127.0.0.1:7000"}, flag: "redis-cluster-url", says: "scheme"},
		{cfg: redisconn.Config{ClusterURL: "redis://u:s3cret-pw@127.0.0.1:7000?addr=[::1"}, flag: "redis-cluster-url", says: "expected redis://"},
		{cfg: redisconn.Config{SentinelURL: "redis://127.0.0.1:26379"}, flag: "redis-sentinel-url", says: "no master_name"},
		{cfg: redisconn.Config{URL: "redis://127.0.0.1:6379", SentinelURL: "redis://127.0.0.1:26379?master_name=m"}, flag: "redis-url", says: "name one Redis"},
	} {
		err := c.cfg.Validate()
		var fe *redisconn.FlagError
		switch {
		case c.flag == "" && err != nil:
			t.Errorf("%+v: %v", c.cfg, err)
		case c.flag == "":
		case !errors.As(err, &fe) || fe.Flag != c.flag || !strings.HasPrefix(err.Error(), "--"+c.flag+": "):
			t.Errorf("%+v: %v, want an error naming --%s", c.cfg, err, c.flag)
		case !strings.Contains(err.Error(), c.says):
			t.Errorf("%+v: %q does not say %q", c.cfg, err, c.says)
		case strings.Contains(err.Error(), "s3cret"):
			t.Errorf("%+v: the error shows the password: %v", c.cfg, err)
		}
	}
}

func TestDescribeNamesNoAddress(t *testing.T) {
	for cfg, want := range map[redisconn.Config]string{
		{URL: "redis://10.0.0.1:6379"}:                                            "one Redis node",
		{ClusterURL: "redis://10.0.0.1:7000?addr=10.0.0.2:7000"}:                  "a Redis Cluster (2 seed nodes)",
		{SentinelURL: "redis://10.0.0.1:26379?addr=10.0.0.2:26379&master_name=m"}: `the primary "m" of 2 sentinels`,
	} {
		if got := redisconn.Describe(cfg); got != want {
			t.Errorf("Describe(%+v) = %q, want %q", cfg, got, want)
		}
	}
}

// TestReady follows each topology through the loss of a primary: not ready while no
// primary serves a slot, ready again once one does.
func TestReady(t *testing.T) {
	defer goleak.VerifyNone(t, redistest.IgnoreClientGoroutines()...)
	ctx := context.Background()
	t.Run("single", func(t *testing.T) {
		s := redistest.Start(t)
		rdb := open(t, redisconn.Config{URL: s.URL()})
		if err := redisconn.Ready(ctx, rdb); err != nil {
			t.Fatal(err)
		}
		s.Stop()
		if err := redisconn.Ready(ctx, rdb); err == nil {
			t.Error("ready with its node stopped")
		}
		s.Restart()
		eventually(t, func() error { return redisconn.Ready(ctx, rdb) })
	})
	t.Run("cluster", func(t *testing.T) {
		c := redistest.StartCluster(t, 3, 0) // no replicas: a lost master's slots stay unserved
		rdb := open(t, redisconn.Config{ClusterURL: c.URL()})
		if err := redisconn.Ready(ctx, rdb); err != nil {
			t.Fatal(err)
		}
		m := c.Masters()[1]
		m.Stop()
		eventually(t, func() error {
			if redisconn.Ready(ctx, rdb) == nil {
				return errors.New("still ready")
			}
			return nil
		})
		m.Restart()
		eventually(t, func() error { return redisconn.Ready(ctx, rdb) })
	})
	t.Run("sentinel", func(t *testing.T) {
		s := redistest.StartSentinels(t)
		rdb := open(t, redisconn.Config{SentinelURL: s.URL()})
		if err := redisconn.Ready(ctx, rdb); err != nil {
			t.Fatal(err)
		}
		s.KillPrimary() // returns once a replica was promoted
		eventually(t, func() error { return redisconn.Ready(ctx, rdb) })
	})
}

// TestAck: a write acknowledged by a replica is on the replica when Do returns; one that
// no replica acknowledges in time is ErrNotReplicated, a Redis error.
func TestAck(t *testing.T) {
	defer goleak.VerifyNone(t, redistest.IgnoreClientGoroutines()...)
	ctx := context.Background()
	set := func(key string) func(redis.Cmdable) error {
		return func(c redis.Cmdable) error { return c.Set(ctx, key, "v", 0).Err() }
	}
	t.Run("no replica", func(t *testing.T) {
		rdb := open(t, redisconn.Config{URL: redistest.Start(t).URL()})
		start := time.Now()
		err := redisconn.Ack{Replicas: 1, Timeout: 200 * time.Millisecond}.Do(ctx, rdb, "k", set("k"))
		var re redis.Error
		if !errors.Is(err, redisconn.ErrNotReplicated) || !errors.As(err, &re) {
			t.Fatalf("Do = %v, want ErrNotReplicated", err)
		}
		if d := time.Since(start); d < 200*time.Millisecond || d > 2*time.Second {
			t.Errorf("waited %v for a 200ms timeout", d)
		}
		if err := (redisconn.Ack{}).Do(ctx, rdb, "k", set("k")); err != nil {
			t.Errorf("without acknowledgements: %v", err)
		}
	})
	t.Run("cluster", func(t *testing.T) {
		c := redistest.StartCluster(t, 3, 1)
		rdb := open(t, redisconn.Config{ClusterURL: c.URL()})
		for _, key := range []string{"{a}x", "{b}x", "{c}x", "{d}x"} {
			if err := (redisconn.Ack{Replicas: 1, Timeout: time.Second}).Do(ctx, rdb, key, set(key)); err != nil {
				t.Fatalf("%s: %v", key, err)
			}
		}
	})
	t.Run("sentinel", func(t *testing.T) {
		s := redistest.StartSentinels(t)
		rdb := open(t, redisconn.Config{SentinelURL: s.URL()})
		if err := (redisconn.Ack{Replicas: 1, Timeout: time.Second}).Do(ctx, rdb, "k", set("k")); err != nil {
			t.Fatal(err)
		}
		var replica *redistest.Server
		for _, d := range s.Data {
			if d != s.Primary() {
				replica = d
			}
		}
		r := replica.Client(t)
		r.ReadOnly(ctx)
		if v, err := r.Get(ctx, "k").Result(); err != nil || v != "v" {
			t.Errorf("the replica has %q, %v", v, err)
		}
	})
}

// quiet keeps go-redis's reconnection messages out of the test output.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(quiet{}) }

func open(t *testing.T, cfg redisconn.Config) redis.UniversalClient {
	t.Helper()
	rdb, err := redisconn.Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rdb.Close() })
	return rdb
}

func eventually(t *testing.T, f func() error) {
	t.Helper()
	var err error
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if err = f(); err == nil {
			return
		}
	}
	t.Fatal(err)
}
