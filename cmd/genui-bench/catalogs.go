package main

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// minCatalogBytes is the smallest catalog genCatalog can make: the definition around
// the widgets and one small widget.
const minCatalogBytes = 1024

// pregenLimit is the most catalog bytes the catalogs phase makes before it starts; beyond
// it each client makes its catalogs as it goes.
const pregenLimit = 64 << 20

type schema = map[string]any

// propSpec is one property of a widget kind; optional ones are left out of some widgets.
type propSpec struct {
	name     string
	required bool
	schema   func(r *rand.Rand) schema
}

type widgetKind struct {
	name  string
	desc  string
	props []propSpec
}

func req(name string, s func(*rand.Rand) schema) propSpec {
	return propSpec{name: name, required: true, schema: s}
}

func opt(name string, s func(*rand.Rand) schema) propSpec {
	return propSpec{name: name, schema: s}
}

func describe(s schema, desc string) schema {
	if desc != "" {
		s["description"] = desc
	}
	return s
}

func str(desc string) func(*rand.Rand) schema {
	return func(*rand.Rand) schema { return describe(schema{"type": "string"}, desc) }
}

func formatted(format, desc string) func(*rand.Rand) schema {
	return func(*rand.Rand) schema { return describe(schema{"type": "string", "format": format}, desc) }
}

// enum keeps the first value and a random choice of the others, in order.
func enum(desc string, vals ...string) func(*rand.Rand) schema {
	return func(r *rand.Rand) schema {
		out := []any{vals[0]}
		for _, v := range vals[1:] {
			if r.IntN(5) > 0 {
				out = append(out, v)
			}
		}
		return describe(schema{"type": "string", "enum": out}, desc)
	}
}

func number(desc string, lo, hi float64) func(*rand.Rand) schema {
	return func(r *rand.Rand) schema {
		s := schema{"type": "number", "minimum": lo}
		if r.IntN(3) > 0 {
			s["maximum"] = hi
		}
		return describe(s, desc)
	}
}

func integer(desc string, lo, hi int) func(*rand.Rand) schema {
	return func(*rand.Rand) schema {
		return describe(schema{"type": "integer", "minimum": lo, "maximum": hi}, desc)
	}
}

func boolean(desc string) func(*rand.Rand) schema {
	return func(r *rand.Rand) schema {
		s := schema{"type": "boolean"}
		if r.IntN(2) == 0 {
			s["default"] = false
		}
		return describe(s, desc)
	}
}

func list(desc string) func(*rand.Rand) schema {
	return func(r *rand.Rand) schema {
		s := schema{"type": "array", "items": schema{"type": "string"}}
		if r.IntN(2) == 0 {
			s["minItems"] = 1
		}
		return describe(s, desc)
	}
}

func numbers(desc string) func(*rand.Rand) schema {
	return func(*rand.Rand) schema {
		return describe(schema{"type": "array", "items": schema{"type": "number"}}, desc)
	}
}

// objects is an array of objects whose fields are all strings but those named in
// numeric (numbers) and flags (booleans); the first field is required.
func objects(desc string, fields []string, numeric, flags []string) func(*rand.Rand) schema {
	return func(*rand.Rand) schema {
		props := schema{}
		for _, f := range fields {
			props[f] = schema{"type": "string"}
		}
		for _, f := range numeric {
			props[f] = schema{"type": "number"}
		}
		for _, f := range flags {
			props[f] = schema{"type": "boolean"}
		}
		item := schema{"type": "object", "properties": props, "required": []any{fields[0]}, "additionalProperties": false}
		return describe(schema{"type": "array", "items": item}, desc)
	}
}

// ref and refs are references to other widgets: a property named child or children, or
// one whose description says it holds widget ids.
func ref(desc string) func(*rand.Rand) schema { return str(desc) }

func refs(desc string) func(*rand.Rand) schema {
	return func(*rand.Rand) schema {
		return schema{"type": "array", "items": schema{"type": "string"}, "description": desc}
	}
}

var (
	mainAxis  = enum("", "start", "center", "end", "spaceBetween", "spaceAround", "spaceEvenly")
	crossAxis = enum("", "start", "center", "end", "stretch")
	colour    = str("Colour as #RRGGBB or a theme colour name such as primary.")
)

