package httpapi_test

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/durable"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
)

// slowReply is a turn of three events (text, surface, text) paced by the fake.
func slowReply() fakegemini.Reply {
	return fakegemini.Reply{
		Chunks: []fakegemini.Chunk{fakegemini.Text("Working."), fakegemini.FunctionCall("addOrUpdateSurface", surfaceArgs), fakegemini.Text("Done.")},
		Usage:  &fakegemini.Usage{PromptTokenCount: 10, CandidatesTokenCount: 5, TotalTokenCount: 15},
	}
}

type durableServer struct {
	base string
	fake *fakegemini.Server
	log  *durable.MemoryLog
}

func newDurableServer(t *testing.T, pacing, retention, grace time.Duration, hopts ...httpapi.Option) durableServer {
	log := durable.NewMemoryLog(retention)
	opts := []genui.Option{genui.WithStreams(log), genui.WithGrace(grace)}
	base, fake := newGeminiServerWith(t, []fakegemini.Option{fakegemini.WithPacing(pacing)}, opts, hopts)
	return durableServer{base, fake, log}
}

func (d durableServer) body(t *testing.T) string {
	return `{"data":{"sessionId":"` + startSession(t, d.base) + `","conversation":` + userText("make a UI") + `}}`
}

// open starts a request and returns the response with its body unread.
func open(t *testing.T, u string, header map[string]string, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestResumeReplaysTheWholeStreamWithoutASecondModelCall(t *testing.T) {
	for _, f := range []struct{ name, path, sep string }{{"sse", "/generateUi?stream=true", "\n\n"}, {"ndjson", "/generateUi", "\n"}} {
		t.Run(f.name, func(t *testing.T) {
			d := newDurableServer(t, 150*time.Millisecond, time.Minute, 10*time.Second)
			body := d.body(t)

			// Uninterrupted, for reference.
			d.fake.Enqueue(slowReply())
			want := post(t, d.base+f.path, nil, body).body

			// Interrupted after the first event, then resumed by id.
			d.fake.Enqueue(slowReply())
			res := open(t, d.base+f.path, nil, body)
			id := res.Header.Get("X-Genkit-Stream-Id")
			if len(id) < 22 {
				t.Fatalf("stream id %q", id)
			}
			first, err := bufio.NewReader(res.Body).ReadString('\n')
			if err != nil || !strings.Contains(first, "Working.") {
				t.Fatalf("first event %q %v", first, err)
			}
			res.Body.Close() // the phone drops the connection
			r := post(t, d.base+f.path, map[string]string{"X-Genkit-Stream-Id": id}, body)
			if r.status != 200 || r.header.Get("X-Genkit-Stream-Id") != id || r.body != want {
				t.Fatalf("resumed %d:\n%s\nwant:\n%s", r.status, r.body, want)
			}
			if n := len(d.fake.Requests()); n != 2 {
				t.Fatalf("%d model calls for two turns", n)
			}
			// After completion the stream can still be read, whole.
			if r := post(t, d.base+f.path, map[string]string{"X-Genkit-Stream-Id": id}, body); r.body != want {
				t.Fatalf("after completion:\n%s", r.body)
			}
		})
	}
}

func TestResumeNDJSONAfterALine(t *testing.T) {
	d := newDurableServer(t, 0, time.Minute, 10*time.Second)
	body := d.body(t)
	d.fake.Enqueue(slowReply())
	full := post(t, d.base+"/generateUi", nil, body)
	lines := strings.SplitAfter(full.body, "\n")
	id := full.header.Get("X-Genkit-Stream-Id")
	for after := 0; after <= 4; after++ {
		r := post(t, d.base+"/generateUi?after="+string(rune('0'+after)), map[string]string{"X-Genkit-Stream-Id": id}, "")
		if want := strings.Join(lines[after:], ""); r.body != want {
			t.Fatalf("after=%d:\n%s\nwant:\n%s", after, r.body, want)
		}
	}
	r := post(t, d.base+"/generateUi?after=x&streamId="+id, nil, "")
	checkError(t, r, 400, "INVALID_ARGUMENT", "after: must be a line number")
}

func TestUnknownOrExpiredStreamAnswers204(t *testing.T) {
	d := newDurableServer(t, 0, 300*time.Millisecond, 10*time.Second)
	r := post(t, d.base+"/generateUi?stream=true", map[string]string{"X-Genkit-Stream-Id": "nope"}, "")
	if r.status != http.StatusNoContent || r.body != "" {
		t.Fatalf("unknown: %d %q", r.status, r.body)
	}
	d.fake.Enqueue(slowReply())
	full := post(t, d.base+"/generateUi?stream=true", nil, d.body(t))
	id := full.header.Get("X-Genkit-Stream-Id")
	deadline := time.Now().Add(5 * time.Second)
	for {
		r := post(t, d.base+"/generateUi?stream=true", map[string]string{"X-Genkit-Stream-Id": id}, "")
		if r.status == http.StatusNoContent {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream still served after its retention: %d", r.status)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestReattachingWithinTheGracePeriodGetsEverything(t *testing.T) {
	d := newDurableServer(t, 400*time.Millisecond, time.Minute, 2*time.Second)
	body := d.body(t)
	d.fake.Enqueue(slowReply())
	res := open(t, d.base+"/generateUi", nil, body)
	id := res.Header.Get("X-Genkit-Stream-Id")
	res.Body.Close()
	time.Sleep(600 * time.Millisecond) // gone for less than the grace period
	r := post(t, d.base+"/generateUi", map[string]string{"X-Genkit-Stream-Id": id}, "")
	if !strings.HasSuffix(r.body, `"modelCalls":1,"model":"googleai/gemini-2.5-flash"}}}`+"\n") || strings.Count(r.body, "\n") != 4 {
		t.Fatalf("%s", r.body)
	}
	if d.fake.Requests()[0].Cancelled() {
		t.Fatal("the model call was cancelled although a client came back in time")
	}
}

func TestExplicitCancelStopsTheModelCall(t *testing.T) {
	d := newDurableServer(t, time.Second, time.Minute, time.Minute)
	body := d.body(t)
	d.fake.Enqueue(slowReply())
	res := open(t, d.base+"/generateUi", nil, body)
	defer res.Body.Close()
	id := res.Header.Get("X-Genkit-Stream-Id")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := d.fake.WaitRequests(ctx, 1); err != nil {
		t.Fatal(err)
	}
	if r := post(t, d.base+"/generateUi/cancel", nil, `{"streamId":"`+id+`"}`); r.status != 200 || r.body != `{"result":"cancelled"}`+"\n" {
		t.Fatalf("cancel: %d %s", r.status, r.body)
	}
	rest, _ := io.ReadAll(res.Body)
	if !strings.HasSuffix(string(rest), `{"type":"error","error":{"status":"CANCELLED","message":"the turn was cancelled by request"}}`+"\n") {
		t.Fatalf("stream after cancel:\n%s", rest)
	}
	select {
	case <-d.fake.Requests()[0].Done():
	case <-time.After(5 * time.Second):
		t.Fatal("model call still running")
	}
	if r := post(t, d.base+"/generateUi/cancel", nil, `{"data":{"streamId":"nope"}}`); r.status != 404 {
		t.Fatalf("unknown stream: %d %s", r.status, r.body)
	}
	if r := post(t, d.base+"/generateUi/cancel", nil, `{}`); r.status != 400 {
		t.Fatalf("no stream id: %d %s", r.status, r.body)
	}
}

func TestKeepalives(t *testing.T) {
	d := newDurableServer(t, 0, time.Minute, time.Minute, httpapi.WithKeepalive(100*time.Millisecond))
	body := d.body(t)
	reply := slowReply()
	reply.Latency = 450 * time.Millisecond
	d.fake.Enqueue(reply)
	r := post(t, d.base+"/generateUi", nil, body)
	if n := strings.Count(r.body, `{"type":"keepalive"}`+"\n"); n < 2 || !strings.HasPrefix(r.body, `{"type":"keepalive"}`) {
		t.Fatalf("NDJSON keepalives: %d\n%s", n, r.body)
	}
	// Genkit SSE: none by default, since clients cannot parse comments.
	reply = slowReply()
	reply.Latency = 450 * time.Millisecond
	d.fake.Enqueue(reply)
	if r := post(t, d.base+"/generateUi?stream=true", nil, body); strings.Contains(r.body, "keepalive") {
		t.Fatalf("SSE keepalive without opt-in:\n%s", r.body)
	}

	d = newDurableServer(t, 0, time.Minute, time.Minute, httpapi.WithSSEKeepalive(100*time.Millisecond))
	reply = slowReply()
	reply.Latency = 450 * time.Millisecond
	d.fake.Enqueue(reply)
	if r := post(t, d.base+"/generateUi?stream=true", nil, d.body(t)); !strings.HasPrefix(r.body, ": keepalive\n\n") {
		t.Fatalf("SSE keepalive opt-in:\n%s", r.body)
	}
}
