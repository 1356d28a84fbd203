package web_test

import (
	"bytes"
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
	"testing"
	"time"

	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui/gemini"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
)

// a2uiBundles are the renderer bundles web/a2ui/build.mjs writes into static/.
var a2uiBundles = []string{"a2ui-v09.js", "a2ui-v08.js", "mcp-app.js"}

// TestA2UIBundlesReproducible rebuilds the A2UI renderer bundles from web/a2ui (its
// sources and the packages package-lock.json pins) into a temporary directory and
// requires the bytes of the checked-in static/a2ui-v0*.js. If it fails, run
// "npm run build" in web/a2ui and commit the result.
func TestA2UIBundlesReproducible(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: needs node and web/a2ui's npm packages (esbuild)")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		skipOrFail(t, "node is not installed")
	}
	if _, err := os.Stat(filepath.Join("a2ui", "node_modules", "esbuild", "package.json")); err != nil {
		skipOrFail(t, "web/a2ui/node_modules is missing")
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "build.mjs", "--outdir", dir)
	cmd.Dir = "a2ui"
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("node build.mjs: %v\n%s", err, out)
	}
	for _, name := range a2uiBundles {
		built, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		committed, err := os.ReadFile(filepath.Join("static", name))
		if err != nil {
			t.Fatalf("%v (run npm run build in web/a2ui)", err)
		}
		if !bytes.Equal(built, committed) {
			t.Errorf("static/%s (%d bytes) differs from a fresh build (%d bytes); run npm run build in web/a2ui and commit it", name, len(committed), len(built))
			continue
		}
		t.Logf("static/%s: %d bytes, reproduced", name, len(built))
	}
}

func skipOrFail(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatalf("%s (CI is set; run make deps)", why)
	}
	t.Skipf("%s; run make deps", why)
}

