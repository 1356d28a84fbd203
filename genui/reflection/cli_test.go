package reflection_test

import (
	"archive/zip"
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/genuiserver/genui/schemas"
)

// cliWait bounds each step of the CLI test (start-up, registration, each call).
const cliWait = 45 * time.Second

// TestGenkitCLI runs the real Genkit CLI (genkit-cli 1.43.0 from npm, installed in e2e/ by
// `make deps`) with the server binary as its runtime, and drives it through the CLI's own
// interfaces: the tools API that the Dev UI calls. The server calls reflection.InitGenkit and
// reflection.Start: exactly one runtime registers, this package's.
func TestGenkitCLI(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: needs node and the Genkit CLI (genui/reflection/e2e)")
	}
	e2e, err := filepath.Abs("e2e")
	if err != nil {
		t.Fatal(err)
	}
	npx, err := exec.LookPath("npx")
	if err == nil {
		_, err = os.Stat(filepath.Join(e2e, "node_modules", ".bin", "genkit"))
	}
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("the Genkit CLI is not installed (make deps): %v", err)
		}
		t.Skipf("the Genkit CLI is not installed (cd genui/reflection/e2e && npm ci): %v", err)
	}
	bin := buildServer(t)

	t.Run("noui", func(t *testing.T) {
		// The command of the issue: the manager alone, no tools API. The runtime must register.
		cli := startCLI(t, npx, e2e, bin, "--noui")
		cli.waitLog(t, "registered with the Genkit manager")
		cli.waitLog(t, "genui-server listening")
		cli.onlyRuntime(t)
		res, err := http.Get("http://" + cli.addr + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("readyz: %s", res.Status)
		}
	})

	t.Run("tools API", func(t *testing.T) {
		cli := startCLI(t, npx, e2e, bin, "--port", fmt.Sprint(freePort(t)))
		api := "http://127.0.0.1:" + cli.uiPort + "/api/"
		eventually2(t, cli, "the tools API", func() bool {
			res, err := http.Get(api + "__health")
			if err == nil {
				res.Body.Close()
			}
			return err == nil && res.StatusCode == http.StatusOK
		})

		// The runtime registered over WebSocket (tRPC query, as the Dev UI polls it).
		var runtimes []struct {
			ID, Name, GenkitVersion, ReflectionServerURL string
			PID                                          int
		}
		eventually2(t, cli, "the runtime to register", func() bool {
			trpc(t, api+"getActiveRuntimes", &runtimes)
			return len(runtimes) > 0
		})
		if rt := runtimes[0]; len(runtimes) != 1 || rt.Name != "genui-server" || rt.GenkitVersion != "go/"+genkitModuleVersion(t) || !strings.HasPrefix(rt.ReflectionServerURL, "ws://") {
			t.Fatalf("runtimes: %+v", runtimes)
		}
		t.Logf("getActiveRuntimes: %+v", runtimes)

		var actions map[string]struct{ Key, Name, ActionType string }
		trpc(t, api+"listActions", &actions)
		for _, k := range []string{"/flow/generateUi", "/flow/generateA2ui", "/flow/startSession", "/model/genui/offline", "/util/generate"} {
			if a, ok := actions[k]; !ok || a.Key != k {
				t.Fatalf("%s not listed: %v", k, actions)
			}
		}
		keys := make([]string, 0, len(actions))
		for k := range actions {
			keys = append(keys, k)
		}
		t.Logf("listActions: %d actions: %v", len(actions), keys)

		var values map[string]string
		trpc(t, api+"listValues?input="+url.QueryEscape(`{"type":"defaultModel"}`), &values)
		if values["defaultModel"] != "genui/offline" {
			t.Fatalf("listValues: %v", values)
		}

		cli.onlyRuntime(t)

		// A unary run, then generateUi with streaming, as the Dev UI's "Run" button does.
		catalog, _ := schemas.SampleCatalog("basic")
		var started struct{ Result string }
		post(t, api+"runAction", map[string]any{"key": "/flow/startSession",
			"input": map[string]any{"protocolVersion": "0.1.0", "catalog": catalog}}, &started)
		if len(started.Result) < 20 {
			t.Fatalf("startSession: %+v", started)
		}
		lines, traceID := streamGenerate(t, api, map[string]any{"sessionId": started.Result})
		t.Logf("streamAction generateUi: %d chunks, trace %s; first chunk: %.160s…; final: %.120s…",
			len(lines)-1, traceID, lines[0], lines[len(lines)-1])

		// An A2UI turn as the Dev UI runs it: chunks in Genkit's A2UI data-part shape.
		a2uiBody, _ := json.Marshal(map[string]any{"key": "/flow/generateA2ui", "input": map[string]any{
			"conversation": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "text": "Hello from the Dev UI"}}}}}})
		a2uiRes, err := (&http.Client{Timeout: cliWait}).Post(api+"streamAction", "application/json", bytes.NewReader(a2uiBody))
		if err != nil {
			t.Fatal(err)
		}
		a2uiOut, _ := io.ReadAll(a2uiRes.Body)
		a2uiRes.Body.Close()
		if !bytes.Contains(a2uiOut, []byte(`{"role":"model","index":0,"content":[{"data":{"envelopes":[{"version":"v0.9","createSurface":`)) ||
			!bytes.Contains(a2uiOut, []byte(`"metadata":{"mimeType":"application/a2ui+json"}`)) || !bytes.Contains(a2uiOut, []byte(`"result":`)) {
			t.Fatalf("streamAction generateA2ui:\n%.2000s", a2uiOut)
		}
		t.Logf("streamAction generateA2ui: %d lines", bytes.Count(a2uiOut, []byte("\n")))

		// A call of a client tool as the Dev UI shows it: Genkit's interrupt, in the
		// stream and in the output.
		callBody, _ := json.Marshal(map[string]any{"key": "/flow/generateUi", "input": map[string]any{
			"catalog": catalog, "clientTools": []any{map[string]any{"name": "getLocation"}},
			"conversation": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "text": "Where am I? Use getLocation"}}}}}})
		callRes, err := (&http.Client{Timeout: cliWait}).Post(api+"streamAction", "application/json", bytes.NewReader(callBody))
		if err != nil {
			t.Fatal(err)
		}
		callOut, _ := io.ReadAll(callRes.Body)
		callRes.Body.Close()
		if !bytes.Contains(callOut, []byte(`{"role":"model","index":0,"content":[{"toolRequest":{"name":"getLocation","input":{},"ref":"`)) ||
			bytes.Count(callOut, []byte(`"metadata":{"interrupt":true}`)) != 2 || !bytes.Contains(callOut, []byte(`"finishReason":"interrupted"`)) {
			t.Fatalf("streamAction generateUi with a client tool:\n%.2000s", callOut)
		}

		// Runs whose input is over 32 KiB (coder/websocket's default read limit, which
		// Genkit's own V2 client keeps): a session with a large catalog, and generateUi with
		// that catalog inline.
		big := paddedCatalog(t, 40<<10)
		var bigSession struct{ Result string }
		post(t, api+"runAction", map[string]any{"key": "/flow/startSession",
			"input": map[string]any{"protocolVersion": "0.1.0", "catalog": big}}, &bigSession)
		if len(bigSession.Result) < 20 {
			t.Fatalf("startSession with a large catalog: %+v", bigSession)
		}
		lines, bigTrace := streamGenerate(t, api, map[string]any{"catalog": big})
		raw, _ := json.Marshal(big)
		t.Logf("streamAction generateUi with a %d-byte inline catalog: %d chunks, trace %s", len(raw), len(lines)-1, bigTrace)
		cli.onlyRuntime(t)

		// The runtime exported the runs' spans to the CLI's telemetry server: the traces open,
		// with the model call (made outside Genkit's model actions) as a child span of the
		// flow.
		for _, id := range []string{traceID, bigTrace} {
			eventually2(t, cli, "trace "+id, func() bool {
				res, err := http.Get(api + "getTrace?input=" + url.QueryEscape(`{"traceId":"`+id+`"}`))
				if err != nil {
					return false
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				return res.StatusCode == http.StatusOK && bytes.Contains(b, []byte(`"displayName":"generateUi"`)) &&
					bytes.Contains(b, []byte(`/{generateUi,t:flow}/{genui/offline,t:action,s:model}`))
			})
		}

		// Errors travel back as Genkit statuses: an unknown trace id to cancel.
		b, _ := json.Marshal(map[string]string{"traceId": "0123456789abcdef0123456789abcdef"})
		res2, err := http.Post(api+"cancelAction", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		out, _ := io.ReadAll(res2.Body)
		res2.Body.Close()
		if !strings.Contains(string(out), "Action not found or already completed") {
			t.Fatalf("cancelAction of an unknown trace: %s %s", res2.Status, out)
		}
	})
}

