package main

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/golang-jwt/jwt/v5"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/redistest"
	"github.com/genuiserver/genui/metrics"
	"github.com/genuiserver/genui/schemas"
)

// freeAddr returns a loopback address nothing listens on, for a server to take.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

// startServer runs the server binary on a free loopback port with args (and env added to
// the environment), and waits until ready (a path, /readyz or /healthz) answers 200. It
// sets no model: args name one.
func startServer(t *testing.T, env []string, ready string, args ...string) *replica {
	t.Helper()
	addr := freeAddr(t)
	cmd := exec.Command(binary(t), append([]string{"--addr", addr, "--drain-timeout", "1s"}, args...)...)
	cmd.Env = append(os.Environ(), env...)
	logs := &strings.Builder{}
	cmd.Stderr = &syncWriter{w: logs}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("server %s logs:\n%s", addr, logs.String())
		}
	})
	r := &replica{base: "http://" + addr, cmd: cmd, logs: logs}
	waitOK(t, r.base+ready)
	return r
}

// turnBody is a /generateUi request with catalog c (JSON), a text, and extra fields
// (`,"conversationId":"…"`).
func turnBody(c, text, extra string) string {
	return `{"catalog":` + c + extra + `,"conversation":[{"role":"user","parts":[{"type":"text","text":"` + text + `"}]}]}`
}

// limited checks an answer refused by limit: 429, a Retry-After of whole seconds, and the
// JSON error naming the limit with the same retryAfter.
func limited(t *testing.T, what string, status int, h http.Header, body, limit string) {
	t.Helper()
	var e struct {
		Error struct {
			Status  string
			Message string
			Details struct {
				Limit      string
				RetryAfter int
			}
		}
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || status != 429 || h.Get("Content-Type") != "application/json" {
		t.Fatalf("%s: %d %v %s", what, status, h, body)
	}
	ra, err := strconv.Atoi(h.Get("Retry-After"))
	if err != nil || ra < 1 || e.Error.Status != "RESOURCE_EXHAUSTED" || e.Error.Details.Limit != limit || e.Error.Details.RetryAfter != ra || e.Error.Message == "" {
		t.Fatalf("%s: want a %q limit with Retry-After; got Retry-After %q, %s", what, limit, h.Get("Retry-After"), body)
	}
}

// openStream starts a streamed turn and reads its first line; the caller reads the rest.
func openStream(t *testing.T, base string, header map[string]string, body string) (*http.Response, *bufio.Reader) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, base+"/generateUi", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { res.Body.Close() })
	rd := bufio.NewReader(res.Body)
	if line, err := rd.ReadString('\n'); err != nil || res.StatusCode != 200 {
		t.Fatalf("the stream: %d %q %v", res.StatusCode, line, err)
	}
	return res, rd
}

// finish reads a stream to its end and checks it ended with its result.
func finish(t *testing.T, rd *bufio.Reader) {
	t.Helper()
	rest, err := io.ReadAll(rd)
	lines := strings.Split(strings.TrimSpace(string(rest)), "\n")
	if err != nil || !strings.HasPrefix(lines[len(lines)-1], `{"type":"result"`) {
		t.Fatalf("the stream did not end with its result: %v\n%s", err, rest)
	}
}

// slowReply streams four chunks, one every 300 ms: a turn that runs a second.
func slowReply() fakegemini.Reply {
	return fakegemini.Reply{Chunks: fakegemini.TextChunks("one two three four", 4), Pacing: 300 * time.Millisecond}
}

