package main

import (
	"fmt"
	"net/url"
	"os"
	"slices"
	"strings"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/genui/models"
)

// The checks of what the flags name beyond their own value: the model and its provider's
// environment, the contents of the authenticator's files.

// checkModel checks --model, and that the environment gives what its provider needs, as
// models.Plugins would at start-up: an empty name picks a model from the environment.
func (c *checker) checkModel(name string, getenv func(string) string) {
	if name == "" || name == "offline" {
		return
	}
	if err := models.Check(name, getenv); err != nil {
		c.failf("model", "%v", err)
	}
}

// checkModelList checks a comma-separated list of models (flag name): each one name, as
// --model names a model; it returns the names resolved.
func (c *checker) checkModelList(name, list string, getenv func(string) string) []string {
	var out []string
	for _, raw := range strings.Split(list, ",") {
		m := strings.TrimSpace(raw)
		if m == "" {
			continue
		}
		m = models.Resolve(m)
		if err := models.Check(m, getenv); err != nil {
			c.failf(name, "%v", err)
			continue
		}
		if !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// providerURLs are the environment variables naming a model provider's endpoint, and an
// example of each. OLLAMA_HOST may be host:port, as Ollama takes it.
var providerURLs = []struct{ name, example string }{
	{"OPENAI_BASE_URL", "https://api.example.com/v1"},
	{"OLLAMA_HOST", "http://localhost:11434"},
	{"GOOGLE_GEMINI_BASE_URL", "https://generativelanguage.googleapis.com"},
}

// checkProviderURLs checks the endpoints the environment gives model providers: each, when
// set, an absolute http or https URL.
func (c *checker) checkProviderURLs(getenv func(string) string) {
	for _, v := range providerURLs {
		raw := getenv(v.name)
		if raw == "" {
			continue
		}
		if v.name == "OLLAMA_HOST" && !strings.Contains(raw, "://") {
			raw = "http://" + raw
		}
		u, err := url.Parse(raw)
		switch {
		case err != nil:
			c.add("%s: not a URL (%v); expected an http or https URL such as %s", v.name, urlError(err), v.example)
		case u.Scheme != "http" && u.Scheme != "https", u.Opaque != "", u.Hostname() == "", !validPort(u.Port(), 1):
			c.add("%s: %q is not an absolute http or https URL with a host; expected e.g. %s", v.name, u.Redacted(), v.example)
		}
	}
}

// checkAuthFiles checks what the authenticator's files hold, as auth.New reads them: the
// API keys file's lines, the PEM public key, the HMAC secret's length. Files that cannot be
// read were reported already.
func (c *checker) checkAuthFiles(cfg *config, readable map[string]bool) {
	if readable["api-keys-file"] {
		if _, err := auth.New(auth.WithAPIKeysFile(cfg.apiKeysFile)); err != nil {
			c.failf("api-keys-file", "%v", err)
		}
	}
	for _, f := range []struct {
		name, path string
		opt        func([]byte) auth.Option
	}{{"jwt-key-file", cfg.jwtKeyFile, auth.WithJWTPublicKey}, {"jwt-secret-file", cfg.jwtSecretFile, auth.WithJWTSecret}} {
		if !readable[f.name] {
			continue
		}
		data, err := os.ReadFile(f.path)
		if err == nil {
			_, err = auth.New(f.opt(data))
		}
		if err != nil {
			c.failf(f.name, "%q: %v", f.path, err)
		}
	}
}

// flagged makes the errors of option opt name the flag (or variable) it came from.
func flagged(name string, opt auth.Option) auth.Option {
	return func(a *auth.Authenticator) error {
		if err := opt(a); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
}
