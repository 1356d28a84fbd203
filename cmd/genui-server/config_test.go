package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"flag"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui/models"
)

func TestConfigFromFlagsAndEnv(t *testing.T) {
	cfg, err := parseConfig(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.addr != ":3400" || cfg.bodyLimit != 20<<20 || cfg.catalogLimit != 2<<20 || cfg.sessions != 10000 || cfg.sessionTTL != time.Hour || cfg.cors != "" || len(cfg.origins()) != 1 || cfg.origins()[0] != "*" {
		t.Fatalf("defaults: %+v", cfg)
	}
	if cfg.convTTL != time.Hour || cfg.convs != 10000 || cfg.convBytes != 64<<20 {
		t.Fatalf("conversation defaults: %+v", cfg)
	}
	cfg, err = parseConfig(nil, env(map[string]string{"PORT": "8080", "GENUI_BODY_LIMIT": "5MiB", "GENUI_MODEL": "offline"}), io.Discard)
	if err != nil || cfg.addr != ":8080" || cfg.bodyLimit != 5<<20 || cfg.model != "offline" {
		t.Fatalf("env: %+v %v", cfg, err)
	}
	cfg, err = parseConfig([]string{"--addr", "127.0.0.1:9", "--body-limit", "1024"}, env(map[string]string{"GENUI_ADDR": ":1"}), io.Discard)
	if err != nil || cfg.addr != "127.0.0.1:9" || cfg.bodyLimit != 1024 {
		t.Fatalf("flags override env: %+v %v", cfg, err)
	}
	if cfg.catalogLimit != 1024 {
		t.Fatalf("unset, the catalog limit follows a smaller body limit: %d", cfg.catalogLimit)
	}
	if cfg, err := parseConfig([]string{"--sessions", "7"}, env(map[string]string{"GENUI_SESSIONS": "many"}), io.Discard); err != nil || cfg.sessions != 7 {
		t.Fatalf("a flag overrides an environment value, even a bad one: %+v %v", cfg, err)
	}
	if _, err := parseConfig(nil, env(map[string]string{"GENUI_SESSION_TTL": "soon"}), io.Discard); err == nil ||
		!strings.Contains(err.Error(), "--session-ttl (GENUI_SESSION_TTL)") || !strings.Contains(err.Error(), "expected a duration") {
		t.Fatalf("bad env value must name the flag and the variable: %v", err)
	}
	if cfg, err := parseConfig(nil, env(map[string]string{"GENUI_CONVERSATION_TTL": "10m", "GENUI_CONVERSATION_MEMORY": "1MiB"}), io.Discard); err != nil || cfg.convTTL != 10*time.Minute || cfg.convBytes != 1<<20 {
		t.Fatalf("conversation env: %+v %v", cfg, err)
	}
	if cfg, err := parseConfig(nil, env(map[string]string{"GENUI_MODEL_BREAKER": "5/30s"}), io.Discard); err != nil || cfg.breaker != (models.Breaker{Failures: 5, Window: 30 * time.Second}) {
		t.Fatalf("GENUI_MODEL_BREAKER: %+v %v", cfg, err)
	}
	if cfg, err := parseConfig([]string{"--model-breaker", "off"}, env(map[string]string{"GENUI_MODEL_BREAKER": "5/30s"}), io.Discard); err != nil || cfg.breaker.On() {
		t.Fatalf("--model-breaker off: %+v %v", cfg, err)
	}
	if cfg, err := parseConfig(nil, env(map[string]string{"GENUI_MODEL_H2C": "true"}), io.Discard); err != nil || !cfg.modelH2C {
		t.Fatalf("GENUI_MODEL_H2C: %+v %v", cfg, err)
	}
	if cfg, err := parseConfig([]string{"--model-h2c"}, env(nil), io.Discard); err != nil || !cfg.modelH2C {
		t.Fatalf("--model-h2c: %+v %v", cfg, err)
	}
	if _, err := parseConfig(nil, env(map[string]string{"GENUI_MODEL_H2C": "sometimes"}), io.Discard); err == nil || !strings.Contains(err.Error(), "--model-h2c (GENUI_MODEL_H2C)") {
		t.Fatalf("a bad GENUI_MODEL_H2C must name the flag and the variable: %v", err)
	}
	if _, err := parseConfig([]string{"--conversation-ttl", "0"}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "--conversation-ttl") {
		t.Fatalf("a zero conversation TTL must be refused: %v", err)
	}
	if cfg, err := parseConfig([]string{"--pprof-addr", "127.0.0.1:0"}, env(nil), io.Discard); err != nil || cfg.pprofAddr != "127.0.0.1:0" {
		t.Fatalf("pprof flag: %+v %v", cfg, err)
	}
	cfg, err = parseConfig(nil, env(map[string]string{"GENUI_API_KEYS": "alice:0123456789abcdef"}), io.Discard)
	if err != nil || cfg.apiKeys != "alice:0123456789abcdef" || !cfg.authOn() || len(cfg.origins()) != 0 {
		t.Fatalf("GENUI_API_KEYS turns authentication on, CORS same-origin: %+v %v", cfg, err)
	}
	var help bytes.Buffer
	if _, err := parseConfig([]string{"--help"}, env(nil), &help); !errors.Is(err, flag.ErrHelp) || !strings.Contains(help.String(), "GENUI_MODEL") {
		t.Fatalf("--help must list env equivalents: %v %s", err, help.String())
	}
}

// configCase is a configuration and the error it gets: none when want is empty, else one
// holding every string of want.
type configCase struct {
	name string
	args []string
	env  map[string]string
	want []string
}

func good(args ...string) configCase { return configCase{name: strings.Join(args, " "), args: args} }

// bad is a command line refused with an error naming flag (the first argument).
func bad(args ...string) configCase {
	return configCase{name: strings.Join(args, " "), args: args, want: []string{args[0]}}
}

// writeTemp writes content to a file of dir and returns its path.
func writeTemp(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// publicKeyPEM returns a PEM ECDSA public key.
func publicKeyPEM(t *testing.T) string {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKIXPublicKey(&k.PublicKey)
	if err != nil {
		t.Fatal(err)
	}
	return string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}))
}

