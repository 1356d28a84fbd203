package tools

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"sync"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/schemas"
)

// Client tools are tools only the client can run (the user's location, a file, a
// confirmation, the app's state). The model gets them beside the UI tools; the service
// checks the input of each call against the tool's input schema and hands the call to the
// client, which answers it with the next request.

// Bounds of a declaration of client tools.
const (
	MaxClientTools       = 64
	MaxDescriptionBytes  = 8 << 10
	MaxInputSchemaBytes  = 64 << 10
	maxClientToolsBytes  = 256 << 10
	clientToolsFieldName = "clientTools"
)

// FieldError reports a problem with one field of a declaration.
type FieldError struct {
	// Field is the field's path in the request, e.g. clientTools[1].inputSchema.
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

var nameRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

// ValidName reports whether name is a function name that every model provider accepts:
// a letter or an underscore, then letters, digits, underscores or dashes, at most 64 in
// all.
func ValidName(name string) bool { return nameRE.MatchString(name) }

// ClientSet is the client tools of a request, compiled: built once per distinct
// declaration and shared, immutable.
type ClientSet struct {
	// Tools are the declarations as models receive them: each input schema without
	// "$schema" and "$id", encoded once.
	Tools []Tool

	index   map[string]int
	schemas []*catalog.Schema
	size    int
	memo    sync.Map
}

// ClientKey returns the key under which the compiled form of decls is cached: the same
// for the same names, descriptions and input schemas as sent.
func ClientKey(decls []schemas.ClientTool) [32]byte {
	h := sha256.New()
	h.Write([]byte("genui client tools\x00"))
	for _, d := range decls {
		for _, s := range [][]byte{[]byte(d.Name), []byte(d.Description), d.InputSchema} {
			var n [8]byte
			h.Write(strconv.AppendInt(n[:0], int64(len(s)), 10))
			h.Write([]byte{0})
			h.Write(s)
		}
	}
	var k [32]byte
	h.Sum(k[:0])
	return k
}

// CompileClient checks and compiles a declaration of client tools. Each name must be
// valid (see [ValidName]), unique and not a UI tool's; each input schema a JSON Schema of
// an object, compiled as catalogs are (no remote references, at most
// MaxInputSchemaBytes). Errors are *FieldError values naming the field
// (clientTools[1].name).
func CompileClient(decls []schemas.ClientTool) (*ClientSet, error) {
	if len(decls) > MaxClientTools {
		return nil, fieldErr(clientToolsFieldName, "at most %d client tools, got %d", MaxClientTools, len(decls))
	}
	s := &ClientSet{index: make(map[string]int, len(decls))}
	total := 0
	for i, d := range decls {
		f := clientToolsFieldName + "[" + strconv.Itoa(i) + "]"
		switch {
		case d.Name == "":
			return nil, fieldErr(f+".name", "required")
		case d.Name == AddOrUpdateSurface || d.Name == DeleteSurface:
			return nil, fieldErr(f+".name", "%q is the name of a UI tool of the service; choose another name", d.Name)
		case !ValidName(d.Name):
			return nil, fieldErr(f+".name", "%q is not a valid function name: a letter or underscore, then letters, digits, underscores or dashes, at most 64 in all", d.Name)
		case len(d.Description) > MaxDescriptionBytes:
			return nil, fieldErr(f+".description", "is %d bytes; the limit is %d", len(d.Description), MaxDescriptionBytes)
		}
		if j, dup := s.index[d.Name]; dup {
			return nil, fieldErr(f+".name", "%q is declared twice (also clientTools[%d])", d.Name, j)
		}
		schema, decl, err := compileInput(d.InputSchema, f+".inputSchema")
		if err != nil {
			return nil, err
		}
		total += len(schema.Canonical) + len(d.Description)
		if total > maxClientToolsBytes {
			return nil, fieldErr(clientToolsFieldName, "the declarations exceed %d bytes", maxClientToolsBytes)
		}
		s.index[d.Name] = i
		s.schemas = append(s.schemas, schema)
		s.Tools = append(s.Tools, Tool{Name: d.Name, Description: d.Description, Schema: decl})
		s.size += 64 + len(d.Name) + len(d.Description) + len(decl) + schema.Size()
	}
	return s, nil
}

// emptyObject is the input schema of a tool declared without one.
var emptyObject = json.RawMessage(`{"type":"object","properties":{}}`)

// compileInput compiles an input schema and returns it with the schema to declare.
func compileInput(raw schemas.Object, field string) (*catalog.Schema, json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		raw = schemas.Object(emptyObject)
	}
	if raw[0] != '{' {
		return nil, nil, fieldErr(field, "must be a JSON Schema object")
	}
	if len(raw) > 4*MaxInputSchemaBytes {
		return nil, nil, fieldErr(field, "is %d bytes; the limit is %d", len(raw), MaxInputSchemaBytes)
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, nil, fieldErr(field, "not valid JSON: %v", err)
	}
	if t, ok := doc["type"]; ok && t != "object" {
		return nil, nil, fieldErr(field+".type", `must be "object": a tool takes an object of arguments`)
	}
	schema, err := catalog.CompileSchema(doc)
	if err != nil {
		return nil, nil, fieldErr(field, "%v", err)
	}
	if len(schema.Canonical) > MaxInputSchemaBytes {
		return nil, nil, fieldErr(field, "is %d bytes as compact JSON; the limit is %d", len(schema.Canonical), MaxInputSchemaBytes)
	}
	// Model APIs take the schema of a tool's input without the keywords that place a
	// schema document.
	delete(doc, "$schema")
	delete(doc, "$id")
	if _, ok := doc["type"]; !ok {
		doc["type"] = "object"
	}
	decl, err := json.Marshal(doc)
	if err != nil {
		return nil, nil, fieldErr(field, "%v", err)
	}
	return schema, decl, nil
}

