package tools

import (
	"encoding/json"
	"strings"

	"github.com/genuiserver/genui/catalog"
)

// Names of the UI tools.
const (
	AddOrUpdateSurface = "addOrUpdateSurface"
	DeleteSurface      = "deleteSurface"
)

// Descriptions of the UI tools, as the model sees them.
const (
	AddOrUpdateSurfaceDescription = "Shows a new UI surface or replaces an existing one. The definition MUST conform to the widget catalog schema."
	DeleteSurfaceDescription      = "Removes a UI surface the client shows."
)

// Tool is the declaration of one UI tool, as a model receives it.
type Tool struct {
	Name        string
	Description string
	// Schema is the tool's input JSON Schema, encoded.
	Schema json.RawMessage
}

// Set is the UI tools of one catalog. Two variants exist: the full one, whose
// addOrUpdateSurface schema is the catalog itself, and the simplified one for providers
// that cannot serve the catalog as a tool schema, whose addOrUpdateSurface schema only
// names the widgets (the catalog then travels in the system prompt). A Set is built once
// per catalog and shared.
type Set struct {
	Catalog    *catalog.Catalog
	Full       []Tool
	Simplified []Tool
}

type setKey struct{}

// For returns the UI tools of a catalog, building them the first time.
func For(c *catalog.Catalog) *Set {
	return c.Memo(setKey{}, func() any {
		del := Tool{Name: DeleteSurface, Description: DeleteSurfaceDescription, Schema: mustEncode(DeleteSurfaceSchema())}
		return &Set{
			Catalog:    c,
			Full:       []Tool{{Name: AddOrUpdateSurface, Description: AddOrUpdateSurfaceDescription, Schema: mustEncode(AddOrUpdateSurfaceSchema(c))}, del},
			Simplified: []Tool{{Name: AddOrUpdateSurface, Description: AddOrUpdateSurfaceDescription, Schema: mustEncode(SimplifiedSurfaceSchema(c))}, del},
		}
	}).(*Set)
}

// Variant returns the full tools, or the simplified ones.
func (s *Set) Variant(simplified bool) []Tool {
	if simplified {
		return s.Simplified
	}
	return s.Full
}

func mustEncode(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("tools: encoding a tool schema: " + err.Error()) // maps of decoded JSON always encode
	}
	return b
}

// AddOrUpdateSurfaceSchema returns the input schema of the addOrUpdateSurface tool for a
// catalog, as a new map: {surfaceId, definition} where definition is the catalog itself.
// The catalog's $defs/definitions move to the top so that its local references still
// resolve.
func AddOrUpdateSurfaceSchema(c *catalog.Catalog) map[string]any {
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

// SimplifiedSurfaceSchema is the addOrUpdateSurface input schema for providers that cannot
// serve the catalog itself as a tool schema: the definition's shape without the widget
// schemas, which the system prompt carries instead.
func SimplifiedSurfaceSchema(c *catalog.Catalog) map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			"surfaceId": map[string]any{"type": "string", "description": "The id of the surface to show or replace."},
			"definition": map[string]any{
				"type": "object",
				"properties": map[string]any{
					"root": map[string]any{"type": "string", "description": "The id of the root widget."},
					"widgets": map[string]any{"type": "array", "items": map[string]any{
						"type": "object",
						"properties": map[string]any{
							"id": map[string]any{"type": "string"},
							"widget": map[string]any{"type": "object", "description": "Exactly one key, the widget type (one of " +
								c.WidgetNames() + "), whose value holds the widget's properties as the catalog in the system prompt defines them."},
						},
						"required": []any{"id", "widget"},
					}},
				},
				"required": []any{"root", "widgets"},
			},
		},
		"required": []any{"surfaceId", "definition"},
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

// What the tools answer the model.
var (
	// Updated answers a valid addOrUpdateSurface request.
	Updated = map[string]any{"status": "updated"}
	// Deleted answers a valid deleteSurface request.
	Deleted = map[string]any{"status": "deleted"}
)

// Ack is the answer to a valid request of the named tool.
func Ack(name string) map[string]any {
	if name == DeleteSurface {
		return Deleted
	}
	return Updated
}

// Rejected answers an invalid request: it was not shown, and these violations must be
// fixed.
func Rejected(violations []catalog.Violation) map[string]any {
	return map[string]any{
		"status":     "rejected",
		"error":      "This request was not shown to the user because it does not conform to the tool's schema and the widget catalog. Fix every violation below and call the tool again with the complete corrected input.",
		"violations": violations,
	}
}

// Check validates a tool request of the model against the catalog.
func Check(c *catalog.Catalog, name string, input any) catalog.Report {
	var r catalog.Report
	in, ok := input.(map[string]any)
	if !ok {
		r.Add("", "input must be an object, got %s", catalog.JSONType(input))
		return r
	}
	switch name {
	case AddOrUpdateSurface, DeleteSurface:
	default:
		r.Add("", "unknown tool %q; use %s or %s", name, AddOrUpdateSurface, DeleteSurface)
		return r
	}
	sid, ok := in["surfaceId"].(string)
	switch {
	case in["surfaceId"] == nil:
		r.Add("/surfaceId", "required property is missing")
	case !ok:
		r.Add("/surfaceId", "must be a string, got %s", catalog.JSONType(in["surfaceId"]))
	case sid == "":
		r.Add("/surfaceId", "must not be empty")
	}
	if name == DeleteSurface {
		for k := range in {
			if k != "surfaceId" {
				r.Add("/"+k, "deleteSurface takes only surfaceId")
			}
		}
		return r
	}
	def, present := in["definition"]
	if !present {
		r.Add("/definition", "required property is missing")
		return r
	}
	d := c.CheckDefinition(def, "/definition")
	r.Violations = append(r.Violations, d.Violations...)
	r.Warnings = d.Warnings
	return r
}

// WidgetsOfSchema lists the widgets of a catalog from the input schema of its
// addOrUpdateSurface tool (see [AddOrUpdateSurfaceSchema]), as a model sees it.
func WidgetsOfSchema(toolSchema map[string]any) []catalog.Widget {
	return catalog.WidgetsAt(toolSchema, "properties", "definition")
}
