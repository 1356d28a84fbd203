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
