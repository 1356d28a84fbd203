package reqlog

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"
)

var testTime = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

var freshID = regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`)

func TestIDKeepsPrintableASCII(t *testing.T) {
	var all strings.Builder
	for c := byte(0x21); c <= 0x7e; c++ {
		all.WriteByte(c)
	}
	printable := all.String() // 94 characters
	keep := []string{
		"a",
		"~",
		"abc-123",
		"0f8fad5b-d9cb-469f-a165-70867728950e",
		"req_01HZX!@#$%^&*()[]{}<>?/\\|\"'`",
		strings.Repeat("x", 64),
		printable[:64],
		printable[30:],
	}
	for _, in := range keep {
		if got := ID(in); got != in {
			t.Errorf("ID(%q) = %q, want it kept", in, got)
		}
	}
}

func TestIDReplaces(t *testing.T) {
	replace := map[string]string{
		"empty":         "",
		"65 characters": strings.Repeat("x", 65),
		"very long":     strings.Repeat("y", 10_000),
		"space":         "abc def",
		"leading space": " abc",
		"only a space":  " ",
		"tab":           "abc\tdef",
		"newline":       "abc\ndef",
		"CR LF":         "abc\r\nX-Injected: 1",
		"NUL":           "abc\x00",
		"DEL":           "abc\x7f",
		"ESC":           "\x1b[31mred",
		"non-ASCII":     "réquête",
		"emoji":         "id-🙂",
		"invalid UTF-8": "id-\xff",
		"NBSP":          "a\u00a0b",
	}
	seen := map[string]bool{}
	for what, in := range replace {
		got := ID(in)
		if got == in {
			t.Errorf("%s: ID(%q) kept it", what, in)
			continue
		}
		if !freshID.MatchString(got) {
			t.Errorf("%s: ID(%q) = %q, want a fresh 22-character id", what, in, got)
		}
		if seen[got] {
			t.Errorf("%s: fresh id %q given twice", what, got)
		}
		seen[got] = true
	}
	// Fresh ids are kept when sent back.
	for id := range seen {
		if ID(id) != id {
			t.Errorf("fresh id %q not kept", id)
		}
	}
	a, b := ID(""), ID("")
	if a == b {
		t.Errorf("two fresh ids are equal: %q", a)
	}
}

func TestContext(t *testing.T) {
	if FromContext(context.Background()) != nil {
		t.Error("FromContext(background) is not nil")
	}
	info := &Info{ID: "r1", Route: "/generateUi"}
	ctx := NewContext(context.Background(), info)
	if got := FromContext(ctx); got != info {
		t.Errorf("FromContext = %p, want %p", got, info)
	}
	// The Info is shared: a transport set later is seen through the context.
	info.Transport = "ndjson"
	if FromContext(ctx).Transport != "ndjson" {
		t.Error("Transport set later not seen")
	}
	inner := &Info{ID: "r2"}
	if FromContext(NewContext(ctx, inner)) != inner {
		t.Error("innermost Info not returned")
	}
}

// logger returns a logger writing JSON through Handler into a buffer.
func logger(level slog.Level) (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	h := Handler(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: level}))
	return slog.New(h), &buf
}

// records decodes the JSON lines of buf.
func records(t *testing.T, buf *bytes.Buffer) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(buf.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		out = append(out, m)
	}
	buf.Reset()
	return out
}

func one(t *testing.T, buf *bytes.Buffer) map[string]any {
	t.Helper()
	rs := records(t, buf)
	if len(rs) != 1 {
		t.Fatalf("%d records, want 1", len(rs))
	}
	return rs[0]
}

