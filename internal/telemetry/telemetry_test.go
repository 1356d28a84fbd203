package telemetry

import (
	"compress/gzip"
	"context"
	"encoding/hex"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/tracing"
	"github.com/firebase/genkit/go/genkit"
	"go.opentelemetry.io/otel"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	"github.com/genuiserver/genui/internal/testkit/leaktest"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

// span is a span as an OTLP receiver got it.
type span struct {
	name, service          string
	traceID, id, parentID  string
	genkitType, genkitPath string
}

// receiver records the spans of the OTLP export requests it is sent.
type receiver struct {
	mu    sync.Mutex
	spans []span
	// genkitTraces are the bodies of the traces Genkit sends to a telemetry server.
	genkitTraces []string
}

func (r *receiver) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range req.GetResourceSpans() {
		var service string
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				r.spans = append(r.spans, span{
					name:       s.GetName(),
					service:    service,
					traceID:    hex.EncodeToString(s.GetTraceId()),
					id:         hex.EncodeToString(s.GetSpanId()),
					parentID:   hex.EncodeToString(s.GetParentSpanId()),
					genkitType: attr(s, "genkit:type"),
					genkitPath: attr(s, "genkit:path"),
				})
			}
		}
	}
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func attr(s *tracepb.Span, key string) string {
	for _, kv := range s.GetAttributes() {
		if kv.GetKey() == key {
			return kv.GetValue().GetStringValue()
		}
	}
	return ""
}

func (r *receiver) got() ([]span, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]span(nil), r.spans...), append([]string(nil), r.genkitTraces...)
}

// ServeHTTP is an OTLP/HTTP receiver (binary protobuf on /v1/traces) and a Genkit
// telemetry server (JSON on /api/traces).
func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost {
		http.Error(w, "POST only", http.StatusMethodNotAllowed)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	data, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	switch req.URL.Path {
	case "/v1/traces":
		if ct := req.Header.Get("Content-Type"); ct != "application/x-protobuf" {
			http.Error(w, "unsupported content type "+ct, http.StatusUnsupportedMediaType)
			return
		}
		var in coltracepb.ExportTraceServiceRequest
		if err := proto.Unmarshal(data, &in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		out, _ := r.Export(req.Context(), &in)
		resp, err := proto.Marshal(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/x-protobuf")
		_, _ = w.Write(resp)
	case "/api/traces":
		r.mu.Lock()
		r.genkitTraces = append(r.genkitTraces, string(data))
		r.mu.Unlock()
	default:
		http.NotFound(w, req)
	}
}

// grpcReceiver is an OTLP/gRPC receiver.
type grpcReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	*receiver
}

func (g grpcReceiver) Export(ctx context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	return g.receiver.Export(ctx, req)
}

// startHTTP starts an OTLP/HTTP receiver for t and returns it with its URL.
func startHTTP(t *testing.T) (*receiver, string) {
	r := &receiver{}
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	return r, srv.URL
}

// startGRPC starts an OTLP/gRPC receiver for t and returns it with its URL.
func startGRPC(t *testing.T) (*receiver, string) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &receiver{}
	srv := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(srv, grpcReceiver{receiver: r})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return r, "http://" + lis.Addr().String()
}

// noLeaks fails t if, once t's cleanups have run, goroutines are left that were not
// running when noLeaks was called, bar the one genkit.Init leaves for the process.
// Unlike TestMain's check it does not excuse the batch span processor.
func noLeaks(t *testing.T) {
	before := goleak.IgnoreCurrent()
	t.Cleanup(func() {
		goleak.VerifyNone(t, before, goleak.IgnoreTopFunction("os/signal.NotifyContext.func1"))
	})
}

func getenv(env map[string]string) func(string) string {
	return func(k string) string { return env[k] }
}

// runFlow runs a Genkit flow with a step and a model call, as the spans to export.
func runFlow(t *testing.T, flowName string) {
	t.Helper()
	ctx := context.Background()
	g := genkit.Init(ctx)
	model := genkit.DefineModelAction(g, "test/echo", nil,
		func(_ context.Context, req *ai.ModelRequest, _ struct{}, _ ai.ModelStreamCallback) (*ai.ModelResponse, error) {
			return &ai.ModelResponse{
				Message:      ai.NewModelTextMessage("echo: " + req.Messages[len(req.Messages)-1].Text()),
				FinishReason: ai.FinishReasonStop,
			}, nil
		})
	flow := genkit.DefineFlow(g, flowName, func(ctx context.Context, in string) (string, error) {
		prompt, err := genkit.Run(ctx, "prepare", func() (string, error) { return strings.ToUpper(in), nil })
		if err != nil {
			return "", err
		}
		resp, err := genkit.Generate(ctx, g, ai.WithModel(model), ai.WithPrompt(prompt))
		if err != nil {
			return "", err
		}
		return resp.Text(), nil
	})
	out, err := flow.Run(ctx, "hi")
	if err != nil {
		t.Fatal(err)
	}
	if out != "echo: HI" {
		t.Fatalf("flow output %q", out)
	}
}

