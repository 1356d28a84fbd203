package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/genuiserver/genui/genui/offline"
)

// What the offline model composes for the basic catalog and the text "Hello".
const (
	helloText       = "Here is a surface for your message."
	helloDefinition = `{"definition":{"root":"root","widgets":[{"id":"root","widget":{"Column":{"children":["message","reply","send"]}}},{"id":"message","widget":{"Text":{"text":"You said: Hello"}}},{"id":"reply","widget":{"TextField":{"hintText":"Type a reply"}}},{"id":"send-label","widget":{"Text":{"text":"Send"}}},{"id":"send","widget":{"ElevatedButton":{"child":"send-label"}}}]},"surfaceId":"surface-1"}`
)

var sessionID = regexp.MustCompile(`^[A-Za-z0-9_-]{22,}$`)

func TestStartSessionAcceptsBothEnvelopes(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	catalog := mustJSON(t, basicCatalog(t))
	for name, body := range map[string]string{
		"data wrapper": `{"data":{"protocolVersion":"0.1.0","catalog":` + catalog + `}}`,
		"bare":         `{"protocolVersion":"0.1.0","catalog":` + catalog + `}`,
	} {
		t.Run(name, func(t *testing.T) {
			r := post(t, srv.URL+"/startSession", nil, body)
			if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
				t.Fatalf("got %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
			}
			var out struct{ Result string }
			if err := json.Unmarshal([]byte(r.body), &out); err != nil || !sessionID.MatchString(out.Result) {
				t.Fatalf("result %q is not a URL-safe 128-bit id (%v)", r.body, err)
			}
			if r.body != `{"result":"`+out.Result+`"}`+"\n" {
				t.Fatalf("body %q", r.body)
			}
		})
	}
}

func TestSessionIDsAreUnique(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	seen := map[string]bool{}
	for range 50 {
		id := startSession(t, srv.URL)
		if seen[id] {
			t.Fatalf("duplicate id %s", id)
		}
		seen[id] = true
	}
}

func TestGenerateNDJSONExactBytes(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	id := startSession(t, srv.URL)
	body := `{"data":{"sessionId":"` + id + `","conversation":` + userText("Hello") + `}}`
	for name, h := range map[string]map[string]string{
		"no preference": {"Accept": ""},
		"curl":          {"Accept": "*/*"},
		"accept ndjson": {"Accept": "application/x-ndjson"},
		"format=ndjson": nil,
	} {
		t.Run(name, func(t *testing.T) {
			u := srv.URL + "/generateUi"
			if h == nil {
				u += "?format=ndjson"
			}
			r := post(t, u, h, body)
			if r.status != 200 || r.header.Get("Content-Type") != "application/x-ndjson" {
				t.Fatalf("got %d %q", r.status, r.header.Get("Content-Type"))
			}
			want := `{"type":"text","text":"` + helloText + `"}` + "\n" +
				`{"type":"toolRequest","toolRequests":[{"name":"addOrUpdateSurface","input":` + helloDefinition + `}]}` + "\n" +
				`{"type":"result","result":{"message":{"role":"model","content":[{"text":"` + helloText + `"}]},"finishReason":"stop","usage":{`
			if !strings.HasPrefix(r.body, want) {
				t.Fatalf("body:\n%s\nwant prefix:\n%s", r.body, want)
			}
			if !strings.HasSuffix(r.body, `"modelCalls":1,"model":"genui/offline"}}}`+"\n") || strings.Count(r.body, "\n") != 3 {
				t.Fatalf("body does not end with exactly one result line:\n%s", r.body)
			}
		})
	}
}

func TestGenerateSSEExactBytes(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	id := startSession(t, srv.URL)
	body := `{"data":{"sessionId":"` + id + `","conversation":` + userText("Hello") + `}}`
	for name, q := range map[string]struct {
		path   string
		accept string
	}{
		"stream=true":        {"/generateUi?stream=true", ""},
		"accept SSE":         {"/generateUi", "text/event-stream"},
		"accept SSE in list": {"/generateUi", "text/event-stream, */*;q=0.1"},
	} {
		t.Run(name, func(t *testing.T) {
			r := post(t, srv.URL+q.path, map[string]string{"Accept": q.accept}, body)
			if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" {
				t.Fatalf("got %d %q", r.status, r.header.Get("Content-Type"))
			}
			want := `data: {"message":{"role":"model","index":0,"content":[{"text":"` + helloText + `"}]}}` + "\n\n" +
				`data: {"message":{"role":"model","index":0,"content":[{"toolRequest":{"name":"addOrUpdateSurface","input":` + helloDefinition + `,"ref":"0"}}]}}` + "\n\n" +
				`data: {"result":{"message":{"role":"model","content":[{"text":"` + helloText + `"}]},"finishReason":"stop","usage":{`
			if !strings.HasPrefix(r.body, want) {
				t.Fatalf("body:\n%s\nwant prefix:\n%s", r.body, want)
			}
			if !strings.HasSuffix(r.body, `"modelCalls":1,"model":"genui/offline"}}}`+"\n\n") || strings.Count(r.body, "\n\n") != 3 {
				t.Fatalf("body does not end with exactly one result event:\n%s", r.body)
			}
		})
	}
}

func TestGenerateJSON(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	body := `{"data":{"catalog":` + mustJSON(t, basicCatalog(t)) + `,"conversation":` + userText("Hello") + `}}`
	r := post(t, srv.URL+"/generateUi", map[string]string{"Accept": "application/json"}, body)
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	want := `{"result":{"message":{"role":"model","content":[{"text":"` + helloText + `"}]},"finishReason":"stop","usage":{`
	if !strings.HasPrefix(r.body, want) || !strings.Contains(r.body, `"toolRequests":[{"name":"addOrUpdateSurface","input":`+helloDefinition+`,"ref":"0"}]}}`) {
		t.Fatalf("body %s", r.body)
	}
}

