package aguiapi

import (
	"maps"

	"github.com/genuiserver/genui/genui"
)

// The error table of AG-UI. An error before a run's stream starts is answered as the HTTP
// API answers it (transport.JSON: a status and {"error":{…}}); one after is the run's
// last event, RUN_ERROR, its code the canonical status and its metadata the error's
// details, with retryAfter in whole seconds when the error asks for a wait.

// runErrorOf is the RUN_ERROR event of e.
func runErrorOf(e *genui.Error) *runErrorEvent {
	ev := &runErrorEvent{Type: runError, Message: e.Message, Code: string(e.Status)}
	details := e.Details
	if s := e.RetryAfterSeconds(); s > 0 {
		d, ok := details.(map[string]any)
		if details == nil || ok {
			if _, has := d["retryAfter"]; !has {
				d = maps.Clone(d)
				if d == nil {
					d = map[string]any{}
				}
				d["retryAfter"] = s
				details = d
			}
		}
	}
	if details != nil {
		ev.Metadata = &errorMetadata{Details: details}
	}
	return ev
}
