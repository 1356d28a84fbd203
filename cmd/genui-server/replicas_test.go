package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/redistest"
	"github.com/genuiserver/genui/schemas"
)

var (
	buildOnce sync.Once
	binPath   string
	buildErr  error
)

// binary builds the server once per test run.
func binary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped under -short: builds and starts the server binary")
	}
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "genui-server-bin")
		if err != nil {
			buildErr = err
			return
		}
		binPath = filepath.Join(dir, "genui-server")
		if out, err := exec.Command("go", "build", "-o", binPath, ".").CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return binPath
}

type replica struct {
	base string
	cmd  *exec.Cmd
	logs *strings.Builder
}

// startReplica runs the server binary on a free port against the fake Gemini and a
// Redis of any topology.
func startReplica(t *testing.T, fake *fakegemini.Server, rdb interface{ URL() string }, args ...string) *replica {
	t.Helper()
	flag := "--redis-url"
	switch rdb.(type) {
	case *redistest.Cluster:
		flag = "--redis-cluster-url"
	case *redistest.Sentinels:
		flag = "--redis-sentinel-url"
	}
	return startServer(t, []string{"GOOGLE_GEMINI_BASE_URL=" + fake.URL(), "GEMINI_API_KEY=k"}, "/readyz",
		append([]string{"--model", "googleai/gemini-2.5-flash", flag, rdb.URL()}, args...)...)
}

// topologies runs f on each Redis topology: one node, a cluster, a Sentinel-managed
// primary.
func topologies(t *testing.T, f func(t *testing.T, rdb interface{ URL() string })) {
	t.Run("single", func(t *testing.T) { f(t, redistest.Start(t)) })
	t.Run("cluster", func(t *testing.T) { f(t, redistest.StartCluster(t, 3, 1)) })
	t.Run("sentinel", func(t *testing.T) { f(t, redistest.StartSentinels(t)) })
}

type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// String returns what was written so far (w is a strings.Builder or a bytes.Buffer).
func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.(fmt.Stringer).String()
}

func postJSON(t *testing.T, u string, header map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	return call(t, http.MethodPost, u, header, body)
}

// call sends a request (a JSON body, unless body is empty) and returns its answer.
func call(t *testing.T, method, u string, header map[string]string, body string) (int, http.Header, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, u, rd)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b)
}

func newSession(t *testing.T, base string) string {
	t.Helper()
	catalog, _ := schemas.SampleCatalog("basic")
	status, _, body := postJSON(t, base+"/startSession", nil, `{"data":{"protocolVersion":"0.1.0","catalog":`+mustMarshal(catalog)+`}}`)
	if status != 200 {
		t.Fatalf("startSession: %d %s", status, body)
	}
	var out struct{ Result string }
	_ = json.Unmarshal([]byte(body), &out)
	return out.Result
}

var textSurface = map[string]any{"surfaceId": "s1", "definition": map[string]any{"root": "t", "widgets": []any{
	map[string]any{"id": "t", "widget": map[string]any{"Text": map[string]any{"text": "hi"}}}}}}

func threeEvents() fakegemini.Reply {
	return fakegemini.Reply{
		Chunks: []fakegemini.Chunk{fakegemini.Text("one"), fakegemini.FunctionCall("addOrUpdateSurface", textSurface), fakegemini.Text("two")},
		Usage:  &fakegemini.Usage{PromptTokenCount: 7, CandidatesTokenCount: 3, TotalTokenCount: 10},
	}
}

