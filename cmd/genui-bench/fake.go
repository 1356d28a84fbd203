package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/genuiserver/genui/internal/testkit/fakegemini"
)

// holdMarker in a user message makes the fake hold its answer for the slow-model latency.
const holdMarker = "genui-bench-hold"

// toolMarker in a user message makes the fake call the client tool getLocation, unless
// the request already holds a function response (the continuation after the call).
const toolMarker = "genui-bench-tool"

// toolText is the text the model says before calling getLocation.
const toolText = "Let me look up where you are."

var (
	toolMarkerBytes       = []byte(toolMarker)
	functionResponseBytes = []byte(`"functionResponse"`)
)

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
	ln         net.Listener
	srv        *http.Server
	ref        *fakegemini.Server
	proxy      *httputil.ReverseProxy
	frames     [][]byte // SSE events of the script, "data: …\n\n" each
	unary      []byte   // the generateContent answer
	toolFrames [][]byte // SSE events of the client tool script: text, then getLocation
	toolUnary  []byte   // its generateContent answer
	latency    time.Duration
	pacing     time.Duration
	hold       time.Duration
	stop       chan struct{}
	stopOnce   sync.Once
	handlers   sync.WaitGroup

	calls atomic.Int64 // generate requests received
	held  atomic.Int64 // requests currently waiting with the hold latency

	a2ui     map[string]*a2uiFrames // A2UI turns, by version
	a2a      *a2uiFrames            // the a2a phase's turns: the v0.9 script at its own pace
	open     *a2uiFrames            // the open phase's turns: the v0.9 script at its own pace
	policy   *a2uiFrames            // the policy phase's turns: the v0.9 script, unpaced
	rows     map[string]*a2uiFrames // the rows phase's turns, by rowsID (rows and pace)
	a2uiMu   sync.Mutex
	a2uiLast *a2uiCall // the latest A2UI model call
}

// a2uiPace is how the fake model streams the A2UI script.
type a2uiPace struct {
	chunkTokens int           // tokens per streamed chunk (bytes/4)
	tokensPerS  float64       // the model's output rate
	latency     time.Duration // before the first token
	// a2aTokensPerS is the output rate of the a2a phase's turns (after the same latency);
	// 0: unpaced, every chunk at once.
	a2aTokensPerS float64
	// openTokensPerS and openLatency pace the open phase's turns.
	openTokensPerS float64
	openLatency    time.Duration
	// rowsLevels are the rows phase's row counts (none: its scripts are not built), and
	// rowsTokensPerS the output rate of its paced turns.
	rowsLevels     []int
	rowsTokensPerS float64
}

// a2uiFrames is the A2UI script of one version as the fake serves it.
type a2uiFrames struct {
	script     *a2uiScript
	chunkBytes int
	frames     [][]byte        // SSE events, one per chunk of the script's text
	at         []time.Duration // when each is sent, from the request's arrival
	unary      []byte
}

// a2uiCall records when the frames of one A2UI model call were sent.
type a2uiCall struct {
	start time.Time
	sent  []time.Time
}