// Size estimates the bytes the compiled set holds.
func (s *ClientSet) Size() int { return s.size }

// Has reports whether the set declares a tool named name; a nil set declares none.
func (s *ClientSet) Has(name string) bool {
	if s == nil {
		return false
	}
	_, ok := s.index[name]
	return ok
}

// Check validates the input of a call of the client tool name against its input schema.
func (s *ClientSet) Check(name string, input any) []catalog.Violation {
	i, ok := s.index[name]
	if !ok {
		return []catalog.Violation{{Message: fmt.Sprintf("there is no client tool %q", name)}}
	}
	if _, ok := input.(map[string]any); !ok {
		return []catalog.Violation{{Message: "input must be an object, got " + catalog.JSONType(input)}}
	}
	return s.schemas[i].Check(input, "")
}

// InputSchema returns the input schema of the tool named name, as models receive it; nil
// when the set has no such tool.
func (s *ClientSet) InputSchema(name string) json.RawMessage {
	i, ok := s.index[name]
	if !ok {
		return nil
	}
	return s.Tools[i].Schema
}

// Memo returns the value derived from the set under key, computing it with fn the first
// time: encoded declarations of a provider, for the set's life.
func (s *ClientSet) Memo(key any, fn func() any) any {
	if v, ok := s.memo.Load(key); ok {
		return v
	}
	v, _ := s.memo.LoadOrStore(key, fn())
	return v
}

// What a call of a client tool is answered when the turn goes on without the client.
var (
	// notRun answers a valid call when other calls of the same response were rejected.
	notRun = map[string]any{
		"status": "not-run",
		"error":  "This call did not reach the client because other calls of your response were rejected. Call it again in your next response, with the corrected calls.",
	}
)

// NotRun answers a valid call of a client tool that was not passed on to the client,
// because other calls of the same model response were rejected.
func NotRun() map[string]any { return notRun }

// RejectedInput answers a call of a client tool whose input broke the tool's input schema.
func RejectedInput(violations []catalog.Violation) map[string]any {
	return map[string]any{
		"status":     "rejected",
		"error":      "This call did not reach the client because its input does not conform to the tool's input schema. Fix every violation below and call the tool again.",
		"violations": violations,
	}
}
