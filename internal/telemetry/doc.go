// Package telemetry exports traces over OTLP when the standard OpenTelemetry
// environment variables ask for it.
//
// [Setup] reads OTEL_EXPORTER_OTLP_TRACES_ENDPOINT (used as is) or else
// OTEL_EXPORTER_OTLP_ENDPOINT (a base URL, to which /v1/traces is added),
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or else OTEL_EXPORTER_OTLP_PROTOCOL
// ("http/protobuf", the default, or "grpc"), OTEL_SERVICE_NAME (the service.name
// resource attribute, "genui-server" by default) and OTEL_SDK_DISABLED. With neither
// endpoint set, or OTEL_SDK_DISABLED=true, it does nothing. The exporter itself reads
// the other OTEL_EXPORTER_OTLP_* settings (headers, timeout, compression, certificates)
// from the process environment.
//
// Genkit records its spans (flows, flow steps, model, tool and other action calls) on
// the global OpenTelemetry tracer provider when that is an SDK provider, creating one
// otherwise. Setup installs a provider of its own as the global one, so Genkit's spans
// and those of any other instrumented library are batched to the OTLP endpoint, and
// keeps Genkit's export to $GENKIT_TELEMETRY_SERVER (the Dev UI) working. Call it
// before genkit.Init and before anything records a span.
package telemetry
