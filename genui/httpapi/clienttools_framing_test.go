package httpapi_test

import (
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
)

// ctFraming is how a client asks for a turn and reads its response.
type ctFraming struct {
	name        string
	path        string
	header      map[string]string
	contentType string
	whole       bool // the JSON framing: one {"result":…} object
	a2ui        bool
}

var ctFramings = []ctFraming{
	{name: "genui-ndjson", path: "/generateUi", contentType: "application/x-ndjson"},
	{name: "genui-json", path: "/generateUi", header: map[string]string{"Accept": "application/json"}, contentType: "application/json", whole: true},
	{name: "a2ui-ndjson", path: "/generateA2ui", contentType: "application/x-ndjson", a2ui: true},
	{name: "a2ui-json", path: "/generateA2ui", header: map[string]string{"Accept": "application/json"}, contentType: "application/json", whole: true, a2ui: true},
}

// ctCall is a call of a client tool, as the client read it.
type ctCall struct {
	ID, Name string
	Input    json.RawMessage
}

// ctTurn is what a client reads from one response.
type ctTurn struct {
	// kinds lists what the response carried, in the order it carried it: "text", "ui"
	// (a surface or an A2UI message), "call".
	kinds    []string
	text     string   // the streamed text (NDJSON), or the result's text (JSON)
	surfaces []string // the text of the "message" component of each surface shown
	a2ui     [][]byte
	calls    []ctCall // toolCall lines (NDJSON) or interrupts of the result (JSON)
	// The result: its finish reason, its text, and the pending calls it lists.
	finish     string
	resultText string
	pending    []ctCall
	// replay holds the parts of the model message a stateless client sends back.
	replay []string
}

