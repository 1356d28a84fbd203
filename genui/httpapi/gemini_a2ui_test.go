package httpapi_test

import (
	"strings"
	"testing"

	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
)

// What a model writes for a small form, one JSON message per line, the "email" field
// with a property the catalog lacks.
const formResponse = "Here is the form.\n```a2ui\n" +
	`{"createSurface":{"surfaceId":"form","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}` + "\n" +
	`{"updateComponents":{"surfaceId":"form","components":[` + "\n" +
	`{"id":"root","component":"Column","children":["title","email","submit"]},` + "\n" +
	`{"id":"title","component":"Text","text":"Join us","variant":"h2"},` + "\n" +
	`{"id":"email","component":"TextField","label":"Email","value":{"path":"/form/email"},"placeholder":"you@example.com"},` + "\n" +
	`{"id":"submit","component":"Button","child":"submit-label","action":{"event":{"name":"join","context":{"email":{"path":"/form/email"}}}}},` + "\n" +
	`{"id":"submit-label","component":"Text","text":"Join"}` + "\n" +
	"]}}\n```\n"

// The repair: the field again, without the unknown property.
const formRepair = "```a2ui\n" +
	`{"updateComponents":{"surfaceId":"form","components":[{"id":"email","component":"TextField","label":"Email","value":{"path":"/form/email"}}]}}` + "\n```"

// TestGeminiA2UIRepairs streams an A2UI turn through the real genai client: what is
// valid reaches the client while the model writes, the invalid component does not, the
// model is told why and repairs it, and every message is valid A2UI.
func TestGeminiA2UIRepairs(t *testing.T) {
	base, fake := newGeminiServer(t, nil)
	fake.Enqueue(
		fakegemini.Reply{Chunks: fakegemini.TextChunks(formResponse, 9), Usage: &fakegemini.Usage{PromptTokenCount: 2000, CandidatesTokenCount: 150, TotalTokenCount: 2150}},
		fakegemini.Reply{Chunks: fakegemini.TextChunks(formRepair, 3), Usage: &fakegemini.Usage{PromptTokenCount: 2300, CandidatesTokenCount: 40, TotalTokenCount: 2340}},
	)
	r := post(t, base+"/generateA2ui", nil, `{"conversation":`+userText("a sign-up form")+`}`)
	turn := parseA2UITurn(t, r.body)
	if r.status != 200 || turn.result == nil || turn.err != nil {
		t.Fatalf("got %d:\n%s", r.status, r.body)
	}
	a2uitest.New(t, "v0.9", nil).CheckAll(t, turn.messages...)
	all := strings.Join(toStrings(turn.messages), "\n")
	if strings.Contains(all, "placeholder") {
		t.Fatalf("the invalid component reached the client:\n%s", all)
	}
	last := string(turn.messages[len(turn.messages)-1])
	if !strings.Contains(last, `"id":"email"`) || !strings.Contains(last, `"children":["title","email","submit"]`) {
		t.Fatalf("the repair did not complete the surface; last message:\n%s", last)
	}
	usage := turn.result["usage"].(map[string]any)
	if usage["modelCalls"] != float64(2) || usage["inputTokens"] != float64(4300) || usage["outputTokens"] != float64(190) {
		t.Fatalf("usage %v", usage)
	}

	reqs := fake.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model calls, want 2", len(reqs))
	}
	for i, req := range reqs {
		if len(req.FunctionDeclarations()) != 0 || req.Body["tools"] != nil {
			t.Errorf("call %d declares tools: an A2UI turn has none", i)
		}
		if sys := req.SystemText(); !strings.Contains(sys, "A2UI v0.9") || !strings.Contains(sys, "- TextField: label: DynamicString") ||
			strings.Contains(sys, `"$schema"`) || !strings.Contains(sys, "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json") {
			t.Errorf("call %d: the system prompt does not describe the catalog compactly:\n%.600s", i, sys)
		}
	}
	if reqs[0].SystemText() != reqs[1].SystemText() {
		t.Errorf("the system prompt changed between calls of a catalog")
	}
	repair := reqs[1].LastUserText()
	for _, want := range []string{`/1/updateComponents/components/2/placeholder: unknown property "placeholder"`, `surface "form"`} {
		if !strings.Contains(repair, want) {
			t.Errorf("the repair request does not say %q:\n%s", want, repair)
		}
	}
}

// TestGeminiA2UIConversation checks what the model reads of an earlier turn: the
// messages the client received, in their shortest form, as its own A2UI block, and the
// user's action as a sentence with the resolved context.
func TestGeminiA2UIConversation(t *testing.T) {
	base, fake := newGeminiServer(t, nil)
	fake.Enqueue(fakegemini.Respond(fakegemini.Text("Thanks!")))
	shown := []string{
		`{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}`,
		`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Column","children":[]}]}}`,
		`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"b","component":"Button","child":"l","action":{"event":{"name":"go"}}},{"id":"l","component":"Text","text":"Go"},{"id":"root","component":"Column","children":["b"]}]}}`,
	}
	var parts []string
	for _, m := range shown {
		parts = append(parts, `{"type":"a2ui","message":`+m+`}`)
	}
	body := `{"a2uiClientDataModel":{"version":"v0.9","surfaces":{"s":{"n":1}}},"conversation":[{"role":"user","parts":[{"type":"text","text":"a button"}]},` +
		`{"role":"model","parts":[` + strings.Join(parts, ",") + `]},` +
		`{"role":"user","parts":[{"type":"a2ui","message":{"version":"v0.9","action":{"name":"go","surfaceId":"s","sourceComponentId":"b","timestamp":"2026-11-22T12:00:00Z","context":{"n":1}}}}]}]}`
	r := post(t, base+"/generateA2ui", nil, body)
	if r.status != 200 || !strings.Contains(r.body, `"type":"result"`) {
		t.Fatalf("got %d:\n%s", r.status, r.body)
	}
	contents := fake.Requests()[0].Contents()
	if len(contents) != 3 {
		t.Fatalf("%d contents, want 3", len(contents))
	}
	model := contents[1].Parts[0].Text
	wantModel := "```a2ui\n" +
		`{"createSurface":{"catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json","surfaceId":"s"}}` + "\n" +
		`{"updateComponents":{"surfaceId":"s","components":[{"children":["b"],"component":"Column","id":"root"},{"action":{"event":{"name":"go"}},"child":"l","component":"Button","id":"b"},{"component":"Text","id":"l","text":"Go"}]}}` + "\n```"
	if model != wantModel {
		t.Fatalf("the model reads its earlier turn as:\n%s\nwant:\n%s", model, wantModel)
	}
	user := fake.Requests()[0].LastUserText()
	for _, want := range []string{`The user triggered the action "go" on surface "s" (component "b")`, `{"n":1}`, `a2uiClientDataModel`} {
		if !strings.Contains(user, want) {
			t.Errorf("the user message lacks %q:\n%s", want, user)
		}
	}
}
