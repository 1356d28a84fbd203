// Command genui-server serves GenUI generation over HTTP: the genui_server contract
// (POST /startSession, POST /generateUi) with Genkit SSE, NDJSON and JSON responses,
// A2UI turns (POST /generateA2ui), and an A2A agent (the card at
// /.well-known/agent-card.json, JSON-RPC at /a2a).
//
// Every flag has an environment equivalent; run with --help for the list.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/firebase/genkit/go/genkit"
	"github.com/redis/go-redis/v9"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/a2aapi"
	"github.com/genuiserver/genui/genui/aguiapi"
	"github.com/genuiserver/genui/genui/durable"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/models"
	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/genui/reflection"
	"github.com/genuiserver/genui/genui/wsapi"
	"github.com/genuiserver/genui/genui/yieldapi"
	"github.com/genuiserver/genui/internal/sessionhub"
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
		os.Exit(1)
	}
}

type config struct {
	addr         string
	model        string
	sessions     int
	sessionTTL   time.Duration
	convs        int
	convBytes    byteSize
	convTTL      time.Duration
	catalogCache int
	catalogBytes byteSize
	bodyLimit    byteSize
	catalogLimit byteSize
	cors         string
	logLevel     string
	logFormat    string
	maxRepairs   int
	drain        time.Duration
	retention    time.Duration
	streamMemory byteSize
	grace        time.Duration
	keepalive    time.Duration
	sseKeepalive time.Duration
	redisURL     string
	pprofAddr    string
	publicURL    string
	reconnect    time.Duration
	wsSessions   int
	wsTurns      int
}

// byteSize is a flag value accepting 1048576, 512KiB, 20MiB, 1GiB.
type byteSize int64

func (b *byteSize) String() string { return strconv.FormatInt(int64(*b), 10) }