// widgetKinds are the widgets catalogs are made of, in the shape of
// schemas/catalogs/basic.json and rich.json.
var widgetKinds = []widgetKind{
	{"Column", "A vertical layout of child widgets.", []propSpec{
		req("children", refs("Ids of the child widgets, top to bottom.")), opt("mainAxisAlignment", mainAxis),
		opt("crossAxisAlignment", crossAxis), opt("spacing", number("Space between children in logical pixels.", 0, 64))}},
	{"Row", "A horizontal layout of child widgets.", []propSpec{
		req("children", refs("Ids of the child widgets, left to right.")), opt("mainAxisAlignment", mainAxis),
		opt("crossAxisAlignment", crossAxis), opt("spacing", number("Space between children in logical pixels.", 0, 64)),
		opt("wrap", boolean("Whether children flow onto a new line when they do not fit."))}},
	{"Stack", "Widgets drawn on top of each other, the first at the bottom.", []propSpec{
		req("children", refs("Ids of the stacked widgets.")),
		opt("alignment", enum("", "topLeft", "topCenter", "topRight", "center", "bottomLeft", "bottomCenter", "bottomRight"))}},
	{"Card", "A rounded panel with a shadow that groups related content.", []propSpec{
		req("child", ref("Id of the widget shown in the card.")), opt("elevation", number("Shadow depth.", 0, 24)),
		opt("padding", number("Inner padding in logical pixels.", 0, 48)), opt("outlined", boolean("Draw a border instead of a shadow."))}},
	{"Container", "A box with padding, a background colour and rounded corners.", []propSpec{
		opt("child", ref("Id of the widget inside the box.")), opt("padding", number("", 0, 64)), opt("color", colour),
		opt("borderRadius", number("Corner radius in logical pixels.", 0, 32)), opt("width", number("", 0, 4096)),
		opt("height", number("", 0, 4096))}},
	{"ListView", "A scrollable list of child widgets.", []propSpec{
		req("children", refs("Ids of the list items, in order.")), opt("scrollDirection", enum("", "vertical", "horizontal")),
		opt("dividers", boolean("Draw a thin line between items.")), opt("shrinkWrap", boolean(""))}},
	{"Tabs", "Tabs that show one child at a time.", []propSpec{
		req("labels", list("The tab titles, one per child.")), req("children", refs("Ids of the tab pages, one per label.")),
		opt("selectedIndex", integer("The tab shown first.", 0, 20))}},
	{"Expander", "A titled section that the user can open and close.", []propSpec{
		req("title", str("The section title, always visible.")), req("child", ref("Id of the content shown when open.")),
		opt("expanded", boolean("Whether the section starts open."))}},
	{"ListTile", "One row of a list: a title, a subtitle and optional leading and trailing widgets.", []propSpec{
		req("title", str("")), opt("subtitle", str("A second, quieter line.")),
		opt("leading", ref("Id of the widget before the title, usually an Icon or Avatar.")),
		opt("trailing", ref("Id of the widget after the title.")), opt("dense", boolean(""))}},
	{"Text", "A piece of text.", []propSpec{
		req("text", str("The text to show.")), opt("style", enum("", "body", "headline", "title", "label", "caption")),
		opt("maxLines", integer("Lines shown before the text is cut with an ellipsis.", 1, 50)),
		opt("textAlign", enum("", "start", "center", "end", "justify"))}},
	{"Heading", "A section heading.", []propSpec{
		req("text", str("")), opt("level", integer("1 is the most prominent.", 1, 6))}},
	{"Markdown", "Rich text written in Markdown: emphasis, lists, links and code.", []propSpec{
		req("markdown", str("The Markdown source.")), opt("selectable", boolean("Whether the user can select and copy the text."))}},
	{"Image", "An image from a URL or an asset.", []propSpec{
		req("url", formatted("uri", "Network URL of the image.")), opt("alt", str("A short description read by screen readers.")),
		opt("fit", enum("", "contain", "cover", "fill", "fitWidth", "fitHeight", "none", "scaleDown")),
		opt("width", number("", 0, 4096)), opt("height", number("", 0, 4096))}},
	{"Icon", "A Material icon.", []propSpec{
		req("name", str("The icon name, such as home, search or shopping_cart.")), opt("size", number("", 8, 128)), opt("color", colour)}},
	{"Avatar", "A round picture or initials standing for a person.", []propSpec{
		opt("imageUrl", formatted("uri", "")), opt("initials", str("One or two letters shown without an image.")),
		opt("radius", number("", 8, 96))}},
	{"Badge", "A small label that highlights a status.", []propSpec{
		req("label", str("")), opt("tone", enum("How the badge is coloured.", "neutral", "info", "success", "warning", "danger"))}},
	{"Chip", "A compact element for a tag, a filter or a choice.", []propSpec{
		req("label", str("")), opt("selected", boolean("")), opt("icon", str("Optional icon name shown before the label."))}},
	{"Divider", "A thin horizontal line between sections.", []propSpec{
		opt("thickness", number("", 0, 8)), opt("indent", number("Empty space before the line.", 0, 64))}},
	{"ProgressBar", "Shows how far a task has come.", []propSpec{
		opt("value", number("Fraction done, from 0 to 1; leave it out while unknown.", 0, 1)), opt("label", str(""))}},
	{"ElevatedButton", "A button; tapping it sends an action event with the values of the surface.", []propSpec{
		req("child", ref("Id of the widget shown inside the button, usually a Text.")),
		opt("variant", enum("", "filled", "tonal", "outlined", "text")), opt("enabled", boolean("")),
		opt("actionName", str("Name of the action sent when the button is tapped."))}},
	{"TextField", "A single-line text input.", []propSpec{
		opt("value", str("")), opt("label", str("")), opt("hintText", str("Shown while the field is empty.")),
		opt("obscureText", boolean("Hide the characters, for passwords.")), opt("maxLength", integer("", 1, 10000)),
		opt("keyboardType", enum("", "text", "number", "email", "phone", "url", "multiline"))}},
	{"Checkbox", "A box the user can tick, with a label.", []propSpec{
		req("value", boolean("Whether the box is ticked.")), req("label", str(""))}},
	{"Switch", "An on/off toggle with a label.", []propSpec{
		req("value", boolean("")), opt("label", str(""))}},
	{"Slider", "Picks a number in a range by dragging a thumb.", []propSpec{
		req("value", number("", -1e6, 1e6)), opt("min", number("", -1e6, 1e6)), opt("max", number("", -1e6, 1e6)),
		opt("divisions", integer("Number of discrete steps; leave it out for a continuous slider.", 1, 1000)), opt("label", str(""))}},
	{"Dropdown", "A menu that picks one of several options.", []propSpec{
		req("options", list("The options, in the order shown.")), opt("value", str("The selected option.")), opt("label", str(""))}},
	{"RadioGroup", "A group of radio buttons; groupValue is the selected label.", []propSpec{
		req("groupValue", str("")), req("labels", list(""))}},
	{"CheckboxGroup", "A list of checkboxes.", []propSpec{
		req("values", func(*rand.Rand) schema { return schema{"type": "array", "items": schema{"type": "boolean"}} }),
		req("labels", list("One label per value."))}},
	{"DatePicker", "Picks a calendar date.", []propSpec{
		opt("value", formatted("date", "The selected date, as YYYY-MM-DD.")), opt("firstDate", formatted("date", "")),
		opt("lastDate", formatted("date", "")), opt("label", str(""))}},
	{"Rating", "A row of stars.", []propSpec{
		req("value", number("", 0, 10)), opt("max", integer("Number of stars.", 1, 10)), opt("readOnly", boolean(""))}},
	{"Table", "Rows of data under column headers.", []propSpec{
		req("columns", objects("The columns, left to right.", []string{"header", "tooltip"}, []string{"width"}, []string{"numeric"})),
		req("rows", func(*rand.Rand) schema {
			return schema{"type": "array", "items": schema{"type": "array", "items": schema{"type": "string"}},
				"description": "The cells of each row, one per column."}
		}),
		opt("striped", boolean(""))}},
	{"Chart", "A bar, line or pie chart.", []propSpec{
		req("kind", enum("", "bar", "line", "pie", "area", "scatter")),
		req("series", objects("The data series.", []string{"name", "color"}, nil, nil)),
		req("values", numbers("The values of the first series.")), opt("xLabels", list("Labels of the horizontal axis.")),
		opt("title", str(""))}},
}