// Every caller limit, through the server and Redis: over it, 429 with Retry-After and a
// JSON error naming the limit; each caller counted apart.
func TestCallerLimitsThroughServer(t *testing.T) {
	rdb := redistest.Start(t)
	fake := fakegemini.New()
	defer fake.Close()
	keys := keysFile(t)
	s := startReplica(t, fake, rdb, "--api-keys-file", keys, "--caller-streams", "1", "--caller-catalogs", "1",
		"--caller-sessions", "1", "--caller-conversations", "2", "--conversation-ttl", "1h")
	basic, _ := schemas.SampleCatalog("basic")
	rich, _ := schemas.SampleCatalog("rich")
	basicJSON, richJSON := mustMarshal(basic), mustMarshal(rich)

	t.Run("streams", func(t *testing.T) {
		fake.Enqueue(slowReply())
		_, rd := openStream(t, s.base, as(aliceKey), turnBody(basicJSON, "hi", ""))
		status, h, body := postJSON(t, s.base+"/generateUi", as(aliceKey), turnBody(basicJSON, "again", ""))
		limited(t, "alice's second turn at once", status, h, body, "streams")
		if status, _, body := postJSON(t, s.base+"/generateUi", as(bobKey), turnBody(basicJSON, "hi", "")); status != 200 {
			t.Fatalf("bob's turn meanwhile: %d %s", status, body)
		}
		finish(t, rd)
	})
	t.Run("catalogs", func(t *testing.T) {
		// Alice added the basic catalog to the cache above: another new one is refused.
		status, h, body := postJSON(t, s.base+"/generateUi", as(aliceKey), turnBody(richJSON, "hi", ""))
		limited(t, "alice's second new catalog", status, h, body, "catalogs")
		if status, _, body := postJSON(t, s.base+"/generateUi", as(bobKey), turnBody(richJSON, "hi", "")); status != 200 {
			t.Fatalf("bob's first new catalog: %d %s", status, body)
		}
		// A catalog in the cache is no new one.
		if status, _, body := postJSON(t, s.base+"/generateUi", as(aliceKey), turnBody(richJSON, "hi", "")); status != 200 {
			t.Fatalf("alice with the catalog bob added: %d %s", status, body)
		}
	})
	t.Run("sessions", func(t *testing.T) {
		start := `{"protocolVersion":"0.1.0","catalog":` + basicJSON + `}`
		if status, _, body := postJSON(t, s.base+"/startSession", as(aliceKey), start); status != 200 {
			t.Fatalf("alice's first session: %d %s", status, body)
		}
		status, h, body := postJSON(t, s.base+"/startSession", as(aliceKey), start)
		limited(t, "alice's second session", status, h, body, "sessions")
	})
	t.Run("conversations", func(t *testing.T) {
		conv := func(key, id, text string) (int, http.Header, string) {
			return postJSON(t, s.base+"/generateUi", as(key), turnBody(basicJSON, text, `,"conversationId":"`+id+`"`))
		}
		for _, id := range []string{"limit-conv-1", "limit-conv-2"} {
			if status, _, body := conv(aliceKey, id, "hi"); status != 200 {
				t.Fatalf("alice's %s: %d %s", id, status, body)
			}
		}
		status, h, body := conv(aliceKey, "limit-conv-3", "hi")
		limited(t, "alice's third stored conversation", status, h, body, "conversations")
		if ra, _ := strconv.Atoi(h.Get("Retry-After")); ra < 3000 || ra > 3600 {
			t.Errorf("Retry-After %d: want when her first conversation expires, within --conversation-ttl", ra)
		}
		// Her conversations go on; bob has his own count.
		if status, _, body := conv(aliceKey, "limit-conv-1", "more"); status != 200 {
			t.Fatalf("alice's first conversation, continued: %d %s", status, body)
		}
		if status, _, body := conv(bobKey, "limit-conv-3", "hi"); status != 200 {
			t.Fatalf("bob's first conversation: %d %s", status, body)
		}
		// A WebSocket session is a conversation too: alice has no room for one.
		c := dialWS(t, s.base, aliceKey)
		res := wsCall(t, c, rpc("new_session", map[string]any{"catalog": basic}))
		e, _ := res["error"].(map[string]any)
		data, _ := e["data"].(map[string]any)
		if e == nil || e["code"] != float64(-32005) || data["retryAfter"] == nil {
			t.Fatalf("alice's WebSocket session over the limit: %v", res)
		}
	})
	_, _, text := getWith(t, s.base+"/metrics", nil)
	for _, limit := range []string{"streams", "catalogs", "sessions", "conversations"} {
		if !regexp.MustCompile(`(?m)^genui_limited_total\{limit="` + limit + `"\} [1-9]`).MatchString(text) {
			t.Errorf("no genui_limited_total of %s:\n%s", limit, grepLines(text, "genui_limited_total"))
		}
	}
}

