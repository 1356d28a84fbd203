package httpapi_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/genui/a2aapi"
	"github.com/genuiserver/genui/genui/aguiapi"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/mcpapi"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/genui/transport"
	"github.com/genuiserver/genui/genui/wsapi"
	"github.com/genuiserver/genui/internal/reqlog"
	"github.com/genuiserver/genui/internal/testkit/servetest"
	"github.com/genuiserver/genui/metrics"
)

const stackOrigin = "https://app.example"

// probe is a route of a transport written for the test: it reports what the middleware
// stack gave its request.
type probe struct {
	caller  auth.Caller
	info    *reqlog.Info
	marked  bool
	bodyErr error
	n       int
}

func (p *probe) route() transport.Route {
	return transport.Route{Method: http.MethodPost, Pattern: "/probe/{x}", Name: "probe", Errors: transport.JSON,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.PathValue("x") == "panic" {
				panic("a bug in a transport")
			}
			p.caller = auth.FromContext(r.Context())
			p.info = reqlog.FromContext(r.Context())
			p.marked = transport.Marked(r.Context())
			b, err := io.ReadAll(r.Body)
			p.n, p.bodyErr = len(b), err
			w.WriteHeader(http.StatusNoContent)
		})}
}

// stackServer serves the API with every transport, as the server binary mounts them, with
// authentication, CORS for stackOrigin, metrics at /metrics, a 64 KiB body limit and the
// probe.
func stackServer(t *testing.T, p *probe) (*httptest.Server, *echo.Echo) {
	t.Helper()
	svc := newService(t, offline.Name)
	authn, _ := servetest.Callers(t)
	var routes []transport.Route
	routes = append(routes, a2aapi.New(svc, a2aapi.WithLogger(quiet)).Routes()...)
	routes = append(routes, aguiapi.New(svc, aguiapi.WithLogger(quiet)).Routes()...)
	routes = append(routes, mcpapi.New(svc, mcpapi.WithLogger(quiet)).Routes()...)
	ws := wsapi.New(svc, wsapi.WithLogger(quiet))
	routes = append(routes, ws.Routes()...)
	routes = append(routes, p.route())
	h := httpapi.New(svc,
		httpapi.WithLogger(quiet),
		httpapi.WithAuth(authn),
		httpapi.WithAllowOrigins(stackOrigin),
		httpapi.WithMetrics(metrics.New(), true),
		httpapi.WithBodyLimit(64<<10),
		httpapi.WithPage(http.NotFoundHandler()),
		httpapi.WithRoutes(routes...))
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		ws.Shutdown()
	})
	return srv, h
}

// The routes that need no credentials.
var openRoutes = map[string]bool{
	"/healthz": true, "/readyz": true, "/metrics": true, "/*": true,
}

// Every route the server registers, of every transport, with every method it answers,
// passes through the same middleware stack: a request id, CORS, the security headers,
// authentication (a refusal in the route's own protocol), metrics. A route added without
// the stack, or whose refusal is not its protocol's, fails here.
func TestEveryRouteHasTheStack(t *testing.T) {
	var p probe
	srv, h := stackServer(t, &p)
	routes := registered(h)
	if len(routes) < 15 {
		t.Fatalf("only %d routes registered: %v", len(routes), routes)
	}
	seen := map[string]bool{}
	for i, rt := range routes {
		name := rt.method + " " + rt.path
		t.Run(name, func(t *testing.T) {
			id := "stack-" + strconv.Itoa(i)
			req, _ := http.NewRequest(rt.method, srv.URL+concrete(rt.path), strings.NewReader(`{}`))
			req.Header.Set("Origin", stackOrigin)
			req.Header.Set("X-Request-Id", id)
			req.Header.Set("Content-Type", "application/json")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(res.Body)
			res.Body.Close()
			if got := res.Header.Get("X-Request-Id"); got != id {
				t.Errorf("X-Request-Id = %q, want %q", got, id)
			}
			if got := res.Header.Get("Access-Control-Allow-Origin"); got != stackOrigin {
				t.Errorf("Access-Control-Allow-Origin = %q, want %q", got, stackOrigin)
			}
			if got := res.Header.Get("X-Content-Type-Options"); got != "nosniff" {
				t.Errorf("X-Content-Type-Options = %q", got)
			}
			open := openRoutes[rt.path] || strings.Contains(rt.path, "/.well-known/") || (rt.method == http.MethodGet && strings.HasPrefix(rt.path, "/a2a") && !strings.Contains(rt.path, "/v1/"))
			if open {
				if res.StatusCode == http.StatusUnauthorized {
					t.Errorf("an open route asked for credentials: %s", body)
				}
				return
			}
			seen[rt.path] = true
			if res.StatusCode != http.StatusUnauthorized || !strings.HasPrefix(res.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Fatalf("without credentials: %d (WWW-Authenticate %q) %s", res.StatusCode, res.Header.Get("WWW-Authenticate"), body)
			}
			var refusal map[string]any
			if err := json.Unmarshal(body, &refusal); err != nil {
				t.Fatalf("the refusal is not JSON: %s", body)
			}
			switch {
			case rt.path == "/mcp" || (strings.HasPrefix(rt.path, "/a2a") || rt.path == "/") && !strings.Contains(rt.path, "/rest"):
				if !bytes.Contains(body, []byte(`"jsonrpc":"2.0","id":null,"error":{"code":-31401,`)) || !bytes.Contains(body, []byte(`"status":"UNAUTHENTICATED","field":"Authorization"`)) {
					t.Errorf("not a JSON-RPC refusal: %s", body)
				}
			case strings.Contains(rt.path, "/rest"):
				if !bytes.Contains(body, []byte(`{"error":{"code":401,"status":"UNAUTHENTICATED",`)) || !bytes.Contains(body, []byte(`"reason":"UNAUTHENTICATED","domain":"a2a-protocol.org"`)) {
					t.Errorf("not a google.rpc.Status refusal: %s", body)
				}
			default:
				if !bytes.HasPrefix(body, []byte(`{"error":{"status":"UNAUTHENTICATED",`)) || !bytes.Contains(body, []byte(`"field":"Authorization"`)) {
					t.Errorf("not the HTTP API's refusal: %s", body)
				}
			}
		})
	}

	// Each refusal was counted, by route.
	res, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	exposition, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for path := range seen {
		if !bytes.Contains(exposition, []byte(`genui_http_requests_total{code="401",route="`+path+`"`)) {
			t.Errorf("no 401 counted for %s", path)
		}
	}
}

