package a2ui

import (
	"fmt"

	"github.com/genuiserver/genui/catalog"
)

// Protocol versions.
const (
	V09 = catalog.A2UIv09
	V08 = catalog.A2UIv08
)

// FieldError is a problem with a field of a client's request, named by its path
// (a2uiClientCapabilities.v0.9.supportedCatalogIds[1]).
type FieldError struct {
	Field   string
	Message string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Message }

func fieldErr(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Message: fmt.Sprintf(format, args...)}
}

// CheckVersion returns the version of a request: v ("v0.9" or "v0.8"), or v0.9 when v
// is empty.
func CheckVersion(v string) (string, *FieldError) {
	switch v {
	case "", V09:
		return V09, nil
	case V08:
		return V08, nil
	case "v0.9.1", "0.9", "0.9.1":
		return V09, nil
	case "0.8":
		return V08, nil
	}
	return "", fieldErr("version", "%q is not an A2UI version this service speaks: use \"v0.9\" (the default) or \"v0.8\"", v)
}