// streamGenerate runs generateUi through the tools API's streamAction, as the Dev UI does, and
// checks what it streams: events including a surface, then the final result with the trace
// id that the X-Genkit-Trace-Id header announced. It returns the lines and the trace id.
func streamGenerate(t *testing.T, api string, input map[string]any) (lines []string, traceID string) {
	t.Helper()
	input["conversation"] = []any{map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "text": "Hello from the Dev UI"}}}}
	body, _ := json.Marshal(map[string]any{"key": "/flow/generateUi", "input": input})
	res, err := (&http.Client{Timeout: cliWait}).Post(api+"streamAction", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	traceID = res.Header.Get("X-Genkit-Trace-Id") // sent from runActionState, before any chunk
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		lines = append(lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(lines) < 2 {
		t.Fatalf("streamAction: %q", lines)
	}
	var tools []string
	for _, l := range lines[:len(lines)-1] {
		// Each chunk as Genkit SSE carries it: {"role":"model","index":0,"content":[…]}.
		var c schemas.Chunk
		if err := json.Unmarshal([]byte(l), &c); err != nil || c.Role != "model" || len(c.Content) != 1 {
			t.Fatalf("chunk %.300q: %v", l, err)
		}
		if c.Content[0].ToolRequest != nil {
			tools = append(tools, l)
		}
	}
	var final struct {
		Result struct {
			Message struct{ Role string }
		}
		Telemetry struct{ TraceID string }
		Error     any
	}
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &final); err != nil || final.Error != nil ||
		final.Result.Message.Role != "model" || final.Telemetry.TraceID != traceID || len(traceID) != 32 {
		t.Fatalf("streamAction final line %.500q (trace header %q): %v", lines[len(lines)-1], traceID, err)
	}
	if len(tools) == 0 || !strings.Contains(tools[0], "addOrUpdateSurface") {
		t.Fatalf("no surface streamed: %.1000q", lines)
	}
	return lines, traceID
}

