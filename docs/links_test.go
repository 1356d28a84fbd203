package docs

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// root is the repository root, relative to this directory.
const root = ".."

// TestLinks checks every relative link and image of README.md, CONTRIBUTING.md (when
// there is one) and the Markdown pages under docs/: its file or directory exists in the
// repository, and its #anchor, same-page or into another Markdown file, names a heading
// (by GitHub's slug) or an <a id>/<a name> of that file. Absolute URLs and code are not
// checked. It reports every broken link at once, as file:line.
func TestLinks(t *testing.T) {
	c := &checker{anchors: map[string]map[string]bool{}}
	files := pages(t)
	n := 0
	for _, f := range files {
		for _, p := range c.page(t, f) {
			t.Error(p)
			n++
		}
	}
	t.Logf("%d pages, %d links checked, %d broken", len(files), c.checked, n)
}

// pages returns the Markdown files whose links are checked, relative to the root.
func pages(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md"}
	if _, err := os.Stat(filepath.Join(root, "CONTRIBUTING.md")); err == nil {
		files = append(files, "CONTRIBUTING.md")
	}
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.EqualFold(filepath.Ext(p), ".md") {
			files = append(files, filepath.ToSlash(filepath.Join("docs", p)))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// A checker checks links, keeping the anchors of each Markdown file it has read.
type checker struct {
	anchors map[string]map[string]bool // by path relative to the root
	checked int
}

// page returns the broken links of the Markdown file f (relative to the root), each as
// "f:line: link: reason".
func (c *checker) page(t *testing.T, f string) []string {
	t.Helper()
	lines, err := readLines(f)
	if err != nil {
		t.Fatal(err)
	}
	ls, defs := links(maskCode(lines))
	var broken []string
	for _, l := range ls {
		c.checked++
		var reason string
		if l.ref != "" {
			if !defs[l.ref] {
				reason = "no link definition [" + l.ref + "]: on the page"
			}
		} else {
			reason = c.check(f, l.target)
		}
		if reason != "" {
			broken = append(broken, fmt.Sprintf("%s:%d: %s: %s", f, l.line, show(l), reason))
		}
	}
	return broken
}

// show is a link as the report names it.
func show(l link) string {
	if l.ref != "" {
		return "[" + l.ref + "]"
	}
	return "(" + l.target + ")"
}

var schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)

// check returns why target, a link of page from, is broken, or "" when it is not (or is
// an absolute URL, which is not checked).
func (c *checker) check(from, target string) string {
	if schemeRE.MatchString(target) || strings.HasPrefix(target, "//") {
		return ""
	}
	if target == "" {
		return "empty target"
	}
	p, frag, _ := strings.Cut(target, "#")
	p, _, _ = strings.Cut(p, "?")
	file, reason := resolve(from, p)
	if reason != "" {
		return reason
	}
	if frag == "" || !isMarkdown(file) {
		return ""
	}
	return c.checkAnchor(file, frag)
}

// resolve returns the file, relative to the root, that path p of a link of page from
// names (an absolute path is from the root, as GitHub reads it), or why there is none.
func resolve(from, p string) (string, string) {
	if p == "" {
		return from, ""
	}
	dec, err := url.PathUnescape(p)
	if err != nil {
		return "", "bad escape in path: " + err.Error()
	}
	file := filepath.Join(filepath.Dir(from), dec)
	if strings.HasPrefix(dec, "/") {
		file = filepath.Clean(dec[1:])
	}
	if file == ".." || strings.HasPrefix(file, "../") {
		return "", "outside the repository"
	}
	if _, err := os.Stat(filepath.Join(root, file)); err != nil {
		return "", "no such file or directory: " + filepath.ToSlash(file)
	}
	return filepath.ToSlash(file), ""
}

func isMarkdown(file string) bool {
	ext := strings.ToLower(filepath.Ext(file))
	return ext == ".md" || ext == ".markdown"
}

// checkAnchor returns why frag is no anchor of Markdown file, or "".
func (c *checker) checkAnchor(file, frag string) string {
	a, ok := c.anchors[file]
	if !ok {
		lines, err := readLines(file)
		if err != nil {
			return err.Error()
		}
		a = anchors(lines)
		c.anchors[file] = a
	}
	dec, err := url.PathUnescape(frag)
	if err != nil {
		return "bad escape in anchor: " + err.Error()
	}
	if a[dec] || a[strings.TrimPrefix(dec, "user-content-")] {
		return ""
	}
	return fmt.Sprintf("no heading or <a id> with anchor #%s in %s%s", frag, file, suggest(a, dec))
}

// suggest names the anchors of a that look like frag, for the report.
func suggest(a map[string]bool, frag string) string {
	var near []string
	for k := range a {
		if strings.Contains(k, frag) || strings.Contains(frag, k) && len(k) > 3 {
			near = append(near, "#"+k)
		}
	}
	if len(near) == 0 {
		return ""
	}
	slices.Sort(near)
	return " (did you mean " + strings.Join(near, ", ") + "?)"
}

// readLines reads a file, named relative to the root, as lines.
func readLines(file string) ([]string, error) {
	b, err := os.ReadFile(filepath.Join(root, file))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no such file", file)
	}
	if err != nil {
		return nil, err
	}
	return strings.Split(strings.ReplaceAll(string(b), "\r\n", "\n"), "\n"), nil
}

