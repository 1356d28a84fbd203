package transport

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/jsonbody"
	"github.com/genuiserver/genui/internal/jsonenc"
	"github.com/genuiserver/genui/schemas"
)

// The error table of the HTTP JSON wire (/startSession, /generateUi, /generateA2ui,
// AG-UI before its stream starts, a WebSocket endpoint before the upgrade):
// {"error":{"status","message","details"}} with the HTTP status of the error's canonical
// status, and Retry-After when it asks for a wait.

// JSON writes errors as the HTTP JSON wire does.
var JSON ErrorWriter = ErrorWriterFunc(func(w http.ResponseWriter, _ *http.Request, e *genui.Error) {
	WriteJSONError(w, e)
})

// httpStatuses are the HTTP statuses of the canonical statuses.
var httpStatuses = map[genui.Status]int{
	genui.StatusInvalidArgument:    http.StatusBadRequest,
	genui.StatusFailedPrecondition: http.StatusBadRequest,
	genui.StatusNotFound:           http.StatusNotFound,
	genui.StatusAborted:            http.StatusConflict,
	genui.StatusResourceExhausted:  http.StatusTooManyRequests,
	genui.StatusUnavailable:        http.StatusServiceUnavailable,
	genui.StatusDeadlineExceeded:   http.StatusGatewayTimeout,
	genui.StatusCancelled:          499,
	genui.StatusInternal:           http.StatusInternalServerError,
	genui.StatusUnauthenticated:    http.StatusUnauthorized,
	genui.StatusPermissionDenied:   http.StatusForbidden,
	genui.StatusUnimplemented:      http.StatusNotImplemented,
}

// HTTPStatus is the HTTP status of an error: that of its canonical status, except for a
// catalog over the size limit (413) and a request body refused before it was decoded
// (413 or 415, as jsonbody says).
func HTTPStatus(err error) int {
	var se *jsonbody.StatusError
	if errors.As(err, &se) {
		return se.Code
	}
	var tl *catalog.TooLargeError
	if errors.As(err, &tl) {
		return http.StatusRequestEntityTooLarge
	}
	if code, ok := httpStatuses[genui.AsError(err).Status]; ok {
		return code
	}
	return http.StatusInternalServerError
}

// WriteJSONError answers err as {"error":{…}} with its HTTP status and, when it asks for a
// wait, Retry-After in whole seconds.
func WriteJSONError(w http.ResponseWriter, err error) {
	code := HTTPStatus(err)
	e := genui.AsError(err)
	h := w.Header()
	h.Set("Content-Type", "application/json")
	if s := e.RetryAfterSeconds(); s > 0 && (e.Status == genui.StatusResourceExhausted || e.Status == genui.StatusUnavailable) {
		h.Set("Retry-After", strconv.Itoa(s))
	}
	w.WriteHeader(code)
	_, _ = w.Write(AppendJSONError(nil, e.Wire()))
}

// AppendJSONError appends {"error":{…}} and a newline to b. Details that do not encode are
// left out.
func AppendJSONError(b []byte, e *schemas.Error) []byte {
	b = append(b, `{"error":`...)
	b = AppendWireError(b, e)
	return append(b, "}\n"...)
}

// AppendWireError appends the error object {"status","message","details"}.
func AppendWireError(b []byte, e *schemas.Error) []byte {
	enc, err := jsonenc.Marshal(e)
	if err != nil { // details that do not encode: drop them
		enc, _ = jsonenc.Marshal(&schemas.Error{Status: e.Status, Message: e.Message})
	}
	return append(b, enc...)
}