func TestConfigValidation(t *testing.T) {
	dir := t.TempDir()
	file := writeTemp(t, dir, "readable", "x")
	// A file of each kind, with what auth.New accepts.
	valid := map[string]string{
		"--api-keys-file":   keysFile(t),
		"--jwt-key-file":    writeTemp(t, dir, "key.pem", publicKeyPEM(t)),
		"--jwt-secret-file": writeTemp(t, dir, "secret", "0123456789abcdef0123456789abcdef\n"),
	}
	missing := filepath.Join(dir, "missing")

	var cases []configCase
	for _, name := range []string{"--sessions", "--conversations", "--catalog-cache", "--ws-sessions", "--ws-turns", "--rate-burst"} {
		cases = append(cases, good(name, "1"), bad(name, "0"), bad(name, "-5"), bad(name, "x"))
	}
	cases = append(cases, good("--max-repairs", "0"), bad("--max-repairs", "-1"))
	for _, name := range []string{"--caller-streams", "--max-turns", "--caller-catalogs", "--caller-sessions", "--caller-conversations"} {
		cases = append(cases, good(name, "0"), good(name, "3"), bad(name, "-1"))
	}
	cases = append(cases, good("--rate-limit", "0"), good("--rate-limit", "0.5"),
		bad("--rate-limit", "-1"), bad("--rate-limit", "NaN"), bad("--rate-limit", "+Inf"), bad("--rate-limit", "x"))
	// Sizes.
	cases = append(cases, good("--body-limit", "1KiB"), bad("--body-limit", "1023"), bad("--body-limit", "0"), bad("--body-limit", "-1"),
		bad("--body-limit", "20 parsecs"), bad("--body-limit", "9999999999GiB"),
		good("--catalog-limit", "1KiB"), bad("--catalog-limit", "1000"), configCase{name: "catalog over body", args: []string{"--catalog-limit", "30MiB"}, want: []string{"--catalog-limit: 30MiB", "--body-limit 20MiB"}},
		bad("--catalog-limit", "2MiB", "--body-limit", "1MiB"), good("--catalog-limit", "1MiB", "--body-limit", "1MiB"),
		good("--conversation-memory", "0"), bad("--conversation-memory", "-1"), good("--catalog-cache-bytes", "0"),
		bad("--catalog-cache-bytes", "lots"), good("--stream-memory", "0"), good("--stream-memory", "512KiB"), bad("--stream-memory", "-1KiB"))
	// Durations.
	for _, name := range []string{"--session-ttl", "--conversation-ttl", "--drain-timeout", "--stream-retention", "--stream-grace", "--reconnect-window"} {
		cases = append(cases, good(name, "1ms"), bad(name, "0"), bad(name, "-1s"), bad(name, "soon"))
	}
	for _, name := range []string{"--keepalive", "--sse-keepalive"} {
		cases = append(cases, good(name, "0"), good(name, "10s"), bad(name, "-1s"))
	}
	// Addresses.
	cases = append(cases, good("--addr", "localhost:8080"), good("--addr", "[::1]:0"), good("--addr", ":3400"),
		bad("--addr", "abc"), bad("--addr", ":99999"), bad("--addr", ":http"), bad("--addr", ""), bad("--addr", "1:2:3"),
		good("--pprof-addr", "127.0.0.1:6060"), bad("--pprof-addr", "6060"), bad("--pprof-addr", ":3400"),
		good("--metrics-addr", ":9090"), bad("--metrics-addr", "9090"), bad("--metrics-addr", ":3400"), bad("--metrics-addr", "127.0.0.1:3400"),
		bad("--metrics-addr", "127.0.0.1:6060", "--pprof-addr", "127.0.0.1:6060"),
		good("--metrics-addr", "127.0.0.1:0", "--addr", "127.0.0.1:0"), good("--metrics-addr", "127.0.0.1:9090", "--addr", "127.0.0.2:9090"))
	// URLs.
	cases = append(cases, good("--redis-url", "redis://127.0.0.1:6379/0"), good("--redis-url", "rediss://user:pw@redis.example.com:6380"),
		bad("--redis-url", "ftp://127.0.0.1"), bad("--redis-url", "127.0.0.1:6379"), bad("--redis-url", "redis://127.0.0.1:6379/zero"),
		good("--redis-url", "unix:///run/redis.sock"),
		good("--redis-cluster-url", "redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002"),
		good("--redis-cluster-url", "rediss://user:pw@redis.example.com:7000"),
		bad("--redis-cluster-url", "http://127.0.0.1:7000"), bad("--redis-cluster-url", "redis://127.0.0.1:7000?dial_timeout=soon"),
		good("--redis-sentinel-url", "redis://127.0.0.1:26379?addr=127.0.0.1:26380&master_name=mymaster"),
		good("--redis-sentinel-url", "rediss://sentinel.example.com:26379?master_name=mymaster&password=pw"),
		configCase{name: "sentinel without a master", args: []string{"--redis-sentinel-url", "redis://127.0.0.1:26379"}, want: []string{"--redis-sentinel-url: ", "master_name"}},
		bad("--redis-sentinel-url", "127.0.0.1:26379?master_name=mymaster"),
		configCase{name: "two Redis", args: []string{"--redis-url", "redis://127.0.0.1:6379", "--redis-cluster-url", "redis://127.0.0.1:7000"}, want: []string{"--redis-url: ", "name one Redis"}},
		good("--redis-wait-replicas", "0"), good("--redis-wait-replicas", "1", "--redis-cluster-url", "redis://127.0.0.1:7000"),
		bad("--redis-wait-replicas", "-1", "--redis-url", "redis://127.0.0.1:6379"),
		configCase{name: "acknowledgements without Redis", args: []string{"--redis-wait-replicas", "1"}, want: []string{"--redis-wait-replicas: ", "without a Redis"}},
		good("--redis-wait-timeout", "250ms"), bad("--redis-wait-timeout", "0"), bad("--redis-wait-timeout", "-1s"),
		good("--public-url", "https://ui.example.com"), good("--public-url", "http://127.0.0.1:3400/genui/"),
		bad("--public-url", "ui.example.com"), bad("--public-url", "ftp://ui.example.com"), bad("--public-url", "https://"),
		bad("--public-url", "https://ui.example.com/?x=1"), bad("--public-url", "https://ui.example.com:99999"), bad("--public-url", "https://ui.example.com:x"),
		good("--jwt-jwks-url", "https://issuer.example.com/.well-known/jwks.json"), good("--jwt-jwks-url", "http://127.0.0.1:8080/jwks"),
		good("--jwt-jwks-url", "http://localhost/jwks"), good("--jwt-jwks-url", "http://[::1]:9/jwks"),
		bad("--jwt-jwks-url", "http://issuer.example.com/jwks"), bad("--jwt-jwks-url", "jwks.json"), bad("--jwt-jwks-url", "https:///jwks"))
	// Files: readable, and holding what the authenticator reads.
	for _, name := range []string{"--api-keys-file", "--jwt-key-file", "--jwt-secret-file"} {
		c := bad(name, missing)
		c.want = append(c.want, "cannot read", "no such file or directory")
		d := bad(name, dir)
		d.want = append(d.want, "cannot read", "directory")
		x := bad(name, file)
		cases = append(cases, good(name, valid[name]), c, d, x)
	}
	cases = append(cases,
		configCase{name: "keys file with a bad hash", args: []string{"--api-keys-file", writeTemp(t, dir, "bad-keys", "# keys\nalice:0123\n")},
			want: []string{"--api-keys-file: ", ":2: ", "64 hex digits"}},
		configCase{name: "keys file without keys", args: []string{"--api-keys-file", writeTemp(t, dir, "no-keys", "# none\n")},
			want: []string{"--api-keys-file: ", "no keys"}},
		configCase{name: "not a PEM key", args: []string{"--jwt-key-file", writeTemp(t, dir, "bad.pem", "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n")},
			want: []string{"--jwt-key-file: ", "not a PEM RSA, ECDSA or Ed25519 public key"}},
		configCase{name: "short secret", args: []string{"--jwt-secret-file", writeTemp(t, dir, "short", "0123456789abcdef0123456789abcde\n")},
			want: []string{"--jwt-secret-file: ", "at least 32 bytes"}},
		configCase{name: "short secret from env", env: map[string]string{"GENUI_JWT_SECRET_FILE": filepath.Join(dir, "short")},
			want: []string{"--jwt-secret-file (GENUI_JWT_SECRET_FILE): ", "at least 32 bytes"}})
	// JWT.
	cases = append(cases,
		configCase{name: "two verifiers", args: []string{"--jwt-jwks-url", "https://issuer.example.com/jwks", "--jwt-secret-file", file},
			want: []string{"--jwt-jwks-url", "--jwt-secret-file", "at most one"}},
		configCase{name: "three verifiers", args: []string{"--jwt-key-file", file, "--jwt-secret-file", file},
			env: map[string]string{"GENUI_JWT_JWKS_URL": "https://issuer.example.com/jwks"}, want: []string{"--jwt-jwks-url (GENUI_JWT_JWKS_URL)", "--jwt-key-file", "--jwt-secret-file"}},
		bad("--jwt-issuer", "https://issuer.example.com"), bad("--jwt-audience", "genui"),
		good("--jwt-issuer", "https://issuer.example.com", "--jwt-audience", "genui", "--jwt-key-file", valid["--jwt-key-file"]))
	// GENUI_API_KEYS.
	keys := func(v string, want ...string) configCase {
		return configCase{name: "GENUI_API_KEYS=" + v, env: map[string]string{"GENUI_API_KEYS": v}, want: want}
	}
	cases = append(cases, keys("alice:0123456789abcdef"), keys(" alice:0123456789abcdef , bob:0123456789abcdefgh ,"),
		keys("alice:0123456789abcde", "GENUI_API_KEYS", "item 1", `"alice"`, "16"),
		keys("alice:0123456789abcdef,0123456789abcdef", "GENUI_API_KEYS", "item 2", "name:key"),
		keys("alice:", "GENUI_API_KEYS", "item 1"),
		keys("a lice:0123456789abcdef", "GENUI_API_KEYS", "item 1", "name"),
		keys("alice:0123456789abcdef,alice:fedcba9876543210", "GENUI_API_KEYS", "item 2", `"alice"`),
		keys(" , ", "GENUI_API_KEYS", "no name:key"))
	// Trusted proxies.
	cases = append(cases, good("--trusted-proxies", "10.0.0.1, 10.1.0.0/16,::1,fd00::/8"),
		bad("--trusted-proxies", "10.0.0.300"), bad("--trusted-proxies", "10.0.0.0/33"), bad("--trusted-proxies", "10.0.0.1,proxy.example.com"))
	// CORS.
	cases = append(cases, good("--cors-origins", "*"), good("--cors-origins", "https://app.example.com, http://localhost:5173"),
		good("--cors-origins", "https://*.example.com"),
		bad("--cors-origins", "https://app.example.com/"), bad("--cors-origins", "app.example.com"), bad("--cors-origins", "https://app.example.com:99999"),
		bad("--cors-origins", "https://app.example.com?x"), bad("--cors-origins", "https://user@app.example.com"),
		configCase{name: "* with API keys", args: []string{"--cors-origins", "*"}, env: map[string]string{"GENUI_API_KEYS": "alice:0123456789abcdef"},
			want: []string{"--cors-origins", "with authentication, list the origins"}},
		configCase{name: "* with a JWT verifier", args: []string{"--jwt-jwks-url", "https://issuer.example.com/jwks"}, env: map[string]string{"GENUI_CORS_ORIGINS": "https://a.example.com,*"},
			want: []string{"--cors-origins (GENUI_CORS_ORIGINS)", "with authentication, list the origins"}},
		configCase{name: "origins with authentication", args: []string{"--cors-origins", "https://app.example.com", "--api-keys-file", valid["--api-keys-file"]}})
	// The model, and what its provider needs of the environment.
	cases = append(cases, good("--model", "offline"), good("--model", "genui/offline"), good("--model", "ollama/llama3.2:3b"), good("--model", "openai/gpt-4o-mini"),
		bad("--model", "bogus"), bad("--model", "foo/"), bad("--model", "/bar"), bad("--model", "genui/online"), bad("--model", "foo bar/baz"), bad("--model", "ollama/llama 3"),
		configCase{name: "--model foo/bar", args: []string{"--model", "foo/bar"}, want: []string{"--model: ", `"foo/bar"`, "OPENAI_BASE_URL"}},
		configCase{name: "--model foo/bar with OPENAI_BASE_URL", args: []string{"--model", "foo/bar"}, env: map[string]string{"OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"}},
		configCase{name: "GENUI_MODEL=bogus", env: map[string]string{"GENUI_MODEL": "bogus"}, want: []string{"--model (GENUI_MODEL): ", "<provider>/<model>"}},
		configCase{name: "googleai without a key", args: []string{"--model", "googleai/gemini-2.5-flash"}, want: []string{"--model: ", "GEMINI_API_KEY or GOOGLE_API_KEY"}},
		configCase{name: "googleai with a key", args: []string{"--model", "googleai/gemini-2.5-flash"}, env: map[string]string{"GOOGLE_API_KEY": "k"}},
		configCase{name: "vertexai without a project", args: []string{"--model", "vertexai/gemini-2.5-flash"}, want: []string{"--model: ", "GOOGLE_CLOUD_PROJECT"}},
		configCase{name: "vertexai with a project", args: []string{"--model", "vertexai/gemini-2.5-flash"}, env: map[string]string{"GOOGLE_CLOUD_PROJECT": "p"}})
	// Fallback chains: each name is checked as one model is.
	cases = append(cases, good("--model", "ollama/llama3.2:3b,openai/gpt-4o-mini,offline"),
		configCase{name: "chain with a key", args: []string{"--model", "googleai/gemini-2.5-flash, compat/gpt-4.1-mini"},
			env: map[string]string{"GOOGLE_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:8000/v1"}},
		configCase{name: "chain, second without its endpoint", args: []string{"--model", "offline,compat/gpt-4.1-mini"}, want: []string{"--model: ", `"compat/gpt-4.1-mini"`, "OPENAI_BASE_URL"}},
		configCase{name: "chain, first without its key", args: []string{"--model", "googleai/gemini-2.5-flash,offline"}, want: []string{"--model: ", "GEMINI_API_KEY"}},
		configCase{name: "GENUI_MODEL chain with an empty name", env: map[string]string{"GENUI_MODEL": "offline,,ollama/x"}, want: []string{"--model (GENUI_MODEL): ", "name 2 of the chain is empty"}},
		configCase{name: "chain naming a model twice", args: []string{"--model", "ollama/x,offline,ollama/x"}, want: []string{"--model: ", "ollama/x appears twice"}},
		bad("--model", "offline,bogus"), bad("--model", "offline,"))
	// The breaker of each model.
	cases = append(cases, good("--model-breaker", ""), good("--model-breaker", "off"), good("--model-breaker", "5/30s"),
		good("--model-breaker", "1/1m", "--model", "ollama/x,offline"),
		bad("--model-breaker", "5"), bad("--model-breaker", "0/30s"), bad("--model-breaker", "5/0s"), bad("--model-breaker", "5/30"),
		bad("--model-breaker", "-1/30s"), bad("--model-breaker", "five/30s"),
		configCase{name: "GENUI_MODEL_BREAKER=5", env: map[string]string{"GENUI_MODEL_BREAKER": "5"}, want: []string{"--model-breaker (GENUI_MODEL_BREAKER): ", "<failures>/<window>"}})
	for _, v := range []struct{ name, good, bad string }{
		{"OPENAI_BASE_URL", "https://api.example.com/v1", "api.example.com/v1"},
		{"OLLAMA_HOST", "127.0.0.1:11434", "ftp://127.0.0.1"},
		{"GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:8089", "http://:8089"},
	} {
		cases = append(cases, configCase{name: v.name + "=" + v.good, env: map[string]string{v.name: v.good}},
			configCase{name: v.name + "=" + v.bad, env: map[string]string{v.name: v.bad}, want: []string{v.name + ": ", "http or https URL"}},
			configCase{name: v.name + " port", env: map[string]string{v.name: "http://127.0.0.1:99999"}, want: []string{v.name + ": "}},
			configCase{name: v.name + " not a URL", env: map[string]string{v.name: "http://[::1"}, want: []string{v.name + ": ", "not a URL"}})
	}
	cases = append(cases, configCase{name: "a provider URL's password is not shown", env: map[string]string{"OPENAI_BASE_URL": "ftp://user:s3cret-pw@host"},
		want: []string{"OPENAI_BASE_URL: ", "xxxxx"}})

	// Logging.
	cases = append(cases, good("--log-level", "debug"), good("--log-level", "ERROR"), bad("--log-level", "verbose"), bad("--log-level", "info+2"),
		good("--log-format", "json"), bad("--log-format", "yaml"))
	// Unknown flags and arguments.
	cases = append(cases, bad("--no-such-flag"), bad("--sessions"), configCase{name: "argument", args: []string{"serve"}, want: []string{`"serve"`}})
	// Values from the environment name their variable.
	cases = append(cases,
		configCase{name: "PORT", env: map[string]string{"PORT": "http"}, want: []string{"--addr (PORT)"}},
		configCase{name: "GENUI_ADDR over PORT", env: map[string]string{"PORT": "8080", "GENUI_ADDR": "8080"}, want: []string{"--addr (GENUI_ADDR)"}},
		configCase{name: "metrics and addr from env", env: map[string]string{"GENUI_ADDR": ":8080", "GENUI_METRICS_ADDR": ":8080"},
			want: []string{"--metrics-addr (GENUI_METRICS_ADDR)", "--addr (GENUI_ADDR)"}},
		configCase{name: "catalog over body from env", args: []string{"--catalog-limit", "4MiB"}, env: map[string]string{"GENUI_BODY_LIMIT": "3MiB"},
			want: []string{"--catalog-limit: 4MiB", "--body-limit (GENUI_BODY_LIMIT) 3MiB"}})

	fset, envOf := newFlagSet(&config{}, env(nil))
	check := func(t *testing.T, c configCase) {
		t.Helper()
		_, err := parseConfig(c.args, env(c.env), io.Discard)
		if len(c.want) == 0 {
			if err != nil {
				t.Fatalf("refused: %v", err)
			}
			return
		}
		if err == nil {
			t.Fatal("accepted")
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("error of more than one line: %q", err)
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("error %q does not say %q", err, w)
			}
		}
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			check(t, c)
			// The same value from the environment: the error names the flag and the variable.
			if len(c.args) != 2 || c.env != nil || !strings.HasPrefix(c.args[0], "--") || fset.Lookup(c.args[0][2:]) == nil || c.args[1] == "" {
				return
			}
			name := c.args[0][2:]
			ec := configCase{env: map[string]string{envOf[name]: c.args[1]}}
			if len(c.want) > 0 {
				ec.want = []string{"--" + name + " (" + envOf[name] + ")"}
			}
			check(t, ec)
		})
	}
}

