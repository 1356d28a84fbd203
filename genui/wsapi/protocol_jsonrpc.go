package wsapi

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/jsonenc"
)

// JSON-RPC 2.0's error codes, and the service's.
const (
	codeParse          = -32700
	codeInvalidRequest = -32600
	codeNoMethod       = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603

	codeNotFound    = -32001 // unknown, expired, closed or another connection's session
	codeState       = -32002 // the session is not in a state the method needs
	codeExpired     = -32003 // the session waited longer than the reconnect window
	codeBusy        = -32004 // a turn of the session is running
	codeLimit       = -32005 // a limit of the connection
	codeUnavailable = -32006 // the store or the model cannot be reached; retry
)

// message is any JSON-RPC message a client sends: a request, a notification (no id) or
// a response to one of the server's requests (result or error, no method).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func errorf(code int, msg string) *rpcError { return &rpcError{Code: code, Message: msg} }

// invalidParams names the field: "params.<field>: <problem>".
func invalidParams(field, problem string) *rpcError {
	return &rpcError{Code: codeInvalidParams, Message: "params." + field + ": " + problem,
		Data: map[string]any{"status": string(genui.StatusInvalidArgument), "field": "params." + field}}
}

// fromService maps an error of the service to JSON-RPC; fields named by the service are
// rewritten by rename (the service's name → the method's), then put under params.
func fromService(err error, rename func(string) string) *rpcError {
	e := genui.AsError(err)
	code := codeInternal
	switch e.Status {
	case genui.StatusInvalidArgument:
		code = codeInvalidParams
	case genui.StatusNotFound:
		code = codeNotFound
	case genui.StatusFailedPrecondition:
		code = codeState
	case genui.StatusAborted:
		code = codeBusy
	case genui.StatusResourceExhausted:
		code = codeLimit
	case genui.StatusUnavailable, genui.StatusDeadlineExceeded:
		code = codeUnavailable
	}
	data := map[string]any{"status": string(e.Status)}
	msg := e.Message
	if d, ok := e.Details.(map[string]any); ok {
		for k, v := range d {
			data[k] = v
		}
		if f, ok := d["field"].(string); ok && f != "" && f != "session" {
			nf := "params." + rename(f)
			data["field"] = nf
			msg = strings.Replace(msg, f, nf, 1)
		}
	}
	if e.RetryAfter > 0 {
		data["retryAfter"] = e.RetryAfterSeconds()
	}
	return &rpcError{Code: code, Message: msg, Data: data}
}

// appendResponse appends a response: result (JSON) or err.
func appendResponse(b []byte, id json.RawMessage, result []byte, err *rpcError) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b = append(b, id...)
	if err != nil {
		enc, e := jsonenc.Marshal(err)
		if e != nil {
			enc, _ = jsonenc.Marshal(&rpcError{Code: err.Code, Message: err.Message})
		}
		b = append(b, `,"error":`...)
		b = append(b, enc...)
		return append(b, '}')
	}
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }
