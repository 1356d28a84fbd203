package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/genuiserver/genui/genui/offline"
)

type wireError struct {
	Error struct {
		Status  string         `json:"status"`
		Message string         `json:"message"`
		Details map[string]any `json:"details"`
	} `json:"error"`
}

func TestBadRequestsGetStructuredErrors(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	catalog := mustJSON(t, basicCatalog(t))
	id := startSession(t, srv.URL)
	conv := userText("Hello")
	for _, tc := range []struct {
		name, path, body string
		header           map[string]string
		status           int
		code, message    string
	}{
		{"malformed JSON", "/generateUi", `{"data":{"sessionId":`, nil, 400, "INVALID_ARGUMENT", "malformed JSON"},
		{"not an object", "/generateUi", `[1,2]`, nil, 400, "INVALID_ARGUMENT", "request body must be a JSON object"},
		{"empty body", "/generateUi", ``, nil, 400, "INVALID_ARGUMENT", "request body is empty"},
		{"data not an object", "/generateUi", `{"data":"x"}`, nil, 400, "INVALID_ARGUMENT", "data: must be a JSON object"},
		{"trailing data", "/startSession", `{"catalog":` + catalog + `} {}`, nil, 400, "INVALID_ARGUMENT", "malformed JSON"},
		{"wrong type deep", "/generateUi", `{"data":{"sessionId":"` + id + `","conversation":[{"role":"user","parts":[{"type":"text","text":"a"},{"type":"text","text":5}]}]}}`, nil, 400, "INVALID_ARGUMENT", "conversation[0].parts[1].text: got number, want string"},
		{"wrong type conversation", "/generateUi", `{"data":{"sessionId":"` + id + `","conversation":{}}}`, nil, 400, "INVALID_ARGUMENT", "conversation: got object, want array"},
		{"missing session and catalog", "/generateUi", `{"data":{"conversation":` + conv + `}}`, nil, 400, "INVALID_ARGUMENT", "sessionId: required"},
		{"both session and catalog", "/generateUi", `{"data":{"sessionId":"x","catalog":{},"conversation":` + conv + `}}`, nil, 400, "INVALID_ARGUMENT", "not both"},
		{"missing conversation", "/generateUi", `{"data":{"sessionId":"` + id + `"}}`, nil, 400, "INVALID_ARGUMENT", "conversation: required"},
		{"empty conversation", "/generateUi", `{"data":{"sessionId":"` + id + `","conversation":[]}}`, nil, 400, "INVALID_ARGUMENT", "conversation: must contain at least one message"},
		{"bad role", "/generateUi", `{"data":{"sessionId":"` + id + `","conversation":[{"role":"system","parts":[{"type":"text","text":"a"}]}]}}`, nil, 400, "INVALID_ARGUMENT", `conversation[0].role: must be "user" or "model"`},
		{"unknown part type", "/generateUi", `{"data":{"sessionId":"` + id + `","conversation":[{"role":"user","parts":[{"type":"video"}]}]}}`, nil, 400, "INVALID_ARGUMENT", `conversation[0].parts[0].type: unknown part type "video"`},
		{"image without mimeType", "/generateUi", `{"data":{"sessionId":"` + id + `","conversation":[{"role":"user","parts":[{"type":"image","base64":"aGk="}]}]}}`, nil, 400, "INVALID_ARGUMENT", "conversation[0].parts[0].mimeType: required when base64 is set"},
		{"image bad base64", "/generateUi", `{"data":{"sessionId":"` + id + `","conversation":[{"role":"user","parts":[{"type":"image","base64":"!!","mimeType":"image/png"}]}]}}`, nil, 400, "INVALID_ARGUMENT", "conversation[0].parts[0].base64: not valid base64"},
		{"uiEvent without widget", "/generateUi", `{"data":{"sessionId":"` + id + `","conversation":[{"role":"user","parts":[{"type":"uiEvent","event":{"surfaceId":"s"}}]}]}}`, nil, 400, "INVALID_ARGUMENT", "conversation[0].parts[0].event.widgetId: required"},
		{"last message from model", "/generateUi", `{"data":{"sessionId":"` + id + `","conversation":[{"role":"model","parts":[{"type":"text","text":"a"}]}]}}`, nil, 400, "INVALID_ARGUMENT", "the last message must come from the user"},
		{"unknown session", "/generateUi", `{"data":{"sessionId":"nope","conversation":` + conv + `}}`, nil, 404, "NOT_FOUND", "sessionId: unknown or expired session"},
		{"unknown session SSE", "/generateUi?stream=true", `{"data":{"sessionId":"nope","conversation":` + conv + `}}`, nil, 404, "NOT_FOUND", "sessionId: unknown or expired session"},
		{"catalog not an object", "/startSession", `{"data":{"protocolVersion":"0.1.0","catalog":"x"}}`, nil, 400, "INVALID_ARGUMENT", "catalog: got string, want object"},
		{"protocolVersion missing", "/startSession", `{"data":{"catalog":` + catalog + `}}`, nil, 400, "INVALID_ARGUMENT", "protocolVersion: required"},
		{"protocolVersion not a string", "/startSession", `{"data":{"protocolVersion":1,"catalog":` + catalog + `}}`, nil, 400, "INVALID_ARGUMENT", "protocolVersion: got number, want string"},
		{"text not UTF-8", "/generateUi", "{\"data\":{\"sessionId\":\"" + id + "\",\"conversation\":[{\"role\":\"user\",\"parts\":[{\"type\":\"text\",\"text\":\"ok\"},{\"type\":\"text\",\"text\":\"caf\xe9\"}]}]}}", nil, 400, "INVALID_ARGUMENT", "conversation[0].parts[1].text: not valid UTF-8"},
		{"catalog not UTF-8", "/startSession", "{\"protocolVersion\":\"0.1.0\",\"catalog\":{\"description\":\"\xff\"}}", nil, 400, "INVALID_ARGUMENT", "catalog.description: not valid UTF-8"},
		{"catalog missing", "/startSession", `{"data":{"protocolVersion":"0.1.0"}}`, nil, 400, "INVALID_ARGUMENT", "catalog: required"},
		{"catalog not a schema", "/startSession", `{"data":{"protocolVersion":"0.1.0","catalog":{"type":"objekt"}}}`, nil, 400, "INVALID_ARGUMENT", "catalog: catalog is not a valid JSON Schema"},
		{"catalog without widgets", "/startSession", `{"data":{"protocolVersion":"0.1.0","catalog":{"type":"object"}}}`, nil, 400, "INVALID_ARGUMENT", "catalog: catalog defines no widgets"},
		{"catalog remote ref", "/startSession", `{"data":{"protocolVersion":"0.1.0","catalog":{"$ref":"file:///etc/passwd"}}}`, nil, 400, "INVALID_ARGUMENT", "is not allowed"},
		{"stateless bad catalog", "/generateUi", `{"data":{"catalog":{"type":5},"conversation":` + conv + `}}`, nil, 400, "INVALID_ARGUMENT", "catalog: catalog is not a valid JSON Schema"},
		{"oversize body", "/generateUi", `{"data":{"sessionId":"` + strings.Repeat("x", 1<<20) + `"}}`, nil, 413, "INVALID_ARGUMENT", "request body exceeds the limit of 1048576 bytes"},
		{"wrong content type", "/generateUi", `a=b`, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, "INVALID_ARGUMENT", "Content-Type: expected application/json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := post(t, srv.URL+tc.path, tc.header, tc.body)
			checkError(t, r, tc.status, tc.code, tc.message)
		})
	}
}

