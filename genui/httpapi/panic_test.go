package httpapi_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"
	"github.com/labstack/echo/v4"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/httpapi"
)

func TestPanicsBecome500JSONOrAnErrorEvent(t *testing.T) {
	svc, err := genui.New(genkit.Init(context.Background()), panicModel{}, genui.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	e := httpapi.New(svc, httpapi.WithLogger(quiet))
	e.POST("/boom", func(echo.Context) error { panic("handler exploded") })
	srv := httptest.NewServer(e)
	defer srv.Close()

	r := post(t, srv.URL+"/boom", nil, `{}`)
	checkError(t, r, http.StatusInternalServerError, "INTERNAL", "internal error")

	body := `{"data":{"catalog":` + mustJSON(t, basicCatalog(t)) + `,"conversation":` + userText("Hello") + `}}`
	r = post(t, srv.URL+"/generateUi?stream=true", nil, body)
	if r.status != 200 || r.body != `data: {"error":{"status":"INTERNAL","message":"internal error"}}`+"\n\n" {
		t.Fatalf("%d %q", r.status, r.body)
	}
	r = post(t, srv.URL+"/generateUi", map[string]string{"Accept": "application/json"}, body)
	checkError(t, r, http.StatusInternalServerError, "INTERNAL", "internal error")
	if strings.Contains(r.body, "exploded") {
		t.Fatal("panic values must not reach clients")
	}
	http.DefaultClient.CloseIdleConnections()
}

type panicModel struct{}

func (panicModel) Name() string { return "test/panic" }

func (panicModel) Generate(context.Context, *genui.ModelRequest, func(context.Context, *ai.Part) error) (*ai.ModelResponse, error) {
	panic("model exploded")
}
