package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"math"
	"net"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/models"
	"github.com/genuiserver/genui/internal/redisconn"
	"github.com/genuiserver/genui/policy"
)

type config struct {
	addr              string
	model             string
	sessions          int
	sessionTTL        time.Duration
	convs             int
	convBytes         byteSize
	convTTL           time.Duration
	catalogCache      int
	catalogBytes      byteSize
	bodyLimit         byteSize
	catalogLimit      byteSize
	cors              string
	logLevel          string
	logFormat         string
	maxRepairs        int
	drain             time.Duration
	retention         time.Duration
	streamMemory      byteSize
	grace             time.Duration
	keepalive         time.Duration
	sseKeepalive      time.Duration
	redisURL          string
	redisCluster      string
	redisSentinel     string
	redisWaitReplicas int
	redisWaitTimeout  time.Duration
	pprofAddr         string
	modelH2C          bool
	modelBreaker      string
	breaker           models.Breaker // --model-breaker, read
	modelsAllowed     string
	allowed           []string // --models-allowed, read; else the models of --model
	publicURL         string
	reconnect         time.Duration
	wsSessions        int
	wsTurns           int

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
	callerSessions int // new /startSession sessions per caller per hour
	callerConvs    int // conversations one caller may have stored at once
	tokenBudget    int // model tokens per caller per token window
	tokenWindow    time.Duration
	callersFile    string     // settings per caller: budget, models
	callers        *callerSet // built by validate

	metricsAddr string // empty: /metrics on the API listener

	// What a model may write in a turn (0: no limit).
	maxOutputTokens int
	maxComponents   int
	maxOutputBytes  byteSize
	maxToolCalls    int
	maxDataModel    byteSize
	maxTurnTime     time.Duration

	// The UI policy.
	urlSchemes      string
	linkSchemes     string
	urlHosts        string
	policyFunctions string
	policyOff       string
	policyFile      string
	policyGiven     map[string]bool // the policy flags set on the command line or in the environment
	policies        *policy.Set     // built by validate
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
	switch {
	case errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(s, "-"), err == nil && n > math.MaxInt64/mult:
		return errors.New("too large")
	case err != nil:
		return errors.New("not a size")
	case n < 0:
		return errors.New("negative")
	}
	*b = byteSize(n * mult)
	return nil
}

// fmtSize writes n in the largest binary unit that divides it: 20MiB, 1536KiB, 1000.
func fmtSize(n byteSize) string {
	for _, u := range []struct {
		suffix string
		mult   byteSize
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.mult == 0 {
			return strconv.FormatInt(int64(n/u.mult), 10) + u.suffix
		}
	}
	return strconv.FormatInt(int64(n), 10)
}

// minLimit is the least --body-limit and --catalog-limit.
const minLimit = 1 << 10

