package genui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/firebase/genkit/go/core/status"

	"github.com/genuiserver/genui/genui/durable"
	"github.com/genuiserver/genui/internal/rediserr"
	"github.com/genuiserver/genui/internal/retryafter"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/session"
)

// Status is the canonical status of an error (the Genkit and gRPC names). Transports map it
// to their own codes: an HTTP status, a JSON-RPC or A2A error code.
type Status string

// Statuses.
const (
	StatusInvalidArgument    Status = "INVALID_ARGUMENT"
	StatusFailedPrecondition Status = "FAILED_PRECONDITION"
	StatusNotFound           Status = "NOT_FOUND"
	StatusAborted            Status = "ABORTED"
	StatusResourceExhausted  Status = "RESOURCE_EXHAUSTED"
	StatusUnavailable        Status = "UNAVAILABLE"
	StatusDeadlineExceeded   Status = "DEADLINE_EXCEEDED"
	StatusCancelled          Status = "CANCELLED"
	StatusInternal           Status = "INTERNAL"
	StatusUnauthenticated    Status = "UNAUTHENTICATED"
	StatusPermissionDenied   Status = "PERMISSION_DENIED"
	StatusUnimplemented      Status = "UNIMPLEMENTED"
)

// Statuses lists every canonical status, for the error table of each protocol to map.
var Statuses = []Status{
	StatusInvalidArgument, StatusFailedPrecondition, StatusNotFound, StatusAborted,
	StatusResourceExhausted, StatusUnavailable, StatusDeadlineExceeded, StatusCancelled,
	StatusInternal, StatusUnauthenticated, StatusPermissionDenied, StatusUnimplemented,
}

// Error is an error with a canonical status, reported to clients as a [schemas.Error].
type Error struct {
	Status  Status
	Message string
	Details any
	// RetryAfter, when set, is how long the model's provider asked to wait before a retry.
	RetryAfter time.Duration
	cause      error
}

// Errorf returns an *Error with the given status and formatted message. A %w verb makes
// the wrapped error its cause.
func Errorf(status Status, format string, args ...any) *Error {
	err := fmt.Errorf(format, args...)
	return &Error{Status: status, Message: err.Error(), cause: errors.Unwrap(err)}
}

// WithCause returns e with err as its cause, for errors.Is and errors.As.
func (e *Error) WithCause(err error) *Error {
	e.cause = err
	return e
}

func (e *Error) Error() string { return strings.ToLower(string(e.Status)) + ": " + e.Message }

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.cause }

// RetryAfterSeconds is how long the error asks a client to wait before a retry, in whole
// seconds, rounded up: at least 1 when it asks for a wait at all, 0 when it does not.
// Every transport's Retry-After comes from here.
func (e *Error) RetryAfterSeconds() int {
	if e == nil {
		return 0
	}
	return retryafter.Seconds(e.RetryAfter)
}

// Wire returns the error as sent to clients.
func (e *Error) Wire() *schemas.Error {
	return &schemas.Error{Status: string(e.Status), Message: e.Message, Details: e.Details}
}

// fieldError reports a problem with one field of a request.
func fieldError(field, format string, args ...any) *Error {
	return &Error{
		Status:  StatusInvalidArgument,
		Message: field + ": " + fmt.Sprintf(format, args...),
		Details: map[string]any{"field": field},
	}
}

// AsError maps any error to an *Error (nil to nil): an *Error is returned as is, the stores' outages
// become UNAVAILABLE, an unknown session or stream NOT_FOUND, context errors CANCELLED or
// DEADLINE_EXCEEDED, Genkit errors keep their status, and anything else is INTERNAL.
func AsError(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	switch {
	case errors.Is(err, session.ErrUnavailable), errors.Is(err, durable.ErrUnavailable):
		msg, ok := rediserr.Public(err)
		if !ok {
			msg = "a store is unavailable for a moment; retry"
		}
		return &Error{Status: StatusUnavailable, Message: msg, RetryAfter: time.Second, cause: err}
	case errors.Is(err, session.ErrNotFound), errors.Is(err, durable.ErrStreamNotFound):
		return &Error{Status: StatusNotFound, Message: err.Error(), cause: err}
	case errors.Is(err, context.DeadlineExceeded):
		return &Error{Status: StatusDeadlineExceeded, Message: "the model did not answer in time", cause: err}
	case errors.Is(err, context.Canceled):
		return &Error{Status: StatusCancelled, Message: "the request was cancelled", cause: err}
	}
	var ge *status.Error
	if errors.As(err, &ge) && ge != nil {
		st := Status(ge.Status)
		switch ge.Status {
		case status.Aborted, status.Unknown, status.DataLoss, status.OK, "":
			st = StatusInternal
		}
		var details any
		if len(ge.Details) > 0 {
			details = ge.Details
		}
		return &Error{Status: st, Message: ge.Message, Details: details, cause: err}
	}
	if msg, ok := rediserr.Public(err); ok {
		return &Error{Status: StatusInternal, Message: msg, cause: err}
	}
	return &Error{Status: StatusInternal, Message: err.Error(), cause: err}
}
