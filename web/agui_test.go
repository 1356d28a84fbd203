package web_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/aguiapi"
	"github.com/genuiserver/genui/genui/transport"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
)

// TestAGUISurfacesInChromium drives A2UI over AG-UI end to end (web/e2e/agui.test.mjs):
// the official AG-UI client (@ag-ui/client 1.0.0's HttpAgent, in node) runs the server's
// AG-UI endpoint on the offline model; each a2ui-surface activity comes as a snapshot,
// then deltas appending one message each, which the client applies to the activity
// message's content. After each, node hands that content to the official A2UI web
// renderer (the playground's bundle of @a2ui/lit) in headless Chromium, which draws the
// snapshot anew and applies each delta's message: partial states of the growing surface
// first, then the whole. The action the rendered button emits goes back in the next run
// as forwardedProps.a2uiAction, and the answer's surface is drawn. Every state (the
// content after an event) is then checked against the specification's schemas, each as
// the self-contained sequence of messages it is, and the actions sent against
// client_to_server.json; both must be what the server wrote and read, and a partial
// state must have been drawn.
func TestAGUISurfacesInChromium(t *testing.T) {
	b := needBrowser(t)
	if _, err := os.Stat(filepath.Join(b.e2e, "node_modules", "@ag-ui", "client", "package.json")); err != nil {
		skipOrFail(t, "web/e2e/node_modules/@ag-ui/client is missing")
	}
	seen := exchanges{path: "/ag-ui"}
	srv := newE2EServer(t, b.e2e, &seen, func(svc *genui.Service) []transport.Route {
		return aguiapi.New(svc, aguiapi.WithLogger(quiet)).Routes()
	})
	recordFile := filepath.Join(t.TempDir(), "agui-record.json")

	b.run(t, "agui.test.mjs", "GENUI_URL="+srv.URL+"/", "AGUI_RECORD="+recordFile)

	var rec struct {
		States []aguiState      `json:"states"`
		Sent   []aguiA2UIAction `json:"sent"`
	}
	readRecord(t, recordFile, &rec)
	if len(rec.States) == 0 || len(rec.Sent) == 0 {
		t.Fatalf("record: %d states received, %d actions sent; the browser test should produce both", len(rec.States), len(rec.Sent))
	}

	// Each state builds its surface from nothing: its messages are a sequence of their
	// own, whose createSurface names its catalog anew.
	msgs := 0
	v := a2uitest.New(t, "v0.9", nil)
	for i, s := range rec.States {
		if len(s.Operations) == 0 || !bytes.Contains(s.Operations[0], []byte(`"createSurface"`)) {
			t.Errorf("state %d (%s) does not start with createSurface: %s", i, s.MessageID, s.Operations)
		}
		ops := make([][]byte, len(s.Operations))
		for k, m := range s.Operations {
			ops[k] = m
		}
		v.CheckAll(t, ops...)
		msgs += len(ops)
	}
	for i, a := range rec.Sent {
		if len(a.UserAction) == 0 {
			t.Errorf("action %d: no userAction: %+v", i, a)
			continue
		}
		m, _ := json.Marshal(map[string]any{"version": "v0.9", "action": a.UserAction})
		if err := v.CheckClient(m); err != nil {
			t.Errorf("client A2UI message of action %d is not valid against the specification: %v\n%s", i, err, m)
		}
	}
	t.Logf("v0.9: %d states (%d server messages) and %d client actions valid against the specification", len(rec.States), msgs, len(rec.Sent))

	partials := partialStates(t, rec.States)
	if len(partials) == 0 {
		t.Error("no partial state (one lacking components the last state of its surface has) crossed the wire")
	}
	t.Logf("partial states: %s", strings.Join(partials, "; "))

	// What node received is what the server wrote, and what node sent is what the server read.
	wrote, read := seen.aguiRuns(t)
	var got []json.RawMessage
	for _, s := range rec.States {
		b, _ := json.Marshal(s)
		got = append(got, b)
	}
	sameMessages(t, "the a2ui-surface activity states the server's streams build", wrote, got)
	var sent []json.RawMessage
	for _, a := range rec.Sent {
		b, _ := json.Marshal(a)
		sent = append(sent, b)
	}
	sameMessages(t, "the forwardedProps.a2uiAction of the client's runs", read, sent)
}

// aguiState is an a2ui-surface activity's content after one of its events (a snapshot
// or a delta) as the browser test records it: the run it came in (1, 2, …), the event's
// type, its activity message and the A2UI messages the content holds.
type aguiState struct {
	Run        int               `json:"run"`
	MessageID  string            `json:"messageId"`
	Type       string            `json:"type"`
	Operations []json.RawMessage `json:"operations"`
}

// aguiA2UIAction is forwardedProps.a2uiAction of a run.
type aguiA2UIAction struct {
	UserAction json.RawMessage `json:"userAction"`
}

