package httpapi

import (
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/transport"
)

// mount adds rt to e's routes: its pattern in Echo's syntax ("/session/{id}" is
// "/session/:id", "/a2a/rest/{rest...}" is "/a2a/rest/*"), each wildcard given to the
// handler as a path value (r.PathValue), behind the middleware stack of every route.
func (s *server) mount(e *echo.Echo, rt *transport.Route) {
	path, params := echoPattern(rt.Pattern)
	s.mounted[routeKey{rt.Method, path}] = rt
	h := func(c echo.Context) error {
		r := c.Request()
		for _, p := range params {
			r.SetPathValue(p.name, c.Param(p.param))
		}
		rt.ServeHTTP(c.Response(), r)
		return nil
	}
	if rt.Method == "" {
		e.Any(path, h)
		return
	}
	e.Add(rt.Method, path, h)
}

// routeKey names a mounted route: its method ("" for any) and Echo path.
type routeKey struct{ method, path string }

type pathParam struct{ name, param string }

// echoPattern turns a net/http pattern into Echo's, with the wildcards it names.
func echoPattern(pattern string) (string, []pathParam) {
	segs := strings.Split(pattern, "/")
	var params []pathParam
	for i, seg := range segs {
		name, ok := strings.CutPrefix(seg, "{")
		if !ok {
			continue
		}
		name = strings.TrimSuffix(name, "}")
		if rest, ok := strings.CutSuffix(name, "..."); ok {
			segs[i] = "*"
			params = append(params, pathParam{rest, "*"})
			continue
		}
		segs[i] = ":" + name
		params = append(params, pathParam{name, name})
	}
	return strings.Join(segs, "/"), params
}

// route is the transport route a request was routed to (by its method and Echo path), or
// nil for the HTTP API's own routes.
func (s *server) route(c echo.Context) *transport.Route {
	if len(s.mounted) == 0 {
		return nil
	}
	if rt := s.mounted[routeKey{c.Request().Method, c.Path()}]; rt != nil {
		return rt
	}
	return s.mounted[routeKey{"", c.Path()}]
}

// writeError answers e in the protocol of the request's route, or as the HTTP API's JSON
// error.
func (s *server) writeError(c echo.Context, e *genui.Error) {
	if rt := s.route(c); rt != nil && rt.Errors != nil {
		rt.Errors.WriteError(c.Response(), c.Request(), e)
		return
	}
	transport.WriteJSONError(c.Response(), e)
}

var _ http.Handler = transport.Route{}
