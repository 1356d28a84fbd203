package aguiapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/genuiserver/genui/internal/testkit/fakegemini"
)

// BenchmarkTurn is one A2UI turn (a form of five components, 20 model chunks) through
// POST /generateA2ui (NDJSON) and through POST /ag-ui, against the fake Gemini over real
// HTTP; bytes/turn is what the client reads.
func BenchmarkTurn(b *testing.B) {
	fake := fakegemini.New(fakegemini.WithResponder(func(*fakegemini.Request) fakegemini.Reply {
		return fakegemini.Reply{Chunks: fakegemini.TextChunks(formResponse, 20)}
	}))
	defer fake.Close()
	b.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	b.Setenv("GEMINI_API_KEY", "k")
	srv := newServer(b, "googleai/gemini-2.5-flash")
	client := &http.Client{}
	post := func(b *testing.B, path, accept, body, want string) int {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", accept)
		res, err := client.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(out), want) {
			b.Fatalf("%s", out)
		}
		return len(out)
	}
	b.Run("generateA2ui", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			n += post(b, "/generateA2ui", "application/x-ndjson", `{"conversation":[{"role":"user","parts":[{"type":"text","text":"a form"}]}]}`, `"finishReason":"stop"`)
		}
		b.ReportMetric(float64(n)/float64(b.N), "bytes/turn")
	})
	b.Run("ag-ui", func(b *testing.B) {
		b.ReportAllocs()
		n := 0
		for b.Loop() {
			n += post(b, "/ag-ui", "text/event-stream", `{"threadId":"t","runId":"r","messages":[{"id":"m","role":"user","content":"a form"}]}`, `"RUN_FINISHED"`)
		}
		b.ReportMetric(float64(n)/float64(b.N), "bytes/turn")
	})
	client.CloseIdleConnections()
}
