package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/firebase/genkit/go/core"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/genuiserver/genui/genui"
)

// StatusError is an error of a request's body whose HTTP status is not that of its
// canonical status: 413 for a body over the limit, 415 for a body that is not JSON.
type StatusError struct {
	Code int
	Err  *genui.Error
}

func (e *StatusError) Error() string { return e.Err.Error() }
func (e *StatusError) Unwrap() error { return e.Err }

// Read reads the whole request body, whatever its framing (Content-Length or chunked),
// up to limit bytes.
func Read(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, error) {
	if ct := r.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || (mt != "application/json" && !strings.HasSuffix(mt, "+json") && mt != "text/plain") {
			return nil, &StatusError{Code: http.StatusUnsupportedMediaType, Err: &genui.Error{Status: genui.StatusInvalidArgument,
				Message: fmt.Sprintf("Content-Type: expected application/json, got %q", ct)}}
		}
	}
	var buf bytes.Buffer
	if n := r.ContentLength; n > 0 && n <= limit {
		buf.Grow(int(n) + 1)
	}
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, limit))
	body := buf.Bytes()
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &StatusError{Code: http.StatusRequestEntityTooLarge, Err: &genui.Error{Status: genui.StatusInvalidArgument,
				Message: fmt.Sprintf("request body exceeds the limit of %d bytes", limit)}}
		}
		return nil, genui.Errorf(genui.StatusInvalidArgument, "reading request body: %v", err)
	}
	return body, nil
}

// Decode decodes body, a JSON object, into v; s, when set, is the schema of v's type,
// which explains a type error with its exact location.
func Decode(body []byte, v any, s *Schema) *genui.Error {
	if e := checkUTF8(body); e != nil {
		return e
	}
	if err := json.Unmarshal(body, v); err != nil {
		return DecodeError(body, err, s)
	}
	return nil
}

// NotObject is the error of a body that is not a JSON object: where its JSON is broken,
// or that it is not an object.
func NotObject(body []byte) *genui.Error { return syntaxOrType(body) }

func syntaxOrType(body []byte) *genui.Error {
	if !json.Valid(body) {
		var v any
		return DecodeError(body, json.Unmarshal(body, &v), nil)
	}
	return genui.Errorf(genui.StatusInvalidArgument, "request body must be a JSON object")
}

// DecodeError is the error of decoding body into a value of the type whose schema is s
// (nil: unknown): where its JSON is broken, or which field has the wrong type.
func DecodeError(body []byte, err error, schema *Schema) *genui.Error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return genui.Errorf(genui.StatusInvalidArgument, "malformed JSON at byte %d: %v", se.Offset, err)
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return genui.Errorf(genui.StatusInvalidArgument, "malformed JSON: unexpected end of input")
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if schema != nil {
			if e := schema.explain(body); e != nil {
				return e
			}
		}
		return &genui.Error{Status: genui.StatusInvalidArgument,
			Message: fmt.Sprintf("%s: expected %s, got %s", te.Field, jsonKind(te.Type.String()), te.Value),
			Details: map[string]any{"field": te.Field}}
	}
	return genui.Errorf(genui.StatusInvalidArgument, "malformed request: %v", err)
}

func jsonKind(goType string) string {
	switch {
	case goType == "string":
		return "string"
	case goType == "bool":
		return "boolean"
	case strings.HasPrefix(goType, "[]"):
		return "array"
	case strings.HasPrefix(goType, "map[") || strings.Contains(goType, "."):
		return "object"
	case strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "float"):
		return "number"
	}
	return goType
}

// Schema is the JSON Schema Genkit infers for a request type, compiled (once, when first
// needed) to explain a decoding failure with the exact location
// (conversation[1].parts[0].text).
type Schema struct {
	sample any
	once   sync.Once
	sch    *jsonschema.Schema
}

func (s *Schema) explain(body []byte) *genui.Error {
	s.once.Do(func() {
		c := jsonschema.NewCompiler()
		if err := c.AddResource("urn:request", core.InferSchemaMap(s.sample)); err == nil {
			s.sch, _ = c.Compile("urn:request")
		}
	})
	if s.sch == nil {
		return nil
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(body))
	if err != nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(s.sch.Validate(v), &ve) {
		return nil
	}
	leaf := ve
	for len(leaf.Causes) > 0 {
		leaf = leaf.Causes[0]
	}
	field := FieldPath(leaf.InstanceLocation)
	msg := leaf.ErrorKind.LocalizedString(english)
	return &genui.Error{Status: genui.StatusInvalidArgument, Message: field + ": " + msg, Details: map[string]any{"field": field}}
}

// NewSchema returns the schema of sample's type.
func NewSchema(sample any) *Schema { return &Schema{sample: sample} }

// FieldPath renders a JSON pointer's tokens as conversation[1].parts[0].text ("data" for
// the document itself).
func FieldPath(tokens []string) string {
	var sb strings.Builder
	for _, t := range tokens {
		if _, err := strconv.Atoi(t); err == nil {
			sb.WriteString("[" + t + "]")
			continue
		}
		if sb.Len() > 0 {
			sb.WriteByte('.')
		}
		sb.WriteString(t)
	}
	if sb.Len() == 0 {
		return "data"
	}
	return sb.String()
}

var english = message.NewPrinter(language.English)

// checkUTF8 fails a body that is not valid UTF-8, naming the field whose string holds the
// invalid bytes. JSON decoding would replace them with U+FFFD without a word, and the text
// would reach the model altered.
func checkUTF8(body []byte) *genui.Error {
	if utf8.Valid(body) {
		return nil
	}
	field := invalidUTF8Field(body)
	return &genui.Error{Status: genui.StatusInvalidArgument, Message: field + ": not valid UTF-8", Details: map[string]any{"field": field}}
}

// invalidUTF8Field returns the path (conversation[0].parts[1].text) of the first string of
// a JSON document whose bytes are not valid UTF-8: a key's own path when the key is the
// culprit, "data" when the document itself is.
func invalidUTF8Field(body []byte) string {
	type frame struct {
		array bool
		index int
		key   string
		inKey bool // an object expecting a key
	}
	var stack []frame
	path := func() string {
		toks := make([]string, 0, len(stack))
		for _, f := range stack {
			if f.array {
				toks = append(toks, strconv.Itoa(f.index))
			} else {
				toks = append(toks, f.key)
			}
		}
		return FieldPath(toks)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	prev := int64(0)
	for {
		tok, err := dec.Token()
		if err != nil {
			return "data"
		}
		end := dec.InputOffset()
		raw := body[prev:end]
		prev = end
		top := len(stack) - 1
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				stack = append(stack, frame{array: t == '[', inKey: t == '{'})
				continue
			default:
				stack = stack[:top]
			}
		case string:
			if top >= 0 && !stack[top].array && stack[top].inKey {
				stack[top].key = t
				if !utf8.Valid(raw) {
					return path()
				}
				stack[top].inKey = false
				continue
			}
			if !utf8.Valid(raw) {
				return path()
			}
		}
		// A value ended: the container moves on.
		if top = len(stack) - 1; top >= 0 {
			if stack[top].array {
				stack[top].index++
			} else {
				stack[top].inKey = true
			}
		}
	}
}