// TestConfigSessionTTLZeroWithRedis: a zero session TTL with Redis once reached
// session.NewRedis, which panics; it is a configuration error.
func TestConfigSessionTTLZeroWithRedis(t *testing.T) {
	var stderr bytes.Buffer
	err := run(context.Background(), []string{"--session-ttl", "0", "--redis-url", "redis://127.0.0.1:6379"}, env(nil), &stderr)
	var ce *configError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "--session-ttl") || !strings.Contains(err.Error(), "positive") {
		t.Fatalf("want a configuration error naming --session-ttl, got %v", err)
	}
	for _, v := range []string{"0", "0s", "-1m"} {
		if _, err := parseConfig(nil, env(map[string]string{"GENUI_SESSION_TTL": v, "GENUI_REDIS_URL": "redis://127.0.0.1:6379"}), io.Discard); err == nil ||
			!strings.Contains(err.Error(), "--session-ttl (GENUI_SESSION_TTL)") {
			t.Fatalf("GENUI_SESSION_TTL=%s: %v", v, err)
		}
	}
}

func TestConfigNegativeSessions(t *testing.T) {
	_, err := parseConfig([]string{"--sessions", "-5"}, env(nil), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--sessions") || !strings.Contains(err.Error(), "at least 1") {
		t.Fatalf("--sessions -5: %v", err)
	}
	_, err = parseConfig(nil, env(map[string]string{"GENUI_SESSIONS": "-5"}), io.Discard)
	if err == nil || !strings.Contains(err.Error(), "--sessions (GENUI_SESSIONS)") {
		t.Fatalf("GENUI_SESSIONS=-5: %v", err)
	}
}