// usageHints are appended to widget descriptions, chosen per widget.
var usageHints = []string{
	"", "Use it sparingly.", "Prefer it on small screens.", "Keep the text short.",
	"Good for forms.", "Good for dashboards.", "Combine it with a Column for longer content.",
}

// padWords fill descriptions up to the requested catalog size.
var padWords = strings.Fields("Keep labels short and concrete, follow the order the user asked for, and prefer " +
	"the simplest layout that shows every value the user needs to see or change.")

// fillers[n] is a word of n letters, to end a padding exactly.
var fillers = []string{"", "a", "so", "all", "each", "clear", "simple", "compact", "readable", "otherwise",
	"accessible", "predictable", "consistently"}

// padding returns n bytes of words, each after a space.
func padding(n int) string {
	var b strings.Builder
	for i := 0; n > 0; i++ {
		w := padWords[i%len(padWords)]
		switch {
		case n == 1:
			w = "."
		case 1+len(w) > n || n-(1+len(w)) == 1:
			// The next word does not fit, or would leave a single byte: end here.
			w = fillers[min(n-1, len(fillers)-1)]
		}
		if w != "." {
			b.WriteByte(' ')
			n--
		}
		b.WriteString(w)
		n -= len(w)
	}
	return b.String()
}

// genCatalog returns a valid GenUI catalog (a JSON Schema of a surface definition whose
// widget property has one anyOf alternative per widget) of exactly size bytes as compact
// JSON with sorted keys, the form servers hash and measure. The same index gives the same
// catalog; different indexes give different catalogs: each draws its mix of widgets and
// properties from a generator seeded with the index, and names the index in its
// descriptions. Widgets are added while they fit, then descriptions are lengthened to
// reach size.
func genCatalog(index, size int) ([]byte, error) {
	if size < minCatalogBytes {
		return nil, fmt.Errorf("a catalog needs at least %d bytes, not %d", minCatalogBytes, size)
	}
	r := rand.New(rand.NewPCG(uint64(index), 0x67656e7569))
	anyOf := []any{}
	root := schema{
		"type": "object",
		"description": fmt.Sprintf("Catalog %d of the benchmark. A UI surface: a flat list of widgets with unique ids; "+
			"root is the id of the top widget. Layouts and buttons refer to other widgets by id.", index),
		"properties": schema{
			"root": schema{"type": "string", "description": "The id of the root widget."},
			"widgets": schema{"type": "array", "items": schema{
				"type": "object",
				"properties": schema{
					"id": schema{"type": "string", "description": "A unique id for the widget."},
					"widget": schema{
						"description": "The widget. It MUST contain exactly one key, the widget type, whose value holds the widget's properties.",
						"anyOf":       anyOf,
					},
				},
				"required": []any{"id", "widget"},
			}},
		},
		"required": []any{"root", "widgets"},
	}
	skel, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	total := len(skel) // with "[]" for the alternatives
	var inner []schema // each widget's own schema, whose description pads
	order := r.Perm(len(widgetKinds))
	for k := 0; ; k++ {
		kind := widgetKinds[order[k%len(order)]]
		name := kind.name
		if k >= len(order) {
			name += strconv.Itoa(k/len(order) + 1)
		}
		alt, w := genWidget(r, kind, name, index)
		b, err := json.Marshal(alt)
		if err != nil {
			return nil, err
		}
		n := len(b)
		if k > 0 {
			n++ // the comma
		}
		if total+n > size {
			if k > 0 {
				break
			}
			// The first widget must fit: fall back to the smallest one.
			alt, w = smallWidget(index)
			if b, err = json.Marshal(alt); err != nil {
				return nil, err
			}
			if n = len(b); total+n > size {
				return nil, fmt.Errorf("a catalog of %d bytes cannot hold one widget", size)
			}
		}
		total += n
		anyOf = append(anyOf, alt)
		inner = append(inner, w)
	}
	// Spread what is left over the widgets' descriptions.
	left := size - total
	for i, w := range inner {
		n := left / len(inner)
		if i == len(inner)-1 {
			n = left - n*(len(inner)-1)
		}
		w["description"] = w["description"].(string) + padding(n)
	}
	root["properties"].(schema)["widgets"].(schema)["items"].(schema)["properties"].(schema)["widget"].(schema)["anyOf"] = anyOf
	out, err := json.Marshal(root)
	if err != nil {
		return nil, err
	}
	if len(out) != size {
		return nil, fmt.Errorf("generated catalog %d is %d bytes, not %d", index, len(out), size)
	}
	return out, nil
}

