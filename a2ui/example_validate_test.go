package a2ui_test

import (
	"encoding/json"
	"fmt"
	"log"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/policy"
)

// Validating another agent's output: its messages, judged as a renderer receives them
// against the catalog the client advertised. Each violation names its message, the
// field, and the kind of rule.
func ExampleValidate() {
	caps, fe := a2ui.ParseCapabilities(a2ui.V09, []byte(`{"v0.9":{"supportedCatalogIds":["https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"]}}`), "a2uiClientCapabilities")
	if fe != nil {
		log.Fatal(fe)
	}
	id, doc, fe := caps.Choose(a2ui.V09, "a2uiClientCapabilities")
	if fe != nil {
		log.Fatal(fe)
	}
	cat, err := a2ui.CompileCatalog(a2ui.V09, id, doc)
	if err != nil {
		log.Fatal(err)
	}
	agentOutput := []json.RawMessage{
		json.RawMessage(`{"version":"v0.9","createSurface":{"surfaceId":"order","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}`),
		json.RawMessage(`{"version":"v0.9","updateComponents":{"surfaceId":"order","components":[
			{"id":"root","component":"Column","children":["title","pay"]},
			{"id":"title","component":"Text","text":"Your order","variant":"h9"}]}}`),
	}
	for _, v := range a2ui.Validate(cat, agentOutput) {
		fmt.Printf("message %d %s [%s]\n", v.Index, v.Path, v.Code)
	}
	// An update of a surface the renderer already has may come before its root.
	update := []json.RawMessage{json.RawMessage(`{"version":"v0.9","updateComponents":{"surfaceId":"order","components":[{"id":"total","component":"Text","text":"12 €"}]}}`)}
	fmt.Println(a2ui.Validate(cat, update, a2ui.WithShown("order")) == nil)
	// Output:
	// message 1 /updateComponents/components/1/variant [schema]
	// message 1 /updateComponents/components/0/children/1 [dangling_reference]
	// true
}

// Valid is not safe: a UI policy judges what the catalog allows. The image's URL runs
// script, the button opens a data: page, the field asks for a password; each is a
// violation of a rule of the policy, whose message does not repeat the URL.
func ExampleWithPolicy() {
	cat, err := a2ui.Builtin(a2ui.V09, a2ui.DefaultCatalogID(a2ui.V09))
	if err != nil {
		log.Fatal(err)
	}
	agentOutput := []json.RawMessage{
		json.RawMessage(`{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}`),
		json.RawMessage(`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[
			{"id":"root","component":"Column","children":["pic","go","pin"]},
			{"id":"pic","component":"Image","url":" JaVa\tScript:alert(document.cookie)","description":"A cat"},
			{"id":"go","component":"Button","child":"go-label","action":{"functionCall":{"call":"openUrl","args":{"url":"data:text/html;base64,PHNjcmlwdD4="}}}},
			{"id":"go-label","component":"Text","text":"Open"},
			{"id":"pin","component":"TextField","label":"Bank PIN","variant":"obscured"}]}}`),
	}
	fmt.Println("without a policy:", len(a2ui.Validate(cat, agentOutput)), "violations")
	for _, v := range a2ui.Validate(cat, agentOutput, a2ui.WithPolicy(policy.Default())) {
		fmt.Printf("%s [%s]\n  %s\n", v.Path, v.Code, v.Message)
	}
	// Output:
	// without a policy: 0 violations
	// /updateComponents/components/1/url [unsafe_url]
	//   the UI policy refuses this image URL: its scheme is javascript:, allowed: https:, http:
	// /updateComponents/components/2/action/functionCall/args/url [unsafe_url]
	//   the UI policy refuses this link URL: its scheme is data:, allowed: https:, http:, mailto:, tel:
	// /updateComponents/components/4/variant [sensitive_input]
	//   the UI policy does not allow obscured (password) fields: a model must not ask the user for a secret; use a plain field, or ask the app to collect it
}
