package a2ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/genuiserver/genui/a2ui/spec"
	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
)

// This file holds what the corpus, the property test and the fuzz targets share: a
// reader of the case files, a driver that feeds a response to a Parser and a Builder as
// a streaming turn does, and a model of what a client holds, which checks that every
// state the client reaches is a valid surface.

// archive is a txtar file: a header of "key: value" lines, then sections "-- name --".
type archive struct {
	header   map[string]string
	sections map[string]string
	order    []string
}

func parseArchive(b []byte) (*archive, error) {
	a := &archive{header: map[string]string{}, sections: map[string]string{}}
	cur := ""
	var sb strings.Builder
	inHeader := true
	end := func() {
		if !inHeader {
			a.sections[cur] = sb.String()
		}
		sb.Reset()
	}
	for _, line := range strings.SplitAfter(string(b), "\n") {
		t := strings.TrimRight(line, "\r\n")
		if strings.HasPrefix(t, "-- ") && strings.HasSuffix(t, " --") && len(t) > 6 {
			end()
			inHeader = false
			cur = strings.TrimSpace(t[3 : len(t)-3])
			if _, dup := a.sections[cur]; dup {
				return nil, fmt.Errorf("section %q twice", cur)
			}
			a.sections[cur] = ""
			a.order = append(a.order, cur)
			continue
		}
		if inHeader {
			if k, v, ok := strings.Cut(t, ":"); ok && !strings.HasPrefix(t, "#") && !strings.Contains(k, " ") {
				a.header[strings.TrimSpace(k)] = strings.TrimSpace(v)
			}
			continue
		}
		sb.WriteString(line)
	}
	end()
	return a, nil
}

// lines returns the non-blank lines of a section.
func lines(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, strings.TrimRight(l, "\r"))
		}
	}
	return out
}

// catalogAliases are the short names case files give the built-in catalogs.
var catalogAliases = map[string]string{
	"basic":    spec.BasicCatalogID,
	"flutter":  spec.FlutterBasicCatalogID,
	"minimal":  spec.MinimalCatalogID,
	"standard": spec.StandardCatalogID,
}

// caseCatalog compiles the catalog a case names: a built-in one by alias or id, or the
// inline document of its "catalog.json" section under the id in the header.
func caseCatalog(version, name, inline string) (*catalog.Catalog, []byte, error) {
	if name == "" {
		name = DefaultCatalogID(version)
	}
	if id, ok := catalogAliases[name]; ok {
		name = id
	}
	if inline == "" {
		c, err := Builtin(version, name)
		return c, nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(A2UIDoc(version, name, inline), &m); err != nil {
		return nil, nil, err
	}
	c, err := catalog.Compile(m)
	return c, []byte(inline), err
}

// A2UIDoc is catalog.A2UIDocument for a string.
func A2UIDoc(version, id, doc string) []byte {
	return catalog.A2UIDocument(version, id, []byte(doc))
}

// withVersion adds "version" to a v0.9 message that lacks it (as a model writes it).
func withVersion(version string, raw []byte) []byte {
	if version != V09 {
		return raw
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return raw
	}
	if _, ok := m["version"]; ok {
		return raw
	}
	m["version"] = json.RawMessage(`"v0.9"`)
	b, _ := json.Marshal(m)
	return b
}

// turnRun is what a response became.
type turnRun struct {
	segs    []Segment
	batches [][][]byte // the messages of each Flush (and End), in order
	out     [][]byte
	vs      []catalog.Violation
}

// feedOpts says how a response is fed.
type feedOpts struct {
	chunks    []int // sizes of the pieces the text arrives in, cycled; nil: whole
	flushEach bool  // flush after every segment, not only as a streamed turn does
	// onBatch sees each batch of messages as it is sent, with the segment count so far.
	onBatch func(batch [][]byte) error
}

// feed streams text through a parser into b, as a streamed A2UI turn does: the
// segments of each piece are added, and the builder is flushed before prose that
// follows them and at the end of the piece.
func feed(b *Builder, text string, o feedOpts) (*turnRun, error) {
	p := NewParser()
	r := &turnRun{}
	send := func(batch [][]byte) error {
		if len(batch) == 0 {
			return nil
		}
		r.batches = append(r.batches, batch)
		r.out = append(r.out, batch...)
		if o.onBatch != nil {
			return o.onBatch(batch)
		}
		return nil
	}
	handle := func(segs []Segment) error {
		pending := false
		for _, s := range segs {
			s.Raw = append([]byte(nil), s.Raw...)
			r.segs = append(r.segs, s)
			if s.Kind == SegmentText {
				if pending {
					if err := send(b.Flush()); err != nil {
						return err
					}
					pending = false
				}
				continue
			}
			b.Add(s)
			pending = true
			if o.flushEach {
				if err := send(b.Flush()); err != nil {
					return err
				}
				pending = false
			}
		}
		if pending {
			return send(b.Flush())
		}
		return nil
	}
	i, k := 0, 0
	for i < len(text) {
		n := len(text) - i
		if len(o.chunks) > 0 {
			n = o.chunks[k%len(o.chunks)]
			k++
			if n <= 0 {
				n = 1
			}
			if i+n > len(text) {
				n = len(text) - i
			}
		}
		if err := handle(p.Push(text[i : i+n])); err != nil {
			return r, err
		}
		i += n
	}
	if err := handle(p.Close()); err != nil {
		return r, err
	}
	out, vs := b.End()
	r.vs = vs
	return r, send(out)
}

// randomChunks returns n random piece sizes between 1 and max.
func randomChunks(rng *rand.Rand, n, max int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = 1 + rng.Intn(max)
	}
	return out
}

