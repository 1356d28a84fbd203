package a2aapi

import (
	"net/http"
	"strconv"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/transport"
	"github.com/genuiserver/genui/internal/jsonenc"
)

// The refusals of the server's middleware stack (no credentials, a panic) on the agent's
// HTTP+JSON binding; its JSON-RPC routes answer them as transport.JSONRPC does.

// restErrorWriter writes an error as A2A's HTTP+JSON binding does, a google.rpc.Status.
var restErrorWriter = transport.ErrorWriterFunc(func(w http.ResponseWriter, _ *http.Request, e *genui.Error) {
	code := transport.HTTPStatus(e)
	b := append([]byte(`{"error":{"code":`), strconv.Itoa(code)...)
	b = append(b, `,"status":"`...)
	b = append(b, e.Status...)
	b = append(b, `","message":`...)
	b = jsonenc.AppendString(b, e.Message)
	b = append(b, `,"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"`...)
	b = append(b, e.Status...)
	b = append(b, `","domain":"a2a-protocol.org"`...)
	if f := field(e); f != "" {
		b = append(b, `,"metadata":{"field":`...)
		b = jsonenc.AppendString(b, f)
		b = append(b, '}')
	}
	b = append(b, "}]}}"...)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
})

// field is the field an error names, if any.
func field(e *genui.Error) string {
	d, _ := e.Details.(map[string]any)
	f, _ := d["field"].(string)
	return f
}