// The cap on turns running at once, all callers together.
func TestMaxTurnsThroughServer(t *testing.T) {
	rdb := redistest.Start(t)
	fake := fakegemini.New()
	defer fake.Close()
	s := startReplica(t, fake, rdb, "--api-keys-file", keysFile(t), "--max-turns", "1")
	basic, _ := schemas.SampleCatalog("basic")
	fake.Enqueue(slowReply())
	_, rd := openStream(t, s.base, as(aliceKey), turnBody(mustMarshal(basic), "hi", ""))
	status, h, body := postJSON(t, s.base+"/generateUi", as(bobKey), turnBody(mustMarshal(basic), "hi", ""))
	limited(t, "bob's turn while alice's runs", status, h, body, "turns")
	finish(t, rd)
	if status, _, body := postJSON(t, s.base+"/generateUi", as(bobKey), turnBody(mustMarshal(basic), "hi", "")); status != 200 {
		t.Fatalf("bob's turn after alice's: %d %s", status, body)
	}
}

// dialWS opens a /ws connection with key, closed when the test ends.
func dialWS(t *testing.T, base, key string) *websocket.Conn {
	t.Helper()
	c, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(base, "http")+"/ws?access_token="+key, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(websocket.StatusNormalClosure, "") })
	return c
}

// wsCall sends a JSON-RPC request on c and returns its response, skipping notifications.
func wsCall(t *testing.T, c *websocket.Conn, body string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Write(ctx, websocket.MessageText, []byte(body)); err != nil {
		t.Fatal(err)
	}
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		_ = json.Unmarshal(data, &m)
		if m["id"] != nil && m["method"] == nil {
			return m
		}
	}
}

// Without authentication, limits count per client address: the connection's, or the one
// X-Forwarded-For names when the connection comes from a --trusted-proxies address.
func TestForwardedForOnlyFromTrustedProxies(t *testing.T) {
	s := startServer(t, nil, "/readyz", "--model", "offline", "--trusted-proxies", "127.0.0.2", "--rate-limit", "0.001", "--rate-burst", "1")
	basic, _ := schemas.SampleCatalog("basic")
	body := turnBody(mustMarshal(basic), "hi", "")
	// from sends a turn over a connection from the loopback address local, with the
	// X-Forwarded-For header xff (none when empty), and returns its status.
	from := func(local, xff string) int {
		t.Helper()
		client := &http.Client{Transport: &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(local)}}).DialContext}}
		defer client.CloseIdleConnections()
		req, _ := http.NewRequest(http.MethodPost, s.base+"/generateUi?format=json", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		if xff != "" {
			req.Header.Set("X-Forwarded-For", xff)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		_, _ = io.Copy(io.Discard, res.Body)
		return res.StatusCode
	}
	for _, c := range []struct {
		name       string
		local, xff string
		want       int
	}{
		// Through the trusted proxy: each forwarded client has its own allowance.
		{"a client through the proxy", "127.0.0.2", "203.0.113.7", 200},
		{"the same client again", "127.0.0.2", "203.0.113.7", 429},
		{"another client through the proxy", "127.0.0.2", "203.0.113.8", 200},
		// The client is the last address no trusted proxy added: what the client itself
		// put first is not believed.
		{"a spoofed first hop", "127.0.0.2", "203.0.113.7, 198.51.100.1", 200},
		{"a spoofed first hop, again", "127.0.0.2", "203.0.113.9, 198.51.100.1", 429},
		{"hops the trusted proxy added", "127.0.0.2", "198.51.100.2, 127.0.0.2", 200},
		{"the proxy's own requests", "127.0.0.2", "", 200},
		{"the proxy's own requests, again", "127.0.0.2", "", 429},
		// From an untrusted peer the header is ignored: one client, whatever it says.
		{"an untrusted peer", "127.0.0.1", "203.0.113.10", 200},
		{"an untrusted peer naming another client", "127.0.0.1", "203.0.113.11", 429},
		{"an untrusted peer naming none", "127.0.0.1", "", 429},
	} {
		if got := from(c.local, c.xff); got != c.want {
			t.Errorf("%s (from %s, X-Forwarded-For %q): %d, want %d", c.name, c.local, c.xff, got, c.want)
		}
	}
}