// chunkings are the ways the tests cut a response.
func chunkings(seed int64) map[string][]int {
	rng := rand.New(rand.NewSource(seed))
	return map[string][]int{
		"whole":   nil,
		"1":       {1},
		"2":       {2},
		"7":       {7},
		"random":  randomChunks(rng, 97, 40),
		"random3": randomChunks(rng, 31, 3),
	}
}

// mergeText joins consecutive prose segments, which chunking may split differently.
func mergeText(segs []Segment) []Segment {
	var out []Segment
	for _, s := range segs {
		if s.Kind == SegmentText && len(out) > 0 && out[len(out)-1].Kind == SegmentText {
			out[len(out)-1].Text += s.Text
			continue
		}
		if s.Raw == nil {
			s.Raw = nil
		}
		out = append(out, s)
	}
	return out
}

func segString(s Segment) string {
	return fmt.Sprintf("{%d msg=%d idx=%d sid=%q text=%q raw=%s err=%q}", s.Kind, s.Msg, s.Index, s.SurfaceID, s.Text, s.Raw, s.Err)
}

// sameSegments reports how two segment lists differ, after merging prose.
func sameSegments(a, b []Segment) string {
	a, b = mergeText(a), mergeText(b)
	for i := 0; i < len(a) || i < len(b); i++ {
		switch {
		case i >= len(a):
			return fmt.Sprintf("segment %d: missing, want %s", i, segString(b[i]))
		case i >= len(b):
			return fmt.Sprintf("segment %d: %s, want none", i, segString(a[i]))
		}
		x, y := a[i], b[i]
		if x.Kind != y.Kind || x.Text != y.Text || x.Msg != y.Msg || x.Index != y.Index || x.SurfaceID != y.SurfaceID ||
			!bytes.Equal(x.Raw, y.Raw) || x.Err != y.Err {
			return fmt.Sprintf("segment %d: %s, want %s", i, segString(x), segString(y))
		}
	}
	return ""
}

// clientSurface is one surface as a client holds it.
type clientSurface struct {
	catalogID string
	root      string // v0.9 "root"; v0.8 the root of beginRendering
	begun     bool   // v0.8: beginRendering came
	comps     map[string]map[string]any
	data      []any // the data model updates, in order
}

// client is a model of what an A2UI client holds: its surfaces, from the messages it
// received. It rejects what a client rejects (a surface created twice, updates of a
// surface it does not have, a catalog it did not advertise), and check says whether
// what it holds is a valid surface.
type client struct {
	version   string
	catalogID string // the catalog the client advertised
	surfaces  map[string]*clientSurface
	schema    *a2uitest.Validator // nil: no schema check
	cat       *catalog.A2UI       // an inline catalog, whose schemas say which properties refer to components
	strict    bool                // emitted messages: "version" required, and checked by the schema
}