var bodyPool = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func newFakeModel(addr string, latency, pacing, hold time.Duration, textChunks int, pace a2uiPace) (*fakeModel, error) {
	chunks := append(fakegemini.TextChunks(modelText, textChunks),
		fakegemini.FunctionCall("addOrUpdateSurface", surfaceArgs()))
	toolChunks := []fakegemini.Chunk{fakegemini.Text(toolText), fakegemini.FunctionCall("getLocation", map[string]any{})}
	f := &fakeModel{latency: latency, pacing: pacing, hold: hold, stop: make(chan struct{}), a2ui: map[string]*a2uiFrames{}}
	a2uiChunks := map[string][]fakegemini.Chunk{}
	for _, v := range a2uiVersions {
		s, err := a2uiScriptFor(v)
		if err != nil {
			return nil, err
		}
		fr := &a2uiFrames{script: s, chunkBytes: 4 * pace.chunkTokens}
		texts := s.chunks(fr.chunkBytes)
		fr.at = schedule(texts, pace.tokensPerS, pace.latency)
		for _, t := range texts {
			a2uiChunks[v] = append(a2uiChunks[v], fakegemini.Text(t))
		}
		f.a2ui[v] = fr
		if v == a2aVersion {
			// The same chunks (so the same frames, captured below), on their own schedule.
			f.a2a = &a2uiFrames{script: s, chunkBytes: fr.chunkBytes, at: make([]time.Duration, len(texts))}
			if pace.a2aTokensPerS > 0 {
				f.a2a.at = schedule(texts, pace.a2aTokensPerS, pace.latency)
			}
			f.open = &a2uiFrames{script: s, chunkBytes: fr.chunkBytes, at: make([]time.Duration, len(texts))}
			if pace.openTokensPerS > 0 {
				f.open.at = schedule(texts, pace.openTokensPerS, pace.openLatency)
			}
			// Always unpaced: every chunk at once, whatever the other phases' pace.
			f.policy = &a2uiFrames{script: s, chunkBytes: fr.chunkBytes, at: make([]time.Duration, len(texts))}
		}
	}
	ref := fakegemini.New(fakegemini.WithResponder(func(r *fakegemini.Request) fakegemini.Reply {
		if strings.Contains(r.LastUserText(), toolMarker) {
			return fakegemini.Respond(toolChunks...)
		}
		if strings.Contains(r.LastUserText(), rowsProbe) {
			return fakegemini.Respond(fakegemini.Text(rowsProbeTexts[0]), fakegemini.Text(rowsProbeTexts[1]))
		}
		for v, c := range a2uiChunks {
			if strings.Contains(r.LastUserText(), a2uiKey(v)) {
				return fakegemini.Respond(c...)
			}
		}
		return fakegemini.Respond(chunks...)
	}))
	f.ref = ref
	fail := func(err error) (*fakeModel, error) {
		ref.Close()
		return nil, err
	}
	var err error
	if f.frames, f.unary, err = captureScript(ref.URL(), "genui-bench", len(chunks)); err != nil {
		return fail(err)
	}
	if f.toolFrames, f.toolUnary, err = captureScript(ref.URL(), toolMarker, len(toolChunks)); err != nil {
		return fail(err)
	}
	for v, fr := range f.a2ui {
		if fr.frames, fr.unary, err = captureScript(ref.URL(), a2uiKey(v), len(a2uiChunks[v])); err != nil {
			return fail(err)
		}
	}
	f.a2a.frames, f.a2a.unary = f.a2ui[a2aVersion].frames, f.a2ui[a2aVersion].unary
	f.open.frames, f.open.unary = f.a2a.frames, f.a2a.unary
	f.policy.frames, f.policy.unary = f.a2a.frames, f.a2a.unary
	if len(pace.rowsLevels) > 0 {
		if f.rows, err = rowsFrames(ref.URL(), pace); err != nil {
			return fail(err)
		}
	}
	refURL, _ := url.Parse(ref.URL())
	f.proxy = httputil.NewSingleHostReverseProxy(refURL)
	f.proxy.ErrorLog = log.New(io.Discard, "", 0)
	if f.ln, err = net.Listen("tcp", addr); err != nil {
		return fail(fmt.Errorf("fake model: %w", err))
	}
	f.srv = &http.Server{Handler: http.HandlerFunc(f.serve), ErrorLog: log.New(io.Discard, "", 0),
		ReadHeaderTimeout: 10 * time.Second}
	// HTTP/1.1, and HTTP/2 without TLS for a server run with --model-h2c.
	f.srv.Protocols = new(http.Protocols)
	f.srv.Protocols.SetHTTP1(true)
	f.srv.Protocols.SetUnencryptedHTTP2(true)
	go func() { _ = f.srv.Serve(f.ln) }()
	return f, nil
}

// captureScript returns the SSE events (n of them) and the unary answer fakegemini
// gives to a user message.
func captureScript(base, text string, n int) (frames [][]byte, unary []byte, err error) {
	stream, err := capture(base, "streamGenerateContent?alt=sse", text)
	if err != nil {
		return nil, nil, err
	}
	for ev := range strings.SplitAfterSeq(string(stream), "\n\n") {
		if strings.TrimSpace(ev) != "" {
			frames = append(frames, []byte(ev))
		}
	}
	if len(frames) != n {
		return nil, nil, fmt.Errorf("fake model: captured %d events for %d chunks", len(frames), n)
	}
	if unary, err = capture(base, "generateContent", text); err != nil {
		return nil, nil, err
	}
	return frames, unary, nil
}