// jwks serves a JSON Web Key Set of Ed25519 keys, which a test may change.
type jwks struct {
	mu   sync.Mutex
	keys map[string]ed25519.PrivateKey // by kid
	hits int
}

func (j *jwks) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.hits++
	var set struct {
		Keys []map[string]string `json:"keys"`
	}
	for kid, k := range j.keys {
		set.Keys = append(set.Keys, map[string]string{"kty": "OKP", "crv": "Ed25519", "use": "sig", "alg": "EdDSA", "kid": kid,
			"x": base64.RawURLEncoding.EncodeToString(k.Public().(ed25519.PublicKey))})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(set)
}

// rotate replaces the set's keys with one new key, kid.
func (j *jwks) rotate(t *testing.T, kid string) ed25519.PrivateKey {
	t.Helper()
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	j.keys = map[string]ed25519.PrivateKey{kid: k}
	return k
}

// token signs a token of sub for the test's issuer and audience, valid for exp from now.
func token(t *testing.T, k ed25519.PrivateKey, kid, sub string, exp time.Duration) string {
	t.Helper()
	now := time.Now()
	tok := jwt.NewWithClaims(jwt.SigningMethodEdDSA, jwt.MapClaims{"iss": "https://issuer.test", "aud": "genui", "sub": sub,
		"iat": now.Unix(), "nbf": now.Add(-time.Minute).Unix(), "exp": now.Add(exp).Unix()})
	tok.Header["kid"] = kid
	s, err := tok.SignedString(k)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// JWT bearer tokens verified with a JWKS the server fetches: a token of a key the set
// gained later is verified once the server refetched it, and a key the set dropped no
// longer verifies.
func TestJWTWithRotatingJWKS(t *testing.T) {
	keys := &jwks{}
	k1 := keys.rotate(t, "key-1")
	jwksSrv := httptest.NewServer(keys)
	defer jwksSrv.Close()
	s := startServer(t, nil, "/readyz", "--model", "offline", "--jwt-jwks-url", jwksSrv.URL+"/jwks.json",
		"--jwt-issuer", "https://issuer.test", "--jwt-audience", "genui")
	basic, _ := schemas.SampleCatalog("basic")
	turn := func(tok, requestID string) (int, http.Header, string) {
		return postJSON(t, s.base+"/generateUi?format=json", map[string]string{"Authorization": "Bearer " + tok, "X-Request-Id": requestID},
			turnBody(mustMarshal(basic), "hi", ""))
	}

	if status, _, body := turn(token(t, k1, "key-1", "user-1", time.Hour), "jwt-turn-1"); status != 200 {
		t.Fatalf("a token of key-1: %d %s", status, body)
	}
	if line := waitLog(t, s, "request_id=jwt-turn-1"); !strings.Contains(line, "caller=jwt:https://issuer.test|user-1") {
		t.Fatalf("the turn's caller: %s", line)
	}
	status, h, body := turn(token(t, k1, "key-1", "user-1", -time.Minute), "jwt-expired")
	if status != 401 || h.Get("WWW-Authenticate") != `Bearer realm="genui", error="invalid_token"` || !strings.Contains(body, "expired") {
		t.Fatalf("an expired token: %d %v %s", status, h, body)
	}
	status, _, body = turn(token(t, k1, "key-1", "user-1", time.Hour)+"x", "jwt-tampered")
	if status != 401 || !strings.Contains(body, `"UNAUTHENTICATED"`) {
		t.Fatalf("a tampered token: %d %s", status, body)
	}

	// The issuer rotates its key: key-2 replaces key-1.
	k2 := keys.rotate(t, "key-2")
	if status, _, body := turn(token(t, k2, "key-2", "user-2", time.Hour), "jwt-turn-2"); status != 200 {
		t.Fatalf("a token of the new key-2: %d %s", status, body)
	}
	if line := waitLog(t, s, "request_id=jwt-turn-2"); !strings.Contains(line, "caller=jwt:https://issuer.test|user-2") {
		t.Fatalf("the turn's caller: %s", line)
	}
	if status, _, body := turn(token(t, k1, "key-1", "user-1", time.Hour), "jwt-old-key"); status != 401 {
		t.Fatalf("a token of the dropped key-1: %d %s", status, body)
	}
	keys.mu.Lock()
	hits := keys.hits
	keys.mu.Unlock()
	if hits < 2 {
		t.Fatalf("the JWKS was fetched %d times, want at start and after the rotation", hits)
	}
}

// waitLog waits for the turn line of a server's logs holding want, and returns it.
func waitLog(t *testing.T, r *replica, want string) string {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, l := range strings.Split(logsOf(r), "\n") {
			if strings.Contains(l, "msg=turn") && strings.Contains(l, want) {
				return l
			}
		}
	}
	t.Fatalf("no turn line with %s:\n%s", want, logsOf(r))
	return ""
}