func newClient(version, catalogID string, v *a2uitest.Validator) *client {
	return &client{version: version, catalogID: catalogID, surfaces: map[string]*clientSurface{}, schema: v}
}

// clientOf returns a client of catalog c: one that knows the references of an inline
// catalog from its schemas, and the built-in catalogs' by name.
func clientOf(c *catalog.Catalog, v *a2uitest.Validator) *client {
	cl := newClient(c.A2UI.Version, c.A2UI.ID, v)
	if !IsBuiltin(c.A2UI.Version, c.A2UI.ID) {
		cl.cat = c.A2UI
	}
	return cl
}

func (c *client) clone() *client {
	n := &client{version: c.version, catalogID: c.catalogID, cat: c.cat, surfaces: map[string]*clientSurface{}}
	for id, s := range c.surfaces {
		cs := *s
		cs.comps = map[string]map[string]any{}
		for k, v := range s.comps {
			cs.comps[k] = v
		}
		cs.data = append([]any(nil), s.data...)
		n.surfaces[id] = &cs
	}
	return n
}

// apply applies one server message.
func (c *client) apply(raw []byte) error {
	if c.schema != nil {
		if c.version == V08 && c.catalogID != spec.StandardCatalogID {
			// The validator learns a v0.8 surface's catalog from its beginRendering, which
			// comes after the first components: tell it first.
			var m struct {
				SurfaceUpdate *struct {
					SurfaceID string `json:"surfaceId"`
				} `json:"surfaceUpdate"`
			}
			if json.Unmarshal(raw, &m) == nil && m.SurfaceUpdate != nil {
				br, _ := json.Marshal(map[string]any{"beginRendering": map[string]any{"surfaceId": m.SurfaceUpdate.SurfaceID, "root": "-", "catalogId": c.catalogID}})
				if err := c.schema.Check(br); err != nil {
					return err
				}
			}
		}
		if err := c.schema.Check(raw); err != nil {
			return fmt.Errorf("not valid against the official schema: %v", err)
		}
	}
	var top map[string]any
	if err := json.Unmarshal(raw, &top); err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	if c.version == V09 && c.strict && top["version"] != V09 {
		return fmt.Errorf("no \"version\":\"v0.9\"")
	}
	var op string
	var body map[string]any
	for k, v := range top {
		if k == "version" {
			continue
		}
		if op != "" {
			return fmt.Errorf("two operations: %s and %s", op, k)
		}
		op, body = k, asMap(v)
	}
	if !isOp(c.version, op) || body == nil {
		return fmt.Errorf("not a %s message: %q", c.version, op)
	}
	sid, _ := body["surfaceId"].(string)
	s := c.surfaces[sid]
	switch op {
	case CreateSurface:
		if s != nil {
			return fmt.Errorf("createSurface %q: the surface exists", sid)
		}
		id, _ := body["catalogId"].(string)
		if !SameCatalog(c.version, id, c.catalogID) {
			return fmt.Errorf("createSurface %q: catalog %q is not the advertised %q", sid, id, c.catalogID)
		}
		c.surfaces[sid] = &clientSurface{catalogID: id, root: "root", comps: map[string]map[string]any{}}
	case DeleteSurface:
		if s == nil {
			return fmt.Errorf("deleteSurface %q: no such surface", sid)
		}
		delete(c.surfaces, sid)
	case UpdateComponents, UpdateDataModel:
		if s == nil {
			return fmt.Errorf("%s %q: no such surface", op, sid)
		}
	}
	if s == nil && c.version == V08 {
		s = &clientSurface{catalogID: spec.StandardCatalogID, comps: map[string]map[string]any{}}
		c.surfaces[sid] = s
	}
	switch op {
	case BeginRendering:
		s.root, _ = body["root"].(string)
		s.begun = true
		if id, ok := body["catalogId"].(string); ok {
			if !SameCatalog(c.version, id, c.catalogID) {
				return fmt.Errorf("beginRendering %q: catalog %q is not the advertised %q", sid, id, c.catalogID)
			}
			s.catalogID = id
		}
	case UpdateComponents, SurfaceUpdate:
		inMsg := map[string]bool{}
		for _, e := range asList(body["components"]) {
			m := asMap(e)
			id, _ := m["id"].(string)
			s.comps[id] = m
			inMsg[id] = true
		}
		if c.version == V08 && c.strict {
			// @a2ui/web_core checks a v0.8 surfaceUpdate's references against the
			// components of that message alone.
			for _, e := range asList(body["components"]) {
				m := asMap(e)
				ids, _ := refsOf(c.version, c.cat, m)
				for _, r := range ids {
					if !inMsg[r] {
						return fmt.Errorf("surfaceUpdate %q: component %v refers to %q, which the message does not carry (a v0.8 renderer rejects it)", sid, m["id"], r)
					}
				}
			}
		}
	case UpdateDataModel, DataModelUpdate:
		s.data = append(s.data, body)
	}
	return nil
}

