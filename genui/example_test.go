package genui_test

import (
	"context"
	"fmt"
	"log"

	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/schemas"
)

// A transport decodes its request, streams the turn and encodes each item.
func ExampleService_Stream() {
	ctx := context.Background()
	svc, err := genui.New(genkit.Init(ctx), offline.New(), genui.WithLogger(quiet))
	if err != nil {
		log.Fatal(err)
	}
	basic, _ := schemas.SampleCatalog("basic")
	st, err := svc.Stream(ctx, &schemas.GenerateRequest{
		Catalog:      schemas.CatalogOf(basic),
		Conversation: []schemas.Message{{Role: "user", Parts: []schemas.Part{{Type: "text", Text: "Hello"}}}},
	})
	if err != nil {
		log.Fatal(err) // a *genui.Error naming the field at fault
	}
	defer st.Close()
	err = st.Each(ctx, func(it genui.Item) error {
		switch {
		case it.Event != nil && it.Event.ToolRequest != nil:
			fmt.Println(it.Seq, it.Event.ToolRequest.Name)
		case it.Event != nil:
			fmt.Println(it.Seq, it.Event.Text)
		case it.Result != nil:
			fmt.Println(it.Seq, "result")
		default:
			fmt.Println(it.Seq, it.Err.Status)
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// 1 Here is a surface for your message.
	// 2 addOrUpdateSurface
	// 3 result
}
