package docs

import (
	"fmt"
	"html"
	"regexp"
	"strings"
	"unicode"
)

// This file reads Markdown the way GitHub renders it, as far as links need: where code is
// (fenced blocks, code spans), which links and images a page has, and which anchors its
// headings get.

var fenceRE = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})")

// maskFences blanks the lines of fenced code blocks, fences included, keeping one entry
// per line so that line numbers stay right.
func maskFences(lines []string) []string {
	out := make([]string, len(lines))
	open := ""
	for i, l := range lines {
		m := fenceRE.FindStringSubmatch(l)
		switch {
		case open == "" && m != nil:
			open = m[1]
		case open != "" && m != nil && m[1][0] == open[0] && len(m[1]) >= len(open) &&
			strings.TrimSpace(l[len(m[0]):]) == "":
			open = ""
		case open == "":
			out[i] = l
			continue
		}
	}
	return out
}

var commentRE = regexp.MustCompile(`(?s)<!--.*?-->`)

// maskCode blanks what renders as code or not at all: fenced blocks, code spans and HTML
// comments. Newlines stay, so that line i of the result is line i of the page.
func maskCode(lines []string) []string {
	text := strings.Join(maskFences(lines), "\n")
	text = commentRE.ReplaceAllStringFunc(text, blank)
	return strings.Split(maskSpans(text), "\n")
}

// blank replaces every character of s but newlines with a space.
func blank(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' {
			return r
		}
		return ' '
	}, s)
}

// maskSpans blanks the code spans of text: a run of n backticks up to the next run of
// exactly n, within a paragraph (a span never crosses a blank line). A run without its
// match, or escaped with a backslash, is literal.
func maskSpans(text string) string {
	b := []byte(text)
	for i := 0; i < len(b); {
		if b[i] != '`' {
			i++
			continue
		}
		n := run(b, i)
		if i > 0 && b[i-1] == '\\' {
			i += n
			continue
		}
		end := closingRun(b, i+n, n)
		if end < 0 {
			i += n
			continue
		}
		copy(b[i:end], blank(string(b[i:end])))
		i = end
	}
	return string(b)
}

// run is the length of the run of backticks at b[i].
func run(b []byte, i int) int {
	n := 0
	for i+n < len(b) && b[i+n] == '`' {
		n++
	}
	return n
}

// closingRun returns the end of the first run of exactly n backticks from b[i] before
// the paragraph ends, or -1.
func closingRun(b []byte, i, n int) int {
	for i < len(b) {
		switch {
		case b[i] == '`':
			m := run(b, i)
			if m == n {
				return i + m
			}
			i += m
		case b[i] == '\n' && blankLineAt(b, i+1):
			return -1
		default:
			i++
		}
	}
	return -1
}

// blankLineAt reports whether the line starting at b[i] holds only spaces and tabs.
func blankLineAt(b []byte, i int) bool {
	for ; i < len(b) && b[i] != '\n'; i++ {
		if b[i] != ' ' && b[i] != '\t' {
			return false
		}
	}
	return true
}

// A link is a link or image target, or a reference to a link definition, of a page.
type link struct {
	line   int    // 1-based
	target string // the destination as written; empty for a reference
	ref    string // the label of a reference link ([text][label]); empty otherwise
}

var (
	refDefRE = regexp.MustCompile(`^ {0,3}\[([^\]]+)\]:[ \t]*(<[^>]*>|\S+)`)
	refUseRE = regexp.MustCompile(`\[([^\[\]]*)\]\[([^\[\]]*)\]`)
	htmlRE   = regexp.MustCompile(`(?i)<(?:a|img|source)\s[^>]*?\b(?:href|src)\s*=\s*["']([^"']*)["']`)
)

// links returns the links of a page given its lines with code masked (maskCode): inline
// links and images, reference definitions, full and collapsed references, and the href
// and src of HTML a, img and source tags. It also returns the labels the page defines.
func links(masked []string) ([]link, map[string]bool) {
	var out []link
	defs := map[string]bool{}
	for i, l := range masked {
		if m := refDefRE.FindStringSubmatch(l); m != nil {
			defs[normLabel(m[1])] = true
			out = append(out, link{line: i + 1, target: strings.Trim(m[2], "<>")})
			continue
		}
		for _, t := range inlineTargets(l) {
			out = append(out, link{line: i + 1, target: t})
		}
		for _, m := range refUseRE.FindAllStringSubmatch(l, -1) {
			label := m[2]
			if label == "" {
				label = m[1]
			}
			out = append(out, link{line: i + 1, ref: normLabel(label)})
		}
		for _, m := range htmlRE.FindAllStringSubmatch(l, -1) {
			out = append(out, link{line: i + 1, target: m[1]})
		}
	}
	return out, defs
}

// normLabel is a reference label as Markdown matches it: case and runs of space ignored.
func normLabel(s string) string {
	return strings.ToLower(strings.Join(strings.Fields(s), " "))
}