// The listener of --metrics-addr answers with the headers of the API's.
func TestMetricsListenerHeaders(t *testing.T) {
	metricsAddr := freeAddr(t)
	startServer(t, nil, "/readyz", "--model", "offline", "--metrics-addr", metricsAddr)
	status, h, body := getWith(t, "http://"+metricsAddr+"/metrics", map[string]string{"X-Request-Id": "scrape-1"})
	if status != 200 || !strings.Contains(body, "genui_open_streams ") {
		t.Fatalf("/metrics: %d %s", status, body)
	}
	if h.Get("X-Request-Id") != "scrape-1" || h.Get("X-Content-Type-Options") != "nosniff" || h.Get("Content-Security-Policy") != "frame-ancestors 'none'" {
		t.Fatalf("headers: %v", h)
	}
	_, h, _ = getWith(t, "http://"+metricsAddr+"/nothing", nil)
	if len(h.Get("X-Request-Id")) != 22 || h.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("a 404's headers: %v", h)
	}
}

// go-redis's own lines come out as the server's: structured (JSON here), with a "lib"
// attribute.
func TestRedisLibraryLinesAreStructured(t *testing.T) {
	s := startServer(t, nil, "/healthz", "--model", "offline", "--log-format", "json", "--redis-url", "redis://"+freeAddr(t))
	basic, _ := schemas.SampleCatalog("basic")
	status, _, body := postJSON(t, s.base+"/generateUi", map[string]string{"X-Request-Id": "redis-down-1"},
		turnBody(mustMarshal(basic), "hi", `,"conversationId":"redis-down-conv"`))
	if status != 503 {
		t.Fatalf("a turn with Redis down: %d %s", status, body)
	}
	var found bool
	for deadline := time.Now().Add(5 * time.Second); !found && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, l := range strings.Split(strings.TrimSpace(logsOf(s)), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("a line that is not JSON: %q", l)
			}
			if m["lib"] == "go-redis" {
				found = true
				if msg, _ := m["msg"].(string); m["level"] != "WARN" || strings.HasPrefix(msg, "redis: ") {
					t.Errorf("go-redis's line: %s", l)
				}
			}
		}
	}
	if !found {
		t.Fatalf("no line of go-redis:\n%s", logsOf(s))
	}
}

