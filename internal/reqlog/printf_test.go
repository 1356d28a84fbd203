package reqlog_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/genuiserver/genui/internal/reqlog"
)

// jsonLines decodes the JSON lines of out.
func jsonLines(t *testing.T, out *bytes.Buffer) []map[string]any {
	t.Helper()
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		lines = append(lines, m)
	}
	return lines
}

// logger returns a JSON logger into out, of level info, behind reqlog.Handler.
func logger(out *bytes.Buffer) *slog.Logger {
	return slog.New(reqlog.Handler(slog.NewJSONHandler(out, &slog.HandlerOptions{Level: slog.LevelInfo})))
}

func TestPrintf(t *testing.T) {
	var out bytes.Buffer
	log := logger(&out)
	p := reqlog.Printf{Lib: "go-redis", Prefix: "redis: ", Level: slog.LevelWarn, Log: func() *slog.Logger { return log }}
	ctx := reqlog.NewContext(context.Background(), &reqlog.Info{ID: "req-42", Route: "/generateUi"})
	p.Printf(ctx, "redis: connection pool: failed to dial after %d attempts: %v\n", 5, "refused")
	p.Printf(context.Background(), "specified duration is %s", time.Microsecond)
	p.Printf(nil, "no context") //nolint:staticcheck // a library may pass none
	lines := jsonLines(t, &out)
	if len(lines) != 3 {
		t.Fatalf("%d lines: %s", len(lines), out.String())
	}
	want := map[string]any{"level": "WARN", "msg": "connection pool: failed to dial after 5 attempts: refused", "lib": "go-redis", "request_id": "req-42", "route": "/generateUi"}
	for k, v := range want {
		if lines[0][k] != v {
			t.Errorf("%s = %v, want %v (%v)", k, lines[0][k], v, lines[0])
		}
	}
	if _, ok := lines[1]["request_id"]; ok || lines[1]["msg"] != "specified duration is 1µs" {
		t.Errorf("a line without a request: %v", lines[1])
	}
	// Below the logger's level, nothing.
	out.Reset()
	reqlog.Printf{Level: slog.LevelDebug, Log: func() *slog.Logger { return log }}.Printf(ctx, "quiet")
	if out.Len() != 0 {
		t.Errorf("a debug line at level info: %s", out.String())
	}
}

func TestPrintfDefaultLogger(t *testing.T) {
	var out bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(logger(&out))
	t.Cleanup(func() { slog.SetDefault(prev) })
	reqlog.Printf{Level: slog.LevelInfo}.Printf(context.Background(), "to %s", "the default")
	if lines := jsonLines(t, &out); len(lines) != 1 || lines[0]["msg"] != "to the default" || lines[0]["lib"] != nil {
		t.Fatalf("%s", out.String())
	}
}

// go-redis's own lines, given Printf as its logger, are structured, and carry the id of
// the request when go-redis logs with its context (it dials new connections in a context
// of its own).
func TestPrintfAsRedisLogger(t *testing.T) {
	var out bytes.Buffer
	log := logger(&out)
	redis.SetLogger(reqlog.Printf{Lib: "go-redis", Prefix: "redis: ", Level: slog.LevelWarn, Log: func() *slog.Logger { return log }})
	t.Cleanup(func() { redis.SetLogger(reqlog.Printf{Lib: "go-redis", Prefix: "redis: ", Level: slog.LevelWarn}) })

	// A port nothing listens on.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	client := redis.NewClient(&redis.Options{Addr: addr, DialerRetries: 1, MaxRetries: -1, DialTimeout: time.Second})
	defer client.Close()
	ctx := reqlog.NewContext(context.Background(), &reqlog.Info{ID: "req-redis-1", Route: "/generateUi"})
	// A TTL under a millisecond: go-redis says so, with the command's context.
	if err := client.Set(ctx, "k", "v", 500*time.Microsecond).Err(); err == nil {
		t.Fatal("SET on a closed port succeeded")
	}
	var dial, truncated bool
	for _, l := range jsonLines(t, &out) {
		msg, _ := l["msg"].(string)
		if l["lib"] != "go-redis" || l["level"] != "WARN" || strings.HasPrefix(msg, "redis: ") {
			t.Errorf("go-redis's line: %v", l)
		}
		switch {
		case strings.Contains(msg, "failed to dial"):
			dial = true
		case strings.Contains(msg, "truncating to 1ms"):
			truncated = true
			if l["request_id"] != "req-redis-1" || l["route"] != "/generateUi" {
				t.Errorf("a line logged with the request's context: %v", l)
			}
		}
	}
	if !dial || !truncated {
		t.Fatalf("go-redis's lines (a dial failure: %v, a truncated TTL: %v):\n%s", dial, truncated, out.String())
	}
}