// helpEntries splits --help output by flag: name → its lines.
func helpEntries(help string) map[string]string {
	out := map[string]string{}
	name := ""
	for _, line := range strings.Split(help, "\n") {
		if strings.HasPrefix(line, "  -") {
			name = strings.TrimPrefix(strings.Fields(line)[0], "-")
		}
		if name != "" {
			out[name] += line + "\n"
		}
	}
	return out
}

func TestConfigFlagHelp(t *testing.T) {
	var help bytes.Buffer
	if _, err := parseConfig([]string{"--help"}, env(nil), &help); !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	entries := helpEntries(help.String())
	fset, envOf := newFlagSet(&config{}, env(nil))
	n := 0
	fset.VisitAll(func(f *flag.Flag) {
		n++
		e, ok := entries[f.Name]
		if !ok {
			t.Errorf("--help does not list --%s", f.Name)
		}
		if envOf[f.Name] == "" || !strings.Contains(e, "(env "+envOf[f.Name]+")") {
			t.Errorf("--help does not give the environment variable of --%s:\n%s", f.Name, e)
		}
	})
	if n != len(entries) || n < 40 {
		t.Errorf("%d flags, %d in --help", n, len(entries))
	}
	for _, name := range []string{"keepalive", "sse-keepalive"} {
		if !strings.Contains(entries[name], "0: off") {
			t.Errorf("--help of --%s does not say 0: off:\n%s", name, entries[name])
		}
	}
	if !strings.Contains(help.String(), "GENUI_API_KEYS") || !strings.Contains(entries["addr"], "PORT") {
		t.Error("--help does not mention GENUI_API_KEYS and PORT")
	}
}

