package tools

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/genuiserver/genui/schemas"
)

// Violation is one problem found in a tool request, located by a JSON pointer into the
// request's input.
type Violation struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

func (v Violation) String() string {
	if v.Pointer == "" {
		return v.Message
	}
	return v.Pointer + ": " + v.Message
}

// Descriptions of the UI tools, as the model sees them.
const (
	AddOrUpdateSurfaceDescription = "Shows a new UI surface or replaces an existing one. The definition MUST conform to the widget catalog schema."
	DeleteSurfaceDescription      = "Removes a UI surface the client shows."
)

type memoKey int

const (
	memoToolSchema memoKey = iota
)

// AddOrUpdateSurfaceSchema returns the input schema of the addOrUpdateSurface tool for
// this catalog: {surfaceId, definition} where definition is the catalog itself. The
// catalog's $defs/definitions move to the top so that its local references still resolve.
func (c *Catalog) AddOrUpdateSurfaceSchema() map[string]any {
	return c.Memo(memoToolSchema, func() any {
		var def map[string]any
		_ = json.Unmarshal(c.Canonical, &def) // a private copy to rewrite
		out := map[string]any{
			"type": "object",
			"properties": map[string]any{
				"surfaceId":  map[string]any{"type": "string", "description": "The id of the surface to show or replace."},
				"definition": def,
			},
			"required": []any{"surfaceId", "definition"},
		}
		for _, k := range []string{"$defs", "definitions"} {
			if d, ok := def[k]; ok {
				out[k] = d
				delete(def, k)
			}
		}
		delete(def, "$schema")
		delete(def, "$id")
		rewriteRefs(def)
		return out
	}).(map[string]any)
}

// rewriteRefs points local references that do not go through $defs/definitions at the
// definition's new place inside the tool schema.
func rewriteRefs(v any) {
	switch t := v.(type) {
	case map[string]any:
		if ref, ok := t["$ref"].(string); ok && strings.HasPrefix(ref, "#") &&
			!strings.HasPrefix(ref, "#/$defs/") && !strings.HasPrefix(ref, "#/definitions/") {
			t["$ref"] = "#/properties/definition" + strings.TrimPrefix(ref, "#")
		}
		for _, e := range t {
			rewriteRefs(e)
		}
	case []any:
		for _, e := range t {
			rewriteRefs(e)
		}
	}
}

// DeleteSurfaceSchema is the input schema of the deleteSurface tool.
func DeleteSurfaceSchema() map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"surfaceId": map[string]any{"type": "string", "description": "The id of the surface to remove."},
		},
		"required": []any{"surfaceId"},
	}
}

// Check validates a tool request of the model against the catalog and returns its
// violations; an empty result means the request may be sent to the client.
func (c *Catalog) Check(name string, input any) []Violation {
	in, ok := input.(map[string]any)
	if !ok {
		return []Violation{{Message: fmt.Sprintf("input must be an object, got %s", jsonType(input))}}
	}
	var vs []Violation
	sid, ok := in["surfaceId"].(string)
	switch {
	case in["surfaceId"] == nil:
		vs = append(vs, Violation{"/surfaceId", "required property is missing"})
	case !ok:
		vs = append(vs, Violation{"/surfaceId", fmt.Sprintf("must be a string, got %s", jsonType(in["surfaceId"]))})
	case sid == "":
		vs = append(vs, Violation{"/surfaceId", "must not be empty"})
	}
	switch name {
	case schemas.ToolDeleteSurface:
		return vs
	case schemas.ToolAddOrUpdateSurface:
	default:
		return []Violation{{Message: fmt.Sprintf("unknown tool %q; use %s or %s", name, schemas.ToolAddOrUpdateSurface, schemas.ToolDeleteSurface)}}
	}
	def, present := in["definition"]
	if !present {
		return append(vs, Violation{"/definition", "required property is missing"})
	}
	return append(vs, c.CheckDefinition(def)...)
}

// CheckDefinition validates a surface definition ({root, widgets}) against the catalog.
func (c *Catalog) CheckDefinition(def any) []Violation {
	var vs []Violation
	if err := c.compiled.Validate(def); err != nil {
		if ve, ok := err.(*jsonschema.ValidationError); ok {
			for _, v := range flatten(ve) {
				v.Pointer = "/definition" + v.Pointer
				vs = append(vs, v)
			}
		} else {
			vs = append(vs, Violation{"/definition", err.Error()})
		}
	}
	d, ok := def.(map[string]any)
	if !ok {
		return vs
	}
	widgets, _ := d["widgets"].([]any)
	ids := make(map[string]int, len(widgets))
	for i, w := range widgets {
		wm, _ := w.(map[string]any)
		id, _ := wm["id"].(string)
		if id == "" {
			continue
		}
		if j, dup := ids[id]; dup {
			vs = append(vs, Violation{fmt.Sprintf("/definition/widgets/%d/id", i), fmt.Sprintf("duplicate widget id %q (also used by /definition/widgets/%d)", id, j)})
			continue
		}
		ids[id] = i
	}
	if root, ok := d["root"].(string); ok && len(widgets) > 0 {
		if _, found := ids[root]; !found {
			vs = append(vs, Violation{"/definition/root", fmt.Sprintf("root %q is not the id of any widget", root)})
		}
	}
	return vs
}

// flatten turns a validation error tree into its leaf messages, one per location.
func flatten(ve *jsonschema.ValidationError) []Violation {
	out := ve.BasicOutput()
	var vs []Violation
	seen := map[string]bool{}
	for _, u := range out.Errors {
		if u.Error == nil {
			continue
		}
		msg := u.Error.String()
		if strings.HasPrefix(msg, "validation failed") || strings.Contains(msg, "doesn't validate with") {
			continue
		}
		key := u.InstanceLocation + "\x00" + msg
		if seen[key] {
			continue
		}
		seen[key] = true
		vs = append(vs, Violation{Pointer: u.InstanceLocation, Message: msg})
	}
	if len(vs) == 0 && out.Error != nil {
		vs = append(vs, Violation{Pointer: out.InstanceLocation, Message: out.Error.String()})
	}
	sort.SliceStable(vs, func(i, j int) bool { return vs[i].Pointer < vs[j].Pointer })
	return vs
}

func jsonType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64, json.Number, int, int64:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return strconv.Quote(fmt.Sprintf("%T", v))
}
