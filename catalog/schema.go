package catalog

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Schema is a compiled JSON Schema of a value other than a surface, such as the input of
// a tool the client runs. It is immutable and safe to share.
type Schema struct {
	// Canonical is the schema's canonical JSON encoding (sorted keys, no spaces).
	Canonical []byte

	compiled *jsonschema.Schema
}

// Size is an estimate of the bytes the compiled schema holds.
func (s *Schema) Size() int { return (1 + generalFactor) * len(s.Canonical) }

const schemaURL = "urn:genui:schema"

// CompileSchema compiles a JSON Schema given as decoded JSON, as catalogs are compiled:
// draft 2020-12 unless "$schema" names another (drafts 4 to 2020-12), checked against its
// draft's metaschema, with no remote references, at most 64 levels deep. schema is not
// kept.
func CompileSchema(schema map[string]any) (*Schema, error) {
	if schema == nil {
		return nil, errors.New("must be a JSON Schema object")
	}
	if depth(schema, 0) > maxCatalogDepth {
		return nil, fmt.Errorf("nests deeper than %d levels", maxCatalogDepth)
	}
	canonical, err := json.Marshal(schema)
	if err != nil {
		return nil, fmt.Errorf("not encodable as JSON: %w", err)
	}
	var doc any
	if err := json.Unmarshal(canonical, &doc); err != nil {
		return nil, err
	}
	comp := jsonschema.NewCompiler()
	comp.UseLoader(noLoader{})
	// A fresh URL per content keeps compilers from sharing state across schemas.
	url := fmt.Sprintf("%s:%x", schemaURL, sha256.Sum256(canonical))
	if err := comp.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("not a valid JSON Schema: %w", err)
	}
	sch, err := comp.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("not a valid JSON Schema: %s", strings.ReplaceAll(schemaErrorMessage(err), url, "schema"))
	}
	return &Schema{Canonical: canonical, compiled: sch}, nil
}

// Check validates v (decoded JSON) against the schema and returns what is wrong, one
// violation per problem, at JSON pointers under at.
func (s *Schema) Check(v any, at string) []Violation {
	var r Report
	validateA2UI(s.compiled, v, at, &r)
	for i := range r.Violations {
		if r.Violations[i].Message == falseSchema {
			r.Violations[i].Message = falseMessage(r.Violations[i].Pointer, at, "the schema does not allow it")
		}
	}
	return r.Violations
}
