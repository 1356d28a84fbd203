package httpapi_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/ai"
	a2uix "github.com/firebase/genkit/go/plugins/a2ui/exp"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
)

// What the offline model writes for the text "Hello" in an A2UI v0.9 turn on the basic
// catalog: each component as soon as the surface stays valid with it.
var helloA2UI = []string{
	`{"version":"v0.9","createSurface":{"catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json","surfaceId":"surface-1"}}`,
	`{"version":"v0.9","updateDataModel":{"path":"/form","surfaceId":"surface-1","value":{"reply":""}}}`,
	`{"version":"v0.9","updateComponents":{"surfaceId":"surface-1","components":[{"children":[],"component":"Column","id":"root"}]}}`,
	`{"version":"v0.9","updateComponents":{"surfaceId":"surface-1","components":[{"component":"Text","id":"title","text":"Offline reply","variant":"h3"},{"children":["title"],"component":"Column","id":"root"}]}}`,
	`{"version":"v0.9","updateComponents":{"surfaceId":"surface-1","components":[{"children":[],"component":"Column","id":"body"},{"child":"body","component":"Card","id":"card"},{"children":["title","card"],"component":"Column","id":"root"}]}}`,
	`{"version":"v0.9","updateComponents":{"surfaceId":"surface-1","components":[{"component":"Text","id":"message","text":"You said: Hello"},{"children":["message"],"component":"Column","id":"body"}]}}`,
	`{"version":"v0.9","updateComponents":{"surfaceId":"surface-1","components":[{"component":"TextField","id":"reply","label":"Reply","value":{"path":"/form/reply"}},{"children":["message","reply"],"component":"Column","id":"body"}]}}`,
	`{"version":"v0.9","updateComponents":{"surfaceId":"surface-1","components":[{"component":"Text","id":"send-label","text":"Send"},{"action":{"event":{"context":{"reply":{"path":"/form/reply"}},"name":"send"}},"child":"send-label","component":"Button","id":"send","variant":"primary"},{"children":["message","reply","send"],"component":"Column","id":"body"}]}}`,
}

const helloA2UIText = `{"type":"text","text":"Here is a surface for your message.\n"}`

// a2uiTurn is a /generateA2ui NDJSON response, split.
type a2uiTurn struct {
	messages [][]byte // the A2UI lines
	text     []string // the text lines
	result   map[string]any
	err      map[string]any
	lines    []string
}

func parseA2UITurn(t *testing.T, body string) a2uiTurn {
	t.Helper()
	var out a2uiTurn
	for _, l := range strings.Split(strings.TrimSuffix(body, "\n"), "\n") {
		out.lines = append(out.lines, l)
		var head struct {
			Type   *string
			Text   string
			Result map[string]any
			Error  map[string]any
		}
		if err := json.Unmarshal([]byte(l), &head); err != nil {
			t.Fatalf("line is not JSON: %q", l)
		}
		switch {
		case head.Type == nil:
			out.messages = append(out.messages, []byte(l))
		case *head.Type == "text":
			out.text = append(out.text, head.Text)
		case *head.Type == "result":
			out.result = head.Result
		case *head.Type == "error":
			out.err = head.Error
		}
	}
	return out
}

func TestA2UINDJSONExactBytes(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	for name, body := range map[string]string{
		"bare":         `{"conversation":` + userText("Hello") + `}`,
		"data wrapper": `{"data":{"version":"v0.9","conversation":` + userText("Hello") + `}}`,
	} {
		t.Run(name, func(t *testing.T) {
			r := post(t, srv.URL+"/generateA2ui", nil, body)
			if r.status != 200 || r.header.Get("Content-Type") != "application/x-ndjson" || r.header.Get("X-Genkit-Stream-Id") == "" {
				t.Fatalf("got %d %q %q", r.status, r.header.Get("Content-Type"), r.body)
			}
			want := helloA2UIText + "\n" + strings.Join(helloA2UI, "\n") + "\n" +
				`{"type":"result","result":{"message":{"role":"model","content":[{"text":"Here is a surface for your message.\n"}]},"finishReason":"stop","usage":{`
			if !strings.HasPrefix(r.body, want) {
				t.Fatalf("body:\n%s\nwant prefix:\n%s", r.body, want)
			}
			turn := parseA2UITurn(t, r.body)
			if len(turn.lines) != len(helloA2UI)+2 || turn.result == nil {
				t.Fatalf("%d lines, want %d ending with the result:\n%s", len(turn.lines), len(helloA2UI)+2, r.body)
			}
			a2uitest.New(t, "v0.9", nil).CheckAll(t, turn.messages...)
		})
	}
}