// buildServer builds cmd/genui-server as the Dockerfile does (`make static`, whose build cache
// this shares).
func buildServer(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(t.TempDir(), "genui-server")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goCmd, "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/genui-server")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

type cliProcess struct {
	cmd    *exec.Cmd
	dir    string // the project directory
	log    string // the CLI's and the runtime's output
	uiPort string
	addr   string
}

// startCLI runs `npx genkit start --experimental-reflection-v2 <flags> -- <bin> --addr …` in a
// fresh project directory, with everything that could reach the network switched off, and
// kills its whole process group at the end of the test.
func startCLI(t *testing.T, npx, e2e, bin string, flags ...string) *cliProcess {
	t.Helper()
	dir, home := t.TempDir(), t.TempDir()
	// The project root the CLI finds (it keeps traces in .genkit/ there).
	must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module clitest\n"), 0o644))
	// The Dev UI assets the tools server would otherwise download, and no analytics.
	var pkg struct{ Version string }
	raw, err := os.ReadFile(filepath.Join(e2e, "node_modules", "@genkit-ai", "tools-common", "package.json"))
	must(t, err)
	must(t, json.Unmarshal(raw, &pkg))
	assets := filepath.Join(home, ".genkit", "assets", pkg.Version)
	must(t, os.MkdirAll(assets, 0o755))
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	w, _ := zw.Create("ui/browser/index.html")
	io.WriteString(w, "<!doctype html><title>Genkit Dev UI (test stub)</title>\n")
	must(t, zw.Close())
	must(t, os.WriteFile(filepath.Join(assets, pkg.Version+".zip"), zb.Bytes(), 0o644))
	cfg := filepath.Join(home, ".config", "configstore", "@genkit-ai")
	must(t, os.MkdirAll(cfg, 0o755))
	must(t, os.WriteFile(filepath.Join(cfg, "tools-common.json"), []byte(`{"userSettings":{"analyticsOptOut":true}}`), 0o644))

	p := &cliProcess{dir: dir, log: filepath.Join(t.TempDir(), "cli.log"), addr: fmt.Sprintf("127.0.0.1:%d", freePort(t))}
	for i, f := range flags {
		if f == "--port" {
			p.uiPort = flags[i+1]
		}
	}
	args := append([]string{"--offline", "--prefix", e2e, "--no", "--",
		"genkit", "--non-interactive", "--no-update-notification",
		"start", "--experimental-reflection-v2"}, flags...)
	args = append(args, "--", bin, "--addr", p.addr, "--model", "offline")
	p.cmd = exec.Command(npx, args...)
	p.cmd.Dir = dir
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "GENKIT_") || strings.HasPrefix(k, "GENUI_") || k == "XDG_CONFIG_HOME" || k == "HOME" ||
			strings.HasSuffix(strings.ToUpper(k), "_PROXY") {
			continue
		}
		env = append(env, kv)
	}
	p.cmd.Env = append(env, "HOME="+home, "GENKIT_CLI_DISABLE_UPDATE_NOTIFICATIONS=true",
		"npm_config_update_notifier=false", "NO_COLOR=1",
		// Anything still trying the internet fails at once instead.
		"HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "NO_PROXY=127.0.0.1,localhost")
	logFile, err := os.Create(p.log)
	must(t, err)
	defer logFile.Close()
	p.cmd.Stdout, p.cmd.Stderr = logFile, logFile
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	t.Logf("in %s: npx %s", dir, strings.Join(args, " "))
	must(t, p.cmd.Start())
	t.Cleanup(func() {
		pgid := p.cmd.Process.Pid
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		done := make(chan struct{})
		go func() { p.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
		}
		_ = syscall.Kill(-pgid, syscall.SIGKILL) // whatever is left of the group
		<-done
		if t.Failed() || testing.Verbose() {
			out, _ := os.ReadFile(p.log)
			t.Logf("CLI output:\n%s", out)
		}
	})
	return p
}

