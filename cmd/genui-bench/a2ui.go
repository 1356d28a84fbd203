package main

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// The A2UI phase: the fake model writes a scripted surface as A2UI text, paced like a
// model streaming tokens, and the client measures when the surface becomes renderable
// and when it is complete.

//go:embed scripts/a2ui-v0.9.txt
var a2uiTextV09 string

//go:embed scripts/a2ui-v0.8.txt
var a2uiTextV08 string

// a2uiVersions are the A2UI versions the phase can run, in order: each as the service's
// prompt asks a model to write it (```a2ui blocks, JSON Lines), and as the A2UI agent
// SDKs ask ("-tags": a JSON array in <a2ui-json> tags).
var a2uiVersions = []string{"v0.9", "v0.8", "v0.9-tags", "v0.8-tags"}

// tagsSuffix marks the variant of a version written in <a2ui-json> tags.
const tagsSuffix = "-tags"

// protocolVersion is the A2UI version of a variant.
func protocolVersion(v string) string { return strings.TrimSuffix(v, tagsSuffix) }

// a2uiMarker, followed by the version, in a user message makes the fake model answer
// with the A2UI script of that version.
const a2uiMarker = "genui-bench-a2ui-"

// a2uiKey is what a user message holds to ask for the script of a version (the marker,
// the version, and a colon, so that no version's key holds another's).
func a2uiKey(version string) string { return a2uiMarker + version + ":" }

// a2uiTargetPct is the target: the first renderable part arrives at no more than this
// share of the time the complete surface takes.
const a2uiTargetPct = 25

// a2uiMinComponents is the smallest surface the target is stated for.
const a2uiMinComponents = 20

// visibleLeaf holds the component types (both versions) that show something by
// themselves. A Button shows its child, a layout or a Card only their children; a
// Divider is not content.
var visibleLeaf = map[string]bool{
	"Text": true, "Image": true, "Icon": true, "Video": true, "AudioPlayer": true,
	"TextField": true, "CheckBox": true, "ChoicePicker": true, "MultipleChoice": true,
	"Slider": true, "DateTimeInput": true,
}

// a2uiScript is what the fake model writes in an A2UI turn, and what the bench derives
// from it: its components in the order written, and for each the offset in the text at
// which a server could first show it.
type a2uiScript struct {
	version   string
	text      string
	surfaceID string
	root      string
	comps     []scriptComp
	byID      map[string]int
	// ready is the offset just past the message that lets a client render the surface at
	// all: createSurface (v0.9) or beginRendering (v0.8).
	ready int
	// firstAt is the offset at which the model has written a renderable part (root and a
	// visible leaf, with every component between them); lastAt the offset at which it
	// has written every component a server can show.
	firstAt, lastAt int
}

type scriptComp struct {
	id, typ string
	refs    []string // children, in order (child lists and single children)
	single  []string // single-child references (child, trigger): a server shows the parent with them only
	end     int      // offset just past the component's closing brace
	avail   int      // offset from which a server can show it: see avail
}

// a2uiScriptFor returns the parsed script of a version.
func a2uiScriptFor(version string) (*a2uiScript, error) {
	text := map[string]string{"v0.9": a2uiTextV09, "v0.8": a2uiTextV08}[protocolVersion(version)]
	if text == "" {
		return nil, fmt.Errorf("no A2UI script for version %q", version)
	}
	if strings.HasSuffix(version, tagsSuffix) {
		text = taggedScript(text)
	}
	return parseA2UIScript(protocolVersion(version), text)
}