// newFlagSet defines the flags of genui-server, setting the fields of cfg. env maps each
// flag's name to its environment variable.
func newFlagSet(cfg *config, getenv func(string) string) (fset *flag.FlagSet, env map[string]string) {
	fset = flag.NewFlagSet("genui-server", flag.ContinueOnError)
	env = map[string]string{}
	str := func(p *string, name, envName, def, usage string) {
		fset.StringVar(p, name, def, usage+" (env "+envName+")")
		env[name] = envName
	}
	integer := func(p *int, name, envName string, def int, usage string) {
		fset.IntVar(p, name, def, usage+" (env "+envName+")")
		env[name] = envName
	}
	duration := func(p *time.Duration, name, envName string, def time.Duration, usage string) {
		fset.DurationVar(p, name, def, usage+" (env "+envName+")")
		env[name] = envName
	}
	float := func(p *float64, name, envName string, def float64, usage string) {
		fset.Float64Var(p, name, def, usage+" (env "+envName+")")
		env[name] = envName
	}
	boolean := func(p *bool, name, envName string, def bool, usage string) {
		fset.BoolVar(p, name, def, usage+" (env "+envName+")")
		env[name] = envName
	}
	size := func(p *byteSize, name, envName, usage string) {
		fset.Var(p, name, usage+" (env "+envName+")")
		env[name] = envName
	}
	defAddr := ":3400"
	if p := getenv("PORT"); p != "" {
		defAddr = ":" + p
	}
	str(&cfg.addr, "addr", "GENUI_ADDR", defAddr, "listen address; PORT sets the port when this is unset")
	boolean(&cfg.modelH2C, "model-h2c", "GENUI_MODEL_H2C", false, "reach an http:// Gemini or Vertex AI endpoint (GOOGLE_GEMINI_BASE_URL, GOOGLE_VERTEX_BASE_URL: a local proxy, a test server) over HTTP/2 without TLS, one connection for every turn; https:// endpoints are reached over HTTP/2 anyway")
	str(&cfg.model, "model", "GENUI_MODEL", "", "model: offline, googleai/<model>, vertexai/<model>, ollama/<model> or <provider>/<model> (OpenAI-compatible), or a comma-separated fallback chain of them (a call the first cannot serve for a 429, 5xx, connection error or timeout before any output goes to the next); default: googleai/gemini-2.5-flash with GEMINI_API_KEY/GOOGLE_API_KEY, vertexai/gemini-2.5-flash with GOOGLE_CLOUD_PROJECT, else offline")
	str(&cfg.modelsAllowed, "models-allowed", "GENUI_MODELS_ALLOWED", "", "comma-separated models a request may name in its model field (A2A metadata.model, AG-UI forwardedProps.model, MCP's model argument), e.g. googleai/gemini-2.5-pro,openai/gpt-4.1-mini; a caller's default model always may be; empty: the models of --model")
	str(&cfg.modelBreaker, "model-breaker", "GENUI_MODEL_BREAKER", "", "circuit breaker of each model of --model: <failures>/<window>, e.g. 5/30s skips a model for 30s after 5 failed calls in a row, then tries it again; empty or off: none")
	integer(&cfg.sessions, "sessions", "GENUI_SESSIONS", 10000, "most sessions kept in memory")
	duration(&cfg.sessionTTL, "session-ttl", "GENUI_SESSION_TTL", time.Hour, "idle time after which a session expires")
	integer(&cfg.convs, "conversations", "GENUI_CONVERSATIONS", 10000, "most conversations held in memory (requests with a conversationId; in-process only)")
	size(&cfg.convBytes, "conversation-memory", "GENUI_CONVERSATION_MEMORY", "most memory the conversations held in process may hold, least recently used dropped first (default 64MiB; 0: no bound)")
	duration(&cfg.convTTL, "conversation-ttl", "GENUI_CONVERSATION_TTL", time.Hour, "idle time after which a conversation the server holds expires (in Redis too)")
	integer(&cfg.catalogCache, "catalog-cache", "GENUI_CATALOG_CACHE", 1024, "most distinct compiled catalogs kept")
	size(&cfg.catalogBytes, "catalog-cache-bytes", "GENUI_CATALOG_CACHE_BYTES", "most memory the compiled catalogs kept may hold, by estimate; sessions keep the catalogs they use (default 64MiB; 0: no bound)")
	size(&cfg.bodyLimit, "body-limit", "GENUI_BODY_LIMIT", "largest request body (default 20MiB; at least 1KiB)")
	size(&cfg.catalogLimit, "catalog-limit", "GENUI_CATALOG_LIMIT", "largest catalog as compact JSON, at most --body-limit (default 2MiB, or --body-limit when smaller; at least 1KiB)")
	str(&cfg.redisURL, "redis-url", "GENUI_REDIS_URL", "", "one Redis node (redis://[user:password@]host:6379/0, rediss:// for TLS) shared by replicas for sessions, conversations, A2A tasks, streams and limits; empty: in-process only")
	str(&cfg.redisCluster, "redis-cluster-url", "GENUI_REDIS_CLUSTER_URL", "", "a Redis Cluster instead, by seed nodes: redis://[user:password@]host:7000?addr=host2:7001&addr=host3:7002 (rediss:// for TLS)")
	integer(&cfg.redisWaitReplicas, "redis-wait-replicas", "GENUI_REDIS_WAIT_REPLICAS", 0, "replicas of the Redis primary that must have a write (WAIT) before a client is told of it (a session id, a committed turn, an A2A task state, a stream record), so that a failover cannot take it back; 0: none (replication is asynchronous)")
	duration(&cfg.redisWaitTimeout, "redis-wait-timeout", "GENUI_REDIS_WAIT_TIMEOUT", time.Second, "longest wait for --redis-wait-replicas; a write not acknowledged in time is answered 503 UNAVAILABLE")
	str(&cfg.redisSentinel, "redis-sentinel-url", "GENUI_REDIS_SENTINEL_URL", "", "a Sentinel-managed primary instead: redis://[sentinel-user:password@]host:26379?addr=host2:26379&master_name=mymaster[&password=…] (rediss:// for TLS)")
	str(&cfg.publicURL, "public-url", "GENUI_PUBLIC_URL", "", "URL clients reach the server at (e.g. https://ui.example.com behind a proxy), of which the A2A agent card's URLs are made; empty: the Host of each card request")
	str(&cfg.pprofAddr, "pprof-addr", "GENUI_PPROF_ADDR", "", "serve net/http/pprof on this address (e.g. 127.0.0.1:6060); empty: off")
	str(&cfg.cors, "cors-origins", "GENUI_CORS_ORIGINS", "", "comma-separated origins CORS allows (e.g. https://app.example.com); default: * without authentication, same-origin only with it (* is then refused)")
	str(&cfg.logLevel, "log-level", "GENUI_LOG_LEVEL", "info", "log level: debug, info, warn, error")
	str(&cfg.logFormat, "log-format", "GENUI_LOG_FORMAT", "text", "log format: text or json")
	integer(&cfg.maxRepairs, "max-repairs", "GENUI_MAX_REPAIRS", 2, "model calls allowed per turn to repair invalid UI (0: none)")
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
	str(&cfg.jwtJWKSURL, "jwt-jwks-url", "GENUI_JWT_JWKS_URL", "", "https URL of a JWKS whose keys verify JWT bearer tokens (fetched, cached, refreshed; http only for localhost); turns on authentication; one of --jwt-jwks-url, --jwt-key-file, --jwt-secret-file")
	str(&cfg.jwtKeyFile, "jwt-key-file", "GENUI_JWT_KEY_FILE", "", "PEM public key (RSA, ECDSA or Ed25519) verifying JWT bearer tokens; turns on authentication")
	str(&cfg.jwtSecretFile, "jwt-secret-file", "GENUI_JWT_SECRET_FILE", "", "file holding the HMAC secret verifying JWT bearer tokens (HS256/384/512); turns on authentication")
	str(&cfg.jwtIssuer, "jwt-issuer", "GENUI_JWT_ISSUER", "", "required iss of JWT bearer tokens (with --jwt-jwks-url, --jwt-key-file or --jwt-secret-file)")
	str(&cfg.jwtAudience, "jwt-audience", "GENUI_JWT_AUDIENCE", "", "required aud of JWT bearer tokens (with --jwt-jwks-url, --jwt-key-file or --jwt-secret-file)")
	str(&cfg.trustedProxies, "trusted-proxies", "GENUI_TRUSTED_PROXIES", "", "comma-separated IPs or CIDRs of proxies whose X-Forwarded-For names the client address (rate limits without authentication)")
	float(&cfg.rateLimit, "rate-limit", "GENUI_RATE_LIMIT", 0, "turns per second each caller may start, on average (0: off)")
	integer(&cfg.rateBurst, "rate-burst", "GENUI_RATE_BURST", 10, "turns a caller may start at once above --rate-limit")
	integer(&cfg.callerStreams, "caller-streams", "GENUI_CALLER_STREAMS", 0, "most turns one caller may run at once (0: off)")
	integer(&cfg.maxTurns, "max-turns", "GENUI_MAX_TURNS", 0, "most turns running at once, all callers together (0: off)")
	integer(&cfg.callerCatalogs, "caller-catalogs", "GENUI_CALLER_CATALOGS", 0, "most new catalogs one caller may add to the catalog cache per hour (0: off)")
	integer(&cfg.callerSessions, "caller-sessions", "GENUI_CALLER_SESSIONS", 0, "most new sessions (/startSession) one caller may start per hour (0: off)")
	integer(&cfg.callerConvs, "caller-conversations", "GENUI_CALLER_CONVERSATIONS", 0, "most conversations one caller may have the server keep at once: held conversations (conversationId) and WebSocket sessions, until they expire (--conversation-ttl) or are deleted; in memory and in Redis (0: off)")
	integer(&cfg.tokenBudget, "token-budget", "GENUI_TOKEN_BUDGET", 0, "model tokens (input and output, as the provider counts them) each caller may use per --token-window: a turn starts while the caller is below it, the next is refused with 429 until the window ends; counted in Redis when one is configured (0: off)")
	duration(&cfg.tokenWindow, "token-window", "GENUI_TOKEN_WINDOW", time.Hour, "the window of --token-budget, fixed and aligned (each hour from :00 by default), the same on every replica")
	str(&cfg.callersFile, "callers-file", "GENUI_CALLERS_FILE", "", "a JSON file of settings per caller in place of the server's: tokenBudget, model (its default, one or a chain) and modelsAllowed (see the README)")
	str(&cfg.metricsAddr, "metrics-addr", "GENUI_METRICS_ADDR", "", "serve /metrics on this address of its own (e.g. :9090); empty: on the API listener, open like /healthz")
	integer(&cfg.maxOutputTokens, "max-output-tokens", "GENUI_MAX_OUTPUT_TOKENS", 65536, "turn limit: largest output of one model call, asked of the provider (0: off, the provider's own)")
	integer(&cfg.maxComponents, "max-components", "GENUI_MAX_COMPONENTS", 10000, "turn limit: most components (widgets) one surface may hold (0: off)")
	size(&cfg.maxOutputBytes, "max-output-bytes", "GENUI_MAX_OUTPUT_BYTES", "turn limit: most bytes a model may write in a turn, repairs included (default 1MiB; 0: off)")
	integer(&cfg.maxToolCalls, "max-tool-calls", "GENUI_MAX_TOOL_CALLS", 64, "turn limit: most tool calls (UI tools and client tools) a model may make in a turn (0: off)")
	size(&cfg.maxDataModel, "max-data-model-bytes", "GENUI_MAX_DATA_MODEL_BYTES", "turn limit: most bytes of data-model updates a model may write to one surface in a turn (default 1MiB; 0: off)")
	duration(&cfg.maxTurnTime, "max-turn-time", "GENUI_MAX_TURN_TIME", 10*time.Minute, "turn limit: longest a turn's model calls may take (0: off)")
	str(&cfg.urlSchemes, "url-schemes", "GENUI_URL_SCHEMES", "https,http", "UI policy: comma-separated schemes the URLs a model writes may have (images, media, links); data allows data:image/… raster images where an image goes")
	str(&cfg.linkSchemes, "link-schemes", "GENUI_LINK_SCHEMES", "mailto,tel", "UI policy: schemes links (openUrl, Markdown links) may have besides --url-schemes; empty: none")
	str(&cfg.urlHosts, "url-hosts", "GENUI_URL_HOSTS", "", "UI policy: comma-separated hosts URLs may name (example.com, *.example.com for its subdomains); empty: any host")
	str(&cfg.policyFunctions, "policy-functions", "GENUI_POLICY_FUNCTIONS", "", "UI policy: comma-separated functions of the catalog the model may call; empty: all of them")
	str(&cfg.policyOff, "policy-off", "GENUI_POLICY_OFF", "", "UI policy: comma-separated rules turned off (unsafe_url, function_not_allowed, inaccessible, sensitive_input), or all")
	str(&cfg.policyFile, "policy-file", "GENUI_POLICY_FILE", "", "UI policy: a JSON file of the policy and of overrides per caller (see the README); the flags above, when given, override its policy")
	return fset, env
}

