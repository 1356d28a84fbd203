package httpapi_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/offline"
)

// /readyz names the model, and lists every model of a fallback chain in order.
func TestReadyzModels(t *testing.T) {
	for _, c := range []struct {
		opts []httpapi.Option
		want []string
	}{
		{nil, []string{offline.Name}},
		{[]httpapi.Option{httpapi.WithModels(offline.Name, "googleai/b")}, []string{offline.Name, "googleai/b"}},
	} {
		srv, _ := newServerWith(t, offline.Name, nil, c.opts)
		res, err := srv.Client().Get(srv.URL + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		var body struct {
			Model  string   `json:"model"`
			Models []string `json:"models"`
		}
		err = json.NewDecoder(res.Body).Decode(&body)
		res.Body.Close()
		if err != nil || res.StatusCode != 200 {
			t.Fatalf("%d %v", res.StatusCode, err)
		}
		if body.Model != offline.Name || !slices.Equal(body.Models, c.want) {
			t.Errorf("model %q, models %v; want %q, %v", body.Model, body.Models, offline.Name, c.want)
		}
	}
}
