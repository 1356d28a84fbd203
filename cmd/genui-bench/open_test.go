package main

import (
	"strings"
	"testing"

	"go.uber.org/goleak"
)

// TestOpenPhase is the open phase's smoke test: 1,000 turns at once on a paced model
// reached over h2c, none failing, and the server back to its goroutines and descriptors
// afterwards (the figures themselves live in the benchmark).
func TestOpenPhase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	defer goleak.VerifyNone(t)
	bin := buildServerBin(t)
	rep, table := runJSON(t, "--server-bin", bin, "--phases", "open", "--open-streams", "200,1000",
		"--open-model-latency", "500ms", "--open-tokens-per-s", "3000")
	o := rep.Open
	if o == nil || !o.H2C || len(o.Levels) != 2 || o.Baseline.Goroutines == 0 || o.Baseline.FDs == 0 || o.ModelFirstMessageMS < 500 {
		t.Fatalf("open: %+v", o)
	}
	for _, lv := range o.Levels {
		if lv.Errors != 0 || lv.MaxConcurrent < lv.Streams/2 || lv.PeakRSSBytes == 0 || lv.RSSPerStreamBytes == nil ||
			lv.GoroutinesPerStream == nil || lv.FDsPerStream == nil || lv.FirstMessageMS == nil || lv.FirstMessageMS.Min < o.ModelFirstMessageMS {
			t.Fatalf("level %d: %+v", lv.Streams, lv)
		}
		// Nothing of the streams is left: goroutines and descriptors back to the baseline.
		if lv.AfterGoroutines > o.Baseline.Goroutines+16 || lv.AfterFDs > o.Baseline.FDs+16 {
			t.Fatalf("level %d: after it, %d goroutines and %d descriptors (baseline %d, %d)", lv.Streams,
				lv.AfterGoroutines, lv.AfterFDs, o.Baseline.Goroutines, o.Baseline.FDs)
		}
		// Over h2c the model takes no descriptor per stream.
		if *lv.FDsPerStream > 1.2 {
			t.Fatalf("level %d: %.2f descriptors per stream", lv.Streams, *lv.FDsPerStream)
		}
	}
	if rep.Summary.OpenRSSPerStreamBytes == nil || rep.Summary.OpenGoroutinesPerStream == nil {
		t.Fatalf("summary: %+v", rep.Summary)
	}
	for _, want := range []string{"Open streams", "HTTP/2 without TLS", "per stream", "48 KiB"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q", want)
		}
	}
}
