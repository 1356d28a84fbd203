package transport

import (
	"net/http"
	"strconv"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/jsonenc"
)

// The error table of JSON-RPC over HTTP (A2A's JSON-RPC binding, MCP's Streamable HTTP)
// for the refusals of the middleware stack, before a request is read.

// rpcCodes are the JSON-RPC codes of the statuses the middleware stack refuses with:
// -31401 and -31403 as A2A and MCP servers answer missing or refused credentials.
var rpcCodes = map[genui.Status]int{
	genui.StatusUnauthenticated:   -31401,
	genui.StatusPermissionDenied:  -31403,
	genui.StatusInvalidArgument:   -32602,
	genui.StatusResourceExhausted: -32603,
	genui.StatusUnimplemented:     -32601,
}

// JSONRPC writes an error as a JSON-RPC error object, id null (the request was not
// read): {"code","message","data":{"status","field"}}.
var JSONRPC ErrorWriter = ErrorWriterFunc(func(w http.ResponseWriter, _ *http.Request, e *genui.Error) {
	code, ok := rpcCodes[e.Status]
	if !ok {
		code = -32603
	}
	b := append([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":`), strconv.Itoa(code)...)
	b = append(b, `,"message":`...)
	b = jsonenc.AppendString(b, e.Message)
	b = append(b, `,"data":{"status":"`...)
	b = append(b, e.Status...)
	b = append(b, '"')
	if f := errorField(e); f != "" {
		b = append(b, `,"field":`...)
		b = jsonenc.AppendString(b, f)
	}
	b = append(b, "}}}"...)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(HTTPStatus(e))
	_, _ = w.Write(b)
})

// errorField is the field an error names, if any.
func errorField(e *genui.Error) string {
	d, _ := e.Details.(map[string]any)
	f, _ := d["field"].(string)
	return f
}
