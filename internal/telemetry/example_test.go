package telemetry_test

import (
	"context"
	"log"
	"os"
	"time"

	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/internal/telemetry"
)

// Setup goes before genkit.Init, so that Genkit records its spans on the provider that
// exports them. The flush at the end gets a context of its own: the one the program
// ran under may be cancelled by then.
func ExampleSetup() {
	ctx := context.Background()
	shutdown, err := telemetry.Setup(ctx, os.Getenv)
	if err != nil {
		log.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := shutdown(ctx); err != nil {
			log.Printf("flushing traces: %v", err)
		}
	}()

	g := genkit.Init(ctx)
	_ = g // define flows and serve
}
