package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/genuiserver/genui/internal/testkit/fakegemini"
)

// TestRowsScript checks the rows script: a surface of a Column and its rows, top-down,
// and the fake's lookup of each level and pace by its marker.
func TestRowsScript(t *testing.T) {
	s, err := parseA2UIScript(a2aVersion, rowsScript(3))
	if err != nil {
		t.Fatal(err)
	}
	if s.surfaceID != rowsSurface || len(s.comps) != 4 || s.comps[0].typ != "Column" ||
		!slices.Equal(s.comps[0].refs, []string{"row-1", "row-2", "row-3"}) || s.comps[3].typ != "Text" {
		t.Fatalf("%+v", s)
	}
	f, err := newFakeModel("127.0.0.1:0", 0, 0, 0, 1, a2uiPace{chunkTokens: 16, tokensPerS: 150,
		rowsLevels: []int{100, 10}, rowsTokensPerS: 2000})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if len(f.rows) != 4 {
		t.Fatalf("scripts: %d", len(f.rows))
	}
	for _, n := range []int{10, 100} {
		un, pa := f.a2uiFor(rowsBody(n, rowsUnpaced)), f.a2uiFor(rowsBody(n, rowsPaced))
		if un == nil || pa == nil || un == pa || un.script != pa.script || len(un.script.comps) != n+1 ||
			len(un.frames) != len(pa.frames) || !bytes.Equal(un.frames[0], pa.frames[0]) {
			t.Fatalf("rows %d: %+v %+v", n, un, pa)
		}
		if un.at[len(un.at)-1] != 0 {
			t.Errorf("rows %d unpaced: last chunk at %s", n, un.at[len(un.at)-1])
		}
		// Tokens are bytes/4: the script at 2,000 tokens/s.
		want := time.Duration(float64(len(un.script.text)) / 4 / 2000 * float64(time.Second))
		if last := pa.at[len(pa.at)-1]; last != want {
			t.Errorf("rows %d paced: last chunk at %s, want %s", n, last, want)
		}
	}
	if f.a2uiFor(rowsBody(20, rowsUnpaced)) != nil {
		t.Error("a level not built has a script")
	}
}

// TestRowsFrames checks that the rows scripts' events are those fakegemini gives for the
// same chunks, but for the prompt's token count and the response id.
func TestRowsFrames(t *testing.T) {
	s, err := parseA2UIScript(a2aVersion, rowsScript(7))
	if err != nil {
		t.Fatal(err)
	}
	texts := s.chunks(64)
	var chunks []fakegemini.Chunk
	for _, x := range texts {
		chunks = append(chunks, fakegemini.Text(x))
	}
	ref := fakegemini.New(fakegemini.WithResponder(func(r *fakegemini.Request) fakegemini.Reply {
		if strings.Contains(r.LastUserText(), rowsProbe) {
			return fakegemini.Respond(fakegemini.Text(rowsProbeTexts[0]), fakegemini.Text(rowsProbeTexts[1]))
		}
		return fakegemini.Respond(chunks...)
	}))
	defer ref.Close()
	want, wantUnary, err := captureScript(ref.URL(), "rows", len(chunks))
	if err != nil {
		t.Fatal(err)
	}
	probe, probeUnary, err := captureScript(ref.URL(), rowsProbe, 2)
	if err != nil {
		t.Fatal(err)
	}
	got, gotUnary, err := encodeLike(probe, probeUnary, texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("%d events, want %d", len(got), len(want))
	}
	norm := func(ev []byte) any {
		var v map[string]any
		if err := json.Unmarshal(bytes.TrimPrefix(bytes.TrimSpace(ev), []byte("data: ")), &v); err != nil {
			t.Fatalf("%v: %s", err, ev)
		}
		u := v["usageMetadata"].(map[string]any)
		u["totalTokenCount"] = u["totalTokenCount"].(float64) - u["promptTokenCount"].(float64)
		delete(u, "promptTokenCount")
		delete(v, "responseId")
		return v
	}
	for i := range got {
		if g, w := norm(got[i]), norm(want[i]); !reflect.DeepEqual(g, w) {
			t.Fatalf("event %d:\n%s\nwant\n%s", i, got[i], want[i])
		}
		if !bytes.HasPrefix(got[i], []byte("data: ")) || !bytes.HasSuffix(got[i], []byte("\n\n")) {
			t.Fatalf("event %d: %q", i, got[i])
		}
	}
	if g, w := norm(gotUnary), norm(wantUnary); !reflect.DeepEqual(g, w) {
		t.Fatalf("unary:\n%s\nwant\n%s", gotUnary, wantUnary)
	}
}