// taggedScript rewrites a script's ```a2ui block, JSON Lines, as the A2UI agent SDKs ask
// models to write A2UI: one JSON array of the same messages in <a2ui-json> tags, each
// message (and component) still on lines of its own.
func taggedScript(text string) string {
	var out strings.Builder
	in, depth := false, 0
	var last int // where in out the last message ended, to put a comma after it
	for line := range strings.SplitAfterSeq(text, "\n") {
		t := strings.TrimRight(line, "\r\n")
		switch {
		case !in && t == "```a2ui":
			in, last = true, -1
			out.WriteString("<a2ui-json>\n[\n")
			continue
		case in && t == "```":
			in = false
			out.WriteString("]\n</a2ui-json>\n")
			continue
		case !in:
			out.WriteString(line)
			continue
		}
		if depth == 0 && last >= 0 {
			// Another message follows the last one: a comma after it.
			s := out.String()
			out.Reset()
			out.WriteString(s[:last] + "," + s[last:])
		}
		inString, escaped := false, false
		for i := 0; i < len(t); i++ {
			c := t[i]
			switch {
			case escaped:
				escaped = false
			case inString && c == '\\':
				escaped = true
			case c == '"':
				inString = !inString
			case !inString && (c == '{' || c == '['):
				depth++
			case !inString && (c == '}' || c == ']'):
				depth--
			}
		}
		out.WriteString(t)
		if depth == 0 {
			last = out.Len()
		}
		out.WriteString(line[len(t):])
	}
	return out.String()
}

// parseA2UIScript reads a script written the way the bench's scripts are: prose, then an
// ```a2ui block with one message per line, the components of its component update one
// per line. It checks that the surface is a tree written top-down from its root.
func parseA2UIScript(version, text string) (*a2uiScript, error) {
	s := &a2uiScript{version: version, text: text, byID: map[string]int{}}
	off := 0
	for line := range strings.SplitAfterSeq(text, "\n") {
		start := off
		off += len(line)
		l := strings.TrimSuffix(strings.TrimRight(line, "\r\n"), ",")
		switch {
		case strings.HasPrefix(l, `{"id":`):
			var obj map[string]any
			if err := json.Unmarshal([]byte(l), &obj); err != nil {
				return nil, fmt.Errorf("%s script: component %q: %v", version, l, err)
			}
			id, typ, refs, single := componentRefs(version, obj)
			if id == "" || typ == "" {
				return nil, fmt.Errorf("%s script: component without id or type: %s", version, l)
			}
			if _, dup := s.byID[id]; dup {
				return nil, fmt.Errorf("%s script: duplicate id %q", version, id)
			}
			s.byID[id] = len(s.comps)
			s.comps = append(s.comps, scriptComp{id: id, typ: typ, refs: refs, single: single, end: start + len(l)})
		case strings.HasPrefix(l, `{"createSurface":`), strings.HasPrefix(l, `{"beginRendering":`):
			var m map[string]struct {
				SurfaceID string `json:"surfaceId"`
				Root      string `json:"root"`
			}
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				return nil, fmt.Errorf("%s script: %q: %v", version, l, err)
			}
			for _, body := range m {
				s.surfaceID, s.root = body.SurfaceID, body.Root
			}
			if version == "v0.9" {
				s.root = "root"
			}
			s.ready = start + len(l)
		}
	}
	if s.ready == 0 || s.root == "" || len(s.comps) == 0 {
		return nil, fmt.Errorf("%s script: no surface, root or component", version)
	}
	// Top-down: the root comes first and every other component after its parent, once.
	parent := map[string]string{}
	for i, c := range s.comps {
		for _, r := range c.refs {
			j, ok := s.byID[r]
			switch {
			case !ok:
				return nil, fmt.Errorf("%s script: %q refers to %q, which it never writes", version, c.id, r)
			case j <= i:
				return nil, fmt.Errorf("%s script: %q is written before its parent %q", version, r, c.id)
			case parent[r] != "":
				return nil, fmt.Errorf("%s script: %q has two parents", version, r)
			}
			parent[r] = c.id
		}
	}
	if s.comps[0].id != s.root {
		return nil, fmt.Errorf("%s script: the first component is %q, not the root %q", version, s.comps[0].id, s.root)
	}
	for _, c := range s.comps[1:] {
		if parent[c.id] == "" {
			return nil, fmt.Errorf("%s script: %q is not reachable from the root", version, c.id)
		}
	}
	s.avail(s.root, s.ready)
	s.firstAt = -1
	for _, c := range s.comps {
		if visibleLeaf[c.typ] && (s.firstAt < 0 || c.avail < s.firstAt) {
			s.firstAt = c.avail
		}
		s.lastAt = max(s.lastAt, c.avail)
	}
	if s.firstAt < 0 {
		return nil, fmt.Errorf("%s script: no visible component", version)
	}
	return s, nil
}

