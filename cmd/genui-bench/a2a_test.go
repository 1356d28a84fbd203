package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/genuiserver/genui/a2ui"
)

// scriptMessages returns the A2UI messages the server's builder makes of the v0.9 script
// streamed in 64-byte chunks.
func scriptMessages(t *testing.T, s *a2uiScript) [][]byte {
	t.Helper()
	cat, err := a2ui.Builtin(s.version, a2ui.DefaultCatalogID(s.version))
	if err != nil {
		t.Fatal(err)
	}
	b, p := a2ui.NewBuilder(cat), a2ui.NewParser()
	var out [][]byte
	for _, c := range s.chunks(64) {
		for _, seg := range p.Push(c) {
			b.Add(seg)
		}
		out = append(out, b.Flush()...)
	}
	for _, seg := range p.Close() {
		b.Add(seg)
	}
	end, violations := b.End()
	if len(violations) > 0 {
		t.Fatal(violations)
	}
	return append(out, end...)
}

// a2aSSE writes an A2A v0.3 message/stream answer: the task, a text status update, one
// status update per A2UI message (its keys reordered, as a re-encoding would), then the
// final status of state final; extra is sent as is after the final event.
func a2aSSE(msgs [][]byte, final, extra string) string {
	var b strings.Builder
	n := 0
	ev := func(result string) {
		n++
		fmt.Fprintf(&b, "id: e%d\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":%s}\n\n", n, result)
	}
	ev(`{"kind":"task","id":"t1","contextId":"c1","status":{"state":"submitted"}}`)
	b.WriteString(": keepalive\n\n")
	ev(`{"kind":"status-update","taskId":"t1","contextId":"c1","final":false,"status":{"state":"working","message":{"kind":"message","role":"agent","messageId":"m0","parts":[{"kind":"text","text":"Here is your report.\n"}]}}}`)
	for i, m := range msgs {
		var v map[string]any
		_ = json.Unmarshal(m, &v)
		data, _ := json.Marshal(v) // sorted keys
		ev(fmt.Sprintf(`{"kind":"status-update","taskId":"t1","contextId":"c1","final":false,"status":{"state":"working","message":{"kind":"message","role":"agent","messageId":"m%d","parts":[{"kind":"data","data":%s,"metadata":{"mimeType":"application/json+a2ui"}}]}}}`, i+1, data))
	}
	ev(fmt.Sprintf(`{"kind":"status-update","taskId":"t1","contextId":"c1","final":true,"status":{"state":%q}}`, final))
	b.WriteString(extra)
	return b.String()
}