func checkError(t *testing.T, r response, status int, code, message string) {
	t.Helper()
	if r.status != status || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %q %s, want %d", r.status, r.header.Get("Content-Type"), r.body, status)
	}
	var e wireError
	if err := json.Unmarshal([]byte(r.body), &e); err != nil {
		t.Fatalf("body is not a JSON error: %s", r.body)
	}
	if e.Error.Status != code || !strings.Contains(e.Error.Message, message) {
		t.Fatalf("got %s %q, want %s containing %q", e.Error.Status, e.Error.Message, code, message)
	}
}

func TestUnknownRoutesAnswerJSON(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	res, err := http.Get(srv.URL + "/nope")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 404 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	res, err = http.Get(srv.URL + "/generateUi")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != 405 || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("%d %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
}

func TestChunkedRequestBodyIsRead(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	id := startSession(t, srv.URL)
	body := `{"data":{"sessionId":"` + id + `","conversation":` + userText("Hello") + `}}`
	// An io.Reader of unknown length makes the client send Transfer-Encoding: chunked.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/generateUi", struct{ *strings.Reader }{strings.NewReader(body)})
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if req.ContentLength != 0 && req.ContentLength != -1 {
		t.Fatalf("request was not chunked: %d", req.ContentLength)
	}
	var b strings.Builder
	buf := make([]byte, 4096)
	for {
		n, err := res.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			break
		}
	}
	if res.StatusCode != 200 || !strings.Contains(b.String(), `"surfaceId":"surface-1"`) {
		t.Fatalf("%d %s", res.StatusCode, b.String())
	}
}
