package a2ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/policy"
)

// Builder turns what a model writes into the A2UI messages a client receives. It knows
// the surfaces of a conversation as the client shows them (from the messages the client
// already received, [Builder.Shown]), and checks each component and message of a model
// response ([Builder.Add]) against the catalog and A2UI's rules: a component against its
// type's schema, unique ids, data paths that are JSON Pointers (relative ones only inside
// templates), functions of the catalog called with the arguments they take, a surface
// created with the advertised catalog before it is changed, a root, references that
// resolve, no cycles, nothing unreachable.
//
// What the model writes reaches the client as soon as the surface stays valid with it: a
// component whose references are not all there yet goes out with the children that are
// (child lists) or waits for them (a single child, a template), and the component is sent
// again when more of its children come. So every state of a surface a client sees is a
// valid surface, the first one included, while the model is still writing. A component
// is taken on its own, as soon as it is complete: it stays even if its message turns out
// to break a rule. Components and data-model updates of a surface written before its
// createSurface wait for it.
// Whatever breaks a rule is not sent: [Builder.End] reports it, for the model to repair.
//
// A turn may hold several responses (the model repairs what [Builder.End] reported): each
// response starts from what the client has, and a component that waited for references
// at the end of a response still goes out once a later response completes it.
//
// A Builder is not safe for concurrent use.
type Builder struct {
	version  string
	cat      *catalog.A2UI
	surfaces map[string]*surface
	order    []*surface // surfaces touched during the response, in order
	r        catalog.Report
	out      [][]byte
	early    map[int][]Segment       // components whose message had not named its surface yet
	streamed map[int]bool            // messages whose components came as segments
	ids      map[int]map[string]bool // each message's component ids
	badJSON  map[int]bool            // messages with a component that is not JSON
	sent     int                     // messages sent during the turn
	w        *walker                 // the walker of flushes, kept between them
	// strict judges messages as they travel to a renderer ([Validate]), rather than as a
	// model writes them: v0.9 messages carry their version, createSurface its catalogId.
	strict bool
	// ending: the response ends, and every list goes out as far as it can be shown.
	ending bool
	// For FlushDue: the components written since the last flush, the components the
	// client has, and when the last flush was.
	pending, shown int
	now, flushed   time.Time
	// The UI policy ([WithPolicy]), and what it checks of the catalog's types.
	policy *policy.Policy
	rules  *rules
	// Limits ([WithLimits]), and the one a response reached: the builder then takes
	// nothing more.
	maxComps, maxData int
	exceeded          *LimitError
}

type surface struct {
	id       string
	created  bool             // v0.9: createSurface was sent (or shown); v0.8: any message was
	root     string           // the id the surface renders from
	begun    bool             // v0.8: beginRendering was sent (or shown)
	begin    map[string]any   // v0.8: the beginRendering to send once the root can render
	beginAt  string           // v0.8: where the response wrote beginRendering
	have     map[string]*comp // each component's latest valid version
	sent     map[string][]byte
	held     []*comp  // v0.9: components written before the surface was created
	heldData []held   // v0.9: data-model updates written before the surface was created
	turn     []string // ids written during the response, in order
	// rejected holds the ids of the components the response wrote that broke a rule,
	// with the ids they refer to: references to them, and what only they reach, are
	// not reported again.
	rejected map[string][]string
	// referred holds the ids that a version of a component, during the response, referred
	// to: a component that was replaced by a later version (a placeholder) is not
	// reported as unreachable.
	referred   map[string]bool
	notCreated bool // the response's createSurface (v0.9) or beginRendering (v0.8) broke a rule
	// fresh: the response created the surface (the client did not have it before), so
	// it must have its root by the response's end.
	fresh bool
	// opaque: the client has the surface, but what it holds is not known ([WithShown]):
	// references to components not written here, and a missing root, are not reported.
	opaque bool
	wrote  string // where the response first wrote to the surface
	// With a policy: the data paths URL places are bound to, by the kinds of those
	// places (relative paths: inside templates), and the data-model strings that a URL
	// place bound to them would refuse.
	bound   map[string]policy.Kinds
	suspect map[string]policy.Kinds
	// dataBytes counts the data-model updates written to the surface ([WithLimits]).
	dataBytes int
	// wroteComps: the response wrote components to the surface (valid or not).
	wroteComps bool
	touched    bool
	dirty      bool
}

// held is a message waiting for its surface.
type held struct {
	msg []byte
	at  string
}

type comp struct {
	id, typ  string
	obj      map[string]any // as written: v0.9 the component, v0.8 the entry {id, weight, component}
	props    map[string]any // the properties: obj itself (v0.9) or obj.component[typ] (v0.8)
	def      *catalog.Component
	relative bool   // uses relative data paths
	at       string // where the model wrote it during the response; "" for one written before
	msg      int    // the message of the response it came in
	enc      []byte // obj encoded
	// cut is the last way a flush cut the component's child lists: flushes cut it the
	// same way until another child can be shown, so a cut is checked and encoded once.
	cut *cutComp
	// shownCut is the cut the client was last sent, when it was sent cut: a growing
	// child list is sent again only once it has grown by half (see hold).
	shownCut *cutComp
	// With a policy: the data paths its URL places are bound to, and what the policy
	// checks of its type.
	bindings []binding
	rules    *compRules
}

// cutComp is a component with child lists cut to the children that can be shown.
type cutComp struct {
	key   string         // the kept ids of each cut list
	props map[string]any // the properties with the lists cut
	ok    bool           // the catalog allows the cut lists
	enc   []byte         // the component as shown, encoded when first sent
	kept  []string       // the ids kept, in every list
}

// NewBuilder returns a builder for surfaces of the A2UI catalog c (c.A2UI must be set).
func NewBuilder(c *catalog.Catalog, opts ...Option) *Builder {
	b := &Builder{version: c.A2UI.Version, cat: c.A2UI, surfaces: map[string]*surface{}}
	b.reset()
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	for _, id := range o.shown {
		b.shownOpaque(id)
	}
	if o.policy != nil {
		b.policy, b.rules = o.policy, rulesOf(c)
	}
	b.maxComps, b.maxData = o.maxComps, o.maxData
	return b
}

func (b *Builder) reset() {
	b.r = catalog.Report{}
	b.early, b.streamed, b.ids, b.badJSON = map[int][]Segment{}, map[int]bool{}, map[int]map[string]bool{}, map[int]bool{}
}

// Version returns the A2UI version of the builder's catalog.
func (b *Builder) Version() string { return b.version }

