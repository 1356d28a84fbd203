// Command genui-server serves GenUI generation over HTTP: the genui_server contract
// (POST /startSession, POST /generateUi) with Genkit SSE, NDJSON and JSON responses,
// A2UI turns (POST /generateA2ui), and an A2A agent (the card at
// /.well-known/agent-card.json, JSON-RPC at /a2a).
//
// Every flag has an environment equivalent; run with --help for the list.
package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/firebase/genkit/go/genkit"
	"github.com/redis/go-redis/v9"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/a2aapi"
	"github.com/genuiserver/genui/genui/aguiapi"
	"github.com/genuiserver/genui/genui/durable"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/mcpapi"
	"github.com/genuiserver/genui/genui/models"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/genui/reflection"
	"github.com/genuiserver/genui/genui/wsapi"
	"github.com/genuiserver/genui/internal/redisconn"
	"github.com/genuiserver/genui/internal/rediserr"
	"github.com/genuiserver/genui/internal/reqlog"
	"github.com/genuiserver/genui/internal/sessionhub"
	"github.com/genuiserver/genui/internal/telemetry"
	"github.com/genuiserver/genui/metrics"
	"github.com/genuiserver/genui/policy"
	"github.com/genuiserver/genui/quota"
	"github.com/genuiserver/genui/session"
	"github.com/genuiserver/genui/web"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return
		}
		fmt.Fprintln(os.Stderr, "genui-server:", err)
		var ce *configError
		if errors.As(err, &ce) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &configError{err}
	}
	log, err := newLogger(cfg, stderr)
	if err != nil {
		return err
	}
	// Every line logged with a request's context names the request, Genkit's included.
	log = slog.New(reqlog.Handler(log.Handler()))
	slog.SetDefault(log)
	// go-redis's own lines too, with the request id when it logs with a request's context.
	redis.SetLogger(reqlog.Printf{Lib: "go-redis", Prefix: "redis: ", Level: slog.LevelWarn})

	// OTLP trace export, Genkit's spans included, when OTEL_EXPORTER_OTLP_ENDPOINT is set:
	// before Genkit starts, so that its spans use the exporting provider.
	stopTraces, err := telemetry.Setup(ctx, getenv)
	if err != nil {
		return &configError{err}
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := stopTraces(sctx); err != nil {
			log.Warn("flushing traces failed", "err", err)
		}
	}()
	authn, err := newAuthenticator(ctx, cfg)
	if err != nil {
		return &configError{err}
	}
	met := metrics.New()

	// --model is one model or a fallback chain; the first is the default of Genkit's tools.
	chain, err := models.ParseChain(cfg.model)
	if err != nil {
		return &configError{fmt.Errorf("--model: %w", err)}
	}
	model := chain[0]
	plugins, err := models.Plugins(model)
	if err == nil {
		for _, name := range chain[1:] {
			if _, err = models.Plugins(name); err != nil {
				break
			}
		}
	}
	if err != nil {
		// Checked with the configuration; the environment may have changed since.
		return &configError{fmt.Errorf("--model: %w", err)}
	}
	// Genkit is initialised without its own Reflection V2 client: reflection.Start below is
	// the one the Genkit CLI sees.
	g := reflection.InitGenkit(context.Background(), genkit.WithPlugins(plugins...), genkit.WithDefaultModel(model))
	chainOpts := []models.ChainOption{models.WithModelOptions(models.WithUnencryptedHTTP2(cfg.modelH2C)),
		models.WithBreaker(cfg.breaker), models.WithChainMetrics(met)}
	// A chain anywhere (--model, a caller's model, a breaker) makes every model retry on
	// its own: the service's retries are then off.
	chained := models.NeedsChain(chain, chainOpts...)
	for _, id := range cfg.callers.ids() {
		chained = chained || len(cfg.callers.get(id).chain) > 1
	}
	pool := models.NewPool(g, model, chained, log, chainOpts...)
	m, err := pool.Get(ctx, chain)
	if err != nil {
		return err
	}
	modelOpts, err := chooseModels(ctx, cfg, pool, chain, m)
	if err != nil {
		return err
	}
	catalogs := catalog.NewCache(cfg.catalogCache, int(cfg.catalogLimit), int(cfg.catalogBytes))
	var store session.Store = session.NewMemory(cfg.sessions, cfg.sessionTTL)
	// Each caller's conversations are counted by the store (in Redis, for every replica).
	convLimit := conversation.WithCallerLimit(cfg.callerConvs, func(ctx context.Context) string { return auth.FromContext(ctx).LimitKey() })
	var convs conversation.Store = conversation.NewMemory(cfg.convs, int(cfg.convBytes), cfg.convTTL, convLimit)
	tasks := a2aapi.NewMemoryTasks(cfg.convs, cfg.convTTL)
	var streamLog durable.Log = durable.NewMemoryLog(cfg.retention, durable.WithMaxBytes(int(cfg.streamMemory)))
	var quotaOpts []quota.Option
	var mcpOpts []mcpapi.Option
	if rc := cfg.redis(); rc.Set() {
		client, err := redisconn.Open(rc)
		if err != nil {
			return &configError{err}
		}
		defer client.Close()
		n, wait := cfg.redisWaitReplicas, cfg.redisWaitTimeout
		store = session.NewRedis(client, catalogs, cfg.sessionTTL, session.WithNearCacheSize(cfg.sessions), session.WithReplicaAcks(n, wait))
		streamLog = durable.NewRedisLog(client, cfg.retention, durable.WithReplicaAcks(n, wait))
		convs = conversation.NewRedis(client, cfg.convTTL, convLimit, conversation.WithReplicaAcks(n, wait))
		tasks = a2aapi.NewRedisTasks(client, cfg.convTTL, "genui:", a2aapi.TaskAcks{Replicas: n, Timeout: wait})
		// Every replica counts each caller's rate, streams, catalogs and sessions as one.
		quotaOpts = append(quotaOpts, quota.WithRedis(client, "genui:limit:"))
		mcpOpts = append(mcpOpts, mcpapi.WithTurns(mcpapi.NewRedisTurns(client, "genui:")))
		log.Info("sessions, conversations, A2A tasks and streams are shared through Redis", "redis", redisconn.Describe(rc))
	}
	svcOpts := append([]genui.Option{genui.WithPolicy(cfg.policies.Default.Active()), genui.WithLimits(cfg.limits()),
		genui.WithTokenBudget(int64(cfg.tokenBudget))}, modelOpts...)
	if chained {
		// The chain retries each of its models itself, before passing a call on.
		svcOpts = append(svcOpts, genui.WithRetry(0, 0))
	}
	for _, id := range cfg.policies.Callers() {
		svcOpts = append(svcOpts, genui.WithCallerPolicy(id, cfg.policies.For(id).Active()))
	}
	svc, err := genui.New(g, m, append(svcOpts,
		genui.WithStore(store),
		genui.WithConversations(convs),
		genui.WithCatalogs(catalogs),
		genui.WithStreams(streamLog),
		genui.WithGrace(cfg.grace),
		genui.WithMaxRepairs(cfg.maxRepairs),
		genui.WithQuota(quota.New(quota.Limits{Rate: cfg.rateLimit, Burst: cfg.rateBurst, Streams: cfg.callerStreams, Turns: cfg.maxTurns,
			Catalogs: cfg.callerCatalogs, Sessions: cfg.callerSessions, Conversations: cfg.callerConvs}, append(quotaOpts, quota.WithTokenWindow(cfg.tokenWindow))...)),
		genui.WithMetrics(met),
		genui.WithLogger(log))...)
	if err != nil {
		return err
	}
	logPolicy(log, cfg.policies)
	// The Genkit Dev UI: on only under `genkit start --experimental-reflection-v2`; it connects
	// in the background and never delays serving.
	devUI, err := reflection.Start(ctx, g, reflection.WithName("genui-server"), reflection.WithLogger(log),
		reflection.WithActions("/model/"+offline.Name))
	if err != nil {
		log.Warn("Genkit Dev UI disabled", "err", err)
	}
	defer devUI.Close()
	origins := cfg.origins()
	agent := a2aapi.New(svc,
		a2aapi.WithSecuritySchemes(authn.Schemes()...),
		a2aapi.WithTaskStore(tasks),
		a2aapi.WithPublicURL(cfg.publicURL),
		a2aapi.WithKeepalive(cfg.keepalive),
		a2aapi.WithBodyLimit(int64(cfg.bodyLimit)),
		a2aapi.WithLogger(log))
	agui := aguiapi.New(svc,
		aguiapi.WithKeepalive(cfg.sseKeepalive),
		aguiapi.WithBodyLimit(int64(cfg.bodyLimit)),
		aguiapi.WithLogger(log))
	mcpServer := mcpapi.New(svc, append(mcpOpts, mcpapi.WithLogger(log))...)
	hub := sessionhub.New(svc, cfg.reconnect, log, sessionhub.WithGrace(cfg.grace))
	defer hub.Close()
	wsServer := wsapi.New(svc,
		wsapi.WithHub(hub),
		wsapi.WithReadLimit(int64(cfg.bodyLimit)),
		wsapi.WithLimits(cfg.wsSessions, cfg.wsTurns, 64),
		wsapi.WithOrigins(origins...),
		wsapi.WithLogger(log))
	// One server: the HTTP API's routes and every transport's, behind one middleware stack.
	handler := httpapi.New(svc,
		httpapi.WithReadiness(agent.Ready),
		httpapi.WithModels(chain...),
		httpapi.WithKeepalive(cfg.keepalive),
		httpapi.WithSSEKeepalive(cfg.sseKeepalive),
		httpapi.WithBodyLimit(int64(cfg.bodyLimit)),
		httpapi.WithAllowOrigins(origins...),
		httpapi.WithAuth(authn),
		httpapi.WithTrustedProxies(cfg.proxies()...),
		httpapi.WithMetrics(met, cfg.metricsAddr == ""),
		httpapi.WithPage(web.Handler()),
		httpapi.WithLogger(log),
		httpapi.WithRoutes(agent.Routes()...),
		httpapi.WithRoutes(agui.Routes()...),
		httpapi.WithRoutes(mcpServer.Routes()...),
		httpapi.WithRoutes(wsServer.Routes()...))

	registerGauges(met, gaugeSources{turns: svc, catalogs: catalogs, hub: hub, ws: wsServer.JSONRPC(), yield: wsServer.Yield(), convs: convs})
	if cfg.metricsAddr != "" {
		stopMetrics, err := serveMetrics(cfg.metricsAddr, met, log)
		if err != nil {
			return err
		}
		defer stopMetrics()
	}
	if cfg.pprofAddr != "" {
		stopPprof, err := servePprof(cfg.pprofAddr, log)
		if err != nil {
			return err
		}
		defer stopPprof()
	}
	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 2 * time.Minute}
	srv.RegisterOnShutdown(wsServer.Shutdown)
	if model == offline.Name {
		log.Warn("using the built-in offline model: a deterministic generator, NOT an LLM; set GEMINI_API_KEY or GENUI_MODEL for a real model")
	}
	if authn.Enabled() {
		log.Info("authentication on: requests need an API key or a JWT", "schemes", len(authn.Schemes()))
		if err := authn.Ready(ctx); err != nil {
			log.Warn("JWT bearer tokens cannot be verified yet", "err", err)
		}
	} else {
		log.Warn("authentication off: anyone who reaches the port may start turns; set --api-keys-file, GENUI_API_KEYS or a JWT verifier")
	}
	log.Info("genui-server listening", "addr", ln.Addr().String(), "model", model, "models", strings.Join(chain, ","), "breaker", cfg.breaker.String())

	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	log.Info("shutting down: draining in-flight requests", "timeout", cfg.drain)
	dctx, cancel := context.WithTimeout(context.Background(), cfg.drain)
	defer cancel()
	if err := srv.Shutdown(dctx); err != nil {
		log.Warn("drain timeout reached; closing remaining connections", "err", err)
		_ = srv.Close()
	}
	// Turns whose clients left but are still within their grace period.
	svc.Shutdown(dctx)
	<-errc
	log.Info("stopped")
	return nil
}

