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

	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/schemas"
)

func env(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
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
	waitOK(t, base+"/readyz")
}

// waitOK waits until a GET of url answers 200, for up to 15 seconds.
func waitOK(t *testing.T, url string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if res, err := http.Get(url); err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("%s never answered 200", url)
}

func mustMarshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}