// Shown applies a message the client already received (a model message of the
// conversation), so that what the model writes next is checked against the surfaces as
// the client has them.
func (b *Builder) Shown(raw json.RawMessage) error {
	m, err := DecodeMessage(b.version, raw)
	if err != nil {
		return err
	}
	s := b.surface(m.SurfaceID)
	switch m.Op {
	case CreateSurface:
		s.created = true
	case DeleteSurface:
		delete(b.surfaces, m.SurfaceID)
	case BeginRendering:
		s.created, s.begun = true, true
		s.root, _ = m.Body["root"].(string)
	case SurfaceUpdate, UpdateComponents, DataModelUpdate, UpdateDataModel:
		if b.version == V08 {
			s.created = true
		}
		for _, e := range asList(m.Body["components"]) {
			obj, _ := e.(map[string]any)
			var r catalog.Report
			if c := b.checkComponent(obj, "", &r); c != nil {
				s.have[c.id] = c
				s.sent[c.id] = c.enc
				s.bind(c)
			}
		}
		if b.policy != nil && (m.Op == DataModelUpdate || m.Op == UpdateDataModel) {
			b.checkData(s, m, "", nil)
		}
	}
	return nil
}

// shownOpaque notes a surface the client has whose contents are not known.
func (b *Builder) shownOpaque(id string) {
	s := b.surface(id)
	s.created, s.begun, s.opaque = true, true, true
}

func (b *Builder) surface(id string) *surface {
	s := b.surfaces[id]
	if s == nil {
		s = &surface{id: id, have: map[string]*comp{}, sent: map[string][]byte{}}
		if b.version == V09 {
			s.root = "root"
		}
		b.surfaces[id] = s
	}
	return s
}

func (b *Builder) touch(s *surface) {
	if !s.touched {
		s.touched = true
		b.order = append(b.order, s)
	}
}

// componentsOp is the operation whose components the version's builder takes.
func (b *Builder) componentsOp() string {
	if b.version == V08 {
		return SurfaceUpdate
	}
	return UpdateComponents
}

// Add takes the next segment of the model response (text segments are ignored). After a
// limit is reached ([Builder.Exceeded]) it takes nothing.
func (b *Builder) Add(seg Segment) {
	if b.exceeded != nil {
		return
	}
	at := "/" + strconv.Itoa(seg.Msg)
	switch seg.Kind {
	case SegmentInvalid:
		code := CodeInvalidJSON
		if strings.HasPrefix(seg.Err, "not an A2UI message") {
			code = CodeInvalidMessage
		}
		b.r.AddCode(code, at, "%s: %s", seg.Err, clip(seg.Text))
	case SegmentComponent:
		if seg.Op != "" && seg.Op != b.componentsOp() {
			return // a message of the other version: the message says so when it ends
		}
		b.streamed[seg.Msg] = true
		if seg.SurfaceID == "" {
			b.early[seg.Msg] = append(b.early[seg.Msg], seg)
			return
		}
		b.component(seg.Msg, seg.SurfaceID, seg.Raw, fmt.Sprintf("%s/%s/components/%d", at, b.componentsOp(), seg.Index))
	case SegmentMessage:
		b.message(seg.Msg, seg.Raw, at)
	}
}

// wait is how long after a flush the components written since are due by time.
func (b *Builder) wait() time.Duration { return FlushInterval * time.Duration(1+b.shown/100) }

// NextFlush returns how long after now the components written since the last flush are
// due to go out by time ([Builder.FlushDue]); ok is false when none waits. A model that
// pauses mid-surface leaves components waiting: its caller flushes them then.
func (b *Builder) NextFlush(now time.Time) (d time.Duration, ok bool) {
	if b.pending == 0 {
		return 0, false
	}
	return max(0, b.wait()-now.Sub(b.flushed)), true
}

// exceed notes the limit a response reached: every list then goes out as far as it can
// be shown, as at the end of a response.
func (b *Builder) exceed(e *LimitError) {
	b.exceeded = e
	for _, s := range b.order {
		s.dirty = true
	}
}

// Flush returns the messages to send now.
func (b *Builder) Flush() [][]byte {
	b.queue()
	b.pending, b.flushed = 0, b.now
	out := b.out
	b.out = nil
	b.sent += len(out)
	return out
}

// FlushInterval is the longest a component written waits for [Builder.FlushDue] while
// the client has at most a hundred components; the wait grows with what it has.
const FlushInterval = 100 * time.Millisecond

// FlushDue is [Builder.Flush] when a flush is due at now, else what is ready to send
// without looking at the surfaces again: a flush walks every surface written to, so
// a model's components are gathered until they are a quarter of what the client has, or
// for at most FlushInterval for each hundred components the client has, rather than
// flushed after every piece of text. The first components of a turn go out at once. A
// slow model writing a long list so costs a walk of it every few seconds, not every
// 100 ms: a list waits for half again its length to be sent again anyway.
func (b *Builder) FlushDue(now time.Time) [][]byte {
	b.now = now
	if b.pending == 0 || b.shown == 0 || 4*b.pending >= b.shown || now.Sub(b.flushed) >= b.wait() {
		return b.Flush()
	}
	out := b.out
	b.out = nil
	b.sent += len(out)
	return out
}

// Sent returns the number of messages the builder has sent.
func (b *Builder) Sent() int { return b.sent }

func clip(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 200 {
		cut := 200
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		return s[:cut] + "…"
	}
	return s
}

// checkComponent checks one component as written; it returns nil, with the violations in
// r, when it is invalid.
//
// The check against the component's schema recurses deep into the stack: it runs from
// this small frame, and what comes before and after it from frames of their own, so that
// the stack of a turn's goroutine stays smaller.
func (b *Builder) checkComponent(obj map[string]any, at string, r *catalog.Report) *comp {
	n := len(r.Violations)
	c, propsAt := b.componentOf(obj, at, r)
	if c == nil {
		return nil
	}
	vc := b.checkValues(c, propsAt)
	var sr catalog.Report
	c.def.Check(c.props, propsAt, &sr)
	b.mergeChecks(r, n, propsAt, vc, &sr)
	c.relative = vc.relative
	if len(r.Violations) > n {
		return nil
	}
	c.bindings = vc.bindings
	c.enc = encodeBody(obj)
	return c
}

