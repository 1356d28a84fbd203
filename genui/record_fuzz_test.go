package genui

import (
	"encoding/json"
	"testing"

	"github.com/genuiserver/genui/genui/durable"
	"github.com/genuiserver/genui/schemas"
)

// FuzzRecord decodes arbitrary stream records (a Redis log holds them, shared by
// replicas): no panic, an error or an item; and every event, once encoded, decodes to
// itself.
func FuzzRecord(f *testing.F) {
	f.Add(appendEventRecord(nil, &schemas.Event{Type: schemas.EventText, Index: 2, Text: "hello"}), "x", "0", []byte(`{"a":1}`))
	f.Add(appendEventRecord(nil, &schemas.Event{Type: schemas.EventToolRequest, ToolRequest: &schemas.ToolRequest{Name: "n", Ref: "1", Input: json.RawMessage(`{}`)}}), "", "", []byte(nil))
	f.Add([]byte("R{\"finishReason\":\"stop\"}"), "n", "r", []byte(`[]`))
	f.Add([]byte("E{\"status\":\"INTERNAL\"}"), "n", "r", []byte(`{}`))
	f.Add([]byte{'q', 0xff, 0xff, 0xff}, "n", "r", []byte(`{}`))
	f.Add(appendEventRecord(nil, &schemas.Event{Type: schemas.EventToolCall, Index: 2, ToolCall: &schemas.ToolCall{CallID: "c1", Name: "getLocation", Signature: "c2ln", Input: json.RawMessage(`{"a":1}`)}}), "getLocation", "c1", []byte(`{}`))
	f.Add([]byte{'c', 0, 3, 'a'}, "n", "r", []byte(`{}`))
	f.Fuzz(func(t *testing.T, rec []byte, name, ref string, input []byte) {
		if it, err := decodeRecord(durable.Record{Seq: 1, Data: rec}); err == nil && it.Event == nil && !it.Final() {
			t.Fatalf("decoded nothing from %q", rec)
		}
		ev := schemas.Event{Type: schemas.EventToolRequest, Index: len(rec), ToolRequest: &schemas.ToolRequest{Name: name, Ref: ref, Input: input}}
		it, err := decodeRecord(durable.Record{Seq: 1, Data: appendEventRecord(nil, &ev)})
		if err != nil || it.Event == nil || it.Event.Index != ev.Index || it.Event.ToolRequest.Name != name ||
			it.Event.ToolRequest.Ref != ref || string(it.Event.ToolRequest.Input) != string(input) {
			t.Fatalf("round trip of %+v: %+v %v", ev, it.Event, err)
		}
		call := schemas.Event{Type: schemas.EventToolCall, Index: len(input), ToolCall: &schemas.ToolCall{CallID: ref, Name: name, Signature: string(rec), Input: input}}
		it, err = decodeRecord(durable.Record{Seq: 1, Data: appendEventRecord(nil, &call)})
		if err != nil || it.Event == nil || it.Event.Index != call.Index || it.Event.ToolCall.CallID != ref || it.Event.ToolCall.Name != name ||
			it.Event.ToolCall.Signature != string(rec) || string(it.Event.ToolCall.Input) != string(input) {
			t.Fatalf("round trip of %+v: %+v %v", call.ToolCall, it.Event, err)
		}
	})
}
