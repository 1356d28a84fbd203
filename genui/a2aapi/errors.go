package a2aapi

import (
	"errors"
	"maps"
	"net/http"
	"strconv"

	legacy "github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/v2/a2a"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/transport"
	"github.com/genuiserver/genui/internal/jsonenc"
)

// The error table of A2A. The agent's errors are a2a-go's: an a2a.Error of one of its
// sentinels, with details. a2a-go writes one as each binding has it: JSON-RPC 1.0 its
// code, and its details and reason as a list of typed details in data; HTTP+JSON the
// HTTP status and a google.rpc.Status; A2A v0.3 JSON-RPC (through v03, v03Error) the same
// code, and data one object, the details and the reason: {"field"} for a bad field,
// {"status","retryAfter","limit"} for a limit or an unavailable store.
//
// The refusals of the server's middleware stack (no credentials, a panic) are answered
// on the JSON-RPC routes as transport.JSONRPC does, on the HTTP+JSON one as
// restErrorWriter does.

// sentinels are the A2A errors of the canonical statuses. A field the client got wrong is
// invalid params; a limit, or a store unavailable for a moment, the JSON-RPC server
// error saying when to retry.
var sentinels = map[genui.Status]error{
	genui.StatusInvalidArgument:    a2a.ErrInvalidParams,
	genui.StatusFailedPrecondition: a2a.ErrInvalidParams,
	genui.StatusNotFound:           a2a.ErrInvalidParams,
	genui.StatusAborted:            a2a.ErrUnsupportedOperation,
	genui.StatusResourceExhausted:  a2a.ErrServerError,
	genui.StatusUnavailable:        a2a.ErrServerError,
	genui.StatusDeadlineExceeded:   a2a.ErrInternalError,
	genui.StatusCancelled:          a2a.ErrInternalError,
	genui.StatusInternal:           a2a.ErrInternalError,
	genui.StatusUnauthenticated:    a2a.ErrUnauthenticated,
	genui.StatusPermissionDenied:   a2a.ErrUnauthorized,
	genui.StatusUnimplemented:      a2a.ErrUnsupportedOperation,
}

// errorOf is the A2A error of e, with message msg, naming field (as the A2A request
// names it; "" for none). A server error says its status and, when e asks for a wait,
// after how many whole seconds to retry (e.RetryAfterSeconds, at least 1), and the
// limit it hit, if any.
func errorOf(e *genui.Error, msg, field string) *a2a.Error {
	sentinel, ok := sentinels[e.Status]
	if !ok {
		sentinel = a2a.ErrInternalError
	}
	ae := a2a.NewError(sentinel, msg)
	if sentinel == a2a.ErrServerError {
		d := map[string]any{"status": string(e.Status)}
		if s := e.RetryAfterSeconds(); s > 0 {
			d["retryAfter"] = s
		}
		if m, ok := e.Details.(map[string]any); ok && m["limit"] != nil {
			d["limit"] = m["limit"]
		}
		return ae.WithDetails(d)
	}
	if field != "" {
		ae = ae.WithDetails(map[string]any{"field": field})
	}
	return ae
}

// internal is the A2A error of a failure of the server's own (the task store's): a store
// unavailable for a moment says when to retry, as a limit does; neither names its
// cause, which the logs keep.
func internal(err error) error {
	e := genui.AsError(err)
	if e.Status != genui.StatusUnavailable {
		e = &genui.Error{Status: genui.StatusInternal, Message: e.Message}
	}
	return errorOf(e, e.Message, "")
}

func taskError(err error, id a2a.TaskID) error {
	if errors.Is(err, a2a.ErrTaskNotFound) {
		return a2a.NewError(a2a.ErrTaskNotFound, "task "+string(id)+" not found (unknown or expired)")
	}
	return internal(err)
}

// v03Sentinels are a2a-go's A2A 1.0 errors and their A2A v0.3 counterparts, which have the
// same JSON-RPC codes.
var v03Sentinels = []struct{ v1, v03 error }{
	{a2a.ErrParseError, legacy.ErrParseError},
	{a2a.ErrInvalidRequest, legacy.ErrInvalidRequest},
	{a2a.ErrMethodNotFound, legacy.ErrMethodNotFound},
	{a2a.ErrInvalidParams, legacy.ErrInvalidParams},
	{a2a.ErrInternalError, legacy.ErrInternalError},
	{a2a.ErrServerError, legacy.ErrServerError},
	{a2a.ErrTaskNotFound, legacy.ErrTaskNotFound},
	{a2a.ErrTaskNotCancelable, legacy.ErrTaskNotCancelable},
	{a2a.ErrPushNotificationNotSupported, legacy.ErrPushNotificationNotSupported},
	{a2a.ErrUnsupportedOperation, legacy.ErrUnsupportedOperation},
	{a2a.ErrUnsupportedContentType, legacy.ErrUnsupportedContentType},
	{a2a.ErrInvalidAgentResponse, legacy.ErrInvalidAgentResponse},
	{a2a.ErrExtendedCardNotConfigured, legacy.ErrAuthenticatedExtendedCardNotConfigured},
	{a2a.ErrUnauthenticated, legacy.ErrUnauthenticated},
	{a2a.ErrUnauthorized, legacy.ErrUnauthorized},
}

// v03Error is an A2A error as A2A v0.3 has it: the same code and message, and the
// details with the reason A2A 1.0 puts in its ErrorInfo, one object.
func v03Error(err error) error {
	v1, v03 := error(a2a.ErrInternalError), error(legacy.ErrInternalError)
	for _, s := range v03Sentinels {
		if errors.Is(err, s.v1) {
			v1, v03 = s.v1, s.v03
			break
		}
	}
	d := map[string]any{}
	var ae *a2a.Error
	if errors.As(err, &ae) {
		d = maps.Clone(ae.Details)
		if d == nil {
			d = map[string]any{}
		}
	}
	d["reason"] = a2a.ErrorReason(v1)
	return legacy.NewError(v03, err.Error()).WithDetails(d)
}

// restErrorWriter writes a refusal of the middleware stack as A2A's HTTP+JSON binding
// has an error, a google.rpc.Status.
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
