package genui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/models"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/schemas"
)

// TestFlowsRunFromGenkitTooling starts Genkit in dev mode, so its reflection API (what the
// Genkit CLI and Dev UI use) serves the flows, and lists and runs them through it.
func TestFlowsRunFromGenkitTooling(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	t.Setenv("GENKIT_ENV", "dev")
	t.Setenv("GENKIT_REFLECTION_PORT", fmt.Sprint(port))
	t.Chdir(t.TempDir()) // the reflection server writes a runtime file next to go.mod, or here
	g := genkit.Init(context.Background())
	m, err := models.Open(context.Background(), g, offline.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := genui.New(g, m); err != nil {
		t.Fatal(err)
	}
	base := fmt.Sprintf("http://127.0.0.1:%d", port)

	var actions map[string]json.RawMessage
	getJSON(t, base+"/api/actions", &actions)
	for _, k := range []string{"/flow/startSession", "/flow/generateUi", "/flow/generateA2ui", "/model/genui/offline"} {
		if _, ok := actions[k]; !ok {
			t.Fatalf("action %s not listed", k)
		}
	}

	catalog, _ := schemas.SampleCatalog("basic")
	var started struct{ Result string }
	postJSON(t, base+"/api/runAction", map[string]any{"key": "/flow/startSession", "input": map[string]any{"protocolVersion": "0.1.0", "catalog": catalog}}, &started)
	if len(started.Result) < 22 {
		t.Fatalf("startSession via reflection: %+v", started)
	}
	body, _ := json.Marshal(map[string]any{"key": "/flow/generateUi", "input": map[string]any{
		"sessionId":    started.Result,
		"conversation": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "text": "Hello"}}}},
	}})
	res, err := http.Post(base+"/api/runAction?stream=true", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out, _ := io.ReadAll(res.Body)
	res.Body.Close()
	// Streamed chunks are Genkit chunks, as Genkit SSE carries them, one JSON per line,
	// then the result.
	if !strings.Contains(string(out), `{"role":"model","index":0,"content":[{"toolRequest":{"name":"addOrUpdateSurface"`) ||
		!strings.Contains(string(out), `"result":{"message":{"role":"model"`) {
		t.Fatalf("generateUi via reflection:\n%s", out)
	}

	// The A2UI flow: its stream is the A2UI messages, its result holds them all.
	body, _ = json.Marshal(map[string]any{"key": "/flow/generateA2ui", "input": map[string]any{
		"conversation": []any{map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "text": "Hello"}}}},
	}})
	res, err = http.Post(base+"/api/runAction?stream=true", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	out, _ = io.ReadAll(res.Body)
	res.Body.Close()
	if !strings.Contains(string(out), `{"role":"model","index":0,"content":[{"data":{"envelopes":[{"version":"v0.9","createSurface":`) ||
		!strings.Contains(string(out), `{"data":{"envelopes":[{"version":"v0.9","createSurface"`) {
		t.Fatalf("generateA2ui via reflection:\n%s", out)
	}
}

func getJSON(t *testing.T, u string, v any) {
	t.Helper()
	var res *http.Response
	var err error
	for i := 0; i < 50; i++ {
		if res, err = http.Get(u); err == nil {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if err := json.NewDecoder(res.Body).Decode(v); err != nil {
		t.Fatal(err)
	}
}

func postJSON(t *testing.T, u string, in, out any) {
	t.Helper()
	b, _ := json.Marshal(in)
	res, err := http.Post(u, "application/json", bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s: %v", raw, err)
	}
}