func TestReplicasShareSessionsAndStreamsThroughRedis(t *testing.T) {
	topologies(t, func(t *testing.T, rdb interface{ URL() string }) {
		fake := fakegemini.New(fakegemini.WithPacing(400 * time.Millisecond))
		defer fake.Close()
		a := startReplica(t, fake, rdb)
		b := startReplica(t, fake, rdb)

		id := newSession(t, a.base)
		body := `{"data":{"sessionId":"` + id + `","conversation":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}}`

		// A session created on A serves a turn on B; this is also the uninterrupted reference.
		fake.Enqueue(threeEvents())
		status, _, want := postJSON(t, b.base+"/generateUi?stream=true", nil, body)
		if status != 200 || !strings.Contains(want, `"toolRequest"`) || !strings.Contains(want, `data: {"result"`) {
			t.Fatalf("turn on B with A's session: %d %s", status, want)
		}

		// A stream started on A, resumed on B while A is still generating.
		fake.Enqueue(threeEvents())
		res, err := http.Post(a.base+"/generateUi?stream=true", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		sid := res.Header.Get("X-Genkit-Stream-Id")
		first, _ := bufio.NewReader(res.Body).ReadString('\n')
		res.Body.Close()
		if !strings.Contains(first, `"one"`) {
			t.Fatalf("first event %q", first)
		}
		status, h, got := postJSON(t, b.base+"/generateUi?stream=true", map[string]string{"X-Genkit-Stream-Id": sid}, body)
		if status != 200 || h.Get("X-Genkit-Stream-Id") != sid || got != want {
			t.Fatalf("resumed on B: %d\n%s\nwant:\n%s", status, got, want)
		}
		if n := len(fake.Requests()); n != 2 {
			t.Fatalf("%d model calls for two turns", n)
		}
		// NDJSON offsets work across replicas too.
		status, _, tail := postJSON(t, a.base+"/generateUi?after=3&streamId="+sid, nil, "")
		if status != 200 || !strings.HasPrefix(tail, `{"type":"result"`) || strings.Count(tail, "\n") != 1 {
			t.Fatalf("after=3: %d %s", status, tail)
		}
	})
}

func TestRedisOutageAnswers503AndRecovers(t *testing.T) {
	rdb := redistest.Start(t)
	fake := fakegemini.New()
	defer fake.Close()
	a := startReplica(t, fake, rdb)
	newSession(t, a.base)

	rdb.Stop()
	catalog, _ := schemas.SampleCatalog("basic")
	status, hdr, body := postJSON(t, a.base+"/startSession", nil, `{"data":{"protocolVersion":"0.1.0","catalog":`+mustMarshal(catalog)+`}}`)
	if status != 503 || !strings.Contains(body, `"status":"UNAVAILABLE"`) || !strings.Contains(body, "the session store is unavailable for a moment; retry") ||
		hdr.Get("Retry-After") == "" || strings.Contains(body, "127.0.0.1") || strings.Contains(body, rdb.Addr()) {
		t.Fatalf("startSession while Redis is down: %d %v %s", status, hdr, body)
	}
	status, _, body = postJSON(t, a.base+"/generateUi", nil, `{"data":{"catalog":`+mustMarshal(catalog)+`,"conversation":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}}`)
	if status != 503 || !strings.Contains(body, `"status":"UNAVAILABLE"`) {
		t.Fatalf("generateUi while Redis is down: %d %s", status, body)
	}
	res, err := http.Get(a.base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 503 {
		t.Fatalf("readyz while Redis is down: %d", res.StatusCode)
	}

	rdb.Restart()
	deadline := time.Now().Add(15 * time.Second)
	for {
		status, _, body = postJSON(t, a.base+"/startSession", nil, `{"data":{"protocolVersion":"0.1.0","catalog":`+mustMarshal(catalog)+`}}`)
		if status == 200 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no recovery after Redis came back: %d %s", status, body)
		}
		time.Sleep(200 * time.Millisecond)
	}
	waitReady(t, a.base)
}

func TestReplicaKilledMidStream(t *testing.T) {
	rdb := redistest.Start(t)
	fake := fakegemini.New(fakegemini.WithPacing(2 * time.Second))
	defer fake.Close()
	a := startReplica(t, fake, rdb)
	b := startReplica(t, fake, rdb)
	id := newSession(t, a.base)
	body := `{"data":{"sessionId":"` + id + `","conversation":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}}`

	fake.Enqueue(threeEvents())
	res, err := http.Post(a.base+"/generateUi", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	sid := res.Header.Get("X-Genkit-Stream-Id")
	first, _ := bufio.NewReader(res.Body).ReadString('\n')
	if err := a.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, b.base+"/generateUi", strings.NewReader(""))
	req.Header.Set("X-Genkit-Stream-Id", sid)
	start := time.Now()
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	got, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		t.Fatalf("after %v: %v", time.Since(start), err)
	}
	lines := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
	if lines[0]+"\n" != first || !strings.HasPrefix(lines[len(lines)-1], `{"type":"error","error":{"status":"UNAVAILABLE","message":"the server producing this stream stopped`) {
		t.Fatalf("resumed on B after A died:\n%s", got)
	}
	t.Logf("producer loss detected %v after resuming", time.Since(start))
}