// newAuthenticator makes the authenticator the configuration asks for: off when it names
// no key and no JWT verifier.
func newAuthenticator(ctx context.Context, cfg *config) (*auth.Authenticator, error) {
	var opts []auth.Option
	if cfg.apiKeysFile != "" {
		opts = append(opts, flagged("--api-keys-file", auth.WithAPIKeysFile(cfg.apiKeysFile)))
	}
	if cfg.apiKeys != "" {
		opts = append(opts, flagged("GENUI_API_KEYS", auth.WithAPIKeysList(cfg.apiKeys)))
	}
	switch {
	case cfg.jwtJWKSURL != "":
		opts = append(opts, flagged("--jwt-jwks-url", auth.WithJWKS(ctx, cfg.jwtJWKSURL)))
	case cfg.jwtKeyFile != "":
		pem, err := os.ReadFile(cfg.jwtKeyFile)
		if err != nil {
			return nil, fmt.Errorf("--jwt-key-file: %w", err)
		}
		opts = append(opts, flagged("--jwt-key-file", auth.WithJWTPublicKey(pem)))
	case cfg.jwtSecretFile != "":
		secret, err := os.ReadFile(cfg.jwtSecretFile)
		if err != nil {
			return nil, fmt.Errorf("--jwt-secret-file: %w", err)
		}
		opts = append(opts, flagged("--jwt-secret-file", auth.WithJWTSecret(secret)))
	}
	if cfg.jwtIssuer != "" {
		opts = append(opts, auth.WithIssuer(cfg.jwtIssuer))
	}
	if cfg.jwtAudience != "" {
		opts = append(opts, auth.WithAudience(cfg.jwtAudience))
	}
	return auth.New(opts...)
}