// inlineTargets returns the destinations of the inline links and images of a line: what
// follows each "](" up to its closing parenthesis, without a title.
func inlineTargets(l string) []string {
	var out []string
	for i := 0; ; {
		j := strings.Index(l[i:], "](")
		if j < 0 {
			return out
		}
		j += i
		i = j + 2
		if j > 0 && l[j-1] == '\\' {
			continue
		}
		out = append(out, destination(strings.TrimLeft(l[i:], " \t")))
	}
}

// destination reads a link destination at the start of s: <…>, or up to a space or the
// parenthesis that closes the link (parentheses inside it balanced).
func destination(s string) string {
	if strings.HasPrefix(s, "<") {
		if end := strings.IndexByte(s, '>'); end > 0 {
			return s[1:end]
		}
	}
	depth := 0
	for i, r := range s {
		switch {
		case r == '(':
			depth++
		case r == ')' && depth == 0, r == ' ', r == '\t':
			return s[:i]
		case r == ')':
			depth--
		}
	}
	return s
}

var (
	atxRE    = regexp.MustCompile(`^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$`)
	setextRE = regexp.MustCompile(`^ {0,3}(?:=+|-+)[ \t]*$`)
	notText  = regexp.MustCompile(`^\s*(?:$|[-*+>|<#]|\d+[.)]\s|` + "```|~~~)")
	anchorRE = regexp.MustCompile(`(?i)<a\s[^>]*?\b(?:id|name)\s*=\s*["']([^"']+)["']`)
)

// anchors returns the anchors of a page: its headings' slugs, as GitHub makes them, and
// the ids and names of its <a> tags.
func anchors(lines []string) map[string]bool {
	out := map[string]bool{}
	s := newSlugger()
	for _, h := range headings(maskFences(lines)) {
		out[s.slug(h)] = true
	}
	for _, l := range maskCode(lines) {
		for _, m := range anchorRE.FindAllStringSubmatch(l, -1) {
			out[m[1]] = true
		}
	}
	return out
}

// headings returns the text of every ATX (# …) and setext (underlined) heading of lines
// whose fenced code is masked, in order.
func headings(lines []string) []string {
	var out []string
	for i, l := range lines {
		if m := atxRE.FindStringSubmatch(l); m != nil {
			out = append(out, m[1])
			continue
		}
		if i > 0 && setextRE.MatchString(l) && !notText.MatchString(lines[i-1]) {
			out = append(out, strings.TrimSpace(lines[i-1]))
		}
	}
	return out
}

// A slugger gives headings their anchors as GitHub does (github-slugger): a heading
// whose slug was taken gets the first free of slug-1, slug-2, ….
type slugger struct{ seen map[string]int }

func newSlugger() *slugger { return &slugger{seen: map[string]int{}} }

// slug returns the anchor of the next heading with Markdown text h.
func (s *slugger) slug(h string) string {
	base := slug(plainText(h))
	result := base
	for {
		if _, taken := s.seen[result]; !taken {
			break
		}
		s.seen[base]++
		result = fmt.Sprintf("%s-%d", base, s.seen[base])
	}
	s.seen[result] = 0
	return result
}

// slug is GitHub's anchor of a heading's rendered text: lower case, without any
// character but letters, digits, spaces, hyphens and underscores, spaces made hyphens.
func slug(text string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(text)) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-', r == '_', unicode.IsLetter(r), unicode.IsNumber(r), unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

var (
	imageRE    = regexp.MustCompile(`!\[([^\]]*)\]\([^)]*\)`)
	linkTextRE = regexp.MustCompile(`\[([^\]]*)\](?:\([^)]*\)|\[[^\]]*\])`)
	tagRE      = regexp.MustCompile(`<[^>]+>`)
	emphasisRE = regexp.MustCompile(`(^|[^\p{L}\p{N}])_+|_+([^\p{L}\p{N}]|$)`)
	spanRE     = regexp.MustCompile("(`+)(.+?)(`+)")
)

// plainText is the text a heading's Markdown renders: code spans verbatim, links and
// images by their text, without HTML tags, entities decoded, emphasis markers dropped.
func plainText(h string) string {
	var b strings.Builder
	last := 0
	for _, m := range spanRE.FindAllStringSubmatchIndex(h, -1) {
		if h[m[2]:m[3]] != h[m[6]:m[7]] {
			continue
		}
		b.WriteString(inlineText(h[last:m[0]]))
		code := h[m[4]:m[5]]
		if len(code) > 1 && code[0] == ' ' && code[len(code)-1] == ' ' {
			code = code[1 : len(code)-1]
		}
		b.WriteString(code)
		last = m[1]
	}
	b.WriteString(inlineText(h[last:]))
	return b.String()
}

// inlineText renders Markdown outside code spans as plain text, as far as slugs need.
func inlineText(s string) string {
	s = imageRE.ReplaceAllString(s, "$1")
	s = linkTextRE.ReplaceAllString(s, "$1")
	s = tagRE.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	s = emphasisRE.ReplaceAllString(s, "$1$2")
	return strings.ReplaceAll(s, "*", "")
}