// genui_waiting_turns counts the held conversations whose turn ended waiting for the
// results of client tools (reason client_tools), and the turns streaming with no client
// reading in their grace period (reason no_reader).
func TestWaitingTurnsMetric(t *testing.T) {
	rdb := redistest.Start(t)
	fake := fakegemini.New()
	defer fake.Close()
	s := startReplica(t, fake, rdb, "--stream-grace", "3s")
	basic, _ := schemas.SampleCatalog("basic")
	gauge := func(reason string) string {
		_, _, text := getWith(t, s.base+"/metrics", nil)
		m := regexp.MustCompile(`(?m)^genui_waiting_turns\{reason="` + reason + `"\} (\S+)$`).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("no genui_waiting_turns{reason=%q}:\n%s", reason, grepLines(text, "genui_waiting_turns"))
		}
		return m[1]
	}
	until := func(reason, want string) {
		t.Helper()
		for deadline := time.Now().Add(5 * time.Second); gauge(reason) != want; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("genui_waiting_turns{reason=%q} = %s, want %s", reason, gauge(reason), want)
			}
		}
	}
	until("client_tools", "0")
	until("no_reader", "0")

	// A held conversation's turn ends with a call of a client tool: it waits.
	fake.Enqueue(fakegemini.Respond(fakegemini.Text("Looking."), fakegemini.FunctionCall("getLocation", nil)))
	body := func(conv string) string {
		return `{"catalog":` + mustMarshal(basic) + `,"conversationId":"waiting-conv-1","clientTools":[{"name":"getLocation"}],"conversation":` + conv + `}`
	}
	status, _, got := postJSON(t, s.base+"/generateUi", nil, body(`[{"role":"user","parts":[{"type":"text","text":"where am I?"}]}]`))
	callID := regexp.MustCompile(`"callId":"([^"]+)"`).FindStringSubmatch(got)
	if status != 200 || callID == nil {
		t.Fatalf("the turn calling getLocation: %d %s", status, got)
	}
	until("client_tools", "1")
	// Its result: it waits no more.
	status, _, got = postJSON(t, s.base+"/generateUi", nil,
		body(`[{"role":"user","parts":[{"type":"toolResult","callId":"`+callID[1]+`","name":"getLocation","output":{"city":"Berlin"}}]}]`))
	if status != 200 {
		t.Fatalf("the result: %d %s", status, got)
	}
	until("client_tools", "0")

	// A client leaves a stream mid-turn: the turn goes on unread for the grace period.
	fake.Enqueue(fakegemini.Reply{Chunks: fakegemini.TextChunks("a slow turn nobody reads to its end", 8), Pacing: 500 * time.Millisecond})
	res, _ := openStream(t, s.base, nil, turnBody(mustMarshal(basic), "hi", ""))
	res.Body.Close()
	until("no_reader", "1")
	until("no_reader", "0")
}

// The observability page's table of metrics lists exactly the metrics the server registers (besides
// the Go runtime's and the process's).
func TestDocsListEveryMetric(t *testing.T) {
	page, err := os.ReadFile("../../docs/observability.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(page), "\n## Metrics\n")
	if !ok {
		t.Fatal("docs/observability.md has no ## Metrics section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var documented []string
	for _, m := range regexp.MustCompile("(?m)^\\| `(genui_[a-z_]+)` \\|").FindAllStringSubmatch(section, -1) {
		documented = append(documented, m[1])
	}

	met := metrics.New()
	registerGauges(met, gaugeSources{turns: unreadTurns{}, catalogs: catalog.NewCache(1, 1<<20, 1<<20), hub: fixed(0), ws: fixed(0), yield: fixed(0),
		convs: conversation.NewMemory(1, 0, time.Minute)})
	// Every family once recorded, so that each appears in what is gathered.
	met.Request("/generateUi", "ndjson", 200, time.Second)
	met.Turn("INTERNAL", 1, 1, 1)
	met.FirstSurface(time.Second)
	met.Stream(time.Second)
	met.ModelCall("googleai", time.Second, "UNAVAILABLE")
	met.ModelRetry("googleai")
	met.ModelFallback("googleai/a", "googleai/b", "rate_limited")
	met.Tokens("key:alice", "googleai/a", 1, 1)
	met.Surfaces("streamed", 1)
	met.Limited("rate")
	met.PolicyViolation("unsafe_url")
	met.TurnLimit("outputBytes")
	fams, err := met.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	var registered []string
	for _, f := range fams {
		if name := f.GetName(); strings.HasPrefix(name, "genui_") {
			registered = append(registered, name)
		}
	}
	slices.Sort(documented)
	slices.Sort(registered)
	if !slices.Equal(slices.Compact(documented), registered) || len(documented) != len(slices.Compact(slices.Clone(documented))) {
		t.Fatalf("docs/observability.md lists %d metrics, the server registers %d:\nonly in the docs: %v\nonly registered: %v",
			len(documented), len(registered), missing(documented, registered), missing(registered, documented))
	}
}

// missing returns the items of a not in b.
func missing(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// fixed is a count that never changes: a hub's waiting sessions, a server's connections.
type fixed int

func (f fixed) Waiting() int { return int(f) }
func (f fixed) Conns() int   { return int(f) }

// unreadTurns is a service running no turn, that counts its unread ones.
type unreadTurns struct{}

func (unreadTurns) Running() int { return 0 }
func (unreadTurns) Unread() int  { return 0 }
