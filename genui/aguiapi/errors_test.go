package aguiapi

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui"
)

// Every status maps to a RUN_ERROR whose code is the status, with the error's details,
// and retryAfter in whole seconds, at least 1, when the error asks for a wait.
func TestErrorTable(t *testing.T) {
	for _, st := range genui.Statuses {
		for _, wait := range []time.Duration{0, time.Millisecond, 2500 * time.Millisecond} {
			e := &genui.Error{Status: st, Message: "the problem", Details: map[string]any{"field": "messages"}, RetryAfter: wait}
			b, err := json.Marshal(runErrorOf(e))
			if err != nil {
				t.Fatal(err)
			}
			var got struct {
				Type, Message, Code string
				Metadata            struct {
					Details map[string]any
				}
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if got.Type != "RUN_ERROR" || got.Code != string(st) || got.Message != "the problem" || got.Metadata.Details["field"] != "messages" {
				t.Errorf("%s: %s", st, b)
			}
			want := map[time.Duration]float64{time.Millisecond: 1, 2500 * time.Millisecond: 3}[wait]
			if r, _ := got.Metadata.Details["retryAfter"].(float64); r != want {
				t.Errorf("%s, wait %v: retryAfter %v, want %v", st, wait, got.Metadata.Details["retryAfter"], want)
			}
		}
	}
	// Details that carry their own retryAfter (a stream read back from the log) keep it;
	// an error without details gets some only for the wait.
	e := &genui.Error{Status: genui.StatusResourceExhausted, Message: "m", Details: map[string]any{"retryAfter": 7}, RetryAfter: time.Second}
	if d := runErrorOf(e).Metadata.Details.(map[string]any); d["retryAfter"] != 7 {
		t.Errorf("retryAfter %v, want the details' 7", d["retryAfter"])
	}
	if ev := runErrorOf(&genui.Error{Status: genui.StatusInternal, Message: "m"}); ev.Metadata != nil {
		t.Errorf("metadata %v for an error without details", ev.Metadata)
	}
}
