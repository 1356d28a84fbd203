package a2aapi

import (
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/genuiserver/genui/genui"
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
