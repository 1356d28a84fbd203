package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Config is a policy as JSON writes it. A field left out keeps the setting of the policy
// it is applied to ([Config.Options]): the defaults, or, for a caller, the file's own
// policy.
//
//	{
//	  "urlSchemes": ["https"],
//	  "linkSchemes": ["mailto"],
//	  "urlHosts": ["*.example.com", "cdn.example.net"],
//	  "relativeUrls": true,
//	  "computedUrls": false,
//	  "functions": ["formatString", "openUrl"],
//	  "off": ["inaccessible"]
//	}
type Config struct {
	URLSchemes   []string `json:"urlSchemes,omitempty"`
	LinkSchemes  []string `json:"linkSchemes,omitempty"`
	URLHosts     []string `json:"urlHosts,omitempty"`
	RelativeURLs *bool    `json:"relativeUrls,omitempty"`
	ComputedURLs *bool    `json:"computedUrls,omitempty"`
	// Functions lists the functions the model may call; left out, every function of
	// the catalog; [] none.
	Functions []string `json:"functions"`
	// Off lists the rules turned off.
	Off []Rule `json:"off,omitempty"`
}

// Options returns the options that apply c.
func (c *Config) Options() []Option {
	var opts []Option
	if c.URLSchemes != nil {
		opts = append(opts, WithSchemes(c.URLSchemes...))
	}
	if c.LinkSchemes != nil {
		opts = append(opts, WithLinkSchemes(c.LinkSchemes...))
	}
	if c.URLHosts != nil {
		opts = append(opts, WithHosts(c.URLHosts...))
	}
	if c.RelativeURLs != nil {
		opts = append(opts, WithRelativeURLs(*c.RelativeURLs))
	}
	if c.ComputedURLs != nil {
		opts = append(opts, WithComputedURLs(*c.ComputedURLs))
	}
	if c.Functions != nil {
		opts = append(opts, WithFunctions(c.Functions...))
	}
	if c.Off != nil {
		opts = append(opts, func(s *settings) {
			clear(s.off)
			for _, r := range c.Off {
				s.off[r] = true
			}
		})
	}
	return opts
}

// File is a policy file: a policy, and overrides per caller.
//
//	{
//	  "urlHosts": ["*.example.com"],
//	  "callers": {
//	    "key:partner": {"urlHosts": ["*.partner.example"], "off": ["inaccessible"]}
//	  }
//	}
//
// A caller is named as the service names it: "key:<name>" for an API key,
// "jwt:<issuer>|<subject>" for a JWT.
type File struct {
	Config
	Callers map[string]Config `json:"callers,omitempty"`
}

// Set is the policies of a [File]: one for every caller, and one for each caller it
// names.
type Set struct {
	// Default is the policy of the callers the file does not name.
	Default *Policy
	callers map[string]*Policy
}

// For returns the policy of the caller named id.
func (s *Set) For(id string) *Policy {
	if p, ok := s.callers[id]; ok {
		return p
	}
	return s.Default
}

// Callers lists the callers with a policy of their own, sorted.
func (s *Set) Callers() []string {
	out := make([]string, 0, len(s.callers))
	for id := range s.callers {
		out = append(out, id)
	}
	sort.Strings(out)
	return out
}

// Decode reads a policy file (JSON, unknown fields refused) and builds its policies.
// The options over apply after the file's own policy (a command line's settings, say) and
// before each caller's overrides. Errors name the field.
func Decode(r io.Reader, over ...Option) (*Set, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("not a policy file: %w", err)
	}
	if dec.More() {
		return nil, errors.New("not a policy file: more than one JSON value")
	}
	own := append(f.Options(), over...)
	def, err := New(own...)
	if err != nil {
		return nil, prefixErrors("", err)
	}
	s := &Set{Default: def, callers: map[string]*Policy{}}
	for id, c := range f.Callers {
		if strings.TrimSpace(id) == "" {
			return nil, errors.New("callers: a caller's name is empty")
		}
		p, err := New(append(append([]Option{}, own...), c.Options()...)...)
		if err != nil {
			return nil, prefixErrors("callers."+id+".", err)
		}
		s.callers[id] = p
	}
	return s, nil
}

// prefixErrors puts a field's prefix before each of the joined errors of [New].
func prefixErrors(prefix string, err error) error {
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		lines[i] = prefix + fieldOf(l)
	}
	return errors.New(strings.Join(lines, "; "))
}

// fieldOf renames the settings New names ("schemes: …") as the file's fields.
func fieldOf(msg string) string {
	for _, r := range []struct{ from, to string }{
		{"schemes: ", "urlSchemes: "}, {"link schemes: ", "linkSchemes: "}, {"hosts: ", "urlHosts: "},
		{"functions: ", "functions: "}, {"off: ", "off: "},
	} {
		if rest, ok := strings.CutPrefix(msg, r.from); ok {
			return r.to + rest
		}
	}
	return msg
}
