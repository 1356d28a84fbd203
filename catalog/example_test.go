package catalog_test

import (
	"encoding/json"
	"fmt"
	"log"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/schemas"
)

// A catalog compiles once; every surface the model proposes is checked against it.
func ExampleCatalog_CheckDefinition() {
	basic, _ := schemas.SampleCatalog("basic")
	raw, _ := json.Marshal(basic)
	c, err := catalog.NewCache(16, 2<<20, 64<<20).Compile(raw)
	if err != nil {
		log.Fatal(err)
	}
	var def any
	_ = json.Unmarshal([]byte(`{"root":"c","widgets":[
		{"id":"c","widget":{"Column":{"children":["t","x"]}}},
		{"id":"t","widget":{"Txt":{"text":"hi"}}}]}`), &def)
	for _, v := range c.CheckDefinition(def, "/definition").Violations {
		fmt.Println(v.Pointer)
	}
	// Output:
	// /definition/widgets/1/widget/Txt
	// /definition/widgets/0/widget/Column/children/1
}
