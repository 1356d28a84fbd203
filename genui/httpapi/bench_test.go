package httpapi_test

import (
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
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
	benchPosts(b, u, `{"conversation":`+userText("make a UI")+`}`, `"modelCalls":1,"model":`)
}

// BenchmarkConversation measures a conversation of 10 turns through the Gemini adapter and
// a zero-latency fake Gemini (one text and one surface per turn), the client resending the
// whole history each turn (stateless) or the server holding it (held, one new message a
// turn). ns/op is one whole conversation.
func BenchmarkConversation(b *testing.B) {
	fake := fakegemini.New(fakegemini.WithResponder(func(*fakegemini.Request) fakegemini.Reply {
		return fakegemini.Respond(fakegemini.Text("Here."), fakegemini.FunctionCall("addOrUpdateSurface", surfaceArgs))
	}))
	defer fake.Close()
	b.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	b.Setenv("GEMINI_API_KEY", "k")
	srv, _ := newServer(b, geminiModel)
	session := startSession(b, srv.URL)
	ui := `{"role":"model","parts":[{"type":"text","text":"Here."},{"type":"ui","definition":{"surfaceId":"s1","root":"c","widgets":[{"id":"c","widget":{"Column":{"children":["t"]}}},{"id":"t","widget":{"Text":{"text":"Hi <there> & you"}}}]}}]}`
	for _, held := range []bool{false, true} {
		name := "stateless"
		if held {
			name = "held"
		}
		b.Run(name, func(b *testing.B) {
			client := &http.Client{}
			b.ReportAllocs()
			for b.Loop() {
				n := benchConversations.Add(1)
				var history []string
				for turn := range 10 {
					user := `{"role":"user","parts":[{"type":"text","text":"turn ` + strconv.Itoa(turn) + `"}]}`
					body := `{"sessionId":"` + session + `","conversation":[` + strings.Join(append(history, user), ",") + `]}`
					if held {
						body = `{"sessionId":"` + session + `","conversationId":"bench-` + strconv.FormatInt(n, 10) + `-conversation","conversation":[` + user + `]}`
					}
					res, err := client.Post(srv.URL+"/generateUi", "application/json", strings.NewReader(body))
					if err != nil {
						b.Fatal(err)
					}
					out, _ := io.ReadAll(res.Body)
					res.Body.Close()
					if !strings.Contains(string(out), `"finishReason":"stop"`) {
						b.Fatalf("%s", out)
					}
					history = append(history, user, ui)
				}
			}
			client.CloseIdleConnections()
		})
	}
}

// benchConversations numbers the conversations of BenchmarkConversation.
var benchConversations atomic.Int64

// BenchmarkClientToolRoundTrip measures a turn that calls a client tool and its
// stateless continuation with the result, through the fake Gemini.
func BenchmarkClientToolRoundTrip(b *testing.B) {
	fake := fakegemini.New(fakegemini.WithResponder(func(r *fakegemini.Request) fakegemini.Reply {
		if len(r.FunctionResponses()) > 0 {
			return fakegemini.Respond(fakegemini.Text("Berlin."))
		}
		return fakegemini.Respond(fakegemini.Text("Looking."), fakegemini.FunctionCall("getLocation", nil))
	}))
	defer fake.Close()
	b.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	b.Setenv("GEMINI_API_KEY", "k")
	srv, _ := newServer(b, geminiModel)
	session := startSession(b, srv.URL)
	client := &http.Client{}
	ask := `{"role":"user","parts":[{"type":"text","text":"where am I?"}]}`
	b.ReportAllocs()
	for b.Loop() {
		res, err := client.Post(srv.URL+"/generateUi", "application/json", strings.NewReader(
			`{"sessionId":"`+session+`","clientTools":[{"name":"getLocation"}],"conversation":[`+ask+`]}`))
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(res.Body)
		res.Body.Close()
		ids := callIDsOf(b, string(out))
		if len(ids) != 1 {
			b.Fatalf("%s", out)
		}
		res, err = client.Post(srv.URL+"/generateUi", "application/json", strings.NewReader(`{"sessionId":"`+session+`","conversation":[`+ask+
			`,{"role":"model","parts":[{"type":"text","text":"Looking."},{"type":"toolCall","callId":"`+ids[0]+`","name":"getLocation"}]}`+
			`,{"role":"user","parts":[{"type":"toolResult","callId":"`+ids[0]+`","name":"getLocation","output":{"city":"Berlin"}}]}]}`))
		if err != nil {
			b.Fatal(err)
		}
		out, _ = io.ReadAll(res.Body)
		res.Body.Close()
		if !strings.Contains(string(out), `"finishReason":"stop"`) {
			b.Fatalf("%s", out)
		}
	}
	client.CloseIdleConnections()
}
