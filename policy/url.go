package policy

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	whatwg "github.com/nlnwa/whatwg-url/url"
)

// A URL as a browser reads it, through the WHATWG URL parser: the scheme lower-cased,
// the host in its ASCII form, leading and trailing C0 controls and spaces trimmed, tabs
// and newlines dropped.
type parsed struct {
	scheme   string // "" for a relative URL
	host     string // "" when the URL has none (a relative URL's, unless protocol-relative)
	user     bool   // user info before the host
	relative bool
	bad      bool   // no browser reads it as a URL
	data     string // a data: URL's media type, lower case; "" when it has none
}

// base is the page relative URLs are resolved against, to find the host of a
// protocol-relative one ("//host/x"). Its host, in the .invalid top-level domain, never
// resolves (RFC 6761).
var base = func() *whatwg.Url {
	u, err := whatwg.Parse("https://genui-policy.invalid/")
	if err != nil {
		panic(err)
	}
	return u
}()

func parseURL(s string) parsed {
	u, err := whatwg.Parse(s)
	if err != nil {
		r, err := base.Parse(s)
		if err != nil {
			return parsed{bad: true}
		}
		p := parsed{relative: true}
		if h := r.Hostname(); h != base.Hostname() {
			p.host, p.user = h, r.Username() != "" || r.Password() != ""
		}
		return p
	}
	p := parsed{scheme: u.Scheme(), host: u.Hostname(), user: u.Username() != "" || u.Password() != ""}
	if p.scheme == "data" {
		href := u.Href(true)
		rest := href[len("data:"):]
		if i := strings.IndexByte(rest, ','); i >= 0 {
			mt, _, _ := strings.Cut(rest[:i], ";")
			p.data = strings.ToLower(strings.Trim(mt, " \t\n\r\f"))
		}
	}
	return p
}

// Raster images a data: URL may hold where an image goes, when the policy allows data.
var rasterImages = []string{"image/avif", "image/bmp", "image/gif", "image/jpeg", "image/jpg", "image/png", "image/vnd.microsoft.icon", "image/webp", "image/x-icon"}

// CheckURL judges s where a URL of kind k goes: nil when the policy allows it, else an
// error saying why, in words that do not repeat the URL.
func (p *Policy) CheckURL(s string, k Kind) error {
	if !p.On(UnsafeURL) {
		return nil
	}
	return p.judge(parseURL(s), k)
}

func (p *Policy) judge(u parsed, k Kind) error {
	switch {
	case u.bad:
		return fmt.Errorf("the UI policy refuses this %s URL: a browser cannot read it as a URL", k)
	case u.relative && !p.relative:
		return fmt.Errorf("the UI policy refuses this relative %s URL: write an absolute URL with the scheme %s", k, schemeList(p.allowed(k)))
	case u.user:
		return fmt.Errorf("the UI policy refuses this %s URL: it has user info (a name or password before the host)", k)
	case u.relative:
	case u.scheme == "data":
		if k != Image || !slices.Contains(p.schemes, "data") {
			return fmt.Errorf("the UI policy refuses this %s URL: its scheme is data:, allowed: %s", k, schemeList(p.allowed(k)))
		}
		if !slices.Contains(rasterImages, u.data) {
			return fmt.Errorf("the UI policy refuses this image URL: a data: URL may hold only a raster image (image/png, image/jpeg, image/gif, image/webp, image/avif, image/bmp), not %s", clipScheme(u.data))
		}
	case !slices.Contains(p.allowed(k), u.scheme):
		return fmt.Errorf("the UI policy refuses this %s URL: its scheme is %s:, allowed: %s", k, clipScheme(u.scheme), schemeList(p.allowed(k)))
	}
	if u.host != "" && len(p.hosts) > 0 && !p.hostAllowed(u.host) {
		return fmt.Errorf("the UI policy refuses this %s URL: its host is not among the allowed hosts (%s)", k, strings.Join(p.hosts, ", "))
	}
	return nil
}

