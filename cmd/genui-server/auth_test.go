package main

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/redistest"
	"github.com/genuiserver/genui/schemas"
)

const (
	aliceKey = "alice-key-0123456789abcdef"
	bobKey   = "bob-key-0123456789abcdef"
)

// keysFile writes an --api-keys-file holding alice's and bob's keys.
func keysFile(t *testing.T) string {
	t.Helper()
	line := func(name, key string) string {
		sum := sha256.Sum256([]byte(key))
		return name + ":" + hex.EncodeToString(sum[:]) + "\n"
	}
	p := filepath.Join(t.TempDir(), "keys")
	if err := os.WriteFile(p, []byte("# callers\n"+line("alice", aliceKey)+"\n"+line("bob", bobKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func as(key string) map[string]string { return map[string]string{"Authorization": "Bearer " + key} }

func rpc(method string, params any) string {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	return string(b)
}

func getWith(t *testing.T, u string, header map[string]string) (int, http.Header, string) {
	t.Helper()
	return call(t, http.MethodGet, u, header, "")
}

// Two replicas sharing Redis, with API keys: every route but the open ones needs a key;
// what one caller creates (sessions, streams, conversations, A2A tasks, WebSocket
// sessions) is, to another caller, exactly what an id that never existed is, on either
// replica.
func TestAuthenticationAndTenancy(t *testing.T) {
	rdb := redistest.Start(t)
	fake := fakegemini.New()
	defer fake.Close()
	keys := keysFile(t)
	a := startReplica(t, fake, rdb, "--api-keys-file", keys)
	b := startReplica(t, fake, rdb, "--api-keys-file", keys)
	catalog, _ := schemas.SampleCatalog("basic")
	turn := func(extra string) string {
		return `{"catalog":` + mustMarshal(catalog) + extra + `,"conversation":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}`
	}

	t.Run("no or bad credentials", func(t *testing.T) {
		status, h, body := postJSON(t, a.base+"/generateUi", nil, turn(""))
		if status != 401 || h.Get("WWW-Authenticate") != `Bearer realm="genui"` ||
			body != `{"error":{"status":"UNAUTHENTICATED","message":"credentials required: send Authorization: Bearer <key or token>, or X-API-Key","details":{"field":"Authorization"}}}`+"\n" {
			t.Fatalf("no key: %d %v %q", status, h, body)
		}
		status, h, body = postJSON(t, a.base+"/generateUi", map[string]string{"X-API-Key": "not-a-key-0123456789"}, turn(""))
		if status != 401 || h.Get("WWW-Authenticate") != `Bearer realm="genui", error="invalid_token"` || !strings.Contains(body, `"invalid credentials: unknown API key"`) || strings.Contains(body, "not-a-key") {
			t.Fatalf("bad key: %d %v %s", status, h, body)
		}
		status, _, body = postJSON(t, a.base+"/generateUi", map[string]string{"Authorization": "Basic " + aliceKey}, turn(""))
		if status != 401 || !strings.Contains(body, "the Authorization scheme must be Bearer") {
			t.Fatalf("Basic: %d %s", status, body)
		}
		// JSON-RPC routes answer with a JSON-RPC error object as well.
		for _, route := range []string{"/a2a", "/a2a/v1", "/"} {
			status, _, body = postJSON(t, a.base+route, nil, rpc("message/send", map[string]any{}))
			if status != 401 || body != `{"jsonrpc":"2.0","id":null,"error":{"code":-31401,"message":"credentials required: send Authorization: Bearer <key or token>, or X-API-Key","data":{"status":"UNAUTHENTICATED","field":"Authorization"}}}` {
				t.Fatalf("%s: %d %s", route, status, body)
			}
		}
		for _, route := range []string{"/ag-ui", "/startSession", "/generateA2ui", "/generateUi/cancel"} {
			if status, _, _ := postJSON(t, a.base+route, nil, `{}`); status != 401 {
				t.Fatalf("%s: %d", route, status)
			}
		}
		if status, _, _ := getWith(t, a.base+"/catalogs", nil); status != 401 {
			t.Fatalf("/catalogs: %d", status)
		}
		// A WebSocket upgrade without a credential is refused before the upgrade.
		for _, path := range []string{"/ws", "/session/some-session-1"} {
			_, res, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(a.base, "http")+path, nil)
			if err == nil || res == nil || res.StatusCode != 401 {
				t.Fatalf("%s without a credential: %v %v", path, res, err)
			}
			b, _ := io.ReadAll(res.Body)
			if !strings.Contains(string(b), `"UNAUTHENTICATED"`) {
				t.Fatalf("%s: %s", path, b)
			}
		}
		// CORS preflights need no credentials.
		req, _ := http.NewRequest(http.MethodOptions, a.base+"/generateUi", nil)
		req.Header.Set("Origin", "https://app.example")
		req.Header.Set("Access-Control-Request-Method", "POST")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode == 401 {
			t.Fatal("a preflight was refused for lack of credentials")
		}
	})

	t.Run("open routes", func(t *testing.T) {
		for _, route := range []string{"/healthz", "/readyz", "/metrics", "/.well-known/agent-card.json", "/a2a", "/a2a/.well-known/agent-card.json", "/"} {
			if status, _, _ := getWith(t, a.base+route, nil); status != 200 {
				t.Fatalf("%s: %d", route, status)
			}
		}
		_, _, card := getWith(t, a.base+"/.well-known/agent-card.json", nil)
		if !strings.Contains(card, `"securitySchemes"`) || !strings.Contains(card, `"X-API-Key"`) || !strings.Contains(card, `"Bearer"`) {
			t.Fatalf("the card advertises no security schemes: %s", card)
		}
	})

	t.Run("request ids and security headers", func(t *testing.T) {
		_, h, _ := getWith(t, a.base+"/healthz", map[string]string{"X-Request-Id": "trace-abc-123"})
		if h.Get("X-Request-Id") != "trace-abc-123" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Content-Security-Policy") != "frame-ancestors 'none'" {
			t.Fatalf("%v", h)
		}
		// The playground's pages also get the headers that matter to a page.
		if _, h, _ := getWith(t, a.base+"/", nil); h.Get("X-Frame-Options") != "DENY" || h.Get("Referrer-Policy") != "no-referrer" || h.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatalf("the page: %v", h)
		}
		_, h, _ = getWith(t, a.base+"/healthz", map[string]string{"X-Request-Id": "has spaces in it"})
		if id := h.Get("X-Request-Id"); len(id) != 22 {
			t.Fatalf("a bad incoming id was kept: %q", id)
		}
		status, _, _ := postJSON(t, a.base+"/generateUi", map[string]string{"Authorization": "Bearer " + aliceKey, "X-Request-Id": "turn-req-42"}, turn(""))
		if status != 200 {
			t.Fatal(status)
		}
		var logs, line string
		for deadline := time.Now().Add(5 * time.Second); line == "" && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			logs = logsOf(a)
			for _, l := range strings.Split(logs, "\n") {
				if strings.Contains(l, "msg=turn") && strings.Contains(l, "request_id=turn-req-42") {
					line = l
				}
			}
		}
		if line == "" || !strings.Contains(line, "caller=key:alice") || !strings.Contains(line, "route=/generateUi") || !strings.Contains(line, "tokensIn=") || !strings.Contains(line, "status=ok") {
			t.Fatalf("no turn line with the request id, caller and route:\n%s", logs)
		}
		if strings.Contains(logs, aliceKey) || strings.Contains(logs, bobKey) || strings.Contains(logs, `"hi"`) {
			t.Fatalf("the logs hold a key or the conversation:\n%s", logs)
		}
	})

	t.Run("sessions", func(t *testing.T) {
		status, _, body := postJSON(t, a.base+"/startSession", as(aliceKey), `{"protocolVersion":"0.1.0","catalog":`+mustMarshal(catalog)+`}`)
		var sid struct{ Result string }
		if status != 200 || json.Unmarshal([]byte(body), &sid) != nil || sid.Result == "" {
			t.Fatalf("startSession: %d %s", status, body)
		}
		req := func(id string) string {
			return `{"sessionId":"` + id + `","conversation":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}`
		}
		if status, _, body := postJSON(t, b.base+"/generateUi", as(aliceKey), req(sid.Result)); status != 200 {
			t.Fatalf("alice on B: %d %s", status, body)
		}
		s1, _, theirs := postJSON(t, b.base+"/generateUi", as(bobKey), req(sid.Result))
		s2, _, unknown := postJSON(t, b.base+"/generateUi", as(bobKey), req("AAAAAAAAAAAAAAAAAAAAAA"))
		if s1 != 404 || s1 != s2 || theirs != unknown {
			t.Fatalf("bob with alice's session: %d %s; with an unknown one: %d %s", s1, theirs, s2, unknown)
		}
	})

	t.Run("streams", func(t *testing.T) {
		fake.Enqueue(fakegemini.Reply{Chunks: fakegemini.TextChunks("one two three four five six", 6), Pacing: 150 * time.Millisecond})
		req, _ := http.NewRequest(http.MethodPost, a.base+"/generateUi", strings.NewReader(turn("")))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+aliceKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		stream := res.Header.Get("X-Genkit-Stream-Id")
		if _, err := bufio.NewReader(res.Body).ReadString('\n'); err != nil || stream == "" {
			t.Fatalf("first line: %v, stream %q", err, stream)
		}
		resume := func(key, id string) (int, string) {
			s, _, body := postJSON(t, b.base+"/generateUi", map[string]string{"Authorization": "Bearer " + key, "X-Genkit-Stream-Id": id}, `{}`)
			return s, body
		}
		s1, theirs := resume(bobKey, stream)
		s2, never := resume(bobKey, "BBBBBBBBBBBBBBBBBBBBBB")
		if s1 != http.StatusNoContent || s1 != s2 || theirs != never {
			t.Fatalf("bob resuming alice's stream: %d %s; one that never existed: %d %s", s1, theirs, s2, never)
		}
		c1, _, cancelTheirs := postJSON(t, b.base+"/generateUi/cancel", as(bobKey), `{"streamId":"`+stream+`"}`)
		c2, _, cancelNever := postJSON(t, b.base+"/generateUi/cancel", as(bobKey), `{"streamId":"BBBBBBBBBBBBBBBBBBBBBB"}`)
		if c1 != 404 || c1 != c2 || cancelTheirs != cancelNever {
			t.Fatalf("bob cancelling alice's stream: %d %s; one that never existed: %d %s", c1, cancelTheirs, c2, cancelNever)
		}
		// Alice's stream was not cancelled: she reads it to its result on B.
		s, body := resume(aliceKey, stream)
		if s != 200 || !strings.Contains(body, `"finishReason":"stop"`) {
			t.Fatalf("alice resuming on B: %d %s", s, body)
		}
	})

	t.Run("conversations", func(t *testing.T) {
		n := len(fake.Requests())
		if s, _, body := postJSON(t, a.base+"/generateUi", as(aliceKey), turn(`,"conversationId":"shared-name-1"`)); s != 200 {
			t.Fatalf("alice: %d %s", s, body)
		}
		if s, _, body := postJSON(t, b.base+"/generateUi", as(bobKey), turn(`,"conversationId":"shared-name-1"`)); s != 200 {
			t.Fatalf("bob: %d %s", s, body)
		}
		reqs := fake.Requests()[n:]
		if len(reqs) != 2 || len(reqs[1].Contents()) != 1 {
			t.Fatalf("bob's turn read alice's conversation: %d requests, the second with %d contents", len(reqs), len(reqs[len(reqs)-1].Contents()))
		}
	})

	t.Run("A2A tasks", func(t *testing.T) {
		fake.Enqueue(fakegemini.Respond(fakegemini.Text("Hello.")))
		msg := map[string]any{"message": map[string]any{"role": "user", "kind": "message", "messageId": "m-1", "parts": []any{map[string]any{"kind": "text", "text": "hi"}}}}
		status, _, body := postJSON(t, a.base+"/a2a", as(aliceKey), rpc("message/send", msg))
		var res struct {
			Result struct{ ID string } `json:"result"`
		}
		if status != 200 || json.Unmarshal([]byte(body), &res) != nil || res.Result.ID == "" {
			t.Fatalf("message/send: %d %s", status, body)
		}
		if _, _, got := postJSON(t, b.base+"/a2a", as(aliceKey), rpc("tasks/get", map[string]any{"id": res.Result.ID})); !strings.Contains(got, `"result"`) {
			t.Fatalf("alice's tasks/get on B: %s", got)
		}
		_, _, theirs := postJSON(t, b.base+"/a2a", as(bobKey), rpc("tasks/get", map[string]any{"id": res.Result.ID}))
		_, _, never := postJSON(t, b.base+"/a2a", as(bobKey), rpc("tasks/get", map[string]any{"id": "00000000-0000-0000-0000-000000000000"}))
		strip := func(s string) string {
			return strings.NewReplacer(res.Result.ID, "ID", "00000000-0000-0000-0000-000000000000", "ID").Replace(stripTimestamp(s))
		}
		if !strings.Contains(theirs, `"code":-32001`) || strip(theirs) != strip(never) {
			t.Fatalf("bob's tasks/get of alice's task:\n%s\nof one that never existed:\n%s", theirs, never)
		}
	})

	t.Run("WebSocket sessions", func(t *testing.T) {
		dial := func(base, key string) *websocket.Conn {
			c, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(base, "http")+"/ws?access_token="+key, nil)
			if err != nil {
				t.Fatal(err)
			}
			return c
		}
		call := func(c *websocket.Conn, body string) map[string]any { return wsCall(t, c, body) }
		ca := dial(a.base, aliceKey)
		res := call(ca, rpc("new_session", map[string]any{"catalog": catalog}))
		sid, _ := res["result"].(map[string]any)["session_id"].(string)
		if sid == "" {
			t.Fatalf("new_session: %v", res)
		}
		ca.Close(websocket.StatusNormalClosure, "")
		cb := dial(b.base, bobKey)
		defer cb.Close(websocket.StatusNormalClosure, "")
		theirs := call(cb, rpc("load_session", map[string]any{"session_id": sid}))
		never := call(cb, rpc("load_session", map[string]any{"session_id": "never-existed-123"}))
		te, _ := theirs["error"].(map[string]any)
		ne, _ := never["error"].(map[string]any)
		if te == nil || ne == nil || te["code"] != ne["code"] || te["code"] != float64(-32001) {
			t.Fatalf("bob's load_session of alice's session: %v; of one that never existed: %v", theirs, never)
		}
	})
}

