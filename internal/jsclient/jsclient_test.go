package jsclient

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/models"
	"github.com/genuiserver/genui/genui/offline"
)

// TestGenkitJSClient runs compat.test.mjs, which uses the official Genkit JS client, against
// the server.
func TestGenkitJSClient(t *testing.T) {
	unavailable := t.Skip
	if os.Getenv("CI") != "" {
		unavailable = t.Fatal // CI must run the test
	}
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable("node is not on PATH:", err)
	}
	if _, err := os.Stat(filepath.Join("node_modules", "genkit", "package.json")); err != nil {
		unavailable("genkit is not installed; run `npm ci` in internal/jsclient:", err)
	}

	ctx := context.Background()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	g := genkit.Init(ctx)
	m, err := models.Open(ctx, g, offline.Name, nil)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := genui.New(g, m, genui.WithLogger(quiet))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(svc, httpapi.WithLogger(quiet)))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
	})

	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, "--test", "compat.test.mjs")
	cmd.Env = append(os.Environ(), "GENUI_URL="+srv.URL, "NO_COLOR=1")
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("node --test timed out after 2m:\n%s", out)
		}
		t.Fatalf("node --test compat.test.mjs: %v\n%s", err, out)
	}
	t.Logf("node --test compat.test.mjs:\n%s", out)
}