// checkFlowSpans checks that spans holds the flow's span, as a root, and its step's and
// model call's, in the flow's trace, all with the service name service.
func checkFlowSpans(t *testing.T, spans []span, flowName, service string) {
	t.Helper()
	byName := map[string]span{}
	for _, s := range spans {
		byName[s.name] = s
	}
	flow, ok := byName[flowName]
	if !ok {
		t.Fatalf("no span %q among %+v", flowName, spans)
	}
	if flow.parentID != "" || flow.genkitType != "action" {
		t.Errorf("flow span %+v: want a root span of genkit:type action", flow)
	}
	for _, s := range spans {
		if s.service != service {
			t.Errorf("span %q has service.name %q, want %q", s.name, s.service, service)
		}
	}
	for _, name := range []string{"prepare", "test/echo"} {
		s, ok := byName[name]
		switch {
		case !ok:
			t.Errorf("no span %q among %+v", name, spans)
		case s.traceID != flow.traceID:
			t.Errorf("span %q is in trace %s, not the flow's %s", name, s.traceID, flow.traceID)
		case !strings.HasPrefix(s.genkitPath, "/{"+flowName+",t:flow}/"):
			t.Errorf("span %q has genkit:path %q, not under the flow", name, s.genkitPath)
		}
	}
	if step := byName["prepare"]; step.parentID != flow.id || step.genkitType != "flowStep" {
		t.Errorf("step span %+v: want a flowStep child of the flow span %s", step, flow.id)
	}
}