// TestA2UIPlaygroundInChromium drives the playground's A2UI mode in headless Chromium
// (web/e2e/a2ui.test.mjs), v0.9 and v0.8, with the official renderer the page bundles:
// against the offline model (a surface, an action round trip) and against a slow model,
// the Gemini adapter talking to a fake Gemini that writes an A2UI surface and then holds
// the stream, so that a partial surface can be seen mid-stream. Every A2UI message the
// page receives, and every A2UI message it sends, is then checked against the
// specification's schemas.
func TestA2UIPlaygroundInChromium(t *testing.T) {
	b := needBrowser(t)
	seen := exchanges{path: "/generateA2ui"}

	g := genkit.Init(context.Background())
	offlineSrv := newServerWith(t, g, offlineModel(t, g), seen.record)

	fake := fakegemini.New(fakegemini.WithResponder(slowA2UI))
	t.Cleanup(fake.Close)
	m, err := gemini.New(context.Background(), gemini.Config{Name: "googleai/gemini-2.5-flash", APIKey: "test-key", BaseURL: fake.URL(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	slowSrv := newServerWith(t, genkit.Init(context.Background()), m, seen.record)

	b.run(t, "a2ui.test.mjs", "GENUI_URL="+offlineSrv.URL+"/", "GENUI_SLOW_URL="+slowSrv.URL+"/",
		fmt.Sprintf("SLOW_HOLD_MS=%d", slowHold.Milliseconds()))
	seen.check(t)
}

// slowHold is how long the slow model pauses mid-surface.
const slowHold = 2500 * time.Millisecond

// slowA2UI answers like a model writing an A2UI surface: a sentence, then an ```a2ui
// block with one message per line, components top-down. The reply comes in two chunks
// slowHold apart; the first ends after the root, the title and the intro, so until the
// second arrives the surface has its root and some of its children, not all.
func slowA2UI(req *fakegemini.Request) fakegemini.Reply {
	first, rest := slowSurfaceV09()
	if strings.Contains(req.SystemText(), "A2UI v0.8") {
		first, rest = slowSurfaceV08()
	}
	return fakegemini.Reply{Chunks: []fakegemini.Chunk{fakegemini.Text(first), fakegemini.Text(rest)}, Pacing: slowHold}
}

func slowSurfaceV09() (first, rest string) {
	first = "Here is a table booking form.\n```a2ui\n" +
		`{"createSurface":{"surfaceId":"booking","catalogId":"` + a2uitest.BasicCatalogID + `"}}` + "\n" +
		`{"updateDataModel":{"surfaceId":"booking","path":"/booking","value":{"name":"","guests":""}}}` + "\n" +
		`{"updateComponents":{"surfaceId":"booking","components":[` + "\n" +
		`{"id":"root","component":"Column","children":["title","intro","name","guests","book"]},` + "\n" +
		`{"id":"title","component":"Text","text":"Book a table","variant":"h2"},` + "\n" +
		`{"id":"intro","component":"Text","text":"Tell us who is coming."},` + "\n"
	rest = `{"id":"name","component":"TextField","label":"Name","value":{"path":"/booking/name"}},` + "\n" +
		`{"id":"guests","component":"TextField","label":"Guests","value":{"path":"/booking/guests"}},` + "\n" +
		`{"id":"book","component":"Button","child":"book-label","variant":"primary","action":{"event":{"name":"book","context":{"name":{"path":"/booking/name"},"guests":{"path":"/booking/guests"}}}}},` + "\n" +
		`{"id":"book-label","component":"Text","text":"Book"}` + "\n" +
		"]}}\n```\n"
	return first, rest
}

func slowSurfaceV08() (first, rest string) {
	first = "Here is a table booking form.\n```a2ui\n" +
		`{"beginRendering":{"surfaceId":"booking","root":"root"}}` + "\n" +
		`{"surfaceUpdate":{"surfaceId":"booking","components":[` + "\n" +
		`{"id":"root","component":{"Column":{"children":{"explicitList":["title","intro","name","guests","book"]}}}},` + "\n" +
		`{"id":"title","component":{"Text":{"text":{"literalString":"Book a table"},"usageHint":"h2"}}},` + "\n" +
		`{"id":"intro","component":{"Text":{"text":{"literalString":"Tell us who is coming."}}}},` + "\n"
	rest = `{"id":"name","component":{"TextField":{"label":{"literalString":"Name"},"text":{"path":"/booking/name"}}}},` + "\n" +
		`{"id":"guests","component":{"TextField":{"label":{"literalString":"Guests"},"text":{"path":"/booking/guests"}}}},` + "\n" +
		`{"id":"book","component":{"Button":{"child":"book-label","primary":true,"action":{"name":"book","context":[{"key":"name","value":{"path":"/booking/name"}},{"key":"guests","value":{"path":"/booking/guests"}}]}}}},` + "\n" +
		`{"id":"book-label","component":{"Text":{"text":{"literalString":"Book"}}}}` + "\n" +
		"]}}\n" +
		`{"dataModelUpdate":{"surfaceId":"booking","path":"/booking","contents":[{"key":"name","valueString":""},{"key":"guests","valueString":""}]}}` + "\n" +
		"```\n"
	return first, rest
}

// exchanges records the POST requests to one path a server saw, and their responses.
type exchanges struct {
	path string
	mu   sync.Mutex
	list []*exchange
}

type exchange struct {
	request []byte
	header  http.Header // the request's
	mu      sync.Mutex
	body    bytes.Buffer // the response as written
	answer  http.Header  // the response's header, once answered
}

// record wraps a server's handler to keep every exchange on e.path.
func (e *exchanges) record(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != e.path {
			h.ServeHTTP(w, r)
			return
		}
		req, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(req))
		x := &exchange{request: req, header: r.Header.Clone()}
		e.mu.Lock()
		e.list = append(e.list, x)
		e.mu.Unlock()
		h.ServeHTTP(&teeWriter{ResponseWriter: w, x: x}, r)
		x.mu.Lock()
		x.answer = w.Header().Clone()
		x.mu.Unlock()
	})
}

// response returns what the server answered x: the header and the body.
func (x *exchange) response() (http.Header, []byte) {
	x.mu.Lock()
	defer x.mu.Unlock()
	return x.answer, append([]byte(nil), x.body.Bytes()...)
}

// teeWriter copies a response into its exchange; it flushes like the writer it wraps.
type teeWriter struct {
	http.ResponseWriter
	x *exchange
}

func (w *teeWriter) Write(p []byte) (int, error) {
	w.x.mu.Lock()
	w.x.body.Write(p)
	w.x.mu.Unlock()
	return w.ResponseWriter.Write(p)
}

