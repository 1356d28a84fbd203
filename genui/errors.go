package genui

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/firebase/genkit/go/core"
	"google.golang.org/genai"

	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/session"
)

// Canonical status names used on the wire.
const (
	StatusInvalidArgument    = "INVALID_ARGUMENT"
	StatusFailedPrecondition = "FAILED_PRECONDITION"
	StatusNotFound           = "NOT_FOUND"
	StatusResourceExhausted  = "RESOURCE_EXHAUSTED"
	StatusUnavailable        = "UNAVAILABLE"
	StatusDeadlineExceeded   = "DEADLINE_EXCEEDED"
	StatusCancelled          = "CANCELLED"
	StatusInternal           = "INTERNAL"
	StatusUnauthenticated    = "UNAUTHENTICATED"
	StatusPermissionDenied   = "PERMISSION_DENIED"
	StatusUnimplemented      = "UNIMPLEMENTED"
)

var httpStatus = map[string]int{
	StatusInvalidArgument:    http.StatusBadRequest,
	StatusFailedPrecondition: http.StatusBadRequest,
	StatusNotFound:           http.StatusNotFound,
	StatusResourceExhausted:  http.StatusTooManyRequests,
	StatusUnavailable:        http.StatusServiceUnavailable,
	StatusDeadlineExceeded:   http.StatusGatewayTimeout,
	StatusCancelled:          499,
	StatusInternal:           http.StatusInternalServerError,
	StatusUnauthenticated:    http.StatusUnauthorized,
	StatusPermissionDenied:   http.StatusForbidden,
	StatusUnimplemented:      http.StatusNotImplemented,
}

// Error is an error with a canonical status, reported to clients as a [schemas.Error].
type Error struct {
	Status  string
	Message string
	Details any
	// HTTP overrides the HTTP status derived from Status (413 and 415 have no canonical
	// status of their own).
	HTTP  int
	cause error
}

// Errorf returns an *Error with the given status and formatted message. A %w verb makes
// the wrapped error its cause.
func Errorf(status, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Status: status, Message: err.Error(), cause: errors.Unwrap(err)}
}

func (e *Error) Error() string { return strings.ToLower(e.Status) + ": " + e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.cause }

// HTTPStatus is the HTTP status code for the error.
func (e *Error) HTTPStatus() int {
	if e.HTTP != 0 {
		return e.HTTP
	}
	if s, ok := httpStatus[e.Status]; ok {
		return s
	}
	return http.StatusInternalServerError
}

// Wire returns the error as sent to clients.
func (e *Error) Wire() *schemas.Error {
	return &schemas.Error{Status: e.Status, Message: e.Message, Details: e.Details}
}

// AsError maps any error to an *Error: model API errors keep their meaning (a 429 stays
// RESOURCE_EXHAUSTED), Genkit errors keep their status, context errors become CANCELLED or
// DEADLINE_EXCEEDED, and anything else is INTERNAL.
func AsError(err error) *Error {
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	var api genai.APIError
	if errors.As(err, &api) {
		return modelError(api)
	}
	var api2 *genai.APIError
	if errors.As(err, &api2) && api2 != nil {
		return modelError(*api2)
	}
	switch {
	case errors.Is(err, session.ErrUnavailable):
		return &Error{Status: StatusUnavailable, Message: err.Error(), cause: err}
	case errors.Is(err, session.ErrNotFound):
		return &Error{Status: StatusNotFound, Message: err.Error(), cause: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Status: StatusDeadlineExceeded, Message: "the model did not answer in time", cause: err}
	case errors.Is(err, context.Canceled):
		return &Error{Status: StatusCancelled, Message: "the request was cancelled", cause: err}
	}
	var ge *core.GenkitError
	if errors.As(err, &ge) {
		status := string(ge.Status)
		switch ge.Status {
		case core.INTERNAL:
			status = StatusInternal
		case core.ABORTED, core.UNKNOWN, core.DATA_LOSS:
			status = StatusInternal
		}
		var details any
		if len(ge.Details) > 0 {
			details = ge.Details
		}
		return &Error{Status: status, Message: ge.Message, Details: details, cause: err}
	}
	return &Error{Status: StatusInternal, Message: err.Error(), cause: err}
}

func modelError(api genai.APIError) *Error {
	status := StatusInternal
	switch {
	case api.Code == http.StatusTooManyRequests:
		status = StatusResourceExhausted
	case api.Code == http.StatusBadRequest:
		status = StatusInvalidArgument
	case api.Code == http.StatusGatewayTimeout:
		status = StatusDeadlineExceeded
	case api.Code >= 500:
		status = StatusUnavailable
	}
	msg := api.Message
	if msg == "" {
		msg = http.StatusText(api.Code)
	}
	e := &Error{Status: status, Message: fmt.Sprintf("model error (HTTP %d %s): %s", api.Code, api.Status, msg), cause: api}
	if d := retryDelay(api); d > 0 {
		e.Details = map[string]any{"retryDelay": d.String()}
	}
	return e
}