// printUsage prints the --help text: a line on the server, then every flag.
func printUsage(fset *flag.FlagSet, out io.Writer) {
	fmt.Fprintln(out, "Usage: genui-server [flags]\n\nServes GenUI generation (POST /startSession, POST /generateUi). Flags:")
	fset.SetOutput(out)
	fset.PrintDefaults()
}

// parseConfig reads the configuration from args and the environment (flags win) and checks
// it. Its errors fit on one line and name the flag, and the environment variable when the
// value came from there; --help prints the usage to out and returns flag.ErrHelp.
func parseConfig(args []string, getenv func(string) string, out io.Writer) (*config, error) {
	cfg := &config{bodyLimit: 20 << 20, catalogLimit: 2 << 20, catalogBytes: 64 << 20, streamMemory: 8 << 20, convBytes: 64 << 20,
		maxOutputBytes: 1 << 20, maxDataModel: 1 << 20}
	fset, env := newFlagSet(cfg, getenv)
	// The flag package would print a parse error and the usage: the error is returned
	// instead, and the usage printed for --help only.
	fset.SetOutput(io.Discard)
	fset.Usage = func() {}
	if err := fset.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(fset, out)
			return nil, err
		}
		return nil, flagParseError(fset, err)
	}
	if fset.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q: settings are flags (--name value) or environment variables; see --help", fset.Arg(0))
	}
	// Environment values apply to the flags the command line leaves unset.
	onCmdLine := map[string]bool{}
	fset.Visit(func(f *flag.Flag) { onCmdLine[f.Name] = true })
	src := map[string]string{} // flag name → the environment variable its value came from
	var errs []string
	fset.VisitAll(func(f *flag.Flag) {
		envName := env[f.Name]
		v := getenv(envName)
		if onCmdLine[f.Name] || v == "" {
			return
		}
		src[f.Name] = envName
		if err := fset.Set(f.Name, v); err != nil {
			errs = append(errs, fmt.Sprintf("--%s (%s): invalid value %q%s; expected %s", f.Name, envName, v, reason(err.Error()), expected(f)))
		}
	})
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "; "))
	}
	cfg.policyGiven = map[string]bool{}
	for _, name := range policyFlags {
		cfg.policyGiven[name] = onCmdLine[name] || src[name] != ""
	}
	if !onCmdLine["addr"] && src["addr"] == "" && getenv("PORT") != "" {
		src["addr"] = "PORT"
	}
	if v := getenv("GENUI_API_KEYS"); v != "" {
		cfg.apiKeys = v
	}
	// Unless set, the catalog limit follows a body limit smaller than its default: a
	// catalog arrives in a request body.
	if !onCmdLine["catalog-limit"] && src["catalog-limit"] == "" && cfg.bodyLimit >= minLimit && cfg.catalogLimit > cfg.bodyLimit {
		cfg.catalogLimit = cfg.bodyLimit
	}
	if err := cfg.validate(src, getenv); err != nil {
		return nil, err
	}
	return cfg, nil
}