// partialStates describes the states that hold a root but lack components the last state
// of their activity message (in the same run) holds.
func partialStates(t *testing.T, snaps []aguiState) []string {
	t.Helper()
	ids := func(s aguiState) map[string]bool {
		out := map[string]bool{}
		for _, m := range s.Operations {
			var op struct {
				UpdateComponents *struct {
					Components []struct {
						ID string `json:"id"`
					} `json:"components"`
				} `json:"updateComponents"`
			}
			if err := json.Unmarshal(m, &op); err != nil {
				t.Errorf("state of %s: a message is not JSON: %v\n%s", s.MessageID, err, m)
			}
			if op.UpdateComponents != nil {
				for _, c := range op.UpdateComponents.Components {
					out[c.ID] = true
				}
			}
		}
		return out
	}
	type key struct {
		run int
		id  string
	}
	last := map[key]map[string]bool{}
	for _, s := range snaps {
		last[key{s.Run, s.MessageID}] = ids(s)
	}
	var out []string
	for i, s := range snaps {
		have, final := ids(s), last[key{s.Run, s.MessageID}]
		if !have["root"] {
			continue
		}
		var missing []string
		for id := range final {
			if !have[id] {
				missing = append(missing, id)
			}
		}
		if len(missing) > 0 {
			sort.Strings(missing)
			out = append(out, fmt.Sprintf("state %d (run %d, %s): %d of %d components, without %s", i+1, s.Run, s.MessageID, len(have), len(final), strings.Join(missing, ", ")))
		}
	}
	return out
}

// aguiRuns returns what the AG-UI runs carried: the states of the a2ui-surface activities
// the server's events build, applied as @ag-ui/client applies them (a snapshot replaces
// the content, a delta appends the one message its patch adds), as aguiState numbered by
// run, and the forwardedProps.a2uiAction it read, each in order. It fails t when a run was
// not answered with an SSE stream of AG-UI events ending with RUN_FINISHED, or an
// activity event is not a snapshot of operations or a delta appending one message to an
// activity the run sent before.
func (e *exchanges) aguiRuns(t *testing.T) (wrote, read []json.RawMessage) {
	t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	if len(e.list) == 0 {
		t.Error("the server saw no AG-UI run")
	}
	for i, x := range e.list {
		var in struct {
			ForwardedProps struct {
				A2UIAction json.RawMessage `json:"a2uiAction"`
			} `json:"forwardedProps"`
		}
		if err := json.Unmarshal(x.request, &in); err != nil {
			t.Errorf("run %d: the input is not JSON: %v\n%s", i+1, err, x.request)
			continue
		}
		if in.ForwardedProps.A2UIAction != nil {
			read = append(read, in.ForwardedProps.A2UIAction)
		}
		answer, body := x.response()
		if ct := answer.Get("Content-Type"); ct != "text/event-stream" {
			t.Errorf("run %d: answered with Content-Type %q, want text/event-stream:\n%s", i+1, ct, body)
			continue
		}
		var types []string
		held := map[string][]json.RawMessage{}
		sc := bufio.NewScanner(bytes.NewReader(body))
		sc.Buffer(nil, 4<<20)
		for sc.Scan() {
			data, ok := strings.CutPrefix(sc.Text(), "data: ")
			if !ok {
				continue
			}
			var ev struct {
				Type         string `json:"type"`
				MessageID    string `json:"messageId"`
				ActivityType string `json:"activityType"`
				Replace      bool   `json:"replace"`
				Content      struct {
					Operations []json.RawMessage `json:"a2ui_operations"`
				} `json:"content"`
				Patch []struct {
					Op    string          `json:"op"`
					Path  string          `json:"path"`
					Value json.RawMessage `json:"value"`
				} `json:"patch"`
			}
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Errorf("run %d: an SSE event is not JSON (%v): %s", i+1, err, data)
				continue
			}
			types = append(types, ev.Type)
			switch {
			case ev.Type != "ACTIVITY_SNAPSHOT" && ev.Type != "ACTIVITY_DELTA":
				continue
			case ev.ActivityType != "a2ui-surface":
				t.Errorf("run %d: an activity of another type: %s", i+1, data)
				continue
			case ev.Type == "ACTIVITY_SNAPSHOT":
				if !ev.Replace || len(ev.Content.Operations) == 0 {
					t.Errorf("run %d: a snapshot that does not replace the content with operations: %s", i+1, data)
				}
				held[ev.MessageID] = ev.Content.Operations
			default:
				ops, ok := held[ev.MessageID]
				if !ok || len(ev.Patch) != 1 || ev.Patch[0].Op != "add" || ev.Patch[0].Path != "/a2ui_operations/-" || len(ev.Patch[0].Value) == 0 {
					t.Errorf("run %d: a delta other than one message appended to an activity of the run: %s", i+1, data)
					continue
				}
				held[ev.MessageID] = append(ops[:len(ops):len(ops)], ev.Patch[0].Value)
			}
			b, _ := json.Marshal(aguiState{Run: i + 1, MessageID: ev.MessageID, Type: ev.Type, Operations: held[ev.MessageID]})
			wrote = append(wrote, b)
		}
		if err := sc.Err(); err != nil {
			t.Errorf("run %d: reading its stream: %v", i+1, err)
		}
		if len(types) < 2 || types[0] != "RUN_STARTED" || types[len(types)-1] != "RUN_FINISHED" {
			t.Errorf("run %d: events %v, want RUN_STARTED … RUN_FINISHED", i+1, types)
		}
	}
	return wrote, read
}