// A stateless call id: 128 random bits, base64url.
var statelessCallID = regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`)

// keysOf returns the sorted keys of a JSON object.
func keysOf(t *testing.T, raw []byte) []string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not a JSON object: %v\n%s", err, raw)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func jsonEqual(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, a)
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return reflect.DeepEqual(x, y)
}

// interruptOf checks that a result content part is exactly Genkit's interrupt,
// {"toolRequest":{"name","input","ref"},"metadata":{"interrupt":true}}, and returns the
// call it holds; ok is false for a part that holds no toolRequest.
func interruptOf(t *testing.T, part json.RawMessage) (c ctCall, ok bool) {
	t.Helper()
	var p struct {
		ToolRequest json.RawMessage `json:"toolRequest"`
		Metadata    json.RawMessage `json:"metadata"`
	}
	if err := json.Unmarshal(part, &p); err != nil {
		t.Fatalf("content part: %v\n%s", err, part)
	}
	if p.ToolRequest == nil {
		return c, false
	}
	if got := keysOf(t, part); !slices.Equal(got, []string{"metadata", "toolRequest"}) {
		t.Errorf("an interrupt part has the keys %v, want [metadata toolRequest]: %s", got, part)
	}
	if !jsonEqual(t, p.Metadata, []byte(`{"interrupt":true}`)) {
		t.Errorf("an interrupt's metadata is %s, want {\"interrupt\":true}", p.Metadata)
	}
	if got := keysOf(t, p.ToolRequest); !slices.Equal(got, []string{"input", "name", "ref"}) {
		t.Errorf("an interrupt's toolRequest has the keys %v, want [input name ref]: %s", got, p.ToolRequest)
	}
	var tr struct {
		Name, Ref string
		Input     json.RawMessage
	}
	_ = json.Unmarshal(p.ToolRequest, &tr)
	return ctCall{ID: tr.Ref, Name: tr.Name, Input: tr.Input}, true
}

// genuiSurfaceText returns the text of the "message" widget of an addOrUpdateSurface
// input, and the input as a "ui" part for the replay.
func genuiSurface(t *testing.T, input json.RawMessage) (text, part string) {
	t.Helper()
	var in struct {
		SurfaceID  string `json:"surfaceId"`
		Definition struct {
			Root    string            `json:"root"`
			Widgets []json.RawMessage `json:"widgets"`
		} `json:"definition"`
	}
	if err := json.Unmarshal(input, &in); err != nil {
		t.Fatalf("addOrUpdateSurface input: %v\n%s", err, input)
	}
	for _, w := range in.Definition.Widgets {
		var wd struct {
			ID     string
			Widget struct{ Text *struct{ Text string } }
		}
		if json.Unmarshal(w, &wd) == nil && wd.ID == "message" && wd.Widget.Text != nil {
			text = wd.Widget.Text.Text
		}
	}
	part = `{"type":"ui","definition":{"surfaceId":` + strconv.Quote(in.SurfaceID) + `,"root":` + strconv.Quote(in.Definition.Root) +
		`,"widgets":[` + string(joinRaw(in.Definition.Widgets)) + `]}}`
	return text, part
}

func joinRaw(rs []json.RawMessage) []byte {
	var b []byte
	for i, r := range rs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, r...)
	}
	return b
}

// a2uiSurfaceText returns the text of the "message" Text component an A2UI message sets,
// if it sets one.
func a2uiSurfaceText(msg []byte) (string, bool) {
	var m struct {
		UpdateComponents *struct {
			Components []struct{ ID, Component, Text string }
		}
	}
	if json.Unmarshal(msg, &m) != nil || m.UpdateComponents == nil {
		return "", false
	}
	for _, c := range m.UpdateComponents.Components {
		if c.ID == "message" && c.Component == "Text" {
			return c.Text, true
		}
	}
	return "", false
}

func callPart(c ctCall) string {
	return `{"type":"toolCall","callId":` + strconv.Quote(c.ID) + `,"name":` + strconv.Quote(c.Name) + `,"input":` + string(c.Input) + `}`
}

// readResult reads the result object of a turn.
func readResult(t *testing.T, f ctFraming, raw json.RawMessage, turn *ctTurn) (content []json.RawMessage, toolRequests []json.RawMessage) {
	t.Helper()
	var res struct {
		Message struct {
			Role    string            `json:"role"`
			Content []json.RawMessage `json:"content"`
		} `json:"message"`
		FinishReason string            `json:"finishReason"`
		ToolRequests []json.RawMessage `json:"toolRequests"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("result: %v\n%s", err, raw)
	}
	if res.Message.Role != "model" {
		t.Errorf("result role %q, want model", res.Message.Role)
	}
	turn.finish = res.FinishReason
	for _, p := range res.Message.Content {
		var tp struct{ Text *string }
		_ = json.Unmarshal(p, &tp)
		if tp.Text != nil {
			turn.resultText += *tp.Text
		}
		if c, ok := interruptOf(t, p); ok {
			turn.pending = append(turn.pending, c)
		}
	}
	if !f.whole && len(res.ToolRequests) > 0 {
		t.Errorf("a streamed result repeats the tool requests the stream carried: %s", raw)
	}
	return res.Message.Content, res.ToolRequests
}

