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

// An A2UI turn streams A2UI messages, each ready for a client's message processor.
func ExampleService_StreamA2UI() {
	ctx := context.Background()
	svc, err := genui.New(genkit.Init(ctx), offline.New(), genui.WithLogger(quiet))
	if err != nil {
		log.Fatal(err)
	}
	st, err := svc.StreamA2UI(ctx, &schemas.GenerateA2UIRequest{
		Version:      "v0.9", // the basic catalog, as no capabilities name another
		Conversation: []schemas.Message{{Role: "user", Parts: []schemas.Part{{Type: "text", Text: "Hello"}}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	err = st.Each(ctx, func(it genui.Item) error {
		if it.Event != nil && it.Event.Type == schemas.EventA2UI {
			fmt.Printf("%.60s\n", it.Event.A2UI)
		}
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// {"version":"v0.9","createSurface":{"catalogId":"https://a2ui
	// {"version":"v0.9","updateDataModel":{"path":"/form","surface
	// {"version":"v0.9","updateComponents":{"surfaceId":"surface-1
	// {"version":"v0.9","updateComponents":{"surfaceId":"surface-1
	// {"version":"v0.9","updateComponents":{"surfaceId":"surface-1
	// {"version":"v0.9","updateComponents":{"surfaceId":"surface-1
	// {"version":"v0.9","updateComponents":{"surfaceId":"surface-1
	// {"version":"v0.9","updateComponents":{"surfaceId":"surface-1
}
