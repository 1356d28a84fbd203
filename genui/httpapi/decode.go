package httpapi

import (
	"bytes"
	"encoding/json"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/jsonbody"
)

// decode unwraps the optional {"data":…} envelope and decodes the input into v, which must
// be a pointer to a request type whose Genkit-inferred schema is schema.
func decode(body []byte, v any, schema *jsonbody.Schema) *genui.Error {
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return genui.Errorf(genui.StatusInvalidArgument, "request body is empty: send a JSON object, optionally wrapped as {\"data\": …}")
	}
	inner, werr := unwrap(body)
	if werr != nil {
		return werr
	}
	return jsonbody.Decode(inner, v, schema)
}

// rawRef is a JSON value as a slice of the document it was decoded from, not a copy.
type rawRef []byte

func (r *rawRef) UnmarshalJSON(b []byte) error {
	*r = b
	return nil
}

// unwrap returns the value of "data" when body is an envelope, else body itself.
func unwrap(body []byte) ([]byte, *genui.Error) {
	if body[0] != '{' {
		return nil, jsonbody.NotObject(body)
	}
	var env map[string]rawRef
	if err := json.Unmarshal(body, &env); err != nil {
		return nil, jsonbody.DecodeError(body, err, nil)
	}
	data, ok := env["data"]
	if !ok {
		return body, nil
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return nil, &genui.Error{Status: genui.StatusInvalidArgument, Message: "data: must be a JSON object", Details: map[string]any{"field": "data"}}
	}
	return data, nil
}