// TestA2ATurn reads canned A2A streams: the whole script is counted, compared with the
// builder's messages and rendered; broken streams fail with what is wrong.
func TestA2ATurn(t *testing.T) {
	defer goleak.VerifyNone(t)
	s, err := a2uiScriptFor(a2aVersion)
	if err != nil {
		t.Fatal(err)
	}
	msgs := scriptMessages(t, s)
	var mu sync.Mutex // the answer, and what the server got
	var answer, ext, path string
	var header http.Header
	var gotBody []byte
	set := func(a, e string) {
		mu.Lock()
		answer, ext = a, e
		mu.Unlock()
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		path, header, gotBody = r.URL.Path, r.Header.Clone(), body
		a, e := answer, ext
		mu.Unlock()
		if e != "" {
			w.Header().Set("X-A2A-Extensions", e)
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write([]byte(a))
	}))
	defer srv.Close()
	hc := newHTTPClient(nil)
	defer hc.CloseIdleConnections()

	good := a2aSSE(msgs, "input-required", "")
	set(good, a2aExtension)
	r := a2aTurn(t.Context(), hc, srv.URL, s, "m-1", 5*time.Second)
	if r.err != nil {
		t.Fatal(r.err)
	}
	mu.Lock()
	if path != a2aEndpoint || header.Get("X-A2A-Extensions") != a2aExtension || header.Get("Accept") != "text/event-stream" {
		t.Fatalf("request: %s %v", path, header)
	}
	var req struct {
		Method string `json:"method"`
		Params struct {
			Message struct {
				MessageID string `json:"messageId"`
				ContextID string `json:"contextId"`
				Parts     []struct {
					Kind, Text string
				} `json:"parts"`
			} `json:"message"`
		} `json:"params"`
	}
	if err := json.Unmarshal(gotBody, &req); err != nil || req.Method != "message/stream" || req.Params.Message.MessageID != "m-1" ||
		req.Params.Message.ContextID != "" || len(req.Params.Message.Parts) != 1 || !strings.Contains(req.Params.Message.Parts[0].Text, a2aMarker) {
		t.Fatalf("body %s: %v", gotBody, err)
	}
	if r.messages != len(msgs) || r.firstMessage <= 0 || r.lastMessage < r.firstMessage || r.end < r.lastMessage ||
		r.received != int64(len(good)) {
		t.Fatalf("turn: %+v", r)
	}
	want, err := canonicalA2UI(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if err := sameA2UI(r.raw, want); err != nil {
		t.Fatalf("the same messages, re-encoded: %v", err)
	}
	if err := sameA2UI(r.raw[1:], want); err == nil || !strings.Contains(err.Error(), "A2UI messages, where") {
		t.Fatalf("one message less: %v", err)
	}
	changed := append([][]byte{[]byte(`{"version":"v0.9","deleteSurface":{"surfaceId":"x"}}`)}, r.raw[1:]...)
	if err := sameA2UI(changed, want); err == nil || !strings.Contains(err.Error(), "message 1 differs") {
		t.Fatalf("another message: %v", err)
	}

	mu.Unlock()
	for _, c := range []struct {
		name, answer, ext, want string
	}{
		{"failed", a2aSSE(msgs, "failed", ""), a2aExtension, `final status is "failed"`},
		{"after final", a2aSSE(msgs, "input-required", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"kind\":\"status-update\",\"final\":false,\"status\":{\"state\":\"working\"}}}\n\n"), a2aExtension, "after the final status"},
		{"no final", strings.SplitAfter(a2aSSE(msgs, "input-required", ""), "\n\n")[0], a2aExtension, "without a final status"},
		{"cut", a2aSSE(msgs, "input-required", "data: {"), a2aExtension, "inside an event"},
		{"rpc error", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602,\"message\":\"bad\"}}\n\n", a2aExtension, "JSON-RPC error"},
		{"no task", "data: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"kind\":\"message\"}}\n\n", a2aExtension, "not the task"},
		{"half", a2aSSE(msgs[:len(msgs)/2], "input-required", ""), a2aExtension, "scripted components"},
		{"no extension", a2aSSE(msgs, "input-required", ""), "", "does not activate"},
	} {
		set(c.answer, c.ext)
		if r := a2aTurn(t.Context(), hc, srv.URL, s, "m-2", 5*time.Second); r.err == nil || !strings.Contains(r.err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, r.err, c.want)
		}
	}
}

