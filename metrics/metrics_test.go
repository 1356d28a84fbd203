package metrics

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

func TestNilMetrics(t *testing.T) {
	var m *Metrics
	// None of these may panic.
	m.Request("/generateUi", "ndjson", 200, time.Second)
	m.Turn("ok", 1, 2, 3)
	m.FirstSurface(time.Second)
	m.Stream(time.Second)
	m.ModelCall("googleai", time.Second, "")
	m.ModelCall("googleai", time.Second, "UNAVAILABLE")
	m.ModelRetry("googleai")
	m.ModelFallback("googleai/a", "googleai/b", "rate_limited")
	m.Surfaces("streamed", 3)
	m.Limited("rate")
	m.Gauge("genui_g", "help", func() float64 { t.Error("nil Metrics called a gauge"); return 0 })
	m.Counter("genui_c", "help", func() float64 { t.Error("nil Metrics called a counter"); return 0 }, "a", "b")
}

// scrape GETs the metrics of h and returns the body, checking the status and format.
func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "text/plain") || !strings.Contains(ct, "version=0.0.4") {
		t.Errorf("Content-Type %q, want the Prometheus text format", ct)
	}
	return string(body)
}

func parse(t *testing.T, text string) map[string]*dto.MetricFamily {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(strings.NewReader(text))
	if err != nil {
		t.Fatalf("the exposition does not parse: %v\n%s", err, text)
	}
	return fams
}

func hasLine(t *testing.T, text, line string) {
	t.Helper()
	for l := range strings.SplitSeq(text, "\n") {
		if l == line {
			return
		}
	}
	t.Errorf("no line %q", line)
}

func TestFresh(t *testing.T) {
	m := New()
	text := scrape(t, m.Handler())
	// The label values known in advance are there from the start, at 0.
	for _, l := range []string{
		`genui_model_tokens_total{direction="in"} 0`,
		`genui_model_tokens_total{direction="out"} 0`,
		`genui_surfaces_total{outcome="streamed"} 0`,
		`genui_surfaces_total{outcome="rejected"} 0`,
		`genui_surfaces_total{outcome="repaired"} 0`,
		`genui_client_tool_calls_total 0`,
		`genui_time_to_first_surface_seconds_count 0`,
		`genui_stream_duration_seconds_count 0`,
	} {
		hasLine(t, text, l)
	}
	fams := parse(t, text)
	// Vectors with no child yet are not exposed.
	if _, ok := fams["genui_http_requests_total"]; ok {
		t.Error("genui_http_requests_total exposed before any request")
	}
	// Two registries do not share values.
	m.Limited("rate")
	if strings.Contains(scrape(t, New().Handler()), "genui_limited_total") {
		t.Error("a new Metrics sees another's values")
	}
}

