package aguiclient

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/aguiapi"
	"github.com/genuiserver/genui/genui/durable"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/leaktest"
	"github.com/genuiserver/genui/internal/testkit/longlist"
	"github.com/genuiserver/genui/internal/testkit/nodetest"
	"github.com/genuiserver/genui/internal/testkit/redistest"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m, redistest.IgnoreGoroutines()) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// pacedForm is what the fake Gemini writes for a turn, in 20 chunks, one every 40 ms, so
// that its surface grows over several messages and a run can be dropped mid-stream.
const pacedForm = a2uitest.FormResponse

// customCatalogID is the id the tests give the basic catalog's components when they send
// them as the catalog of the run (the context entry of @ag-ui/a2ui-middleware).
const customCatalogID = "https://example.com/catalogs/agui-test.json"

// pacedModel answers every turn with pacedForm, in the test's catalog when the run named
// it, and the usage Gemini reports; a turn whose last user text asks it to fail breaks
// off after two chunks; one that asks for a runaway list gets a list of 20,000 rows, as
// fast as it reads, which the components limit stops.
func pacedModel(req *fakegemini.Request) fakegemini.Reply {
	if strings.Contains(req.LastUserText(), "please fail") {
		return fakegemini.Reply{Chunks: fakegemini.TextChunks("Let me think about it", 4), MidStream: &fakegemini.MidStreamFailure{After: 2}}
	}
	if strings.Contains(req.LastUserText(), "a runaway list") {
		return fakegemini.Reply{Chunks: fakegemini.TextChunks(longlist.Text(20000), 2000), Pacing: -1}
	}
	form := pacedForm
	if strings.Contains(req.SystemText(), customCatalogID) {
		form = strings.Replace(form, a2uitest.BasicCatalogID, customCatalogID, 1)
	}
	return fakegemini.Reply{Chunks: fakegemini.TextChunks(form, 20), Usage: &fakegemini.Usage{PromptTokenCount: 1200, CandidatesTokenCount: 340, TotalTokenCount: 1540}}
}

// newServer serves the API and the AG-UI endpoint with the named model over real HTTP.
func newServer(t *testing.T, model string, opts ...genui.Option) *httptest.Server {
	t.Helper()
	svc := servetest.Service(t, model, opts...)
	return servetest.Serve(t, svc, aguiapi.New(svc, aguiapi.WithLogger(quiet)).Routes()...)
}

// capture is what the node tests recorded of one run: the a2ui_operations of its
// a2ui-surface activity after each ACTIVITY_SNAPSHOT and ACTIVITY_DELTA, in order, and
// those the client's activity messages held after the run, by message id.
type capture struct {
	Name   string                       `json:"name"`
	States [][]json.RawMessage          `json:"states"`
	Final  map[string][]json.RawMessage `json:"final"`
}