func TestMain(m *testing.M) {
	code := m.Run()
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
	os.Exit(code)
}

// TestA2UISessionsAndStreamsAcrossReplicas starts an A2UI session with an inline catalog on
// one replica and runs its turn on another (which compiles the catalog from Redis), then
// resumes the A2UI stream on the first.
func TestA2UISessionsAndStreamsAcrossReplicas(t *testing.T) {
	topologies(t, func(t *testing.T, rdb interface{ URL() string }) {
		fake := fakegemini.New(fakegemini.WithPacing(50 * time.Millisecond))
		defer fake.Close()
		a := startReplica(t, fake, rdb)
		b := startReplica(t, fake, rdb)

		const id = "https://example.com/catalogs/notes.json"
		inline := `{"catalogId":"` + id + `","components":{"Note":{"type":"object","properties":{"id":{"type":"string"},"component":{"const":"Note"},"text":{"type":"string"}},"required":["id","component","text"],"additionalProperties":false}}}`
		status, _, body := postJSON(t, a.base+"/startSession", nil, `{"protocolVersion":"0.1.0","a2uiClientCapabilities":{"v0.9":{"supportedCatalogIds":["`+id+`"],"inlineCatalogs":[`+inline+`]}}}`)
		var session struct{ Result string }
		if status != 200 || json.Unmarshal([]byte(body), &session) != nil {
			t.Fatalf("startSession: %d %s", status, body)
		}
		text := "```a2ui\n" +
			`{"createSurface":{"surfaceId":"n","catalogId":"` + id + `"}}` + "\n" +
			`{"updateComponents":{"surfaceId":"n","components":[{"id":"root","component":"Note","text":"remember the milk"}]}}` + "\n```"
		fake.Enqueue(fakegemini.Reply{Chunks: fakegemini.TextChunks(text, 4)})
		turn := `{"sessionId":"` + session.Result + `","conversation":[{"role":"user","parts":[{"type":"text","text":"a note"}]}]}`
		status, h, got := postJSON(t, b.base+"/generateA2ui", nil, turn)
		if status != 200 || !strings.Contains(got, `{"version":"v0.9","updateComponents":{"surfaceId":"n","components":[{"component":"Note","id":"root","text":"remember the milk"}]}}`) ||
			!strings.Contains(got, `"modelCalls":1`) {
			t.Fatalf("turn on B with A's A2UI session: %d\n%s", status, got)
		}
		status, _, again := postJSON(t, a.base+"/generateA2ui", map[string]string{"X-Genkit-Stream-Id": h.Get("X-Genkit-Stream-Id")}, "")
		if status != 200 || again != got {
			t.Fatalf("resumed on A: %d\n%s\nwant:\n%s", status, again, got)
		}
	})
}

