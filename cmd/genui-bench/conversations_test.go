package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"
	"google.golang.org/genai"

	"github.com/genuiserver/genui/schemas"
)

// TestFakeToolScript checks the fake model's client tool script: a request holding the
// marker calls getLocation, the same request once it holds a function response gets the
// usual text and surface, and a request without the marker is untouched.
func TestFakeToolScript(t *testing.T) {
	defer goleak.VerifyNone(t)
	f, err := newFakeModel("127.0.0.1:0", 0, 0, 0, 1, a2uiPace{chunkTokens: 16, tokensPerS: 150})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	hc := newHTTPClient(nil)
	defer hc.CloseIdleConnections()
	gc, err := genai.NewClient(t.Context(), &genai.ClientConfig{APIKey: "k", Backend: genai.BackendGeminiAPI,
		HTTPClient: hc, HTTPOptions: genai.HTTPOptions{BaseURL: f.URL()}})
	if err != nil {
		t.Fatal(err)
	}
	call := func(contents []*genai.Content) (text string, calls []string) {
		t.Helper()
		for resp, err := range gc.Models.GenerateContentStream(t.Context(), fakeModelName, contents, nil) {
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range resp.Candidates {
				if c.Content == nil {
					continue
				}
				for _, p := range c.Content.Parts {
					text += p.Text
					if p.FunctionCall != nil {
						calls = append(calls, p.FunctionCall.Name)
					}
				}
			}
		}
		return text, calls
	}
	ask := genai.NewContentFromText(toolMarker+": where am I?", genai.RoleUser)
	if text, calls := call([]*genai.Content{ask}); text != toolText || len(calls) != 1 || calls[0] != "getLocation" {
		t.Fatalf("call turn: %q %v", text, calls)
	}
	answered := []*genai.Content{ask,
		genai.NewContentFromFunctionCall("getLocation", map[string]any{}, genai.RoleModel),
		genai.NewContentFromFunctionResponse("getLocation", map[string]any{"city": "Berlin"}, genai.RoleUser)}
	if text, calls := call(answered); text != modelText || len(calls) != 1 || calls[0] != "addOrUpdateSurface" {
		t.Fatalf("continuation: %q %v", text, calls)
	}
	if text, calls := call(genai.Text("Show me a form")); text != modelText || len(calls) != 1 || calls[0] != "addOrUpdateSurface" {
		t.Fatalf("plain turn: %q %v", text, calls)
	}
}

// TestConvHistory checks what the client keeps of a turn: the text, one ui part per
// surface in its latest version (a deleted one dropped), the calls; and the request it
// resends.
func TestConvHistory(t *testing.T) {
	var r convTurnResult
	var text bytes.Buffer
	for _, line := range []string{
		`{"type":"text","text":"Here "}`,
		`{"type":"toolRequest","toolRequests":[{"name":"addOrUpdateSurface","input":{"surfaceId":"a","definition":{"root":"r","widgets":[{"id":"r","widget":{"Text":{"text":"1"}}}]}}}]}`,
		`{"type":"toolRequest","toolRequests":[{"name":"addOrUpdateSurface","input":{"surfaceId":"b","definition":{"root":"x","widgets":[]}}},{"name":"addOrUpdateSurface","input":{"surfaceId":"c","definition":{"root":"y","widgets":[]}}}]}`,
		`{"type":"text","text":"you are."}`,
		`{"type":"toolRequest","toolRequests":[{"name":"addOrUpdateSurface","input":{"surfaceId":"a","definition":{"root":"r","widgets":[{"id":"r","widget":{"Text":{"text":"2"}}}]}}}]}`,
		`{"type":"toolRequest","toolRequests":[{"name":"deleteSurface","input":{"surfaceId":"b"}}]}`,
		`{"type":"toolCall","callId":"id-1","name":"getLocation","input":{}}`,
		`{"type":"result","result":{"message":{"role":"model","content":[]},"finishReason":"interrupted"}}`,
	} {
		if err := r.line([]byte(line), &text); err != nil {
			t.Fatal(err)
		}
	}
	r.text = text.String()
	m, ok := r.modelMessage()
	if !ok || r.finish != "interrupted" {
		t.Fatalf("no model message, or finish %q", r.finish)
	}
	req := schemas.GenerateRequest{Catalog: schemas.Catalog(`{}`), Conversation: []schemas.Message{m}}
	got, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"catalog":{},"conversation":[{"role":"model","parts":[{"type":"text","text":"Here you are."},` +
		`{"type":"ui","definition":{"surfaceId":"a","root":"r","widgets":[{"id":"r","widget":{"Text":{"text":"2"}}}]}},` +
		`{"type":"ui","definition":{"surfaceId":"c","root":"y","widgets":[]}},` +
		`{"type":"toolCall","callId":"id-1","name":"getLocation","input":{}}]}]}`
	if string(got) != want {
		t.Fatalf("history:\n%s\nwant\n%s", got, want)
	}
	var bad convTurnResult
	if err := bad.line([]byte(`{"type":"error","error":{"status":"INTERNAL"}}`), &text); err == nil {
		t.Fatal("an error line is not an error")
	}
}

// TestHeldStats reads /readyz with and without its conversations figures.
func TestHeldStats(t *testing.T) {
	body := `{"ready":true,"model":"m","conversations":{"held":3,"bytes":3000}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	hc := newHTTPClient(nil)
	defer hc.CloseIdleConnections()
	if n, size, ok, err := heldStats(t.Context(), hc, srv.URL); err != nil || !ok || n != 3 || size != 3000 {
		t.Fatalf("held %d, %d bytes, %v, %v", n, size, ok, err)
	}
	body = `{"ready":true,"model":"m"}`
	if _, _, ok, err := heldStats(t.Context(), hc, srv.URL); err != nil || ok {
		t.Fatalf("without conversations: %v, %v", ok, err)
	}
}

