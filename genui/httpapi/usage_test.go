package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/testkit/servetest"
	"github.com/genuiserver/genui/quota"
)

// GET /usage answers the authenticated caller's own token usage: after alice's turn,
// hers; bob's is his own; 401 without credentials; and a turn past the budget is 429
// with Retry-After.
func TestUsage(t *testing.T) {
	authn, _ := servetest.Callers(t)
	srv, _ := newServerWith(t, offline.Name,
		[]genui.Option{genui.WithQuota(quota.New(quota.Limits{})), genui.WithTokenBudget(1), genui.WithCallerTokenBudget("key:bob", 0)},
		[]httpapi.Option{httpapi.WithAuth(authn)})
	usage := func(key string) (int, map[string]any) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/usage", nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		var out map[string]any
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("GET /usage: %d %s", res.StatusCode, b)
		}
		return res.StatusCode, out
	}
	alice := map[string]string{"Authorization": "Bearer " + servetest.AliceKey, "Accept": "application/json"}
	if r := post(t, srv.URL+"/generateUi", alice, genuiBody(t, "", userText("Show me a form"))); r.status != http.StatusOK {
		t.Fatalf("alice's turn: %d %s", r.status, r.body)
	}
	code, u := usage(servetest.AliceKey)
	in, _ := u["input"].(float64)
	out, _ := u["output"].(float64)
	reset, err := time.Parse(time.RFC3339, u["resetAt"].(string))
	if code != http.StatusOK || u["caller"] != "key:alice" || in <= 0 || out <= 0 || u["total"] != in+out || u["budget"] != 1.0 || err != nil || time.Until(reset) > time.Hour {
		t.Errorf("alice's usage: %d %v", code, u)
	}
	if code, u := usage(servetest.BobKey); code != http.StatusOK || u["caller"] != "key:bob" || u["total"] != 0.0 || u["budget"] != nil {
		t.Errorf("bob's usage: %d %v", code, u)
	}
	if code, u := usage(""); code != http.StatusUnauthorized {
		t.Errorf("without credentials: %d %v", code, u)
	}
	r := post(t, srv.URL+"/generateUi", alice, genuiBody(t, "", userText("Show me a form")))
	if r.status != http.StatusTooManyRequests || r.header.Get("Retry-After") == "" {
		t.Errorf("alice past her budget: %d (Retry-After %q) %s", r.status, r.header.Get("Retry-After"), r.body)
	}
}