// A conversation the server holds is shared by the replicas: a turn on A, its
// continuation on B the moment A's result line arrives, a concurrent turn refused
// wherever it lands, and the conversation gone after its TTL.
func TestHeldConversationsAcrossReplicas(t *testing.T) {
	topologies(t, func(t *testing.T, rdb interface{ URL() string }) {
		fake := fakegemini.New()
		defer fake.Close()
		a := startReplica(t, fake, rdb, "--conversation-ttl", "3s")
		b := startReplica(t, fake, rdb, "--conversation-ttl", "3s")
		catalog, _ := schemas.SampleCatalog("basic")
		body := func(conv string) string {
			return `{"catalog":` + mustMarshal(catalog) + `,"conversationId":"replica-conv-1","clientTools":[{"name":"getLocation"}],"conversation":` + conv + `}`
		}
		result := func(id string) string {
			return `[{"role":"user","parts":[{"type":"toolResult","callId":"` + id + `","name":"getLocation","output":{"city":"Berlin"}}]}]`
		}

		// The call, on A, read line by line: the next request goes to B as soon as the
		// result line is in, before A's response has ended.
		fake.Enqueue(fakegemini.Respond(fakegemini.Text("Looking."), fakegemini.FunctionCall("getLocation", nil)))
		fake.Enqueue(fakegemini.Respond(fakegemini.Text("Berlin.")))
		res, err := http.Post(a.base+"/generateUi", "application/json", strings.NewReader(body(`[{"role":"user","parts":[{"type":"text","text":"where am I?"}]}]`)))
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		rd := bufio.NewReader(res.Body)
		var callID string
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatalf("A's stream ended without a result: %v", err)
			}
			var ev struct{ Type, CallID string }
			_ = json.Unmarshal([]byte(line), &ev)
			if ev.Type == "toolCall" {
				callID = ev.CallID
			}
			if ev.Type == "result" {
				break
			}
		}
		status, _, got := postJSON(t, b.base+"/generateUi", nil, body(result(callID)))
		if status != 200 || !strings.Contains(got, `"text":"Berlin."`) || !strings.Contains(got, `"finishReason":"stop"`) {
			t.Fatalf("the continuation on B: %d %s", status, got)
		}
		contents := fake.Requests()[1].Contents()
		if len(contents) != 3 || contents[1].Parts[1].FunctionCall == nil || contents[2].Parts[0].FunctionResponse == nil {
			t.Fatalf("B's model read %+v", contents)
		}

		// A turn running on A holds the conversation for B too.
		fake.Enqueue(fakegemini.Reply{Chunks: []fakegemini.Chunk{fakegemini.Text("slow")}, Latency: time.Second})
		done := make(chan string, 1)
		go func() {
			_, _, got := postJSON(t, a.base+"/generateUi", nil, body(`[{"role":"user","parts":[{"type":"text","text":"slowly"}]}]`))
			done <- got
		}()
		if err := fake.WaitRequests(context.Background(), 3); err != nil {
			t.Fatal(err)
		}
		status, _, got = postJSON(t, b.base+"/generateUi", nil, body(`[{"role":"user","parts":[{"type":"text","text":"meanwhile"}]}]`))
		if status != 409 || !strings.Contains(got, `"field":"conversationId"`) {
			t.Fatalf("a concurrent turn on B: %d %s", status, got)
		}
		if got := <-done; !strings.Contains(got, `"finishReason":"stop"`) {
			t.Fatalf("the slow turn: %s", got)
		}

		// After the TTL the conversation is gone: its old call is unknown.
		time.Sleep(3500 * time.Millisecond)
		status, _, got = postJSON(t, b.base+"/generateUi", nil, body(result(callID)))
		if status != 400 || !strings.Contains(got, "no call") {
			t.Fatalf("a result after expiry: %d %s", status, got)
		}
	})
}

