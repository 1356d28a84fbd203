package tools

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/genuiserver/genui/schemas"
)

// FuzzCompileClient compiles arbitrary declarations of client tools and checks
// arbitrary inputs against them: no panic; a refused declaration is a FieldError naming
// a field; a compiled one declares valid names and checks any input.
func FuzzCompileClient(f *testing.F) {
	for _, s := range []string{
		`[{"name":"getLocation","description":"d","inputSchema":{"type":"object","properties":{"precise":{"type":"boolean"}},"required":["precise"]}}]`,
		`[{"name":"a"},{"name":"b","inputSchema":{"$defs":{"x":{"type":"string"}},"type":"object","properties":{"y":{"$ref":"#/$defs/x"}}}}]`,
		`[{"name":"a","inputSchema":{"$ref":"https://example.com/x"}}]`,
		`[{"name":"a","inputSchema":{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"integer","minimum":3}}}}]`,
		`[{"name":"addOrUpdateSurface"}]`, `[{"name":"a","inputSchema":[]}]`, `[{"name":"a","inputSchema":{"type":"object","oneOf":[false,{}]}}]`,
	} {
		f.Add([]byte(s), []byte(`{"precise":true}`))
	}
	f.Fuzz(func(t *testing.T, decl, input []byte) {
		var decls []schemas.ClientTool
		if json.Unmarshal(decl, &decls) != nil {
			return
		}
		set, err := CompileClient(decls)
		var fe *FieldError
		switch {
		case err != nil && (!errors.As(err, &fe) || fe.Field == "" || fe.Message == ""):
			t.Fatalf("unstructured error %v", err)
		case err != nil:
			return
		}
		if ClientKey(decls) != ClientKey(decls) {
			t.Fatal("unstable key")
		}
		var in any
		if json.Unmarshal(input, &in) != nil {
			return
		}
		for _, tool := range set.Tools {
			if !ValidName(tool.Name) || !json.Valid(tool.Schema) {
				t.Fatalf("compiled %+v", tool)
			}
			_ = set.Check(tool.Name, in)
		}
	})
}