// componentOf reads a component's id and type, and finds its type in the catalog; nil
// if it has no known type.
//
//go:noinline
func (b *Builder) componentOf(obj map[string]any, at string, r *catalog.Report) (*comp, string) {
	if obj == nil {
		r.AddCode(CodeSchema, at, "a component must be a JSON object")
		return nil, ""
	}
	id, ok := obj["id"].(string)
	switch {
	case obj["id"] == nil:
		r.AddCode(CodeSchema, at+"/id", "required: every component has a unique id")
	case !ok:
		r.AddCode(CodeSchema, at+"/id", "must be a string, got %s", catalog.JSONType(obj["id"]))
	case id == "":
		r.AddCode(CodeSchema, at+"/id", "must not be empty")
	}
	c := &comp{id: id, obj: obj, at: at}
	propsAt := at
	if b.version == V09 {
		typ, ok := obj["component"].(string)
		if !ok {
			r.AddCode(CodeSchema, at+"/component", "required: the name of a component type of the catalog (%s)", strings.Join(b.cat.ComponentNames(), ", "))
			return nil, ""
		}
		c.typ, c.props = typ, obj
	} else {
		for _, k := range sortedKeys(obj) {
			if k != "id" && k != "weight" && k != "component" {
				r.AddCode(CodeSchema, at+"/"+escape(k), "unknown key of a component entry; it has id, weight and component: {\"<Type>\": {properties}}")
			}
		}
		w, _ := obj["component"].(map[string]any)
		if len(w) != 1 {
			r.AddCode(CodeSchema, at+"/component", "must be an object with exactly one key, the component type (%s), whose value holds its properties", strings.Join(b.cat.ComponentNames(), ", "))
			return nil, ""
		}
		for typ, p := range w {
			c.typ = typ
			c.props, _ = p.(map[string]any)
		}
		propsAt = at + "/component/" + escape(c.typ)
		if c.props == nil {
			if _, known := b.cat.Component(c.typ); known {
				r.AddCode(CodeSchema, propsAt, "must be an object holding the %s's properties", c.typ)
				return nil, ""
			}
		}
		if wt, ok := obj["weight"]; ok {
			if _, isNum := wt.(float64); !isNum {
				r.AddCode(CodeSchema, at+"/weight", "must be a number")
			}
		}
	}
	def, known := b.cat.Component(c.typ)
	if !known {
		field := at + "/component"
		if b.version == V08 {
			field = propsAt
		}
		r.AddCode(CodeUnknownComponent, field, "unknown component type %q; the catalog has %s", c.typ, strings.Join(b.cat.ComponentNames(), ", "))
		return nil, ""
	}
	c.def = def
	return c, propsAt
}

// checkValues checks the values of a component's properties: paths, function calls.
// They say more precisely what is wrong than the schema, whose violations at or above
// theirs are left out (mergeChecks).
//
//go:noinline
func (b *Builder) checkValues(c *comp, propsAt string) *valueCheck {
	vc := &valueCheck{version: b.version, cat: b.cat, r: &catalog.Report{}, policy: b.policy, rules: b.rules}
	for _, k := range sortedKeys(c.props) {
		if b.version == V09 && (k == "id" || k == "component") {
			continue
		}
		vc.walk(c.props[k], propsAt+"/"+escape(k), 1, 0)
	}
	if b.policy != nil {
		b.checkPolicy(c, propsAt, vc)
	}
	return vc
}

// mergeChecks adds to r, which had n violations before the component's, what the
// checks of its values (vc) and of its schema (sr) found.
//
//go:noinline
func (b *Builder) mergeChecks(r *catalog.Report, n int, propsAt string, vc *valueCheck, sr *catalog.Report) {
	vr := vc.r
	// A call's own check says at least as much as the component's schema at its
	// pointers.
	calls := map[string]bool{}
	for _, x := range vc.calls.Violations {
		calls[x.Pointer] = true
	}
	idTold := len(r.Violations) > n
	for _, x := range sr.Violations {
		if idTold && x.Pointer == propsAt && b.version == V09 {
			// The id's problem is told at /id.
			if x.Message = withoutProperty(x.Message, "id"); x.Message == "" {
				continue
			}
		}
		if !calls[x.Pointer] && !coveredBy(x.Pointer, vr.Violations) && !atPointer(x.Pointer, vc.pol.Violations) {
			r.Violations = append(r.Violations, x)
		}
	}
	seen := map[string]bool{}
	for _, x := range vc.calls.Violations {
		if key := x.Pointer + "\x00" + x.Message; !seen[key] && !coveredBy(x.Pointer, vr.Violations) {
			seen[key] = true
			r.Violations = append(r.Violations, x)
		}
	}
	r.Violations = append(r.Violations, vr.Violations...)
	// What the policy refuses, which the schema's message at the same pointer (a pattern,
	// say) would repeat.
	r.Violations = append(r.Violations, vc.pol.Violations...)
}

// atPointer reports whether one of vs is at ptr.
func atPointer(ptr string, vs []catalog.Violation) bool {
	for _, v := range vs {
		if v.Pointer == ptr {
			return true
		}
	}
	return false
}

// coveredBy reports whether a violation at ptr is said better by one at or under it.
func coveredBy(ptr string, vs []catalog.Violation) bool {
	for _, v := range vs {
		if v.Pointer == ptr || strings.HasPrefix(v.Pointer, ptr+"/") {
			return true
		}
	}
	return false
}

