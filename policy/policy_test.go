package policy

import (
	"strings"
	"testing"
)

func TestCheckURL(t *testing.T) {
	def := Default()
	hosts, err := New(WithHosts("example.com", "*.cdn.example.net"), WithSchemes("https", "data"), WithRelativeURLs(false))
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := New(WithHosts("example.com"))
	for _, c := range []struct {
		p    *Policy
		url  string
		kind Kind
		ok   bool
		says string
	}{
		{def, "https://example.com/a.png", Image, true, ""},
		{def, "http://example.com/a.png", Image, true, ""},
		{def, "img/a.png", Image, true, ""},
		{def, "//example.com/a.png", Image, true, ""},
		{def, "mailto:a@example.com", Link, true, ""},
		{def, "tel:+1555", Link, true, ""},
		{def, "mailto:a@example.com", Image, false, "scheme is mailto:, allowed: https:, http:"},
		{def, "javascript:alert(1)", Image, false, "scheme is javascript:"},
		{def, "  JaVa\tScRiPt:alert(1)", Link, false, "scheme is javascript:"},
		{def, "\x00\x1fjavascript:alert(1)", Link, false, "scheme is javascript:"},
		{def, "java\nscript:alert(1)", Media, false, "scheme is javascript:"},
		{def, "vbscript:x", Link, false, "vbscript:"},
		{def, "file:///etc/passwd", Image, false, "file:"},
		{def, "data:image/png;base64,AA==", Image, false, "scheme is data:"},
		{def, "data:text/html,x", Link, false, "scheme is data:"},
		{def, "https://u:p@example.com/", Link, false, "user info"},
		{def, "http://exa mple.com/", Image, false, "cannot read it as a URL"},
		{def, "java%73cript:alert(1)", Link, true, ""}, // a relative path
		{hosts, "https://example.com/a.png", Image, true, ""},
		{hosts, "https://EXAMPLE.com./a.png", Image, true, ""},
		{hosts, "https://img.cdn.example.net/a.png", Image, true, ""},
		{hosts, "https://cdn.example.net/a.png", Image, false, "host is not among the allowed hosts (example.com, *.cdn.example.net)"},
		{hosts, "https://example.com.evil.test/", Image, false, "host"},
		{hosts, "//evil.test/a.png", Image, false, "relative"},
		{rel, "//evil.test/a.png", Image, false, "host"},
		{rel, "/\\evil.test/a.png", Image, false, "host"},
		{rel, "//example.com/a.png", Image, true, ""},
		{rel, "/a.png", Image, true, ""},
		{hosts, "https://evil.test\\@example.com/", Image, false, "host"},
		{hosts, "http://example.com/a.png", Image, false, "scheme is http:"},
		{hosts, "a.png", Image, false, "relative"},
		{hosts, "data:image/png;base64,AA==", Image, true, ""},
		{hosts, "data: IMAGE/PNG ;base64,AA==", Image, true, ""},
		{hosts, "data:image/svg+xml,<svg/>", Image, false, "raster image"},
		{hosts, "data:image/png;base64,AA==", Media, false, "scheme is data:"},
		{hosts, "data:image/png;base64,AA==", Link, false, "scheme is data:"},
	} {
		err := c.p.CheckURL(c.url, c.kind)
		if (err == nil) != c.ok || err != nil && !strings.Contains(err.Error(), c.says) {
			t.Errorf("%q as %s: %v", c.url, c.kind, err)
		}
		if err != nil && strings.Contains(err.Error(), "alert") {
			t.Errorf("%q: the message repeats the URL: %v", c.url, err)
		}
	}
	if (*Policy)(nil).CheckURL("javascript:x", Link) != nil {
		t.Error("the nil policy checks URLs")
	}
	off, _ := New(Without(UnsafeURL))
	if off.CheckURL("javascript:x", Link) != nil || off.CheckData("javascript:x") != nil {
		t.Error("unsafe_url turned off still checks")
	}
}

func TestCheckData(t *testing.T) {
	def := Default()
	for s, refused := range map[string]bool{
		"Time: 10:30": false, "Note: bring ID": false, "color:red": false, "Data: 42, 43": false,
		"https://example.com/x": false, "mailto:a@b.c": false, "data:text/plain,hello": false, "data:image/png;base64,AA==": false,
		"javascript:alert(1)": true, " \tJAVASCRIPT:x": true, "vbscript:x": true, "file:///etc/passwd": true,
		"\x1ffile:// /etc/passwd": true, "blob:https://x/y": true, "data:text/html,<b>x</b>": true, "data:image/svg+xml,<svg/>": true,
		"ftp://files.example.com/x": true, "ms-msdt:/id PCWDiagnostic": true, "intent://x#Intent;end": true,
	} {
		if err := def.CheckData(s); (err != nil) != refused {
			t.Errorf("%q: %v", s, err)
		}
	}
}

func TestRefuses(t *testing.T) {
	def := Default()
	for s, want := range map[string]Kinds{
		"https://x.test/a": 0, "plain text": 0, "mailto:a@b.c": Image | Media, "ftp://x/y": Link | Image | Media,
		"Time: 10:30": Link | Image | Media, "data:image/png;base64,AA==": Link | Image | Media,
	} {
		if got := def.Refuses(s); got != want {
			t.Errorf("%q: %b, want %b", s, got, want)
		}
	}
	noRel, _ := New(WithRelativeURLs(false))
	if noRel.Refuses("plain") != Link|Image|Media {
		t.Error("relative refused")
	}
}

