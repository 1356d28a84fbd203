package policy

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Rule names a rule of a policy. It is also the code of the rule's violations and the
// label of its metric.
type Rule string

// The rules.
const (
	// UnsafeURL refuses URLs whose scheme or host is not allowed where they go.
	UnsafeURL Rule = "unsafe_url"
	// FunctionNotAllowed refuses calls of functions the policy does not list.
	FunctionNotAllowed Rule = "function_not_allowed"
	// Inaccessible refuses images without a description, buttons without text and
	// inputs without a label.
	Inaccessible Rule = "inaccessible"
	// SensitiveInput refuses obscured (password) fields.
	SensitiveInput Rule = "sensitive_input"
)

// Rules lists every rule, in a fixed order.
func Rules() []Rule { return []Rule{UnsafeURL, FunctionNotAllowed, Inaccessible, SensitiveInput} }

func (r Rule) valid() bool { return slices.Contains(Rules(), r) }

// Kind is where a URL goes, which decides the schemes it may have.
type Kind uint8

// Kinds of URLs.
const (
	// Link is a URL the client navigates to or opens: openUrl's url, a Markdown
	// link, a property of a custom catalog that is no image or media. Links may also
	// use the link schemes (mailto:, tel: by default); never data:.
	Link Kind = 1 << iota
	// Image is the source of an image (Image.url, a theme's icon): data:image/…
	// raster images when the policy allows data.
	Image
	// Media is the source of a video or audio player.
	Media
)

// Kinds is a set of kinds.
type Kinds = Kind

func (k Kind) String() string {
	switch k {
	case Link:
		return "link"
	case Image:
		return "image"
	case Media:
		return "media"
	}
	return "URL"
}

// Policy is a set of rules the UI a model writes must follow. It is immutable and safe
// for concurrent use. The nil *Policy has every rule off.
type Policy struct {
	schemes     []string // lower case, sorted; "data" for data:image/… images
	linkSchemes []string
	hosts       []string // lower-case ASCII patterns: "example.com", "*.example.com"
	relative    bool
	computed    bool
	functions   []string // sorted; nil: every function of the catalog
	off         map[Rule]bool
	prompt      string
}

// Option configures a [Policy].
type Option func(*settings)

type settings struct {
	schemes, linkSchemes, hosts, functions []string
	relative, computed                     bool
	functionsSet                           bool
	off                                    map[Rule]bool
}

// Default URL schemes.
var (
	DefaultSchemes     = []string{"https", "http"}
	DefaultLinkSchemes = []string{"mailto", "tel"}
)

// WithSchemes sets the schemes a URL may have anywhere (default https, http). "data"
// allows data: URLs of raster images (image/png, jpeg, gif, webp, avif, bmp, x-icon)
// where an image goes, and nowhere else.
func WithSchemes(schemes ...string) Option {
	return func(s *settings) { s.schemes = append([]string{}, schemes...) }
}

// WithLinkSchemes sets the schemes a link may have besides those of [WithSchemes]
// (default mailto, tel).
func WithLinkSchemes(schemes ...string) Option {
	return func(s *settings) { s.linkSchemes = append([]string{}, schemes...) }
}

// WithHosts allows only URLs whose host matches a pattern: "example.com" that host,
// "*.example.com" its subdomains. URLs without a host (relative, mailto:, tel:, data:)
// are not judged by host. Default: any host.
func WithHosts(patterns ...string) Option {
	return func(s *settings) { s.hosts = append([]string{}, patterns...) }
}

// WithRelativeURLs allows or refuses relative URLs (default: allowed; the client
// resolves them against its own page or app).
func WithRelativeURLs(allowed bool) Option { return func(s *settings) { s.relative = allowed } }

// WithComputedURLs allows URLs that a function computes at run time (a function call
// where a URL goes), which the service cannot judge (default: refused).
func WithComputedURLs(allowed bool) Option { return func(s *settings) { s.computed = allowed } }

// WithFunctions lists the functions the model may call; the others are refused
// ([FunctionNotAllowed]). Default: every function of the catalog. An empty list allows
// none.
func WithFunctions(names ...string) Option {
	return func(s *settings) { s.functions, s.functionsSet = append([]string{}, names...), true }
}

// Without turns rules off.
func Without(rules ...Rule) Option {
	return func(s *settings) {
		for _, r := range rules {
			s.off[r] = true
		}
	}
}

