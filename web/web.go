package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/base64"
	"encoding/json"
	"io/fs"
	"net/http"
	"path"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// asset is one embedded file, ready to serve.
type asset struct {
	body        []byte
	contentType string
	etag        string
}

// contentTypes maps the extensions used in static/ to their media types; a file with
// any other extension is not served.
var contentTypes = map[string]string{
	".html": "text/html; charset=utf-8",
	".js":   "text/javascript; charset=utf-8",
	".mjs":  "text/javascript; charset=utf-8",
	".css":  "text/css; charset=utf-8",
	".svg":  "image/svg+xml",
	".json": "application/json",
	".png":  "image/png",
	".ico":  "image/x-icon",
	".txt":  "text/plain; charset=utf-8",
}

// csp allows only the page's own scripts, styles and API, plus images from anywhere on
// https (widgets may show network images) and data: URLs.
//
// The one exception is the empty inline style attribute (style="", whose SHA-256 is the
// hash below; 'unsafe-hashes' lets a hash match a style attribute): the A2UI v0.8
// renderer (@a2ui/lit) binds styleMap({}) on every surface, which Lit commits as
// style="" on first render. It styles nothing; without the hash Chromium reports a CSP
// violation per surface. Any non-empty inline style stays blocked. Lit's component
// styles are constructable stylesheets, which style-src does not govern.
const csp = "default-src 'self'; script-src 'self'; " +
	"style-src 'self' 'unsafe-hashes' 'sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='; " +
	"img-src 'self' https: data:; " +
	"connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Handler serves the playground: index.html at "/" (and "/index.html"), the other files of
// static/ by name, each with its content type, an ETag and Cache-Control: no-cache (so a
// new binary's page is picked up at once, and revalidation is cheap). Any other path gets
// a 404 with a JSON error body, like the API.
func Handler() http.Handler {
	assets := map[string]*asset{}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ct, ok := contentTypes[path.Ext(p)]
		if !ok {
			return nil
		}
		b, err := static.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		assets[strings.TrimPrefix(p, "static/")] = &asset{
			body:        b,
			contentType: ct,
			etag:        `"` + base64.RawURLEncoding.EncodeToString(sum[:12]) + `"`,
		}
		return nil
	})
	if err != nil {
		panic("web: embedded files: " + err.Error()) // the embed is fixed at build time
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			writeError(w, http.StatusMethodNotAllowed, "UNIMPLEMENTED", r.Method+" "+r.URL.Path+": method not allowed")
			return
		}
		name := strings.TrimPrefix(path.Clean("/"+r.URL.Path), "/")
		if name == "" {
			name = "index.html"
		}
		a := assets[name]
		if a == nil {
			writeError(w, http.StatusNotFound, "NOT_FOUND", "no page or file at "+r.URL.Path+"; the playground is at /")
			return
		}
		h := w.Header()
		h.Set("Content-Type", a.contentType)
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", a.etag)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		if a.contentType == contentTypes[".html"] {
			h.Set("Content-Security-Policy", csp)
		}
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(a.body))
	})
}

func writeError(w http.ResponseWriter, code int, status, message string) {
	type wireError struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	}
	b, _ := json.Marshal(struct {
		Error wireError `json:"error"`
	}{wireError{status, message}})
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Cache-Control", "no-cache")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

// MCPAppScript returns the MCP App's script (static/mcp-app.js, built by web/a2ui from
// src/mcpapp.js): the A2UI v0.9 renderer and the View side of the MCP Apps protocol, one
// classic script for a page to inline.
func MCPAppScript() []byte {
	b, err := static.ReadFile("static/mcp-app.js")
	if err != nil {
		panic("web: embedded files: " + err.Error()) // the embed is fixed at build time
	}
	return b
}