func TestExposition(t *testing.T) {
	m := New()
	m.Request("/generateUi", "ndjson", 200, 250*time.Millisecond)
	m.Request("/generateUi", "ndjson", 200, 250*time.Millisecond)
	m.Request("/generateUi", "sse", 429, time.Millisecond)
	m.Turn("ok", 12, 30, 2)
	m.Turn("RESOURCE_EXHAUSTED", 0, 0, 0)
	m.FirstSurface(300 * time.Millisecond)
	m.Stream(3 * time.Second)
	m.Stream(4 * time.Second)
	m.ModelCall("googleai", 800*time.Millisecond, "")
	m.ModelCall("googleai", 2*time.Second, "UNAVAILABLE")
	m.ModelCall("openai", time.Second, "")
	m.ModelRetry("googleai")
	m.ModelFallback("googleai/gemini-2.5-flash", "compat/gpt-4.1-mini", "rate_limited")
	m.ModelFallback("googleai/gemini-2.5-flash", "compat/gpt-4.1-mini", "rate_limited")
	m.ModelFallback("compat/gpt-4.1-mini", "genui/offline", "connection")
	m.Surfaces("streamed", 3)
	m.Surfaces("rejected", 1)
	m.Surfaces("repaired", 0) // nothing
	m.Surfaces("repaired", -1)
	m.Limited("rate")
	m.Limited("rate")
	m.Limited("streams")

	var open atomic.Int64
	open.Store(4)
	m.Gauge("genui_open_streams", "Turns streaming in this process.", func() float64 { return float64(open.Load()) })
	m.Gauge("genui_open_connections", "Open WebSocket connections.", func() float64 { return 2 }, "transport", "ws")
	m.Counter("genui_redis_errors_total", "Failed Redis commands.", func() float64 { return 5 })
	m.Counter("genui_catalog_cache_lookups_total", "Catalog cache lookups.", func() float64 { return 7 }, "result", "hit")

	text := scrape(t, m.Handler())
	for _, l := range []string{
		`genui_http_requests_total{code="200",route="/generateUi",transport="ndjson"} 2`,
		`genui_http_requests_total{code="429",route="/generateUi",transport="sse"} 1`,
		`genui_http_request_duration_seconds_count{route="/generateUi",transport="ndjson"} 2`,
		`genui_http_request_duration_seconds_sum{route="/generateUi",transport="ndjson"} 0.5`,
		`genui_http_request_duration_seconds_bucket{route="/generateUi",transport="ndjson",le="0.1"} 0`,
		`genui_http_request_duration_seconds_bucket{route="/generateUi",transport="ndjson",le="0.25"} 2`,
		`genui_http_request_duration_seconds_bucket{route="/generateUi",transport="ndjson",le="+Inf"} 2`,
		`genui_http_request_duration_seconds_count{route="/generateUi",transport="sse"} 1`,
		`genui_turns_total{status="ok"} 1`,
		`genui_turns_total{status="RESOURCE_EXHAUSTED"} 1`,
		`genui_model_tokens_total{direction="in"} 12`,
		`genui_model_tokens_total{direction="out"} 30`,
		`genui_client_tool_calls_total 2`,
		`genui_time_to_first_surface_seconds_count 1`,
		`genui_time_to_first_surface_seconds_bucket{le="0.25"} 0`,
		`genui_time_to_first_surface_seconds_bucket{le="0.5"} 1`,
		`genui_time_to_first_surface_seconds_bucket{le="120"} 1`,
		`genui_stream_duration_seconds_count 2`,
		`genui_stream_duration_seconds_sum 7`,
		`genui_model_request_duration_seconds_count{provider="googleai"} 2`,
		`genui_model_request_duration_seconds_count{provider="openai"} 1`,
		`genui_model_errors_total{provider="googleai",status="UNAVAILABLE"} 1`,
		`genui_model_retries_total{provider="googleai"} 1`,
		`genui_model_fallbacks_total{from="googleai/gemini-2.5-flash",reason="rate_limited",to="compat/gpt-4.1-mini"} 2`,
		`genui_model_fallbacks_total{from="compat/gpt-4.1-mini",reason="connection",to="genui/offline"} 1`,
		`# TYPE genui_model_fallbacks_total counter`,
		`genui_surfaces_total{outcome="streamed"} 3`,
		`genui_surfaces_total{outcome="rejected"} 1`,
		`genui_surfaces_total{outcome="repaired"} 0`,
		`genui_limited_total{limit="rate"} 2`,
		`genui_limited_total{limit="streams"} 1`,
		`genui_open_streams 4`,
		`genui_open_connections{transport="ws"} 2`,
		`genui_redis_errors_total 5`,
		`genui_catalog_cache_lookups_total{result="hit"} 7`,
		`# TYPE genui_http_requests_total counter`,
		`# TYPE genui_http_request_duration_seconds histogram`,
		`# TYPE genui_open_streams gauge`,
		`# TYPE genui_redis_errors_total counter`,
	} {
		hasLine(t, text, l)
	}
	// A successful model call is not an error.
	if strings.Contains(text, `genui_model_errors_total{provider="openai"`) {
		t.Error("a successful call counted as an error")
	}
	if strings.Contains(text, `genui_model_retries_total{provider="openai"`) {
		t.Error("a retry counted for openai")
	}

	fams := parse(t, text)
	wantTypes := map[string]dto.MetricType{
		"genui_http_requests_total":            dto.MetricType_COUNTER,
		"genui_http_request_duration_seconds":  dto.MetricType_HISTOGRAM,
		"genui_turns_total":                    dto.MetricType_COUNTER,
		"genui_time_to_first_surface_seconds":  dto.MetricType_HISTOGRAM,
		"genui_stream_duration_seconds":        dto.MetricType_HISTOGRAM,
		"genui_model_request_duration_seconds": dto.MetricType_HISTOGRAM,
		"genui_model_errors_total":             dto.MetricType_COUNTER,
		"genui_model_retries_total":            dto.MetricType_COUNTER,
		"genui_model_fallbacks_total":          dto.MetricType_COUNTER,
		"genui_model_tokens_total":             dto.MetricType_COUNTER,
		"genui_surfaces_total":                 dto.MetricType_COUNTER,
		"genui_client_tool_calls_total":        dto.MetricType_COUNTER,
		"genui_limited_total":                  dto.MetricType_COUNTER,
		"genui_open_streams":                   dto.MetricType_GAUGE,
		"genui_open_connections":               dto.MetricType_GAUGE,
		"genui_redis_errors_total":             dto.MetricType_COUNTER,
		"genui_catalog_cache_lookups_total":    dto.MetricType_COUNTER,
	}
	for name, typ := range wantTypes {
		f, ok := fams[name]
		if !ok {
			t.Errorf("family %s missing", name)
			continue
		}
		if f.GetType() != typ {
			t.Errorf("family %s is a %v, want %v", name, f.GetType(), typ)
		}
	}
	var goFams, processFams int
	for name, f := range fams {
		if len(f.GetMetric()) == 0 {
			t.Errorf("family %s has no metric", name)
		}
		switch {
		case strings.HasPrefix(name, "genui_"):
			if strings.TrimSpace(f.GetHelp()) == "" {
				t.Errorf("family %s has no HELP", name)
			}
			if _, ok := wantTypes[name]; !ok {
				t.Errorf("unexpected family %s", name)
			}
		case strings.HasPrefix(name, "go_"):
			goFams++
		case strings.HasPrefix(name, "process_"):
			processFams++
		}
	}
	if goFams == 0 {
		t.Error("no go_ metrics")
	}
	if _, ok := fams["go_goroutines"]; !ok {
		t.Error("no go_goroutines")
	}
	if processFams == 0 {
		t.Error("no process_ metrics")
	}

	// Parsed values agree with the lines.
	h := fams["genui_model_request_duration_seconds"]
	for _, mt := range h.GetMetric() {
		if label(mt, "provider") == "googleai" {
			if c := mt.GetHistogram().GetSampleCount(); c != 2 {
				t.Errorf("googleai model calls: count %d, want 2", c)
			}
			if s := mt.GetHistogram().GetSampleSum(); math.Abs(s-2.8) > 1e-9 {
				t.Errorf("googleai model calls: sum %g, want 2.8", s)
			}
		}
	}

	// Function-backed metrics are read at each scrape.
	open.Store(9)
	hasLine(t, scrape(t, m.Handler()), `genui_open_streams 9`)
}

