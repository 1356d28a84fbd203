package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/genuiserver/genui/internal/fakegemini"
)

// holdMarker in a user message makes the fake hold its answer for the slow-model latency.
const holdMarker = "genui-bench-hold"

// fakeModelName is the model the direct calls use; the fake answers any model.
const fakeModelName = "gemini-2.5-flash"

// modelText is the text the model says before its function call.
const modelText = "Here is a small form for you."

// surfaceArgs is the addOrUpdateSurface call of every turn: a valid surface of the basic
// sample catalog.
func surfaceArgs() map[string]any {
	w := func(id string, widget map[string]any) map[string]any {
		return map[string]any{"id": id, "widget": widget}
	}
	return map[string]any{
		"surfaceId": "s1",
		"definition": map[string]any{"root": "c", "widgets": []any{
			w("c", map[string]any{"Column": map[string]any{"children": []any{"t", "b"}}}),
			w("t", map[string]any{"Text": map[string]any{"text": "Hello from the benchmark"}}),
			w("b", map[string]any{"ElevatedButton": map[string]any{"child": "bt"}}),
			w("bt", map[string]any{"Text": map[string]any{"text": "OK"}}),
		}},
	}
}

// fakeModel is the Gemini endpoint the server under test calls. Its answers to
// streamGenerateContent and generateContent are the bytes internal/fakegemini produces
// for the script, captured once at start-up and replayed without parsing or recording
// the requests, so it costs the machine next to nothing. Any other request (model
// listing…) is proxied to that fakegemini instance.
type fakeModel struct {
	ln       net.Listener
	srv      *http.Server
	ref      *fakegemini.Server
	proxy    *httputil.ReverseProxy
	frames   [][]byte // SSE events of the script, "data: …\n\n" each
	unary    []byte   // the generateContent answer
	latency  time.Duration
	pacing   time.Duration
	hold     time.Duration
	stop     chan struct{}
	stopOnce sync.Once
	handlers sync.WaitGroup

	calls atomic.Int64 // generate requests received
	held  atomic.Int64 // requests currently waiting with the hold latency
}

var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func newFakeModel(addr string, latency, pacing, hold time.Duration, textChunks int) (*fakeModel, error) {
	chunks := append(fakegemini.TextChunks(modelText, textChunks),
		fakegemini.FunctionCall("addOrUpdateSurface", surfaceArgs()))
	ref := fakegemini.New(fakegemini.WithResponder(func(*fakegemini.Request) fakegemini.Reply {
		return fakegemini.Respond(chunks...)
	}))
	f := &fakeModel{ref: ref, latency: latency, pacing: pacing, hold: hold, stop: make(chan struct{})}
	fail := func(err error) (*fakeModel, error) {
		ref.Close()
		return nil, err
	}
	stream, err := capture(ref.URL(), "streamGenerateContent?alt=sse")
	if err != nil {
		return fail(err)
	}
	for ev := range strings.SplitAfterSeq(string(stream), "\n\n") {
		if strings.TrimSpace(ev) != "" {
			f.frames = append(f.frames, []byte(ev))
		}
	}
	if len(f.frames) != len(chunks) {
		return fail(fmt.Errorf("fake model: captured %d events for %d chunks", len(f.frames), len(chunks)))
	}
	if f.unary, err = capture(ref.URL(), "generateContent"); err != nil {
		return fail(err)
	}
	refURL, _ := url.Parse(ref.URL())
	f.proxy = httputil.NewSingleHostReverseProxy(refURL)
	f.proxy.ErrorLog = log.New(io.Discard, "", 0)
	if f.ln, err = net.Listen("tcp", addr); err != nil {
		return fail(fmt.Errorf("fake model: %w", err))
	}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serve), ErrorLog: log.New(io.Discard, "", 0),
		ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = f.srv.Serve(f.ln) }()
	return f, nil
}

// capture returns the body fakegemini answers to one generate request.
func capture(base, method string) ([]byte, error) {
	body := `{"contents":[{"role":"user","parts":[{"text":"genui-bench"}]}]}`
	req, _ := http.NewRequest(http.MethodPost, base+"/v1beta/models/"+fakeModelName+":"+method, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("x-goog-api-key", "k")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fake model: capturing %s: %w", method, err)
	}
	defer res.Body.Close()
	out, err := io.ReadAll(res.Body)
	if err == nil && res.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %s: %s", res.Status, out)
	}
	if err != nil {
		return nil, fmt.Errorf("fake model: capturing %s: %w", method, err)
	}
	return out, nil
}

// URL is the base URL for GOOGLE_GEMINI_BASE_URL or genai.HTTPOptions.BaseURL.
func (f *fakeModel) URL() string { return "http://" + f.ln.Addr().String() }

// Close ends held answers, closes every connection and waits for the handlers.
func (f *fakeModel) Close() {
	f.stopOnce.Do(func() {
		close(f.stop)
		_ = f.srv.Close()
		f.handlers.Wait()
		f.ref.Close()
	})
}

// waitHeld waits until at least n requests are held (or, with n == 0, none), up to d.
func (f *fakeModel) waitHeld(ctx context.Context, n int64, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		h := f.held.Load()
		if (n > 0 && h >= n) || (n == 0 && h == 0) {
			return true
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (f *fakeModel) serve(w http.ResponseWriter, r *http.Request) {
	f.handlers.Add(1)
	defer f.handlers.Done()
	streaming := strings.HasSuffix(r.URL.Path, ":streamGenerateContent")
	if r.Method != http.MethodPost || !(streaming || strings.HasSuffix(r.URL.Path, ":generateContent")) {
		f.proxy.ServeHTTP(w, r)
		return
	}
	f.calls.Add(1)
	buf := bodyPool.Get().(*bytes.Buffer)
	buf.Reset()
	_, err := buf.ReadFrom(r.Body)
	held := bytes.Contains(buf.Bytes(), []byte(holdMarker))
	if buf.Cap() <= 1<<20 {
		bodyPool.Put(buf)
	}
	if err != nil {
		return
	}
	latency := f.latency
	if held {
		latency = f.hold
		f.held.Add(1)
		defer f.held.Add(-1)
	}
	if !streaming {
		if !f.pause(r.Context(), latency+f.pacing*time.Duration(len(f.frames)-1)) {
			panic(http.ErrAbortHandler)
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_, _ = w.Write(f.unary)
		return
	}
	if !f.pause(r.Context(), latency) {
		panic(http.ErrAbortHandler) // cut the connection, as fakegemini does
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	rc := http.NewResponseController(w)
	w.WriteHeader(http.StatusOK)
	for i, frame := range f.frames {
		if i > 0 && !f.pause(r.Context(), f.pacing) {
			panic(http.ErrAbortHandler)
		}
		if _, err := w.Write(frame); err != nil || rc.Flush() != nil {
			panic(http.ErrAbortHandler)
		}
	}
}

// pause waits d; false if the client went away or the fake is closing.
func (f *fakeModel) pause(ctx context.Context, d time.Duration) bool {
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return false
		case <-f.stop:
			return false
		}
	}
	select {
	case <-f.stop:
		return false
	default:
		return ctx.Err() == nil
	}
}