// The anchors GitHub gives headings of today's README, and headings with code, links,
// entities, emphasis and duplicates.
func TestSlug(t *testing.T) {
	s := newSlugger()
	for _, c := range []struct{ heading, want string }{
		{"`GET /session/{id}`: interactions that yield and resume", "get-sessionid-interactions-that-yield-and-resume"},
		{"Production: callers, limits, metrics", "production-callers-limits-metrics"},
		{"Several replicas: Redis", "several-replicas-redis"},
		{"`POST /generateUi`", "post-generateui"},
		{"`GET /ws`: JSON-RPC 2.0 sessions", "get-ws-json-rpc-20-sessions"},
		{"The Go A2UI SDK: packages `a2ui` and `catalog`", "the-go-a2ui-sdk-packages-a2ui-and-catalog"},
		{"Request ids, headers, logs", "request-ids-headers-logs"},
		{"genui — a GenUI generation service in Go", "genui--a-genui-generation-service-in-go"},
		{"What's new? (v1.2)", "whats-new-v12"},
		{"The `--max_turns` flag & `snake_case`", "the---max_turns-flag--snake_case"},
		{"_Emphasis_ and **bold** with a [link](https://example.com)", "emphasis-and-bold-with-a-link"},
		{"A2A", "a2a"},
		{"A2A", "a2a-1"},
		{"A2A", "a2a-2"},
		{"A2A 1", "a2a-1-1"},
	} {
		if got := s.slug(c.heading); got != c.want {
			t.Errorf("slug(%q) = %q, want %q", c.heading, got, c.want)
		}
	}
}

// Links are found in text, in references and HTML, not in code; headings and anchors
// are found outside fenced blocks.
func TestLinksAndAnchorsOfAPage(t *testing.T) {
	page := strings.Split("# Title\n"+
		"See [a](a.md#x), ![img](img/p.png \"title\") and [`code`](b.md).\n"+
		"Not `[c](c.md)` nor ``[d](d.md) ` `` here.\n"+
		"```sh\n# Not a heading\n[e](e.md)\n```\n"+
		"Ref [f][g] and [h][] and <a href=\"i.md\">i</a>.\n"+
		"[g]: g.md#y\n"+
		"Setext\n---\n"+
		"<a id=\"here\"></a>\n"+
		"## Title\n", "\n")
	got, defs := links(maskCode(page))
	want := []link{
		{line: 2, target: "a.md#x"}, {line: 2, target: "img/p.png"}, {line: 2, target: "b.md"},
		{line: 8, ref: "g"}, {line: 8, ref: "h"}, {line: 8, target: "i.md"},
		{line: 9, target: "g.md#y"},
	}
	if !slices.Equal(got, want) || !defs["g"] || defs["h"] {
		t.Errorf("links: %+v, definitions %v", got, defs)
	}
	a := anchors(page)
	for _, k := range []string{"title", "setext", "here", "title-1"} {
		if !a[k] {
			t.Errorf("no anchor %q in %v", k, a)
		}
	}
	if a["not-a-heading"] || len(a) != 4 {
		t.Errorf("anchors: %v", a)
	}
}

// The checker tells a missing file, a missing anchor and a link out of the repository
// from good links, and leaves absolute URLs and anchors of files not Markdown alone.
func TestCheckReasons(t *testing.T) {
	c := &checker{anchors: map[string]map[string]bool{}}
	for _, tc := range []struct {
		from, target string
		broken       bool
	}{
		{"README.md", "docs/doc.go", false},
		{"README.md", "docs/", false},
		{"README.md", "/docs/doc.go#L1", false},
		{"docs/x.md", "doc.go", false},
		{"docs/x.md", "../README.md", false},
		{"README.md", "https://example.com/nothing.md#nothing", false},
		{"README.md", "mailto:someone@example.com", false},
		{"README.md", "docs/no-such-page.md", true},
		{"README.md", "#no-such-heading-anywhere", true},
		{"docs/x.md", "../README.md#no-such-heading-anywhere", true},
		{"docs/x.md", "../../outside.md", true},
		{"README.md", "", true},
	} {
		if got := c.check(tc.from, tc.target); (got != "") != tc.broken {
			t.Errorf("%s: (%s): %q", tc.from, tc.target, got)
		}
	}
}
