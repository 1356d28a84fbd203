package wsclient

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/durable"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/genui/wsapi"
	"github.com/genuiserver/genui/internal/sessionhub"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/leaktest"
	"github.com/genuiserver/genui/internal/testkit/nodetest"
	"github.com/genuiserver/genui/internal/testkit/redistest"
	"github.com/genuiserver/genui/internal/testkit/servetest"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/session"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m, redistest.IgnoreGoroutines()) }

// The reconnect windows: the servers' own, long enough for any test, and the expiry
// server's, short enough to wait out.
const (
	window       = time.Minute
	expiryWindow = 2 * time.Second
)

// pacedModel answers every turn with a2uitest.FormResponse in 20 chunks (one every 40 ms
// on the fake Gemini: a turn of about 800 ms), so that a turn can be cancelled, dropped
// or pinged while it runs.
func pacedModel(*fakegemini.Request) fakegemini.Reply {
	return fakegemini.Reply{Chunks: fakegemini.TextChunks(a2uitest.FormResponse, 20)}
}

// serve serves svc's API, /ws (with wsOpts) and /session/{id} over real HTTP, both
// endpoints sharing one hub of sessions whose reconnect window is win.
func serve(t *testing.T, svc *genui.Service, win time.Duration, wsOpts ...wsapi.Option) *httptest.Server {
	t.Helper()
	hub := sessionhub.New(svc, win, servetest.Quiet)
	t.Cleanup(hub.Close)
	ws := wsapi.New(svc, append([]wsapi.Option{wsapi.WithHub(hub), wsapi.WithLogger(servetest.Quiet)}, wsOpts...)...)
	return servetest.Serve(t, svc, ws.Routes()...)
}

// capture is what the node tests recorded of one A2UI session: the A2UI messages it
// received (the events of its ui_update notifications on /ws, of its progress messages
// on /session/{id}), in the order received, and their A2UI version.
type capture struct {
	Name     string            `json:"name"`
	Version  string            `json:"version"`
	Messages []json.RawMessage `json:"messages"`
}

// TestWSClient runs the node tests, which drive GET /ws and GET /session/{id} with the
// ws package from npm, then validates every A2UI message they received against the
// A2UI specification.
func TestWSClient(t *testing.T) {
	node := nodetest.Require(t, "ws")
	// The replicas share a Redis Cluster (three masters, a replica each): what they
	// share works on every slot.
	redis := redistest.StartCluster(t, 3, 1)

	offlineSrv := serve(t, servetest.Service(t, offline.Name), window)
	expirySrv := serve(t, servetest.Service(t, offline.Name), expiryWindow)

	fake := fakegemini.New(fakegemini.WithPacing(40*time.Millisecond), fakegemini.WithResponder(pacedModel))
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	pacedSrv := serve(t, servetest.Service(t, "googleai/gemini-2.5-flash"), window)
	// Small limits: two sessions a connection, one turn at a time, four messages a batch.
	limitsSrv := serve(t, servetest.Service(t, "googleai/gemini-2.5-flash"), window, wsapi.WithLimits(2, 1, 4))

	// Two replicas sharing their sessions, conversations and durable streams through
	// Redis, as genui-server wires them with --redis-url; each has its own hub.
	client := redis.Client(t)
	prefix := redistest.UniquePrefix()
	replica := func() *httptest.Server {
		catalogs := catalog.NewCache(64, 2<<20, 64<<20)
		svc := servetest.Service(t, offline.Name,
			genui.WithCatalogs(catalogs),
			genui.WithStore(session.NewRedis(client, catalogs, time.Hour, session.WithKeyPrefix(prefix))),
			genui.WithConversations(conversation.NewRedis(client, time.Hour, conversation.WithKeyPrefix(prefix))),
			genui.WithStreams(durable.NewRedisLog(client, time.Minute, durable.WithKeyPrefix(prefix))))
		return serve(t, svc, window)
	}
	a, b := replica(), replica()
	// Sessions whose stored state no replica can read, one for each endpoint: an
	// internal error, and the session deleted.
	const corrupt, corrupt2 = "corrupt-session-0001", "corrupt-session-0002"
	for _, id := range []string{corrupt, corrupt2} {
		if err := client.Set(context.Background(), prefix+"conv:{"+id+"}:session", "{not json", time.Hour).Err(); err != nil {
			t.Fatal(err)
		}
	}

	dir := t.TempDir()
	basic, err := schemas.SampleCatalog("basic")
	if err != nil {
		t.Fatal(err)
	}
	catalogFile := filepath.Join(dir, "basic.json")
	raw, err := json.Marshal(basic)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(catalogFile, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	captures := filepath.Join(dir, "captures")
	if err := os.Mkdir(captures, 0o755); err != nil {
		t.Fatal(err)
	}

	files := []string{"ws.test.mjs", "session.test.mjs", "replicas.test.mjs"}
	nodetest.Run(t, node, []string{"GENUI_URL=" + offlineSrv.URL, "GENUI_EXPIRY_URL=" + expirySrv.URL,
		"GENUI_PACED_URL=" + pacedSrv.URL, "GENUI_LIMITS_URL=" + limitsSrv.URL,
		"GENUI_REPLICA_A=" + a.URL, "GENUI_REPLICA_B=" + b.URL, "GENUI_CORRUPT_SESSION=" + corrupt, "GENUI_CORRUPT_SESSION_2=" + corrupt2,
		"GENUI_CATALOG_FILE=" + catalogFile, "A2UI_CAPTURE_DIR=" + captures,
		"GENUI_EXPIRY_WINDOW_MS=" + strconv.FormatInt(expiryWindow.Milliseconds(), 10)},
		files...)

	// No model call goes on after the tests: the cancelled turns stopped theirs, the
	// dropped ones ran to their end.
	for i, r := range fake.Requests() {
		select {
		case <-r.Done():
		case <-time.After(5 * time.Second):
			t.Fatalf("model call %d goes on after the tests", i)
		}
	}

	var all []capture
	for _, f := range files {
		name := strings.TrimSuffix(f, ".test.mjs")
		raw, err := os.ReadFile(filepath.Join(captures, name+".json"))
		if err != nil {
			t.Fatalf("the %s tests wrote no capture: %v", name, err)
		}
		var cs []capture
		if err := json.Unmarshal(raw, &cs); err != nil {
			t.Fatalf("%s capture: %v", name, err)
		}
		if len(cs) == 0 {
			t.Fatalf("the %s tests captured no A2UI session", name)
		}
		all = append(all, cs...)
	}
	msgs := 0
	for _, c := range all {
		t.Run(c.Name, func(t *testing.T) {
			if len(c.Messages) == 0 {
				t.Fatal("no A2UI message")
			}
			// A session's messages in order: its surfaces are created by its earlier ones.
			v := a2uitest.New(t, c.Version, nil)
			list := make([][]byte, len(c.Messages))
			for i, m := range c.Messages {
				list[i] = m
			}
			v.CheckAll(t, list...)
			msgs += len(list)
		})
	}
	t.Logf("validated %d A2UI messages of %d sessions", msgs, len(all))
}