// TestRowsFlags checks the rows phase's flags.
func TestRowsFlags(t *testing.T) {
	var out bytes.Buffer
	for _, args := range [][]string{{"--rows", "10,x"}, {"--rows", "0"}, {"--phases", "rows", "--rows", ","},
		{"--rows-tokens-per-s", "0"}, {"--rows-tokens-per-s", "+Inf"}, {"--url", "http://x", "--rows-baseline-bin", "b"}} {
		if _, err := parseConfig(args, &out); err == nil {
			t.Errorf("%q: accepted", args)
		}
	}
	c, err := parseConfig(nil, &out)
	if err != nil || fmt.Sprint(c.rowsLevels) != "[100 500 2000 20000]" || c.rowsTokensPerS != 2000 || c.rowsBaselineBin != "" ||
		c.has("rows") || !slices.Contains(allPhases, "rows") {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = parseConfig([]string{"--phases", "rows", "--rows", "5, 50,5", "--rows-baseline-bin", "/tmp/b"}, &out)
	if err != nil || !c.has("rows") || fmt.Sprint(c.rowsLevels) != "[5 50]" || c.rowsBaselineBin != "/tmp/b" {
		t.Fatalf("rows: %+v %v", c, err)
	}
}

// TestRowsPhase runs the rows phase against the real server at 100 and 500 rows: every
// turn ends with its result and every row, having received at most 3x the bytes of the
// surface's final state, and every figure is there.
func TestRowsPhase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	defer goleak.VerifyNone(t)
	bin := buildServerBin(t)
	began := time.Now()
	rep, table := runJSON(t, "--server-bin", bin, "--phases", "rows", "--rows", "100,500")
	t.Logf("phase and report in %s", time.Since(began).Round(time.Millisecond))
	r := rep.Rows
	if r == nil || r.Version != "v0.9" || !strings.Contains(r.CatalogID, "basic") || r.ChunkTokens != 16 || r.TokensPerS != 2000 ||
		r.TimeoutS != 30 || r.WarmupRows != rowsWarmupRows || !r.FreshServerPerTurn || r.BaselineBin != "" ||
		r.TargetRatio != 3 || !r.Pass || len(r.Levels) != 4 {
		t.Fatalf("rows: %+v", r)
	}
	pids := map[int]bool{}
	worst := 0.0
	for i, lv := range r.Levels {
		n, pace := []int{100, 500}[i/2], rowsPaces[i%2]
		c := lv.Current
		if lv.Rows != n || lv.Pace != pace || lv.Components != n+1 || lv.ScriptBytes < 60*n || lv.Chunks != (lv.ScriptBytes+63)/64 ||
			(pace == rowsUnpaced) != (lv.ModelStreamMS == 0) || lv.FirstServer != rowsCurrent || lv.Baseline != nil ||
			lv.ReceivedRatio != nil || lv.TimeRatio != nil || lv.CPURatio != nil || lv.PeakRSSRatio != nil || lv.BaselineCut {
			t.Errorf("level %d %s: %+v", n, pace, lv)
		}
		if c.Server != rowsCurrent || c.PID == 0 || pids[c.PID] || c.Ended != rowsEndResult || c.Rows != n ||
			c.ModelSentBytes != int64(lv.ScriptBytes) || c.A2UIMessages < 2 || c.FinalBytes < int64(60*n) ||
			c.A2UIBytes < c.FinalBytes || c.BodyBytes <= c.A2UIBytes || c.ReceivedPerFinal == nil ||
			*c.ReceivedPerFinal < 1 || *c.ReceivedPerFinal > 3 || c.FirstMessageMS == nil || c.FirstRenderableMS == nil ||
			c.LastMessageMS == nil || *c.FirstMessageMS > *c.FirstRenderableMS || *c.FirstRenderableMS > *c.LastMessageMS ||
			*c.LastMessageMS > c.EndMS || c.FirstRenderablePct == nil || *c.FirstRenderablePct <= 0 || *c.FirstRenderablePct > 100 ||
			c.CPUMS == nil || *c.CPUMS <= 0 || c.CPUSource == "" || c.PeakRSSBytes == nil || *c.PeakRSSBytes < 1<<20 ||
			c.ErrorStatus != "" || c.Limit != "" || c.Message != "" {
			t.Errorf("turn %d %s: %+v", n, pace, c)
		}
		if pace == rowsPaced && c.EndMS < lv.ModelStreamMS {
			t.Errorf("turn %d paced: ended at %.0f ms, before the model's last chunk at %.0f ms", n, c.EndMS, lv.ModelStreamMS)
		}
		pids[c.PID] = true
		if c.ReceivedPerFinal != nil {
			worst = max(worst, *c.ReceivedPerFinal)
		}
		if _, err := readCPU(c.PID); err == nil {
			t.Errorf("the server of %d %s (pid %d) is still there", n, pace, c.PID)
		}
	}
	if s := rep.Summary; s.RowsReceivedPerFinalMax == nil || *s.RowsReceivedPerFinalMax != worst || s.RowsBaselineReceivedRatio2000 != nil {
		t.Fatalf("summary: %+v", s)
	}
	if st := rep.Settings; fmt.Sprint(st.RowsLevels) != "[100 500]" || st.RowsTokensPerS != 2000 || st.RowsBaselineBin != "" {
		t.Fatalf("settings: %+v", st)
	}
	if rep.Target.PID == 0 || rep.Target.UsesFakeModel == nil || !*rep.Target.UsesFakeModel {
		t.Fatalf("target: %+v", rep.Target)
	}
	for _, want := range []string{"ROWS (", "received/final", "first renderable", targetRows + " (the current server's turns): pass"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	if strings.Contains(table, "baseline / current") {
		t.Error("a table without a baseline compares with one")
	}
}

// TestRowsBaseline runs the rows phase at 100 rows with the same server as its own
// baseline: both servers' turns are there, side by side, with their ratios.
func TestRowsBaseline(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	defer goleak.VerifyNone(t)
	bin := buildServerBin(t)
	rep, table := runJSON(t, "--server-bin", bin, "--phases", "rows", "--rows", "100", "--rows-baseline-bin", bin,
		"--rows-tokens-per-s", "20000")
	r := rep.Rows
	if r == nil || r.BaselineBin != bin || len(r.Levels) != 2 {
		t.Fatalf("rows: %+v", r)
	}
	for _, lv := range r.Levels {
		b, c := lv.Baseline, lv.Current
		if b == nil || b.Server != rowsBaseline || c.Server != rowsCurrent || b.PID == c.PID || lv.FirstServer != rowsBaseline ||
			b.Ended != rowsEndResult || b.Rows != 100 || b.FinalBytes != c.FinalBytes || lv.BaselineCut ||
			lv.ReceivedRatio == nil || lv.TimeRatio == nil || lv.CPURatio == nil || lv.PeakRSSRatio == nil {
			t.Fatalf("level %d %s: %+v, baseline %+v", lv.Rows, lv.Pace, lv, b)
		}
	}
	for _, want := range []string{"baseline: " + bin, "baseline / current", "100   unpaced  baseline"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q", want)
		}
	}
}
