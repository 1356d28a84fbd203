package main

import (
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/genuiserver/genui/internal/testkit/redistest"
)

// TestRedisPhase runs the redis phase with tiny settings: two replicas per setup on the
// Redis servers the phase starts, every setup's turns without an error, every figure and
// ratio there.
func TestRedisPhase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server and Redis")
	}
	redistest.Start(t) // skips without redis-server (fails in CI)
	defer goleak.VerifyNone(t, redistest.IgnoreGoroutines())
	bin := buildServerBin(t)
	rep, table := runJSON(t, "--server-bin", bin, "--phases", "redis", "--redis-rounds", "2", "--redis-duration", "300ms",
		"--redis-latency-turns", "5", "--redis-concurrency", "4")
	r := rep.Redis
	if r == nil || r.Replicas != 2 || r.Concurrency != 4 || r.Rounds != 2 || r.LatencyTurns != 5 || len(r.Setups) != 4 {
		t.Fatalf("redis: %+v", r)
	}
	for i, s := range r.Setups {
		if s.Name != redisSetups[i].name || s.Errors != 0 || s.Turns < 2*5+4 || s.TurnsPerS.Median <= 0 || s.EndP50MS.Median <= 0 ||
			s.CPUPerTurnMS == nil || s.RedisCPUPerTurnMS == nil {
			t.Errorf("setup %d: %+v", i, s)
		}
	}
	if r.ClusterTurnsRatio == nil || *r.ClusterTurnsRatio <= 0 || r.AcksEndRatio == nil || *r.AcksEndRatio <= 0 ||
		r.AcksAddedEndMS == nil || r.AcksTurnsRatio == nil || r.LimitsAddedEndMS == nil {
		t.Fatalf("ratios: %+v", r)
	}
	s := rep.Summary
	if s.RedisClusterTurnsRatio == nil || *s.RedisClusterTurnsRatio != *r.ClusterTurnsRatio || s.RedisAcksAddedEndMS == nil ||
		(s.RedisClusterCPURatio == nil) != (r.ClusterCPURatio == nil) || (s.RedisLimitsAddedCPUMS == nil) != (r.LimitsAddedCPUMS == nil) {
		t.Fatalf("summary: %+v", s)
	}
	if st := rep.Settings; st.RedisConcurrency != 4 || st.RedisRounds != 2 || st.RedisLatencyTurns != 5 || st.RedisDurationS != 0.3 {
		t.Fatalf("settings: %+v", st)
	}
	for _, want := range []string{"REDIS (2 replicas", "single (one Redis node)", "cluster+acks", "cluster+limits",
		"cluster / single: turns/s", "acknowledgements (cluster+acks / cluster)", "shared limits"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q", want)
		}
	}
}