func TestSetupExportsGenkitSpansOverHTTP(t *testing.T) {
	t.Setenv("GENKIT_ENV", "")
	noLeaks(t)
	r, u := startHTTP(t)
	ctx := context.Background()
	// The receiver is Genkit's telemetry server as well, which must keep getting traces.
	shutdown, err := Setup(ctx, getenv(map[string]string{
		EnvEndpoint:               u,
		EnvServiceName:            "genui-test",
		"GENKIT_TELEMETRY_SERVER": u,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if tp, ok := otel.GetTracerProvider().(*sdktrace.TracerProvider); !ok || tracing.TracerProvider() != tp {
		t.Fatalf("Genkit's tracer provider is not the global one Setup installed")
	}
	runFlow(t, "telemetryHTTPFlow")
	if err := shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	// No waiting: shutdown must have flushed what was batched.
	spans, genkitTraces := r.got()
	checkFlowSpans(t, spans, "telemetryHTTPFlow", "genui-test")
	if len(genkitTraces) == 0 || !strings.Contains(strings.Join(genkitTraces, "\n"), "telemetryHTTPFlow") {
		t.Errorf("Genkit's telemetry server got no trace of the flow: %q", genkitTraces)
	}
	if err := shutdown(ctx); err != nil {
		t.Errorf("second shutdown: %v", err)
	}
}

func TestSetupExportsGenkitSpansOverGRPC(t *testing.T) {
	t.Setenv("GENKIT_ENV", "")
	noLeaks(t)
	r, u := startGRPC(t)
	ctx := context.Background()
	shutdown, err := Setup(ctx, getenv(map[string]string{
		EnvTracesEndpoint: u,
		EnvProtocol:       "http/protobuf",
		EnvTracesProtocol: "grpc",
	}))
	if err != nil {
		t.Fatal(err)
	}
	runFlow(t, "telemetryGRPCFlow")
	if err := shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	spans, _ := r.got()
	checkFlowSpans(t, spans, "telemetryGRPCFlow", DefaultServiceName)
}

// The per-signal endpoint is used as it is, not as a base URL.
func TestSetupTracesEndpointIsTheURL(t *testing.T) {
	noLeaks(t)
	r, u := startHTTP(t)
	ctx := context.Background()
	shutdown, err := Setup(ctx, getenv(map[string]string{
		EnvTracesEndpoint: u + "/v1/traces",
		EnvEndpoint:       "http://127.0.0.1:1/elsewhere",
	}))
	if err != nil {
		t.Fatal(err)
	}
	_, s := tracing.Tracer().Start(ctx, "direct")
	s.End()
	if err := shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if spans, _ := r.got(); len(spans) != 1 || spans[0].name != "direct" || spans[0].service != DefaultServiceName {
		t.Errorf("got spans %+v, want the one named direct", spans)
	}
}

func TestSetupWithoutEndpointDoesNothing(t *testing.T) {
	noLeaks(t)
	r, u := startHTTP(t)
	ctx := context.Background()
	for _, env := range []map[string]string{
		{},
		{EnvServiceName: "genui-test", EnvProtocol: "grpc"},
		{EnvEndpoint: u, EnvSDKDisabled: "true"},
	} {
		before := otel.GetTracerProvider()
		shutdown, err := Setup(ctx, getenv(env))
		if err != nil {
			t.Fatalf("%v: %v", env, err)
		}
		if shutdown == nil {
			t.Fatalf("%v: nil shutdown", env)
		}
		if otel.GetTracerProvider() != before {
			t.Errorf("%v: Setup changed the global tracer provider", env)
		}
		_, s := otel.Tracer("test").Start(ctx, "unexported")
		s.End()
		if err := shutdown(ctx); err != nil {
			t.Errorf("%v: shutdown: %v", env, err)
		}
		if Enabled(getenv(env)) {
			t.Errorf("%v: Enabled", env)
		}
	}
	if spans, traces := r.got(); len(spans) != 0 || len(traces) != 0 {
		t.Errorf("exported %+v %q", spans, traces)
	}
}

func TestSetupRejectsInvalidSettings(t *testing.T) {
	noLeaks(t)
	before := otel.GetTracerProvider()
	for _, tc := range []struct {
		env     map[string]string
		naming  string
		problem string
	}{
		{map[string]string{EnvEndpoint: "localhost:4318"}, EnvEndpoint, "http:// or https://"},
		{map[string]string{EnvEndpoint: "ftp://collector:4318"}, EnvEndpoint, "http:// or https://"},
		{map[string]string{EnvEndpoint: "http://"}, EnvEndpoint, "with a host"},
		{map[string]string{EnvEndpoint: "http://collector:port"}, EnvEndpoint, "invalid port"},
		{map[string]string{EnvEndpoint: "http://collector:4318/?x=1"}, EnvEndpoint, "query"},
		{map[string]string{EnvEndpoint: "http://[::1"}, EnvEndpoint, "missing ']'"},
		{map[string]string{EnvEndpoint: "http://ok:4318", EnvTracesEndpoint: "collector"}, EnvTracesEndpoint, "http:// or https://"},
		{map[string]string{EnvEndpoint: "http://ok:4318", EnvProtocol: "http/json"}, EnvProtocol, "not supported"},
		{map[string]string{EnvEndpoint: "http://ok:4318", EnvProtocol: "grpc", EnvTracesProtocol: "thrift"}, EnvTracesProtocol, "not supported"},
	} {
		shutdown, err := Setup(context.Background(), getenv(tc.env))
		if err == nil {
			t.Errorf("%v: no error", tc.env)
			continue
		}
		if !strings.Contains(err.Error(), tc.naming) || !strings.Contains(err.Error(), tc.problem) {
			t.Errorf("%v: error %q does not name %s and say %q", tc.env, err, tc.naming, tc.problem)
		}
		if shutdown == nil || shutdown(context.Background()) != nil {
			t.Errorf("%v: shutdown is not a no-op", tc.env)
		}
	}
	if otel.GetTracerProvider() != before {
		t.Errorf("Setup changed the global tracer provider")
	}
}

// When a provider is already the global one, as after Genkit has recorded a span,
// Setup adds its exporter to it.
func TestSetupAfterAnotherProvider(t *testing.T) {
	noLeaks(t)
	r, u := startHTTP(t)
	ctx := context.Background()
	other := sdktrace.NewTracerProvider()
	otel.SetTracerProvider(other)
	t.Cleanup(func() {
		_ = other.Shutdown(ctx)
		// Let the tests that follow install their own provider again.
		mu.Lock()
		installed = other
		mu.Unlock()
	})
	shutdown, err := Setup(ctx, getenv(map[string]string{EnvEndpoint: u}))
	if err != nil {
		t.Fatal(err)
	}
	if otel.GetTracerProvider() != other {
		t.Fatalf("Setup replaced the global tracer provider")
	}
	_, s := tracing.Tracer().Start(ctx, "before shutdown")
	s.End()
	if err := shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	_, s = tracing.Tracer().Start(ctx, "after shutdown")
	s.End()
	spans, _ := r.got()
	if len(spans) != 1 || spans[0].name != "before shutdown" {
		t.Errorf("got spans %+v, want only the one before shutdown", spans)
	}
}
