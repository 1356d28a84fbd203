package main

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestMain lets the test binary serve as a child of the floor phase, which re-executes
// its own binary (here the test binary), as main does.
func TestMain(m *testing.M) {
	if mode := os.Getenv(floorEnv); mode != "" {
		if err := serveFloor(context.Background(), mode, os.Stdout); err != nil {
			fmt.Fprintf(os.Stderr, "genui-bench floor %s: %v\n", mode, err)
			os.Exit(1)
		}
		return
	}
	os.Exit(m.Run())
}

// TestFloorPhase is the floor phase's smoke test: two levels of streams through the
// proxy on a fast model, none failing, each with a peak RSS, no genui server, and no
// child left afterwards.
func TestFloorPhase(t *testing.T) {
	defer goleak.VerifyNone(t)
	rep, table := runJSON(t, "--phases", "floor", "--open-streams", "100,300",
		"--open-model-latency", "100ms", "--open-tokens-per-s", "5000")
	f := rep.Floor
	if f == nil || len(f.Levels) != 2 || f.Events == 0 || f.Baseline.RSSBytes == 0 || f.Baseline.Goroutines == 0 ||
		f.Baseline.FDs == 0 || f.ProxyPID == 0 {
		t.Fatalf("floor: %+v", f)
	}
	if rep.Target.Mode != "none" || rep.Target.PID != 0 {
		t.Fatalf("target: %+v (no genui server is needed)", rep.Target)
	}
	for _, lv := range f.Levels {
		if lv.Errors != 0 || lv.PeakRSSBytes == 0 || lv.RSSPerStreamBytes == nil || lv.EndMS == nil ||
			lv.PeakGoroutines <= f.Baseline.Goroutines || lv.PeakFDs <= f.Baseline.FDs {
			t.Fatalf("level %d: %+v", lv.Streams, lv)
		}
	}
	if rep.Summary.FloorRSSPerStreamBytes == nil || *rep.Summary.FloorRSSPerStreamBytes != *f.Levels[1].RSSPerStreamBytes {
		t.Fatalf("summary: %+v", rep.Summary)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", f.ProxyPID)); err == nil {
		t.Errorf("child %d is still there", f.ProxyPID)
	}
	for _, want := range []string{"Floor: net/http alone", "per extra stream", "no genui server"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q", want)
		}
	}
}

func TestGoalLevel(t *testing.T) {
	for _, c := range []struct {
		streams []int
		want    int
	}{
		{nil, -1}, {[]int{100}, 0}, {[]int{1000, 2000, 6000, 10000}, 2}, {[]int{2000, 10000}, 1},
		{[]int{1000, 6000, 10000}, 2}, {[]int{100, 300}, 1},
	} {
		if got := goalLevel(c.streams); got != c.want {
			t.Errorf("goalLevel(%v) = %d, want %d", c.streams, got, c.want)
		}
	}
}