var invalidFlagValue = regexp.MustCompile(`^invalid value (".*") for flag -([A-Za-z0-9-]+): (.*)$`)

// flagParseError rewords the errors of flag.FlagSet.Parse to name flags as --name and say
// what each expects.
func flagParseError(fset *flag.FlagSet, err error) error {
	msg := err.Error()
	if m := invalidFlagValue.FindStringSubmatch(msg); m != nil {
		return fmt.Errorf("--%s: invalid value %s%s; expected %s", m[2], m[1], reason(m[3]), expected(fset.Lookup(m[2])))
	}
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		return fmt.Errorf("unknown flag --%s; see --help for the flags", name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		return fmt.Errorf("--%s: no value; expected %s", name, expected(fset.Lookup(name)))
	}
	return err
}

// reason is the reason a flag value was refused, as ": reason", or nothing when it is the
// flag package's "parse error", which the expected value says better.
func reason(s string) string {
	if s == "parse error" {
		return ""
	}
	return ": " + s
}

// expected says what values flag f takes, by its type.
func expected(f *flag.Flag) string {
	if f == nil {
		return "a value"
	}
	if _, ok := f.Value.(*byteSize); ok {
		return "a size in bytes such as 1048576, 512KiB, 20MiB or 1GiB"
	}
	if g, ok := f.Value.(flag.Getter); ok {
		switch g.Get().(type) {
		case int:
			return "a whole number"
		case float64:
			return "a number such as 0.5 or 2"
		case time.Duration:
			return "a duration such as 30s, 5m or 1h"
		}
	}
	return "a value"
}

// checker gathers the problems of a configuration, each naming its flag.
type checker struct {
	src  map[string]string // flag name → the environment variable its value came from
	errs []string
}

// ref names flag name as the user set it: --name, and its environment variable when the
// value came from the environment.
func (c *checker) ref(name string) string {
	if e := c.src[name]; e != "" {
		return "--" + name + " (" + e + ")"
	}
	return "--" + name
}

// failf records a problem of flag name.
func (c *checker) failf(name, format string, args ...any) {
	c.errs = append(c.errs, c.ref(name)+": "+fmt.Sprintf(format, args...))
}

// add records a problem whose text names what it is about.
func (c *checker) add(format string, args ...any) {
	c.errs = append(c.errs, fmt.Sprintf(format, args...))
}

