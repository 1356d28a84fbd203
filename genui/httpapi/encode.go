package httpapi

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/genuiserver/genui/genui/transport"
	"github.com/genuiserver/genui/internal/jsonenc"
	"github.com/genuiserver/genui/internal/ndjson"
	"github.com/genuiserver/genui/schemas"
)

// format is a response framing of /generateUi.
type format int

const (
	formatNDJSON format = iota
	formatSSE
	formatJSON
)

func (f format) contentType() string {
	switch f {
	case formatSSE:
		return "text/event-stream"
	case formatJSON:
		return "application/json"
	}
	return "application/x-ndjson"
}

func (f format) String() string {
	return [...]string{"ndjson", "sse", "json"}[f]
}

// negotiate picks the framing of a /generateUi response (see the package doc).
func negotiate(r *http.Request) format {
	q := r.URL.Query()
	switch strings.ToLower(q.Get("format")) {
	case "sse":
		return formatSSE
	case "ndjson":
		return formatNDJSON
	case "json":
		return formatJSON
	}
	if v, err := strconv.ParseBool(q.Get("stream")); err == nil && v {
		return formatSSE
	}
	var types []string
	for _, h := range r.Header.Values("Accept") {
		for _, t := range strings.Split(h, ",") {
			if t, _, _ = strings.Cut(t, ";"); strings.TrimSpace(t) != "" {
				types = append(types, strings.ToLower(strings.TrimSpace(t)))
			}
		}
	}
	for _, t := range types {
		switch t {
		case "text/event-stream":
			return formatSSE
		case "application/x-ndjson", "application/ndjson", "application/jsonl":
			return formatNDJSON
		}
	}
	if len(types) > 0 && allJSON(types) {
		return formatJSON
	}
	return formatNDJSON
}

func allJSON(types []string) bool {
	for _, t := range types {
		if t != "application/json" {
			return false
		}
	}
	return true
}

// appendEvent appends one streamed event in the framing f.
func appendEvent(b []byte, f format, ev *schemas.Event) []byte {
	if f != formatSSE {
		b = ndjson.AppendEvent(b, ev)
		return append(b, '\n')
	}
	switch ev.Type {
	case schemas.EventA2UI:
		return appendA2UI(b, ev)
	case schemas.EventToolCall:
		return appendToolCall(b, ev)
	}
	b = append(b, `data: {"message":{"role":"model","index":`...)
	b = strconv.AppendInt(b, int64(ev.Index), 10)
	b = append(b, `,"content":[`...)
	b = appendPart(b, ev)
	return append(b, "]}}\n\n"...)
}

// appendToolCall appends a call of a client tool in SSE, as a Genkit chunk holding the
// call as Genkit's interrupt: a toolRequest part whose ref is the call id, with
// metadata.interrupt (NDJSON: {"type":"toolCall","callId","name","input"}, and
// "signature" when the model signed the call).
func appendToolCall(b []byte, ev *schemas.Event) []byte {
	tc := ev.ToolCall
	b = append(b, `data: {"message":{"role":"model","index":`...)
	b = strconv.AppendInt(b, int64(ev.Index), 10)
	b = append(b, `,"content":[{"toolRequest":{"name":`...)
	b = jsonenc.AppendString(b, tc.Name)
	b = append(b, `,"input":`...)
	b = append(b, tc.Input...)
	b = append(b, `,"ref":`...)
	b = jsonenc.AppendString(b, tc.CallID)
	b = append(b, `},"metadata":{"interrupt":true`...)
	if tc.Signature != "" {
		b = append(b, `,"signature":`...)
		b = jsonenc.AppendString(b, tc.Signature)
	}
	return append(b, "}}]}}\n\n"...)
}

// appendA2UI appends an A2UI message in SSE, as a Genkit chunk holding Genkit's A2UI data
// part, which Genkit clients read A2UI from (NDJSON: the bare message on its own line, so
// that a client can feed the lines to any A2UI message processor).
func appendA2UI(b []byte, ev *schemas.Event) []byte {
	b = append(b, `data: {"message":{"role":"model","index":`...)
	b = strconv.AppendInt(b, int64(ev.Index), 10)
	b = append(b, `,"content":[{"data":{"envelopes":[`...)
	b = append(b, ev.A2UI...)
	b = append(b, `]},"metadata":{"mimeType":"`+schemas.A2UIMimeType+`"}}]}}`+"\n\n"...)
	return b
}

// appendPart appends the event as Genkit message content.
func appendPart(b []byte, ev *schemas.Event) []byte {
	if ev.Type != schemas.EventToolRequest {
		b = append(b, `{"text":`...)
		b = jsonenc.AppendString(b, ev.Text)
		return append(b, '}')
	}
	tr := ev.ToolRequest
	b = append(b, `{"toolRequest":{"name":`...)
	b = jsonenc.AppendString(b, tr.Name)
	b = append(b, `,"input":`...)
	b = append(b, tr.Input...)
	b = append(b, `,"ref":`...)
	b = jsonenc.AppendString(b, tr.Ref)
	return append(b, "}}"...)
}

// appendResult appends the final result of a stream, encoded (without its tool requests,
// which the stream carried).
func appendResult(b []byte, f format, result []byte) []byte {
	switch f {
	case formatSSE:
		b = append(b, `data: {"result":`...)
		b = append(b, result...)
		return append(b, "}\n\n"...)
	case formatJSON:
		b = append(b, `{"result":`...)
		b = append(b, result...)
		return append(b, "}\n"...)
	}
	b = append(b, `{"type":"result","result":`...)
	b = append(b, result...)
	return append(b, "}\n"...)
}

// appendResultJSON appends the body of a response in the JSON format: the whole result,
// every tool request included.
func appendResultJSON(b []byte, r *schemas.Result) ([]byte, error) {
	enc, err := jsonenc.Marshal(r)
	if err != nil {
		return b, err
	}
	return appendResult(b, formatJSON, enc), nil
}

// appendError appends the error that ends a stream, or the body of an error response.
func appendError(b []byte, f format, e *schemas.Error) []byte {
	switch f {
	case formatSSE:
		b = append(b, `data: {"error":`...)
		b = transport.AppendWireError(b, e)
		return append(b, "}\n\n"...)
	case formatNDJSON:
		b = append(b, `{"type":"error","error":`...)
		b = transport.AppendWireError(b, e)
		return append(b, "}\n"...)
	}
	return transport.AppendJSONError(b, e)
}
