package policy_test

import (
	"fmt"
	"log"
	"strings"

	"github.com/genuiserver/genui/policy"
)

// A policy judges a URL as a browser reads it, where it goes: the same string may be
// a fine link and a refused image.
func Example() {
	p, err := policy.New(policy.WithHosts("example.com", "*.cdn.example.com"))
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range []struct {
		url  string
		kind policy.Kind
	}{
		{"https://img.cdn.example.com/cat.png", policy.Image},
		{"  JaVa\tScRiPt:alert(1)", policy.Link},
		{"//evil.example.net/x.png", policy.Image},
		{"mailto:help@example.com", policy.Link},
		{"mailto:help@example.com", policy.Image},
	} {
		if err := p.CheckURL(c.url, c.kind); err != nil {
			fmt.Println("refused:", err)
		} else {
			fmt.Println("allowed")
		}
	}
	// Output:
	// allowed
	// refused: the UI policy refuses this link URL: its scheme is javascript:, allowed: https:, http:, mailto:, tel:
	// refused: the UI policy refuses this image URL: its host is not among the allowed hosts (example.com, *.cdn.example.com)
	// allowed
	// refused: the UI policy refuses this image URL: its scheme is mailto:, allowed: https:, http:
}

// A policy file: the policy of every caller, and overrides for some.
func ExampleDecode() {
	set, err := policy.Decode(strings.NewReader(`{
		"urlHosts": ["example.com"],
		"callers": {"key:partner": {"urlHosts": ["partner.example.org"], "off": ["inaccessible"]}}
	}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(set.Callers())
	fmt.Println(set.For("key:partner").CheckURL("https://partner.example.org/a.png", policy.Image) == nil)
	fmt.Println(set.For("key:someone").CheckURL("https://partner.example.org/a.png", policy.Image) == nil)
	// Output:
	// [key:partner]
	// true
	// false
}