func (c *checker) err() error {
	if len(c.errs) == 0 {
		return nil
	}
	return errors.New(strings.Join(c.errs, "; "))
}

// validate checks every value and combination of values, and what the model's provider
// needs of the environment getenv reads. src maps the name of each flag whose value came
// from the environment to its variable, which errors name beside the flag.
func (cfg *config) validate(src map[string]string, getenv func(string) string) error {
	c := &checker{src: src}

	// The model and its provider.
	if names, err := models.ParseChain(cfg.model); err != nil {
		c.failf("model", "%v", err)
	} else if cfg.model != "" {
		for _, name := range names {
			c.checkModel(name, getenv)
		}
	}
	cfg.allowed = c.checkModelList("models-allowed", cfg.modelsAllowed, getenv)
	if b, err := models.ParseBreaker(cfg.modelBreaker); err != nil {
		c.failf("model-breaker", "%v", err)
	} else {
		cfg.breaker = b
	}
	c.checkProviderURLs(getenv)

	// Counts and limits.
	for _, n := range []struct {
		name string
		v    int
	}{{"sessions", cfg.sessions}, {"conversations", cfg.convs}, {"catalog-cache", cfg.catalogCache},
		{"ws-sessions", cfg.wsSessions}, {"ws-turns", cfg.wsTurns}, {"rate-burst", cfg.rateBurst}} {
		if n.v < 1 {
			c.failf(n.name, "got %d; expected a whole number of at least 1", n.v)
		}
	}
	if cfg.maxRepairs < 0 {
		c.failf("max-repairs", "got %d; expected 0 (no repairs) or more", cfg.maxRepairs)
	}
	for _, n := range []struct {
		name string
		v    int
	}{{"caller-streams", cfg.callerStreams}, {"max-turns", cfg.maxTurns}, {"caller-catalogs", cfg.callerCatalogs},
		{"caller-sessions", cfg.callerSessions}, {"caller-conversations", cfg.callerConvs}, {"redis-wait-replicas", cfg.redisWaitReplicas}, {"token-budget", cfg.tokenBudget},
		{"max-output-tokens", cfg.maxOutputTokens}, {"max-components", cfg.maxComponents}, {"max-tool-calls", cfg.maxToolCalls}} {
		if n.v < 0 {
			c.failf(n.name, "got %d; expected 0 (off) or more", n.v)
		}
	}
	switch {
	case math.IsNaN(cfg.rateLimit) || math.IsInf(cfg.rateLimit, 0):
		c.failf("rate-limit", "got %v; expected a finite number of turns per second, 0 (off) or more", cfg.rateLimit)
	case cfg.rateLimit < 0:
		c.failf("rate-limit", "got %v; expected 0 (off) or more turns per second", cfg.rateLimit)
	}

	// Sizes (the others are at least 0, 0 meaning no bound, which byteSize ensures).
	if cfg.bodyLimit < minLimit {
		c.failf("body-limit", "got %s; expected at least 1KiB", fmtSize(cfg.bodyLimit))
	}
	switch {
	case cfg.catalogLimit < minLimit:
		c.failf("catalog-limit", "got %s; expected at least 1KiB", fmtSize(cfg.catalogLimit))
	case cfg.bodyLimit >= minLimit && cfg.catalogLimit > cfg.bodyLimit:
		c.failf("catalog-limit", "%s is more than %s %s; expected at most the body limit (a catalog arrives in a request body)",
			fmtSize(cfg.catalogLimit), c.ref("body-limit"), fmtSize(cfg.bodyLimit))
	}

	// Durations.
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"session-ttl", cfg.sessionTTL}, {"conversation-ttl", cfg.convTTL}, {"drain-timeout", cfg.drain},
		{"stream-retention", cfg.retention}, {"stream-grace", cfg.grace}, {"reconnect-window", cfg.reconnect},
		{"redis-wait-timeout", cfg.redisWaitTimeout}, {"token-window", cfg.tokenWindow}} {
		if d.v <= 0 {
			c.failf(d.name, "got %v; expected a positive duration such as 30s, 5m or 1h", d.v)
		}
	}
	for _, d := range []struct {
		name string
		v    time.Duration
	}{{"keepalive", cfg.keepalive}, {"sse-keepalive", cfg.sseKeepalive}, {"max-turn-time", cfg.maxTurnTime}} {
		if d.v < 0 {
			c.failf(d.name, "got %v; expected 0 (off) or a positive duration such as 15s", d.v)
		}
	}

	// Listen addresses.
	c.listenAddr("addr", cfg.addr, ":3400")
	if cfg.pprofAddr != "" {
		c.listenAddr("pprof-addr", cfg.pprofAddr, "127.0.0.1:6060")
	}
	if cfg.metricsAddr != "" {
		c.listenAddr("metrics-addr", cfg.metricsAddr, ":9090")
	}
	for _, p := range []struct{ name, v, other, otherV string }{
		{"metrics-addr", cfg.metricsAddr, "addr", cfg.addr},
		{"metrics-addr", cfg.metricsAddr, "pprof-addr", cfg.pprofAddr},
		{"pprof-addr", cfg.pprofAddr, "addr", cfg.addr},
	} {
		if sameListener(p.v, p.otherV) {
			c.failf(p.name, "%q is the listener of %s %q; expected an address of its own", p.v, c.ref(p.other), p.otherV)
		}
	}

	// URLs.
	var fe *redisconn.FlagError
	if err := cfg.redis().Validate(); errors.As(err, &fe) {
		c.failf(fe.Flag, "%v", fe.Err)
	}
	if cfg.redisWaitReplicas > 0 && !cfg.redis().Set() {
		c.failf("redis-wait-replicas", "got %d without a Redis; expected --redis-url, --redis-cluster-url or --redis-sentinel-url too (replicas acknowledge writes to Redis)", cfg.redisWaitReplicas)
	}
	if cfg.publicURL != "" {
		u, err := url.Parse(cfg.publicURL)
		switch {
		case err != nil:
			c.failf("public-url", "not a URL (%v); expected an absolute http or https URL such as https://ui.example.com", urlError(err))
		case u.Scheme != "http" && u.Scheme != "https", u.Opaque != "", u.Hostname() == "", !validPort(u.Port(), 1):
			c.failf("public-url", "%q is not an absolute http or https URL with a host; expected e.g. https://ui.example.com", u.Redacted())
		case u.User != nil, u.RawQuery != "", u.ForceQuery, u.Fragment != "":
			c.failf("public-url", "%q has user info, a query or a fragment; expected scheme://host[:port][/path], such as https://ui.example.com", u.Redacted())
		}
	}
	if cfg.jwtJWKSURL != "" {
		u, err := url.Parse(cfg.jwtJWKSURL)
		switch {
		case err != nil:
			c.failf("jwt-jwks-url", "not a URL (%v); expected an https URL such as https://issuer.example.com/.well-known/jwks.json", urlError(err))
		case u.Opaque != "", u.Hostname() == "", !validPort(u.Port(), 1),
			u.Scheme != "https" && (u.Scheme != "http" || !isLoopback(u.Hostname())):
			c.failf("jwt-jwks-url", "%q is not an absolute https URL; expected e.g. https://issuer.example.com/.well-known/jwks.json (http only for 127.0.0.1, ::1 or localhost)", u.Redacted())
		}
	}

	// Authentication.
	readable := map[string]bool{
		"api-keys-file":   c.readableFile("api-keys-file", cfg.apiKeysFile),
		"jwt-key-file":    c.readableFile("jwt-key-file", cfg.jwtKeyFile),
		"jwt-secret-file": c.readableFile("jwt-secret-file", cfg.jwtSecretFile),
	}
	c.checkAuthFiles(cfg, readable)
	var verifiers []string
	for _, v := range []struct{ name, v string }{{"jwt-jwks-url", cfg.jwtJWKSURL}, {"jwt-key-file", cfg.jwtKeyFile}, {"jwt-secret-file", cfg.jwtSecretFile}} {
		if v.v != "" {
			verifiers = append(verifiers, c.ref(v.name))
		}
	}
	if len(verifiers) > 1 {
		c.add("%s: set together; expected at most one JWT verifier: --jwt-jwks-url, --jwt-key-file or --jwt-secret-file", strings.Join(verifiers, ", "))
	}
	if len(verifiers) == 0 {
		for _, v := range []struct{ name, v string }{{"jwt-issuer", cfg.jwtIssuer}, {"jwt-audience", cfg.jwtAudience}} {
			if v.v != "" {
				c.failf(v.name, "set without a JWT verifier; expected --jwt-jwks-url, --jwt-key-file or --jwt-secret-file with it")
			}
		}
	}
	if cfg.apiKeys != "" {
		c.apiKeys(cfg.apiKeys)
	}
	for i, p := range strings.Split(cfg.trustedProxies, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if _, err := parseProxy(p); err != nil {
			c.failf("trusted-proxies", "item %d %q is not an IP or CIDR; expected comma-separated IPs or CIDRs such as 10.0.0.1,10.1.0.0/16", i+1, p)
		}
	}
	for _, o := range strings.Split(cfg.cors, ",") {
		if o = strings.TrimSpace(o); o == "" {
			continue
		}
		if o == "*" {
			if cfg.authOn() {
				c.failf("cors-origins", "* is refused with authentication, list the origins instead (e.g. https://app.example.com)")
			}
			continue
		}
		if why := originProblem(o); why != "" {
			c.failf("cors-origins", "%q %s; expected * or scheme://host[:port] without a path, such as https://app.example.com", o, why)
		}
	}

	// The UI policy.
	cfg.policies = c.checkPolicy(cfg)
	// Settings per caller.
	cfg.callers = c.checkCallers(cfg, getenv)

	// Logging.
	if _, ok := logLevel(cfg.logLevel); !ok {
		c.failf("log-level", "got %q; expected debug, info, warn or error", cfg.logLevel)
	}
	if !validLogFormat(cfg.logFormat) {
		c.failf("log-format", "got %q; expected text or json", cfg.logFormat)
	}
	return c.err()
}

