// Package nodetest runs the node tests of a Go test's directory: the compatibility
// tests that drive the service with official JavaScript clients installed from npm.
package nodetest

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// Timeout bounds a run of the node tests.
const Timeout = 2 * time.Minute

// Require returns the path of node, once node and the named packages (installed in the
// directory's node_modules by `npm ci`) are there. Without them it skips t, unless the
// CI environment variable is set: CI must run every test, and fails t instead. Under
// -short it always skips t.
func Require(t testing.TB, packages ...string) string {
	t.Helper()
	if testing.Short() {
		t.Skip("skipped under -short: needs node and the npm packages " + strings.Join(packages, ", "))
	}
	unavailable := t.Skip
	if os.Getenv("CI") != "" {
		unavailable = t.Fatal
	}
	node, err := exec.LookPath("node")
	if err != nil {
		unavailable("node is not on PATH:", err)
	}
	wd, _ := os.Getwd()
	for _, pkg := range packages {
		if _, err := os.Stat(filepath.Join("node_modules", pkg, "package.json")); err != nil {
			unavailable(pkg+" is not installed; run `npm ci` in "+wd+":", err)
		}
	}
	return node
}

var (
	passed  = regexp.MustCompile(`(?m)^ℹ pass (\d+)$`)
	skipped = regexp.MustCompile(`(?m)^ℹ (skipped|todo) (\d+)$`)
)

// Run runs `node --test` on files with the environment plus env, and fails t unless they
// all pass: at least one, none skipped. It returns their output, which it also logs.
func Run(t testing.TB, node string, env []string, files ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, append([]string{"--test", "--test-reporter=spec"}, files...)...)
	cmd.Env = append(append(os.Environ(), env...), "NO_COLOR=1")
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			t.Fatalf("node --test timed out after %v:\n%s", Timeout, out)
		}
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	t.Logf("node --test:\n%s", out)
	if m := passed.FindSubmatch(out); m == nil || string(m[1]) == "0" {
		t.Fatalf("no node test passed:\n%s", out)
	}
	for _, m := range skipped.FindAllSubmatch(out, -1) {
		if string(m[2]) != "0" {
			t.Errorf("node tests %s: %s", m[1], m[2])
		}
	}
	return out
}
