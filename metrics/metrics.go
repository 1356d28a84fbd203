package metrics

import (
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics holds the service's metrics, in a registry of its own.
type Metrics struct {
	reg *prometheus.Registry

	requests        *prometheus.CounterVec
	requestDuration *prometheus.HistogramVec
	turns           *prometheus.CounterVec
	firstSurface    prometheus.Histogram
	streamDuration  prometheus.Histogram
	modelDuration   *prometheus.HistogramVec
	modelErrors     *prometheus.CounterVec
	modelRetries    *prometheus.CounterVec
	modelFallbacks  *prometheus.CounterVec
	tokens          *prometheus.CounterVec
	callerTokens    *prometheus.CounterVec
	surfaces        *prometheus.CounterVec
	clientCalls     prometheus.Counter
	limited         *prometheus.CounterVec
	policy          *prometheus.CounterVec
	turnLimits      *prometheus.CounterVec

	// Children looked up once: a request or a turn records without hashing labels.
	tokensIn, tokensOut                   prometheus.Counter
	streamed, rejected, repaired, turnsOK prometheus.Counter
	requestChildren                       sync.Map // requestKey → *requestChild
	modelChildren                         sync.Map // provider → prometheus.Observer
	tokenChildren                         sync.Map // tokenKey → *tokenChild
}

type tokenKey struct{ caller, model string }

type tokenChild struct{ input, output prometheus.Counter }

type requestKey struct {
	route, transport string
	code             int
}

type requestChild struct {
	count    prometheus.Counter
	duration prometheus.Observer
}

// latency buckets, seconds: 5 ms to 2 min.
var buckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 20, 30, 60, 120}

// New returns the service's metrics, with the Go runtime's and the process's.
func New() *Metrics {
	m := &Metrics{reg: prometheus.NewRegistry()}
	f := func(c prometheus.Collector) { m.reg.MustRegister(c) }
	f(collectors.NewGoCollector())
	f(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "genui_http_requests_total", Help: "HTTP requests answered, by route, transport and status code."}, []string{"route", "transport", "code"})
	m.requestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "genui_http_request_duration_seconds", Help: "Time to answer an HTTP request, a streamed response to its end.", Buckets: buckets}, []string{"route", "transport"})
	m.turns = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "genui_turns_total", Help: "Turns ended, by status: ok, or the error's canonical status."}, []string{"status"})
	m.firstSurface = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "genui_time_to_first_surface_seconds", Help: "Time from a streamed turn's start to its first UI (surface or A2UI message).", Buckets: buckets})
	m.streamDuration = prometheus.NewHistogram(prometheus.HistogramOpts{Name: "genui_stream_duration_seconds", Help: "Time from a streamed turn's start to its end.", Buckets: buckets})
	m.modelDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "genui_model_request_duration_seconds", Help: "Duration of one model call, by provider.", Buckets: buckets}, []string{"provider"})
	m.modelErrors = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "genui_model_errors_total", Help: "Model calls that failed, by provider and canonical status."}, []string{"provider", "status"})
	m.modelRetries = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "genui_model_retries_total", Help: "Model calls retried after a rate limit or unavailability, by provider."}, []string{"provider"})
	m.modelFallbacks = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "genui_model_fallbacks_total", Help: "Model calls passed from one model of the chain to the next, by the models' names and the reason: rate_limited, unavailable, connection, timeout."}, []string{"from", "to", "reason"})
	m.tokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "genui_model_tokens_total", Help: "Model tokens, by direction: in (prompt) or out (generated)."}, []string{"direction"})
	m.callerTokens = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "genui_tokens_total", Help: "Model tokens, as the provider counted them, by caller (an id the configuration names, else anonymous or other), the model that served the call, and kind: input or output."}, []string{"caller", "model", "kind"})
	m.surfaces = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "genui_surfaces_total", Help: "UI the model produced, by outcome: streamed (valid, sent), rejected (invalid, not sent), repaired (rejected, then fixed by the model)."}, []string{"outcome"})
	m.clientCalls = prometheus.NewCounter(prometheus.CounterOpts{Name: "genui_client_tool_calls_total", Help: "Calls of client tools sent to clients."})
	m.policy = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "genui_policy_violations_total", Help: "What the model wrote that the UI policy refused (and no client received), by rule: unsafe_url, function_not_allowed, inaccessible, sensitive_input."}, []string{"rule"})
	m.turnLimits = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "genui_turn_limits_total", Help: "Turns that ended at a limit on what a model may write, by limit: maxOutputTokens, components, outputBytes, toolCalls, dataModelBytes, turnTime."}, []string{"limit"})
	m.limited = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "genui_limited_total", Help: "Requests refused by a limit: rate, streams, turns, catalogs, sessions, conversations."}, []string{"limit"})
	for _, c := range []prometheus.Collector{m.requests, m.requestDuration, m.turns, m.firstSurface, m.streamDuration, m.modelDuration, m.modelErrors, m.modelRetries, m.modelFallbacks, m.tokens, m.callerTokens, m.surfaces, m.clientCalls, m.limited, m.policy, m.turnLimits} {
		f(c)
	}
	m.streamed, m.rejected, m.repaired = m.surfaces.WithLabelValues("streamed"), m.surfaces.WithLabelValues("rejected"), m.surfaces.WithLabelValues("repaired")
	m.tokensIn, m.tokensOut = m.tokens.WithLabelValues("in"), m.tokens.WithLabelValues("out")
	m.turnsOK = m.turns.WithLabelValues("ok")
	return m
}