// listenAddr checks that addr is host:port with a port number (an empty host is every
// interface).
func (c *checker) listenAddr(name, addr, example string) {
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		var ae *net.AddrError
		if errors.As(err, &ae) {
			err = errors.New(ae.Err)
		}
		c.failf(name, "%q is not host:port (%v); expected e.g. %s", addr, err, example)
		return
	}
	if !validPort(port, 0) {
		c.failf(name, "%q has no valid port; expected host:port with a port number from 0 to 65535, e.g. %s", addr, example)
	}
}

// validPort reports whether port is a number from least to 65535; empty is valid.
func validPort(port string, least uint64) bool {
	if port == "" {
		return true
	}
	n, err := strconv.ParseUint(port, 10, 16)
	return err == nil && n >= least
}

// sameListener reports whether listen addresses a and b (valid or not) would take the same
// port: the same port number, not 0, on the same host or on every interface.
func sameListener(a, b string) bool {
	if a == "" || b == "" {
		return false
	}
	ha, pa, errA := net.SplitHostPort(a)
	hb, pb, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil {
		return false
	}
	na, errA := strconv.ParseUint(pa, 10, 16)
	nb, errB := strconv.ParseUint(pb, 10, 16)
	if errA != nil || errB != nil || na != nb || na == 0 {
		return false
	}
	wildcard := func(h string) bool {
		ip, err := netip.ParseAddr(h)
		return h == "" || err == nil && ip.IsUnspecified()
	}
	if wildcard(ha) || wildcard(hb) || strings.EqualFold(ha, hb) {
		return true
	}
	ia, errA := netip.ParseAddr(ha)
	ib, errB := netip.ParseAddr(hb)
	return errA == nil && errB == nil && ia.Unmap() == ib.Unmap()
}

