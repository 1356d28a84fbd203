package httpapi_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/genuiserver/genui/internal/testkit/fakegemini"
)

func signedCall(name string, args map[string]any, sig string) fakegemini.Chunk {
	c := fakegemini.FunctionCall(name, args)
	c.Parts[0].ThoughtSignature = []byte(sig)
	return c
}

// Through the real genai client: the client tools are declared beside the UI tools, a
// call streams with its thought signature, and the continuation gives Gemini its call
// and the function's response, paired, the signature kept.
func TestGeminiClientToolRoundTrip(t *testing.T) {
	base, fake := newGeminiServer(t, nil)
	tools := `[{"name":"getLocation","description":"The user's city","inputSchema":{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"precise":{"type":"boolean"}},"required":["precise"]}}]`
	fake.Enqueue(fakegemini.Respond(fakegemini.Text("Looking."),
		fakegemini.FunctionCall("addOrUpdateSurface", surfaceArgs),
		signedCall("getLocation", map[string]any{"precise": true}, "sig-1")))
	r := post(t, base+"/generateUi", nil, genuiBody(t, `,"clientTools":`+tools, userText("where am I?")))
	want := `{"type":"text","text":"Looking."}` + "\n" +
		`{"type":"toolRequest","toolRequests":[{"name":"addOrUpdateSurface","input":` + surfaceInput + `}]}` + "\n" +
		`{"type":"toolCall","callId":"CALL","name":"getLocation","input":{"precise":true},"signature":"c2lnLTE="}` + "\n" +
		`{"type":"result","result":{"message":{"role":"model","content":[{"text":"Looking."},{"toolRequest":{"name":"getLocation","input":{"precise":true},"ref":"CALL"},"metadata":{"interrupt":true,"signature":"c2lnLTE="}}]},"finishReason":"interrupted","usage":{…}}}` + "\n"
	if normalized(r.body) != want {
		t.Fatalf("the call:\n%s\nwant:\n%s", r.body, want)
	}
	decls := fake.Requests()[0].FunctionDeclarations()
	if len(decls) != 3 || decls[0].Name != "addOrUpdateSurface" || decls[1].Name != "deleteSurface" || decls[2].Name != "getLocation" {
		t.Fatalf("declarations %+v", decls)
	}
	b, _ := json.Marshal(decls[2])
	if string(b) != `{"name":"getLocation","description":"The user's city","parametersJsonSchema":{"properties":{"precise":{"type":"boolean"}},"required":["precise"],"type":"object"}}` {
		t.Fatalf("the client tool's declaration: %s", b)
	}
	id := callIDsOf(t, r.body)[0]

	// The continuation, as the client keeps it: the surface, the call with its signature.
	conv := `[{"role":"user","parts":[{"type":"text","text":"where am I?"}]},` +
		`{"role":"model","parts":[{"type":"text","text":"Looking."},{"type":"ui","definition":{"surfaceId":"s1","root":"c","widgets":[{"id":"c","widget":{"Column":{"children":["t"]}}},{"id":"t","widget":{"Text":{"text":"Hi"}}}]}},{"type":"toolCall","callId":"` + id + `","name":"getLocation","input":{"precise":true},"signature":"c2lnLTE="}]},` +
		`{"role":"user","parts":[{"type":"toolResult","callId":"` + id + `","name":"getLocation","output":{"city":"Berlin"}}]}]`
	fake.Enqueue(fakegemini.Respond(fakegemini.Text("You are in Berlin."), fakegemini.FunctionCall("confirm", map[string]any{})))
	r = post(t, base+"/generateUi", nil, genuiBody(t, `,"clientTools":[{"name":"confirm"}]`, conv))
	// A second call in the continued turn.
	if ids := callIDsOf(t, r.body); len(ids) != 1 || !strings.Contains(r.body, `"name":"confirm"`) || !strings.Contains(r.body, `"finishReason":"interrupted"`) {
		t.Fatalf("the continued turn:\n%s", r.body)
	}
	contents := fake.Requests()[1].Contents()
	if len(contents) != 3 || contents[1].Role != "model" || contents[2].Role != "user" {
		t.Fatalf("%d contents", len(contents))
	}
	model, answer := contents[1].Parts, contents[2].Parts
	if len(model) != 3 || model[1].FunctionCall == nil || model[1].FunctionCall.Name != "addOrUpdateSurface" || model[2].FunctionCall == nil || model[2].FunctionCall.Name != "getLocation" {
		b, _ := json.Marshal(model)
		t.Fatalf("the model content: %s", b)
	}
	// Gemini wants the signature on the first call of the step.
	if string(model[1].ThoughtSignature) != "sig-1" || model[2].ThoughtSignature != nil {
		t.Fatalf("signatures: %q %q", model[1].ThoughtSignature, model[2].ThoughtSignature)
	}
	b, _ = json.Marshal(answer)
	if string(b) != `[{"functionResponse":{"name":"addOrUpdateSurface","response":{"status":"updated"}}},{"functionResponse":{"name":"getLocation","response":{"city":"Berlin"}}}]` {
		t.Fatalf("the function responses: %s", b)
	}
}