// refsOf lists the ids a component refers to: its children (a template's component
// marked), child, trigger, content, entryPointChild, contentChild, and the children of
// tabs and tabItems. With an inline catalog (cat), the references are those the
// catalog's schema of the component's type declares.
func refsOf(version string, cat *catalog.A2UI, entry map[string]any) (ids []string, tpl []bool) {
	props := entry
	typ, _ := entry["component"].(string)
	if version == V08 {
		for t, p := range asMap(entry["component"]) {
			props, typ = asMap(p), t
		}
	}
	if cat != nil {
		if def, ok := cat.Component(typ); ok {
			declared := map[string]any{}
			for _, r := range def.Refs {
				if v, ok := props[r.Prop]; ok {
					declared[r.Prop] = v
				}
			}
			props = declared
		}
	}
	add := func(v any, inTpl bool) {
		id, _ := v.(string)
		ids = append(ids, id)
		tpl = append(tpl, inTpl)
	}
	keys := make([]string, 0, len(props))
	for k := range props {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		v := props[k]
		switch k {
		case "children":
			if l, ok := v.([]any); ok && version == V09 {
				for _, e := range l {
					add(e, false)
				}
				continue
			}
			m := asMap(v)
			if version == V09 {
				add(m["componentId"], true)
				continue
			}
			if t := asMap(m["template"]); t != nil {
				add(t["componentId"], true)
			}
			for _, e := range asList(m["explicitList"]) {
				add(e, false)
			}
		case "child", "trigger", "content", "entryPointChild", "contentChild":
			add(v, false)
		case "tabs", "tabItems":
			for _, it := range asList(v) {
				add(asMap(it)["child"], false)
			}
		}
	}
	return ids, tpl
}

// relativeBinding reports whether a component binds data with a relative path.
func relativeBinding(version string, entry map[string]any) bool {
	props := entry
	if version == V08 {
		for _, p := range asMap(entry["component"]) {
			props = asMap(p)
		}
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch t := v.(type) {
		case []any:
			for _, e := range t {
				if walk(e) {
					return true
				}
			}
		case map[string]any:
			if p, ok := t["path"].(string); ok && !strings.HasPrefix(p, "/") {
				if version == V09 && (len(t) == 1 || t["componentId"] != nil) {
					return true
				}
				if version == V08 {
					bound := true
					for k := range t {
						if k != "path" && !literal08[k] {
							bound = false
						}
					}
					if bound {
						return true
					}
				}
			}
			if p, ok := t["dataBinding"].(string); ok && version == V08 && t["componentId"] != nil && !strings.HasPrefix(p, "/") {
				return true
			}
			for _, e := range t {
				if walk(e) {
					return true
				}
			}
		}
		return false
	}
	for k, v := range props {
		if version == V09 && (k == "id" || k == "component") {
			continue
		}
		if walk(v) {
			return true
		}
	}
	return false
}

