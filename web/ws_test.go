package web_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/transport"
	"github.com/genuiserver/genui/genui/wsapi"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
)

// TestPlaygroundOverWebSocket drives the playground's WebSocket transport in headless
// Chromium (web/e2e/ws.test.mjs) against the real server with GET /ws on the offline
// model, in genui mode and in A2UI v0.9 mode: a message that names the page's client
// tool getLocation gets a client_tool request the page answers, and the surface the
// model then shows holds the answer; a UI action goes back as a prompt and renders the
// next surface; later messages run on the same connection and session.
//
// The browser test records every frame its pages' WebSockets carried. Each page's are
// checked here as the JSON-RPC 2.0 conversation the contract of /ws describes: one
// connection; initialize, then new_session with the page's catalog (or its A2UI
// capabilities) and its client tool; prompts on that session carrying only the new
// content (text, a uiEvent or an a2ui action block); each client_tool request answered
// once, with the city the page was set to, before the prompt's result; every update of
// the session inside a prompt; A2UI messages and actions valid against the
// specification. The server saw one WebSocket upgrade per page and no HTTP turn.
func TestPlaygroundOverWebSocket(t *testing.T) {
	b := needBrowser(t)
	var hits wsHits
	seen := exchanges{path: "/generateUi"}
	srv := newE2EServer(t, b.e2e, &seen, func(svc *genui.Service) []transport.Route {
		return wsapi.New(svc, wsapi.WithLogger(quiet)).Routes()
	}, hits.count)
	recordFile := filepath.Join(t.TempDir(), "ws-record.json")

	b.run(t, "ws.test.mjs", "GENUI_URL="+srv.URL+"/", "WS_RECORD="+recordFile)

	var rec struct {
		Scenarios []wsScenario `json:"scenarios"`
	}
	readRecord(t, recordFile, &rec)
	want := map[string]wsWant{
		"genui":     {prompts: []string{"text", "uiEvent", "text", "text"}, cities: []string{"Lisbon", "Porto"}},
		"a2ui-v0.9": {a2ui: "v0.9", prompts: []string{"text", "a2ui", "text"}, cities: []string{"Lisbon"}},
	}
	if len(rec.Scenarios) != len(want) {
		t.Fatalf("record: %d pages, want %d", len(rec.Scenarios), len(want))
	}
	for _, sc := range rec.Scenarios {
		w, ok := want[sc.Name]
		if !ok {
			t.Errorf("record: an unexpected page %q", sc.Name)
			continue
		}
		t.Run(sc.Name, func(t *testing.T) { checkWSConversation(t, sc, w) })
	}

	hits.mu.Lock()
	defer hits.mu.Unlock()
	if hits.upgrades != len(want) {
		t.Errorf("the server saw %d WebSocket upgrades on /ws, want %d (one per page)", hits.upgrades, len(want))
	}
	if len(hits.httpTurns) > 0 {
		t.Errorf("turns went over HTTP: %v", hits.httpTurns)
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if len(seen.list) > 0 {
		t.Errorf("the server saw %d POST /generateUi", len(seen.list))
	}
}

// wsHits counts what the server saw of the pages: WebSocket upgrades of /ws, and the
// HTTP requests that run or start turns.
type wsHits struct {
	mu        sync.Mutex
	upgrades  int
	httpTurns []string
}

func (h *wsHits) count(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.mu.Lock()
		switch {
		case r.URL.Path == "/ws" && strings.EqualFold(r.Header.Get("Upgrade"), "websocket"):
			h.upgrades++
		case r.Method == "POST" && (r.URL.Path == "/generateUi" || r.URL.Path == "/generateA2ui" || r.URL.Path == "/startSession"):
			h.httpTurns = append(h.httpTurns, r.Method+" "+r.URL.Path)
		}
		h.mu.Unlock()
		next.ServeHTTP(w, r)
	})
}

// wsScenario is one page of the browser test: its WebSockets' frames, in order.
type wsScenario struct {
	Name    string `json:"name"`
	Sockets []struct {
		URL    string `json:"url"`
		Frames []struct {
			Dir  string `json:"dir"` // "sent" (by the page) or "received"
			Data string `json:"data"`
		} `json:"frames"`
	} `json:"sockets"`
	Requests []string `json:"requests"`
}

// wsWant is what a page's conversation should hold: its A2UI version ("" for genui),
// the type of each prompt's one content block, and the cities its client_tool answers
// carry, in order.
type wsWant struct {
	a2ui    string
	prompts []string
	cities  []string
}

