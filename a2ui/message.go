package a2ui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/genuiserver/genui/internal/jsonenc"
)

// Operations of server messages.
const (
	CreateSurface    = "createSurface"    // v0.9
	UpdateComponents = "updateComponents" // v0.9
	UpdateDataModel  = "updateDataModel"  // v0.9
	DeleteSurface    = "deleteSurface"    // v0.9 and v0.8
	SurfaceUpdate    = "surfaceUpdate"    // v0.8
	DataModelUpdate  = "dataModelUpdate"  // v0.8
	BeginRendering   = "beginRendering"   // v0.8
)

var ops = map[string][]string{
	V09: {CreateSurface, UpdateComponents, UpdateDataModel, DeleteSurface},
	V08: {SurfaceUpdate, DataModelUpdate, BeginRendering, DeleteSurface},
}

// counterpart names the operation of the other version that does the same job.
var counterpart = map[string]string{
	SurfaceUpdate: UpdateComponents, DataModelUpdate: UpdateDataModel, BeginRendering: CreateSurface,
	UpdateComponents: SurfaceUpdate, UpdateDataModel: DataModelUpdate, CreateSurface: BeginRendering,
}

func isOp(version, k string) bool {
	for _, o := range ops[version] {
		if o == k {
			return true
		}
	}
	return false
}

// Message is a server message, decoded.
type Message struct {
	Op        string
	SurfaceID string
	// Body is the operation's object.
	Body map[string]any

	versioned bool // the message has a "version"
}

// problem is what is wrong with a message, at a pointer into it.
type problem struct {
	ptr, msg string
	json     bool // the message is not valid JSON
}

// DecodeMessage decodes a server message of a version: a JSON object with one operation
// key (and, in v0.9, "version"), whose object names its surface.
func DecodeMessage(version string, raw []byte) (*Message, error) {
	m, p := decodeMessage(version, raw)
	if p != nil {
		if p.ptr == "" {
			return nil, fmt.Errorf("%s", p.msg)
		}
		return nil, fmt.Errorf("%s: %s", strings.ReplaceAll(strings.TrimPrefix(p.ptr, "/"), "/", "."), p.msg)
	}
	return m, nil
}

func decodeMessage(version string, raw []byte) (*Message, *problem) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil || top == nil {
		if !json.Valid(raw) {
			if err == nil {
				err = fmt.Errorf("unexpected end of JSON input")
			}
			return nil, &problem{"", fmt.Sprintf("not valid JSON (%v): write each message as one JSON object", err), true}
		}
		return nil, &problem{msg: fmt.Sprintf("not an A2UI message: a message is a JSON object with one of %s", strings.Join(ops[version], ", "))}
	}
	var op string
	keys := make([]string, 0, len(top))
	for k := range top {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		switch {
		case k == "version":
			var v string
			_ = json.Unmarshal(top[k], &v)
			switch {
			case version == V09 && v != V09:
				return nil, &problem{ptr: "/version", msg: fmt.Sprintf("must be %q: this conversation speaks A2UI v0.9 (or leave \"version\" out)", V09)}
			case version == V08 && v != V08:
				return nil, &problem{ptr: "/version", msg: "this conversation speaks A2UI v0.8, whose messages have no \"version\": leave it out"}
			}
		case isOp(version, k):
			if op != "" {
				return nil, &problem{msg: fmt.Sprintf("has both %s and %s: a message carries exactly one operation", op, k)}
			}
			op = k
		case counterpart[k] != "" && isOp(otherVersion(version), k):
			return nil, &problem{ptr: "/" + k, msg: fmt.Sprintf("%s is an A2UI %s message; in %s use %s", k, otherVersion(version), version, counterpart[k])}
		default:
			return nil, &problem{ptr: "/" + k, msg: fmt.Sprintf("unknown key; a %s message has one of %s", version, strings.Join(ops[version], ", "))}
		}
	}
	if op == "" {
		return nil, &problem{msg: fmt.Sprintf("no operation: a %s message has one of %s", version, strings.Join(ops[version], ", "))}
	}
	var body map[string]any
	if err := json.Unmarshal(top[op], &body); err != nil || body == nil {
		return nil, &problem{ptr: "/" + op, msg: "must be an object"}
	}
	sid, ok := body["surfaceId"].(string)
	switch {
	case body["surfaceId"] == nil:
		return nil, &problem{ptr: "/" + op + "/surfaceId", msg: "required: the id of the surface"}
	case !ok:
		return nil, &problem{ptr: "/" + op + "/surfaceId", msg: "must be a string"}
	case sid == "":
		return nil, &problem{ptr: "/" + op + "/surfaceId", msg: "must not be empty"}
	}
	_, versioned := top["version"]
	return &Message{Op: op, SurfaceID: sid, Body: body, versioned: versioned}, nil
}

func otherVersion(v string) string {
	if v == V08 {
		return V09
	}
	return V08
}

// encodeMessage encodes a message of a version: {"version":"v0.9","<op>":<body>}, or
// {"<op>":<body>} in v0.8.
func encodeMessage(version, op string, body []byte) []byte {
	b := make([]byte, 0, len(body)+len(op)+24)
	b = append(b, '{')
	if version == V09 {
		b = append(b, `"version":"v0.9",`...)
	}
	b = jsonenc.AppendString(b, op)
	b = append(b, ':')
	b = append(b, body...)
	return append(b, '}')
}

// encodeBody encodes a message body.
func encodeBody(body map[string]any) []byte {
	b, err := jsonenc.Marshal(body)
	if err != nil {
		panic("a2ui: a decoded body does not encode: " + err.Error())
	}
	return b
}

// componentsBody encodes {"surfaceId":…,"components":[…]} from encoded components.
func componentsBody(surfaceID string, comps [][]byte) []byte {
	n := 40 + len(surfaceID)
	for _, c := range comps {
		n += len(c) + 1
	}
	b := make([]byte, 0, n)
	b = append(b, `{"surfaceId":`...)
	b = jsonenc.AppendString(b, surfaceID)
	b = append(b, `,"components":[`...)
	for i, c := range comps {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, c...)
	}
	return append(b, "]}"...)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}