// TestMCPTurn reads canned MCP responses, an SSE stream or JSON: the whole script is
// counted and rendered; broken responses fail with what is wrong.
func TestMCPTurn(t *testing.T) {
	defer goleak.VerifyNone(t)
	s, err := a2uiScriptFor(a2aVersion)
	if err != nil {
		t.Fatal(err)
	}
	msgs := scriptMessages(t, s)
	result := func(msgs [][]byte) string {
		return `{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"Shown"}],"structuredContent":{"conversationId":"c1","streamId":"s1","messages":[` +
			string(bytes.Join(msgs, []byte(","))) + `]}}}`
	}
	var mu sync.Mutex
	var answer, ctype string
	var header http.Header
	var gotBody []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		header, gotBody = r.Header.Clone(), body
		a, ct := answer, ctype
		mu.Unlock()
		w.Header().Set("Content-Type", ct)
		_, _ = w.Write([]byte(a))
	}))
	defer srv.Close()
	hc := newHTTPClient(nil)
	defer hc.CloseIdleConnections()
	set := func(a, ct string) {
		mu.Lock()
		answer, ctype = a, ct
		mu.Unlock()
	}
	want, err := canonicalA2UI(msgs)
	if err != nil {
		t.Fatal(err)
	}
	progress := "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{\"progress\":1}}\n\n"
	for _, c := range []struct{ name, answer, ctype string }{
		{"sse", progress + "event: message\ndata: " + result(msgs) + "\n\n", "text/event-stream"},
		{"json", result(msgs), "application/json"},
	} {
		set(c.answer, c.ctype)
		r := mcpTurn(t.Context(), hc, srv.URL, s, 5*time.Second)
		if r.err != nil {
			t.Fatalf("%s: %v", c.name, r.err)
		}
		if r.messages != len(msgs) || r.firstMessage <= 0 || r.firstMessage != r.end || r.received != int64(len(c.answer)) {
			t.Fatalf("%s: turn %+v", c.name, r)
		}
		if err := sameA2UI(r.raw, want); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	mu.Lock()
	var req struct {
		Method string `json:"method"`
		Params struct {
			Name      string `json:"name"`
			Arguments struct {
				Prompt string `json:"prompt"`
			} `json:"arguments"`
		} `json:"params"`
	}
	if err := json.Unmarshal(gotBody, &req); err != nil || req.Method != "tools/call" || req.Params.Name != "generate_ui" ||
		!strings.Contains(req.Params.Arguments.Prompt, a2aMarker) || header.Get("MCP-Protocol-Version") != mcpVersion {
		t.Fatalf("request %s %v: %v", gotBody, header, err)
	}
	mu.Unlock()
	for _, c := range []struct{ name, answer, ctype, want string }{
		{"tool error", `{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[{"type":"text","text":"prompt: must not be empty"}]}}`, "application/json", "a tool error: prompt: must not be empty"},
		{"rpc error", `{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"bad"}}`, "application/json", "JSON-RPC error"},
		{"no structured", `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`, "application/json", "without structuredContent"},
		{"half", result(msgs[:len(msgs)/2]), "application/json", "scripted components"},
		{"no response", progress, "text/event-stream", "without a response"},
		{"html", "<html>", "text/html", "Content-Type"},
	} {
		set(c.answer, c.ctype)
		if r := mcpTurn(t.Context(), hc, srv.URL, s, 5*time.Second); r.err == nil || !strings.Contains(r.err.Error(), c.want) {
			t.Errorf("%s: err %v, want %q", c.name, r.err, c.want)
		}
	}
}

// TestFakeA2AScript checks the fake model's a2a script: the v0.9 script's frames, paced
// at the a2a rate, or all at once.
func TestFakeA2AScript(t *testing.T) {
	for _, rate := range []float64{0, 1000} {
		f, err := newFakeModel("127.0.0.1:0", 0, 0, 0, 1, a2uiPace{chunkTokens: 16, tokensPerS: 150, a2aTokensPerS: rate})
		if err != nil {
			t.Fatal(err)
		}
		fr, v09 := f.a2uiFor([]byte(`{"text":"`+a2aText+`"}`)), f.a2ui[a2aVersion]
		f.Close()
		if fr == nil || fr != f.a2a || fr.script != v09.script || len(fr.frames) != len(v09.frames) ||
			string(fr.frames[0]) != string(v09.frames[0]) || len(fr.at) != len(fr.frames) {
			t.Fatalf("rate %v: %+v", rate, fr)
		}
		last := fr.at[len(fr.at)-1]
		if want := time.Duration(float64(len(fr.script.text)) / 4 / max(rate, 1) * float64(time.Second)); rate > 0 && (last < want-time.Millisecond || last > want+time.Millisecond) {
			t.Fatalf("rate %v: last chunk at %s, want %s", rate, last, want)
		}
		if rate == 0 && last != 0 {
			t.Fatalf("unpaced: last chunk at %s", last)
		}
		if v09.at[len(v09.at)-1] < 4*time.Second {
			t.Fatalf("the a2ui phase's pace changed: %s", v09.at[len(v09.at)-1])
		}
	}
}