// genWidget returns the anyOf alternative of one widget and the widget's own schema.
func genWidget(r *rand.Rand, kind widgetKind, name string, index int) (alt, w schema) {
	props := schema{}
	var required []any
	for _, p := range kind.props {
		if !p.required && r.IntN(4) == 0 {
			continue
		}
		props[p.name] = p.schema(r)
		if p.required {
			required = append(required, p.name)
		}
	}
	desc := kind.desc
	if hint := usageHints[r.IntN(len(usageHints))]; hint != "" {
		desc += " " + hint
	}
	w = schema{"type": "object", "description": fmt.Sprintf("%s (catalog %d)", desc, index), "properties": props}
	if len(required) > 0 {
		w["required"] = required
	}
	if r.IntN(2) == 0 {
		w["additionalProperties"] = false
	}
	return schema{"type": "object", "properties": schema{name: w}, "required": []any{name}}, w
}

func smallWidget(index int) (alt, w schema) {
	w = schema{"type": "object", "description": fmt.Sprintf("A piece of text (catalog %d)", index),
		"properties": schema{"text": schema{"type": "string"}}, "required": []any{"text"}}
	return schema{"type": "object", "properties": schema{"Text": w}, "required": []any{"Text"}}, w
}

// catalogs creates one session for each of cfg.catalogs distinct catalogs and measures
// the server's memory and CPU per catalog.
func (b *bench) catalogs(ctx context.Context, t *target) (*CatalogsReport, error) {
	cfg := b.cfg
	n, size := cfg.catalogs, cfg.catalogBytes
	rep := &CatalogsReport{Catalogs: n, Concurrency: cfg.catalogConc, CatalogJSONBytes: size}
	body := func(i int) ([]byte, error) {
		cat, err := genCatalog(i, size)
		if err != nil {
			return nil, err
		}
		return sessionBody(cat), nil
	}
	// Made beforehand (when they take little room), so that the clients spend almost no
	// CPU while the server compiles.
	var bodies [][]byte
	if int64(n)*int64(size) <= pregenLimit {
		bodies = make([][]byte, n)
		for i := range bodies {
			var err error
			if bodies[i], err = body(i); err != nil {
				return nil, err
			}
		}
	}
	// The warm-up session's catalog is another catalog of the same size (index n), so that
	// the server's first compilation, with its one-time costs, is not measured.
	warm, err := body(n)
	if err != nil {
		return nil, err
	}
	if _, err := startSession(ctx, b.hc, t.base, warm, cfg.timeout); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// Not fatal: another implementation may refuse such catalogs (size, keywords).
		rep.Errors, rep.FirstError = 1, err.Error()
		b.note("catalogs: the server refused a generated catalog of %d bytes, phase skipped: %v", size, err)
		return rep, nil
	}
	var before int64
	if t.pid != 0 {
		time.Sleep(300 * time.Millisecond)
		if before, err = medianRSS(ctx, t.pid, 5, 100*time.Millisecond); err != nil {
			return nil, err
		}
		rep.RSSBeforeBytes = &before
	}
	b.logf("catalogs: creating %d sessions with distinct catalogs of %d bytes at concurrency %d", n, size, cfg.catalogConc)
	var next atomic.Int64
	cpu0, ok0 := cpuOf(t)
	limit := time.Now().Add(cfg.phaseLimit)
	rs, elapsed := runLoad(ctx, cfg.catalogConc, n, limit, func(ctx context.Context) error {
		i := int(next.Add(1) - 1)
		if bodies != nil {
			_, err := startSession(ctx, b.hc, t.base, bodies[i], cfg.timeout)
			return err
		}
		bd, err := body(i)
		if err != nil {
			return err
		}
		_, err = startSession(ctx, b.hc, t.base, bd, cfg.timeout)
		return err
	})
	cpu1, ok1 := cpuOf(t)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rep.ElapsedS = round(elapsed.Seconds(), 3)
	rep.PhaseLimitHit = len(rs) < n
	var first error
	for _, err := range rs {
		if err != nil {
			rep.Errors++
			first = cmpErr(first, err)
		}
	}
	rep.Created = len(rs) - rep.Errors
	if first != nil {
		rep.FirstError = first.Error()
		b.note("catalogs: %d of %d failed, first: %v", rep.Errors, len(rs), first)
	}
	if rep.PhaseLimitHit {
		b.note("catalogs: --phase-limit %s reached after %d catalogs", cfg.phaseLimit, len(rs))
	}
	if rep.Created == 0 {
		return rep, nil
	}
	rep.CreatedPerS = round(float64(rep.Created)/elapsed.Seconds(), 1)
	if ok0 && ok1 {
		rep.CPUPerCatalogMS = ptr(msOf((cpu1 - cpu0) / time.Duration(rep.Created)))
	}
	if t.pid != 0 {
		time.Sleep(time.Second)
		after, err := medianRSS(ctx, t.pid, 5, 100*time.Millisecond)
		if err != nil {
			return nil, err
		}
		rep.RSSAfterBytes = &after
		per := (after - before) / int64(rep.Created)
		rep.BytesPerCatalog = &per
		rep.BytesPerJSONByte = ptr(round(float64(per)/float64(size), 2))
	}
	return rep, nil
}
