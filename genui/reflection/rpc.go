package reflection

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strconv"

	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/core/status"
)

// JSON-RPC 2.0 error codes: the standard ones and the RFC's application codes.
const (
	codeParseError     = -32700 // the frame is not JSON
	codeInvalidRequest = -32600 // JSON, but not a request object
	codeMethodNotFound = -32601
	codeInvalidParams  = -32602
	codeInternal       = -32603 // a fault of this runtime (a panic, an unencodable result)
	codeActionError    = -32000 // the action failed or was cancelled
	codeActionNotFound = -32001
	codeCancelFailed   = -32002 // cancelAction: no running action has that trace id
)

// message is any JSON-RPC message: a request (method and id), a notification (method, no id)
// or a response (id and result or error). Raw fields keep "absent" apart from "null".
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

// outgoing is a request or notification sent to the manager; params is any value.
type outgoing struct {
	JSONRPC string `json:"jsonrpc"`
	ID      string `json:"id,omitempty"`
	Method  string `json:"method"`
	Params  any    `json:"params,omitempty"`
}

// response is a response sent to the manager. ID is "null" when the request's id is unknown.
type response struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int         `json:"code"`
	Message string      `json:"message"`
	Data    *statusData `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return "jsonrpc error " + strconv.Itoa(e.Code) + ": " + e.Message }

// statusData is a Genkit status, the error data every Genkit runtime reports and the Dev UI
// shows (message, details.stack, and details.traceId to link the trace). Code is Genkit's
// numeric status (status.Name.Code), as the JS runtime and Genkit Go's own V2 client send.
type statusData struct {
	Code    int           `json:"code"`
	Message string        `json:"message"`
	Details statusDetails `json:"details"`
}

type statusDetails struct {
	Stack   string `json:"stack,omitempty"`
	TraceID string `json:"traceId,omitempty"`
}

// newError builds an error response body whose data is a Genkit status with the given name.
func newError(code int, st status.Name, msg string) *rpcError {
	return &rpcError{Code: code, Message: msg, Data: &statusData{Code: st.Code(), Message: msg}}
}

// actionError maps what an action returned to -32000 with Genkit's status, stack and trace
// id, as Genkit's V2 client does (sendRunActionError in genkit/reflection_v2.go).
func actionError(err error, traceID string, cancelled bool) *rpcError {
	st := &statusData{Code: status.Internal.Code(), Message: err.Error()}
	var ue *core.UserFacingError
	switch e := status.Convert(err); {
	case cancelled || errors.Is(err, context.Canceled):
		st.Code, st.Message = status.Cancelled.Code(), "Action was cancelled"
	case errors.As(err, &ue):
		st.Code, st.Message = ue.Status.Code(), ue.Message
	case e != nil:
		st.Code, st.Message = e.Status.Code(), e.Message
		if s, ok := e.Details["stack"].(string); ok {
			st.Details.Stack = s
		} else {
			st.Details.Stack = e.Stack()
		}
		st.Details.TraceID, _ = e.Details["traceId"].(string)
	}
	if traceID != "" {
		st.Details.TraceID = traceID
	}
	return &rpcError{Code: codeActionError, Message: st.Message, Data: st}
}

var nullID = json.RawMessage("null")

// validID reports whether raw is a JSON-RPC id: a string, a number or null.
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	switch raw[0] {
	case '"':
		var s string
		return json.Unmarshal(raw, &s) == nil
	case 'n':
		return bytes.Equal(raw, nullID)
	case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		var n json.Number
		return json.Unmarshal(raw, &n) == nil
	}
	return false
}

// idKey is an id as the string the manager uses in requestId: a string id's value, a number's
// digits.
func idKey(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// parse decodes one frame. On failure it returns the error to answer with and the id to answer
// to (null when the id is unknown or invalid).
func parse(data []byte) (*message, json.RawMessage, *rpcError) {
	if !json.Valid(data) {
		return nil, nullID, newError(codeParseError, status.InvalidArgument, "parse error: the message is not valid JSON")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		msg := "invalid request: a message must be a JSON object"
		if t := bytes.TrimLeft(data, " \t\r\n"); len(t) > 0 && t[0] == '[' {
			msg = "invalid request: batches are not supported"
		}
		return nil, nullID, newError(codeInvalidRequest, status.InvalidArgument, msg)
	}
	id, hasID := fields["id"]
	if hasID && !validID(id) {
		return nil, nullID, newError(codeInvalidRequest, status.InvalidArgument, "invalid request: id must be a string, a number or null")
	}
	replyTo := nullID
	if hasID {
		replyTo = id
	}
	invalid := func(msg string) (*message, json.RawMessage, *rpcError) {
		return nil, replyTo, newError(codeInvalidRequest, status.InvalidArgument, "invalid request: "+msg)
	}
	var m message
	if v, ok := fields["jsonrpc"]; !ok || json.Unmarshal(v, &m.JSONRPC) != nil || m.JSONRPC != "2.0" {
		return invalid(`jsonrpc must be "2.0"`)
	}
	m.ID = id
	if v, ok := fields["method"]; ok {
		if json.Unmarshal(v, &m.Method) != nil || m.Method == "" {
			return invalid("method must be a non-empty string")
		}
	}
	if v, ok := fields["params"]; ok && !bytes.Equal(v, nullID) {
		if v[0] != '{' && v[0] != '[' {
			return invalid("params must be an object or an array")
		}
		m.Params = v
	}
	if m.Method == "" {
		// A response to one of our requests.
		res, hasResult := fields["result"]
		e, hasError := fields["error"]
		if !hasID || hasResult == hasError {
			return invalid("a message needs a method, or an id with either a result or an error")
		}
		m.Result = res
		if hasError {
			m.Error = new(rpcError)
			if json.Unmarshal(e, m.Error) != nil {
				m.Error = &rpcError{Code: codeInternal, Message: string(e)}
			}
		}
	}
	return &m, nil, nil
}

// decodeParams decodes named params into v; absent params leave v as it is.
func decodeParams(raw json.RawMessage, v any) *rpcError {
	if len(raw) == 0 {
		return nil
	}
	if raw[0] != '{' {
		return newError(codeInvalidParams, status.InvalidArgument, "invalid params: expected an object")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return newError(codeInvalidParams, status.InvalidArgument, "invalid params: "+err.Error())
	}
	return nil
}
