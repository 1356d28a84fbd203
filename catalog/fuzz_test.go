package catalog

import (
	"encoding/json"
	"testing"
	"time"
)

// FuzzCompile compiles arbitrary JSON objects as catalogs and checks arbitrary surface
// definitions against them and the basic catalog: no panics, errors instead.
func FuzzCompile(f *testing.F) {
	f.Add([]byte(`{"type":"object","properties":{"widgets":{"type":"array","items":{"type":"object","properties":{"widget":{"anyOf":[{"type":"object","properties":{"Text":{"type":"object"}},"required":["Text"]}]}}}}}}`), []byte(`{"root":"a","widgets":[{"id":"a","widget":{"Text":{}}}]}`))
	f.Add([]byte(`{"$ref":"#/$defs/a","$defs":{"a":{"$ref":"#/$defs/a"}}}`), []byte(`{}`))
	f.Add([]byte(`{"anyOf":[{"properties":{"X":{"$ref":"#"}}}]}`), []byte(`[]`))
	basic := mustBasic(f)
	f.Fuzz(func(t *testing.T, catalog, input []byte) {
		start := time.Now()
		defer func() {
			if d := time.Since(start); d > 2*time.Second {
				t.Fatalf("took %v: compile and check must stay fast on any input", d)
			}
		}()
		// As a client sends it: any bytes.
		if c, err := NewCache(4, 1<<20, 0).Compile(catalog); err == nil && c.Size() <= 0 {
			t.Fatal("a compiled catalog without a size")
		}
		var m map[string]any
		if json.Unmarshal(catalog, &m) == nil && m != nil {
			if c, err := Compile(m); err == nil {
				var in any
				if json.Unmarshal(input, &in) == nil {
					_ = c.CheckDefinition(in, "/definition")
				}
			}
		}
		var in any
		if json.Unmarshal(input, &in) == nil {
			_ = basic.CheckDefinition(in, "/definition")
		}
	})
}
