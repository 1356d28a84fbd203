package a2aapi

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/schemas"
)

// A failed turn's message names what failed and its status, never the core's message.
func TestFailure(t *testing.T) {
	secret := "dial tcp 10.0.0.7:443: Post \"http://model.internal/v1beta\""
	for _, tc := range []struct {
		err  *genui.Error
		want string
	}{
		{&genui.Error{Status: genui.StatusUnavailable, Message: "the model could not be reached: " + secret}, "The model or the server is unavailable; try again. (UNAVAILABLE)"},
		{&genui.Error{Status: genui.StatusDeadlineExceeded, Message: secret}, "The model did not answer in time; try again. (DEADLINE_EXCEEDED)"},
		{&genui.Error{Status: genui.StatusResourceExhausted, Message: secret, RetryAfter: 30 * time.Second}, "The model is over a limit; try again in 30 s. (RESOURCE_EXHAUSTED)"},
		// Read back from the stream log: the wait is in the details.
		{&genui.Error{Status: genui.StatusResourceExhausted, Message: secret, Details: map[string]any{"retryAfter": 7.0}}, "try again in 7 s. (RESOURCE_EXHAUSTED)"},
		{&genui.Error{Status: genui.StatusResourceExhausted, Message: secret}, "The model is over a limit; try again. (RESOURCE_EXHAUSTED)"},
		// A quota's limit passes too.
		{&genui.Error{Status: genui.StatusResourceExhausted, Message: secret, Details: map[string]any{"limit": "rate", "retryAfter": 2}}, "The model is over a limit; try again in 2 s. (RESOURCE_EXHAUSTED)"},
		// A turn limit does not: it is named, with its value.
		{&genui.Error{Status: genui.StatusResourceExhausted, Message: secret, Details: map[string]any{"limit": genui.LimitComponents, "value": 10000}},
			"The turn stopped at the server's limit of 10000 components on one surface (components); what was shown before it stays. Ask for less, or for it in parts. (RESOURCE_EXHAUSTED)"},
		// Read back from the stream log.
		{&genui.Error{Status: genui.StatusResourceExhausted, Message: secret, Details: map[string]any{"limit": genui.LimitOutputBytes, "value": 1048576.0}}, "limit of 1048576 bytes of model output in one turn (outputBytes); what was shown before it stays. Ask for less, or for it in parts. (RESOURCE_EXHAUSTED)"},
		{&genui.Error{Status: genui.StatusResourceExhausted, Message: secret, Details: map[string]any{"limit": genui.LimitTurnTime, "value": "10m0s"}}, "limit of 10m0s for one turn (turnTime); what was shown before it stays. Ask for less, or for it in parts. (RESOURCE_EXHAUSTED)"},
		{&genui.Error{Status: genui.StatusResourceExhausted, Message: secret, Details: map[string]any{"limit": genui.LimitToolCalls}}, "limit of toolCalls; what was shown before it stays. Ask for less, or for it in parts. (RESOURCE_EXHAUSTED)"},
		{&genui.Error{Status: genui.StatusPermissionDenied, Message: secret}, "operator of the service must fix this. (PERMISSION_DENIED)"},
		{&genui.Error{Status: genui.StatusFailedPrecondition, Message: secret}, "valid UI for this client; try again, or rephrase the request. (FAILED_PRECONDITION)"},
		{&genui.Error{Status: genui.StatusInternal, Message: secret}, "The turn failed on the server; try again. (INTERNAL)"},
	} {
		got := failure(tc.err)
		if !strings.HasSuffix(got, tc.want) || strings.Contains(got, "internal") || strings.Contains(got, "10.0.0.7") {
			t.Errorf("%s: %q, want %q", tc.err.Status, got, tc.want)
		}
	}
}

// A failed turn's final status carries that message, and a canceled one the core's own.
func TestEncoderEnd(t *testing.T) {
	tk := &task{Task: &a2a.Task{ID: "t", ContextID: "c"}, Stream: "s"}
	e := newEncoder(tk, true)
	evs := e.item(genui.Item{Err: &genui.Error{Status: genui.StatusUnavailable, Message: "http://model.internal"}})
	if len(evs) != 1 || e.final == nil || e.final.State != a2a.TaskStateFailed || e.failed == nil ||
		!strings.Contains(e.turn[0].Text, "(UNAVAILABLE)") || strings.Contains(e.turn[0].Text, "http") {
		t.Fatalf("failed: %+v %+v", e.final, e.turn)
	}
	e = newEncoder(tk, true)
	e.item(genui.Item{Err: &genui.Error{Status: genui.StatusCancelled, Message: "the turn was cancelled by request"}})
	if e.final.State != a2a.TaskStateCanceled || e.failed != nil || e.turn[0].Text != "the turn was cancelled by request" {
		t.Fatalf("canceled: %+v %+v", e.final, e.turn)
	}
}

