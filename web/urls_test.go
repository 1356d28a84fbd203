package web_test

import (
	"encoding/json"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/policy"
)

// Strings the URL fuzz starts from: what a model might write where a URL goes, hostile
// and benign.
var urlSeeds = []string{
	"javascript:alert(1)", "JaVaScRiPt:alert(1)", "vbscript:msgbox(1)", "data:text/html,<script>1</script>",
	"data:image/svg+xml,<svg onload=alert(1)>", "data:image/png;base64,AAAA", "file:///etc/passwd", "blob:https://app.example/x",
	"filesystem:https://app.example/temporary/x", "https://app.example/a.png", "http://app.example/a.png", "//evil.test/x.png",
	"/\\evil.test/x", "\\\\evil.test/x", "https://app.example@evil.test/", "https://evil.test\\@app.example/",
	"https:evil.test", "http:/evil.test/x", "img/logo.png", "/logo.png", "?q=1", "#top", "mailto:a@app.example",
	"tel:+15551234", "ms-msdt:/id x", "intent://x#Intent;end", "https://app.example.evil.test/", "https://0x7f.1/",
	"https://[::1]/", "HTTPS://APP.EXAMPLE/", "https://app.example:443/", "java%73cript:alert(1)", "ja\u00advascript:x",
	"https://xn--pp-ola.example/", "https://аpp.example/", "about:blank", "ftp://app.example/x",
}

// Characters the fuzz inserts: what a browser strips or reads specially in a URL.
var urlNoise = []string{"\t", "\n", "\r", "\x00", "\x01", "\x08", "\x1f", " ", "\u00a0", "\u200b", "\ufeff", "\\", "/", ":", "@", "#", "?", "%", ".", "%09", "%3A", "&#58;", "\u2028", "\x7f"}

// mutate returns s changed a few times: a noise character inserted, a letter's case
// flipped, a part repeated or cut.
func mutate(r *rand.Rand, s string) string {
	for n := 1 + r.IntN(3); n > 0; n-- {
		i := 0
		if len(s) > 0 {
			i = r.IntN(len(s) + 1)
		}
		for i > 0 && i < len(s) && !utf8Start(s[i]) {
			i--
		}
		switch r.IntN(5) {
		case 0, 1:
			s = s[:i] + urlNoise[r.IntN(len(urlNoise))] + s[i:]
		case 2:
			s = strings.Map(func(c rune) rune {
				if r.IntN(3) == 0 {
					if c >= 'a' && c <= 'z' {
						return c - 32
					}
					if c >= 'A' && c <= 'Z' {
						return c + 32
					}
				}
				return c
			}, s)
		case 3:
			s = urlNoise[r.IntN(len(urlNoise))] + s
		case 4:
			if i < len(s) {
				j := i + r.IntN(len(s)-i+1)
				for j < len(s) && !utf8Start(s[j]) {
					j++
				}
				s = s[:i] + s[j:]
			}
		}
	}
	return s
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }

// TestURLPolicyAgainstChromium fuzzes the policy's URL judgement against Chromium's URL
// parser: thousands of mutations of hostile and benign URLs, each parsed by new URL() in
// Chromium as a page resolves it. Whatever the policy allows, Chromium reads as an http:
// or https: URL (mailto: and tel: for links) of an allowed host, without credentials:
// nothing Chromium would run as script, or load from another host, gets past.
func TestURLPolicyAgainstChromium(t *testing.T) {
	b := needBrowser(t)
	seed := uint64(time.Now().UnixNano())
	inputs := append([]string{}, urlSeeds...)
	for i, r := range []*rand.Rand{rand.New(rand.NewPCG(1, 2)), rand.New(rand.NewPCG(seed, seed>>7))} {
		for n := 0; n < 10000; n++ {
			s := urlSeeds[r.IntN(len(urlSeeds))]
			if i == 1 && n%3 == 0 {
				s = inputs[r.IntN(len(inputs))]
			}
			inputs = append(inputs, mutate(r, s))
		}
	}
	t.Logf("%d strings (random seed %d)", len(inputs), seed)
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.json"), filepath.Join(dir, "out.json")
	raw, err := json.Marshal(inputs)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(in, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	b.run(t, "urls.test.mjs", "INPUT="+in, "OUTPUT="+out)
	var parsed []*chromiumURL
	readRecord(t, out, &parsed)
	if len(parsed) != len(inputs) {
		t.Fatalf("%d results for %d strings", len(parsed), len(inputs))
	}

	def := policy.Default()
	hosts, err := policy.New(policy.WithHosts("app.example"))
	if err != nil {
		t.Fatal(err)
	}
	script := map[string]bool{"javascript:": true, "vbscript:": true, "data:": true, "file:": true, "blob:": true, "filesystem:": true}
	allowed, stricter, failures := 0, 0, 0
	fail := func(s, format string, args ...any) {
		failures++
		if failures <= 20 {
			t.Errorf("%q: "+format, append([]any{s}, args...)...)
		}
	}
	for i, s := range inputs {
		c := parsed[i]
		for _, k := range []policy.Kind{policy.Image, policy.Media, policy.Link} {
			ok := def.CheckURL(s, k) == nil
			if ok {
				allowed++
			}
			switch {
			case c == nil:
				// Chromium cannot read it: nothing is loaded or opened, whatever the verdict.
			case ok && script[c.Protocol]:
				fail(s, "Chromium reads a %s URL, which the default policy lets through as a %s URL", c.Protocol, k)
			case ok && !(c.Protocol == "https:" || c.Protocol == "http:" || k == policy.Link && (c.Protocol == "mailto:" || c.Protocol == "tel:")):
				fail(s, "Chromium reads a %s URL, which the default policy lets through as a %s URL", c.Protocol, k)
			case ok && c.Credentials:
				fail(s, "Chromium reads credentials, which the default policy lets through")
			}
			okHost := hosts.CheckURL(s, k) == nil
			host := strings.TrimSuffix(c.hostname(), ".") // app.example. is app.example
			if c != nil && okHost && (c.Protocol == "https:" || c.Protocol == "http:") && host != "app.example" {
				fail(s, "Chromium loads it from %q, which a policy of app.example alone lets through", c.Hostname)
			}
			if c != nil && !okHost && (c.Protocol == "https:" || c.Protocol == "http:") && host == "app.example" && !c.Credentials {
				stricter++
			}
		}
		if c != nil && script[c.Protocol] && c.Protocol != "data:" && def.CheckData(s) == nil {
			fail(s, "Chromium reads a %s URL, which the default policy lets into the data model", c.Protocol)
		}
	}
	if failures > 0 {
		t.Fatalf("%d verdicts Chromium contradicts (random seed %d)", failures, seed)
	}
	t.Logf("no verdict contradicted; %d verdicts allowed; %d refused although Chromium reads an allowed http(s) URL of app.example", allowed, stricter)
}

// chromiumURL is how Chromium read a URL.
type chromiumURL struct {
	Protocol    string `json:"protocol"`
	Hostname    string `json:"hostname"`
	Credentials bool   `json:"credentials"`
}

func (c *chromiumURL) hostname() string {
	if c == nil {
		return ""
	}
	return c.Hostname
}