// TestConfigFlagZeroMeansOffWhereHelpSaysSo: a numeric flag takes 0 exactly when its help
// says what 0 means; none takes a negative value.
func TestConfigFlagZeroMeansOffWhereHelpSaysSo(t *testing.T) {
	fset, _ := newFlagSet(&config{}, env(nil))
	zeroSaid := regexp.MustCompile(`\b0: (off|none|no bound)\b`)
	var durations, zeroOK []string
	fset.VisitAll(func(f *flag.Flag) {
		negative := "-1"
		switch v := f.Value.(type) {
		case *byteSize:
		case flag.Getter:
			switch v.Get().(type) {
			case int, float64:
			case time.Duration:
				negative = "-1s"
				durations = append(durations, f.Name)
			default:
				return
			}
		default:
			return
		}
		_, err := parseConfig([]string{"--" + f.Name, "0"}, env(nil), io.Discard)
		if says := zeroSaid.MatchString(f.Usage); says != (err == nil) {
			t.Errorf("--%s 0: help says what 0 means: %v; error: %v", f.Name, says, err)
		}
		if err == nil {
			zeroOK = append(zeroOK, f.Name)
		} else if !strings.Contains(err.Error(), "--"+f.Name) {
			t.Errorf("--%s 0: the error does not name the flag: %v", f.Name, err)
		}
		if _, err := parseConfig([]string{"--" + f.Name, negative}, env(nil), io.Discard); err == nil || !strings.Contains(err.Error(), "--"+f.Name) {
			t.Errorf("--%s %s: %v", f.Name, negative, err)
		}
	})
	for _, d := range durations {
		if slices.Contains(zeroOK, d) != (d == "keepalive" || d == "sse-keepalive" || d == "max-turn-time") {
			t.Errorf("--%s: only the keepalives and the turn limit may be 0 (accepted: %v)", d, zeroOK)
		}
	}
	if len(durations) != 11 {
		t.Errorf("durations: %v", durations)
	}
}

