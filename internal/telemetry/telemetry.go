package telemetry

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path"
	"strings"
	"sync"

	"github.com/firebase/genkit/go/core/tracing"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.40.0"
)

// The environment variables Setup reads.
const (
	EnvEndpoint       = "OTEL_EXPORTER_OTLP_ENDPOINT"
	EnvTracesEndpoint = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
	EnvProtocol       = "OTEL_EXPORTER_OTLP_PROTOCOL"
	EnvTracesProtocol = "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	EnvServiceName    = "OTEL_SERVICE_NAME"
	EnvSDKDisabled    = "OTEL_SDK_DISABLED"
)

// DefaultServiceName is the service.name resource attribute when OTEL_SERVICE_NAME is unset.
const DefaultServiceName = "genui-server"

// The protocols of OTEL_EXPORTER_OTLP_PROTOCOL that Setup supports.
const (
	ProtocolHTTPProtobuf = "http/protobuf"
	ProtocolGRPC         = "grpc"
)

// tracesPath is where OTLP/HTTP receivers take traces, relative to OTEL_EXPORTER_OTLP_ENDPOINT.
const tracesPath = "/v1/traces"

// Enabled reports whether Setup, given getenv, would export traces. It does not check
// that the settings are valid.
func Enabled(getenv func(string) string) bool {
	if getenv == nil {
		getenv = os.Getenv
	}
	if strings.EqualFold(strings.TrimSpace(getenv(EnvSDKDisabled)), "true") {
		return false
	}
	return strings.TrimSpace(getenv(EnvTracesEndpoint)) != "" || strings.TrimSpace(getenv(EnvEndpoint)) != ""
}

// Setup starts exporting traces, Genkit's included, over OTLP when
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or OTEL_EXPORTER_OTLP_ENDPOINT is set (read
// through getenv; nil means os.Getenv), and returns the function that flushes the spans
// not yet exported and stops exporting. With neither variable set, or with
// OTEL_SDK_DISABLED=true, it does nothing and shutdown does nothing. An invalid endpoint
// or protocol is an error that names its variable; shutdown is never nil, so it may be
// deferred before err is checked.
//
// Setup installs, as the global tracer provider, an SDK provider whose resource has
// service.name set from OTEL_SERVICE_NAME (DefaultServiceName when unset) and which
// batches spans to the endpoint. Genkit records its spans on that provider, so Setup
// must run before Genkit records its first span, and is best called before
// genkit.Init. If an SDK provider is already the global one (Genkit creates one on its
// first span), Setup adds its exporter to that provider instead: the spans are still
// exported, but with that provider's resource, and Setup logs a warning. After
// shutdown, spans recorded on the provider go nowhere; calling Setup again installs a
// new one.
func Setup(ctx context.Context, getenv func(string) string) (shutdown func(context.Context) error, err error) {
	nop := func(context.Context) error { return nil }
	if getenv == nil {
		getenv = os.Getenv
	}
	cfg, err := readConfig(getenv)
	if err != nil || cfg == nil {
		return nop, err
	}
	var exp sdktrace.SpanExporter
	switch cfg.protocol {
	case ProtocolGRPC:
		exp, err = otlptracegrpc.New(ctx, otlptracegrpc.WithEndpointURL(cfg.endpoint.String()))
	default:
		exp, err = otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(cfg.endpoint.String()))
	}
	if err != nil {
		return nop, fmt.Errorf("telemetry: OTLP trace exporter for %s: %w", cfg.endpointVar, err)
	}
	res, err := resource.New(ctx,
		resource.WithSchemaURL(semconv.SchemaURL),
		resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(cfg.service)))
	if err != nil {
		_ = exp.Shutdown(ctx)
		return nop, fmt.Errorf("telemetry: resource: %w", err)
	}
	return attach(sdktrace.NewBatchSpanProcessor(exp), res, getenv), nil
}

// config is what the environment asks Setup for.
type config struct {
	endpointVar string   // the variable endpoint comes from
	endpoint    *url.URL // for OTLP/HTTP the full URL of the traces; for gRPC the target
	protocol    string
	service     string
}