// Never-allowed schemes: they run script.
var scriptSchemes = []string{"javascript", "vbscript", "livescript"}

// New returns a policy with every rule on and the default URL settings, changed by opts.
// It fails, naming the setting, on a scheme that is not a scheme or that runs script, on
// a host pattern that is not a host, and on an unknown rule.
func New(opts ...Option) (*Policy, error) {
	s := settings{schemes: DefaultSchemes, linkSchemes: DefaultLinkSchemes, relative: true, off: map[Rule]bool{}}
	for _, o := range opts {
		o(&s)
	}
	var errs []error
	p := &Policy{relative: s.relative, computed: s.computed, off: map[Rule]bool{}}
	var err error
	if p.schemes, err = checkSchemes(s.schemes, false); err != nil {
		errs = append(errs, fmt.Errorf("schemes: %w", err))
	}
	if p.linkSchemes, err = checkSchemes(s.linkSchemes, true); err != nil {
		errs = append(errs, fmt.Errorf("link schemes: %w", err))
	}
	for _, h := range s.hosts {
		pat, err := hostPattern(h)
		if err != nil {
			errs = append(errs, fmt.Errorf("hosts: %w", err))
			continue
		}
		if !slices.Contains(p.hosts, pat) {
			p.hosts = append(p.hosts, pat)
		}
	}
	if s.functionsSet {
		p.functions = []string{}
		for _, f := range s.functions {
			if f = strings.TrimSpace(f); f == "" {
				errs = append(errs, errors.New("functions: a function name is empty"))
				continue
			}
			if !slices.Contains(p.functions, f) {
				p.functions = append(p.functions, f)
			}
		}
		sort.Strings(p.functions)
	}
	for r := range s.off {
		if !r.valid() {
			errs = append(errs, fmt.Errorf("off: unknown rule %q; the rules are %s", r, ruleList()))
			continue
		}
		p.off[r] = true
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	p.prompt = p.describe()
	return p, nil
}

func ruleList() string {
	var names []string
	for _, r := range Rules() {
		names = append(names, string(r))
	}
	return strings.Join(names, ", ")
}

// ParseRule reads a rule's name.
func ParseRule(name string) (Rule, error) {
	r := Rule(strings.TrimSpace(name))
	if !r.valid() {
		return "", fmt.Errorf("unknown rule %q; the rules are %s", name, ruleList())
	}
	return r, nil
}

// checkSchemes lower-cases and checks a list of schemes.
func checkSchemes(list []string, link bool) ([]string, error) {
	out := []string{}
	for _, sc := range list {
		sc = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(sc), ":"))
		switch {
		case !validScheme(sc):
			return nil, fmt.Errorf("%q is not a scheme: a letter, then letters, digits, +, - or .", sc)
		case slices.Contains(scriptSchemes, sc):
			return nil, fmt.Errorf("%s: runs script, and is never allowed", sc)
		case link && sc == "data":
			return nil, errors.New("data: a link to a data: URL opens a document the model wrote; data is allowed for images only, among the schemes")
		}
		if !slices.Contains(out, sc) {
			out = append(out, sc)
		}
	}
	return out, nil
}

func validScheme(s string) bool {
	if s == "" || !isAlpha(s[0]) {
		return false
	}
	for i := 1; i < len(s); i++ {
		c := s[i]
		if !isAlpha(c) && !(c >= '0' && c <= '9') && c != '+' && c != '-' && c != '.' {
			return false
		}
	}
	return true
}