// readTurn checks the framing of a response and reads it as a client does.
func readTurn(t *testing.T, f ctFraming, r response) ctTurn {
	t.Helper()
	if r.status != 200 {
		t.Fatalf("status %d, want 200: %s", r.status, r.body)
	}
	if got := r.header.Get("Content-Type"); got != f.contentType {
		t.Fatalf("Content-Type %q, want %q", got, f.contentType)
	}
	var turn ctTurn
	addCall := func(c ctCall) {
		turn.calls = append(turn.calls, c)
		turn.kinds = append(turn.kinds, "call")
		turn.replay = append(turn.replay, callPart(c))
	}
	addA2UI := func(msg []byte) {
		turn.a2ui = append(turn.a2ui, msg)
		turn.kinds = append(turn.kinds, "ui")
		turn.replay = append(turn.replay, `{"type":"a2ui","message":`+string(msg)+`}`)
		if s, ok := a2uiSurfaceText(msg); ok {
			turn.surfaces = append(turn.surfaces, s)
		}
	}
	addText := func(s string) {
		turn.text += s
		turn.kinds = append(turn.kinds, "text")
		turn.replay = append(turn.replay, `{"type":"text","text":`+strconv.Quote(s)+`}`)
	}

	if f.whole {
		if strings.Count(r.body, "\n") != 1 || !strings.HasSuffix(r.body, "\n") {
			t.Fatalf("a JSON response is one line: %q", r.body)
		}
		var top map[string]json.RawMessage
		if err := json.Unmarshal([]byte(r.body), &top); err != nil || len(top) != 1 || top["result"] == nil {
			t.Fatalf("a JSON response is {\"result\":…}: %s", r.body)
		}
		content, trs := readResult(t, f, top["result"], &turn)
		var uiParts []string
		for _, tr := range trs {
			var req struct {
				Name  string
				Input json.RawMessage
			}
			if err := json.Unmarshal(tr, &req); err != nil || req.Name != "addOrUpdateSurface" || f.a2ui {
				t.Fatalf("unexpected tool request in the result: %s", tr)
			}
			text, part := genuiSurface(t, req.Input)
			turn.surfaces = append(turn.surfaces, text)
			uiParts = append(uiParts, part)
		}
		for _, p := range content {
			var cp struct {
				Text *string
				Data *struct {
					Envelopes []json.RawMessage `json:"envelopes"`
				}
				Metadata map[string]any
			}
			if err := json.Unmarshal(p, &cp); err != nil {
				t.Fatal(err)
			}
			switch c, isCall := interruptOf(t, p); {
			case isCall:
				// The surfaces of the genui JSON framing come in "toolRequests", apart from
				// the content: a client sends them back before the calls.
				turn.replay = append(turn.replay, uiParts...)
				uiParts = nil
				addCall(c)
			case cp.Text != nil:
				addText(*cp.Text)
			case cp.Data != nil:
				if !f.a2ui || cp.Metadata["mimeType"] != "application/a2ui+json" {
					t.Fatalf("unexpected data part: %s", p)
				}
				for _, m := range cp.Data.Envelopes {
					addA2UI(m)
				}
			default:
				t.Fatalf("unexpected content part: %s", p)
			}
		}
		turn.replay = append(turn.replay, uiParts...)
		return turn
	}

	lines := strings.Split(strings.TrimSuffix(r.body, "\n"), "\n")
	for i, line := range lines {
		var ev struct {
			Type         *string
			Text         string
			CallID       string
			Name         string
			Input        json.RawMessage
			ToolRequests []struct {
				Name  string
				Input json.RawMessage
			}
			Result json.RawMessage
		}
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("line %d is not JSON: %q", i, line)
		}
		if ev.Type == nil {
			if !f.a2ui {
				t.Fatalf("line %d has no type: %s", i, line)
			}
			addA2UI([]byte(line))
			continue
		}
		if *ev.Type == "result" {
			if i != len(lines)-1 {
				t.Fatalf("the result is line %d of %d:\n%s", i, len(lines), r.body)
			}
			readResult(t, f, ev.Result, &turn)
			continue
		}
		switch *ev.Type {
		case "text":
			addText(ev.Text)
		case "toolRequest":
			if f.a2ui {
				t.Fatalf("a toolRequest line in an A2UI stream: %s", line)
			}
			for _, tr := range ev.ToolRequests {
				if tr.Name != "addOrUpdateSurface" {
					t.Fatalf("unexpected tool request: %s", line)
				}
				text, part := genuiSurface(t, tr.Input)
				turn.surfaces = append(turn.surfaces, text)
				turn.kinds = append(turn.kinds, "ui")
				turn.replay = append(turn.replay, part)
			}
		case "toolCall":
			// Exactly {"type":"toolCall","callId","name","input"}.
			if got := keysOf(t, []byte(line)); !slices.Equal(got, []string{"callId", "input", "name", "type"}) {
				t.Errorf("a toolCall line has the keys %v, want [callId input name type]: %s", got, line)
			}
			addCall(ctCall{ID: ev.CallID, Name: ev.Name, Input: ev.Input})
		case "keepalive":
		default:
			t.Fatalf("unexpected line %d: %s", i, line)
		}
	}
	if turn.finish == "" {
		t.Fatalf("no result line:\n%s", r.body)
	}
	return turn
}

