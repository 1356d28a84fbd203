// Package ndjson encodes a turn's events as the NDJSON stream of /generateUi and
// /generateA2ui carries them, one JSON object each, for every transport that passes an
// event on in that shape (the WebSocket transports' UI updates).
package ndjson

import (
	"github.com/genuiserver/genui/internal/jsonenc"
	"github.com/genuiserver/genui/schemas"
)

// AppendEvent appends ev as the JSON object of its NDJSON line, without the newline:
// {"type":"text","text"}, {"type":"toolRequest","toolRequests":[{"name","input"}]},
// {"type":"toolCall","callId","name","input"[,"signature"]}, or an A2UI message as it is.
func AppendEvent(b []byte, ev *schemas.Event) []byte {
	switch ev.Type {
	case schemas.EventA2UI:
		return append(b, ev.A2UI...)
	case schemas.EventToolCall:
		tc := ev.ToolCall
		b = append(b, `{"type":"toolCall","callId":`...)
		b = jsonenc.AppendString(b, tc.CallID)
		b = append(b, `,"name":`...)
		b = jsonenc.AppendString(b, tc.Name)
		b = append(b, `,"input":`...)
		b = append(b, tc.Input...)
		if tc.Signature != "" {
			b = append(b, `,"signature":`...)
			b = jsonenc.AppendString(b, tc.Signature)
		}
		return append(b, '}')
	case schemas.EventToolRequest:
		tr := ev.ToolRequest
		b = append(b, `{"type":"toolRequest","toolRequests":[{"name":`...)
		b = jsonenc.AppendString(b, tr.Name)
		b = append(b, `,"input":`...)
		b = append(b, tr.Input...)
		return append(b, "}]}"...)
	}
	b = append(b, `{"type":"text","text":`...)
	b = jsonenc.AppendString(b, ev.Text)
	return append(b, '}')
}
