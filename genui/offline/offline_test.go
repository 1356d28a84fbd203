package offline_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/schemas"
)

// The offline model must compose valid UI for any genui catalog: every request it makes
// passes the validator, across text, UI-event and delete turns.
func TestOfflineModelAlwaysPassesTheValidator(t *testing.T) {
	svc, err := genui.New(genkit.Init(context.Background()), offline.New(), genui.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))), genui.WithMaxRepairs(0))
	if err != nil {
		t.Fatal(err)
	}
	for _, file := range []string{"../../schemas/catalogs/basic.json", "../../schemas/catalogs/rich.json", "../../catalog/testdata/large.json"} {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var catalog map[string]any
		if err := json.Unmarshal(b, &catalog); err != nil {
			t.Fatal(err)
		}
		var surface map[string]any
		for _, conv := range []string{
			`[{"role":"user","parts":[{"type":"text","text":"Hello"}]}]`,
			`[{"role":"user","parts":[{"type":"text","text":"Hello"}]},{"role":"model","parts":[{"type":"ui","definition":{"surfaceId":"surface-1","root":"root","widgets":[]}}]},{"role":"user","parts":[{"type":"uiEvent","event":{"surfaceId":"surface-1","widgetId":"send","eventType":"onTap","isAction":true,"value":{"reply":"yes"}}}]}]`,
			`[{"role":"user","parts":[{"type":"text","text":"Hello"}]},{"role":"model","parts":[{"type":"ui","definition":{"surfaceId":"surface-1","root":"root","widgets":[]}}]},{"role":"user","parts":[{"type":"text","text":"remove it"}]}]`,
		} {
			var req schemas.GenerateRequest
			req.Catalog = schemas.CatalogOf(catalog)
			if err := json.Unmarshal([]byte(conv), &req.Conversation); err != nil {
				t.Fatal(err)
			}
			res, err := svc.Generate(context.Background(), &req)
			if err != nil {
				t.Fatalf("%s: %v", file, err)
			}
			if len(res.ToolRequests) != 1 || res.Usage.ModelCalls != 1 {
				t.Fatalf("%s: %+v", file, res)
			}
			if surface == nil && res.ToolRequests[0].Name == "addOrUpdateSurface" {
				_ = json.Unmarshal(res.ToolRequests[0].Input, &surface)
			}
		}
		if !strings.Contains(mustString(surface), `"You said: Hello"`) {
			t.Fatalf("%s: %v", file, surface)
		}
	}
	if s := svc.Stats(); s.Rejected.Load() != 0 || s.Failed.Load() != 0 || s.Streamed.Load() != 9 {
		t.Fatalf("streamed %d, rejected %d, failed %d", s.Streamed.Load(), s.Rejected.Load(), s.Failed.Load())
	}
}

func mustString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