// stripTimestamp drops the timestamp A2A errors carry in their data.
func stripTimestamp(s string) string {
	var m map[string]any
	if json.Unmarshal([]byte(s), &m) != nil {
		return s
	}
	b, _ := json.Marshal(dropKey(m, "timestamp"))
	return string(b)
}

func dropKey(v any, key string) any {
	switch x := v.(type) {
	case map[string]any:
		delete(x, key)
		for k, e := range x {
			x[k] = dropKey(e, key)
		}
	case []any:
		for i, e := range x {
			x[i] = dropKey(e, key)
		}
	}
	return v
}

// Over a limit, every transport says so and when to retry: HTTP 429 with Retry-After,
// JSON-RPC errors with retryAfter in data.
func TestLimits(t *testing.T) {
	rdb := redistest.Start(t)
	fake := fakegemini.New()
	defer fake.Close()
	s := startReplica(t, fake, rdb, "--api-keys-file", keysFile(t), "--rate-limit", "0.01", "--rate-burst", "1")
	catalog, _ := schemas.SampleCatalog("basic")
	body := `{"catalog":` + mustMarshal(catalog) + `,"conversation":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}`
	if status, _, got := postJSON(t, s.base+"/generateUi", as(aliceKey), body); status != 200 {
		t.Fatalf("first turn: %d %s", status, got)
	}
	status, h, got := postJSON(t, s.base+"/generateUi", as(aliceKey), body)
	if status != 429 || h.Get("Retry-After") == "" || !strings.Contains(got, `"status":"RESOURCE_EXHAUSTED"`) || !strings.Contains(got, `"limit":"rate"`) {
		t.Fatalf("second turn: %d %v %s", status, h, got)
	}
	// Another caller has a bucket of its own.
	if status, _, got := postJSON(t, s.base+"/generateUi", as(bobKey), body); status != 200 {
		t.Fatalf("bob's first turn: %d %s", status, got)
	}
	msg := map[string]any{"message": map[string]any{"role": "user", "kind": "message", "messageId": "m-2", "parts": []any{map[string]any{"kind": "text", "text": "hi"}}}}
	_, _, got = postJSON(t, s.base+"/a2a", as(aliceKey), rpc("message/send", msg))
	if !strings.Contains(got, `"code":-32000`) || !strings.Contains(got, `"retryAfter"`) {
		t.Fatalf("A2A over the limit: %s", got)
	}
	c, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(s.base, "http")+"/ws", &websocket.DialOptions{HTTPHeader: http.Header{"X-Api-Key": {aliceKey}}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(websocket.StatusNormalClosure, "")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	send := func(body string) {
		if err := c.Write(ctx, websocket.MessageText, []byte(body)); err != nil {
			t.Fatal(err)
		}
	}
	send(rpc("new_session", map[string]any{"catalog": catalog}))
	_, data, err := c.Read(ctx)
	var ns struct {
		Result struct {
			SessionID string `json:"session_id"`
		}
	}
	if err != nil || json.Unmarshal(data, &ns) != nil || ns.Result.SessionID == "" {
		t.Fatalf("new_session: %s %v", data, err)
	}
	send(strings.Replace(rpc("prompt", map[string]any{"session_id": ns.Result.SessionID, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}}), `"id":1`, `"id":2`, 1))
	for {
		_, data, err = c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), `"id":2`) {
			break
		}
	}
	if !strings.Contains(string(data), `"code":-32005`) || !strings.Contains(string(data), `"retryAfter"`) {
		t.Fatalf("ws prompt over the limit: %s", data)
	}
	_, _, metrics := getWith(t, s.base+"/metrics", nil)
	if !strings.Contains(metrics, `genui_limited_total{limit="rate"} 3`) || !strings.Contains(metrics, `genui_http_requests_total{code="429",route="/generateUi",transport="ndjson"} 1`) {
		t.Fatalf("metrics:\n%s", grepLines(metrics, "genui_limited_total", "genui_http_requests_total"))
	}
}

func grepLines(s string, prefixes ...string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		for _, p := range prefixes {
			if strings.HasPrefix(l, p) {
				out = append(out, l)
			}
		}
	}
	return fmt.Sprint(strings.Join(out, "\n"))
}

// logsOf reads what a replica logged so far, under the lock its writer takes.
func logsOf(r *replica) string { return r.cmd.Stderr.(*syncWriter).String() }
