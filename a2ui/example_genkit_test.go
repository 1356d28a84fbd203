package a2ui_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/a2ui"
)

// Streaming a Genkit Go model's output to a client as A2UI: the catalog goes into the
// system prompt ([a2ui.Describe]); each chunk the model streams goes through the parser
// into the builder, and what the builder lets out is written to the HTTP response at once,
// one JSON line per message: the client draws the surface component by component while
// the model writes it, and never sees an invalid state. What broke a rule comes back from
// End, to send to the model for repair.
func Example_genkitStreaming() {
	ctx := context.Background()
	g := genkit.Init(ctx)
	// A stand-in for a real model (googlegenai, vertexai, ollama…): it streams the answer
	// the A2UI agent SDKs prompt for, in <a2ui-json> tags.
	model := genkit.DefineModelAction(g, "demo/writer", &ai.ModelOptions{Supports: &ai.ModelSupports{SystemRole: true, Multiturn: true}},
		func(ctx context.Context, req *ai.ModelRequest, _ map[string]any, cb ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			answer := []string{
				`Here is your order. <a2ui-json>[{"version":"v0.9","createSurface":{"surfaceId":"order",`,
				`"catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}},`,
				`{"version":"v0.9","updateComponents":{"surfaceId":"order","components":[`,
				`{"id":"root","component":"Column","children":["title","total"]},`,
				`{"id":"title","component":"Text","text":"Your order","variant":"h2"},`,
				`{"id":"total","component":"Text","text":"12 €"}]}}]</a2ui-json>`,
			}
			for _, chunk := range answer {
				if err := cb(ctx, &ai.ModelResponseChunk{Content: []*ai.Part{ai.NewTextPart(chunk)}}); err != nil {
					return nil, err
				}
			}
			return &ai.ModelResponse{Message: ai.NewModelTextMessage(strings.Join(answer, "")), FinishReason: ai.FinishReasonStop}, nil
		})

	cat, err := a2ui.Builtin(a2ui.V09, a2ui.DefaultCatalogID(a2ui.V09))
	if err != nil {
		log.Fatal(err)
	}
	system := "Answer with A2UI v0.9 messages in <a2ui-json> tags. The catalog:\n" + a2ui.Describe(cat)

	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/x-ndjson")
		p, b := a2ui.NewParser(), a2ui.NewBuilder(cat)
		send := func(segs []a2ui.Segment) {
			for _, seg := range segs {
				b.Add(seg) // prose could go to the client too, as its own lines
			}
			for _, msg := range b.Flush() {
				w.Write(append(msg, '\n'))
			}
			if f, ok := w.(http.Flusher); ok {
				f.Flush()
			}
		}
		_, err := genkit.Generate(r.Context(), g, ai.WithModel(model), ai.WithSystem(system), ai.WithPrompt("Show my order."),
			ai.WithStreaming(func(ctx context.Context, c *ai.ModelResponseChunk) error {
				send(p.Push(c.Text()))
				return nil
			}))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		send(p.Close())
		msgs, violations := b.End()
		for _, msg := range msgs {
			w.Write(append(msg, '\n'))
		}
		for _, v := range a2ui.Violations(violations) {
			log.Printf("to repair: %s", v) // send back to the model in a next turn
		}
	})

	rec := httptest.NewRecorder()
	handler.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/ui", nil))
	fmt.Print(rec.Body.String())
	// Output:
	// {"version":"v0.9","createSurface":{"catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json","surfaceId":"order"}}
	// {"version":"v0.9","updateComponents":{"surfaceId":"order","components":[{"children":[],"component":"Column","id":"root"}]}}
	// {"version":"v0.9","updateComponents":{"surfaceId":"order","components":[{"component":"Text","id":"title","text":"Your order","variant":"h2"},{"children":["title"],"component":"Column","id":"root"}]}}
	// {"version":"v0.9","updateComponents":{"surfaceId":"order","components":[{"component":"Text","id":"total","text":"12 €"},{"children":["title","total"],"component":"Column","id":"root"}]}}
}