// A turn's task keeps each run of its A2UI messages as the final state of its surfaces,
// text and calls where they came; the stream is the stream.
func TestEncoderWhole(t *testing.T) {
	for _, tc := range []struct {
		wire  wire
		run1  []string
		run2  []string
		want1 []string
		want2 []string
	}{{
		wire: wire{Version: a2ui.V09, MIME: MIMEv09},
		run1: []string{
			`{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"c"}}`,
			`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"a","component":"Text","text":"A"},{"id":"root","component":"Column","children":["a"]}]}}`,
			`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"b","component":"Text","text":"B"},{"id":"root","component":"Column","children":["a","b"]}]}}`,
			`{"version":"v0.9","updateDataModel":{"surfaceId":"s","path":"/x","value":1}}`,
			`{"version":"v0.9","updateDataModel":{"surfaceId":"s","path":"/","value":{"x":2}}}`,
		},
		run2: []string{`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"a","component":"Text","text":"A2"}]}}`},
		want1: []string{
			`{"version":"v0.9","createSurface":{"catalogId":"c","surfaceId":"s"}}`,
			`{"version":"v0.9","updateDataModel":{"path":"/","surfaceId":"s","value":{"x":2}}}`,
			`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"component":"Text","id":"a","text":"A"},{"children":["a","b"],"component":"Column","id":"root"},{"component":"Text","id":"b","text":"B"}]}}`,
		},
		want2: []string{`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"component":"Text","id":"a","text":"A2"}]}}`},
	}, {
		wire: wire{Version: a2ui.V08, MIME: MIMEv09},
		run1: []string{
			`{"surfaceUpdate":{"surfaceId":"s","components":[{"id":"root","component":{"Column":{"children":{"explicitList":[]}}}}]}}`,
			`{"beginRendering":{"surfaceId":"s","root":"root"}}`,
			`{"surfaceUpdate":{"surfaceId":"s","components":[{"id":"a","component":{"Text":{"text":{"literalString":"A"}}}},{"id":"root","component":{"Column":{"children":{"explicitList":["a"]}}}}]}}`,
		},
		run2: []string{`{"deleteSurface":{"surfaceId":"s"}}`},
		want1: []string{
			`{"surfaceUpdate":{"surfaceId":"s","components":[{"component":{"Column":{"children":{"explicitList":["a"]}}},"id":"root"},{"component":{"Text":{"text":{"literalString":"A"}}},"id":"a"}]}}`,
			`{"beginRendering":{"root":"root","surfaceId":"s"}}`,
		},
		want2: []string{`{"deleteSurface":{"surfaceId":"s"}}`},
	}} {
		t.Run(tc.wire.Version, func(t *testing.T) {
			tk := &task{Task: &a2a.Task{ID: "t", ContextID: "c"}, Stream: "s", Wire: tc.wire}
			e := newEncoder(tk, true)
			a2uiItem := func(m string) genui.Item {
				return genui.Item{Event: &schemas.Event{Type: schemas.EventA2UI, A2UI: json.RawMessage(m)}}
			}
			var evs []a2a.Event
			evs = append(evs, e.item(genui.Item{Event: &schemas.Event{Type: schemas.EventText, Text: "Here it is.\n"}})...)
			for _, m := range tc.run1 {
				evs = append(evs, e.item(a2uiItem(m))...)
			}
			evs = append(evs, e.item(genui.Item{Event: &schemas.Event{Type: schemas.EventText, Text: "And now?"}})...)
			for _, m := range tc.run2 {
				evs = append(evs, e.item(a2uiItem(m))...)
			}
			evs = append(evs, e.item(genui.Item{Event: &schemas.Event{Type: schemas.EventToolCall, ToolCall: &schemas.ToolCall{CallID: "c1", Name: "getLocation", Input: json.RawMessage(`{}`)}}})...)
			evs = append(evs, e.item(genui.Item{Result: json.RawMessage(`{}`)})...)
			// The stream: a status update per part, as the core gave it.
			if n := 2 + len(tc.run1) + len(tc.run2) + 1; len(evs) != n || e.final == nil {
				t.Fatalf("%d events, want %d", len(evs), n)
			}
			var got []string
			for _, p := range e.whole() {
				switch {
				case p.A2UI != nil:
					got = append(got, string(p.A2UI))
				case p.Call != nil:
					got = append(got, "call "+p.Call.Name)
				default:
					got = append(got, "text "+p.Text)
				}
			}
			want := append(append(append(append([]string{"text Here it is.\n"}, tc.want1...), "text And now?"), tc.want2...), "call getLocation")
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Fatalf("the turn whole:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// Kept so, and the same when asked again.
			if again := e.whole(); len(again) != len(got) || len(e.turn) != len(got) {
				t.Fatalf("again: %d parts, kept %d", len(again), len(e.turn))
			}
		})
	}
}