func TestConfigErrorsNeverShowAPIKeys(t *testing.T) {
	secrets := []string{"sk-live-0123456789abcdef", "short-key", "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345", "0123456789abcdefXYZ"}
	for _, c := range []struct {
		keys string
		args []string
	}{
		{keys: "alice:sk-live-0123456789abcdef,bob:short-key"},
		{keys: "ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"},
		{keys: "alice:sk-live-0123456789abcdef,ABCDEFGHIJKLMNOPQRSTUVWXYZ012345"},
		{keys: "alice:sk-live-0123456789abcdef,alice:0123456789abcdefXYZ"},
		{keys: "sk-live-0123456789abcdef :0123456789abcdefXYZ"},
		{keys: "alice:sk-live-0123456789abcdef", args: []string{"--cors-origins", "*", "--sessions", "-5", "--jwt-issuer", "x"}},
		{keys: "alice:sk-live-0123456789abcdef,", args: []string{"--trusted-proxies", "nowhere", "--redis-url", "redis://:short-key@host:bad"}},
	} {
		var stderr bytes.Buffer
		err := run(context.Background(), c.args, env(map[string]string{"GENUI_API_KEYS": c.keys}), &stderr)
		var ce *configError
		if !errors.As(err, &ce) {
			t.Fatalf("%q %v: want a configuration error, got %v", c.keys, c.args, err)
		}
		for _, s := range secrets {
			if strings.Contains(err.Error(), s) || strings.Contains(stderr.String(), s) {
				t.Errorf("the error shows a key: %v\n%s", err, stderr.String())
			}
		}
	}
}