// An invalid input of a client tool goes back to Gemini with its violations; the
// repaired call reaches the client.
func TestGeminiInvalidToolInputIsRepaired(t *testing.T) {
	base, fake := newGeminiServer(t, nil)
	tools := `[{"name":"getLocation","inputSchema":{"type":"object","properties":{"precise":{"type":"boolean"}},"required":["precise"]}}]`
	fake.Enqueue(
		fakegemini.Respond(fakegemini.FunctionCall("getLocation", map[string]any{"precise": "very"})),
		fakegemini.Respond(fakegemini.FunctionCall("getLocation", map[string]any{"precise": true})),
	)
	r := post(t, base+"/generateUi", nil, genuiBody(t, `,"clientTools":`+tools, userText("where am I?")))
	if ids := callIDsOf(t, r.body); len(ids) != 1 || !strings.Contains(r.body, `"input":{"precise":true}`) || !strings.Contains(r.body, `"modelCalls":2`) {
		t.Fatalf("after the repair:\n%s", r.body)
	}
	resp := fake.Requests()[1].FunctionResponses()
	b, _ := json.Marshal(resp)
	if len(resp) != 1 || resp[0].Name != "getLocation" || resp[0].Response["status"] != "rejected" || !strings.Contains(string(b), `"pointer":"/precise"`) {
		t.Fatalf("the repair request: %s", b)
	}
}

// A held conversation through Gemini: the history the model reads holds the earlier
// turns, and a result is all the next request sends.
func TestGeminiHeldConversation(t *testing.T) {
	base, fake := newGeminiServer(t, nil)
	fake.Enqueue(fakegemini.Respond(fakegemini.Text("Let me see."), fakegemini.FunctionCall("getLocation", nil)))
	r := post(t, base+"/generateA2ui", nil, `{"conversationId":"gemini-conv-1","clientTools":[{"name":"getLocation"}],"conversation":`+userText("where am I?")+`}`)
	ids := callIDsOf(t, r.body)
	if len(ids) != 1 {
		t.Fatalf("the call:\n%s", r.body)
	}
	fake.Enqueue(fakegemini.Respond(fakegemini.Text("Berlin.")))
	r = post(t, base+"/generateA2ui", nil, `{"conversationId":"gemini-conv-1","conversation":[{"role":"user","parts":[{"type":"toolResult","callId":"`+ids[0]+`","name":"getLocation","output":{"city":"Berlin"}}]}]}`)
	if !strings.Contains(r.body, `"finishReason":"stop"`) {
		t.Fatalf("the continuation:\n%s", r.body)
	}
	// (The genai client leaves out the empty args of the call.)
	contents := fake.Requests()[1].Contents()
	b, _ := json.Marshal(contents)
	want := `[{"role":"user","parts":[{"text":"where am I?"}]},{"role":"model","parts":[{"text":"Let me see."},{"functionCall":{"name":"getLocation","args":null}}]},{"role":"user","parts":[{"functionResponse":{"name":"getLocation","response":{"city":"Berlin"}}}]}]`
	if string(b) != want {
		t.Fatalf("Gemini read\n%s\nwant\n%s", b, want)
	}
	// The A2UI turn declared only the client tool.
	if decls := fake.Requests()[0].FunctionDeclarations(); len(decls) != 1 || decls[0].Name != "getLocation" {
		t.Fatalf("declarations %+v", decls)
	}
}
