package tools

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/schemas"
)

func mustBasic(t testing.TB) *catalog.Catalog {
	t.Helper()
	s, err := schemas.SampleCatalog("basic")
	if err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Compile(s)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func loadCatalog(t testing.TB, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCheck(t *testing.T) {
	c := mustBasic(t)
	valid := map[string]any{"surfaceId": "s", "definition": map[string]any{"root": "t", "widgets": []any{
		map[string]any{"id": "t", "widget": map[string]any{"Text": map[string]any{"text": "hi"}}}}}}
	if r := Check(c, AddOrUpdateSurface, valid); !r.OK() {
		t.Fatalf("valid rejected: %v", r.Violations)
	}
	for name, tc := range map[string]struct {
		input any
		want  string
	}{
		"not an object":  {"x", "input must be an object, got string"},
		"no surface":     {map[string]any{"definition": valid["definition"]}, "/surfaceId: required property is missing"},
		"no definition":  {map[string]any{"surfaceId": "s"}, "/definition: required property is missing"},
		"unknown widget": {map[string]any{"surfaceId": "s", "definition": map[string]any{"root": "t", "widgets": []any{map[string]any{"id": "t", "widget": map[string]any{"Carousel": map[string]any{}}}}}}, "/definition/widgets/0/widget"},
		"bad root":       {map[string]any{"surfaceId": "s", "definition": map[string]any{"root": "x", "widgets": valid["definition"].(map[string]any)["widgets"]}}, `/definition/root: root "x" is not the id of any widget`},
		"duplicate id": {map[string]any{"surfaceId": "s", "definition": map[string]any{"root": "t", "widgets": []any{
			map[string]any{"id": "t", "widget": map[string]any{"Text": map[string]any{"text": "a"}}},
			map[string]any{"id": "t", "widget": map[string]any{"Text": map[string]any{"text": "b"}}}}}}, `/definition/widgets/1/id: duplicate widget id "t"`},
	} {
		vs := Check(c, AddOrUpdateSurface, tc.input)
		var all []string
		for _, v := range vs.Violations {
			all = append(all, v.String())
		}
		if !strings.Contains(strings.Join(all, "\n"), tc.want) {
			t.Errorf("%s: got %q, want %q", name, all, tc.want)
		}
	}
	if r := Check(c, DeleteSurface, map[string]any{"surfaceId": "s"}); !r.OK() {
		t.Fatal(r)
	}
	if r := Check(c, "launchRocket", map[string]any{"surfaceId": "s"}); len(r.Violations) != 1 || !strings.Contains(r.Violations[0].Message, "unknown tool") {
		t.Fatal(r)
	}
}

func TestToolSchemaHoistsDefs(t *testing.T) {
	c, err := catalog.Compile(map[string]any{
		"$defs": map[string]any{"text": map[string]any{"type": "object", "properties": map[string]any{"Text": map[string]any{"type": "object"}}, "required": []any{"Text"}}},
		"type":  "object",
		"properties": map[string]any{
			"root": map[string]any{"type": "string"},
			"widgets": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
				"id": map[string]any{"type": "string"}, "widget": map[string]any{"anyOf": []any{map[string]any{"$ref": "#/$defs/text"}}}}}},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := AddOrUpdateSurfaceSchema(c)
	if _, ok := s["$defs"]; !ok {
		t.Fatalf("$defs not hoisted: %v", s)
	}
	if ws := WidgetsOfSchema(s); len(ws) != 1 || ws[0].Name != "Text" {
		t.Fatalf("widgets of tool schema: %+v", ws)
	}
}