// rpcMessage is any JSON-RPC 2.0 message.
type rpcMessage struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  string          `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func checkWSConversation(t *testing.T, sc wsScenario, w wsWant) {
	if len(sc.Sockets) != 1 {
		t.Fatalf("%d WebSockets, want one", len(sc.Sockets))
	}
	sock := sc.Sockets[0]
	if !strings.HasPrefix(sock.URL, "ws://") || !strings.HasSuffix(sock.URL, "/ws") {
		t.Errorf("the WebSocket's URL is %s, want ws://…/ws", sock.URL)
	}
	type frame struct {
		sent bool
		raw  string
		m    rpcMessage
	}
	var frames []frame
	for i, f := range sock.Frames {
		var m rpcMessage
		if err := json.Unmarshal([]byte(f.Data), &m); err != nil || m.JSONRPC != "2.0" {
			t.Fatalf("frame %d (%s) is not a JSON-RPC 2.0 message (%v): %s", i, f.Dir, err, f.Data)
		}
		if m.Error != nil {
			t.Errorf("frame %d (%s) is an error: %s", i, f.Dir, f.Data)
		}
		frames = append(frames, frame{sent: f.Dir == "sent", raw: f.Data, m: m})
	}
	if len(frames) < 4 {
		t.Fatalf("%d frames: %v", len(frames), sock.Frames)
	}
	// responseTo finds the response to the request at i, sent the other way after it.
	responseTo := func(i int) (int, rpcMessage) {
		for k := i + 1; k < len(frames); k++ {
			f := frames[k]
			if f.sent != frames[i].sent && f.m.Method == "" && bytes.Equal(f.m.ID, frames[i].m.ID) {
				return k, f.m
			}
		}
		t.Fatalf("the request %s got no response", frames[i].raw)
		return 0, rpcMessage{}
	}

	// initialize, then new_session with the page's UI format and its client tool.
	if !frames[0].sent || frames[0].m.Method != "initialize" || !frames[2].sent || frames[2].m.Method != "new_session" {
		t.Fatalf("the connection does not start with initialize and new_session: %s, %s", frames[0].raw, frames[2].raw)
	}
	if _, res := responseTo(0); !strings.Contains(string(res.Result), `"protocol_version":1`) {
		t.Errorf("initialize: %s", res.Result)
	}
	var ns struct {
		Catalog                map[string]any    `json:"catalog"`
		A2UIClientCapabilities map[string]any    `json:"a2uiClientCapabilities"`
		A2UIVersion            string            `json:"a2uiVersion"`
		ClientTools            []json.RawMessage `json:"clientTools"`
	}
	if err := json.Unmarshal(frames[2].m.Params, &ns); err != nil {
		t.Fatal(err)
	}
	if w.a2ui == "" && (ns.Catalog == nil || ns.A2UIClientCapabilities != nil) {
		t.Errorf("new_session of a genui page: want a catalog and no A2UI capabilities: %s", frames[2].raw)
	}
	if w.a2ui != "" && (ns.Catalog != nil || ns.A2UIClientCapabilities == nil || ns.A2UIVersion != w.a2ui) {
		t.Errorf("new_session of an A2UI %s page: want its capabilities and version, no catalog: %s", w.a2ui, frames[2].raw)
	}
	if len(ns.ClientTools) != 1 || !strings.Contains(string(ns.ClientTools[0]), `"name":"getLocation"`) {
		t.Errorf("new_session declares the client tools %s, want getLocation", ns.ClientTools)
	}
	_, res := responseTo(2)
	var opened struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal(res.Result, &opened); opened.SessionID == "" {
		t.Fatalf("new_session answered %s", res.Result)
	}
	session := opened.SessionID

	var v *a2uitest.Validator
	if w.a2ui != "" {
		v = a2uitest.New(t, w.a2ui, nil)
	}
	var prompts []string
	var cities []string
	inPrompt := -1 // the frame of the running prompt
	promptEnd := 0
	pendingCalls := map[string]bool{}
	shown := "" // what the ui_updates of the running prompt show
	for i := 4; i < len(frames); i++ {
		f := frames[i]
		switch {
		case f.sent && f.m.Method == "prompt":
			if inPrompt >= 0 {
				t.Errorf("frame %d: a prompt while another runs (the page runs one turn at a time)", i)
			}
			var p struct {
				SessionID string `json:"session_id"`
				Prompt    []struct {
					Type    string          `json:"type"`
					Text    string          `json:"text"`
					Event   json.RawMessage `json:"event"`
					Message json.RawMessage `json:"message"`
				} `json:"prompt"`
			}
			if err := json.Unmarshal(f.m.Params, &p); err != nil {
				t.Fatal(err)
			}
			if p.SessionID != session {
				t.Errorf("frame %d: a prompt on session %q, want %q", i, p.SessionID, session)
			}
			if len(p.Prompt) != 1 {
				t.Errorf("frame %d: %d content blocks, want only the new message's one: %s", i, len(p.Prompt), f.raw)
				continue
			}
			blk := p.Prompt[0]
			prompts = append(prompts, blk.Type)
			switch blk.Type {
			case "text":
				if blk.Text == "" {
					t.Errorf("frame %d: an empty text block", i)
				}
			case "uiEvent":
				if !bytes.Contains(blk.Event, []byte(`"widgetId":"send"`)) || !bytes.Contains(blk.Event, []byte(`"isAction":true`)) {
					t.Errorf("frame %d: the uiEvent is not the Send button's action: %s", i, blk.Event)
				}
			case "a2ui":
				if err := v.CheckClient(blk.Message); err != nil {
					t.Errorf("frame %d: the a2ui block is not a valid A2UI client message: %v\n%s", i, err, blk.Message)
				}
			}
			inPrompt, shown = i, ""
			promptEnd, _ = responseTo(i)
			var r struct {
				StopReason string `json:"stop_reason"`
			}
			if json.Unmarshal(frames[promptEnd].m.Result, &r); r.StopReason != "end_turn" {
				t.Errorf("prompt %d answered %s, want stop_reason end_turn", len(prompts), frames[promptEnd].raw)
			}
		case !f.sent && f.m.Method == "session_update":
			var p struct {
				SessionID string `json:"session_id"`
				Seq       int    `json:"seq"`
				Update    struct {
					Type  string          `json:"type"`
					Chunk *string         `json:"chunk"`
					Event json.RawMessage `json:"event"`
				} `json:"update"`
			}
			if err := json.Unmarshal(f.m.Params, &p); err != nil {
				t.Fatal(err)
			}
			if p.SessionID != session || p.Seq < 1 {
				t.Errorf("frame %d: an update of session %q (seq %d), want %q: %s", i, p.SessionID, p.Seq, session, f.raw)
			}
			if inPrompt < 0 {
				t.Errorf("frame %d: an update outside any prompt: %s", i, f.raw)
			}
			switch p.Update.Type {
			case "agent_message_chunk":
				if p.Update.Chunk == nil {
					t.Errorf("frame %d: agent_message_chunk without chunk: %s", i, f.raw)
				}
			case "ui_update":
				shown += string(p.Update.Event)
				if w.a2ui != "" {
					if err := v.Check(p.Update.Event); err != nil {
						t.Errorf("frame %d: the event is not a valid A2UI message: %v\n%s", i, err, p.Update.Event)
					}
				} else if !bytes.HasPrefix(p.Update.Event, []byte(`{"type":"toolRequest"`)) {
					t.Errorf("frame %d: the event is not a genui surface update as NDJSON carries it: %s", i, p.Update.Event)
				}
			default:
				t.Errorf("frame %d: an update of type %q: %s", i, p.Update.Type, f.raw)
			}
		case !f.sent && f.m.Method == "client_tool":
			var p struct {
				SessionID string          `json:"session_id"`
				CallID    string          `json:"call_id"`
				Name      string          `json:"name"`
				Input     json.RawMessage `json:"input"`
			}
			if err := json.Unmarshal(f.m.Params, &p); err != nil {
				t.Fatal(err)
			}
			if p.SessionID != session || p.Name != "getLocation" || p.CallID == "" || string(f.m.ID) != fmt.Sprintf("%q", "call:"+p.CallID) {
				t.Errorf("frame %d: client_tool request %s", i, f.raw)
			}
			if inPrompt < 0 {
				t.Errorf("frame %d: a client_tool request outside any prompt", i)
			}
			k, answer := responseTo(i)
			if k > promptEnd {
				t.Errorf("frame %d: the page answered the client_tool request after the prompt's end", i)
			}
			var out struct {
				City string `json:"city"`
			}
			if err := json.Unmarshal(answer.Result, &out); err != nil || out.City == "" {
				t.Errorf("the page answered getLocation with %s, want {city}", answer.Result)
			}
			cities = append(cities, out.City)
			pendingCalls[out.City] = true
		case f.sent && f.m.Method == "" && strings.HasPrefix(string(f.m.ID), `"call:`):
			// the page's answer to a client_tool request, checked above
		case !f.sent && f.m.Method == "" && i == promptEnd:
			// The prompt's end: the cities answered in it are in what it showed.
			for city := range pendingCalls {
				if !strings.Contains(shown, "getLocation returned city: "+city) {
					t.Errorf("prompt %d: no surface shows %q after the page answered it; it showed %s", len(prompts), city, shown)
				}
			}
			pendingCalls = map[string]bool{}
			inPrompt = -1
		default:
			t.Errorf("frame %d: unexpected %s", i, f.raw)
		}
	}
	if inPrompt >= 0 {
		t.Errorf("the last prompt got no result")
	}
	if v != nil {
		if err := v.Done(); err != nil {
			t.Error(err)
		}
	}
	if strings.Join(prompts, ",") != strings.Join(w.prompts, ",") {
		t.Errorf("prompts %v, want %v", prompts, w.prompts)
	}
	if strings.Join(cities, ",") != strings.Join(w.cities, ",") {
		t.Errorf("client_tool answers carried %v, want %v", cities, w.cities)
	}
	t.Logf("%d frames: initialize, new_session, %d prompts (%v), %d client_tool requests answered with %v", len(frames), len(prompts), prompts, len(cities), cities)
}