// capture returns the body fakegemini answers to one generate request.
func capture(base, method, text string) ([]byte, error) {
	t, _ := json.Marshal(text)
	body := `{"contents":[{"role":"user","parts":[{"text":` + string(t) + `}]}]}`
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
	frames, unary := f.frames, f.unary
	if bytes.Contains(buf.Bytes(), toolMarkerBytes) && !bytes.Contains(buf.Bytes(), functionResponseBytes) {
		frames, unary = f.toolFrames, f.toolUnary
	}
	a2 := f.a2uiFor(buf.Bytes())
	if buf.Cap() <= 1<<20 {
		bodyPool.Put(buf)
	}
	if err != nil {
		return
	}
	if a2 != nil {
		f.serveA2UI(w, r, a2, streaming)
		return
	}
	latency := f.latency
	if held {
		latency = f.hold
		f.held.Add(1)
		defer f.held.Add(-1)
	}
	if !streaming {
		if !f.pause(r.Context(), latency+f.pacing*time.Duration(len(frames)-1)) {
			panic(http.ErrAbortHandler)
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_, _ = w.Write(unary)
		return
	}
	if !f.pause(r.Context(), latency) {
		panic(http.ErrAbortHandler) // cut the connection, as fakegemini does
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	rc := http.NewResponseController(w)
	w.WriteHeader(http.StatusOK)
	for i, frame := range frames {
		if i > 0 && !f.pause(r.Context(), f.pacing) {
			panic(http.ErrAbortHandler)
		}
		if _, err := w.Write(frame); err != nil || rc.Flush() != nil {
			panic(http.ErrAbortHandler)
		}
	}
}

// a2uiFor returns the A2UI script a request asks for by its marker, or nil.
func (f *fakeModel) a2uiFor(body []byte) *a2uiFrames {
	if i := bytes.Index(body, rowsMarkerBytes); i >= 0 {
		id := body[i+len(rowsMarkerBytes):]
		if j := bytes.IndexByte(id[:min(len(id), 32)], ':'); j > 0 {
			return f.rows[string(id[:j])]
		}
		return nil
	}
	if bytes.Contains(body, a2aMarkerBytes) {
		return f.a2a
	}
	if bytes.Contains(body, openMarkerBytes) {
		return f.open
	}
	if bytes.Contains(body, policyMarkerBytes) {
		return f.policy
	}
	if !bytes.Contains(body, []byte(a2uiMarker)) {
		return nil
	}
	for v, fr := range f.a2ui {
		if bytes.Contains(body, []byte(a2uiKey(v))) {
			return fr
		}
	}
	return nil
}

// serveA2UI streams an A2UI script, each chunk at its time from the request's arrival
// (not after the previous one, so that timer slack does not add up), and records when
// each went out.
func (f *fakeModel) serveA2UI(w http.ResponseWriter, r *http.Request, fr *a2uiFrames, streaming bool) {
	call := &a2uiCall{start: time.Now(), sent: make([]time.Time, 0, len(fr.frames))}
	f.a2uiMu.Lock()
	f.a2uiLast = call
	f.a2uiMu.Unlock()
	if !streaming {
		if !f.pause(r.Context(), time.Until(call.start.Add(fr.at[len(fr.at)-1]))) {
			panic(http.ErrAbortHandler)
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		_, _ = w.Write(fr.unary)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	rc := http.NewResponseController(w)
	w.WriteHeader(http.StatusOK)
	for i, frame := range fr.frames {
		if !f.pause(r.Context(), time.Until(call.start.Add(fr.at[i]))) {
			panic(http.ErrAbortHandler)
		}
		if _, err := w.Write(frame); err != nil || rc.Flush() != nil {
			panic(http.ErrAbortHandler)
		}
		now := time.Now()
		f.a2uiMu.Lock()
		call.sent = append(call.sent, now)
		f.a2uiMu.Unlock()
	}
}

// lastA2UICall returns when the request of the latest A2UI model call arrived and when
// each of its frames was sent (so far).
func (f *fakeModel) lastA2UICall() (time.Time, []time.Time) {
	f.a2uiMu.Lock()
	defer f.a2uiMu.Unlock()
	if f.a2uiLast == nil {
		return time.Time{}, nil
	}
	return f.a2uiLast.start, slices.Clone(f.a2uiLast.sent)
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

// rowsProbe in a user message makes fakegemini answer with the two texts of
// rowsProbeTexts, whose encoding rowsFrames follows.
const rowsProbe = "genui-bench-probe:"

var rowsProbeTexts = [2]string{"genui-bench-probe-first", "genui-bench-probe-last"}

// rowsFrames builds the rows phase's scripts: for each level (and the warm-up turn's),
// the script in chunks of the A2UI chunk size, unpaced (every chunk at once) and paced at
// rowsTokensPerS from the request's arrival.
func rowsFrames(base string, pace a2uiPace) (map[string]*a2uiFrames, error) {
	probe, probeUnary, err := captureScript(base, rowsProbe, 2)
	if err != nil {
		return nil, err
	}
	out := map[string]*a2uiFrames{}
	for _, n := range append([]int{rowsWarmupRows}, pace.rowsLevels...) {
		if out[rowsID(n, rowsUnpaced)] != nil {
			continue
		}
		s, err := parseA2UIScript(a2aVersion, rowsScript(n))
		if err != nil {
			return nil, err
		}
		unpaced := &a2uiFrames{script: s, chunkBytes: 4 * pace.chunkTokens}
		texts := s.chunks(unpaced.chunkBytes)
		if unpaced.frames, unpaced.unary, err = encodeLike(probe, probeUnary, texts); err != nil {
			return nil, err
		}
		unpaced.at = make([]time.Duration, len(texts))
		paced := *unpaced
		paced.at = schedule(texts, pace.rowsTokensPerS, 0)
		out[rowsID(n, rowsUnpaced)], out[rowsID(n, rowsPaced)] = unpaced, &paced
	}
	return out, nil
}

// encodeLike returns the SSE events of texts streamed one per event, and the
// generateContent answer of their whole, encoded as fakegemini encodes them: its events
// for the two probe texts, each text and the running token counts put in place. (Asking
// fakegemini itself costs the square of the events, as it joins the texts as it goes:
// tens of seconds for the 30,000 chunks of 20,000 rows.)
func encodeLike(probe [][]byte, probeUnary []byte, texts []string) (frames [][]byte, unary []byte, err error) {
	type usage struct {
		UsageMetadata struct {
			Prompt     int `json:"promptTokenCount"`
			Candidates int `json:"candidatesTokenCount"`
			Total      int `json:"totalTokenCount"`
		} `json:"usageMetadata"`
	}
	// put replaces the probe's text and counts in an event (after "data: " for SSE).
	put := func(ev []byte, probeText, text string, tokens int) ([]byte, error) {
		var u usage
		if err := json.Unmarshal(bytes.TrimPrefix(bytes.TrimSpace(ev), []byte("data: ")), &u); err != nil {
			return nil, fmt.Errorf("fake model: the probe's event: %v", err)
		}
		m := u.UsageMetadata
		oldText, _ := json.Marshal(probeText)
		newText, _ := json.Marshal(text)
		for _, r := range [][2][]byte{
			{append([]byte(`"text":`), oldText...), append([]byte(`"text":`), newText...)},
			{fmt.Appendf(nil, `"candidatesTokenCount":%d,"totalTokenCount":%d`, m.Candidates, m.Total),
				fmt.Appendf(nil, `"candidatesTokenCount":%d,"totalTokenCount":%d`, tokens, m.Prompt+tokens)},
		} {
			if bytes.Count(ev, r[0]) != 1 {
				return nil, fmt.Errorf("fake model: the probe's event does not hold %s once: %s", r[0], ev)
			}
			ev = bytes.Replace(ev, r[0], r[1], 1)
		}
		return ev, nil
	}
	tokens := 0
	for i, t := range texts {
		tokens += (len(t) + 3) / 4 // as fakegemini counts
		last := 0
		if i == len(texts)-1 {
			last = 1 // the event that ends the answer
		}
		ev, err := put(probe[last], rowsProbeTexts[last], t, tokens)
		if err != nil {
			return nil, nil, err
		}
		frames = append(frames, ev)
	}
	if unary, err = put(probeUnary, rowsProbeTexts[0]+rowsProbeTexts[1], strings.Join(texts, ""), tokens); err != nil {
		return nil, nil, err
	}
	return frames, unary, nil
}
