package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/metrics"
)

// A request refused for lack of credentials is counted with the transport it negotiated,
// as its handler would have labelled it.
func TestRefusedRequestsAreLabelledWithTheirTransport(t *testing.T) {
	a, err := auth.New(auth.WithAPIKey("alice", "alice-key-0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	m := metrics.New()
	srv, _ := newServerWith(t, "genui/offline", nil, []httpapi.Option{httpapi.WithAuth(a), httpapi.WithMetrics(m, true)})
	for _, c := range []struct{ path, accept string }{
		{"/generateUi", "text/event-stream"},
		{"/generateUi", ""},
		{"/generateUi?format=json", ""},
		{"/generateA2ui", "application/json"},
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+c.path, strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		if c.accept != "" {
			req.Header.Set("Accept", c.accept)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%s: %d", c.path, res.StatusCode)
		}
	}
	res, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, res.Body); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`genui_http_requests_total{code="401",route="/generateUi",transport="sse"} 1`,
		`genui_http_requests_total{code="401",route="/generateUi",transport="ndjson"} 1`,
		`genui_http_requests_total{code="401",route="/generateUi",transport="json"} 1`,
		`genui_http_requests_total{code="401",route="/generateA2ui",transport="json"} 1`,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %s in\n%s", want, b.String())
		}
	}
}
