package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/genuiserver/genui/policy"
)

// TestConfigPolicy reads the UI policy from the flags, the environment and a policy
// file, and refuses, naming the flag, what would let unsafe URLs through or is not a
// setting at all.
func TestConfigPolicy(t *testing.T) {
	cfg, err := parseConfig(nil, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.policies.Default
	if p.CheckURL("javascript:alert(1)", policy.Image) == nil || p.CheckURL("https://x.test/a.png", policy.Image) != nil || p.CheckURL("mailto:a@b.test", policy.Link) != nil {
		t.Fatalf("the default policy: %v", p.Schemes())
	}
	cfg, err = parseConfig([]string{"--url-schemes", "https,data", "--url-hosts", "*.example.com", "--link-schemes", "", "--policy-off", "inaccessible"},
		env(map[string]string{"GENUI_POLICY_FUNCTIONS": "formatString"}), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	p = cfg.policies.Default
	switch {
	case p.CheckURL("http://cdn.example.com/a.png", policy.Image) == nil:
		t.Error("http: is still allowed")
	case p.CheckURL("https://cdn.example.com/a.png", policy.Image) != nil, p.CheckURL("data:image/png;base64,AA==", policy.Image) != nil:
		t.Error("https: or a data: image of an allowed host refused")
	case p.CheckURL("https://cdn.example.net/a.png", policy.Image) == nil:
		t.Error("a host not listed is allowed")
	case p.CheckURL("mailto:a@b.test", policy.Link) == nil:
		t.Error("an empty --link-schemes still allows mailto:")
	case p.On(policy.Inaccessible) || !p.On(policy.UnsafeURL):
		t.Error("--policy-off")
	case p.CheckFunction("openUrl") == nil || p.CheckFunction("formatString") != nil:
		t.Error("GENUI_POLICY_FUNCTIONS")
	}
	if cfg, err := parseConfig([]string{"--policy-off", "all"}, env(nil), io.Discard); err != nil || cfg.policies.Default.Active() != nil {
		t.Fatalf("--policy-off all: %v", err)
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "policy.json")
	if err := os.WriteFile(file, []byte(`{"urlHosts":["example.com"],"callers":{"key:partner":{"urlHosts":["partner.test"],"off":["sensitive_input"]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = parseConfig([]string{"--policy-file", file}, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	def, partner := cfg.policies.Default, cfg.policies.For("key:partner")
	if def.CheckURL("https://example.com/a", policy.Link) != nil || def.CheckURL("https://partner.test/a", policy.Link) == nil {
		t.Error("the file's policy")
	}
	if partner.CheckURL("https://partner.test/a", policy.Link) != nil || partner.CheckURL("https://example.com/a", policy.Link) == nil || partner.On(policy.SensitiveInput) {
		t.Error("the caller's policy")
	}
	if cfg.policies.For("key:other") != def {
		t.Error("a caller the file does not name has the file's policy")
	}
	cfg, err = parseConfig([]string{"--policy-file", file, "--url-hosts", "other.test"}, env(nil), io.Discard)
	if err != nil || cfg.policies.Default.CheckURL("https://other.test/a", policy.Link) != nil || cfg.policies.For("key:partner").CheckURL("https://partner.test/a", policy.Link) != nil {
		t.Errorf("a flag given overrides the file's policy, not its callers': %v", err)
	}

	for _, c := range []struct {
		args []string
		env  map[string]string
		want []string
	}{
		{[]string{"--url-schemes", "https,javascript"}, nil, []string{"--url-schemes", "javascript: runs script"}},
		{nil, map[string]string{"GENUI_URL_SCHEMES": "ht tp"}, []string{"--url-schemes (GENUI_URL_SCHEMES)", "is not a scheme"}},
		{[]string{"--link-schemes", "data"}, nil, []string{"--link-schemes", "data is allowed for images only"}},
		{[]string{"--url-hosts", "https://example.com/"}, nil, []string{"--url-hosts", "is not a host pattern"}},
		{[]string{"--policy-off", "urls"}, nil, []string{"--policy-off", `unknown rule "urls"`, "unsafe_url"}},
		{[]string{"--policy-file", filepath.Join(dir, "missing.json")}, nil, []string{"--policy-file", "no such file"}},
	} {
		_, err := parseConfig(c.args, env(c.env), io.Discard)
		if err == nil {
			t.Errorf("%v %v: accepted", c.args, c.env)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%v %v: %q does not say %q", c.args, c.env, err, w)
			}
		}
	}
	for name, body := range map[string]string{
		"not JSON":      `{`,
		"unknown field": `{"urlHost":["example.com"]}`,
		"bad caller":    `{"callers":{"key:x":{"urlSchemes":["vbscript"]}}}`,
	} {
		f := filepath.Join(dir, "bad.json")
		os.WriteFile(f, []byte(body), 0o600)
		_, err := parseConfig([]string{"--policy-file", f}, env(nil), io.Discard)
		if err == nil || !strings.Contains(err.Error(), "--policy-file") {
			t.Errorf("%s: %v", name, err)
		}
		if name == "bad caller" && (err == nil || !strings.Contains(err.Error(), "callers.key:x.urlSchemes")) {
			t.Errorf("a caller's error must name its field: %v", err)
		}
	}
}
