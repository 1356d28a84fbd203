package a2ui_test

import (
	"reflect"
	"testing"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
)

// A client message encoded is valid against client_to_server.json of its version, an
// action's missing context and timestamp filled in, and decodes back to what it was.
func TestEncodeClientMessage(t *testing.T) {
	for _, version := range []string{a2ui.V09, a2ui.V08} {
		v := a2uitest.New(t, version, nil)
		for _, m := range []*a2ui.ClientMessage{
			{Action: &a2ui.Action{Name: "join", SurfaceID: "form", SourceComponentID: "submit", Timestamp: "2026-11-28T10:00:00Z", Context: map[string]any{"email": "a@b.c"}}},
			{Action: &a2ui.Action{Name: "join", SurfaceID: "form", SourceComponentID: "submit"}},
			{Error: map[string]any{"code": "VALIDATION_FAILED", "surfaceId": "form", "path": "/components/0", "message": "bad"}},
		} {
			b, err := m.Encode(version)
			if err != nil {
				t.Fatal(err)
			}
			if err := v.CheckClient(b); err != nil {
				t.Errorf("%s %s: %v", version, b, err)
			}
			back, ferr := a2ui.DecodeClientMessage(b, "message")
			if ferr != nil {
				t.Fatalf("%s: %v", b, ferr)
			}
			if m.Action != nil {
				want := *m.Action
				if want.Context == nil {
					want.Context = map[string]any{}
				}
				if want.Timestamp == "" {
					want.Timestamp = back.Action.Timestamp
				}
				if back.Action == nil || back.Action.Timestamp == "" || !reflect.DeepEqual(*back.Action, want) {
					t.Errorf("%s: decoded %+v, want %+v", b, back.Action, want)
				}
			} else if !reflect.DeepEqual(back.Error, m.Error) {
				t.Errorf("%s: decoded %+v", b, back.Error)
			}
		}
	}
	for _, bad := range []*a2ui.ClientMessage{{}, {Action: &a2ui.Action{}, Error: map[string]any{}}} {
		if _, err := bad.Encode(a2ui.V09); err == nil {
			t.Errorf("%+v encoded", bad)
		}
	}
	if _, err := (&a2ui.ClientMessage{Action: &a2ui.Action{Name: "a", SurfaceID: "s"}}).Encode("v2"); err == nil {
		t.Error("an unknown version encoded")
	}
}