func (b *byteSize) Set(s string) error {
	s = strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"B", 1}} {
		if strings.HasSuffix(s, u.suffix) {
			s, mult = strings.TrimSpace(strings.TrimSuffix(s, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return fmt.Errorf("invalid size %q (e.g. 1048576, 512KiB, 20MiB)", s)
	}
	*b = byteSize(n * mult)
	return nil
}

func parseConfig(args []string, getenv func(string) string, out io.Writer) (*config, error) {
	cfg := &config{bodyLimit: 20 << 20, catalogLimit: 2 << 20, catalogBytes: 64 << 20, streamMemory: 8 << 20, convBytes: 64 << 20}
	fs := flag.NewFlagSet("genui-server", flag.ContinueOnError)
	fs.SetOutput(out)
	env := map[string]string{}
	str := func(p *string, name, envName, def, usage string) {
		fs.StringVar(p, name, def, usage+" (env "+envName+")")
		env[name] = envName
	}
	integer := func(p *int, name, envName string, def int, usage string) {
		fs.IntVar(p, name, def, usage+" (env "+envName+")")
		env[name] = envName
	}
	duration := func(p *time.Duration, name, envName string, def time.Duration, usage string) {
		fs.DurationVar(p, name, def, usage+" (env "+envName+")")
		env[name] = envName
	}
	size := func(p *byteSize, name, envName, usage string) {
		fs.Var(p, name, usage+" (env "+envName+")")
		env[name] = envName
	}
	defAddr := ":3400"
	if p := getenv("PORT"); p != "" {
		defAddr = ":" + p
	}
	str(&cfg.addr, "addr", "GENUI_ADDR", defAddr, "listen address; PORT sets the port when this is unset")
	str(&cfg.model, "model", "GENUI_MODEL", "", "model: offline, googleai/<model>, vertexai/<model>, ollama/<model> or <provider>/<model> (OpenAI-compatible); default: googleai/gemini-2.5-flash with GEMINI_API_KEY/GOOGLE_API_KEY, vertexai/gemini-2.5-flash with GOOGLE_CLOUD_PROJECT, else offline")
	integer(&cfg.sessions, "sessions", "GENUI_SESSIONS", 10000, "most sessions kept in memory")
	duration(&cfg.sessionTTL, "session-ttl", "GENUI_SESSION_TTL", time.Hour, "idle time after which a session expires")
	integer(&cfg.convs, "conversations", "GENUI_CONVERSATIONS", 10000, "most conversations held in memory (requests with a conversationId; in-process only)")
	size(&cfg.convBytes, "conversation-memory", "GENUI_CONVERSATION_MEMORY", "most memory the conversations held in process may hold, least recently used dropped first (default 64MiB; 0: no bound)")
	duration(&cfg.convTTL, "conversation-ttl", "GENUI_CONVERSATION_TTL", time.Hour, "idle time after which a conversation the server holds expires (in Redis too)")
	integer(&cfg.catalogCache, "catalog-cache", "GENUI_CATALOG_CACHE", 1024, "most distinct compiled catalogs kept")
	size(&cfg.catalogBytes, "catalog-cache-bytes", "GENUI_CATALOG_CACHE_BYTES", "most memory the compiled catalogs kept may hold, by estimate; sessions keep the catalogs they use (default 64MiB; 0: no bound)")
	size(&cfg.bodyLimit, "body-limit", "GENUI_BODY_LIMIT", "largest request body (default 20MiB)")
	size(&cfg.catalogLimit, "catalog-limit", "GENUI_CATALOG_LIMIT", "largest catalog as compact JSON (default 2MiB)")
	str(&cfg.redisURL, "redis-url", "GENUI_REDIS_URL", "", "Redis URL (redis://host:6379/0) shared by replicas for sessions and durable streams; empty: in-process only")
	str(&cfg.publicURL, "public-url", "GENUI_PUBLIC_URL", "", "URL clients reach the server at (e.g. https://ui.example.com behind a proxy), of which the A2A agent card's URLs are made; empty: the Host of each card request")
	str(&cfg.pprofAddr, "pprof-addr", "GENUI_PPROF_ADDR", "", "serve net/http/pprof on this address (e.g. 127.0.0.1:6060); empty: off")
	str(&cfg.cors, "cors-origins", "GENUI_CORS_ORIGINS", "*", "comma-separated allowed CORS origins")
	str(&cfg.logLevel, "log-level", "GENUI_LOG_LEVEL", "info", "log level: debug, info, warn, error")
	str(&cfg.logFormat, "log-format", "GENUI_LOG_FORMAT", "text", "log format: text or json")
	integer(&cfg.maxRepairs, "max-repairs", "GENUI_MAX_REPAIRS", 2, "model calls allowed per turn to repair invalid UI")
	duration(&cfg.drain, "drain-timeout", "GENUI_DRAIN_TIMEOUT", 30*time.Second, "on SIGTERM, how long in-flight streams may take to finish")
	duration(&cfg.retention, "stream-retention", "GENUI_STREAM_RETENTION", 5*time.Minute, "how long a finished stream can be resumed")
	size(&cfg.streamMemory, "stream-memory", "GENUI_STREAM_MEMORY", "most memory finished streams kept for resuming may hold, oldest dropped first (default 8MiB; 0: no bound; in-process streams only)")
	duration(&cfg.grace, "stream-grace", "GENUI_STREAM_GRACE", 30*time.Second, "how long a turn goes on with no client attached before it is cancelled")
	duration(&cfg.reconnect, "reconnect-window", "GENUI_RECONNECT_WINDOW", 5*time.Minute, "how long a WebSocket session waiting for its client (/ws, /session/{id}) is kept after its connection dropped")
	integer(&cfg.wsSessions, "ws-sessions", "GENUI_WS_SESSIONS", 64, "most sessions one /ws connection may hold")
	integer(&cfg.wsTurns, "ws-turns", "GENUI_WS_TURNS", 16, "most turns one /ws connection may run at once")
	duration(&cfg.keepalive, "keepalive", "GENUI_KEEPALIVE", 15*time.Second, `interval of {"type":"keepalive"} NDJSON lines while the model is silent (0: off)`)
	duration(&cfg.sseKeepalive, "sse-keepalive", "GENUI_SSE_KEEPALIVE", 0, "interval of ': keepalive' SSE comments (0: off; Genkit clients cannot parse them)")
	fs.Usage = func() {
		fmt.Fprintln(out, "Usage: genui-server [flags]\n\nServes GenUI generation (POST /startSession, POST /generateUi). Flags:")
		fs.PrintDefaults()
	}
	// Environment first, flags override.
	for name, envName := range env {
		if v := getenv(envName); v != "" {
			if err := fs.Set(name, v); err != nil {
				return nil, fmt.Errorf("%s=%q: %w", envName, v, err)
			}
		}
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected arguments: %v", fs.Args())
	}
	if cfg.convTTL <= 0 {
		return nil, fmt.Errorf("--conversation-ttl must be positive, got %v", cfg.convTTL)
	}
	if cfg.reconnect <= 0 {
		return nil, fmt.Errorf("--reconnect-window must be positive, got %v", cfg.reconnect)
	}
	if cfg.wsSessions < 1 || cfg.wsTurns < 1 {
		return nil, fmt.Errorf("--ws-sessions and --ws-turns must be at least 1, got %d and %d", cfg.wsSessions, cfg.wsTurns)
	}
	return cfg, nil
}

func newLogger(cfg *config, out io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(cfg.logLevel)); err != nil {
		return nil, fmt.Errorf("log level %q: %w", cfg.logLevel, err)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch cfg.logFormat {
	case "json":
		return slog.New(slog.NewJSONHandler(out, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(out, opts)), nil
	}
	return nil, fmt.Errorf("log format %q: expected text or json", cfg.logFormat)
}

func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer) error {
	cfg, err := parseConfig(args, getenv, stderr)
	if err != nil {
		return err
	}
	log, err := newLogger(cfg, stderr)
	if err != nil {
		return err
	}
	slog.SetDefault(log)

	model := models.Resolve(cfg.model)
	plugins, err := models.Plugins(model)
	if err != nil {
		return err
	}
	// Genkit is initialised without its own Reflection V2 client: reflection.Start below is
	// the one the Genkit CLI sees.
	g := reflection.InitGenkit(context.Background(), genkit.WithPlugins(plugins...), genkit.WithDefaultModel(model))
	m, err := models.Open(ctx, g, model, log)
	if err != nil {
		return err
	}
	catalogs := catalog.NewCache(cfg.catalogCache, int(cfg.catalogLimit), int(cfg.catalogBytes))
	var store session.Store = session.NewMemory(cfg.sessions, cfg.sessionTTL)
	var convs conversation.Store = conversation.NewMemory(cfg.convs, int(cfg.convBytes), cfg.convTTL)
	tasks := a2aapi.NewMemoryTasks(cfg.convs, cfg.convTTL)
	var streamLog durable.Log = durable.NewMemoryLog(cfg.retention, durable.WithMaxBytes(int(cfg.streamMemory)))
	if cfg.redisURL != "" {
		client, err := newRedisClient(cfg.redisURL)
		if err != nil {
			return err
		}
		defer client.Close()
		store = session.NewRedis(client, catalogs, cfg.sessionTTL, session.WithNearCacheSize(cfg.sessions))
		streamLog = durable.NewRedisLog(client, cfg.retention)
		convs = conversation.NewRedis(client, cfg.convTTL)
		tasks = a2aapi.NewRedisTasks(client, cfg.convTTL, "genui:")
		log.Info("sessions, conversations, A2A tasks and streams are shared through Redis", "addr", client.Options().Addr)
	}
	svc, err := genui.New(g, m,
		genui.WithStore(store),
		genui.WithConversations(convs),
		genui.WithCatalogs(catalogs),
		genui.WithStreams(streamLog),
		genui.WithGrace(cfg.grace),
		genui.WithMaxRepairs(cfg.maxRepairs),
		genui.WithLogger(log))
	if err != nil {
		return err
	}
	// The Genkit Dev UI: on only under `genkit start --experimental-reflection-v2`; it connects
	// in the background and never delays serving.
	devUI, err := reflection.Start(ctx, g, reflection.WithName("genui-server"), reflection.WithLogger(log),
		reflection.WithActions("/model/"+offline.Name))
	if err != nil {
		log.Warn("Genkit Dev UI disabled", "err", err)
	}
	defer devUI.Close()
	var origins []string
	for _, o := range strings.Split(cfg.cors, ",") {
		if o = strings.TrimSpace(o); o != "" {
			origins = append(origins, o)
		}
	}
	agent := a2aapi.New(svc,
		a2aapi.WithTaskStore(tasks),
		a2aapi.WithPublicURL(cfg.publicURL),
		a2aapi.WithKeepalive(cfg.keepalive),
		a2aapi.WithBodyLimit(int64(cfg.bodyLimit)),
		a2aapi.WithLogger(log))
	handler := httpapi.New(svc,
		httpapi.WithReadiness(agent.Ready),
		httpapi.WithKeepalive(cfg.keepalive),
		httpapi.WithSSEKeepalive(cfg.sseKeepalive),
		httpapi.WithBodyLimit(int64(cfg.bodyLimit)),
		httpapi.WithAllowOrigins(origins...),
		httpapi.WithPage(web.Handler()),
		httpapi.WithLogger(log))
	agent.Register(handler)
	aguiapi.New(svc,
		aguiapi.WithKeepalive(cfg.sseKeepalive),
		aguiapi.WithBodyLimit(int64(cfg.bodyLimit)),
		aguiapi.WithLogger(log)).Register(handler)
	hub := sessionhub.New(svc, cfg.reconnect, log)
	defer hub.Close()
	wsServer := wsapi.New(svc,
		wsapi.WithHub(hub),
		wsapi.WithReadLimit(int64(cfg.bodyLimit)),
		wsapi.WithLimits(cfg.wsSessions, cfg.wsTurns, 64),
		wsapi.WithOrigins(origins...),
		wsapi.WithLogger(log))
	wsServer.Register(handler)
	yieldServer := yieldapi.New(svc,
		yieldapi.WithHub(hub),
		yieldapi.WithReadLimit(int64(cfg.bodyLimit)),
		yieldapi.WithOrigins(origins...),
		yieldapi.WithLogger(log))
	yieldServer.Register(handler)

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
	srv.RegisterOnShutdown(yieldServer.Shutdown)
	if model == offline.Name {
		log.Warn("using the built-in offline model: a deterministic generator, NOT an LLM; set GEMINI_API_KEY or GENUI_MODEL for a real model")
	}
	log.Info("genui-server listening", "addr", ln.Addr().String(), "model", model)

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

// newRedisClient connects lazily: the server starts (and reports not ready) while Redis is
// down, and recovers by itself when it returns.
func newRedisClient(url string) (*redis.Client, error) {
	opts, err := redis.ParseURL(url)
	if err != nil {
		return nil, fmt.Errorf("redis URL %q: %w", url, err)
	}
	opts.DialTimeout = 2 * time.Second
	opts.ReadTimeout = 3 * time.Second
	opts.WriteTimeout = 3 * time.Second
	// Each stream being tailed holds a connection while it waits for events.
	opts.PoolSize = max(opts.PoolSize, 512)
	return redis.NewClient(opts), nil
}

// servePprof serves the profiling endpoints on their own listener, never on the API port.
func servePprof(addr string, log *slog.Logger) (stop func(), err error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("pprof: %w", err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	log.Info("pprof listening", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}