// check says whether every surface the client holds is valid: once it shows anything,
// its root is there, every reference of the components it renders resolves, there is no
// cycle, and relative data paths appear only inside templates.
func (c *client) check() error {
	ids := make([]string, 0, len(c.surfaces))
	for id := range c.surfaces {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, sid := range ids {
		s := c.surfaces[sid]
		if c.version == V08 && !s.begun {
			continue // nothing renders before beginRendering
		}
		if len(s.comps) == 0 {
			continue // a surface waiting for its components
		}
		if s.comps[s.root] == nil {
			return fmt.Errorf("surface %q: it shows components but not its root %q", sid, s.root)
		}
		state := map[string]int{}
		var visit func(id string, inTpl bool, path []string) error
		visit = func(id string, inTpl bool, path []string) error {
			comp := s.comps[id]
			if comp == nil {
				return fmt.Errorf("surface %q: %s refers to %q, which the client does not have", sid, strings.Join(path, " → "), id)
			}
			if state[id] == 1 {
				return fmt.Errorf("surface %q: a cycle: %s → %s", sid, strings.Join(path, " → "), id)
			}
			if !inTpl && relativeBinding(c.version, comp) {
				return fmt.Errorf("surface %q: %q uses a relative path outside a template", sid, id)
			}
			if state[id] == 2 && !inTpl {
				return nil
			}
			if len(path) > 200 {
				return fmt.Errorf("surface %q: the tree is deeper than 200", sid)
			}
			state[id] = 1
			refs, tpl := refsOf(c.version, c.cat, comp)
			for i, r := range refs {
				if err := visit(r, inTpl || tpl[i], append(path, id)); err != nil {
					return err
				}
			}
			state[id] = 2
			return nil
		}
		if err := visit(s.root, false, nil); err != nil {
			return err
		}
	}
	return nil
}

// rendered returns the components a surface renders: those its root reaches.
func (s *clientSurface) rendered(version string, cat *catalog.A2UI) map[string]map[string]any {
	out := map[string]map[string]any{}
	var visit func(id string, d int)
	visit = func(id string, d int) {
		c := s.comps[id]
		if c == nil || out[id] != nil || d > 200 {
			return
		}
		out[id] = c
		refs, _ := refsOf(version, cat, c)
		for _, r := range refs {
			visit(r, d+1)
		}
	}
	visit(s.root, 0)
	return out
}

// diff reports how two clients' surfaces differ: the components they render, their
// roots and data model updates.
func (c *client) diff(o *client) string {
	norm := func(v any) any {
		b, _ := json.Marshal(v)
		var out any
		_ = json.Unmarshal(b, &out)
		return out
	}
	for id, s := range c.surfaces {
		t := o.surfaces[id]
		if t == nil {
			return fmt.Sprintf("surface %q: only in the first", id)
		}
		if s.root != t.root || s.begun != t.begun || !SameCatalog(c.version, s.catalogID, t.catalogID) {
			return fmt.Sprintf("surface %q: root %q/%q begun %v/%v catalog %q/%q", id, s.root, t.root, s.begun, t.begun, s.catalogID, t.catalogID)
		}
		sc, tc := s.rendered(c.version, c.cat), t.rendered(c.version, c.cat)
		if !reflect.DeepEqual(norm(sc), norm(tc)) {
			a, _ := json.Marshal(sc)
			b, _ := json.Marshal(tc)
			return fmt.Sprintf("surface %q: components\n%s\nvs\n%s", id, a, b)
		}
		if !reflect.DeepEqual(norm(s.data), norm(t.data)) {
			a, _ := json.Marshal(s.data)
			b, _ := json.Marshal(t.data)
			return fmt.Sprintf("surface %q: data\n%s\nvs\n%s", id, a, b)
		}
	}
	for id := range o.surfaces {
		if c.surfaces[id] == nil {
			return fmt.Sprintf("surface %q: only in the second", id)
		}
	}
	return ""
}

// validators caches an official-schema validator per version and inline catalog.
func newValidator(t testing.TB, version, catalogID string, inline []byte) *a2uitest.Validator {
	t.Helper()
	var extra map[string][]byte
	if inline != nil {
		extra = map[string][]byte{catalogID: inline}
	}
	return a2uitest.New(t, version, extra)
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