// TestAGUIClient runs the node tests, which drive the AG-UI endpoint with @ag-ui/client
// 1.0 and @ag-ui/a2ui-middleware, then validates every a2ui_operations list they received
// against the A2UI specification.
func TestAGUIClient(t *testing.T) {
	node := nodetest.Require(t, "@ag-ui/client", "@ag-ui/core", "@ag-ui/a2ui-middleware")
	// The replicas share a Redis Cluster (three masters, a replica each): what they
	// share works on every slot.
	redis := redistest.StartCluster(t, 3, 1)

	offlineSrv := newServer(t, offline.Name)
	fake := fakegemini.New(fakegemini.WithPacing(40*time.Millisecond), fakegemini.WithResponder(pacedModel))
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	pacedSrv := newServer(t, "googleai/gemini-2.5-flash")

	// Two replicas sharing their durable streams through Redis, on a model of their own,
	// so that the model calls of the dropped run can be counted.
	replicaFake := fakegemini.New(fakegemini.WithPacing(40*time.Millisecond), fakegemini.WithResponder(pacedModel))
	t.Cleanup(replicaFake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", replicaFake.URL())
	client := redis.Client(t)
	prefix := redistest.UniquePrefix()
	replica := func() *httptest.Server {
		return newServer(t, "googleai/gemini-2.5-flash", genui.WithStreams(durable.NewRedisLog(client, time.Minute, durable.WithKeyPrefix(prefix))))
	}
	a, b := replica(), replica()

	dir := t.TempDir()
	catalogFile := filepath.Join(dir, "catalog.json")
	extra := map[string][]byte{customCatalogID: customCatalog(t)}
	if err := os.WriteFile(catalogFile, extra[customCatalogID], 0o644); err != nil {
		t.Fatal(err)
	}
	captures := filepath.Join(dir, "captures")
	if err := os.Mkdir(captures, 0o755); err != nil {
		t.Fatal(err)
	}

	nodetest.Run(t, node, []string{"GENUI_URL=" + offlineSrv.URL, "GENUI_PACED_URL=" + pacedSrv.URL,
		"GENUI_REPLICA_A=" + a.URL, "GENUI_REPLICA_B=" + b.URL, "A2UI_CATALOG_FILE=" + catalogFile,
		"A2UI_CAPTURE_DIR=" + captures},
		"client.test.mjs", "middleware.test.mjs", "replicas.test.mjs")

	// The dropped run was read again on the other replica: one model call in all, and
	// it ran to its end.
	if n := len(replicaFake.Requests()); n != 1 {
		t.Errorf("the replicas made %d model calls for the dropped run, want 1", n)
	}
	// No model call goes on after the tests.
	for _, f := range []*fakegemini.Server{fake, replicaFake} {
		for i, r := range f.Requests() {
			select {
			case <-r.Done():
			case <-time.After(5 * time.Second):
				t.Fatalf("model call %d goes on after the tests", i)
			}
		}
	}

	var all []capture
	for _, name := range []string{"client", "middleware", "replicas"} {
		raw, err := os.ReadFile(filepath.Join(captures, name+".json"))
		if err != nil {
			t.Fatalf("the %s tests wrote no capture: %v", name, err)
		}
		var cs []capture
		if err := json.Unmarshal(raw, &cs); err != nil {
			t.Fatalf("%s capture: %v", name, err)
		}
		if len(cs) == 0 {
			t.Fatalf("the %s tests captured no run", name)
		}
		all = append(all, cs...)
	}
	lists, msgs := 0, 0
	// One validator for all: each list begins with createSurface, which names its
	// catalog anew.
	v := a2uitest.New(t, "v0.9", extra)
	check := func(t *testing.T, what string, ops []json.RawMessage) {
		t.Helper()
		list := make([][]byte, len(ops))
		for j, m := range ops {
			list[j] = m
		}
		if len(list) == 0 || !strings.Contains(string(list[0]), `"createSurface"`) {
			t.Errorf("%s does not begin with createSurface: %s", what, list)
		}
		v.CheckAll(t, list...)
		lists++
		msgs += len(list)
	}
	for _, c := range all {
		t.Run(c.Name, func(t *testing.T) {
			if len(c.States) == 0 || len(c.Final) == 0 {
				t.Fatalf("%d states, %d activities", len(c.States), len(c.Final))
			}
			// Each state is the surface built from nothing: a sequence of its own.
			for i, s := range c.States {
				check(t, fmt.Sprintf("state %d", i), s)
			}
			// What the client held after the run builds, applied in order, one whole
			// surface: its final state is a createSurface and an update holding a root.
			for id, ops := range c.Final {
				check(t, id, ops)
				final := a2ui.Final(a2ui.V09, ops)
				if len(final) < 2 || !strings.Contains(string(final[0]), `"createSurface"`) || !strings.Contains(string(final[len(final)-1]), `"id":"root"`) {
					t.Errorf("%s: the client's operations leave %s", id, final)
				}
			}
		})
	}
	t.Logf("validated %d a2ui_operations lists (%d A2UI messages) of %d runs", lists, msgs, len(all))
}

// customCatalog is the specification's basic catalog under customCatalogID.
func customCatalog(t *testing.T) []byte {
	t.Helper()
	spec, err := a2uitest.Find()
	if err != nil {
		t.Fatal(err)
	}
	basic, err := spec.File("v0.9/basic")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(basic, &doc); err != nil {
		t.Fatal(err)
	}
	doc["catalogId"] = customCatalogID
	doc["$id"] = customCatalogID
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