func TestHandler(t *testing.T) {
	l, buf := logger(slog.LevelInfo)
	ctx := NewContext(context.Background(), &Info{ID: "req-1", Route: "/generateUi", Transport: "sse"})

	l.InfoContext(ctx, "hello", "n", 1)
	r := one(t, buf)
	if r["msg"] != "hello" || r["n"] != float64(1) || r["level"] != "INFO" {
		t.Errorf("record %v", r)
	}
	if r["request_id"] != "req-1" || r["route"] != "/generateUi" {
		t.Errorf("record %v, want request_id req-1 and route /generateUi", r)
	}
	if _, ok := r["transport"]; ok {
		t.Errorf("record %v has a transport", r)
	}

	// Without request info in the context: neither attribute.
	l.InfoContext(context.Background(), "plain")
	r = one(t, buf)
	if _, ok := r["request_id"]; ok {
		t.Errorf("record %v has a request_id", r)
	}
	if _, ok := r["route"]; ok {
		t.Errorf("record %v has a route", r)
	}
	l.Info("no context")
	if r := one(t, buf); r["request_id"] != nil || r["route"] != nil {
		t.Errorf("record %v", r)
	}

	// No route: only the id.
	l.WarnContext(NewContext(context.Background(), &Info{ID: "req-2"}), "warn")
	r = one(t, buf)
	if r["request_id"] != "req-2" || r["level"] != "WARN" {
		t.Errorf("record %v", r)
	}
	if _, ok := r["route"]; ok {
		t.Errorf("record %v has a route though Info has none", r)
	}

	// Disabled levels stay disabled.
	l.DebugContext(ctx, "debug")
	if buf.Len() != 0 {
		t.Errorf("debug record written: %s", buf)
	}
	if l.Handler().Enabled(ctx, slog.LevelDebug) {
		t.Error("Enabled(debug) with level info")
	}
	if !l.Handler().Enabled(ctx, slog.LevelError) {
		t.Error("Enabled(error) false")
	}

	// Each record gets its own context's id, once.
	l.InfoContext(ctx, "a")
	l.InfoContext(NewContext(context.Background(), &Info{ID: "req-3"}), "b")
	l.InfoContext(ctx, "c")
	rs := records(t, buf)
	want := []string{"req-1", "req-3", "req-1"}
	for i, r := range rs {
		if r["request_id"] != want[i] {
			t.Errorf("record %d: request_id %v, want %s", i, r["request_id"], want[i])
		}
	}
	if len(rs) != 3 {
		t.Fatalf("%d records, want 3", len(rs))
	}
}

// TestHandlerRecordUnchanged checks that the attributes go to a copy of the record: a
// record handled twice gets them once each time.
func TestHandlerRecordUnchanged(t *testing.T) {
	var buf bytes.Buffer
	h := Handler(slog.NewJSONHandler(&buf, nil))
	ctx := NewContext(context.Background(), &Info{ID: "req-1", Route: "/r"})
	rec := slog.NewRecord(testTime, slog.LevelInfo, "m", 0)
	rec.AddAttrs(slog.Int("k", 1))
	for range 2 {
		if err := h.Handle(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	if rec.NumAttrs() != 1 {
		t.Errorf("the record has %d attributes after Handle, want 1", rec.NumAttrs())
	}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if n := strings.Count(line, `"request_id"`); n != 1 {
			t.Errorf("line %s has request_id %d times", line, n)
		}
	}
}

func TestHandlerWithAttrsAndGroup(t *testing.T) {
	l, buf := logger(slog.LevelInfo)
	ctx := NewContext(context.Background(), &Info{ID: "req-9", Route: "/ws"})

	wa := l.With("component", "genkit")
	wa.InfoContext(ctx, "with attrs")
	r := one(t, buf)
	if r["component"] != "genkit" || r["request_id"] != "req-9" || r["route"] != "/ws" {
		t.Errorf("WithAttrs: record %v", r)
	}
	wa.InfoContext(context.Background(), "with attrs, no info")
	if r := one(t, buf); r["component"] != "genkit" || r["request_id"] != nil {
		t.Errorf("WithAttrs without info: record %v", r)
	}

	// Handlers derived by WithAttrs and WithGroup are still request-aware.
	if _, ok := l.Handler().WithAttrs([]slog.Attr{slog.String("a", "b")}).(*handler); !ok {
		t.Error("WithAttrs did not return the wrapping handler")
	}
	if _, ok := l.Handler().WithGroup("g").(*handler); !ok {
		t.Error("WithGroup did not return the wrapping handler")
	}

	g := l.WithGroup("g").With("x", 1)
	g.InfoContext(ctx, "grouped", "y", 2)
	r = one(t, buf)
	if got := find(r, "request_id"); len(got) != 1 || r["request_id"] != "req-9" {
		t.Errorf("WithGroup: request_id found %v in %v, want once req-9 at the top level", got, r)
	}
	if got := find(r, "route"); len(got) != 1 || r["route"] != "/ws" {
		t.Errorf("WithGroup: route found %v in %v, want once /ws at the top level", got, r)
	}
	grp, _ := r["g"].(map[string]any)
	if grp["x"] != float64(1) || grp["y"] != float64(2) {
		t.Errorf("WithGroup: group g = %v", r["g"])
	}
	g.InfoContext(context.Background(), "grouped, no info")
	if r := one(t, buf); len(find(r, "request_id")) != 0 {
		t.Errorf("WithGroup without info: record %v", r)
	}
}

// find returns the values of key at any depth of r.
func find(r map[string]any, key string) []any {
	var out []any
	for k, v := range r {
		if k == key {
			out = append(out, v)
		}
		if m, ok := v.(map[string]any); ok {
			out = append(out, find(m, key)...)
		}
	}
	return out
}
