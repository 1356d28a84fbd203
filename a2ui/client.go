package a2ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"
)

// ClientMessage is a message a client sends: a user action, or an error it met.
type ClientMessage struct {
	// Action is set for a v0.9 action, or a v0.8 userAction.
	Action *Action
	// Error is set for a client error: {code, surfaceId, message, path, …}.
	Error map[string]any
}

// Action is a user action on a surface, its context resolved by the client.
type Action struct {
	Name              string         `json:"name"`
	SurfaceID         string         `json:"surfaceId"`
	SourceComponentID string         `json:"sourceComponentId,omitempty"`
	Timestamp         string         `json:"timestamp,omitempty"`
	Context           map[string]any `json:"context,omitempty"`
}

// DecodeClientMessage decodes a client message: {"version":"v0.9","action":{…}} or
// {"version":"v0.9","error":{…}}, and the v0.8 forms {"userAction":{…}} and
// {"error":{…}}, in either version (web renderers send userAction for v0.9 too).
// Errors name the field under field.
func DecodeClientMessage(raw json.RawMessage, field string) (*ClientMessage, *FieldError) {
	raw = bytes.TrimSpace(raw)
	var top map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &top) != nil {
		return nil, fieldErr(field, "must be an A2UI client message object: {\"version\":\"v0.9\",\"action\":{…}} or {\"version\":\"v0.9\",\"error\":{…}}")
	}
	var ops []string
	for k := range top {
		switch k {
		case "version":
			var v string
			if json.Unmarshal(top[k], &v) != nil || (v != V09 && v != V08 && v != "v0.9.1") {
				return nil, fieldErr(field+".version", "must be \"v0.9\"")
			}
		case "action", "userAction", "error":
			ops = append(ops, k)
		default:
			return nil, fieldErr(field+"."+k, "unknown key of a client message (expected version and one of action, userAction, error)")
		}
	}
	sort.Strings(ops)
	switch len(ops) {
	case 0:
		return nil, fieldErr(field, "has no action or error")
	case 1:
	default:
		return nil, fieldErr(field, "has %s: a client message carries exactly one", strings.Join(ops, " and "))
	}
	op := ops[0]
	f := field + "." + op
	if op == "error" {
		var e map[string]any
		if json.Unmarshal(top[op], &e) != nil || e == nil {
			return nil, fieldErr(f, "must be an object {code, surfaceId, message}")
		}
		for _, k := range []string{"code", "surfaceId", "message", "path"} {
			if v, ok := e[k]; ok {
				if _, isStr := v.(string); !isStr {
					return nil, fieldErr(f+"."+k, "must be a string")
				}
			}
		}
		return &ClientMessage{Error: e}, nil
	}
	var a map[string]json.RawMessage
	if json.Unmarshal(top[op], &a) != nil || a == nil {
		return nil, fieldErr(f, "must be an object {name, surfaceId, sourceComponentId, timestamp, context}")
	}
	act := &Action{}
	for _, s := range []struct {
		key      string
		dst      *string
		required bool
	}{{"name", &act.Name, true}, {"surfaceId", &act.SurfaceID, true}, {"sourceComponentId", &act.SourceComponentID, false}, {"timestamp", &act.Timestamp, false}} {
		v, ok := a[s.key]
		if !ok || string(v) == "null" {
			if s.required {
				return nil, fieldErr(f+"."+s.key, "required")
			}
			continue
		}
		if json.Unmarshal(v, s.dst) != nil {
			return nil, fieldErr(f+"."+s.key, "must be a string")
		}
		if s.required && *s.dst == "" {
			return nil, fieldErr(f+"."+s.key, "must not be empty")
		}
	}
	if v, ok := a["context"]; ok && string(v) != "null" {
		if err := json.Unmarshal(v, &act.Context); err != nil || act.Context == nil {
			return nil, fieldErr(f+".context", "must be an object")
		}
	}
	return &ClientMessage{Action: act}, nil
}

// Encode writes m as a client message of version (V09 or V08): {"version":"v0.9",
// "action":{…}} or {"userAction":{…}}, the error as {"version":"v0.9","error":{…}} or
// {"error":{…}}. An action's required fields are always written, an empty context as {}
// and an empty timestamp as now, so that the message is valid against
// client_to_server.json; DecodeClientMessage reads it back.
func (m *ClientMessage) Encode(version string) ([]byte, error) {
	if version != V09 && version != V08 {
		return nil, fmt.Errorf("a2ui: unknown version %q", version)
	}
	if (m.Action == nil) == (m.Error == nil) {
		return nil, fmt.Errorf("a2ui: a client message carries exactly one of an action and an error")
	}
	var body struct {
		Version    string         `json:"version,omitempty"`
		Action     any            `json:"action,omitempty"`
		UserAction any            `json:"userAction,omitempty"`
		Error      map[string]any `json:"error,omitempty"`
	}
	if version == V09 {
		body.Version = V09
	}
	if m.Error != nil {
		body.Error = m.Error
		return json.Marshal(body)
	}
	a := *m.Action
	if a.Timestamp == "" {
		a.Timestamp = time.Now().UTC().Format(time.RFC3339Nano)
	}
	if a.Context == nil {
		a.Context = map[string]any{}
	}
	wire := struct {
		Name              string         `json:"name"`
		SurfaceID         string         `json:"surfaceId"`
		SourceComponentID string         `json:"sourceComponentId"`
		Timestamp         string         `json:"timestamp"`
		Context           map[string]any `json:"context"`
	}{a.Name, a.SurfaceID, a.SourceComponentID, a.Timestamp, a.Context}
	if version == V09 {
		body.Action = wire
	} else {
		body.UserAction = wire
	}
	return json.Marshal(body)
}

// Describe says what a client message means, for the model.
func (m *ClientMessage) Describe() string {
	if m.Action != nil {
		a := m.Action
		var sb strings.Builder
		fmt.Fprintf(&sb, "The user triggered the action %q on surface %q", a.Name, a.SurfaceID)
		if a.SourceComponentID != "" {
			fmt.Fprintf(&sb, " (component %q)", a.SourceComponentID)
		}
		if len(a.Context) > 0 {
			ctx, _ := json.Marshal(a.Context)
			fmt.Fprintf(&sb, ". Its context, resolved by the client:\n```json\n%s\n```", ctx)
		} else {
			sb.WriteString(".")
		}
		return sb.String()
	}
	e, _ := json.Marshal(m.Error)
	return "The client reported an error with the UI:\n```json\n" + string(e) + "\n```"
}
