package a2ui_test

import (
	"encoding/json"
	"fmt"
	"log"

	"github.com/genuiserver/genui/a2ui"
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