func TestA2UISSEUsesGenkitDataParts(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	r := post(t, srv.URL+"/generateA2ui", map[string]string{"Accept": "text/event-stream"}, `{"conversation":`+userText("Hello")+`}`)
	if r.status != 200 || r.header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("got %d %q", r.status, r.header.Get("Content-Type"))
	}
	var want strings.Builder
	want.WriteString(`data: {"message":{"role":"model","index":0,"content":[{"text":"Here is a surface for your message.\n"}]}}` + "\n\n")
	for _, m := range helloA2UI {
		want.WriteString(`data: {"message":{"role":"model","index":0,"content":[{"data":{"envelopes":[` + m + `]},"metadata":{"mimeType":"application/a2ui+json"}}]}}` + "\n\n")
	}
	want.WriteString(`data: {"result":{"message":{"role":"model","content":[{"text":"Here is a surface for your message.\n"}]},"finishReason":"stop","usage":{`)
	if !strings.HasPrefix(r.body, want.String()) {
		t.Fatalf("body:\n%s\nwant prefix:\n%s", r.body, want.String())
	}
	if strings.Count(r.body, "\n\n") != len(helloA2UI)+2 {
		t.Fatalf("want %d events:\n%s", len(helloA2UI)+2, r.body)
	}
}

// helloFinal is helloA2UI in its final state: what a result handing the turn over whole
// carries.
func helloFinal() []string {
	raw := make([]json.RawMessage, len(helloA2UI))
	for i, m := range helloA2UI {
		raw[i] = json.RawMessage(m)
	}
	var out []string
	for _, m := range a2ui.Final(a2ui.V09, raw) {
		out = append(out, string(m))
	}
	return out
}

// The JSON answer holds the turn's surface in its data part once, in its final state:
// its createSurface, its data model, and one update of every component.
func TestA2UIJSONHoldsTheFinalSurfaceInTheDataPart(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	r := post(t, srv.URL+"/generateA2ui", map[string]string{"Accept": "application/json"}, `{"conversation":`+userText("Hello")+`}`)
	if r.status != 200 || r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("got %d %q %s", r.status, r.header.Get("Content-Type"), r.body)
	}
	final := helloFinal()
	if len(final) != 3 {
		t.Fatalf("the final state is %d messages: %q", len(final), final)
	}
	want := `{"result":{"message":{"role":"model","content":[{"text":"Here is a surface for your message.\n"},{"data":{"envelopes":[` +
		strings.Join(final, ",") + `]},"metadata":{"mimeType":"application/a2ui+json"}}]},"finishReason":"stop","usage":{`
	if !strings.HasPrefix(r.body, want) {
		t.Fatalf("body:\n%s\nwant prefix:\n%s", r.body, want)
	}
}

