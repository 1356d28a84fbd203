package a2aapi_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/internal/testkit/fakegemini"
)

// BenchmarkTurn measures one A2UI turn (a form written in 20 chunks by a zero-latency
// fake Gemini) over A2A message/stream, next to the same turn over /generateA2ui: the
// client, the fake and the server share the process.
func BenchmarkTurn(b *testing.B) {
	valid := strings.Replace(formResponse, `,"placeholder":"you@example.com"`, "", 1)
	fake := fakegemini.New(fakegemini.WithResponder(func(*fakegemini.Request) fakegemini.Reply {
		return fakegemini.Reply{Chunks: fakegemini.TextChunks(valid, 20)}
	}))
	defer fake.Close()
	b.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	b.Setenv("GEMINI_API_KEY", "k")
	srv, _ := newAgent(b, "googleai/gemini-2.5-flash", nil)
	client := &http.Client{}
	post := func(b *testing.B, path, body, want string) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-A2A-Extensions", extV09)
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(out), want) {
			b.Fatalf("%s", out)
		}
	}
	b.Run("generateA2ui", func(b *testing.B) {
		b.ReportAllocs()
		// A new held conversation per turn, as A2A holds each context's.
		run := strconv.FormatInt(time.Now().UnixNano(), 36)
		n := 0
		for b.Loop() {
			n++
			post(b, "/generateA2ui", `{"conversationId":"bench-`+run+`-`+strconv.Itoa(n)+`","conversation":[{"role":"user","parts":[{"type":"text","text":"a form"}]}]}`, `"finishReason":"stop"`)
		}
	})
	b.Run("a2a", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			post(b, "/a2a", `{"jsonrpc":"2.0","id":1,"method":"message/stream","params":{"message":{"role":"user","kind":"message","messageId":"m","parts":[{"kind":"text","text":"a form"}]}}}`, `"final":true`)
		}
	})
	client.CloseIdleConnections()
}
