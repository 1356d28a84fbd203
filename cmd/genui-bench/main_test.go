package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestClassify(t *testing.T) {
	for _, c := range []struct {
		f    format
		line string
		want eventKind
	}{
		{formatNDJSON, `{"type":"toolRequest","toolRequests":[]}`, eventTool},
		{formatNDJSON, `{"toolRequests":[],"type":"toolRequest"}` + "\n", eventTool},
		{formatNDJSON, `{"type":"result","result":{}}`, eventResult},
		{formatNDJSON, `{ "type" : "error" }`, eventError},
		{formatNDJSON, `{"type":"keepalive"}`, eventOther},
		{formatNDJSON, "\n", eventOther},
		{formatSSE, `data: {"message":{"content":[{"toolRequest":{}}]}}`, eventTool},
		{formatSSE, `data: {"message":{"content":[{"text":"hi"}]}}`, eventOther},
		{formatSSE, `data:{"result":{}}`, eventResult},
		{formatSSE, `data: { "error": {} }`, eventError},
		{formatSSE, `: keepalive`, eventOther},
	} {
		if got, _ := classify(c.f, []byte(c.line)); got != c.want {
			t.Errorf("classify(%v, %q) = %v, want %v", c.f, c.line, got, c.want)
		}
	}
}

func TestFlags(t *testing.T) {
	var out bytes.Buffer
	if _, err := parseConfig([]string{"--help"}, &out); err == nil || !strings.Contains(out.String(), "-streams-10k") {
		t.Fatalf("--help: %v\n%s", err, out.String())
	}
	for _, args := range [][]string{{"--phases", "latency,nope"}, {"--concurrency", "1,x"}, {"--pid", "3"},
		{"--format", "xml"}, {"--url", "ftp://x"}, {"--url", "http://x", "--server-bin", "b"}, {"extra"},
		{"--catalogs", "0"}, {"--catalog-bytes", "100"}, {"--catalog-concurrency", "0"},
		{"--a2ui-versions", "v1"}, {"--phases", "a2ui", "--a2ui-versions", ","}, {"--a2ui-turns", "0"},
		{"--a2ui-tokens-per-s", "0"}, {"--a2ui-chunk-tokens", "0"}, {"--a2ui-model-latency", "-1s"},
		{"--conv-turns", "0"}, {"--conv-conversations", "0"}, {"--conv-length", "0"}, {"--conv-rounds", "0"},
		{"--a2a-turns", "0"}, {"--a2a-rounds", "0"}, {"--a2a-tokens-per-s", "-1"}, {"--a2a-tokens-per-s", "NaN"},
		{"--a2a-tokens-per-s", "+Inf"}, {"--a2a-baseline", "other"},
		{"--ws-conns", "0"}, {"--ws-idle-rounds", "0"}, {"--ws-turns", "0"}, {"--ws-rounds", "0"}, {"--ws-baseline", "other"},
		{"--ws-session", "inline"}, {"--url", "http://x", "--ws-profile", "/tmp/p"},
		{"--redis-concurrency", "0"}, {"--redis-rounds", "0"}, {"--redis-latency-turns", "0"}, {"--redis-duration", "0s"},
		{"--url", "http://x", "--phases", "redis"}, {"--open-streams", "10,x"}, {"--open-streams", "0"}, {"--open-tokens-per-s", "0"},
		{"--policy-turns", "0"}, {"--policy-rounds", "0"}} {
		if _, err := parseConfig(args, &out); err == nil {
			t.Errorf("%q: accepted", args)
		}
	}
	c, err := parseConfig([]string{"--phases", "bytes, latency", "--concurrency", "2,4"}, &out)
	if err != nil || strings.Join(c.phases, ",") != "bytes,latency" || len(c.concurrency) != 2 || c.concurrency[1] != 4 {
		t.Fatalf("%+v %v", c, err)
	}
	c, err = parseConfig(nil, &out)
	if err != nil || strings.Join(c.phases, ",") != "latency,throughput,sessions,catalogs,streams,bytes,open" ||
		c.catalogs != 300 || c.catalogBytes != 16<<10 || c.a2uiTurns != 5 || c.a2uiTokensPerS != 150 || c.a2uiChunkTokens != 16 ||
		strings.Join(c.a2uiVersions, ",") != "v0.9,v0.8,v0.9-tags,v0.8-tags" || c.convTurns != 20 || c.convConversations != 20 || c.convLength != 10 || c.convRounds != 5 ||
		c.a2aTurns != 20 || c.a2aRounds != 3 || c.a2aTokensPerS != 2000 || c.a2aBaseline != "held" ||
		c.wsConns != 2000 || c.wsIdleRounds != 3 || c.wsTurns != 1000 || c.wsRounds != 5 || c.wsBaseline != "held" ||
		c.wsSession != wsSpecStartSession || c.wsProfileDir != "" ||
		c.redisConc != 16 || c.redisDuration != 3*time.Second || c.redisLatencyTurns != 100 || c.redisRounds != 3 ||
		fmt.Sprint(c.openLevels) != "[1000 2000 6000 10000]" || c.openLatency != 2*time.Second || c.openTokensPerS != 150 || !c.openH2C ||
		c.policyTurns != 200 || c.policyRounds != 20 {
		t.Fatalf("defaults: %+v %v", c, err)
	}
	c, err = parseConfig([]string{"--phases", "a2ui", "--a2ui-versions", "v0.8"}, &out)
	if err != nil || strings.Join(c.phases, ",") != "a2ui" || strings.Join(c.a2uiVersions, ",") != "v0.8" {
		t.Fatalf("a2ui: %+v %v", c, err)
	}
	c, err = parseConfig([]string{"--phases", "ws", "--ws-session", "catalog", "--ws-baseline", "stateless", "--ws-conns", "10"}, &out)
	if err != nil || strings.Join(c.phases, ",") != "ws" || c.wsSession != wsSpecCatalog || c.wsBaseline != "stateless" || c.wsConns != 10 {
		t.Fatalf("ws: %+v %v", c, err)
	}
	c, err = parseConfig([]string{"--phases", "a2a", "--a2a-tokens-per-s", "0", "--a2a-baseline", "stateless"}, &out)
	if err != nil || strings.Join(c.phases, ",") != "a2a" || c.a2aTokensPerS != 0 || c.a2aBaseline != "stateless" {
		t.Fatalf("a2a: %+v %v", c, err)
	}
}