// ctStep is one turn of a round trip: the answers to the previous turn's calls (by tool
// name; none for the first turn), and what the turn shows.
type ctStep struct {
	answers map[string]string // tool name → `"output":…` or `"error":…`
	text    string            // genui's text
	a2text  string            // A2UI's text
	surface string            // the text the surface shows ("": no UI)
	calls   []string          // the tools called, in order
	finish  string
}

// TestClientToolsEveryFraming runs each client-tool round trip over each framing of
// /generateUi and /generateA2ui, continuing statelessly: the client sends back the
// whole conversation, each model message replayed from what it read.
func TestClientToolsEveryFraming(t *testing.T) {
	const (
		calling  = "Calling getLocation."
		returned = "Here is what the client returned."
	)
	cases := []struct {
		name  string
		ask   string
		steps []ctStep
	}{
		{"call-then-continuation", "Where am I? Use getLocation", []ctStep{
			{text: calling, a2text: calling, calls: []string{"getLocation"}, finish: "interrupted"},
			{answers: map[string]string{"getLocation": `"output":{"city":"Berlin","lat":52.52}`},
				text: returned, a2text: returned + "\n", surface: "getLocation returned city: Berlin, lat: 52.52", finish: "stop"},
		}},
		{"error-result", "Where am I? Use getLocation", []ctStep{
			{text: calling, a2text: calling, calls: []string{"getLocation"}, finish: "interrupted"},
			{answers: map[string]string{"getLocation": `"error":"denied"`},
				text: returned, a2text: returned + "\n", surface: "getLocation failed: denied", finish: "stop"},
		}},
		{"second-call-in-continued-turn", "Use getLocation, then confirm", []ctStep{
			{text: calling, a2text: calling, calls: []string{"getLocation"}, finish: "interrupted"},
			{answers: map[string]string{"getLocation": `"output":{"city":"Rome"}`},
				text: returned + " Next, calling confirm.", a2text: returned + "\nNext, calling confirm.",
				surface: "getLocation returned city: Rome", calls: []string{"confirm"}, finish: "interrupted"},
			{answers: map[string]string{"confirm": `"output":"yes"`},
				text: returned, a2text: returned + "\n", surface: "confirm returned yes", finish: "stop"},
		}},
		{"two-calls-in-one-response", "Use confirm and getLocation", []ctStep{
			{text: "Calling confirm and getLocation.", a2text: "Calling confirm and getLocation.", calls: []string{"confirm", "getLocation"}, finish: "interrupted"},
			// Answered in the other order: the model reads them in the order of its calls.
			{answers: map[string]string{"confirm": `"output":"yes"`, "getLocation": `"output":{"city":"Lyon"}`},
				text: returned, a2text: returned + "\n", surface: "confirm returned yes\ngetLocation returned city: Lyon", finish: "stop"},
		}},
	}
	srv, _ := newServer(t, offline.Name)
	for _, f := range ctFramings {
		for _, tc := range cases {
			t.Run(f.name+"/"+tc.name, func(t *testing.T) {
				conv := []string{`{"role":"user","parts":[{"type":"text","text":` + strconv.Quote(tc.ask) + `}]}`}
				var prev []ctCall
				seen := map[string]bool{}
				for i, st := range tc.steps {
					if i > 0 {
						// The calls answered in reverse order.
						var results []string
						for j := len(prev) - 1; j >= 0; j-- {
							c := prev[j]
							results = append(results, `{"type":"toolResult","callId":`+strconv.Quote(c.ID)+`,"name":`+strconv.Quote(c.Name)+`,`+st.answers[c.Name]+`}`)
						}
						conv = append(conv, `{"role":"user","parts":[`+strings.Join(results, ",")+`]}`)
					}
					conversation := "[" + strings.Join(conv, ",") + "]"
					body := `{"clientTools":` + clientTools + `,"conversation":` + conversation + `}`
					if !f.a2ui {
						body = genuiBody(t, `,"clientTools":`+clientTools, conversation)
					}
					r := post(t, srv.URL+f.path, f.header, body)
					turn := readTurn(t, f, r)
					// Read again from the durable stream, the turn answers the same; as one
					// JSON result, its UI comes before its calls.
					if id := r.header.Get("X-Genkit-Stream-Id"); id != "" {
						if again := post(t, srv.URL+f.path+"?streamId="+id, f.header, ""); again.body != r.body {
							t.Fatalf("turn %d read again from its stream:\n%s\nwant\n%s", i, again.body, r.body)
						}
						whole := post(t, srv.URL+f.path+"?streamId="+id, map[string]string{"Accept": "application/json"}, "")
						var res struct {
							Result struct {
								Message struct {
									Content []map[string]json.RawMessage `json:"content"`
								} `json:"message"`
							} `json:"result"`
						}
						if err := json.Unmarshal([]byte(whole.body), &res); err != nil {
							t.Fatalf("turn %d read again as JSON: %v %s", i, err, whole.body)
						}
						call := false
						for _, c := range res.Result.Message.Content {
							if c["toolRequest"] != nil {
								call = true
							} else if call {
								t.Fatalf("turn %d read again as JSON: content after a call: %s", i, whole.body)
							}
						}
					}
					fail := func(format string, args ...any) {
						t.Helper()
						t.Fatalf("turn %d: "+format+"\n%s", append([]any{i}, append(args, r.body)...)...)
					}

					wantText := st.text
					if f.a2ui {
						wantText = st.a2text
					}
					if turn.text != wantText {
						fail("text %q, want %q", turn.text, wantText)
					}
					if turn.resultText != wantText {
						fail("the result's text %q, want %q", turn.resultText, wantText)
					}
					if turn.finish != st.finish {
						fail("finishReason %q, want %q", turn.finish, st.finish)
					}

					// The calls: named as asked, each with a fresh id and an object input,
					// all pending, in the result as Genkit interrupts.
					var names []string
					for _, c := range turn.calls {
						names = append(names, c.Name)
						if !statelessCallID.MatchString(c.ID) || seen[c.ID] {
							fail("call id %q: not a fresh stateless id", c.ID)
						}
						seen[c.ID] = true
						if !jsonEqual(t, c.Input, []byte(`{}`)) {
							fail("call %s has the input %s, want {}", c.Name, c.Input)
						}
					}
					if !slices.Equal(names, st.calls) {
						fail("calls %v, want %v", names, st.calls)
					}
					if len(turn.pending) != len(turn.calls) {
						fail("the result lists %d pending calls, want %d", len(turn.pending), len(turn.calls))
					}
					for j := range turn.pending {
						p, c := turn.pending[j], turn.calls[j]
						if p.ID != c.ID || p.Name != c.Name || !jsonEqual(t, p.Input, c.Input) {
							fail("pending call %d is %+v, want %+v", j, p, c)
						}
					}

					// The UI: the surface shows the results; it comes before the calls.
					var wantSurfaces []string
					if st.surface != "" {
						wantSurfaces = []string{st.surface}
					}
					if !slices.Equal(turn.surfaces, wantSurfaces) {
						fail("surfaces show %q, want %q", turn.surfaces, wantSurfaces)
					}
					if k := slices.Index(turn.kinds, "call"); k >= 0 && slices.Contains(turn.kinds[k:], "ui") {
						fail("UI after a tool call: %v", turn.kinds)
					}
					if k := slices.Index(turn.kinds, "call"); k >= 0 && slices.Contains(turn.kinds[k:], "text") {
						fail("text after a tool call: %v", turn.kinds)
					}
					if f.a2ui {
						if (st.surface != "") != (len(turn.a2ui) > 0) {
							fail("%d A2UI messages", len(turn.a2ui))
						}
						if len(turn.a2ui) > 0 {
							a2uitest.New(t, "v0.9", nil).CheckAll(t, turn.a2ui...)
						}
					}

					conv = append(conv, `{"role":"model","parts":[`+strings.Join(turn.replay, ",")+`]}`)
					prev = turn.calls
				}
			})
		}
	}
}