// TestA2UIActionRoundTrip sends the turn's messages back as the model's message, then an
// action of the user: the next turn updates the surface.
func TestA2UIActionRoundTrip(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	v := a2uitest.New(t, "v0.9", nil)
	first := parseA2UITurn(t, post(t, srv.URL+"/generateA2ui", nil, `{"conversation":`+userText("Hello")+`}`).body)
	v.CheckAll(t, first.messages...)
	action := `{"version":"v0.9","action":{"name":"send","surfaceId":"surface-1","sourceComponentId":"send","timestamp":"2026-11-22T12:00:00Z","context":{"reply":"Hi there"}}}`
	if err := v.CheckClient([]byte(action)); err != nil {
		t.Fatalf("the action is not a valid client message: %v", err)
	}
	var parts []string
	for _, m := range first.messages {
		parts = append(parts, `{"type":"a2ui","message":`+string(m)+`}`)
	}
	body := `{"conversation":[` +
		`{"role":"user","parts":[{"type":"text","text":"Hello"}]},` +
		`{"role":"model","parts":[{"type":"text","text":"Here is a surface for your message."},` + strings.Join(parts, ",") + `]},` +
		`{"role":"user","parts":[{"type":"a2ui","message":` + action + `}]}]}`
	r := post(t, srv.URL+"/generateA2ui", nil, body)
	second := parseA2UITurn(t, r.body)
	if r.status != 200 || second.result == nil {
		t.Fatalf("got %d:\n%s", r.status, r.body)
	}
	want := []string{
		`{"version":"v0.9","updateComponents":{"surfaceId":"surface-1","components":[{"component":"Text","id":"message","text":"You sent \"send\" with {\"reply\":\"Hi there\"}."}]}}`,
		`{"version":"v0.9","updateDataModel":{"path":"/form/reply","surfaceId":"surface-1","value":""}}`,
	}
	if got := strings.Join(toStrings(second.messages), "\n"); got != strings.Join(want, "\n") {
		t.Fatalf("second turn:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	v.CheckAll(t, second.messages...)
}

func toStrings(bs [][]byte) []string {
	out := make([]string, len(bs))
	for i, b := range bs {
		out[i] = string(b)
	}
	return out
}

func TestA2UIv08(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	v := a2uitest.New(t, "v0.8", nil)
	r := post(t, srv.URL+"/generateA2ui", nil, `{"version":"v0.8","conversation":`+userText("Hello")+`}`)
	turn := parseA2UITurn(t, r.body)
	if r.status != 200 || turn.result == nil || len(turn.messages) < 5 {
		t.Fatalf("got %d:\n%s", r.status, r.body)
	}
	v.CheckAll(t, turn.messages...)
	// The root goes out first, then beginRendering, so that the client renders at once.
	if !strings.HasPrefix(string(turn.messages[0]), `{"surfaceUpdate":{"surfaceId":"surface-1","components":[{"component":{"Column":`) ||
		string(turn.messages[1]) != `{"beginRendering":{"catalogId":"https://a2ui.org/specification/v0_8/standard_catalog_definition.json","root":"root","surfaceId":"surface-1"}}` {
		t.Fatalf("first messages:\n%s\n%s", turn.messages[0], turn.messages[1])
	}
	// An action in the v0.8 shape.
	var parts []string
	for _, m := range turn.messages {
		parts = append(parts, `{"type":"a2ui","message":`+string(m)+`}`)
	}
	action := `{"userAction":{"name":"send","surfaceId":"surface-1","sourceComponentId":"send","timestamp":"2026-11-22T12:00:00Z","context":{"reply":"Hi"}}}`
	if err := v.CheckClient([]byte(action)); err != nil {
		t.Fatalf("the action is not a valid v0.8 client message: %v", err)
	}
	r = post(t, srv.URL+"/generateA2ui", nil, `{"version":"v0.8","conversation":[`+
		`{"role":"user","parts":[{"type":"text","text":"Hello"}]},{"role":"model","parts":[`+strings.Join(parts, ",")+`]},`+
		`{"role":"user","parts":[{"type":"a2ui","message":`+action+`}]}]}`)
	second := parseA2UITurn(t, r.body)
	if r.status != 200 || second.result == nil || len(second.messages) != 2 {
		t.Fatalf("got %d:\n%s", r.status, r.body)
	}
	if !strings.Contains(string(second.messages[0]), `You sent \"send\" with {\"reply\":\"Hi\"}.`) {
		t.Fatalf("second turn: %s", second.messages[0])
	}
	v.CheckAll(t, second.messages...)
}

// TestA2UISessions starts a session with a client's capabilities; its turns name the
// catalog by the id the client advertised (Flutter's id of the basic catalog here).
func TestA2UISessions(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	caps := `{"v0.9":{"supportedCatalogIds":["https://a2ui.org/specification/v0_9/basic_catalog.json"]}}`
	r := post(t, srv.URL+"/startSession", nil, `{"data":{"protocolVersion":"0.1.0","a2uiClientCapabilities":`+caps+`}}`)
	var out struct{ Result string }
	if r.status != 200 || json.Unmarshal([]byte(r.body), &out) != nil || !sessionID.MatchString(out.Result) {
		t.Fatalf("startSession: %d %s", r.status, r.body)
	}
	r = post(t, srv.URL+"/generateA2ui", nil, `{"sessionId":"`+out.Result+`","conversation":`+userText("Hello")+`}`)
	turn := parseA2UITurn(t, r.body)
	if r.status != 200 || turn.result == nil {
		t.Fatalf("got %d:\n%s", r.status, r.body)
	}
	if want := `{"version":"v0.9","createSurface":{"catalogId":"https://a2ui.org/specification/v0_9/basic_catalog.json","surfaceId":"surface-1"}}`; string(turn.messages[0]) != want {
		t.Fatalf("createSurface: %s\nwant %s", turn.messages[0], want)
	}
	a2uitest.New(t, "v0.9", nil).CheckAll(t, turn.messages...)

	// A genui session is not an A2UI one, nor the other way round.
	genuiSession := startSession(t, srv.URL)
	r = post(t, srv.URL+"/generateA2ui", nil, `{"sessionId":"`+genuiSession+`","conversation":`+userText("Hello")+`}`)
	assertError(t, r, 400, "INVALID_ARGUMENT", "sessionId: the session was started with a genui catalog")
	r = post(t, srv.URL+"/generateUi", nil, `{"sessionId":"`+out.Result+`","conversation":`+userText("Hello")+`}`)
	assertError(t, r, 400, "INVALID_ARGUMENT", "sessionId: the session was started with A2UI capabilities")
	r = post(t, srv.URL+"/generateA2ui", nil, `{"version":"v0.8","sessionId":"`+out.Result+`","conversation":`+userText("Hello")+`}`)
	assertError(t, r, 400, "INVALID_ARGUMENT", "version: the session speaks A2UI v0.9, the request v0.8")
	r = post(t, srv.URL+"/generateA2ui", nil, `{"sessionId":"nope","conversation":`+userText("Hello")+`}`)
	assertError(t, r, 404, "NOT_FOUND", "sessionId: unknown or expired session")
}

// TestA2UIInlineCatalog runs a turn on a catalog the client sends inline, in the form
// Flutter and web_core send: components as JSON Schemas, functions as a list.
func TestA2UIInlineCatalog(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	const id = "https://example.com/catalogs/mini.json"
	str := `{"type":"string"}`
	dyn := `{"$ref":"https://a2ui.org/specification/v0_9/common_types.json#/$defs/DynamicString"}`
	inline := `{"catalogId":"` + id + `","components":{` +
		`"Text":{"type":"object","properties":{"id":` + str + `,"component":{"const":"Text"},"text":` + dyn + `},"required":["id","component","text"],"additionalProperties":false},` +
		`"Column":{"type":"object","properties":{"id":` + str + `,"component":{"const":"Column"},"children":{"type":"array","items":` + str + `}},"required":["id","component","children"],"additionalProperties":false},` +
		`"TextField":{"type":"object","properties":{"id":` + str + `,"component":{"const":"TextField"},"label":` + dyn + `,"value":` + dyn + `},"required":["id","component","label"],"additionalProperties":false},` +
		`"Button":{"type":"object","properties":{"id":` + str + `,"component":{"const":"Button"},"child":` + str + `,"variant":` + str + `,"action":{"$ref":"https://a2ui.org/specification/v0_9/common_types.json#/$defs/Action"}},"required":["id","component","child","action"],"additionalProperties":false}},` +
		`"functions":[{"name":"shout","description":"Upper-cases a string.","parameters":{"type":"object","properties":{"value":` + dyn + `},"required":["value"]},"returnType":"string"}]}`
	caps := `{"v0.9":{"supportedCatalogIds":["` + id + `"],"inlineCatalogs":[` + inline + `]}}`
	r := post(t, srv.URL+"/generateA2ui", nil, `{"a2uiClientCapabilities":`+caps+`,"conversation":`+userText("Hello")+`}`)
	turn := parseA2UITurn(t, r.body)
	if r.status != 200 || turn.result == nil || turn.err != nil {
		t.Fatalf("got %d:\n%s", r.status, r.body)
	}
	if !strings.Contains(string(turn.messages[0]), `"catalogId":"`+id+`"`) {
		t.Fatalf("createSurface: %s", turn.messages[0])
	}
	for _, m := range turn.messages {
		if strings.Contains(string(m), `"Card"`) {
			t.Fatalf("a component the inline catalog lacks: %s", m)
		}
	}
	// The messages are valid A2UI; their components are the basic catalog's subset.
	basic, err := a2uitest.Find()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := basic.File("v0.9/basic")
	if err != nil {
		t.Fatal(err)
	}
	a2uitest.New(t, "v0.9", map[string][]byte{id: doc}).CheckAll(t, turn.messages...)
}

func assertError(t *testing.T, r response, status int, code, message string) {
	t.Helper()
	var e struct {
		Error struct {
			Status  string
			Message string
			Details map[string]any
		}
	}
	if err := json.Unmarshal([]byte(r.body), &e); err != nil || r.status != status || e.Error.Status != code || !strings.HasPrefix(e.Error.Message, message) {
		t.Fatalf("got %d %s\nwant %d %s %q…", r.status, r.body, status, code, message)
	}
	if r.header.Get("Content-Type") != "application/json" {
		t.Fatalf("error Content-Type %q", r.header.Get("Content-Type"))
	}
}

func TestA2UIBadRequests(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	hello := userText("Hello")
	model := func(msg string) string {
		return `[{"role":"user","parts":[{"type":"text","text":"Hi"}]},{"role":"model","parts":[{"type":"a2ui","message":` + msg + `}]},{"role":"user","parts":[{"type":"text","text":"More"}]}]`
	}
	user := func(msg string) string {
		return `[{"role":"user","parts":[{"type":"a2ui","message":` + msg + `}]}]`
	}
	for _, tc := range []struct {
		name, body, message string
		status              int
	}{
		{"unknown version", `{"version":"v2","conversation":` + hello + `}`, `version: "v2" is not an A2UI version this service speaks`, 400},
		{"capabilities not an object", `{"a2uiClientCapabilities":[1],"conversation":` + hello + `}`, `a2uiClientCapabilities: must be an object`, 400},
		{"capabilities of another version", `{"a2uiClientCapabilities":{"v0.8":{"supportedCatalogIds":["x"]}},"conversation":` + hello + `}`, `a2uiClientCapabilities: has no "v0.9" capabilities`, 400},
		{"catalog ids not strings", `{"a2uiClientCapabilities":{"v0.9":{"supportedCatalogIds":[1]}},"conversation":` + hello + `}`, `a2uiClientCapabilities.v0.9.supportedCatalogIds: must be an array of catalog ids`, 400},
		{"unknown catalog only", `{"a2uiClientCapabilities":{"v0.9":{"supportedCatalogIds":["https://example.com/c.json"]}},"conversation":` + hello + `}`, `a2uiClientCapabilities.v0.9.supportedCatalogIds: none of ["https://example.com/c.json"] is a catalog this server knows`, 400},
		{"inline catalog without id", `{"a2uiClientCapabilities":{"v0.9":{"supportedCatalogIds":[],"inlineCatalogs":[{"components":{}}]}},"conversation":` + hello + `}`, `a2uiClientCapabilities.v0.9.inlineCatalogs[0].catalogId: required`, 400},
		{"inline catalog not a schema", `{"a2uiClientCapabilities":{"v0.9":{"supportedCatalogIds":["c"],"inlineCatalogs":[{"catalogId":"c","components":{"T":{"type":5}}}]}},"conversation":` + hello + `}`, `a2uiClientCapabilities.inlineCatalogs[0]: components.T: not a valid JSON Schema`, 400},
		{"session and capabilities", `{"sessionId":"x","a2uiClientCapabilities":{"v0.9":{"supportedCatalogIds":["x"]}},"conversation":` + hello + `}`, `sessionId: send either sessionId or a2uiClientCapabilities, not both`, 400},
		{"no conversation", `{}`, `conversation: required`, 400},
		{"ui part", `{"conversation":[{"role":"user","parts":[{"type":"uiEvent","event":{}}]}]}`, `conversation[0].parts[0].type: uiEvent parts belong to /generateUi`, 400},
		{"a2ui part without message", `{"conversation":[{"role":"user","parts":[{"type":"a2ui"}]}]}`, `conversation[0].parts[0].message: required for a2ui parts`, 400},
		{"a2ui message not an object", `{"conversation":` + user(`"hi"`) + `}`, `conversation[0].parts[0].message: must be an A2UI message object, got string`, 400},
		{"action without name", `{"conversation":` + user(`{"version":"v0.9","action":{"surfaceId":"s"}}`) + `}`, `conversation[0].parts[0].message.action.name: required`, 400},
		{"action and error", `{"conversation":` + user(`{"action":{"name":"a","surfaceId":"s"},"error":{}}`) + `}`, `conversation[0].parts[0].message: has action and error`, 400},
		{"unknown client message", `{"conversation":` + user(`{"version":"v0.9","click":{}}`) + `}`, `conversation[0].parts[0].message.click: unknown key of a client message`, 400},
		{"server message of another version", `{"conversation":` + model(`{"surfaceUpdate":{"surfaceId":"s","components":[]}}`) + `}`, `conversation[1].parts[0].message: not an A2UI v0.9 server message: surfaceUpdate: surfaceUpdate is an A2UI v0.8 message; in v0.9 use updateComponents`, 400},
		{"server message without surface", `{"conversation":` + model(`{"version":"v0.9","deleteSurface":{}}`) + `}`, `conversation[1].parts[0].message: not an A2UI v0.9 server message: deleteSurface.surfaceId: required`, 400},
		{"a2ui part in /generateUi", ``, `conversation[0].parts[0].type: a2ui parts belong to /generateA2ui`, 400},
		{"data model not an object", `{"a2uiClientDataModel":[1],"conversation":` + hello + `}`, `a2uiClientDataModel: must be an object`, 400},
		{"last message from the model", `{"conversation":[{"role":"user","parts":[{"type":"text","text":"Hi"}]},{"role":"model","parts":[{"type":"text","text":"Yo"}]}]}`, `conversation[1].role: the last message must come from the user`, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "/generateA2ui"
			body := tc.body
			if body == "" {
				path = "/generateUi"
				body = `{"catalog":` + mustJSON(t, basicCatalog(t)) + `,"conversation":` + user(`{"version":"v0.9","action":{"name":"a","surfaceId":"s"}}`) + `}`
			}
			assertError(t, post(t, srv.URL+path, nil, body), tc.status, "INVALID_ARGUMENT", tc.message)
		})
	}
}

// TestA2UIResume re-reads an A2UI stream by its id: the same lines.
func TestA2UIResume(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	first := post(t, srv.URL+"/generateA2ui", nil, `{"conversation":`+userText("Hello")+`}`)
	id := first.header.Get("X-Genkit-Stream-Id")
	again := post(t, srv.URL+"/generateA2ui", map[string]string{"X-Genkit-Stream-Id": id}, `{}`)
	if again.status != 200 || again.body != first.body {
		t.Fatalf("resumed %d:\n%s\nwant:\n%s", again.status, again.body, first.body)
	}
	// After the first three lines.
	rest := post(t, srv.URL+"/generateA2ui?streamId="+id+"&after=3", nil, `{}`)
	lines := strings.SplitAfter(first.body, "\n")
	if rest.body != strings.Join(lines[3:], "") {
		t.Fatalf("after=3:\n%s", rest.body)
	}
	// As JSON: the whole result, the surface in its data part in its final state.
	whole := post(t, srv.URL+"/generateA2ui?streamId="+id, map[string]string{"Accept": "application/json"}, `{}`)
	if whole.status != http.StatusOK || !strings.Contains(whole.body, `{"data":{"envelopes":[`+strings.Join(helloFinal(), ",")+`]},"metadata":{"mimeType":"application/a2ui+json"}}`) {
		t.Fatalf("JSON resume: %d %s", whole.status, whole.body)
	}
}

// TestA2UIChunksReadByGenkit decodes the SSE chunks of an A2UI turn as Genkit chunks and
// reads them with Genkit's own A2UI plugin (plugins/a2ui/exp): it finds every message.
func TestA2UIChunksReadByGenkit(t *testing.T) {
	srv, _ := newServer(t, offline.Name)
	r := post(t, srv.URL+"/generateA2ui", map[string]string{"Accept": "text/event-stream"}, `{"conversation":`+userText("Hello")+`}`)
	var got []string
	for _, ev := range strings.Split(strings.TrimSuffix(r.body, "\n\n"), "\n\n") {
		var frame struct {
			Message *ai.ModelResponseChunk `json:"message"`
		}
		if err := json.Unmarshal([]byte(strings.TrimPrefix(ev, "data: ")), &frame); err != nil {
			t.Fatalf("event %q: %v", ev, err)
		}
		if frame.Message == nil {
			continue
		}
		for _, env := range a2uix.EnvelopesFromParts(frame.Message.Content) {
			b, err := json.Marshal(env)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, string(b))
		}
	}
	if len(got) != len(helloA2UI) {
		t.Fatalf("Genkit read %d envelopes, want %d:\n%s", len(got), len(helloA2UI), strings.Join(got, "\n"))
	}
	for i := range got {
		// Genkit decodes to maps; the same message, keys sorted.
		var a, b any
		_ = json.Unmarshal([]byte(got[i]), &a)
		_ = json.Unmarshal([]byte(helloA2UI[i]), &b)
		if mustJSON(t, a) != mustJSON(t, b) {
			t.Errorf("envelope %d: %s\nwant %s", i, got[i], helloA2UI[i])
		}
	}
}
