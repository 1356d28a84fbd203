package wsapi

import (
	"strconv"
	"strings"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/jsonenc"
)

// The error table of both dialects: what a *genui.Error of the service is on /ws (a
// JSON-RPC error object) and on /session/{id} (an error frame, or the error of a failed
// effect). Every wait a client is told of is the error's RetryAfterSeconds.

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

// rpcCodes are the JSON-RPC codes of the canonical statuses; a status not listed is
// codeInternal.
var rpcCodes = map[genui.Status]int{
	genui.StatusInvalidArgument:    codeInvalidParams,
	genui.StatusNotFound:           codeNotFound,
	genui.StatusFailedPrecondition: codeState,
	genui.StatusAborted:            codeBusy,
	genui.StatusResourceExhausted:  codeLimit,
	genui.StatusUnavailable:        codeUnavailable,
	genui.StatusDeadlineExceeded:   codeUnavailable,
	genui.StatusCancelled:          codeInternal,
	genui.StatusInternal:           codeInternal,
	genui.StatusUnauthenticated:    codeInternal,
	genui.StatusPermissionDenied:   codeInternal,
	genui.StatusUnimplemented:      codeInternal,
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

// fromService maps an error of the service to JSON-RPC: data {status, the error's
// details, retryAfter when it asks for a wait}. Fields named by the service are
// rewritten by rename (the service's name → the method's), then put under params.
func fromService(err error, rename func(string) string) *rpcError {
	e := genui.AsError(err)
	code, ok := rpcCodes[e.Status]
	if !ok {
		code = codeInternal
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
	if s := e.RetryAfterSeconds(); s > 0 {
		data["retryAfter"] = s
	}
	return &rpcError{Code: code, Message: msg, Data: data}
}

// frameKind is the error frame of the yield dialect.
type frameKind int

const (
	// frameRetry: {"type":"error","message","recoverable":true,"sessionId"}: the session
	// is intact, and the same message may succeed later.
	frameRetry frameKind = iota
	// frameFatal: {"type":"error","message","recoverable":false}.
	frameFatal
	// frameWait: a frameRetry with "retryAfter": a limit, to retry after that many
	// seconds.
	frameWait
)

// yieldFrames are the error frames of the canonical statuses; a status not listed is
// frameRetry.
var yieldFrames = map[genui.Status]frameKind{
	genui.StatusInvalidArgument:    frameFatal,
	genui.StatusNotFound:           frameFatal,
	genui.StatusPermissionDenied:   frameFatal,
	genui.StatusUnauthenticated:    frameFatal,
	genui.StatusUnimplemented:      frameFatal,
	genui.StatusResourceExhausted:  frameWait,
	genui.StatusFailedPrecondition: frameRetry,
	genui.StatusAborted:            frameRetry,
	genui.StatusUnavailable:        frameRetry,
	genui.StatusDeadlineExceeded:   frameRetry,
	genui.StatusCancelled:          frameRetry,
	genui.StatusInternal:           frameRetry,
}

// appendServiceFrame appends the error frame of e, whose message is msg, for session id.
func appendServiceFrame(b []byte, e *genui.Error, msg, id string) []byte {
	return appendFrame(b, yieldFrames[e.Status], msg, id, e.RetryAfterSeconds())
}

// appendFrame appends an error frame of kind with msg; a recoverable one names session
// id, and a frameWait says to retry after retryAfter seconds.
func appendFrame(b []byte, kind frameKind, msg, id string, retryAfter int) []byte {
	b = append(b, `{"type":"error","message":`...)
	b = jsonenc.AppendString(b, msg)
	if kind == frameFatal {
		return append(b, `,"recoverable":false}`...)
	}
	b = append(b, `,"recoverable":true,"sessionId":"`...)
	b = append(b, id...)
	if kind == frameWait {
		b = append(b, `","retryAfter":`...)
		b = strconv.AppendInt(b, int64(retryAfter), 10)
		return append(b, '}')
	}
	return append(b, `"}`...)
}

// appendEffectError appends the error of a failed effect: {"status","message"
// [,"retryAfter"][,"limit"]}, limit naming a turn limit the model reached.
func appendEffectError(b []byte, e *genui.Error) []byte {
	b = append(b, `{"status":`...)
	b = jsonenc.AppendString(b, string(e.Status))
	b = append(b, `,"message":`...)
	b = jsonenc.AppendString(b, e.Message)
	if s := e.RetryAfterSeconds(); s > 0 {
		b = append(b, `,"retryAfter":`...)
		b = strconv.AppendInt(b, int64(s), 10)
	}
	if d, _ := e.Details.(map[string]any); d != nil {
		if limit, ok := d["limit"].(string); ok {
			b = append(b, `,"limit":`...)
			b = jsonenc.AppendString(b, limit)
		}
	}
	return append(b, '}')
}
