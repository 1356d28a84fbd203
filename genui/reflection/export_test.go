package reflection

// WithTelemetryHook replaces exporting traces to the manager's telemetry server (a process-wide
// setting) with f, which receives each URL the manager announces.
func WithTelemetryHook(f func(url string)) Option { return func(o *options) { o.telemetry = f } }

// Backoff exposes the reconnection delay to the tests.
var Backoff = backoff

// ModuleVersion exposes how the Genkit version is found.
var ModuleVersion = moduleVersion