// allowed lists the schemes a URL of kind k may have, "data" aside.
func (p *Policy) allowed(k Kind) []string {
	out := without(p.schemes, "data")
	if k == Link {
		for _, s := range p.linkSchemes {
			if !slices.Contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

func (p *Policy) hostAllowed(host string) bool {
	host = strings.TrimSuffix(host, ".")
	for _, pat := range p.hosts {
		if suffix, wild := strings.CutPrefix(pat, "*."); wild {
			if strings.HasSuffix(host, "."+suffix) {
				return true
			}
		} else if host == pat {
			return true
		}
	}
	return false
}

// clipScheme shortens what a message repeats of a scheme or media type (which a URL
// parser limits to letters, digits, +, - and .).
func clipScheme(s string) string {
	if len(s) > 32 {
		return s[:32] + "…"
	}
	return s
}

// CheckComputedURL judges a URL of kind k that a function computes at run time: nil
// when the policy allows computed URLs.
func (p *Policy) CheckComputedURL(k Kind) error {
	if !p.On(UnsafeURL) || p.computed {
		return nil
	}
	return fmt.Errorf("the UI policy refuses a %s URL computed by a function call, which the renderer would use unchecked: write the URL as a string, or bind it to the data model", k)
}

// CheckData judges a string of the data model, bound to no URL yet, which a later
// message could bind where a URL goes: nil unless it is a URL that runs script or reads
// local data (javascript:, vbscript:, file:, blob:, filesystem:, a data: URL of anything
// but plain text or a raster image), or a hierarchical URL ("scheme:/…": ftp://…,
// intent://…, ms-msdt:/…) whose scheme the policy allows nowhere. Prose with a colon
// ("Time: 10:30") is not a URL here.
func (p *Policy) CheckData(s string) error {
	if !p.On(UnsafeURL) || strings.IndexByte(s, ':') < 0 {
		return nil
	}
	u, err := whatwg.Parse(s)
	sc := ""
	if err == nil {
		sc = u.Scheme()
	} else if pre, perr := whatwg.Parse(s[:strings.IndexByte(s, ':')+1]); perr == nil {
		// A URL the standard's parser refuses after its scheme, which a browser may still
		// read (Chromium reads "file:// /etc/passwd"): judged by its scheme.
		sc, u = pre.Scheme(), nil
	}
	switch sc {
	case "javascript", "vbscript", "livescript":
		return fmt.Errorf("the UI policy refuses this data-model value: it is a %s: URL, which runs script wherever a URL goes", sc)
	case "file", "blob", "filesystem":
		return fmt.Errorf("the UI policy refuses this data-model value: it is a %s: URL, which reads the user's local data", sc)
	case "data":
		d := parseURL(s).data
		if d != "" && validMediaType(d) && d != "text/plain" && !slices.Contains(rasterImages, d) {
			return fmt.Errorf("the UI policy refuses this data-model value: it is a data: URL of %s, a document a browser would run", clipScheme(d))
		}
	case "":
	default:
		if u != nil && !slices.Contains(p.allowed(Link), sc) && strings.HasPrefix(u.Href(true)[len(sc)+1:], "/") {
			return fmt.Errorf("the UI policy refuses this data-model value: it is a URL with the scheme %s:, which the policy allows nowhere (allowed: %s)", clipScheme(sc), schemeList(p.allowed(Link)))
		}
	}
	return nil
}

// validMediaType reports whether s is type/subtype of HTTP token characters; a data: URL
// with any other media type is read as text/plain.
func validMediaType(s string) bool {
	t, sub, ok := strings.Cut(s, "/")
	return ok && isToken(t) && isToken(sub)
}

func isToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c <= ' ' || c >= 0x7f || strings.IndexByte(`"(),/:;<=>?@[\]{}`, c) >= 0 {
			return false
		}
	}
	return true
}

// Refuses returns the kinds of URL places that would refuse s: what binding it to one
// of them would be judged.
func (p *Policy) Refuses(s string) Kinds {
	if !p.On(UnsafeURL) {
		return 0
	}
	if !strings.ContainsAny(s, ":/\\") {
		// A relative path: no scheme, no host.
		if p.relative {
			return 0
		}
		return Link | Image | Media
	}
	u := parseURL(s)
	var out Kinds
	for _, k := range []Kind{Link, Image, Media} {
		if p.judge(u, k) != nil {
			out |= k
		}
	}
	return out
}

// hostPattern checks and normalises a host pattern: "example.com" or "*.example.com", as
// the URL parser writes hosts (lower case, ASCII).
func hostPattern(h string) (string, error) {
	h = strings.TrimSpace(h)
	name, wild := strings.CutPrefix(h, "*.")
	if name == "" || strings.ContainsAny(name, "/?#@:*") && !strings.HasPrefix(name, "[") {
		return "", fmt.Errorf("%q is not a host pattern: a host such as example.com, or *.example.com for its subdomains", h)
	}
	u, err := whatwg.Parse("https://" + name + "/")
	if err != nil || u.Hostname() == "" || u.Port() != "" || u.Pathname() != "/" {
		return "", fmt.Errorf("%q is not a host pattern: a host such as example.com, or *.example.com for its subdomains", h)
	}
	host := strings.TrimSuffix(u.Hostname(), ".")
	if wild {
		return "*." + host, nil
	}
	return host, nil
}

// Markdown links: [label](destination) and <scheme:autolinks>.
var (
	mdLink     = regexp.MustCompile(`\]\(\s*<?([^\s)>]+)`)
	mdAutolink = regexp.MustCompile(`<([A-Za-z][A-Za-z0-9+.\-]{1,31}:[^\s<>]*)>`)
)

// MarkdownLinks returns the link destinations of Markdown text (a Text component's): what
// a renderer that renders Markdown links would navigate to.
func MarkdownLinks(text string) []string {
	if !strings.Contains(text, "](") && !strings.Contains(text, "<") {
		return nil
	}
	var out []string
	for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	for _, m := range mdAutolink.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
	}
	return out
}