// gaugeSources are the parts of the server whose state the gauges read at each scrape.
type gaugeSources struct {
	turns    interface{ Running() int } // the service
	catalogs interface {
		Counts() (hits, misses int64)
		Len() (count, bytes int)
	}
	hub       interface{ Waiting() int }
	ws, yield interface{ Conns() int }
	convs     conversation.Store
}

// waitingHelp is the help of genui_waiting_turns, whose series each reason registers.
const waitingHelp = "Turns waiting, by reason: client_tools (held conversations and WebSocket sessions whose last turn ended with calls of client tools without a result, in the conversation store: with Redis, those of every replica), no_reader (turns of this process in their grace period, streaming with no client reading)."

// registerGauges adds the metrics read from the server's parts at each scrape.
func registerGauges(m *metrics.Metrics, src gaugeSources) {
	m.Gauge("genui_open_streams", "Turns streaming in this process.", func() float64 { return float64(src.turns.Running()) })
	m.Gauge("genui_open_connections", "Open WebSocket connections, by transport.", func() float64 { return float64(src.ws.Conns()) }, "transport", "ws")
	m.Gauge("genui_open_connections", "Open WebSocket connections, by transport.", func() float64 { return float64(src.yield.Conns()) }, "transport", "session")
	m.Gauge("genui_waiting_sessions", "WebSocket sessions without a connection, kept while they wait for their client.", func() float64 { return float64(src.hub.Waiting()) })
	if c, ok := src.convs.(conversation.Counter); ok {
		m.Gauge("genui_waiting_turns", waitingHelp, func() float64 {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			n, err := c.Waiting(ctx)
			if err != nil {
				return math.NaN() // the store cannot say now
			}
			return float64(n)
		}, "reason", "client_tools")
	}
	// Turns no client reads: a count the core keeps (genui.Service.Unread).
	if u, ok := src.turns.(interface{ Unread() int }); ok {
		m.Gauge("genui_waiting_turns", waitingHelp, func() float64 { return float64(u.Unread()) }, "reason", "no_reader")
	}
	m.Counter("genui_catalog_cache_lookups_total", "Lookups of catalogs requests carry, by result.", func() float64 { h, _ := src.catalogs.Counts(); return float64(h) }, "result", "hit")
	m.Counter("genui_catalog_cache_lookups_total", "Lookups of catalogs requests carry, by result.", func() float64 { _, mi := src.catalogs.Counts(); return float64(mi) }, "result", "miss")
	m.Gauge("genui_catalog_cache_bytes", "Estimated bytes of the compiled catalogs cached.", func() float64 { _, b := src.catalogs.Len(); return float64(b) })
	m.Counter("genui_redis_errors_total", "Failed Redis commands (the callers' own cancellations aside).", func() float64 { return float64(rediserr.Failures()) })
}