// avail sets the offset from which a server that sends a component as soon as the
// surface stays valid with it can show component id: once it is written, its single
// children (recursively) are written, and its parent can be shown (from). A child list
// is no reason to wait: it goes out cut to the children already there.
func (s *a2uiScript) avail(id string, from int) {
	c := &s.comps[s.byID[id]]
	c.avail = max(from, s.need(id))
	for _, r := range c.refs {
		s.avail(r, c.avail)
	}
}

// need is the offset at which a component and its single children are all written.
func (s *a2uiScript) need(id string) int {
	c := s.comps[s.byID[id]]
	n := c.end
	for _, r := range c.single {
		n = max(n, s.need(r))
	}
	return n
}

// chunks splits the script into pieces of about size bytes (never inside a UTF-8
// sequence), as a model streams its text: the pieces do not follow lines or JSON.
func (s *a2uiScript) chunks(size int) []string {
	var out []string
	for t := s.text; t != ""; {
		n := min(size, len(t))
		for n < len(t) && !utf8.RuneStart(t[n]) {
			n++
		}
		out = append(out, t[:n])
		t = t[n:]
	}
	return out
}

// chunkAt returns the index of the chunk of size bytes holding the byte just before
// offset (the last byte of what ends there).
func chunkAt(offset, size int) int { return max(offset-1, 0) / size }

// schedule returns when each chunk is sent after the request arrives: after latency,
// each chunk once the model has produced its tokens (bytes/4) at tokensPerS.
func schedule(chunks []string, tokensPerS float64, latency time.Duration) []time.Duration {
	out := make([]time.Duration, len(chunks))
	bytes := 0
	for i, c := range chunks {
		bytes += len(c)
		out[i] = latency + time.Duration(float64(bytes)/4/tokensPerS*float64(time.Second))
	}
	return out
}

// componentRefs reads a component of either version: its id, type, the ids it refers to
// as children (child lists, single children, tabs, a modal's trigger) and among them the
// single-child references. Templates are not followed.
func componentRefs(version string, obj map[string]any) (id, typ string, refs, single []string) {
	id, _ = obj["id"].(string)
	var props map[string]any
	if version == "v0.8" {
		w, _ := obj["component"].(map[string]any)
		for k, v := range w {
			typ, props = k, asObject(v)
		}
	} else {
		typ, _ = obj["component"].(string)
		props = obj
	}
	if props == nil {
		return id, typ, nil, nil
	}
	list := props["children"]
	if version == "v0.8" {
		list = asObject(list)["explicitList"]
	}
	if l, ok := list.([]any); ok {
		for _, e := range l {
			if r, ok := e.(string); ok {
				refs = append(refs, r)
			}
		}
	}
	for _, k := range []string{"child", "trigger", "entryPointChild"} {
		if r, ok := props[k].(string); ok {
			refs, single = append(refs, r), append(single, r)
		}
	}
	for _, k := range []string{"tabs", "tabItems"} {
		if l, ok := props[k].([]any); ok {
			for _, e := range l {
				if r, ok := asObject(e)["child"].(string); ok {
					refs, single = append(refs, r), append(single, r)
				}
			}
		}
	}
	return id, typ, refs, single
}