// Gatherer returns the registry of the metrics: what Handler serves.
func (m *Metrics) Gatherer() prometheus.Gatherer { return m.reg }

// Handler serves the metrics in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{Registry: m.reg})
}

// Gauge adds a gauge whose value fn returns at each scrape; labels, when given, are
// constant label pairs (name, value, …).
func (m *Metrics) Gauge(name, help string, fn func() float64, labels ...string) {
	if m == nil {
		return
	}
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help, ConstLabels: pairs(labels)}, fn))
}

// Counter adds a counter whose value fn returns at each scrape.
func (m *Metrics) Counter(name, help string, fn func() float64, labels ...string) {
	if m == nil {
		return
	}
	m.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help, ConstLabels: pairs(labels)}, fn))
}

func pairs(kv []string) prometheus.Labels {
	if len(kv) == 0 {
		return nil
	}
	l := prometheus.Labels{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[kv[i]] = kv[i+1]
	}
	return l
}

// Request records an answered HTTP request.
func (m *Metrics) Request(route, transport string, code int, took time.Duration) {
	if m == nil {
		return
	}
	k := requestKey{route, transport, code}
	c, ok := m.requestChildren.Load(k)
	if !ok {
		c, _ = m.requestChildren.LoadOrStore(k, &requestChild{
			count:    m.requests.WithLabelValues(route, transport, strconv.Itoa(code)),
			duration: m.requestDuration.WithLabelValues(route, transport),
		})
	}
	rc := c.(*requestChild)
	rc.count.Inc()
	rc.duration.Observe(took.Seconds())
}

// Turn records a turn's end: its status ("ok" or an error's), its tokens and the calls of
// client tools it sent.
func (m *Metrics) Turn(status string, tokensIn, tokensOut, clientCalls int) {
	if m == nil {
		return
	}
	if status == "ok" {
		m.turnsOK.Inc()
	} else {
		m.turns.WithLabelValues(status).Inc()
	}
	m.tokensIn.Add(float64(tokensIn))
	m.tokensOut.Add(float64(tokensOut))
	if clientCalls > 0 {
		m.clientCalls.Add(float64(clientCalls))
	}
}

// Tokens records the tokens of a model call of caller served by model.
func (m *Metrics) Tokens(caller, model string, input, output int) {
	if m == nil || (input == 0 && output == 0) {
		return
	}
	k := tokenKey{caller, model}
	c, ok := m.tokenChildren.Load(k)
	if !ok {
		c, _ = m.tokenChildren.LoadOrStore(k, &tokenChild{
			input:  m.callerTokens.WithLabelValues(caller, model, "input"),
			output: m.callerTokens.WithLabelValues(caller, model, "output"),
		})
	}
	tc := c.(*tokenChild)
	tc.input.Add(float64(input))
	tc.output.Add(float64(output))
}

// FirstSurface records the time from a streamed turn's start to its first UI.
func (m *Metrics) FirstSurface(d time.Duration) {
	if m != nil {
		m.firstSurface.Observe(d.Seconds())
	}
}

// Stream records a streamed turn's duration.
func (m *Metrics) Stream(d time.Duration) {
	if m != nil {
		m.streamDuration.Observe(d.Seconds())
	}
}

// ModelCall records one model call; status is "" when it succeeded.
func (m *Metrics) ModelCall(provider string, d time.Duration, status string) {
	if m == nil {
		return
	}
	o, ok := m.modelChildren.Load(provider)
	if !ok {
		o, _ = m.modelChildren.LoadOrStore(provider, m.modelDuration.WithLabelValues(provider))
	}
	o.(prometheus.Observer).Observe(d.Seconds())
	if status != "" {
		m.modelErrors.WithLabelValues(provider, status).Inc()
	}
}

// ModelRetry records a retried model call.
func (m *Metrics) ModelRetry(provider string) {
	if m != nil {
		m.modelRetries.WithLabelValues(provider).Inc()
	}
}

// FallbackReasons are the reasons a model call passes to the next model of a chain.
var FallbackReasons = []string{"rate_limited", "unavailable", "connection", "timeout"}

// ModelFallback records a model call that the model from could not serve, for reason
// (one of [FallbackReasons]), passed to the model to. The names come from the
// configuration, so the labels stay bounded.
func (m *Metrics) ModelFallback(from, to, reason string) {
	if m != nil {
		m.modelFallbacks.WithLabelValues(from, to, reason).Inc()
	}
}

// Surfaces records UI by outcome: streamed, rejected or repaired.
func (m *Metrics) Surfaces(outcome string, n int) {
	if m == nil || n <= 0 {
		return
	}
	switch outcome {
	case "streamed":
		m.streamed.Add(float64(n))
	case "rejected":
		m.rejected.Add(float64(n))
	case "repaired":
		m.repaired.Add(float64(n))
	default:
		m.surfaces.WithLabelValues(outcome).Add(float64(n))
	}
}

// Limited records a request refused by limit.
func (m *Metrics) Limited(limit string) {
	if m != nil {
		m.limited.WithLabelValues(limit).Inc()
	}
}

// PolicyViolation records one thing the model wrote that the UI policy refused, by the
// rule it broke.
func (m *Metrics) PolicyViolation(rule string) {
	if m != nil {
		m.policy.WithLabelValues(rule).Inc()
	}
}

// TurnLimit records a turn that ended at a limit on what its model may write.
func (m *Metrics) TurnLimit(limit string) {
	if m != nil {
		m.turnLimits.WithLabelValues(limit).Inc()
	}
}