// TestConversationsPhase runs the conversations phase briefly against the real server:
// every round trip and conversation succeeds, and the figures are there and sane.
func TestConversationsPhase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	defer goleak.VerifyNone(t)
	bin := buildServerBin(t)
	rep, table := runJSON(t, "--server-bin", bin, "--phases", "conversations", "--conv-turns", "2",
		"--conv-conversations", "2", "--conv-length", "3", "--conv-rounds", "1")
	c := rep.Conversations
	if c == nil {
		t.Fatal("no conversations report")
	}
	if c.RoundTrips != 2 || c.RoundTripErrors != 0 || c.RoundTripFirstError != "" || c.CallTurnMS == nil ||
		c.CallTurnMS.Median <= 0 || c.ContinuationMS.Median <= 0 || c.RoundTripMS.Median <= 0 ||
		c.RoundTripMS.Max < c.CallTurnMS.Max || c.RoundTripMS.Max < c.ContinuationMS.Max {
		t.Fatalf("round trips: %+v", c)
	}
	if c.Conversations != 2 || c.TurnsPerConversation != 3 || c.Rounds != 1 {
		t.Fatalf("settings: %+v", c)
	}
	for name, m := range map[string]ConvModeReport{"stateless": c.Stateless, "held": c.Held} {
		if m.Conversations != 2 || m.Turns != 6 || m.Errors != 0 || m.FirstError != "" || m.CPUPerTurnMS == nil ||
			len(m.CPUPerTurnRoundsMS) != 1 || m.ReceivedBytesPerConversation < 3*200 || m.TurnMS == nil || m.TurnMS.Median <= 0 {
			t.Errorf("%s: %+v", name, m)
		}
	}
	// The client resends its history, so a stateless conversation sends more; both receive
	// the same answers.
	if c.Stateless.SentBytesPerConversation <= c.Held.SentBytesPerConversation ||
		c.Stateless.ReceivedBytesPerConversation != c.Held.ReceivedBytesPerConversation {
		t.Errorf("bytes: stateless %+v, held %+v", c.Stateless, c.Held)
	}
	if c.HeldConversations == nil || *c.HeldConversations != 2 || c.HeldBytes == nil || *c.HeldBytes <= 0 ||
		c.HeldBytesPerConversation == nil || *c.HeldBytesPerConversation != *c.HeldBytes/2 ||
		c.HeldBytesRatio == nil || *c.HeldBytesRatio <= 0 || *c.HeldBytesRatio >= c.HeldBytesTarget {
		t.Errorf("held: %+v", c)
	}
	// CPU ticks are 10 ms: a handful of turns may show none, so the ratio may be absent.
	if c.CPURatio != nil && *c.CPURatio < 0 {
		t.Errorf("CPU ratio %v", *c.CPURatio)
	}
	s := rep.Summary
	if s.ConvHeldBytesRatio == nil || *s.ConvHeldBytesRatio != *c.HeldBytesRatio || s.ClientToolRoundTripMS == nil ||
		*s.ClientToolRoundTripMS != c.RoundTripMS.Median || (s.ConvCPURatio == nil) != (c.CPURatio == nil) {
		t.Fatalf("summary: %+v", s)
	}
	if st := rep.Settings; st.ConvTurns != 2 || st.ConvConversations != 2 || st.ConvLength != 3 || st.ConvRounds != 1 {
		t.Fatalf("settings: %+v", st)
	}
	for _, want := range []string{"CONVERSATIONS", "getLocation", "stateless", "held", targetConvBytes + ": pass", targetConvCPU} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q", want)
		}
	}
}
