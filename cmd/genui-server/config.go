package main

import (
	"flag"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"time"
)

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

	// Authentication (off unless a key or a JWT verifier is configured).
	apiKeysFile    string // --api-keys-file: name:sha256-hex lines
	apiKeys        string // GENUI_API_KEYS: name:key,… (environment only)
	jwtJWKSURL     string
	jwtKeyFile     string // PEM public key (RSA, ECDSA, Ed25519)
	jwtSecretFile  string // HMAC secret
	jwtIssuer      string
	jwtAudience    string
	trustedProxies string // comma-separated IPs or CIDRs whose X-Forwarded-For is believed

	// Limits (0: off).
	rateLimit      float64 // turns per second per caller
	rateBurst      int
	callerStreams  int // concurrent streams per caller
	maxTurns       int // concurrent turns, all callers
	callerCatalogs int // new catalogs per caller per hour
	callerConvs    int // conversations one caller may keep

	metricsAddr string // empty: /metrics on the API listener
}

// configError is a configuration the server refuses at start-up: it exits with status 2.
type configError struct{ err error }

func (e *configError) Error() string { return e.err.Error() }
func (e *configError) Unwrap() error { return e.err }

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
	float := func(p *float64, name, envName string, def float64, usage string) {
		fs.Float64Var(p, name, def, usage+" (env "+envName+")")
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
	str(&cfg.cors, "cors-origins", "GENUI_CORS_ORIGINS", "", "comma-separated origins CORS allows (e.g. https://app.example.com); default: * without authentication, same-origin only with it (* is then refused)")
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
	str(&cfg.apiKeysFile, "api-keys-file", "GENUI_API_KEYS_FILE", "", "file of API keys, one name:sha256-hex-of-key per line (# comments); turns on authentication. GENUI_API_KEYS=name:key,… adds keys from the environment")
	str(&cfg.jwtJWKSURL, "jwt-jwks-url", "GENUI_JWT_JWKS_URL", "", "JWKS URL whose keys verify JWT bearer tokens (fetched, cached, refreshed); turns on authentication")
	str(&cfg.jwtKeyFile, "jwt-key-file", "GENUI_JWT_KEY_FILE", "", "PEM public key (RSA, ECDSA or Ed25519) verifying JWT bearer tokens; turns on authentication")
	str(&cfg.jwtSecretFile, "jwt-secret-file", "GENUI_JWT_SECRET_FILE", "", "file holding the HMAC secret verifying JWT bearer tokens (HS256/384/512); turns on authentication")
	str(&cfg.jwtIssuer, "jwt-issuer", "GENUI_JWT_ISSUER", "", "required iss of JWT bearer tokens")
	str(&cfg.jwtAudience, "jwt-audience", "GENUI_JWT_AUDIENCE", "", "required aud of JWT bearer tokens")
	str(&cfg.trustedProxies, "trusted-proxies", "GENUI_TRUSTED_PROXIES", "", "comma-separated IPs or CIDRs of proxies whose X-Forwarded-For names the client address (rate limits without authentication)")
	float(&cfg.rateLimit, "rate-limit", "GENUI_RATE_LIMIT", 0, "turns per second each caller may start, on average (0: off)")
	integer(&cfg.rateBurst, "rate-burst", "GENUI_RATE_BURST", 10, "turns a caller may start at once above --rate-limit")
	integer(&cfg.callerStreams, "caller-streams", "GENUI_CALLER_STREAMS", 0, "most turns one caller may run at once (0: off)")
	integer(&cfg.maxTurns, "max-turns", "GENUI_MAX_TURNS", 0, "most turns running at once, all callers together (0: off)")
	integer(&cfg.callerCatalogs, "caller-catalogs", "GENUI_CALLER_CATALOGS", 0, "most new catalogs one caller may add to the catalog cache per hour (0: off)")
	integer(&cfg.callerConvs, "caller-conversations", "GENUI_CALLER_CONVERSATIONS", 0, "most conversations and sessions one caller may have the server keep (0: off)")
	str(&cfg.metricsAddr, "metrics-addr", "GENUI_METRICS_ADDR", "", "serve /metrics on this address of its own (e.g. :9090); empty: on the API listener, open like /healthz")
	if v := getenv("GENUI_API_KEYS"); v != "" {
		cfg.apiKeys = v
	}
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

// authOn reports whether the configuration turns authentication on.
func (cfg *config) authOn() bool {
	return cfg.apiKeysFile != "" || cfg.apiKeys != "" || cfg.jwtJWKSURL != "" || cfg.jwtKeyFile != "" || cfg.jwtSecretFile != ""
}

// origins returns the origins CORS allows: those configured, else * without
// authentication and none (same-origin only) with it.
func (cfg *config) origins() []string {
	var out []string
	for _, o := range strings.Split(cfg.cors, ",") {
		if o = strings.TrimSpace(o); o != "" {
			out = append(out, o)
		}
	}
	if len(out) == 0 && !cfg.authOn() {
		out = []string{"*"}
	}
	return out
}