func TestGenerateStatelessEraWithoutWrapper(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	body := `{"catalog":` + mustJSON(t, basicCatalog(t)) + `,"conversation":` + userText("Hello") + `}`
	r := post(t, srv.URL+"/generateUi", nil, body)
	if r.status != 200 || !strings.Contains(r.body, `{"type":"toolRequest","toolRequests":[{"name":"addOrUpdateSurface","input":`+helloDefinition+`}]}`) {
		t.Fatalf("got %d %s", r.status, r.body)
	}
}

func TestEveryEventIsOneChunk(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	id := startSession(t, srv.URL)
	body := `{"data":{"sessionId":"` + id + `","conversation":` + userText("Hello") + `}}`
	for _, tc := range []struct{ path, sep string }{
		{"/generateUi?stream=true", "\n\n"},
		{"/generateUi?format=ndjson", "\n"},
	} {
		status, chunks := rawChunks(t, srv.URL, tc.path, nil, body)
		if status != "HTTP/1.1 200 OK" {
			t.Fatalf("%s: %s", tc.path, status)
		}
		if len(chunks) != 3 {
			t.Fatalf("%s: %d chunks, want 3 (text, toolRequest, result): %q", tc.path, len(chunks), chunks)
		}
		for _, c := range chunks {
			if !strings.HasSuffix(c, tc.sep) || strings.Count(c, tc.sep) != 1 {
				t.Fatalf("%s: chunk is not exactly one event: %q", tc.path, c)
			}
		}
	}
}

func TestUIEventRoundTrip(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	id := startSession(t, srv.URL)
	conv := `[{"role":"user","parts":[{"type":"text","text":"Hello"}]},
	{"role":"model","parts":[{"type":"ui","definition":{"surfaceId":"surface-1","root":"root","widgets":[{"id":"root","widget":{"Text":{"text":"hi"}}}]}}]},
	{"role":"user","parts":[{"type":"uiEvent","event":{"surfaceId":"surface-1","widgetId":"send","eventType":"onTap","isAction":true,"value":{"reply":"yes"},"timestamp":"2025-01-01T00:00:00Z"}}]}]`
	r := post(t, srv.URL+"/generateUi", nil, `{"data":{"sessionId":"`+id+`","conversation":`+conv+`}}`)
	if r.status != 200 || !strings.Contains(r.body, `"surfaceId":"surface-1"`) || !strings.Contains(r.body, `You used \"send\" (onTap). Values: {\"reply\":\"yes\"}`) {
		t.Fatalf("got %d %s", r.status, r.body)
	}
	// Asking to delete removes the latest surface.
	conv = `[{"role":"user","parts":[{"type":"text","text":"Hello"}]},
	{"role":"model","parts":[{"type":"ui","definition":{"surfaceId":"surface-1","root":"root","widgets":[{"id":"root","widget":{"Text":{"text":"hi"}}}]}}]},
	{"role":"user","parts":[{"type":"text","text":"please delete it"}]}]`
	r = post(t, srv.URL+"/generateUi", nil, `{"data":{"sessionId":"`+id+`","conversation":`+conv+`}}`)
	if !strings.Contains(r.body, `{"type":"toolRequest","toolRequests":[{"name":"deleteSurface","input":{"surfaceId":"surface-1"}}]}`) {
		t.Fatalf("got %d %s", r.status, r.body)
	}
}

func TestHealth(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	for path, want := range map[string]string{
		"/healthz": `{"status":"ok"}`,
		"/readyz":  `"model":"genui/offline"`,
	} {
		res, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		_, _ = b.ReadFrom(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || !strings.Contains(b.String(), want) {
			t.Fatalf("%s: %d %s", path, res.StatusCode, b.String())
		}
		if path == "/readyz" && !strings.Contains(b.String(), `"llm":false`) {
			t.Fatalf("readyz must say offline is not an LLM: %s", b.String())
		}
	}
}

func TestCORS(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	req, _ := newRequest("OPTIONS", srv.URL+"/generateUi", map[string]string{
		"Origin": "http://example.test", "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type",
	})
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 204 || res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("preflight: %d %v", res.StatusCode, res.Header)
	}
}

func TestNoGoroutineOutlivesAStream(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	id := startSession(t, srv.URL)
	body := `{"data":{"sessionId":"` + id + `","conversation":` + userText("Hello") + `}}`
	post(t, srv.URL+"/generateUi?stream=true", nil, body) // warm up lazily started goroutines
	http.DefaultClient.CloseIdleConnections()
	before := goleak.IgnoreCurrent()
	for _, path := range []string{"/generateUi?stream=true", "/generateUi", "/generateUi?format=json"} {
		post(t, srv.URL+path, nil, body)
	}
	http.DefaultClient.CloseIdleConnections()
	srv.CloseClientConnections()
	goleak.VerifyNone(t, before)
}

func TestSampleCatalogs(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	res, err := http.Get(srv.URL + "/catalogs")
	if err != nil {
		t.Fatal(err)
	}
	var list struct{ Catalogs []string }
	_ = json.NewDecoder(res.Body).Decode(&list)
	res.Body.Close()
	if strings.Join(list.Catalogs, ",") != "basic,rich" {
		t.Fatalf("%v", list)
	}
	res, err = http.Get(srv.URL + "/catalogs/rich")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 200 {
		t.Fatal(res.StatusCode)
	}
	res, err = http.Get(srv.URL + "/catalogs/nope")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 404 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatal(res.StatusCode)
	}
}
