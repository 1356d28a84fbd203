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

	"github.com/labstack/echo/v4"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/aguiapi"
	"github.com/genuiserver/genui/internal/a2uitest"
)

// TestAGUISurfacesInChromium drives A2UI over AG-UI end to end (web/e2e/agui.test.mjs):
// the official AG-UI client (@ag-ui/client 1.0.0's HttpAgent, in node) runs the server's
// AG-UI endpoint on the offline model and hands each a2ui-surface activity snapshot to
// the official A2UI web renderer (the playground's bundle of @a2ui/lit) in headless
// Chromium, which draws it anew: partial snapshots of the growing surface first, then
// the whole. The action the rendered button emits goes back in the next run as
// forwardedProps.a2uiAction, and the answer's surface is drawn. Every snapshot is then
// checked against the specification's schemas, each as the self-contained sequence of
// messages it is, and the actions sent against client_to_server.json; both must be what
// the server wrote and read, and a partial snapshot must have been drawn.
func TestAGUISurfacesInChromium(t *testing.T) {
	b := needBrowser(t)
	if _, err := os.Stat(filepath.Join(b.e2e, "node_modules", "@ag-ui", "client", "package.json")); err != nil {
		skipOrFail(t, "web/e2e/node_modules/@ag-ui/client is missing")
	}
	seen := exchanges{path: "/ag-ui"}
	srv := newE2EServer(t, b.e2e, &seen, func(svc *genui.Service, e *echo.Echo) {
		aguiapi.New(svc, aguiapi.WithLogger(quiet)).Register(e)
	})
	recordFile := filepath.Join(t.TempDir(), "agui-record.json")

	b.run(t, "agui.test.mjs", "GENUI_URL="+srv.URL+"/", "AGUI_RECORD="+recordFile)

	var rec struct {
		Snapshots []aguiSnapshot   `json:"snapshots"`
		Sent      []aguiA2UIAction `json:"sent"`
	}
	readRecord(t, recordFile, &rec)
	if len(rec.Snapshots) == 0 || len(rec.Sent) == 0 {
		t.Fatalf("record: %d snapshots received, %d actions sent; the browser test should produce both", len(rec.Snapshots), len(rec.Sent))
	}

	// Each snapshot builds its surface from nothing: its messages are a sequence of their
	// own, whose createSurface names its catalog anew.
	msgs := 0
	v := a2uitest.New(t, "v0.9", nil)
	for i, s := range rec.Snapshots {
		if len(s.Operations) == 0 || !bytes.Contains(s.Operations[0], []byte(`"createSurface"`)) {
			t.Errorf("snapshot %d (%s) does not start with createSurface: %s", i, s.MessageID, s.Operations)
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
	t.Logf("v0.9: %d snapshots (%d server messages) and %d client actions valid against the specification", len(rec.Snapshots), msgs, len(rec.Sent))

	partials := partialSnapshots(t, rec.Snapshots)
	if len(partials) == 0 {
		t.Error("no partial snapshot (one lacking components the last snapshot of its surface has) crossed the wire")
	}
	t.Logf("partial snapshots: %s", strings.Join(partials, "; "))

	// What node received is what the server wrote, and what node sent is what the server read.
	wrote, read := seen.aguiRuns(t)
	var got []json.RawMessage
	for _, s := range rec.Snapshots {
		b, _ := json.Marshal(s)
		got = append(got, b)
	}
	sameMessages(t, "the a2ui-surface snapshots of the server's streams", wrote, got)
	var sent []json.RawMessage
	for _, a := range rec.Sent {
		b, _ := json.Marshal(a)
		sent = append(sent, b)
	}
	sameMessages(t, "the forwardedProps.a2uiAction of the client's runs", read, sent)
}

// aguiSnapshot is an a2ui-surface activity snapshot as the browser test records it: the
// run it came in (1, 2, …), its activity message and its A2UI messages.
type aguiSnapshot struct {
	Run        int               `json:"run"`
	MessageID  string            `json:"messageId"`
	Operations []json.RawMessage `json:"operations"`
}

// aguiA2UIAction is forwardedProps.a2uiAction of a run.
type aguiA2UIAction struct {
	UserAction json.RawMessage `json:"userAction"`
}

// partialSnapshots describes the snapshots that hold a root but lack components the last
// snapshot of their activity message (in the same run) holds.
func partialSnapshots(t *testing.T, snaps []aguiSnapshot) []string {
	t.Helper()
	ids := func(s aguiSnapshot) map[string]bool {
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
				t.Errorf("snapshot of %s: a message is not JSON: %v\n%s", s.MessageID, err, m)
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
			out = append(out, fmt.Sprintf("snapshot %d (run %d, %s): %d of %d components, without %s", i+1, s.Run, s.MessageID, len(have), len(final), strings.Join(missing, ", ")))
		}
	}
	return out
}

// aguiRuns returns what the AG-UI runs carried: the a2ui-surface snapshots the server wrote (as
// aguiSnapshot, numbered by run) and the forwardedProps.a2uiAction it read, each in
// order. It fails t when a run was not answered with an SSE stream of AG-UI events
// ending with RUN_FINISHED.
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
				Content      struct {
					Operations []json.RawMessage `json:"a2ui_operations"`
				} `json:"content"`
			}
			if err := json.Unmarshal([]byte(data), &ev); err != nil {
				t.Errorf("run %d: an SSE event is not JSON (%v): %s", i+1, err, data)
				continue
			}
			types = append(types, ev.Type)
			if ev.Type != "ACTIVITY_SNAPSHOT" || ev.ActivityType != "a2ui-surface" {
				continue
			}
			b, _ := json.Marshal(aguiSnapshot{Run: i + 1, MessageID: ev.MessageID, Operations: ev.Content.Operations})
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
