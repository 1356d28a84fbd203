package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/models"
	"github.com/genuiserver/genui/genui/offline"
)

// renamed is a model served under another name.
type renamed struct {
	genui.Model
	name string
}

func (r renamed) Name() string { return r.name }

// GET /models lists the models a request may name; a /generateUi or /generateA2ui
// request's model field chooses one, and the result's usage names it; a model the server
// does not allow is 400 naming model.
func TestRequestNamesItsModel(t *testing.T) {
	other, err := models.Open(context.Background(), genkit.Init(context.Background()), offline.Name, quiet)
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := newServerWith(t, offline.Name, []genui.Option{genui.WithModels(renamed{other, "test/other"})}, nil)
	res, err := http.Get(srv.URL + "/models")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(res.Body)
	res.Body.Close()
	body := string(b)
	if res.StatusCode != http.StatusOK || body != `{"default":"genui/offline","models":["genui/offline","test/other"]}`+"\n" {
		t.Errorf("GET /models: %d %s", res.StatusCode, body)
	}
	ndjson := map[string]string{"Accept": "application/x-ndjson"}
	for _, c := range []struct{ path, body string }{
		{"/generateUi", genuiBody(t, `,"model":"test/other"`, userText("Show me a form"))},
		{"/generateA2ui", `{"model":"test/other","conversation":` + userText("Show me a form") + `}`},
	} {
		r := post(t, srv.URL+c.path, ndjson, c.body)
		if r.status != http.StatusOK || !strings.Contains(r.body, `"modelCalls":1,"model":"test/other"}`) {
			t.Errorf("%s naming test/other: %d %s", c.path, r.status, r.body)
		}
		bad := strings.Replace(c.body, `"model":"test/other"`, `"model":"openai/gpt-9"`, 1)
		r = post(t, srv.URL+c.path, ndjson, bad)
		if r.status != http.StatusBadRequest || !strings.Contains(r.body, `"model: \"openai/gpt-9\" is not a model this server lets you choose; expected one of: genui/offline, test/other"`) ||
			!strings.Contains(r.body, `"field":"model"`) {
			t.Errorf("%s naming openai/gpt-9: %d %s", c.path, r.status, r.body)
		}
	}
}