func label(m *dto.Metric, name string) string {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue()
		}
	}
	return ""
}

func TestConcurrentRecording(t *testing.T) {
	m := New()
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 50 {
				m.Request("/r", "json", 200, time.Millisecond)
				m.Turn("ok", 1, 1, 0)
				m.Surfaces("streamed", 1)
				m.Limited("turns")
			}
		}()
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for range 5 {
			req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
			rec := httptest.NewRecorder()
			m.Handler().ServeHTTP(rec, req)
		}
	}()
	wg.Wait()
	<-done
	text := scrape(t, m.Handler())
	for _, l := range []string{
		`genui_http_requests_total{code="200",route="/r",transport="json"} 1000`,
		`genui_model_tokens_total{direction="in"} 1000`,
		`genui_surfaces_total{outcome="streamed"} 1000`,
		`genui_limited_total{limit="turns"} 1000`,
		`genui_turns_total{status="ok"} 1000`,
	} {
		hasLine(t, text, l)
	}
	parse(t, text)
}

func TestGatherer(t *testing.T) {
	m := New()
	m.Limited("conversations")
	m.Gauge("genui_waiting_turns", "help", func() float64 { return 2 }, "reason", "client_tools")
	fams, err := m.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fams {
		for _, mt := range f.GetMetric() {
			switch {
			case mt.GetCounter() != nil:
				got[f.GetName()] += mt.GetCounter().GetValue()
			case mt.GetGauge() != nil:
				got[f.GetName()] += mt.GetGauge().GetValue()
			}
		}
	}
	if got["genui_limited_total"] != 1 || got["genui_waiting_turns"] != 2 || got["go_goroutines"] == 0 {
		t.Fatalf("gathered %v", got)
	}
}