// TestA2APhase runs the a2a phase briefly (unpaced) against the real server: every turn
// of both paths succeeds with the same A2UI messages, and the figures are there and sane.
func TestA2APhase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	defer goleak.VerifyNone(t)
	bin := buildServerBin(t)
	for _, rate := range []string{"0", "5000"} {
		rep, table := runJSON(t, "--server-bin", bin, "--phases", "a2a", "--a2a-turns", "4", "--a2a-rounds", "2", "--a2a-tokens-per-s", rate)
		a := rep.A2A
		if a == nil || a.Version != "v0.9" || a.Extension != a2aExtension || a.Baseline != "held" || a.Components < a2uiMinComponents ||
			a.TurnsPerRound != 4 || a.Rounds != 2 || a.TargetRatio != 1.2 || a.A2UIMessages < 2 || a.Paced != (rate != "0") {
			t.Fatalf("rate %s: a2a: %+v", rate, a)
		}
		if a.Paced && (a.ModelStreamMS < 100 || a.TokensPerS != 5000) || !a.Paced && a.ModelStreamMS != 0 {
			t.Errorf("rate %s: model: %+v", rate, a)
		}
		for _, p := range []A2APathReport{a.GenerateA2UI, a.A2A, a.MCP} {
			if p.Turns != 8 || p.Errors != 0 || p.FirstError != "" || p.A2UIMessages != a.A2UIMessages || p.FirstMessageMS == nil ||
				p.FirstMessageMS.Median <= 0 || p.LastMessageMS.Median < p.FirstMessageMS.Median || p.EndMS.Median < p.LastMessageMS.Median ||
				p.EndMS.Min < p.LastMessageMS.Min || p.CPUPerTurnMS == nil || len(p.CPUPerTurnRoundsMS) != 2 || p.ResponseBytes == nil || *p.ResponseBytes < 1000 {
				t.Errorf("rate %s: %s: %+v", rate, p.Path, p)
			}
			if a.Paced && p.LastMessageMS.Min < a.ModelStreamMS {
				t.Errorf("rate %s: %s: the last message before the model sent it: %+v", rate, p.Path, p.LastMessageMS)
			}
		}
		// A2A wraps every message in a JSON-RPC response carrying a task status.
		if *a.A2A.ResponseBytes <= *a.GenerateA2UI.ResponseBytes {
			t.Errorf("rate %s: bytes %d (A2A) <= %d", rate, *a.A2A.ResponseBytes, *a.GenerateA2UI.ResponseBytes)
		}
		if a.LastMessageRatio == nil || *a.LastMessageRatio <= 0 || a.EndRatio == nil || *a.EndRatio <= 0 || a.AddedEndMS == nil ||
			a.AddedFirstMessageMS == nil || a.AddedLastMessageMS == nil {
			t.Fatalf("rate %s: ratios: %+v", rate, a)
		}
		// CPU ticks are 10 ms: a handful of turns may show none, so the ratio may be absent.
		if a.CPURatio != nil && *a.CPURatio < 0 {
			t.Errorf("rate %s: CPU ratio %v", rate, *a.CPURatio)
		}
		// MCP: every message comes with the result.
		if m := a.MCP; m.Path != "MCP" || m.FirstMessageMS == nil || m.FirstMessageMS.Median != m.EndMS.Median || a.MCPLastMessageRatio == nil ||
			*a.MCPLastMessageRatio <= 0 || a.MCPEndRatio == nil || a.MCPAddedEndMS == nil || rep.Summary.MCPLastMessageRatio == nil ||
			*rep.Summary.MCPLastMessageRatio != *a.MCPLastMessageRatio || (rep.Summary.MCPCPURatio == nil) != (a.MCPCPURatio == nil) {
			t.Fatalf("rate %s: MCP: %+v", rate, a)
		}
		s := rep.Summary
		if s.A2AEndRatio == nil || *s.A2AEndRatio != *a.EndRatio || s.A2ALastMessageRatio == nil || *s.A2ALastMessageRatio != *a.LastMessageRatio ||
			(s.A2ACPURatio == nil) != (a.CPURatio == nil) || s.A2AAddedEndMS == nil || *s.A2AAddedEndMS != *a.AddedEndMS {
			t.Fatalf("rate %s: summary: %+v", rate, s)
		}
		if st := rep.Settings; st.A2ATurns != 4 || st.A2ARounds != 2 || st.A2ABaseline != "held" || (st.A2ATokensPerS == 0) != (rate == "0") {
			t.Fatalf("rate %s: settings: %+v", rate, st)
		}
		for _, want := range []string{"A2A (A2UI v0.9", "/generateA2ui", "message/stream", "tools/call generate_ui", "MCP last message", "MCP CPU per turn", "last message", "CPU per turn", targetA2A} {
			if !strings.Contains(table, want) {
				t.Errorf("rate %s: table lacks %q", rate, want)
			}
		}
	}
}