// onlyRuntime checks that the server runs no reflection server of Genkit's besides this
// package's client: neither Genkit's V2 client (which logs when it connects) nor its V1 HTTP
// server (which logs when it listens, and writes a runtime file into the project).
func (p *cliProcess) onlyRuntime(t *testing.T) {
	t.Helper()
	out, _ := os.ReadFile(p.log)
	for _, s := range []string{"reflection V2: connected", "reflection server listening"} {
		if bytes.Contains(out, []byte(s)) {
			t.Fatalf("a reflection server of Genkit's own started (%q in the output)", s)
		}
	}
	if files, _ := os.ReadDir(filepath.Join(p.dir, ".genkit", "runtimes")); len(files) != 0 {
		t.Fatalf("Genkit's V1 runtime file: %v", files[0].Name())
	}
}

// waitLog waits until the output contains s.
func (p *cliProcess) waitLog(t *testing.T, s string) {
	t.Helper()
	eventually2(t, p, fmt.Sprintf("%q in the output", s), func() bool {
		out, _ := os.ReadFile(p.log)
		return bytes.Contains(out, []byte(s))
	})
}

// eventually2 polls cond for up to cliWait, failing early when the CLI exits.
func eventually2(t *testing.T, p *cliProcess, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(cliWait); !cond(); time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		if p.cmd.ProcessState != nil || syscall.Kill(p.cmd.Process.Pid, 0) != nil {
			t.Fatalf("the CLI exited while waiting for %s", what)
		}
	}
}

// trpc runs a tRPC query of the tools API and decodes its data.
func trpc(t *testing.T, u string, v any) {
	t.Helper()
	res, err := (&http.Client{Timeout: cliWait}).Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	var env struct {
		Result struct{ Data json.RawMessage }
	}
	if err := json.Unmarshal(body, &env); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %s", u, res.Status, body)
	}
	if err := json.Unmarshal(env.Result.Data, v); err != nil {
		t.Fatalf("GET %s: %s: %v", u, body, err)
	}
}

func post(t *testing.T, u string, in, out any) {
	t.Helper()
	b, _ := json.Marshal(in)
	res, err := (&http.Client{Timeout: cliWait}).Post(u, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(body, out); err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %s %s", u, res.Status, body)
	}
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
