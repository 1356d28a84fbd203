package httpapi_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/fakegemini"
)

// BenchmarkGenerateTurn measures one /generateUi turn over real HTTP on loopback: the
// request decoded, the session resolved, the Genkit flow run, the Gemini adapter calling a
// zero-latency fake Gemini through the real genai client (the fake answers one surface),
// the surface validated, stored and streamed. The fake's own cost is included.
func BenchmarkGenerateTurn(b *testing.B) {
	for _, f := range []struct{ name, path string }{{"ndjson", "/generateUi"}, {"sse", "/generateUi?stream=true"}} {
		b.Run("gemini/"+f.name, func(b *testing.B) {
			fake := fakegemini.New(fakegemini.WithResponder(func(*fakegemini.Request) fakegemini.Reply {
				return fakegemini.Respond(fakegemini.FunctionCall("addOrUpdateSurface", surfaceArgs))
			}))
			defer fake.Close()
			b.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
			b.Setenv("GEMINI_API_KEY", "k")
			srv, _ := newServer(b, geminiModel)
			benchTurns(b, srv.URL+f.path, startSession(b, srv.URL))
		})
	}
	b.Run("offline/ndjson", func(b *testing.B) {
		srv, _ := newServer(b, offline.Name)
		benchTurns(b, srv.URL+"/generateUi", startSession(b, srv.URL))
	})
}

func benchTurns(b *testing.B, u, session string) {
	benchPosts(b, u, `{"data":{"sessionId":"`+session+`","conversation":`+userText("make a UI")+`}}`, "addOrUpdateSurface")
}

// benchPosts posts body to u in a loop; each response must hold want.
func benchPosts(b *testing.B, u, body, want string) {
	client := &http.Client{}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		res, err := client.Post(u, "application/json", strings.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(out), want) {
			b.Fatalf("%s", out)
		}
	}
	b.StopTimer()
	client.CloseIdleConnections()
}

// BenchmarkGenerateA2UITurn is BenchmarkGenerateTurn for /generateA2ui: the model's A2UI
// text (the form of TestGeminiA2UIRepairs, valid, in 9 chunks) parsed as it streams, each
// component checked and sent as the surface grows.
func BenchmarkGenerateA2UITurn(b *testing.B) {
	valid := strings.Replace(formResponse, `,"placeholder":"you@example.com"`, "", 1)
	b.Run("gemini/ndjson", func(b *testing.B) {
		fake := fakegemini.New(fakegemini.WithResponder(func(*fakegemini.Request) fakegemini.Reply {
			return fakegemini.Reply{Chunks: fakegemini.TextChunks(valid, 9)}
		}))
		defer fake.Close()
		b.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
		b.Setenv("GEMINI_API_KEY", "k")
		srv, _ := newServer(b, geminiModel)
		benchA2UITurns(b, srv.URL+"/generateA2ui")
	})
	b.Run("offline/ndjson", func(b *testing.B) {
		srv, _ := newServer(b, offline.Name)
		benchA2UITurns(b, srv.URL+"/generateA2ui")
	})
}

func benchA2UITurns(b *testing.B, u string) {
	benchPosts(b, u, `{"conversation":`+userText("make a UI")+`}`, `"modelCalls":1}`)
}