// A transport's route gets the caller, the request's log info and the body limit from the
// stack, and a panic in it is answered in its protocol, 500, with the request id.
func TestStackGivesRoutesCallerLimitAndRecovery(t *testing.T) {
	var p probe
	srv, _ := stackServer(t, &p)
	post := func(path, body string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+servetest.AliceKey)
		req.Header.Set("X-Request-Id", "probe-1")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { res.Body.Close() })
		return res
	}
	if res := post("/probe/x", strings.Repeat("a", 100<<10)); res.StatusCode != http.StatusNoContent {
		t.Fatalf("probe answered %d", res.StatusCode)
	}
	if !p.marked || p.caller.ID != "key:alice" || p.info == nil || p.info.ID != "probe-1" || p.info.Route != "/probe/:x" {
		t.Errorf("the stack gave the route: marked %v, caller %q, info %+v", p.marked, p.caller.ID, p.info)
	}
	var tooLarge *http.MaxBytesError
	if !errors.As(p.bodyErr, &tooLarge) || tooLarge.Limit != 64<<10 || p.n != 64<<10 {
		t.Errorf("a 100 KiB body was read as %d bytes, %v; want the 64 KiB limit", p.n, p.bodyErr)
	}

	res := post("/probe/panic", "{}")
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusInternalServerError || string(body) != `{"error":{"status":"INTERNAL","message":"internal error"}}`+"\n" || res.Header.Get("X-Request-Id") != "probe-1" {
		t.Errorf("a panic answered %d %q (X-Request-Id %q)", res.StatusCode, body, res.Header.Get("X-Request-Id"))
	}
}

// A route served without the stack (mounted on a mux of its own) refuses every request:
// it would skip authentication.
func TestRouteWithoutTheStackRefuses(t *testing.T) {
	called := false
	rt := transport.Route{Method: http.MethodPost, Pattern: "/x", Errors: transport.JSON,
		Handler: http.HandlerFunc(func(http.ResponseWriter, *http.Request) { called = true })}
	w := httptest.NewRecorder()
	rt.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/x", nil))
	if called || w.Code != http.StatusInternalServerError || w.Body.String() != `{"error":{"status":"INTERNAL","message":"internal error"}}`+"\n" {
		t.Errorf("served without the stack: called %v, %d %q", called, w.Code, w.Body)
	}
}

type route struct{ method, path string }

// registered lists the routes e serves, GET and POST of each (a route of any method is
// listed under every method).
func registered(e *echo.Echo) []route {
	var out []route
	have := map[route]bool{}
	for _, r := range e.Routes() {
		rt := route{r.Method, r.Path}
		if (r.Method != http.MethodGet && r.Method != http.MethodPost) || have[rt] {
			continue
		}
		have[rt] = true
		out = append(out, rt)
	}
	return out
}

// concrete is a path of the route pattern p.
func concrete(p string) string {
	segs := strings.Split(p, "/")
	for i, s := range segs {
		switch {
		case s == "*":
			segs[i] = "x"
		case strings.HasPrefix(s, ":"):
			segs[i] = "abcdefgh12"
		}
	}
	return strings.Join(segs, "/")
}