func asObject(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// a2uiSurfaces is what an A2UI client holds: its surfaces by id, each with its
// components by id (upserted).
type a2uiSurfaces struct {
	version  string
	surfaces map[string]*clientSurface
}

type clientSurface struct {
	ready bool   // v0.9: createSurface received; v0.8: beginRendering received
	root  string // v0.9: "root"; v0.8: beginRendering's root
	comps map[string]clientComp
}

type clientComp struct {
	typ  string
	refs []string
}

func newA2UISurfaces(version string) *a2uiSurfaces {
	return &a2uiSurfaces{version: version, surfaces: map[string]*clientSurface{}}
}

func (a *a2uiSurfaces) surface(id string) *clientSurface {
	s := a.surfaces[id]
	if s == nil {
		s = &clientSurface{comps: map[string]clientComp{}}
		if a.version == "v0.9" {
			s.root = "root"
		}
		a.surfaces[id] = s
	}
	return s
}

// apply applies one A2UI message (a line without "type") and calls added with the id of
// every component it holds. Data model messages change nothing the bench measures.
func (a *a2uiSurfaces) apply(msg map[string]json.RawMessage, added func(surfaceID, id string)) error {
	if v, ok := msg["version"]; ok {
		var s string
		if json.Unmarshal(v, &s) != nil || s != a.version {
			return fmt.Errorf("message of version %s in a %s turn", v, a.version)
		}
	}
	ops := 0
	for op, raw := range msg {
		if op == "version" {
			continue
		}
		ops++
		var body struct {
			SurfaceID  string           `json:"surfaceId"`
			Root       string           `json:"root"`
			Components []map[string]any `json:"components"`
		}
		if err := json.Unmarshal(raw, &body); err != nil {
			return fmt.Errorf("%s: %v", op, err)
		}
		switch op {
		case "createSurface":
			a.surface(body.SurfaceID).ready = true
		case "beginRendering":
			s := a.surface(body.SurfaceID)
			s.ready, s.root = true, body.Root
		case "updateComponents", "surfaceUpdate":
			s := a.surface(body.SurfaceID)
			for _, obj := range body.Components {
				id, typ, refs, _ := componentRefs(a.version, obj)
				if id == "" {
					return fmt.Errorf("%s: a component without id", op)
				}
				s.comps[id] = clientComp{typ: typ, refs: refs}
				if added != nil {
					added(body.SurfaceID, id)
				}
			}
		case "deleteSurface":
			delete(a.surfaces, body.SurfaceID)
		case "updateDataModel", "dataModelUpdate":
		default:
			return fmt.Errorf("unknown A2UI message %q", op)
		}
	}
	if ops != 1 {
		return fmt.Errorf("an A2UI message has one operation, this one %d", ops)
	}
	return nil
}

// walk visits the components a client renders for surface id, from its root through
// the references it holds, depth first; visit returns false to stop.
func (a *a2uiSurfaces) walk(id string, visit func(id string, c clientComp) bool) {
	s := a.surfaces[id]
	if s == nil || !s.ready {
		return
	}
	seen := map[string]bool{}
	var rec func(id string) bool
	rec = func(id string) bool {
		c, ok := s.comps[id]
		if !ok || seen[id] {
			return true
		}
		seen[id] = true
		if !visit(id, c) {
			return false
		}
		for _, r := range c.refs {
			if !rec(r) {
				return false
			}
		}
		return true
	}
	rec(s.root)
}

// renderable reports whether the client can render something of surface id: it holds
// the root and, reachable from it, a component of a visible leaf type (a Button counts
// through its child).
func (a *a2uiSurfaces) renderable(id string) bool {
	found := false
	a.walk(id, func(_ string, c clientComp) bool {
		found = visibleLeaf[c.typ]
		return !found
	})
	return found
}

// missing compares surface id as the client renders it with the script: it returns the
// scripted components the client does not render (absent, of another type, or not
// reachable from the root), or nil.
func (a *a2uiSurfaces) missing(s *a2uiScript) []string {
	rendered := map[string]string{}
	a.walk(s.surfaceID, func(id string, c clientComp) bool {
		rendered[id] = c.typ
		return true
	})
	var out []string
	for _, c := range s.comps {
		if rendered[c.id] != c.typ {
			out = append(out, c.id)
		}
	}
	return out
}

// errNoRenderable is a turn whose surface never became renderable.
var errNoRenderable = errors.New("the surface never became renderable")

// a2uiStat is the median, minimum and maximum of a figure over the turns of a run.
type a2uiStat struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
}

// statOf returns the median (the mean of the two middle values for an even count),
// minimum and maximum of xs, rounded to digits.
func statOf(xs []float64, digits int) a2uiStat {
	if len(xs) == 0 {
		return a2uiStat{}
	}
	s := slices.Sorted(slices.Values(xs))
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return a2uiStat{Median: round(med, digits), Min: round(s[0], digits), Max: round(s[n-1], digits)}
}
