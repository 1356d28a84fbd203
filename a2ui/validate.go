package a2ui

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/policy"
)

// Codes of violations: the kind of rule a message broke.
const (
	CodeInvalidJSON       = "invalid_json"       // not JSON, or cut off
	CodeInvalidMessage    = "invalid_message"    // not a message of the version: operation, fields, version
	CodeSchema            = "schema"             // a component or value does not match its schema
	CodeUnknownComponent  = "unknown_component"  // a component type the catalog does not have
	CodeUnknownFunction   = "unknown_function"   // a function the catalog does not have
	CodeDuplicateID       = "duplicate_id"       // two components of a message have one id
	CodeMissingRoot       = "missing_root"       // a surface has components but not the one it renders from
	CodeDanglingReference = "dangling_reference" // a reference to a component the surface does not have
	CodeCycle             = "cycle"              // a component contains itself
	CodeUnreachable       = "unreachable"        // a component the root does not reach
	CodeTooDeep           = "too_deep"           // nesting beyond A2UI's limits
	CodeInvalidPath       = "invalid_path"       // a data path that is not a JSON Pointer, or relative outside a template
	CodeUnknownSurface    = "unknown_surface"    // a surface the renderer does not have
	CodeSurfaceExists     = "surface_exists"     // a surface created twice
	CodeCatalogMismatch   = "catalog_mismatch"   // a surface of another catalog than the one checked against
)

// Violation is one rule a message broke.
type Violation struct {
	// Index is the position of the message, from 0.
	Index int `json:"index"`
	// Path is the JSON Pointer of the offending value inside the message ("" for the
	// message itself).
	Path string `json:"path"`
	// Code names the kind of rule ([CodeSchema], [CodeCycle], …).
	Code string `json:"code"`
	// Message says what is wrong, naming the offending id or field.
	Message string `json:"message"`
}

func (v Violation) String() string {
	return "/" + strconv.Itoa(v.Index) + v.Path + ": " + v.Message + " [" + v.Code + "]"
}

// Option configures a [Builder] ([NewBuilder]) or [Validate].
type Option func(*options)

type options struct {
	shown             []string
	policy            *policy.Policy
	maxComps, maxData int
}

// WithLimits bounds what a [Builder] takes of a model: at most components components on
// one surface, and dataModelBytes bytes of data-model updates to one surface (0: no
// bound). Once a response reaches one, the builder takes nothing more of it, and
// [Builder.Exceeded] says which: what it sent stays valid.
func WithLimits(components, dataModelBytes int) Option {
	return func(o *options) { o.maxComps, o.maxData = components, dataModelBytes }
}

// Names of the limits of a [Builder].
const (
	LimitComponents = "components"
	LimitDataModel  = "dataModelBytes"
)

// LimitError is a limit of a [Builder] ([WithLimits]) a response reached.
type LimitError struct {
	// Limit names it: "components" or "dataModelBytes".
	Limit string
	// Value is the limit's value.
	Value int
	// SurfaceID is the surface that reached it.
	SurfaceID string
}

func (e *LimitError) Error() string {
	if e.Limit == LimitComponents {
		return fmt.Sprintf("surface %q reached the limit of %d components", e.SurfaceID, e.Value)
	}
	return fmt.Sprintf("surface %q reached the limit of %d bytes of data-model updates", e.SurfaceID, e.Value)
}

// Exceeded returns the limit a response reached, or nil.
func (b *Builder) Exceeded() *LimitError { return b.exceeded }

// WithShown names surfaces the renderer already has, created earlier in the stream (or by
// another agent): messages may update them without creating them, and, since what they
// hold is not known, references to components not among the messages are not reported,
// nor is a missing root (the renderer buffers components until the root comes). A
// builder that knows what the client holds learns it from [Builder.Shown] instead.
func WithShown(surfaceIDs ...string) Option {
	return func(o *options) { o.shown = append(o.shown, surfaceIDs...) }
}

// Validate checks A2UI messages, in order, as a renderer receives them: each message
// against the protocol (v0.9 messages carry "version": "v0.9"), each component against
// the catalog c, and each surface as a whole at the end: a surface the messages create
// and give components has its root, references that resolve, no cycles and nothing
// unreachable. A createSurface with no components yet is valid, as is an update sent
// before its root (the renderer buffers it until the root comes).
//
// It returns nil when the messages are valid.
func Validate(c *catalog.Catalog, msgs []json.RawMessage, opts ...Option) []Violation {
	b := NewBuilder(c, opts...)
	b.strict = true
	for i, raw := range msgs {
		b.Add(Segment{Kind: SegmentMessage, Msg: i, Raw: raw})
	}
	_, vs := b.End()
	out := Violations(vs)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Index < out[j].Index })
	return out
}

// Violations turns what [Builder.End] reports, at pointers "/<message>/…" that count the
// messages of a response from 0, into [Violation] values.
func Violations(vs []catalog.Violation) []Violation {
	if len(vs) == 0 {
		return nil
	}
	out := make([]Violation, len(vs))
	for i, v := range vs {
		idx, rest, _ := strings.Cut(strings.TrimPrefix(v.Pointer, "/"), "/")
		n, _ := strconv.Atoi(idx)
		if rest != "" {
			rest = "/" + rest
		}
		code := v.Code
		if code == "" {
			code = CodeSchema
		}
		out[i] = Violation{Index: n, Path: rest, Code: code, Message: v.Message}
	}
	return out
}
