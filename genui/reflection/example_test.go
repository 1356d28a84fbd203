package reflection_test

import (
	"context"
	"encoding/json"
	"log"
	"net/http"

	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui/reflection"
)

// Run the program with `npx genkit start --experimental-reflection-v2 -- go run .` and its
// flows appear in the Genkit Dev UI. Without the CLI, Start returns (nil, nil) and the program
// serves as usual.
func Example() {
	ctx := context.Background()
	g := reflection.InitGenkit(ctx) // not genkit.Init: Start is the process's only V2 runtime
	hello := genkit.DefineFlow(g, "hello", func(ctx context.Context, name string) (string, error) {
		return "Hello, " + name, nil
	})

	client, err := reflection.Start(ctx, g, reflection.WithName("hello"))
	if err != nil {
		log.Printf("Genkit Dev UI: %v", err) // a malformed URL; the program goes on
	}
	defer client.Close()

	http.Handle("POST /hello", genkit.Handler(hello))
	log.Fatal(http.ListenAndServe("127.0.0.1:8080", nil))
}

// A streaming flow reads the input chunks of a bidirectional run from the Dev UI. (An
// action made with core.NewBidiActionOf receives them on its input channel instead.)
func ExampleInputStream() {
	g := genkit.Init(context.Background())
	genkit.DefineStreamingFlow(g, "shout", func(ctx context.Context, _ struct{}, cb func(context.Context, string) error) (int, error) {
		in, ok := reflection.InputStream(ctx)
		if !ok {
			return 0, nil // not run bidirectionally
		}
		n := 0
		for chunk := range in {
			var s string
			if err := json.Unmarshal(chunk, &s); err != nil {
				return n, err
			}
			if cb != nil {
				if err := cb(ctx, s+"!"); err != nil {
					return n, err
				}
			}
			n++
		}
		return n, nil
	})
}