func buildServerBin(t *testing.T) string {
	t.Helper()
	bin, err := buildServer(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func runJSON(t *testing.T, args ...string) (Report, string) {
	t.Helper()
	file := filepath.Join(t.TempDir(), "out.json")
	var stdout, stderr bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := run(ctx, append(args, "--json", file), &stdout, &stderr); err != nil {
		t.Fatalf("run: %v\nstderr:\n%s", err, stderr.String())
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var rep Report
	if err := json.Unmarshal(raw, &rep); err != nil {
		t.Fatal(err)
	}
	t.Logf("table:\n%s", stdout.String())
	return rep, stdout.String()
}

// TestChildServer runs the whole command with tiny settings against the real server
// binary, started as a child, and checks that every figure is there and sane.
func TestChildServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	defer goleak.VerifyNone(t)
	bin := buildServerBin(t)
	rep, table := runJSON(t, "--server-bin", bin, "--turns", "20", "--latency-concurrency", "8", "--duration", "500ms",
		"--concurrency", "1,8", "--sessions", "200", "--catalogs", "20", "--catalog-bytes", "8192", "--streams", "20",
		"--open-streams", "50", "--open-model-latency", "100ms", "--open-tokens-per-s", "5000")

	s := rep.Summary
	if rep.Target.Mode != "child" || rep.Target.PID == 0 || !rep.Target.ProcStats || rep.Target.UsesFakeModel == nil || !*rep.Target.UsesFakeModel {
		t.Fatalf("target: %+v", rep.Target)
	}
	if s.AddedTTFCP50C1MS == nil || s.CPUPerTurnMS == nil || *s.CPUPerTurnMS <= 0 || s.IdleSessionBytes == nil ||
		s.OpenStreamBytes == nil || *s.OpenStreamBytes <= 0 || s.TurnBytesNDJSON == nil || s.TurnBytesSSE == nil ||
		s.CatalogBytesPerJSONByte == nil || *s.CatalogBytesPerJSONByte <= 0 {
		t.Fatalf("summary: %+v", s)
	}
	if l := rep.Latency; l == nil || len(l.Levels) != 2 || l.Levels[1].Concurrency != 8 {
		t.Fatalf("latency: %+v", l)
	}
	for _, v := range rep.Latency.Levels {
		if v.Turns != 20 || v.Errors != 0 || v.DirectCalls != 20 || v.DirectErrors != 0 || v.ServerTTFCP50MS <= 0 ||
			v.DirectTTFCP50MS <= 0 || v.ServerEndP99MS < v.ServerTTFCP99MS || v.ServerTTFCP99MS < v.ServerTTFCP50MS {
			t.Errorf("latency level: %+v", v)
		}
	}
	for _, v := range rep.Throughput.Levels {
		if v.Turns <= 0 || v.Errors != 0 || v.TurnsPerS <= 0 || v.CPUPerTurnMS == nil || *v.CPUPerTurnMS <= 0 ||
			v.PeakRSSBytes == nil || *v.PeakRSSBytes < 1<<20 {
			t.Errorf("throughput level: %+v", v)
		}
	}
	if ss := rep.Sessions; ss.Errors != 0 || ss.RSSBeforeBytes == nil || *ss.RSSBeforeBytes < 1<<20 || ss.CreatedPerS <= 0 {
		t.Errorf("sessions: %+v", ss)
	}
	if c := rep.Catalogs; c.Catalogs != 20 || c.Created != 20 || c.Errors != 0 || c.PhaseLimitHit || c.CatalogJSONBytes != 8192 ||
		c.RSSAfterBytes == nil || *c.RSSAfterBytes <= *c.RSSBeforeBytes || c.BytesPerCatalog == nil || *c.BytesPerCatalog <= 0 ||
		c.CPUPerCatalogMS == nil || *c.CPUPerCatalogMS <= 0 || c.CreatedPerS <= 0 || c.ElapsedS <= 0 {
		t.Errorf("catalogs: %+v", c)
	}
	if st := rep.Streams; st.Errors != 0 || st.Opened != 20 || st.ModelCallsHeld != 20 || st.Cancelled != 20 {
		t.Errorf("streams: %+v", st)
	}
	if b := rep.Bytes; b.NDJSONBodyBytes < 200 || b.NDJSONWireBytes <= b.NDJSONBodyBytes || b.SSEBodyBytes < 200 || b.SSEWireBytes <= b.SSEBodyBytes {
		t.Errorf("bytes: %+v", b)
	}
	for _, want := range []string{"LATENCY", "THROUGHPUT", "idle session", "catalog ", "x JSON", "<= 10x JSON size", "open stream", "ndjson"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q", want)
		}
	}
}

// TestURLWithoutPID measures a server it did not start: RSS and CPU are unavailable
// (null), everything else is measured.
func TestURLWithoutPID(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	defer goleak.VerifyNone(t)
	bin := buildServerBin(t)
	fakeAddr, addr := freeAddr(t), freeAddr(t)
	cmd := exec.Command(bin, "--addr", addr, "--model", "googleai/gemini-2.5-flash", "--log-level", "warn")
	cmd.Env = append(os.Environ(), "GEMINI_API_KEY=k", "GOOGLE_GEMINI_BASE_URL=http://"+fakeAddr)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	rep, table := runJSON(t, "--url", "http://"+addr, "--fake-addr", fakeAddr, "--phases", "latency,sessions,catalogs,streams,conversations,a2a,policy",
		"--turns", "10", "--latency-concurrency", "4", "--sessions", "50", "--catalogs", "5", "--catalog-bytes", "2048", "--streams", "10",
		"--conv-turns", "1", "--conv-conversations", "2", "--conv-length", "2", "--conv-rounds", "1",
		"--a2a-turns", "2", "--a2a-rounds", "1", "--a2a-tokens-per-s", "0")
	if rep.Target.Mode != "url" || rep.Target.PID != 0 || rep.Target.ProcStats || rep.Target.UsesFakeModel == nil || !*rep.Target.UsesFakeModel {
		t.Fatalf("target: %+v", rep.Target)
	}
	if s := rep.Summary; s.AddedTTFCP50C1MS == nil || s.IdleSessionBytes != nil || s.OpenStreamBytes != nil || s.CPUPerTurnMS != nil {
		t.Fatalf("summary: %+v", s)
	}
	if rep.Latency.Levels[0].ServerCPUPerTurnMS != nil || rep.Sessions.RSSBeforeBytes != nil || rep.Sessions.Errors != 0 ||
		rep.Streams.Opened != 10 || rep.Streams.Errors != 0 {
		t.Fatalf("report: %+v %+v %+v", rep.Latency.Levels[0], rep.Sessions, rep.Streams)
	}
	if c := rep.Catalogs; c.Created != 5 || c.Errors != 0 || c.RSSBeforeBytes != nil || c.BytesPerCatalog != nil ||
		c.BytesPerJSONByte != nil || c.CPUPerCatalogMS != nil {
		t.Fatalf("catalogs: %+v", c)
	}
	// Conversations: no CPU figures, but the held bytes (the server holds them in memory).
	if c := rep.Conversations; c == nil || c.RoundTripErrors != 0 || c.Stateless.Errors != 0 || c.Held.Errors != 0 ||
		c.Stateless.CPUPerTurnMS != nil || c.Held.CPUPerTurnRoundsMS != nil || c.CPURatio != nil || rep.Summary.ConvCPURatio != nil ||
		c.HeldBytesRatio == nil || *c.HeldBytesRatio <= 0 {
		t.Fatalf("conversations: %+v", c)
	}
	// A2A: no CPU figures, but the times.
	if a := rep.A2A; a == nil || a.GenerateA2UI.Errors != 0 || a.A2A.Errors != 0 || a.GenerateA2UI.CPUPerTurnMS != nil ||
		a.A2A.CPUPerTurnRoundsMS != nil || a.CPURatio != nil || rep.Summary.A2ACPURatio != nil || a.EndRatio == nil || *a.EndRatio <= 0 {
		t.Fatalf("a2a: %+v", a)
	}
	// Policy: two servers of its own to compare, which a URL cannot give.
	if rep.Policy != nil || !strings.Contains(table, "policy phase skipped") {
		t.Fatalf("policy: %+v", rep.Policy)
	}
	if !strings.Contains(table, "n/a") {
		t.Fatalf("table shows no n/a:\n%s", table)
	}
}

func TestUnreachableURL(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"--url", "http://" + freeAddr(t), "--phases", "bytes"}, &stdout, &stderr)
	if err == nil || !strings.Contains(err.Error(), "not reachable") {
		t.Fatalf("err = %v", err)
	}
}

func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