// serveMetrics serves /metrics on a listener of its own.
func serveMetrics(addr string, m *metrics.Metrics, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.Handler())
	srv := &http.Server{Handler: withHeaders(mux), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.Info("metrics listening", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}

// servePprof serves the profiling endpoints on their own listener, never on the API port.
func servePprof(addr string, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof-addr: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: withHeaders(mux), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.Info("pprof listening", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}

// withHeaders gives the responses of the listeners of their own (--metrics-addr,
// --pprof-addr) what the API listener's carry: the security headers, and an X-Request-Id
// (an incoming one when short and printable) that the request's log lines carry too.
func withHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := &reqlog.Info{ID: reqlog.ID(r.Header.Get("X-Request-Id")), Route: r.URL.Path}
		h := w.Header()
		h.Set("X-Request-Id", info.ID)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Content-Security-Policy", "frame-ancestors 'none'")
		if r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https" {
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		next.ServeHTTP(w, r.WithContext(reqlog.NewContext(r.Context(), info)))
	})
}

// logPolicy says at start-up what the UI policy lets through.
func logPolicy(log *slog.Logger, set *policy.Set) {
	p := set.Default
	var off []string
	for _, r := range policy.Rules() {
		if !p.On(r) {
			off = append(off, string(r))
		}
	}
	if p.Active() == nil {
		log.Warn("the UI policy is off: model-written URLs, functions and inputs reach clients unchecked")
		return
	}
	fns, listed := p.Functions()
	functions := "all of the catalog's"
	if listed {
		functions = strings.Join(fns, ",")
	}
	hosts := strings.Join(p.Hosts(), ",")
	if hosts == "" {
		hosts = "any"
	}
	log.Info("UI policy", "schemes", strings.Join(p.Schemes(), ","), "linkSchemes", strings.Join(p.LinkSchemes(), ","),
		"hosts", hosts, "functions", functions, "off", strings.Join(off, ","), "callers", len(set.Callers()))
}