// urlError is why url.Parse refused a URL, without the URL, which may hold a password.
func urlError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

// isLoopback reports whether host is localhost or a loopback IP (127.0.0.1, ::1).
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// readableFile checks that path, when set, is a regular file the server can read, and
// reports whether it is one (false when path is empty).
func (c *checker) readableFile(name, path string) bool {
	if path == "" {
		return false
	}
	f, err := os.Open(path)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		c.failf(name, "cannot read %q: %v; expected a readable file", path, err)
		return false
	}
	defer f.Close()
	st, err := f.Stat()
	switch {
	case err != nil:
		c.failf(name, "cannot read %q: %v; expected a readable file", path, err)
	case st.IsDir():
		c.failf(name, "cannot read %q: it is a directory; expected a readable file", path)
	case !st.Mode().IsRegular():
		c.failf(name, "cannot read %q: not a regular file; expected a readable file", path)
	default:
		if _, err := f.Read(make([]byte, 1)); err != nil && err != io.EOF {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err
			}
			c.failf(name, "cannot read %q: %v; expected a readable file", path, err)
			return false
		}
		return true
	}
	return false
}

// apiKeyName is what the auth package accepts as the name of an API key.
var apiKeyName = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,64}$`)

// minAPIKey is the fewest characters of an API key given in GENUI_API_KEYS.
const minAPIKey = 16

// apiKeys checks GENUI_API_KEYS, name:key items separated by commas. Its errors name an
// item by its position and, when valid, its name: never a key, nor an item that may be one.
func (c *checker) apiKeys(list string) {
	const what = "GENUI_API_KEYS"
	seen := map[string]int{}
	n := 0
	for i, item := range strings.Split(list, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		n++
		pos := i + 1
		name, key, ok := strings.Cut(item, ":")
		switch {
		case !ok:
			c.add("%s: item %d is not name:key; expected name:key items separated by commas", what, pos)
		case !apiKeyName.MatchString(name):
			c.add("%s: item %d: the name is not 1 to 64 of A-Z a-z 0-9 . _ @ -; expected name:key", what, pos)
		case len(key) < minAPIKey:
			c.add("%s: item %d (%q): the key is shorter than %d characters; expected a key of at least %d", what, pos, name, minAPIKey, minAPIKey)
		case seen[name] > 0:
			c.add("%s: item %d (%q): item %d has the name too; expected a name of its own", what, pos, name, seen[name])
		default:
			seen[name] = pos
		}
	}
	if n == 0 {
		c.add("%s: no name:key item; expected name:key items separated by commas, or no GENUI_API_KEYS", what)
	}
}

// parseProxy parses an item of --trusted-proxies: a CIDR, or an IP as a /32 or /128.
// IPv4-mapped IPv6 addresses are taken as IPv4.
func parseProxy(s string) (netip.Prefix, error) {
	if p, err := netip.ParsePrefix(s); err == nil {
		p = p.Masked()
		if a := p.Addr(); a.Is4In6() && p.Bits() >= 96 {
			return netip.PrefixFrom(a.Unmap(), p.Bits()-96), nil
		}
		return p, nil
	}
	a, err := netip.ParseAddr(s)
	if err != nil {
		return netip.Prefix{}, err
	}
	a = a.Unmap().WithZone("")
	return netip.PrefixFrom(a, a.BitLen()), nil
}

// proxies returns the prefixes of --trusted-proxies, checked at start-up: single IPs as
// /32 or /128.
func (cfg *config) proxies() []netip.Prefix {
	var out []netip.Prefix
	for _, p := range strings.Split(cfg.trustedProxies, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		if pf, err := parseProxy(p); err == nil {
			out = append(out, pf)
		}
	}
	return out
}

// originProblem says what keeps o from being a CORS origin, scheme://host[:port]; empty
// when nothing does. The host may hold * wildcards (https://*.example.com).
func originProblem(o string) string {
	if !strings.Contains(o, "://") {
		return "has no scheme://"
	}
	u, err := url.Parse(o)
	switch {
	case err != nil:
		return fmt.Sprintf("is not a URL (%v)", urlError(err))
	case u.Scheme == "" || u.Opaque != "":
		return "has no scheme://"
	case u.User != nil:
		return "has user info"
	case u.Host == "" || u.Hostname() == "":
		return "has no host"
	case u.Path != "" || u.RawPath != "":
		return "has a path"
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || strings.Contains(o, "#"):
		return "has a query or fragment"
	case !validPort(u.Port(), 1):
		return "has no valid port"
	}
	return ""
}

// logLevel returns the level named debug, info, warn or error (in any case).
func logLevel(s string) (slog.Level, bool) {
	switch strings.ToLower(s) {
	case "debug":
		return slog.LevelDebug, true
	case "info":
		return slog.LevelInfo, true
	case "warn":
		return slog.LevelWarn, true
	case "error":
		return slog.LevelError, true
	}
	return 0, false
}

func validLogFormat(s string) bool {
	switch strings.ToLower(s) {
	case "text", "json":
		return true
	}
	return false
}

// newLogger returns the logger of the level and format cfg names, which validate checked.
func newLogger(cfg *config, out io.Writer) (*slog.Logger, error) {
	level, ok := logLevel(cfg.logLevel)
	if !ok {
		return nil, fmt.Errorf("--log-level: got %q; expected debug, info, warn or error", cfg.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch strings.ToLower(cfg.logFormat) {
	case "json":
		return slog.New(slog.NewJSONHandler(out, opts)), nil
	case "text":
		return slog.New(slog.NewTextHandler(out, opts)), nil
	}
	return nil, fmt.Errorf("--log-format: got %q; expected text or json", cfg.logFormat)
}

// authOn reports whether the configuration turns authentication on.
// redis is the Redis the configuration names, if any.
func (cfg *config) redis() redisconn.Config {
	return redisconn.Config{URL: cfg.redisURL, ClusterURL: cfg.redisCluster, SentinelURL: cfg.redisSentinel}
}

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

// The flags of the UI policy.
var policyFlags = []string{"url-schemes", "link-schemes", "url-hosts", "policy-functions", "policy-off", "policy-file"}

// checkPolicy builds the UI policies the configuration asks for: the flags' (each one
// given overriding the file's policy), and the policy file's, with its callers'.
func (c *checker) checkPolicy(cfg *config) *policy.Set {
	given := cfg.policyGiven
	if given == nil {
		given = map[string]bool{"url-schemes": true, "link-schemes": true}
	}
	var opts []policy.Option
	bad := false
	flagOpt := func(name string, opt policy.Option) {
		if !given[name] && cfg.policyFile != "" {
			return // the file's setting, or the default
		}
		// Each flag's value is checked on its own, so that an error names it.
		if _, err := policy.New(opt); err != nil {
			c.failf(name, "%s; expected %s", policyReason(err), policyExpected[name])
			bad = true
			return
		}
		opts = append(opts, opt)
	}
	flagOpt("url-schemes", policy.WithSchemes(splitList(cfg.urlSchemes)...))
	flagOpt("link-schemes", policy.WithLinkSchemes(splitList(cfg.linkSchemes)...))
	if hosts := splitList(cfg.urlHosts); len(hosts) > 0 || given["url-hosts"] {
		flagOpt("url-hosts", policy.WithHosts(hosts...))
	}
	if fns := splitList(cfg.policyFunctions); len(fns) > 0 {
		flagOpt("policy-functions", policy.WithFunctions(fns...))
	}
	var off []policy.Rule
	for _, name := range splitList(cfg.policyOff) {
		switch name {
		case "all":
			off = append(off, policy.Rules()...)
		case "none":
		default:
			r, err := policy.ParseRule(name)
			if err != nil {
				c.failf("policy-off", "%v", err)
				bad = true
				continue
			}
			off = append(off, r)
		}
	}
	if len(off) > 0 {
		opts = append(opts, policy.Without(off...))
	}
	if bad {
		return nil
	}
	if cfg.policyFile == "" {
		p, err := policy.New(opts...)
		if err != nil {
			c.add("the UI policy: %v", err)
			return nil
		}
		return &policy.Set{Default: p}
	}
	f, err := os.Open(cfg.policyFile)
	if err != nil {
		c.failf("policy-file", "%v", err)
		return nil
	}
	defer f.Close()
	set, err := policy.Decode(f, opts...)
	if err != nil {
		c.failf("policy-file", "%q: %v", cfg.policyFile, err)
		return nil
	}
	return set
}

var policyExpected = map[string]string{
	"url-schemes":      "comma-separated schemes such as https,http (data for data:image/… images)",
	"link-schemes":     "comma-separated schemes such as mailto,tel",
	"url-hosts":        "comma-separated hosts such as example.com,*.example.com",
	"policy-functions": "comma-separated function names of the catalog, such as formatString,openUrl",
}

// policyReason is an error of policy.New without the setting it names, which the flag
// does.
func policyReason(err error) string {
	msg := err.Error()
	if _, rest, ok := strings.Cut(msg, ": "); ok {
		return rest
	}
	return msg
}

// splitList splits a comma-separated value, leaving out empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// limits are what a model may write in a turn.
func (cfg *config) limits() genui.Limits {
	return genui.Limits{MaxOutputTokens: cfg.maxOutputTokens, Components: cfg.maxComponents, OutputBytes: int(cfg.maxOutputBytes),
		ToolCalls: cfg.maxToolCalls, DataModelBytes: int(cfg.maxDataModel), TurnTime: cfg.maxTurnTime}
}
