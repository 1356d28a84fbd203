package main

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/redistest"
	"github.com/genuiserver/genui/schemas"
)

// With its Redis gone, every transport answers with a retryable error that names the
// store, never the Redis node: its address, its port, the dialer's words.
func TestRedisOutageNamesNoAddressOnAnyTransport(t *testing.T) {
	rdb := redistest.Start(t)
	fake := fakegemini.New()
	defer fake.Close()
	a := startReplica(t, fake, rdb)
	sid := newSession(t, a.base)
	catalog, _ := schemas.SampleCatalog("basic")
	cat := mustMarshal(catalog)
	// A stream to resume once Redis is gone.
	res, err := http.Post(a.base+"/generateUi", "application/json", strings.NewReader(`{"data":{"sessionId":"`+sid+`","conversation":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	stream := res.Header.Get("X-Genkit-Stream-Id")
	io.Copy(io.Discard, res.Body)
	res.Body.Close()

	rdb.Stop()
	leaks := []string{rdb.Addr(), ":" + strconv.Itoa(rdb.Port()), "dial tcp", "connection refused", "redis:"}
	check := func(what, body string, says ...string) {
		t.Helper()
		for _, l := range leaks {
			if strings.Contains(body, l) {
				t.Errorf("%s names %q: %s", what, l, body)
			}
		}
		for _, s := range says {
			if !strings.Contains(body, s) {
				t.Errorf("%s does not say %q: %s", what, s, body)
			}
		}
	}
	post := func(path, body string, header map[string]string) (int, http.Header, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, a.base+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		for k, v := range header {
			req.Header.Set(k, v)
		}
		start := time.Now()
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		t.Logf("%s: %d after %v", path, res.StatusCode, time.Since(start))
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, res.Header, string(b)
	}
	retryable := func(what string, status int, h http.Header, body string) {
		t.Helper()
		if status != 503 || h.Get("Retry-After") == "" {
			t.Errorf("%s: %d, Retry-After %q: %s", what, status, h.Get("Retry-After"), body)
		}
		check(what, body, `"UNAVAILABLE"`, "unavailable for a moment; retry")
	}

	st, h, body := post("/startSession", `{"data":{"protocolVersion":"0.1.0","catalog":`+cat+`}}`, nil)
	retryable("/startSession", st, h, body)
	st, h, body = post("/generateUi", `{"data":{"sessionId":"`+sid+`","conversation":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}}`, nil)
	retryable("/generateUi", st, h, body)
	st, h, body = post("/generateUi", `{"data":{"catalog":`+cat+`,"conversationId":"outage-c1","conversation":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}}`, nil)
	retryable("/generateUi with a conversationId", st, h, body)
	st, h, body = post("/generateUi?after=1", ``, map[string]string{"X-Genkit-Stream-Id": stream})
	retryable("resuming a stream", st, h, body)
	st, h, body = post("/generateA2ui", `{"conversation":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}`, nil)
	retryable("/generateA2ui", st, h, body)
	_, _, body = post("/a2a", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"role":"user","kind":"message","messageId":"m1","parts":[{"kind":"text","text":"hi"}]}}}`, nil)
	check("A2A message/send", body, `"code":-32000`, `"UNAVAILABLE"`, `"retryAfter"`)
	_, _, body = post("/a2a", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"some-task"}}`, nil)
	check("A2A tasks/get", body, `"code":-32000`, `"UNAVAILABLE"`)
	st, h, body = post("/ag-ui", `{"threadId":"t1","runId":"r1","messages":[{"id":"m1","role":"user","content":"hi"}]}`, map[string]string{"Accept": "text/event-stream"})
	retryable("AG-UI", st, h, body)
	res, err = http.Get(a.base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 503 {
		t.Errorf("/readyz: %d %s", res.StatusCode, b)
	}
	check("/readyz", string(b), `"ready":false`, `"store":"the session store is unavailable for a moment; retry"`)

	// WebSocket sessions: /ws new_session, and /session/{id}'s first message.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	ws := "ws" + strings.TrimPrefix(a.base, "http")
	c, _, err := websocket.Dial(ctx, ws+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	got := wsCall(t, c, rpc("new_session", map[string]any{"catalog": catalog}))
	c.Close(websocket.StatusNormalClosure, "")
	check("/ws new_session", mustMarshal(got), `"error"`, "unavailable for a moment; retry")
	c, _, err = websocket.Dial(ctx, ws+"/session/"+sid, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.CloseNow()
	if err := c.Write(ctx, websocket.MessageText, []byte(`{"type":"init","graphId":"generateUi","input":{"conversation":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}}`)); err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			break
		}
		msgs = append(msgs, string(data))
		if strings.Contains(string(data), `"type":"error"`) {
			break
		}
	}
	check("/session/{id}", strings.Join(msgs, "\n"), `"type":"error"`, "unavailable for a moment; retry")
}
