package web_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/transport"
	"github.com/genuiserver/genui/web"
)

// e2ePages are the files of web/e2e the test servers serve at /e2e/<name>.
var e2ePages = map[string]string{
	"a2a-page.html":  "text/html; charset=utf-8",
	"a2a-page.js":    "text/javascript; charset=utf-8",
	"agui-page.html": "text/html; charset=utf-8",
	"agui-page.js":   "text/javascript; charset=utf-8",
	"surfaces.js":    "text/javascript; charset=utf-8",
}

// newE2EServer serves the API, the playground's files and the routes of the transports
// routes gives,
// on the offline model over loopback HTTP, plus the test pages of web/e2e (dir) at
// /e2e/, under the playground's Content-Security-Policy. seen records its exchanges.
func newE2EServer(t *testing.T, dir string, seen *exchanges, routes func(*genui.Service) []transport.Route, wrap ...func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	g := genkit.Init(context.Background())
	svc, err := genui.New(g, offlineModel(t, g), genui.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	page := web.Handler()
	var rts []transport.Route
	if routes != nil {
		rts = routes(svc)
	}
	var api http.Handler = httpapi.New(svc, httpapi.WithLogger(quiet), httpapi.WithPage(page), httpapi.WithRoutes(rts...))
	for _, w := range wrap {
		api = w(api)
	}

	index := httptest.NewRecorder()
	page.ServeHTTP(index, httptest.NewRequest(http.MethodGet, "/", nil))
	csp := index.Header().Get("Content-Security-Policy")
	if csp == "" {
		t.Fatal("the playground's index has no Content-Security-Policy")
	}

	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if name, ok := strings.CutPrefix(r.URL.Path, "/e2e/"); ok {
			ct, known := e2ePages[name]
			if !known || r.Method != http.MethodGet {
				http.NotFound(w, r)
				return
			}
			body, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", ct)
			w.Header().Set("Cache-Control", "no-store")
			w.Header().Set("Content-Security-Policy", csp)
			_, _ = w.Write(body)
			return
		}
		seen.record(api).ServeHTTP(w, r)
	})
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv
}
