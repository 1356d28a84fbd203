package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestConfigBudgetsAndModels reads --token-budget, --token-window, --models-allowed and
// the callers file, and refuses, naming the flag and the field, what is not a setting.
func TestConfigBudgetsAndModels(t *testing.T) {
	keys := map[string]string{"GEMINI_API_KEY": "k", "OPENAI_BASE_URL": "http://127.0.0.1:1/v1"}
	cfg, err := parseConfig(nil, env(nil), io.Discard)
	if err != nil || cfg.tokenBudget != 0 || cfg.tokenWindow != time.Hour || cfg.allowed != nil || cfg.callers != nil {
		t.Fatalf("defaults: %+v %v", cfg, err)
	}
	cfg, err = parseConfig([]string{"--token-budget", "500000", "--models-allowed", " googleai/gemini-2.5-pro, offline,openai/gpt-4.1-mini,offline"},
		env(map[string]string{"GENUI_TOKEN_WINDOW": "24h", "GEMINI_API_KEY": "k"}), io.Discard)
	if err != nil || cfg.tokenBudget != 500000 || cfg.tokenWindow != 24*time.Hour || strings.Join(cfg.allowed, ",") != "googleai/gemini-2.5-pro,genui/offline,openai/gpt-4.1-mini" {
		t.Fatalf("%+v %v", cfg, err)
	}

	dir := t.TempDir()
	file := filepath.Join(dir, "callers.json")
	if err := os.WriteFile(file, []byte(`{"callers":{
		"key:partner":{"tokenBudget":2000000,"model":"googleai/gemini-2.5-pro,compat/gpt-4.1-mini","modelsAllowed":["offline"]},
		"jwt:https://issuer.test|u1":{"tokenBudget":0},
		"key:solo":{"modelsAllowed":[]}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err = parseConfig([]string{"--callers-file", file}, env(keys), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	p := cfg.callers.get("key:partner")
	if strings.Join(cfg.callers.ids(), " ") != "jwt:https://issuer.test|u1 key:partner key:solo" {
		t.Errorf("callers: %q", cfg.callers.ids())
	}
	if p == nil || *p.TokenBudget != 2000000 || strings.Join(p.chain, ",") != "googleai/gemini-2.5-pro,compat/gpt-4.1-mini" || strings.Join(p.allowed, ",") != "genui/offline" {
		t.Errorf("key:partner: %+v", p)
	}
	if u := cfg.callers.get("jwt:https://issuer.test|u1"); u == nil || u.TokenBudget == nil || *u.TokenBudget != 0 || u.chain != nil {
		t.Errorf("the JWT caller: %+v", u)
	}
	if s := cfg.callers.get("key:solo"); s == nil || s.ModelsAllowed == nil || len(s.allowed) != 0 {
		t.Errorf("key:solo: %+v", s)
	}

	for _, c := range []struct {
		args []string
		env  map[string]string
		want []string
	}{
		{[]string{"--token-budget", "-1"}, nil, []string{"--token-budget: got -1; expected 0 (off) or more"}},
		{nil, map[string]string{"GENUI_TOKEN_WINDOW": "0s"}, []string{"--token-window (GENUI_TOKEN_WINDOW): got 0s; expected a positive duration"}},
		{[]string{"--models-allowed", "gpt-4"}, nil, []string{"--models-allowed", `"gpt-4" is not <provider>/<model>`}},
		{[]string{"--models-allowed", "googleai/gemini-2.5-pro"}, nil, []string{"--models-allowed", "needs GEMINI_API_KEY or GOOGLE_API_KEY"}},
		{[]string{"--callers-file", filepath.Join(dir, "missing.json")}, nil, []string{"--callers-file", "no such file"}},
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
	for body, want := range map[string]string{
		`{`:                          "--callers-file: not JSON: it ends before the object does",
		`{"caller":{}}`:              `--callers-file: unknown field "caller"`,
		`{"callers":{"partner":{}}}`: `--callers-file: callers."partner": not a caller's id; expected key:<API key name> or jwt:<iss>|<sub>`,
		`{"callers":{"key:a":{"tokenBudget":-5}}}`:        `--callers-file: callers."key:a".tokenBudget: got -5; expected 0 (no budget) or more tokens`,
		`{"callers":{"key:a":{"tokenBudget":"lots"}}}`:    `--callers-file: callers.tokenBudget: got a JSON string; expected a whole number`,
		`{"callers":{"key:a":{"model":"a,,b"}}}`:          `--callers-file: callers."key:a".model: "a,,b": name 2 of the chain is empty`,
		`{"callers":{"key:a":{"model":"vertexai/g"}}}`:    `--callers-file: callers."key:a".model: "vertexai/g" needs GOOGLE_CLOUD_PROJECT`,
		`{"callers":{"key:a":{"modelsAllowed":["x"]}}}`:   `--callers-file: callers."key:a".modelsAllowed[0]: "x" is not <provider>/<model>`,
		`{"callers":{"key:a":{"modelsAllowed":["a,b"]}}}`: `--callers-file: callers."key:a".modelsAllowed[0]: "a,b" is not a model's name`,
		`{"callers":{"key:a":{"budget":1}}}`:              `--callers-file: unknown field "budget"`,
		`{"callers":{}} {}`:                               "--callers-file: more than one JSON value",
	} {
		f := filepath.Join(dir, "bad.json")
		os.WriteFile(f, []byte(body), 0o600)
		_, err := parseConfig([]string{"--callers-file", f}, env(nil), io.Discard)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v; want %q", body, err, want)
		}
	}
}
