package web_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/models"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/web"
)

func TestHandler(t *testing.T) {
	h := web.Handler()
	get := func(path string, header ...string) *http.Response {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		for i := 0; i+1 < len(header); i += 2 {
			req.Header.Set(header[i], header[i+1])
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Result()
	}
	body := func(res *http.Response) string {
		t.Helper()
		b, err := io.ReadAll(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}

	for _, tc := range []struct{ path, contentType, contains string }{
		{"/", "text/html; charset=utf-8", `<html lang="en">`},
		{"/index.html", "text/html; charset=utf-8", `<script type="module" src="app.js">`},
		{"/app.js", "text/javascript; charset=utf-8", "import "},
		{"/render.js", "text/javascript; charset=utf-8", "export function renderSurface"},
		{"/stream.js", "text/javascript; charset=utf-8", "export async function* readEvents"},
		{"/rpc.js", "text/javascript; charset=utf-8", "export class RpcSocket"},
		{"/a2ui-v09.js", "text/javascript; charset=utf-8", `"a2ui-surface"`},
		{"/a2ui-v08.js", "text/javascript; charset=utf-8", `"a2ui-surface"`},
		{"/style.css", "text/css; charset=utf-8", ":root"},
		{"/favicon.svg", "image/svg+xml", "<svg"},
	} {
		res := get(tc.path)
		b := body(res)
		if res.StatusCode != http.StatusOK {
			t.Errorf("GET %s: %d %s", tc.path, res.StatusCode, b)
			continue
		}
		if got := res.Header.Get("Content-Type"); got != tc.contentType {
			t.Errorf("GET %s: Content-Type %q, want %q", tc.path, got, tc.contentType)
		}
		if got := res.Header.Get("Cache-Control"); got != "no-cache" {
			t.Errorf("GET %s: Cache-Control %q, want no-cache", tc.path, got)
		}
		if !strings.Contains(b, tc.contains) {
			t.Errorf("GET %s: body lacks %q", tc.path, tc.contains)
		}
		// no-cache means revalidate: the ETag turns a reload into a 304.
		if etag := res.Header.Get("ETag"); etag == "" {
			t.Errorf("GET %s: no ETag", tc.path)
		} else if res2 := get(tc.path, "If-None-Match", etag); res2.StatusCode != http.StatusNotModified {
			t.Errorf("GET %s with If-None-Match: %d, want 304", tc.path, res2.StatusCode)
		}
	}
	if csp := get("/").Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self';") ||
		!strings.Contains(csp, "style-src 'self' ") || strings.Contains(csp, "unsafe-inline") || strings.Contains(csp, "unsafe-eval") {
		t.Errorf("index: Content-Security-Policy %q", csp)
	}

	for _, path := range []string{"/nope", "/app.js/x", "/static/app.js", "/../web.go", "/%2e%2e/doc.go"} {
		res := get(path)
		b := body(res)
		if res.StatusCode != http.StatusNotFound || res.Header.Get("Content-Type") != "application/json" {
			t.Errorf("GET %s: %d %s, want a JSON 404", path, res.StatusCode, res.Header.Get("Content-Type"))
			continue
		}
		var e struct {
			Error struct{ Status, Message string }
		}
		if err := json.Unmarshal([]byte(b), &e); err != nil || e.Error.Status != "NOT_FOUND" || e.Error.Message == "" {
			t.Errorf("GET %s: body %s (%v)", path, b, err)
		}
	}

	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/", nil))
	if rec.Code != http.StatusMethodNotAllowed || !strings.Contains(rec.Body.String(), `"UNIMPLEMENTED"`) {
		t.Errorf("POST /: %d %s", rec.Code, rec.Body.String())
	}
}

// TestHandlerBehindAPI checks the page is reachable through the API router and does not
// shadow API routes or API errors.
func TestHandlerBehindAPI(t *testing.T) {
	srv := newServer(t)
	for _, tc := range []struct {
		path        string
		code        int
		contentType string
	}{
		{"/", 200, "text/html; charset=utf-8"},
		{"/app.js", 200, "text/javascript; charset=utf-8"},
		{"/healthz", 200, "application/json"},
		{"/catalogs", 200, "application/json"},
		{"/missing.js", 404, "application/json"},
	} {
		res, err := http.Get(srv.URL + tc.path)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != tc.code || !strings.HasPrefix(res.Header.Get("Content-Type"), tc.contentType) {
			t.Errorf("GET %s: %d %q, want %d %q", tc.path, res.StatusCode, res.Header.Get("Content-Type"), tc.code, tc.contentType)
		}
	}
}

// TestPlaygroundInChromium drives the page in headless Chromium (web/e2e, node:test and
// playwright-core) against the real server on the offline model. Screenshots go to
// <repo>/test-artifacts. Without Chromium or the e2e node_modules it skips, unless CI is
// set (make deps installs both).
func TestPlaygroundInChromium(t *testing.T) {
	b := needBrowser(t)
	srv := newServer(t)
	b.run(t, "playground.test.mjs", "GENUI_URL="+srv.URL+"/")
}

// browser is what the browser tests need: node, Chromium, web/e2e with playwright-core,
// and the directory screenshots go to.
type browser struct {
	node, chromium, e2e, artifacts string
}

// needBrowser finds node, Chromium and web/e2e's packages. Without them the test skips,
// unless CI is set (make deps installs them all), and in -short mode.
func needBrowser(t *testing.T) *browser {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped under -short: needs Chromium, node and web/e2e's npm packages")
	}
	missing := func(format string, args ...any) {
		t.Helper()
		if os.Getenv("CI") != "" {
			t.Fatalf(format+" (CI is set; run make deps)", args...)
		}
		t.Skipf(format+"; run make deps", args...)
	}
	b := &browser{chromium: os.Getenv("CHROMIUM")}
	if b.chromium == "" {
		b.chromium = "/usr/bin/chromium"
	}
	if _, err := os.Stat(b.chromium); err != nil {
		missing("no Chromium at %s", b.chromium)
	}
	var err error
	if b.node, err = exec.LookPath("node"); err != nil {
		missing("node is not installed")
	}
	if b.e2e, err = filepath.Abs("e2e"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(b.e2e, "node_modules", "playwright-core", "package.json")); err != nil {
		missing("web/e2e/node_modules/playwright-core is missing")
	}
	if b.artifacts, err = filepath.Abs(filepath.Join("..", "test-artifacts")); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(b.artifacts, 0o755); err != nil {
		t.Fatal(err)
	}
	return b
}

// run runs one node:test file of web/e2e with env added, failing t if it fails or skips
// a test; it logs the end of the output and returns the whole.
func (b *browser) run(t *testing.T, file string, env ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, b.node, "--test", file)
	cmd.Dir = b.e2e
	cmd.Env = append(append(os.Environ(), "ARTIFACTS="+b.artifacts, "CHROMIUM="+b.chromium), env...)
	cmd.WaitDelay = 10 * time.Second
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("browser tests (%s) timed out after 3 minutes:\n%s", file, out)
	}
	if err != nil {
		t.Fatalf("browser tests (%s) failed (%v):\n%s", file, err, out)
	}
	t.Logf("browser tests passed; screenshots in %s\n%s", b.artifacts, tail(string(out), 9))
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, "# SKIP ") {
			t.Errorf("a browser test was skipped: %s", l)
		}
	}
	return string(out)
}

// readRecord decodes the record a browser test wrote to file into v.
func readRecord(t *testing.T, file string, v any) {
	t.Helper()
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("the browser test wrote no record: %v", err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatalf("record: %v\n%s", err, raw)
	}
}

// newServer serves the API and the page on the offline model over loopback HTTP.
func newServer(t *testing.T) *httptest.Server {
	t.Helper()
	g := genkit.Init(context.Background())
	return newServerWith(t, g, offlineModel(t, g), nil)
}

// offlineModel is the built-in offline model, registered with g.
func offlineModel(t *testing.T, g *genkit.Genkit) genui.Model {
	t.Helper()
	m, err := models.Open(context.Background(), g, offline.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newServerWith serves the API and the page on model m over loopback HTTP; wrap, if not
// nil, wraps the whole handler.
func newServerWith(t *testing.T, g *genkit.Genkit, m genui.Model, wrap func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	svc, err := genui.New(g, m, genui.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = httpapi.New(svc, httpapi.WithLogger(quiet), httpapi.WithPage(web.Handler()))
	if wrap != nil {
		h = wrap(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
