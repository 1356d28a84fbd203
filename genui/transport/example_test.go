package transport_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/transport"
)

// A transport's route: a net/http handler, and how its protocol writes the refusals of the
// server's middleware stack. Served without that stack, it refuses every request.
func ExampleRoute() {
	rt := transport.Route{
		Method:  http.MethodPost,
		Pattern: "/echo/{name}",
		Name:    "echo",
		Errors:  transport.JSON,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "hello, %s", r.PathValue("name"))
		}),
	}
	w := httptest.NewRecorder()
	rt.ServeHTTP(w, httptest.NewRequest(http.MethodPost, "/echo/ada", nil))
	fmt.Println(w.Code, w.Body.String())

	// What the stack does, among the rest: mark the request.
	r := httptest.NewRequest(http.MethodPost, "/echo/ada", nil)
	r.SetPathValue("name", "ada")
	w = httptest.NewRecorder()
	rt.ServeHTTP(w, r.WithContext(transport.Mark(r.Context())))
	fmt.Println(w.Code, w.Body.String())

	// The HTTP JSON error table.
	w = httptest.NewRecorder()
	transport.WriteJSONError(w, genui.Errorf(genui.StatusNotFound, "no such thing"))
	fmt.Print(w.Code, " ", w.Body.String())
	// Output:
	// 500 {"error":{"status":"INTERNAL","message":"internal error"}}
	//
	// 200 hello, ada
	// 404 {"error":{"status":"NOT_FOUND","message":"no such thing"}}
}