func TestNewRefuses(t *testing.T) {
	for _, c := range []struct {
		opt  Option
		says string
	}{
		{WithSchemes("https", "JavaScript"), "schemes: javascript: runs script"},
		{WithSchemes("1http"), `schemes: "1http" is not a scheme`},
		{WithLinkSchemes("data"), "link schemes: data"},
		{WithHosts("https://example.com"), "hosts:"},
		{WithHosts("example.com/x"), "hosts:"},
		{WithHosts("*"), "hosts:"},
		{WithFunctions("a", " "), "functions: a function name is empty"},
		{Without("urls"), `off: unknown rule "urls"`},
	} {
		if _, err := New(c.opt); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%v, want %q", err, c.says)
		}
	}
}

func TestFunctionsAndSensitive(t *testing.T) {
	p, _ := New(WithFunctions("formatString", "openUrl"))
	if p.CheckFunction("openUrl") != nil || p.CheckFunction("formatDate") == nil || Default().CheckFunction("anything") != nil {
		t.Error("functions")
	}
	none, _ := New(WithFunctions())
	if none.CheckFunction("openUrl") == nil {
		t.Error("an empty list allows none")
	}
	for _, c := range []struct {
		prop string
		v    any
		want bool
	}{{"variant", "obscured", true}, {"textFieldType", "Password", true}, {"obscureText", true, true}, {"obscureText", false, false}, {"variant", "shortText", false}, {"label", "obscured", false}} {
		if Sensitive(c.prop, c.v) != c.want {
			t.Errorf("Sensitive(%s, %v)", c.prop, c.v)
		}
	}
}

func TestDecode(t *testing.T) {
	set, err := Decode(strings.NewReader(`{"urlHosts":["example.com"],"off":["inaccessible"],"callers":{"key:a":{"functions":[],"off":[]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if set.Default.On(Inaccessible) || set.Default.CheckURL("https://x.test", Link) == nil {
		t.Error("the file's policy")
	}
	a := set.For("key:a")
	if !a.On(Inaccessible) || a.CheckFunction("x") == nil || a.CheckURL("https://x.test", Link) == nil {
		t.Error("the caller's policy keeps the file's hosts and overrides the rest")
	}
	for body, says := range map[string]string{
		`{"urlHosts":["x"],}`: "not a policy file",
		`{"hosts":["x"]}`:     "unknown field",
		`{"callers":{"key:a":{"urlSchemes":["vbscript"]}}}`: "callers.key:a.urlSchemes: vbscript: runs script",
		`{} {}`: "more than one",
	} {
		if _, err := Decode(strings.NewReader(body)); err == nil || !strings.Contains(err.Error(), says) {
			t.Errorf("%s: %v, want %q", body, err, says)
		}
	}
}

func TestMarkdownLinks(t *testing.T) {
	got := MarkdownLinks("See [docs](https://x.test/a) and [bad]( javascript:alert(1)) or <vbscript:x> <not a link>.")
	want := []string{"https://x.test/a", "javascript:alert(1", "vbscript:x"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("%q", got)
	}
}

func TestPrompt(t *testing.T) {
	p, _ := New(WithHosts("*.example.com"), WithFunctions("formatString"))
	for _, want := range []string{"https:, http:", "links also mailto:, tel:", "hosts only *.example.com", "never a function call", "Call only these functions: formatString", "image a description", "obscured"} {
		if !strings.Contains(p.Prompt(), want) {
			t.Errorf("the prompt lacks %q:\n%s", want, p.Prompt())
		}
	}
	off, _ := New(Without(Rules()...))
	if off.Prompt() != "" || off.Active() != nil {
		t.Error("a policy with every rule off")
	}
}

// FuzzCheckURL judges arbitrary strings: no panic; a verdict that does not change with
// what a browser strips (leading C0 controls and spaces, tabs and newlines anywhere);
// nothing allowed that does not parse as an http(s) URL or a relative one; no message
// that repeats the input.
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{"https://example.com/a.png", "javascript:alert(1)", "//evil.test/x", "data:image/png;base64,AA", "img/a.png", "mailto:a@b", "\x01JaVa\tScript:x", "https://a@b/"} {
		f.Add(s, uint8(3))
	}
	p, _ := New(WithHosts("example.com"), WithSchemes("https", "http", "data"))
	f.Fuzz(func(t *testing.T, s string, at uint8) {
		for _, k := range []Kind{Link, Image, Media} {
			err := p.CheckURL(s, k)
			i := int(at) % (len(s) + 1)
			for _, v := range []string{"\x01 \x1f" + s, s[:i] + "\t" + s[i:], s[:i] + "\n\r" + s[i:]} {
				if e := p.CheckURL(v, k); (e == nil) != (err == nil) {
					t.Fatalf("%q and %q judged apart as %s: %v / %v", s, v, k, err, e)
				}
			}
			// A message names the scheme it refuses, which may be the whole input.
			if err != nil && len(s) > 12 && strings.Contains(err.Error(), s) && s != parseURL(s).scheme+":" {
				t.Fatalf("the message repeats %q: %v", s, err)
			}
			if err == nil {
				u := parseURL(s)
				if !u.relative && u.scheme != "https" && u.scheme != "http" && !(k == Link && (u.scheme == "mailto" || u.scheme == "tel")) && !(k == Image && u.scheme == "data") {
					t.Fatalf("%q allowed as %s with the scheme %q", s, k, u.scheme)
				}
				if u.host != "" && strings.TrimSuffix(u.host, ".") != "example.com" {
					t.Fatalf("%q allowed as %s with the host %q", s, k, u.host)
				}
			}
		}
		_ = p.CheckData(s)
		_ = p.Refuses(s)
		_ = MarkdownLinks(s)
	})
}
