package aguiapi

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/genuiserver/genui/internal/jsonbody"
)

func turnOf(t *testing.T, body string) *turn {
	t.Helper()
	var in runInput
	if e := jsonbody.Decode([]byte(body), &in, inputSchema); e != nil {
		t.Fatal(e)
	}
	tn, e := in.toTurn()
	if e != nil {
		t.Fatal(e)
	}
	return tn
}

func convJSON(tn *turn) string {
	b, _ := json.Marshal(tn.req.Conversation)
	return string(b)
}

// What @ag-ui/a2ui-middleware sends for an action: the log_a2ui_event pair it appends,
// and the action still in forwardedProps. The action is the user's input, once.
func TestMiddlewareAction(t *testing.T) {
	action := `{"name":"send","surfaceId":"s1","sourceComponentId":"b","timestamp":"2026-11-25T10:00:00Z","context":{"reply":"7pm"}}`
	args, _ := json.Marshal(action)
	tn := turnOf(t, `{"threadId":"t","runId":"r","messages":[
		{"id":"u1","role":"user","content":"Book a table"},
		{"id":"x1","role":"assistant","content":"","toolCalls":[{"id":"c1","type":"function","function":{"name":"log_a2ui_event","arguments":`+string(args)+`}}]},
		{"id":"x2","role":"tool","toolCallId":"c1","content":"User performed action \"send\" on surface \"s1\" (component: b). Context: {\"reply\":\"7pm\"}"}],
		"tools":[{"name":"render_a2ui","description":"Render","parameters":{"type":"object"}}],
		"context":[{"description":"A2UI render tool usage guide — how to call render_a2ui with valid arguments.","value":"## How to call render_a2ui"}],
		"forwardedProps":{"a2uiAction":{"userAction":`+action+`},"injectA2UITool":true}}`)
	want := `[{"role":"user","parts":[{"type":"text","text":"Book a table"},{"type":"a2ui","message":{"action":` + action + `,"version":"v0.9"}}]}]`
	if got := convJSON(tn); got != want {
		t.Fatalf("conversation:\n%s\nwant:\n%s", got, want)
	}
	if len(tn.req.ClientTools) != 0 {
		t.Fatalf("the middleware's tool is a client tool: %+v", tn.req.ClientTools)
	}
}

// The surfaces a client holds are what the model showed; a tool message answers its
// call, with the call's name; system messages are instructions; the state is the data
// model.
func TestMessages(t *testing.T) {
	tn := turnOf(t, `{"threadId":"t","runId":"r","state":{"surfaces":{"s1":{"reply":"x"}}},"messages":[
		{"id":"s","role":"system","content":"Be brief."},
		{"id":"u1","role":"user","content":[{"type":"text","text":"Where am I?"},{"type":"image","source":{"type":"url","value":"https://x.test/a.png","mimeType":"image/png"}}]},
		{"id":"a1","role":"assistant","content":"Calling getLocation.","toolCalls":[{"id":"c1","type":"function","function":{"name":"getLocation","arguments":"{}"},"encryptedValue":"c2ln"}]},
		{"id":"r1","role":"tool","toolCallId":"c1","content":"{\"city\":\"Lisbon\"}"},
		{"id":"v1","role":"activity","activityType":"a2ui-surface","content":{"a2ui_operations":[{"version":"v0.9","createSurface":{"surfaceId":"s1","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}]}},
		{"id":"v2","role":"activity","activityType":"other","content":{"x":1}},
		{"id":"z","role":"reasoning","content":"hmm"}],
		"tools":[{"name":"getLocation","description":"The city","parameters":{"type":"object"}}]}`)
	want := `[{"role":"user","parts":[{"type":"text","text":"Instructions from the app (system): Be brief."},{"type":"text","text":"Where am I?"},{"type":"image","url":"https://x.test/a.png","mimeType":"image/png"}]},` +
		`{"role":"model","parts":[{"type":"text","text":"Calling getLocation."},{"type":"toolCall","callId":"c1","name":"getLocation","input":{},"signature":"c2ln"}]},` +
		`{"role":"user","parts":[{"type":"toolResult","callId":"c1","name":"getLocation","output":{"city":"Lisbon"}}]},` +
		`{"role":"model","parts":[{"type":"a2ui","message":{"version":"v0.9","createSurface":{"surfaceId":"s1","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}}]}]`
	if got := convJSON(tn); got != want {
		t.Fatalf("conversation:\n%s\nwant:\n%s", got, want)
	}
	if string(tn.req.A2UIClientDataModel) != `{"surfaces":{"s1":{"reply":"x"}}}` || len(tn.shown) != 1 {
		t.Fatalf("data model %s, shown %d", tn.req.A2UIClientDataModel, len(tn.shown))
	}
	if got := tn.field("conversation[1].parts[1].input"); got != "messages[2].toolCalls[0].function.arguments" {
		t.Fatalf("field %s", got)
	}
	if got := tn.field("clientTools[0].inputSchema.type"); got != "tools[0].parameters.type" {
		t.Fatalf("field %s", got)
	}
}

// FuzzRun maps any input to a turn: never a panic; an error is INVALID_ARGUMENT and names
// a field of the input, never one of the core's request.
func FuzzRun(f *testing.F) {
	for _, s := range []string{
		`{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":"hi"}]}`,
		`{"threadId":"t","runId":"r","messages":[{"id":"a","role":"assistant","toolCalls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"id":"t","role":"tool","toolCallId":"c","content":"1"}],"resume":[{"interruptId":"c","status":"resolved"}]}`,
		`{"threadId":"t","runId":"r","messages":[{"id":"v","role":"activity","activityType":"a2ui-surface","content":{"a2ui_operations":[{"version":"v0.9","deleteSurface":{"surfaceId":"s"}}]}}],"forwardedProps":{"a2uiAction":{"action":{"name":"x"}}}}`,
		`{"threadId":"t","runId":"r","messages":[],"context":[{"description":"d","value":"{\"catalogId\":\"\",\"components\":{}}"}],"state":null}`,
		`{"threadId":"t","runId":"r","messages":[{"id":"u","role":"user","content":[{"type":"image","source":{"type":"file","value":"x"}}]}]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		var in runInput
		if e := jsonbody.Decode(body, &in, inputSchema); e != nil {
			return
		}
		tn, e := in.toTurn()
		if e == nil {
			if tn.req == nil {
				t.Fatal("no request")
			}
			return
		}
		field, _ := e.Details.(map[string]any)["field"].(string)
		if e.Status != "INVALID_ARGUMENT" || field == "" || !strings.HasPrefix(e.Message, field+": ") {
			t.Fatalf("%+v", e)
		}
		if strings.Contains(field, "conversation") || strings.Contains(field, "clientTools") {
			t.Fatalf("a core field: %+v", e)
		}
	})
}