// A2A tasks and contexts are shared by the replicas: a task started on A is read and
// resubscribed on B, after A's stream dropped mid-turn; its context continues on B.
func TestA2ATasksAcrossReplicas(t *testing.T) {
	topologies(t, func(t *testing.T, rdb interface{ URL() string }) {
		fake := fakegemini.New()
		defer fake.Close()
		a := startReplica(t, fake, rdb)
		b := startReplica(t, fake, rdb)
		form := "Here is the form.\n```a2ui\n" +
			`{"createSurface":{"surfaceId":"form","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}` + "\n" +
			`{"updateComponents":{"surfaceId":"form","components":[` + "\n" +
			`{"id":"root","component":"Column","children":["title","submit"]},` + "\n" +
			`{"id":"title","component":"Text","text":"Join us"},` + "\n" +
			`{"id":"submit","component":"Button","child":"label","action":{"event":{"name":"join"}}},` + "\n" +
			`{"id":"label","component":"Text","text":"Join"}` + "\n" + "]}}\n```\n"
		rpcBody := func(method string, params any) string {
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
			return string(b)
		}
		ext := map[string]string{"X-A2A-Extensions": "https://a2ui.org/a2a-extension/a2ui/v0.9"}
		msg := func(text, contextID string) map[string]any {
			m := map[string]any{"role": "user", "kind": "message", "messageId": fmt.Sprint(time.Now().UnixNano()), "parts": []any{map[string]any{"kind": "text", "text": text}}}
			if contextID != "" {
				m["contextId"] = contextID
			}
			return m
		}

		// A stream on A, dropped after its first events while the model still writes.
		fake.Enqueue(fakegemini.Reply{Chunks: fakegemini.TextChunks(form, 12), Pacing: 100 * time.Millisecond})
		req, _ := http.NewRequest(http.MethodPost, a.base+"/a2a", strings.NewReader(rpcBody("message/stream", map[string]any{"message": msg("a form", "")})))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-A2A-Extensions", ext["X-A2A-Extensions"])
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		rd := bufio.NewReader(res.Body)
		var first []string
		for len(first) < 3 {
			line, err := rd.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(line, "data: ") {
				first = append(first, strings.TrimPrefix(line, "data: "))
			}
		}
		res.Body.Close()
		var task struct {
			Result struct{ ID, ContextID string } `json:"result"`
		}
		_ = json.Unmarshal([]byte(first[0]), &task)
		if task.Result.ID == "" {
			t.Fatalf("first event %s", first[0])
		}

		// B resubscribes: the task, then the turn from its start (read from the shared
		// stream log), then the final status.
		status, _, got := postJSON(t, b.base+"/a2a", ext, rpcBody("tasks/resubscribe", map[string]any{"id": task.Result.ID}))
		if status != 200 || !strings.Contains(got, `"final":true`) || !strings.Contains(got, `"input-required"`) ||
			strings.Count(got, `"createSurface"`) != 1 || !strings.Contains(got, `"id":"label"`) {
			t.Fatalf("resubscribed on B: %d\n%s\nhad:\n%s", status, got, strings.Join(first, ""))
		}
		status, _, got = postJSON(t, b.base+"/a2a", nil, rpcBody("tasks/get", map[string]any{"id": task.Result.ID}))
		if status != 200 || !strings.Contains(got, `"state":"input-required"`) {
			t.Fatalf("tasks/get on B: %d %s", status, got)
		}
		// The context continues on B: the model reads the earlier turn.
		fake.Enqueue(fakegemini.Respond(fakegemini.Text("Thanks.")))
		status, _, got = postJSON(t, b.base+"/a2a", ext, rpcBody("message/stream", map[string]any{"message": msg("thanks", task.Result.ContextID)}))
		if status != 200 || !strings.Contains(got, `"completed"`) {
			t.Fatalf("the context on B: %d %s", status, got)
		}
		contents := fake.Requests()[1].Contents()
		if len(contents) != 3 || contents[0].Parts[0].Text != "a form" || contents[1].Role != "model" || !strings.Contains(fmt.Sprint(contents[1].Parts), "createSurface") {
			t.Fatalf("B's model read %+v", contents)
		}
	})
}