// withoutProperty removes a property from a schema's "missing properties" message, and
// returns "" when it named only that one.
func withoutProperty(msg, prop string) string {
	rest, ok := strings.CutPrefix(msg, "missing propert")
	if !ok {
		return msg
	}
	_, list, _ := strings.Cut(rest, " ")
	var keep []string
	for _, p := range strings.Split(list, ", ") {
		if p != "'"+prop+"'" {
			keep = append(keep, p)
		}
	}
	switch len(keep) {
	case 0:
		return ""
	case 1:
		return "missing property " + keep[0]
	}
	return "missing properties " + strings.Join(keep, ", ")
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// component takes one component the model wrote for surface sid.
func (b *Builder) component(msg int, sid string, raw []byte, at string) {
	var obj map[string]any
	if err := json.Unmarshal(raw, &obj); err != nil {
		b.r.AddCode(CodeInvalidJSON, at, "not valid JSON (%v): a component is a JSON object", err)
		b.badJSON[msg] = true
		return
	}
	b.decoded(msg, sid, obj, at)
}

// decoded takes one component, decoded, that the model wrote for surface sid.
func (b *Builder) decoded(msg int, sid string, obj map[string]any, at string) {
	if obj == nil {
		b.r.AddCode(CodeSchema, at, "a component must be a JSON object")
		return
	}
	s := b.surface(sid)
	b.touch(s)
	if s.wrote == "" {
		s.wrote = at
	}
	s.wroteComps = true
	c := b.checkComponent(obj, at, &b.r)
	if c == nil {
		if id, ok := obj["id"].(string); ok && id != "" {
			if s.rejected == nil {
				s.rejected = map[string][]string{}
			}
			s.rejected[id] = looseRefs(b.version, obj)
		}
		return
	}
	c.msg = msg
	ids := b.ids[msg]
	if ids == nil {
		ids = map[string]bool{}
		b.ids[msg] = ids
	}
	if ids[c.id] {
		b.r.AddCode(CodeDuplicateID, at+"/id", "duplicate id %q: another component of this message has it; give each component its own id", c.id)
		return
	}
	if _, known := s.have[c.id]; !known && b.maxComps > 0 && len(s.have)+len(s.held) >= b.maxComps {
		b.exceed(&LimitError{Limit: LimitComponents, Value: b.maxComps, SurfaceID: s.id})
		return
	}
	ids[c.id] = true
	if b.policy != nil && !b.bindingsOK(s, c) {
		if s.rejected == nil {
			s.rejected = map[string][]string{}
		}
		s.rejected[c.id] = looseRefs(b.version, obj)
		return
	}
	s.bind(c)
	delete(s.rejected, c.id)
	if b.version == V08 && !s.created {
		s.created, s.fresh = true, true
	}
	if !s.created {
		s.held = append(s.held, c)
		return
	}
	b.put(s, c)
}

func (b *Builder) put(s *surface, c *comp) {
	prev, ok := s.have[c.id]
	if !ok || prev.at == "" {
		s.turn = append(s.turn, c.id)
	}
	if s.referred == nil {
		s.referred = map[string]bool{}
	}
	for _, v := range []*comp{prev, c} {
		if v != nil {
			for _, id := range looseRefs(b.version, v.obj) {
				s.referred[id] = true
			}
		}
	}
	s.have[c.id] = c
	s.dirty = true
	b.pending++
}

// message takes one complete message the model wrote.
func (b *Builder) message(n int, raw []byte, at string) {
	early := b.early[n]
	delete(b.early, n)
	m, p := decodeMessage(b.version, raw)
	if p != nil {
		if !(p.json && b.badJSON[n]) { // a component of it said so already
			code := CodeInvalidMessage
			if p.json {
				code = CodeInvalidJSON
			}
			b.r.AddCode(code, at+p.ptr, "%s", p.msg)
		}
		return
	}
	opAt := at + "/" + m.Op
	if b.strict && b.version == V09 && !m.versioned {
		b.r.AddCode(CodeInvalidMessage, at+"/version", "required: a v0.9 message carries \"version\": \"v0.9\"")
	}
	allowed := map[string][]string{
		CreateSurface:    {"surfaceId", "catalogId", "theme", "sendDataModel"},
		UpdateComponents: {"surfaceId", "components"},
		UpdateDataModel:  {"surfaceId", "path", "value"},
		DeleteSurface:    {"surfaceId"},
		SurfaceUpdate:    {"surfaceId", "components"},
		DataModelUpdate:  {"surfaceId", "path", "contents"},
		BeginRendering:   {"surfaceId", "root", "catalogId", "styles"},
	}[m.Op]
	bad := false
	for _, k := range sortedKeys(m.Body) {
		if !contains(allowed, k) {
			bad = true
			hint := ""
			if k == "contents" && m.Op == UpdateDataModel {
				hint = ` (contents is v0.8's; in v0.9 write the data as it is: "value": {…})`
			}
			b.r.AddCode(CodeInvalidMessage, opAt+"/"+escape(k), "unknown property of %s; it has %s%s", m.Op, strings.Join(allowed, ", "), hint)
		}
	}
	if bad {
		if m.Op == CreateSurface || m.Op == BeginRendering {
			b.surface(m.SurfaceID).notCreated = true
		}
		return
	}
	s := b.surface(m.SurfaceID)
	switch m.Op {
	case UpdateComponents, SurfaceUpdate:
		comps, ok := m.Body["components"].([]any)
		if !ok || len(comps) == 0 {
			b.r.AddCode(CodeInvalidMessage, opAt+"/components", "required: a non-empty list of components")
			return
		}
		for _, seg := range early {
			b.component(n, m.SurfaceID, seg.Raw, fmt.Sprintf("%s/components/%d", opAt, seg.Index))
		}
		if !b.streamed[n] {
			for i, e := range comps {
				obj, _ := e.(map[string]any)
				b.decoded(n, m.SurfaceID, obj, fmt.Sprintf("%s/components/%d", opAt, i))
			}
		}
	case CreateSurface:
		b.create(s, m, opAt)
	case BeginRendering:
		b.beginRendering(s, m, opAt)
	case UpdateDataModel, DataModelUpdate:
		b.dataModel(s, m, opAt)
	case DeleteSurface:
		if !s.created {
			b.r.AddCode(CodeUnknownSurface, opAt+"/surfaceId", "no surface %q exists: delete only a surface the client has", m.SurfaceID)
			if !s.touched {
				delete(b.surfaces, m.SurfaceID)
			}
			return
		}
		b.queue()
		b.out = append(b.out, encodeMessage(b.version, DeleteSurface, encodeBody(m.Body)))
		delete(b.surfaces, m.SurfaceID)
		for i, o := range b.order {
			if o == s {
				b.order = append(b.order[:i], b.order[i+1:]...)
				break
			}
		}
	}
}

// queue queues the components waiting to be sent, so that what follows goes out after
// them.
func (b *Builder) queue() {
	for _, s := range b.order {
		if s.dirty {
			b.flush(s)
		}
	}
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// catalogID checks a catalogId the model wrote: it must name the catalog the client
// advertised (which is what is sent).
func (b *Builder) catalogID(body map[string]any, at string) bool {
	v, ok := body["catalogId"]
	if !ok {
		return true
	}
	id, isStr := v.(string)
	if !isStr || !SameCatalog(b.version, id, b.cat.ID) {
		if b.strict {
			b.r.AddCode(CodeCatalogMismatch, at+"/catalogId", "%s is not the catalog the messages are checked against (%q)", jsonString(v), b.cat.ID)
		} else {
			b.r.AddCode(CodeCatalogMismatch, at+"/catalogId", "%s is not the catalog the client advertised for this conversation; use %q", jsonString(v), b.cat.ID)
		}
		return false
	}
	return true
}

func jsonString(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func (b *Builder) create(s *surface, m *Message, at string) {
	if s.created {
		b.r.AddCode(CodeSurfaceExists, at+"/surfaceId", "surface %q already exists: change it with updateComponents and updateDataModel, or send deleteSurface first", s.id)
		return
	}
	n := len(b.r.Violations)
	b.touch(s)
	if _, ok := m.Body["catalogId"]; !ok && b.strict {
		b.r.AddCode(CodeInvalidMessage, at+"/catalogId", "required: the id of the catalog the surface's components come from")
	}
	b.catalogID(m.Body, at)
	if t, ok := m.Body["theme"]; ok {
		b.cat.CheckTheme(t, at+"/theme", &b.r)
		b.themePolicy(t, at+"/theme")
	}
	if v, ok := m.Body["sendDataModel"]; ok {
		if _, isBool := v.(bool); !isBool {
			b.r.AddCode(CodeInvalidMessage, at+"/sendDataModel", "must be a boolean")
		}
	}
	// A model repairs a createSurface that broke a rule; messages checked as they
	// travel ([Validate]) go on as if the surface were created, so that what follows is
	// judged on its own rather than as the surface's echo.
	if len(b.r.Violations) > n && !b.strict {
		s.notCreated = true
		return
	}
	body := cloneMap(m.Body)
	body["catalogId"] = b.cat.ID
	b.queue()
	b.out = append(b.out, encodeMessage(b.version, CreateSurface, encodeBody(body)))
	s.created, s.notCreated, s.fresh = true, false, true
	for _, h := range s.heldData {
		b.out = append(b.out, h.msg)
	}
	s.heldData = nil
	for _, c := range s.held {
		b.put(s, c)
	}
	s.held = nil
}

func (b *Builder) beginRendering(s *surface, m *Message, at string) {
	n := len(b.r.Violations)
	b.touch(s)
	root, ok := m.Body["root"].(string)
	switch {
	case !ok || root == "":
		b.r.AddCode(CodeInvalidMessage, at+"/root", "required: the id of the component the surface renders from")
	case s.begun || s.beginAt != "":
		b.r.AddCode(CodeSurfaceExists, at+"/surfaceId", "surface %q already renders (from %q): change it with surfaceUpdate and dataModelUpdate, or send deleteSurface first", s.id, s.root)
		return
	}
	b.catalogID(m.Body, at)
	if st, ok := m.Body["styles"]; ok {
		b.cat.CheckTheme(st, at+"/styles", &b.r)
		b.themePolicy(st, at+"/styles")
	}
	if len(b.r.Violations) > n && (!b.strict || root == "") {
		s.notCreated = true
		return
	}
	body := cloneMap(m.Body)
	body["catalogId"] = b.cat.ID
	if !s.created {
		s.fresh = true
	}
	s.created, s.notCreated = true, false
	s.root, s.begin, s.beginAt = root, body, at
	s.dirty = true
}

func (b *Builder) dataModel(s *surface, m *Message, at string) {
	n := len(b.r.Violations)
	b.touch(s)
	if s.wrote == "" {
		s.wrote = at + "/surfaceId"
	}
	if v, ok := m.Body["value"]; ok && deeperThan(v, maxDepth) {
		b.r.AddCode(CodeTooDeep, at+"/value", "nests deeper than %d levels", maxDepth)
	}
	if p, ok := m.Body["path"]; ok {
		ps, isStr := p.(string)
		switch {
		case !isStr:
			b.r.AddCode(CodeInvalidPath, at+"/path", "must be a string, a JSON Pointer such as \"/user/name\"")
		case pointerProblem(ps) != "":
			b.r.AddCode(CodeInvalidPath, at+"/path", "%s", pointerProblem(ps))
		case b.version == V09 && !strings.HasPrefix(ps, "/"):
			b.r.AddCode(CodeInvalidPath, at+"/path", "%q is relative: the path of updateDataModel starts at the root, e.g. \"/%s\"", ps, ps)
		}
	}
	if b.version == V08 {
		contents, ok := m.Body["contents"].([]any)
		if !ok {
			b.r.AddCode(CodeInvalidMessage, at+"/contents", "required: a list of {\"key\": …, \"valueString\"|\"valueNumber\"|\"valueBoolean\"|\"valueMap\": …}")
		} else {
			checkContents08(contents, at+"/contents", &b.r, 0)
		}
	}
	if len(b.r.Violations) > n {
		return
	}
	if b.maxData > 0 {
		for _, k := range []string{"value", "contents"} {
			if v, ok := m.Body[k]; ok {
				s.dataBytes += len(jsonString(v))
			}
		}
		if s.dataBytes > b.maxData {
			b.exceed(&LimitError{Limit: LimitDataModel, Value: b.maxData, SurfaceID: s.id})
			return
		}
	}
	if b.policy != nil && !b.checkData(s, m, at, &b.r) {
		return
	}
	msg := encodeMessage(b.version, m.Op, encodeBody(m.Body))
	if !s.created && b.version == V09 {
		s.heldData = append(s.heldData, held{msg: msg, at: at + "/surfaceId"})
		return
	}
	if !s.created {
		s.created, s.fresh = true, true
	}
	b.queue()
	b.out = append(b.out, msg)
}

// checkContents08 checks the entries of a v0.8 dataModelUpdate: each {key, and one of
// valueString, valueNumber, valueBoolean, valueMap}, the entries of a valueMap without
// valueMap.
func checkContents08(entries []any, at string, r *catalog.Report, depth int) {
	for i, e := range entries {
		eat := at + "/" + strconv.Itoa(i)
		em, ok := e.(map[string]any)
		if !ok {
			r.AddCode(CodeSchema, eat, "must be an object {\"key\": …, \"value…\": …}")
			continue
		}
		if _, ok := em["key"].(string); !ok {
			r.AddCode(CodeSchema, eat+"/key", "required: a string")
		}
		values := 0
		for _, k := range sortedKeys(em) {
			v := em[k]
			switch k {
			case "key":
			case "valueString":
				values++
				if _, ok := v.(string); !ok {
					r.AddCode(CodeSchema, eat+"/"+k, "must be a string")
				}
			case "valueNumber":
				values++
				if _, ok := v.(float64); !ok {
					r.AddCode(CodeSchema, eat+"/"+k, "must be a number")
				}
			case "valueBoolean":
				values++
				if _, ok := v.(bool); !ok {
					r.AddCode(CodeSchema, eat+"/"+k, "must be a boolean")
				}
			case "valueMap":
				values++
				switch l, ok := v.([]any); {
				case depth > 0:
					r.AddCode(CodeSchema, eat+"/"+k, "the entries of a valueMap hold valueString, valueNumber or valueBoolean, not another valueMap: set deeper data with its own dataModelUpdate, whose path points into the map")
				case ok:
					checkContents08(l, eat+"/valueMap", r, depth+1)
				default:
					r.AddCode(CodeSchema, eat+"/"+k, "must be a list of entries")
				}
			default:
				r.AddCode(CodeSchema, eat+"/"+escape(k), "unknown key; an entry has key and one of valueString, valueNumber, valueBoolean, valueMap")
			}
		}
		if values > 1 {
			r.AddCode(CodeSchema, eat, "must have exactly one of valueString, valueNumber, valueBoolean, valueMap")
		}
	}
}

// deeperThan reports whether a decoded JSON value nests objects and arrays more than
// limit levels deep.
func deeperThan(v any, limit int) bool {
	if limit < 0 {
		return true
	}
	switch t := v.(type) {
	case map[string]any:
		for _, e := range t {
			if deeperThan(e, limit-1) {
				return true
			}
		}
	case []any:
		for _, e := range t {
			if deeperThan(e, limit-1) {
				return true
			}
		}
	}
	return false
}

func cloneMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// flush queues the components of s that can be shown and that the client does not have
// as they are: the components the root reaches through references that resolve, their
// child lists cut to the children that can be shown.
func (b *Builder) flush(s *surface) {
	s.dirty = false
	if !s.created || s.root == "" || s.have[s.root] == nil {
		return
	}
	w := b.walker(s)
	if !w.visit(s.root, false, 0) {
		return
	}
	w.collect(s.root, 0)
	send := w.send
	for _, id := range w.order {
		if !bytes.Equal(s.sent[id], w.encode(id)) {
			send[id] = true
		}
	}
	if b.version == V08 {
		// A v0.8 renderer checks the references of a surfaceUpdate against the components
		// of that message alone ("a list containing all UI components for the surface"):
		// a message carries every component its components reach.
		var reach func(id string)
		reach = func(id string) {
			for _, t := range w.refs(id) {
				if !send[t] {
					send[t] = true
					reach(t)
				}
			}
		}
		for _, id := range w.order {
			if send[id] {
				reach(id)
			}
		}
	}
	var changed [][]byte
	for _, id := range w.order {
		if send[id] {
			enc := w.encode(id)
			changed = append(changed, enc)
			if s.sent[id] == nil {
				b.shown++
			}
			s.sent[id] = enc
			s.have[id].shownCut = w.cut[w.shownKey(id)]
		}
	}
	if len(changed) > 0 {
		b.out = append(b.out, encodeMessage(b.version, b.componentsOp(), componentsBody(s.id, changed)))
	}
	if s.begin != nil && s.sent[s.root] != nil {
		b.out = append(b.out, encodeMessage(b.version, BeginRendering, encodeBody(s.begin)))
		s.begin, s.begun = nil, true
	}
}

type walkKey struct {
	id    string
	inTpl bool
}

// walker finds what of a surface can be shown, from its root: first which components can
// be shown, each with its child lists cut to the children that can (visit), then the
// components the root reaches through them, children first (collect).
type walker struct {
	b     *Builder
	s     *surface
	state map[walkKey]uint8          // 1 visiting, 2 can be shown, 3 cannot
	props map[walkKey]map[string]any // the properties of each component that can be shown, as shown
	cut   map[walkKey]*cutComp       // its child lists were cut
	done  map[string]bool            // being collected
	out   map[string]bool            // ids in order
	order []string
	send  map[string]bool // the ids to send
	key   []byte          // scratch for a cut's key
}

// walker returns the builder's walker, emptied, for a flush of s: a response flushes
// after each component, so the walk's maps are kept rather than made each time.
func (b *Builder) walker(s *surface) *walker {
	w := b.w
	if w == nil {
		w = &walker{b: b, state: map[walkKey]uint8{}, props: map[walkKey]map[string]any{}, cut: map[walkKey]*cutComp{},
			done: map[string]bool{}, out: map[string]bool{}, send: map[string]bool{}}
		b.w = w
	} else {
		clear(w.state)
		clear(w.props)
		clear(w.cut)
		clear(w.done)
		clear(w.out)
		clear(w.send)
		w.order = w.order[:0]
	}
	w.s = s
	return w
}

func (w *walker) visit(id string, inTpl bool, depth int) bool {
	c := w.s.have[id]
	if c == nil || depth > maxDepth {
		return false
	}
	k := walkKey{id, inTpl}
	switch w.state[k] {
	case 1, 3:
		return false
	case 2:
		return true
	}
	if c.relative && !inTpl {
		w.state[k] = 3
		return false
	}
	w.state[k] = 1
	var cuts []cutList // the child lists cut, if any was
	ok := true
	for _, ref := range c.def.Refs {
		v, present := c.props[ref.Prop]
		if !present {
			continue
		}
		switch ref.Kind {
		case catalog.RefOne:
			if t, _ := v.(string); !w.visit(t, inTpl, depth+1) {
				ok = false
			}
		case catalog.RefItems:
			for _, it := range asList(v) {
				if t, _ := asMap(it)[ref.Field].(string); !w.visit(t, inTpl, depth+1) {
					ok = false
				}
			}
		case catalog.RefList:
			list, tpl, isTpl := childList(w.b.version, v)
			if isTpl {
				if !w.visit(tpl, true, depth+1) {
					ok = false
				}
				continue
			}
			keep := make([]any, 0, len(list))
			for _, e := range list {
				if t, _ := e.(string); w.visit(t, inTpl, depth+1) {
					keep = append(keep, e)
				}
			}
			if len(keep) < len(list) {
				cuts = append(cuts, cutList{ref.Prop, v, keep})
			}
		}
		if !ok {
			break
		}
	}
	var cut *cutComp
	if ok && cuts != nil {
		if cut = w.hold(c, cuts); cut == nil {
			cut = w.cutOf(c, cuts)
		}
		ok = cut.ok
	}
	if ok && w.b.rules != nil && w.b.mute(c, c.props, func(child string) bool { return w.textShown(child, inTpl, 0) }) {
		ok = false // a button shows once its text can
	}
	if !ok {
		w.state[k] = 3
		return false
	}
	w.state[k] = 2
	if cut != nil {
		w.props[k], w.cut[k] = cut.props, cut
	} else {
		w.props[k] = c.props
	}
	return true
}

// cutList is a child list of a component cut to the children kept.
type cutList struct {
	prop string
	v    any   // the list as written
	keep []any // the ids kept
}

// cutOf returns c with the child lists cut: the last cut of c if it kept the same ids,
// else a new one, checked against the catalog, which may not allow the lists cut
// (minItems): then the component waits.
func (w *walker) cutOf(c *comp, cuts []cutList) *cutComp {
	key := w.key[:0]
	for _, l := range cuts {
		key = append(key, l.prop...)
		for _, e := range l.keep {
			id, _ := e.(string)
			key = append(key, 0)
			key = append(key, id...)
		}
		key = append(key, 1)
	}
	w.key = key
	if c.cut != nil && c.cut.key == string(key) {
		return c.cut
	}
	props := cloneMap(c.props)
	var kept []string
	for _, l := range cuts {
		props[l.prop] = withList(w.b.version, l.v, l.keep)
		for _, e := range l.keep {
			id, _ := e.(string)
			kept = append(kept, id)
		}
	}
	var r catalog.Report
	c.def.Check(props, "", &r)
	c.cut = &cutComp{key: string(key), props: props, ok: r.OK(), kept: kept}
	return c.cut
}

// hold returns the cut of c the client has when its child lists have grown since, but
// by less than half: a growing list is sent again geometrically (1, 2, 3, 5, 8, 12, 18…
// children), so that the bytes a client receives for it stay within three times its
// final size, rather than growing with the square of its length. The new children wait
// with it. Nothing is held at the end of a response, nor when a child the client has
// can no longer be shown.
func (w *walker) hold(c *comp, cuts []cutList) *cutComp {
	p := c.shownCut
	if p == nil || w.b.ending || w.b.exceeded != nil {
		return nil
	}
	n := 0
	for _, l := range cuts {
		n += len(l.keep)
	}
	if n <= len(p.kept) || n >= len(p.kept)+max(1, len(p.kept)/2) {
		return nil
	}
	for _, id := range p.kept {
		if w.state[walkKey{id, false}] != 2 && w.state[walkKey{id, true}] != 2 {
			return nil
		}
	}
	return p
}

// collect lists, children first, the components a component that can be shown reaches
// through the references it is shown with.
func (w *walker) collect(id string, depth int) {
	if w.out[id] || w.done[id] || depth > maxDepth+1 {
		return
	}
	w.done[id] = true
	for _, t := range w.refs(id) {
		w.collect(t, depth+1)
	}
	w.out[id] = true
	w.order = append(w.order, id)
}

// refs lists the components a component that can be shown refers to, as it is shown.
func (w *walker) refs(id string) []string {
	c, props := w.s.have[id], w.shown(id)
	var out []string
	for _, ref := range c.def.Refs {
		v, present := props[ref.Prop]
		if !present {
			continue
		}
		switch ref.Kind {
		case catalog.RefOne:
			t, _ := v.(string)
			out = append(out, t)
		case catalog.RefItems:
			for _, it := range asList(v) {
				t, _ := asMap(it)[ref.Field].(string)
				out = append(out, t)
			}
		case catalog.RefList:
			list, tpl, isTpl := childList(w.b.version, v)
			if isTpl {
				out = append(out, tpl)
				continue
			}
			for _, e := range list {
				t, _ := e.(string)
				out = append(out, t)
			}
		}
	}
	return out
}

// shownKey is the version of a component the client gets: as it can be shown outside
// templates if it can be, else as inside them (which shows at least the same children).
// Its references can all be shown.
func (w *walker) shownKey(id string) walkKey {
	if w.state[walkKey{id, false}] == 2 {
		return walkKey{id, false}
	}
	return walkKey{id, true}
}

func (w *walker) shown(id string) map[string]any { return w.props[w.shownKey(id)] }

// encode returns a component as the client gets it.
func (w *walker) encode(id string) []byte {
	c := w.s.have[id]
	cut := w.cut[w.shownKey(id)]
	if cut == nil {
		return c.enc
	}
	if cut.enc == nil {
		cut.enc = encodeBody(c.withProps(w.b.version, cut.props))
	}
	return cut.enc
}

// childList reads a child list: its ids, or its template's component id. A plain array of
// ids is a child list in both versions (v0.8 custom catalogs declare them).
func childList(version string, v any) (ids []any, tpl string, isTpl bool) {
	if l, ok := v.([]any); ok {
		return l, "", false
	}
	m := asMap(v)
	if version == V09 {
		t, _ := m["componentId"].(string)
		return nil, t, m != nil
	}
	if l, ok := m["explicitList"].([]any); ok {
		return l, "", false
	}
	if t := asMap(m["template"]); t != nil {
		id, _ := t["componentId"].(string)
		return nil, id, true
	}
	return nil, "", false
}

// withList returns the child list v holding the ids keep instead.
func withList(version string, v any, keep []any) any {
	if _, ok := v.([]any); ok || version == V09 {
		return keep
	}
	m := cloneMap(asMap(v))
	m["explicitList"] = keep
	return m
}

// withProps returns the component with other properties.
func (c *comp) withProps(version string, props map[string]any) map[string]any {
	if version == V09 {
		return props
	}
	out := cloneMap(c.obj)
	out["component"] = map[string]any{c.typ: props}
	return out
}

// looseRefs lists the ids a component as written refers to, read from the usual names
// of its properties (child, children, trigger, content, *Child, tabs and tabItems), even
// when it does not match its schema.
func looseRefs(version string, obj map[string]any) []string {
	props := obj
	if version == V08 {
		for _, p := range asMap(obj["component"]) {
			props = asMap(p)
		}
	}
	var out []string
	add := func(v any) {
		if s, ok := v.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	for _, k := range sortedKeys(props) {
		v := props[k]
		switch {
		case k == "children":
			if l, ok := v.([]any); ok {
				for _, e := range l {
					add(e)
				}
			}
			m := asMap(v)
			add(m["componentId"])
			add(asMap(m["template"])["componentId"])
			for _, e := range asList(m["explicitList"]) {
				add(e)
			}
		case k == "child" || k == "trigger" || k == "content" || strings.HasSuffix(k, "Child"):
			add(v)
		case k == "tabs" || k == "tabItems":
			for _, it := range asList(v) {
				add(asMap(it)["child"])
			}
		}
	}
	return out
}

// End ends a model response: it checks the surfaces the response changed as wholes,
// and returns the messages still to send and every violation of the response (which
// reached no client). The builder then takes the next response of the turn, which
// starts from what the client has.
func (b *Builder) End() ([][]byte, []catalog.Violation) {
	msgs := make([]int, 0, len(b.early))
	for n := range b.early {
		msgs = append(msgs, n)
	}
	sort.Ints(msgs)
	for _, n := range msgs {
		for _, seg := range b.early[n] {
			b.r.AddCode(CodeInvalidJSON, fmt.Sprintf("/%d", n), "component %s of a message that never ended", clip(string(seg.Raw)))
		}
	}
	for _, s := range b.order {
		n := len(b.r.Violations)
		b.audit(s)
		if len(b.r.Violations) == n {
			b.settle(s)
		}
	}
	b.ending = true
	for _, s := range b.order {
		s.dirty = true // a list held at the last flush goes out whole
	}
	out := b.Flush()
	b.ending = false
	vs := b.r.Violations
	// What waited for a surface that was never created goes; components that wait for
	// references stay, for a later response to complete.
	for _, s := range b.order {
		s.held, s.heldData, s.turn, s.rejected, s.referred = nil, nil, nil, nil, nil
		s.touched, s.notCreated, s.fresh, s.wroteComps, s.beginAt, s.wrote = false, false, false, false, "", ""
		for _, c := range s.have {
			c.at = ""
		}
	}
	b.order = nil
	b.reset()
	return out, vs
}

// settle sends, at the end of a response, what of a valid surface waited for more: the
// components of a surface the client has that has no root yet, as they are (the renderer
// keeps them until the root comes), and a v0.8 beginRendering of a surface the response
// wrote nothing else to (the renderer shows the surface once its components come).
func (b *Builder) settle(s *surface) {
	if s.begin != nil && len(s.have) == 0 && !s.wroteComps {
		b.queue()
		b.out = append(b.out, encodeMessage(b.version, BeginRendering, encodeBody(s.begin)))
		s.begin, s.begun = nil, true
	}
	if !s.created || s.fresh || s.opaque || (s.root != "" && s.have[s.root] != nil) {
		return
	}
	var changed [][]byte
	for _, id := range s.turn {
		if c := s.have[id]; c != nil && !bytes.Equal(s.sent[id], c.enc) {
			changed = append(changed, c.enc)
			s.sent[id] = c.enc
		}
	}
	if len(changed) > 0 {
		b.out = append(b.out, encodeMessage(b.version, b.componentsOp(), componentsBody(s.id, changed)))
	}
}

// audit checks a surface the response changed as a whole.
func (b *Builder) audit(s *surface) {
	if !s.created {
		at := s.wrote
		if at == "" {
			return
		}
		if s.notCreated {
			b.r.AddCode(CodeUnknownSurface, at, "surface %q was not created, as its createSurface broke a rule: its components and data did not reach the client; write them again after a valid createSurface", s.id)
			return
		}
		b.r.AddCode(CodeUnknownSurface, at, "surface %q does not exist: send {\"createSurface\":{\"surfaceId\":%q,\"catalogId\":%q}} before its components and data", s.id, s.id, b.cat.ID)
		return
	}
	if len(s.turn) == 0 {
		return
	}
	first := s.have[s.turn[0]]
	if (s.root == "" || s.have[s.root] == nil) && !s.fresh {
		// A surface the client has, still without its root: the renderer buffers its
		// components until the root comes (v0.9 a2ui_protocol.md, "Until that component
		// is defined, other component updates will have no visible effect, and they will
		// be buffered until a root component is defined"). Only cycles and depth are
		// known wrong before then.
		a := auditor{b: b, s: s, seen: map[walkKey]bool{}, reached: map[string]bool{}, onPath: map[string]int{}}
		for _, id := range s.turn {
			a.visit(id, true, nil, "")
		}
		return
	}
	if s.root == "" {
		if !s.notCreated {
			b.r.AddCode(CodeMissingRoot, first.at, "surface %q has no beginRendering: send {\"beginRendering\":{\"surfaceId\":%q,\"root\":\"<id of the top component>\"}}", s.id, s.id)
		}
		return
	}
	if s.have[s.root] == nil {
		if _, rejected := s.rejected[s.root]; rejected {
			return // the root broke a rule, which is reported
		}
		if b.version == V08 {
			at := first.at
			if s.beginAt != "" {
				at = s.beginAt + "/root"
			}
			b.r.AddCode(CodeMissingRoot, at, "surface %q renders from %q, and no component has that id: write the component, or name the top component in beginRendering", s.id, s.root)
			return
		}
		b.r.AddCode(CodeMissingRoot, first.at, "surface %q has no component with id %q: the component at the top of the surface must have the id %q", s.id, s.root, s.root)
		return
	}
	a := auditor{b: b, s: s, seen: map[walkKey]bool{}, reached: map[string]bool{}, onPath: map[string]int{}, dangling: !s.opaque}
	a.visit(s.root, false, nil, "")
	// What only rejected components refer to is not reported as unreachable.
	excused := map[string]bool{}
	var excuse func(id string, d int)
	excuse = func(id string, d int) {
		if excused[id] || d > maxDepth {
			return
		}
		excused[id] = true
		if c := s.have[id]; c != nil {
			for _, t := range looseRefs(b.version, c.obj) {
				excuse(t, d+1)
			}
		}
	}
	for _, id := range sortedRejected(s.rejected) {
		for _, t := range s.rejected[id] {
			excuse(t, 0)
		}
	}
	for _, id := range s.turn {
		if c := s.have[id]; c != nil && !a.reached[id] && !excused[id] && !s.referred[id] && c.at != "" && !s.opaque {
			b.r.AddCode(CodeUnreachable, c.at, "component %q is not reachable from %q: refer to it from a component of the surface, or leave it out", id, s.root)
		}
	}
	if b.rules != nil {
		for _, id := range s.turn {
			if c := s.have[id]; c != nil && c.at != "" && b.mute(c, c.props, func(child string) bool { return b.hasText(s, child, 0) }) {
				b.r.AddCode(CodeInaccessible, c.at, "%s", policy.InaccessibleButton)
			}
		}
	}
}

func sortedRejected(m map[string][]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// auditor walks a surface from its root and reports, for components written during the
// response, references that do not resolve, cycles, and relative paths outside
// templates.
type auditor struct {
	b       *Builder
	s       *surface
	seen    map[walkKey]bool // visited, inside templates or outside them
	reached map[string]bool
	onPath  map[string]int
	// dangling: report references to components the surface does not have (not when
	// the surface holds components this builder does not know of).
	dangling bool
}

// visit visits component id, which the last component of path refers to at refAt.
func (a *auditor) visit(id string, inTpl bool, path []string, refAt string) {
	c := a.s.have[id]
	if c == nil {
		return
	}
	if i, ok := a.onPath[id]; ok {
		at := refAt
		if parent := a.s.have[path[len(path)-1]]; parent.at == "" {
			at = c.at // a component shown before: report where the response joins the cycle
			for _, p := range path[i:] {
				if at == "" {
					at = a.s.have[p].at
				}
			}
		}
		from := path[len(path)-1]
		a.b.r.AddCode(CodeCycle, at, "component %q refers to %q, which contains it: the cycle %s → %s; a component must not contain itself: refer to another component here, or remove the reference",
			from, id, strings.Join(path[i:], " → "), id)
		return
	}
	if len(path) > maxDepth {
		a.b.r.AddCode(CodeTooDeep, c.at, "the component tree is deeper than %d levels", maxDepth)
		return
	}
	if c.relative && !inTpl && c.at != "" {
		tpl := `a child list {"componentId","path"}`
		if a.b.version == V08 {
			tpl = `children {"template":{"componentId","dataBinding"}}`
		}
		a.b.r.AddCode(CodeInvalidPath, c.at, "component %q uses a relative data path, which only a component inside a template (%s) may; use a path from the root, e.g. \"/items/0/name\"", id, tpl)
	}
	if a.seen[walkKey{id, inTpl}] {
		return
	}
	a.seen[walkKey{id, inTpl}], a.reached[id] = true, true
	a.onPath[id] = len(path)
	path = append(path, id)
	propsAt := c.at
	if a.b.version == V08 {
		propsAt += "/component/" + escape(c.typ)
	}
	missing := func(at, target string) {
		if c.at == "" || !a.dangling {
			return
		}
		if _, rejected := a.s.rejected[target]; rejected {
			return // the component broke a rule, which is reported
		}
		a.b.r.AddCode(CodeDanglingReference, at, "component %q refers to %q, which no component of surface %q has: write that component, or refer to one that exists", id, target, a.s.id)
	}
	for _, ref := range c.def.Refs {
		v, present := c.props[ref.Prop]
		if !present {
			continue
		}
		at := propsAt + "/" + escape(ref.Prop)
		switch ref.Kind {
		case catalog.RefOne:
			t, _ := v.(string)
			if a.s.have[t] == nil {
				missing(at, t)
			}
			a.visit(t, inTpl, path, at)
		case catalog.RefItems:
			for i, it := range asList(v) {
				t, _ := asMap(it)[ref.Field].(string)
				iat := fmt.Sprintf("%s/%d/%s", at, i, escape(ref.Field))
				if a.s.have[t] == nil {
					missing(iat, t)
				}
				a.visit(t, inTpl, path, iat)
			}
		case catalog.RefList:
			list, tpl, isTpl := childList(a.b.version, v)
			if isTpl {
				tat := at + "/componentId"
				if a.b.version == V08 {
					tat = at + "/template/componentId"
				}
				if a.s.have[tpl] == nil {
					missing(tat, tpl)
				}
				a.visit(tpl, true, path, tat)
				continue
			}
			lat := at
			if _, plain := v.([]any); !plain && a.b.version == V08 {
				lat += "/explicitList"
			}
			for i, e := range list {
				t, _ := e.(string)
				eat := lat + "/" + strconv.Itoa(i)
				if a.s.have[t] == nil {
					missing(eat, t)
				}
				a.visit(t, inTpl, path, eat)
			}
		}
	}
	delete(a.onPath, id)
}

// Summary describes the surfaces as the client shows them, for the model: each surface
// with its component ids.
func (b *Builder) Summary() string {
	ids := make([]string, 0, len(b.surfaces))
	for id := range b.surfaces {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var sb strings.Builder
	for _, id := range ids {
		s := b.surfaces[id]
		if !s.created {
			continue
		}
		fmt.Fprintf(&sb, "- surface %q: %d components", id, len(s.sent))
		if len(s.sent) > 0 {
			cids := make([]string, 0, len(s.sent))
			for cid := range s.sent {
				cids = append(cids, cid)
			}
			sort.Strings(cids)
			fmt.Fprintf(&sb, " (%s)", strings.Join(cids, ", "))
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}