// chooseModels returns the service's options of the models requests may name and of
// each caller's models and budget: --models-allowed (else the models of the chain), and
// the callers file's.
func chooseModels(ctx context.Context, cfg *config, pool *models.Pool, chain []string, m genui.Model) ([]genui.Option, error) {
	one := func(names []string) ([]genui.Model, error) {
		var ms []genui.Model
		for _, name := range names {
			m, err := pool.Get(ctx, []string{name})
			if err != nil {
				return nil, err
			}
			ms = append(ms, m)
		}
		return ms, nil
	}
	allowed := cfg.allowed
	if allowed == nil && len(chain) > 1 {
		allowed = chain[1:] // the first is the service's own model
	}
	ms, err := one(allowed)
	if err != nil {
		return nil, err
	}
	opts := []genui.Option{genui.WithModels(ms...)}
	for _, id := range cfg.callers.ids() {
		c := cfg.callers.get(id)
		if c.TokenBudget != nil {
			opts = append(opts, genui.WithCallerTokenBudget(id, *c.TokenBudget))
		}
		if c.chain == nil && c.allowed == nil {
			continue
		}
		var def genui.Model
		if c.chain != nil {
			if def, err = pool.Get(ctx, c.chain); err != nil {
				return nil, err
			}
		}
		ms, err := one(c.allowed)
		if err != nil {
			return nil, err
		}
		if c.ModelsAllowed != nil && len(ms) == 0 {
			ms = []genui.Model{cmp.Or(def, m)} // "modelsAllowed": []: its default only
		}
		opts = append(opts, genui.WithCallerModels(id, def, ms...))
	}
	return opts, nil
}