// readConfig reads the environment through getenv: nil when nothing is to be exported.
func readConfig(getenv func(string) string) (*config, error) {
	if !Enabled(getenv) {
		return nil, nil
	}
	cfg := &config{endpointVar: EnvTracesEndpoint}
	raw := strings.TrimSpace(getenv(EnvTracesEndpoint))
	if raw == "" {
		cfg.endpointVar, raw = EnvEndpoint, strings.TrimSpace(getenv(EnvEndpoint))
	}
	protoVar, proto := EnvTracesProtocol, strings.TrimSpace(getenv(EnvTracesProtocol))
	if proto == "" {
		protoVar, proto = EnvProtocol, strings.TrimSpace(getenv(EnvProtocol))
	}
	switch proto {
	case "", ProtocolHTTPProtobuf:
		cfg.protocol = ProtocolHTTPProtobuf
	case ProtocolGRPC:
		cfg.protocol = ProtocolGRPC
	default:
		return nil, fmt.Errorf("telemetry: %s=%q is not supported: want %q or %q", protoVar, proto, ProtocolHTTPProtobuf, ProtocolGRPC)
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("telemetry: invalid %s=%q: %w", cfg.endpointVar, raw, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || u.Opaque != "" {
		return nil, fmt.Errorf("telemetry: invalid %s=%q: want an http:// or https:// URL with a host, such as http://localhost:4318", cfg.endpointVar, raw)
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("telemetry: invalid %s=%q: the URL may have no user information, query or fragment", cfg.endpointVar, raw)
	}
	if cfg.protocol == ProtocolHTTPProtobuf {
		// The general variable is a base URL for all signals, the per-signal one the
		// URL itself, as the OTLP exporter specification has it.
		if cfg.endpointVar == EnvEndpoint {
			u.Path = path.Join("/", u.Path, tracesPath)
		} else if u.Path == "" {
			u.Path = "/"
		}
		u.RawPath = ""
	}
	cfg.endpoint = u
	cfg.service = strings.TrimSpace(getenv(EnvServiceName))
	if cfg.service == "" {
		cfg.service = DefaultServiceName
	}
	return cfg, nil
}

var (
	mu sync.Mutex
	// installed is the provider Setup last made the global one.
	installed *sdktrace.TracerProvider
)

// attach sends the spans of Genkit's tracer provider, the global one, to bsp: on a new
// provider with resource res unless some other SDK provider is already in place.
func attach(bsp sdktrace.SpanProcessor, res *resource.Resource, getenv func(string) string) func(context.Context) error {
	mu.Lock()
	defer mu.Unlock()
	if tp, ok := otel.GetTracerProvider().(*sdktrace.TracerProvider); ok && tp != installed {
		// Genkit (tracing.TracerProvider) or something else got here first, and its
		// provider's resource cannot be changed.
		slog.Warn("telemetry: a tracer provider was already in place; its spans are exported without service.name " +
			"from OTEL_SERVICE_NAME: set up telemetry before genkit.Init and before any span is recorded")
		tp.RegisterSpanProcessor(bsp)
		var once sync.Once
		return func(ctx context.Context) error {
			var err error
			once.Do(func() {
				err = bsp.Shutdown(ctx)
				tp.UnregisterSpanProcessor(bsp)
			})
			return err
		}
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSpanProcessor(bsp))
	otel.SetTracerProvider(tp)
	installed = tp
	// Genkit connects $GENKIT_TELEMETRY_SERVER only to a provider it creates itself
	// (tracing.TracerProvider), which it now will not.
	if u := getenv("GENKIT_TELEMETRY_SERVER"); u != "" {
		client := tracing.NewHTTPTelemetryClient(u)
		if getenv("GENKIT_ENABLE_REALTIME_TELEMETRY") == "true" {
			tracing.WriteTelemetryRealtime(client)
		} else {
			tracing.WriteTelemetryImmediate(client)
		}
	}
	return tp.Shutdown
}