func isAlpha(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

var defaultPolicy = sync.OnceValue(func() *Policy {
	p, err := New()
	if err != nil {
		panic("policy: the default policy: " + err.Error())
	}
	return p
})

// Default returns the default policy: every rule on, https: and http: URLs (and mailto:,
// tel: links), any host, relative URLs, no computed URLs, every function of the catalog.
func Default() *Policy { return defaultPolicy() }

// Active returns p when one of its rules is on, else nil: the policy that checks nothing.
func (p *Policy) Active() *Policy {
	for _, r := range Rules() {
		if p.On(r) {
			return p
		}
	}
	return nil
}

// On reports whether rule r is on.
func (p *Policy) On(r Rule) bool { return p != nil && !p.off[r] }

// Schemes returns the schemes a URL may have anywhere.
func (p *Policy) Schemes() []string { return slices.Clone(p.schemes) }

// LinkSchemes returns the schemes a link may have besides [Policy.Schemes].
func (p *Policy) LinkSchemes() []string { return slices.Clone(p.linkSchemes) }

// Hosts returns the host patterns URLs must match; none means any host.
func (p *Policy) Hosts() []string { return slices.Clone(p.hosts) }

// Functions returns the functions the model may call, sorted, and whether the policy
// lists them (false: every function of the catalog).
func (p *Policy) Functions() ([]string, bool) { return slices.Clone(p.functions), p.functions != nil }

// CheckFunction judges a call of the function name: nil when the policy allows it.
func (p *Policy) CheckFunction(name string) error {
	if !p.On(FunctionNotAllowed) || p.functions == nil {
		return nil
	}
	if _, ok := slices.BinarySearch(p.functions, name); ok {
		return nil
	}
	if len(p.functions) == 0 {
		return fmt.Errorf("the UI policy allows no function calls: use an event action instead")
	}
	return fmt.Errorf("the UI policy does not allow calling %q; it allows %s", clipName(name), strings.Join(p.functions, ", "))
}

// clipName shortens a name the model wrote before a message repeats it.
func clipName(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return s
}

// Sensitive reports whether a property value makes an input obscured: a variant, type
// or textFieldType "obscured" or "password", or obscureText, obscured, password or
// secure set to true.
func Sensitive(prop string, v any) bool {
	switch t := v.(type) {
	case string:
		switch prop {
		case "variant", "type", "textFieldType", "inputType", "keyboardType":
			return strings.EqualFold(t, "obscured") || strings.EqualFold(t, "password")
		}
	case bool:
		switch prop {
		case "obscureText", "obscured", "password", "secure", "isPassword":
			return t
		}
	}
	return false
}

// SensitiveMessage is the message of a [SensitiveInput] violation.
const SensitiveMessage = "the UI policy does not allow obscured (password) fields: a model must not ask the user for a secret; use a plain field, or ask the app to collect it"

// Prompt describes the policy for the model's system prompt, in a few lines; "" when
// no rule is on.
func (p *Policy) Prompt() string {
	if p == nil {
		return ""
	}
	return p.prompt
}

func (p *Policy) describe() string {
	var lines []string
	if p.On(UnsafeURL) {
		var sb strings.Builder
		sb.WriteString("- URLs (images, videos, audio, links, openUrl) are absolute with the scheme ")
		sb.WriteString(schemeList(without(p.schemes, "data")))
		if len(p.linkSchemes) > 0 {
			sb.WriteString(" (links also ")
			sb.WriteString(schemeList(p.linkSchemes))
			sb.WriteString(")")
		}
		if p.relative {
			sb.WriteString(", or relative")
		}
		if slices.Contains(p.schemes, "data") {
			sb.WriteString("; images may also be data:image/png, jpeg, gif or webp")
		}
		if len(p.hosts) > 0 {
			sb.WriteString("; hosts only " + strings.Join(p.hosts, ", "))
		}
		sb.WriteString(". Never javascript:, data: documents or file:.")
		if !p.computed {
			sb.WriteString(" A URL is a string or a data binding, never a function call.")
		}
		lines = append(lines, sb.String())
	}
	if p.On(FunctionNotAllowed) && p.functions != nil {
		if len(p.functions) == 0 {
			lines = append(lines, "- Call no functions.")
		} else {
			lines = append(lines, "- Call only these functions: "+strings.Join(p.functions, ", ")+".")
		}
	}
	if p.On(Inaccessible) {
		lines = append(lines, "- Where the catalog has a property for it, give every image a description, every button a text (or an accessibility label), every input a label.")
	}
	if p.On(SensitiveInput) {
		lines = append(lines, "- Never make an obscured (password) field.")
	}
	if len(lines) == 0 {
		return ""
	}
	return "UI policy (what breaks it does not reach the user):\n" + strings.Join(lines, "\n") + "\n"
}

func schemeList(list []string) string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s + ":"
	}
	return strings.Join(out, ", ")
}

func without(list []string, s string) []string {
	out := make([]string, 0, len(list))
	for _, e := range list {
		if e != s {
			out = append(out, e)
		}
	}
	return out
}
