package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/genuiserver/genui/internal/fakegemini"
	"github.com/genuiserver/genui/schemas"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigFromFlagsAndEnv(t *testing.T) {
	cfg, err := parseConfig(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.addr != ":3400" || cfg.bodyLimit != 20<<20 || cfg.sessions != 10000 || cfg.sessionTTL != time.Hour || cfg.cors != "" || len(cfg.origins()) != 1 || cfg.origins()[0] != "*" {
		t.Fatalf("defaults: %+v", cfg)
	}
	cfg, err = parseConfig(nil, env(map[string]string{"PORT": "8080", "GENUI_BODY_LIMIT": "5MiB", "GENUI_MODEL": "offline"}), io.Discard)
	if err != nil || cfg.addr != ":8080" || cfg.bodyLimit != 5<<20 || cfg.model != "offline" {
		t.Fatalf("env: %+v %v", cfg, err)
	}
	cfg, err = parseConfig([]string{"--addr", "127.0.0.1:9", "--body-limit", "1024"}, env(map[string]string{"GENUI_ADDR": ":1"}), io.Discard)
	if err != nil || cfg.addr != "127.0.0.1:9" || cfg.bodyLimit != 1024 {
		t.Fatalf("flags override env: %+v %v", cfg, err)
	}
	if _, err := parseConfig(nil, env(map[string]string{"GENUI_SESSION_TTL": "soon"}), io.Discard); err == nil || !strings.Contains(err.Error(), "GENUI_SESSION_TTL") {
		t.Fatalf("bad env value must name the variable: %v", err)
	}
	if cfg.convTTL != time.Hour || cfg.convs != 10000 || cfg.convBytes != 64<<20 {
		t.Fatalf("conversation defaults: %+v", cfg)
	}
	if cfg, err := parseConfig(nil, env(map[string]string{"GENUI_CONVERSATION_TTL": "10m", "GENUI_CONVERSATION_MEMORY": "1MiB"}), io.Discard); err != nil || cfg.convTTL != 10*time.Minute || cfg.convBytes != 1<<20 {
		t.Fatalf("conversation env: %+v %v", cfg, err)
	}
	if _, err := parseConfig([]string{"--conversation-ttl", "0"}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "--conversation-ttl") {
		t.Fatalf("a zero conversation TTL must be refused: %v", err)
	}
	if cfg, err := parseConfig([]string{"--pprof-addr", "127.0.0.1:0"}, env(nil), io.Discard); err != nil || cfg.pprofAddr != "127.0.0.1:0" {
		t.Fatalf("pprof flag: %+v %v", cfg, err)
	}
	var help bytes.Buffer
	if _, err := parseConfig([]string{"--help"}, env(nil), &help); err == nil || !strings.Contains(help.String(), "GENUI_MODEL") {
		t.Fatalf("--help must list env equivalents: %s", help.String())
	}
}

// TestSIGTERMDrainsInFlightStreams runs the real binary against a slow fake Gemini, sends
// SIGTERM mid-stream and checks the stream still ends with its result and the process
// exits 0.
func TestSIGTERMDrainsInFlightStreams(t *testing.T) {
	bin := binary(t)
	fake := fakegemini.New(fakegemini.WithPacing(300 * time.Millisecond))
	defer fake.Close()
	surface := map[string]any{"surfaceId": "s1", "definition": map[string]any{"root": "t", "widgets": []any{
		map[string]any{"id": "t", "widget": map[string]any{"Text": map[string]any{"text": "hi"}}}}}}
	fake.Enqueue(fakegemini.Respond(fakegemini.Text("one"), fakegemini.Text("two"), fakegemini.Text("three"), fakegemini.FunctionCall("addOrUpdateSurface", surface)))

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "--addr", addr, "--model", "googleai/gemini-2.5-flash", "--drain-timeout", "20s")
	cmd.Env = append(os.Environ(), "GOOGLE_GEMINI_BASE_URL="+fake.URL(), "GEMINI_API_KEY=k")
	var logs bytes.Buffer
	cmd.Stderr = &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	base := "http://" + addr
	waitReady(t, base)

	catalog, _ := schemas.SampleCatalog("basic")
	body := fmt.Sprintf(`{"catalog":%s,"conversation":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}`, mustMarshal(catalog))
	res, err := http.Post(base+"/generateUi", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	r := bufio.NewReader(res.Body)
	first, err := r.ReadString('\n')
	if err != nil || !strings.Contains(first, `"text":"one"`) {
		t.Fatalf("first line %q %v", first, err)
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("stream cut by shutdown: %v", err)
	}
	if lines := strings.Split(strings.TrimSpace(string(rest)), "\n"); !strings.HasPrefix(lines[len(lines)-1], `{"type":"result"`) {
		t.Fatalf("stream did not finish with its result:\n%s", rest)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, logs.String())
		}
	case <-time.After(15 * time.Second):
		t.Fatalf("process did not exit after SIGTERM\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "draining") {
		t.Fatalf("logs:\n%s", logs.String())
	}
}

func waitReady(t *testing.T, base string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if res, err := http.Get(base + "/readyz"); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("server did not become ready")
}

func mustMarshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