func TestConfigTrustedProxies(t *testing.T) {
	cfg, err := parseConfig([]string{"--trusted-proxies", " 10.0.0.1, 10.1.2.3/16,::1 , ::ffff:192.168.0.1,fd00::1/8,"}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range cfg.proxies() {
		got = append(got, p.String())
	}
	want := []string{"10.0.0.1/32", "10.1.0.0/16", "::1/128", "192.168.0.1/32", "fd00::/8"}
	if !slices.Equal(got, want) {
		t.Fatalf("proxies %v, want %v", got, want)
	}
	if p := cfg.proxies()[0]; !p.Contains(netip.MustParseAddr("10.0.0.1")) || p.Contains(netip.MustParseAddr("10.0.0.2")) {
		t.Fatalf("single IP as a /32: %v", p)
	}
	if cfg, err := parseConfig(nil, env(nil), io.Discard); err != nil || len(cfg.proxies()) != 0 {
		t.Fatalf("no proxies by default: %v", err)
	}
}

func TestConfigLogger(t *testing.T) {
	for _, c := range []struct{ level, format string }{{"debug", "text"}, {"WARN", "JSON"}, {"error", "json"}} {
		cfg, err := parseConfig([]string{"--log-level", c.level, "--log-format", c.format}, env(nil), io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		log, err := newLogger(cfg, &out)
		if err != nil {
			t.Fatal(err)
		}
		log.Error("m")
		if json := strings.HasPrefix(out.String(), "{"); json != strings.EqualFold(c.format, "json") {
			t.Errorf("%s: %s", c.format, out.String())
		}
	}
	if _, err := newLogger(&config{logLevel: "info", logFormat: "yaml"}, io.Discard); err == nil {
		t.Error("newLogger took format yaml")
	}
}

// TestExitStatusOfBadConfig runs the binary with refused configurations: it exits with
// status 2 and one line on stderr naming the flag.
func TestExitStatusOfBadConfig(t *testing.T) {
	bin := binary(t)
	var base []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(name, "GENUI_"), name == "PORT", name == "GEMINI_API_KEY", name == "GOOGLE_API_KEY", name == "GOOGLE_CLOUD_PROJECT",
			slices.ContainsFunc(providerURLs, func(v struct{ name, example string }) bool { return v.name == name }):
		default:
			base = append(base, kv)
		}
	}
	dir := t.TempDir()
	shortSecret := writeTemp(t, dir, "short-secret", "too-short\n")
	badKeys := writeTemp(t, dir, "bad-keys", "alice:0123456789abcdef\n")
	badPEM := writeTemp(t, dir, "bad.pem", "not a key\n")
	for _, c := range []struct {
		args []string
		env  []string
		want []string
	}{
		{args: []string{"--sessions", "-5"}, want: []string{"--sessions", "at least 1"}},
		{args: []string{"--session-ttl", "0", "--redis-url", "redis://127.0.0.1:6379"}, want: []string{"--session-ttl", "positive"}},
		{env: []string{"GENUI_SESSION_TTL=0", "GENUI_REDIS_URL=redis://127.0.0.1:6379"}, want: []string{"--session-ttl (GENUI_SESSION_TTL)"}},
		{args: []string{"--sessions", "many"}, want: []string{"--sessions", "expected a whole number"}},
		{args: []string{"--redis-sentinel-url", "redis://127.0.0.1:26379"}, want: []string{"--redis-sentinel-url: ", "master_name"}},
		{env: []string{"GENUI_REDIS_CLUSTER_URL=redis://127.0.0.1:7000", "GENUI_REDIS_URL=redis://127.0.0.1:6379"}, want: []string{"--redis-url (GENUI_REDIS_URL): ", "name one Redis"}},
		{env: []string{"GENUI_REDIS_CLUSTER_URL=cluster.example.com:7000"}, want: []string{"--redis-cluster-url (GENUI_REDIS_CLUSTER_URL): "}},
		{args: []string{"--no-such-flag"}, want: []string{"--no-such-flag"}},
		{args: []string{"--metrics-addr", ":3400"}, want: []string{"--metrics-addr", "--addr"}},
		{args: []string{"--model", "bogus"}, want: []string{"--model: ", `"bogus"`, "<provider>/<model>"}},
		{args: []string{"--model", "foo/bar"}, want: []string{"--model: ", `"foo/bar"`, "OPENAI_BASE_URL"}},
		{env: []string{"GENUI_MODEL=googleai/gemini-2.5-flash"}, want: []string{"--model (GENUI_MODEL): ", "GEMINI_API_KEY"}},
		{args: []string{"--model", "foo/bar"}, env: []string{"OPENAI_BASE_URL=localhost:8000/v1"}, want: []string{"OPENAI_BASE_URL: ", "http or https URL"}},
		{env: []string{"OLLAMA_HOST=http://[::1"}, want: []string{"OLLAMA_HOST: ", "not a URL"}},
		{args: []string{"--jwt-secret-file", shortSecret}, want: []string{"--jwt-secret-file: ", "at least 32 bytes"}},
		{args: []string{"--api-keys-file", badKeys}, want: []string{"--api-keys-file: ", ":1: ", "64 hex digits"}},
		{env: []string{"GENUI_JWT_KEY_FILE=" + badPEM}, want: []string{"--jwt-key-file (GENUI_JWT_KEY_FILE): ", "PEM"}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		cmd := exec.CommandContext(ctx, bin, c.args...)
		cmd.Env = append(slices.Clone(base), c.env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		cancel()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 {
			t.Errorf("%v %v: exit %v, want status 2\n%s", c.args, c.env, err, stderr.String())
			continue
		}
		lines := strings.Split(strings.TrimSuffix(stderr.String(), "\n"), "\n")
		if len(lines) != 1 || !strings.HasPrefix(lines[0], "genui-server: ") || stdout.Len() != 0 {
			t.Errorf("%v %v: want one line on stderr, got:\n%s", c.args, c.env, stderr.String())
		}
		for _, w := range c.want {
			if !strings.Contains(lines[0], w) {
				t.Errorf("%v %v: %q does not say %q", c.args, c.env, lines[0], w)
			}
		}
	}
}

// The configuration page's table lists every flag, with its environment variable, and no
// flag the server does not have.
func TestConfigDocTable(t *testing.T) {
	page, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(page), "\n| Flag | Env | Default | Meaning |\n")
	if !ok {
		t.Fatal("docs/configuration.md has no table of the flags")
	}
	section, _, _ = strings.Cut(section, "\n\n")
	rows := map[string]string{}
	for _, line := range strings.Split(section, "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 4 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`--") {
			continue
		}
		rows[strings.Trim(strings.TrimSpace(cells[1]), "`-")] = strings.Trim(strings.TrimSpace(cells[2]), "`")
	}
	fset, envOf := newFlagSet(&config{}, env(nil))
	fset.VisitAll(func(f *flag.Flag) {
		got, ok := rows[f.Name]
		switch {
		case !ok:
			t.Errorf("docs/configuration.md lacks --%s", f.Name)
		case got != envOf[f.Name]:
			t.Errorf("docs/configuration.md: --%s is configured by %s, not %s", f.Name, envOf[f.Name], got)
		}
		delete(rows, f.Name)
	})
	for name := range rows {
		t.Errorf("docs/configuration.md lists --%s, which the server does not have", name)
	}
}
