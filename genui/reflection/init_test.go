package reflection_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui/reflection"
)

// devProject makes the test look like `genkit start --experimental-reflection-v2` to
// genkit.Init: the development environment, a project directory (where Genkit's V1 server
// would write its runtime file) and a V1 port, and the manager URL. It returns the V1 port.
func devProject(t *testing.T, managerURL string) int {
	t.Helper()
	dir := t.TempDir()
	t.Chdir(dir)
	must(t, os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module devproject\n"), 0o644))
	port := freePort(t)
	t.Setenv("GENKIT_ENV", "dev")
	t.Setenv("GENKIT_REFLECTION_PORT", strconv.Itoa(port))
	t.Setenv(reflection.EnvServer, managerURL)
	t.Setenv(reflection.EnvAPIURL, "")
	return port
}

// TestInitGenkit checks that under a V2 manager InitGenkit starts neither of Genkit's
// reflection servers, so that Start registers the only runtime.
func TestInitGenkit(t *testing.T) {
	for _, env := range []string{reflection.EnvServer, reflection.EnvAPIURL} {
		t.Run(env, func(t *testing.T) {
			m := newManager(t)
			port := devProject(t, "")
			t.Setenv(env, m.url())
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()

			g := reflection.InitGenkit(ctx)
			if os.Getenv(env) != m.url() || os.Getenv("GENKIT_ENV") != "dev" {
				t.Fatalf("environment not restored: %s=%q GENKIT_ENV=%q", env, os.Getenv(env), os.Getenv("GENKIT_ENV"))
			}
			// Genkit's V2 client would have connected before Init returned.
			if n := m.connections(); n != 0 {
				t.Fatalf("Genkit's own V2 client connected (%d connections)", n)
			}
			// Genkit's V1 server would listen on GENKIT_REFLECTION_PORT and write a runtime file.
			if c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second); err == nil {
				c.Close()
				t.Fatal("Genkit's V1 reflection server is listening")
			}
			if _, err := os.Stat(".genkit/runtimes"); !os.IsNotExist(err) {
				t.Fatalf("Genkit's V1 runtime file: %v", err)
			}

			c, err := reflection.Start(ctx, g, reflection.WithLogger(quiet))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			m.nextRegister(t)
			time.Sleep(100 * time.Millisecond)
			if n, k := m.runtimeCount(), m.connections(); n != 1 || k != 1 || len(m.registers) != 0 {
				t.Fatalf("%d runtimes, %d connections, %d more registers", n, k, len(m.registers))
			}
		})
	}

	t.Run("without a manager", func(t *testing.T) {
		// Not under a V2 manager, InitGenkit is genkit.Init: in the development environment,
		// Genkit's V1 server serves `genkit start` without --experimental-reflection-v2.
		port := devProject(t, "")
		ctx, cancel := context.WithCancel(context.Background())
		reflection.InitGenkit(ctx)
		c, err := net.DialTimeout("tcp", fmt.Sprintf("127.0.0.1:%d", port), time.Second)
		if err != nil {
			t.Fatalf("Genkit's V1 reflection server: %v", err)
		}
		c.Close()
		cancel()
		eventually(t, "V1 to stop", func() bool {
			files, _ := os.ReadDir(".genkit/runtimes")
			return len(files) == 0
		})
	})
}

// TestGenkitV2ClientDefects reproduces the defects of Genkit Go's own Reflection API V2
// client (genkit/reflection_v2.go) that this package exists for; see the package
// documentation. When this test fails after a Genkit upgrade, a defect was fixed upstream:
// update the documentation, and consider dropping this package for genkit.Init.
func TestGenkitV2ClientDefects(t *testing.T) {
	t.Run("Init panics without a manager", func(t *testing.T) {
		devProject(t, "ws://127.0.0.1:"+strconv.Itoa(freePort(t)))
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "reflection server startup failed") {
				t.Fatalf("genkit.Init without a manager: recovered %v", r)
			}
		}()
		genkit.Init(ctx)
	})

	t.Run("messages over 32 KiB drop the connection", func(t *testing.T) {
		m := newManager(t)
		devProject(t, m.url())
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		g := genkit.Init(ctx)
		genkit.DefineFlow(g, "size", func(ctx context.Context, s string) (int, error) { return len(s), nil })
		p := m.nextRegister(t).peer
		// 32 KiB of input is too much; a bit less is fine.
		if out := result[runResult](t, p.roundTrip(t, "runAction", map[string]any{"key": "/flow/size", "input": strings.Repeat("x", 32000)})); string(out.Result) != "32000" {
			t.Fatalf("size: %s", out.Result)
		}
		p.request(t, "runAction", map[string]any{"key": "/flow/size", "input": strings.Repeat("x", 32<<10)})
		select {
		case <-p.done:
		case <-time.After(wait):
			t.Fatal("the connection survived a 32 KiB message")
		}
		m.nextRegister(t) // it reconnects; the run is never answered
		cancel()
		eventually(t, "Genkit's client to leave", func() bool { return m.connections() == 0 })
	})

	t.Run("running actions survive a dropped connection", func(t *testing.T) {
		m := newManager(t)
		devProject(t, m.url())
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		g := genkit.Init(ctx)
		started, ended := make(chan struct{}), make(chan error, 1)
		genkit.DefineFlow(g, "wait", func(ctx context.Context, _ string) (string, error) {
			close(started)
			<-ctx.Done()
			ended <- context.Cause(ctx)
			return "", ctx.Err()
		})
		p := m.nextRegister(t).peer
		p.request(t, "runAction", map[string]any{"key": "/flow/wait", "input": ""})
		<-started
		p.ws.CloseNow()
		m.nextRegister(t)
		select {
		case err := <-ended:
			t.Fatalf("the action was cancelled when the connection dropped: %v", err)
		case <-time.After(300 * time.Millisecond):
		}
		cancel() // Init's context is what ends it
		<-ended
		eventually(t, "Genkit's client to leave", func() bool { return m.connections() == 0 })
	})
}