func (w *teeWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (w *teeWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// check validates every A2UI message of the exchanges against the specification: the
// server's lines with server_to_client.json (and their components against the catalog),
// the client's action and error messages with client_to_server.json. A v0.8
// surfaceUpdate must also hold every component its components refer to: the official
// renderer (@a2ui/web_core 0.11.0) rejects it otherwise, reading "components: a list
// containing all UI components for the surface" strictly.
func (e *exchanges) check(t *testing.T) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	perVersion := map[string][2]int{}
	for i, x := range e.list {
		var req struct {
			Version      string `json:"version"`
			Conversation []struct {
				Role  string `json:"role"`
				Parts []struct {
					Type    string          `json:"type"`
					Message json.RawMessage `json:"message"`
				} `json:"parts"`
			} `json:"conversation"`
		}
		if err := json.Unmarshal(x.request, &req); err != nil {
			t.Errorf("request %d is not JSON: %v\n%s", i, err, x.request)
			continue
		}
		if req.Version == "" {
			req.Version = "v0.9"
		}
		v := a2uitest.New(t, req.Version, nil)
		n := perVersion[req.Version]
		for _, m := range req.Conversation {
			for _, p := range m.Parts {
				if p.Type != "a2ui" || m.Role != "user" {
					continue
				}
				if err := v.CheckClient(p.Message); err != nil {
					t.Errorf("request %d (%s): the page sent an invalid A2UI client message: %v\n%s", i, req.Version, err, p.Message)
				}
				n[1]++
			}
		}
		x.mu.Lock()
		lines := a2uitest.Lines(x.body.Bytes())
		x.mu.Unlock()
		for _, l := range lines {
			if err := v.Check(l); err != nil {
				t.Errorf("request %d (%s): the server sent an invalid A2UI message: %v\n%s\nrequest: %s", i, req.Version, err, l, x.request)
			}
			if missing := danglingRefs08(l); len(missing) > 0 {
				t.Errorf("request %d (v0.8): a surfaceUpdate refers to %v, which it does not hold; the official renderer rejects it:\n%s\nrequest: %s", i, missing, l, x.request)
			}
			n[0]++
		}
		perVersion[req.Version] = n
	}
	for _, ver := range []string{"v0.9", "v0.8"} {
		n := perVersion[ver]
		if n[0] == 0 || n[1] == 0 {
			t.Errorf("%s: %d server and %d client A2UI messages seen; the browser tests should produce both", ver, n[0], n[1])
			continue
		}
		t.Logf("%s: %d server and %d client A2UI messages valid against the specification", ver, n[0], n[1])
	}
}

// danglingRefs08 returns the component ids a v0.8 surfaceUpdate refers to (children,
// child, template, tab and modal children) that are not among its own components.
func danglingRefs08(line []byte) []string {
	var m struct {
		SurfaceUpdate *struct {
			Components []struct {
				ID        string                                `json:"id"`
				Component map[string]map[string]json.RawMessage `json:"component"`
			} `json:"components"`
		} `json:"surfaceUpdate"`
	}
	if json.Unmarshal(line, &m) != nil || m.SurfaceUpdate == nil {
		return nil
	}
	have := map[string]bool{}
	for _, c := range m.SurfaceUpdate.Components {
		have[c.ID] = true
	}
	var missing []string
	ref := func(id string) {
		if id != "" && !have[id] {
			missing = append(missing, id)
		}
	}
	for _, c := range m.SurfaceUpdate.Components {
		for _, props := range c.Component {
			var children struct {
				ExplicitList []string `json:"explicitList"`
				Template     struct {
					ComponentID string `json:"componentId"`
				} `json:"template"`
			}
			var tabs []struct {
				Child string `json:"child"`
			}
			var id string
			_ = json.Unmarshal(props["children"], &children)
			for _, r := range children.ExplicitList {
				ref(r)
			}
			ref(children.Template.ComponentID)
			for _, k := range []string{"child", "entryPointChild", "contentChild"} {
				id = ""
				_ = json.Unmarshal(props[k], &id)
				ref(id)
			}
			_ = json.Unmarshal(props["tabItems"], &tabs)
			for _, tab := range tabs {
				ref(tab.Child)
			}
		}
	}
	return missing
}
