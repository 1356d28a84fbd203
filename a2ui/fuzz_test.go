package a2ui

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/a2ui/spec"
	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/policytest"
)

// The fuzz targets cover every decoder of untrusted input in the package: the parser of
// model text, the builder that checks it, server messages, client messages, client
// capabilities, and the A2UI catalogs clients send. They are seeded from the corpus.

// corpusResponses returns the responses of the corpus (and, for v0.9, the official
// examples), by version.
func corpusResponses(f *testing.F) map[string][]string {
	out := map[string][]string{}
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*", "*.txtar"))
	for _, file := range files {
		a, err := parseArchive(readFile(f, file))
		if err != nil {
			f.Fatal(err)
		}
		out[a.header["version"]] = append(out[a.header["version"]], a.sections["response"])
	}
	if _, err := a2uitest.Find(); err == nil {
		for _, vr := range officialExamples(f, false) {
			out[V09] = append(out[V09], vr.text)
		}
	}
	return out
}

// chunkSizes turns fuzzer bytes into the sizes of the pieces a text arrives in.
func chunkSizes(b []byte) []int {
	out := make([]int, 0, len(b))
	for _, c := range b {
		out = append(out, int(c)%48+1)
	}
	return out
}

func versionOf(b byte) string {
	if b%2 == 1 {
		return V08
	}
	return V09
}

// FuzzParser reads arbitrary text in arbitrary pieces: no panic, the same segments
// however the text is cut, and each message numbered once.
func FuzzParser(f *testing.F) {
	for _, texts := range corpusResponses(f) {
		for i, t := range texts {
			f.Add(t, []byte{byte(i), 3, 1, 17})
		}
	}
	f.Add("```a2ui\n[\"x\", {\"a\":1}, 3]\n{\"b\":\n```\nprose {x} [1]\n", []byte{1})
	f.Fuzz(func(t *testing.T, text string, cut []byte) {
		whole := parseAll(text, nil)
		if d := sameSegments(parseAll(text, chunkSizes(cut)), whole); d != "" {
			t.Fatalf("the segments depend on the pieces: %s", d)
		}
		if d := sameSegments(parseAll(text, []int{1}), whole); d != "" {
			t.Fatalf("byte by byte: %s", d)
		}
		seen := map[int]bool{}
		for _, s := range whole {
			switch s.Kind {
			case SegmentMessage, SegmentInvalid:
				if s.Msg < 0 || seen[s.Msg] {
					t.Fatalf("message number %d given twice or negative: %s", s.Msg, segString(s))
				}
				seen[s.Msg] = true
			case SegmentComponent:
				if s.Msg < 0 || s.Index < 0 || (s.Op != UpdateComponents && s.Op != SurfaceUpdate) {
					t.Fatalf("component segment %s", segString(s))
				}
			}
		}
	})
}

// FuzzDecodeMessage decodes arbitrary server messages: no panic, and a message that
// decodes encodes to one that decodes to the same.
func FuzzDecodeMessage(f *testing.F) {
	for v, texts := range corpusResponses(f) {
		for _, text := range texts {
			for _, s := range parseAll(text, nil) {
				if s.Kind == SegmentMessage {
					f.Add(byte(map[string]int{V09: 0, V08: 1}[v]), s.Raw)
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, vb byte, raw []byte) {
		v := versionOf(vb)
		m, err := DecodeMessage(v, raw)
		if err != nil {
			return
		}
		if !isOp(v, m.Op) || m.SurfaceID == "" || m.Body == nil {
			t.Fatalf("decoded %+v", m)
		}
		again, err := DecodeMessage(v, encodeMessage(v, m.Op, encodeBody(m.Body)))
		if err != nil || again.Op != m.Op || again.SurfaceID != m.SurfaceID {
			t.Fatalf("re-encoded: %v %+v", err, again)
		}
	})
}

// FuzzDecodeClientMessage decodes arbitrary client messages: no panic, one action or
// one error, which describes itself.
func FuzzDecodeClientMessage(f *testing.F) {
	for _, s := range []string{
		`{"version":"v0.9","action":{"name":"save","surfaceId":"s","sourceComponentId":"b","timestamp":"2026-01-01T00:00:00Z","context":{"name":"Ada"}}}`,
		`{"version":"v0.9","error":{"code":"VALIDATION_FAILED","surfaceId":"s","path":"/user/email","message":"bad"}}`,
		`{"userAction":{"name":"submit","surfaceId":"s","sourceComponentId":"b","timestamp":"2026-01-01T00:00:00Z","context":{"k":"v"}}}`,
		`{"error":{"message":"x"}}`,
		`{"version":"v0.9","action":{"name":"","surfaceId":"s"}}`,
		`{"action":{},"error":{}}`,
		` null `, `[]`, `{"version":1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		m, fe := DecodeClientMessage(raw, "message")
		if fe != nil {
			if fe.Field == "" || fe.Message == "" || !strings.HasPrefix(fe.Field, "message") {
				t.Fatalf("error without a field or a message: %+v", fe)
			}
			return
		}
		if (m.Action == nil) == (m.Error == nil) {
			t.Fatalf("decoded %+v", m)
		}
		if m.Action != nil && (m.Action.Name == "" || m.Action.SurfaceID == "") {
			t.Fatalf("action %+v", m.Action)
		}
		if m.Describe() == "" {
			t.Fatal("no description")
		}
	})
}

// FuzzParseCapabilities decodes arbitrary client capabilities: no panic; what decodes
// lists a catalog, and a catalog is chosen or the error names its field.
func FuzzParseCapabilities(f *testing.F) {
	for _, s := range []string{
		`{"v0.9":{"supportedCatalogIds":["https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"]}}`,
		`{"v0.9.1":{"supportedCatalogIds":["https://a2ui.org/specification/v0_9/basic_catalog.json"],"inlineCatalogs":[{"catalogId":"x","components":{"A":{}}}]}}`,
		`{"supportedCatalogIds":["https://a2ui.org/specification/v0_8/standard_catalog_definition.json"]}`,
		`{"v0.8":{"inlineCatalogs":[{"catalogId":"y","components":{}}]}}`,
		`{"v0.9":{"supportedCatalogIds":[""]}}`,
		`{"v0.9":{"supportedCatalogIds":"x"}}`,
		`{"v0.9":null}`, `[]`, `{}`,
	} {
		f.Add(byte(0), []byte(s))
		f.Add(byte(1), []byte(s))
	}
	f.Fuzz(func(t *testing.T, vb byte, raw []byte) {
		v := versionOf(vb)
		c, fe := ParseCapabilities(v, raw, "caps")
		if fe != nil {
			if !strings.HasPrefix(fe.Field, "caps") || fe.Message == "" {
				t.Fatalf("error %+v", fe)
			}
			return
		}
		if len(c.SupportedCatalogIDs) == 0 && len(c.InlineCatalogs) == 0 {
			t.Fatal("capabilities without a catalog")
		}
		id, doc, fe := c.Choose(v, "caps")
		switch {
		case fe != nil:
			if !strings.HasPrefix(fe.Field, "caps") {
				t.Fatalf("error %+v", fe)
			}
		case id == "":
			t.Fatal("no catalog chosen")
		case doc == nil && !IsBuiltin(v, id):
			t.Fatalf("%q chosen without a document", id)
		}
	})
}

// fuzzShown is a surface the client may already show, by version.
var fuzzShown = map[string][]string{
	V09: {
		`{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"` + spec.BasicCatalogID + `"}}`,
		`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"a","component":"Text","text":"A"},{"id":"root","component":"Column","children":["a"]}]}}`,
	},
	V08: {
		`{"surfaceUpdate":{"surfaceId":"s","components":[{"id":"a","component":{"Text":{"text":{"literalString":"A"}}}},{"id":"root","component":{"Column":{"children":{"explicitList":["a"]}}}}]}}`,
		`{"beginRendering":{"surfaceId":"s","root":"root"}}`,
	},
}

// FuzzBuilder feeds arbitrary model text to a builder, in arbitrary pieces, sometimes
// over a surface the client already shows: no panic; after every flush the client holds
// valid surfaces; everything sent matches the official schema and the builder's own
// rules; violations point into the response.
func FuzzBuilder(f *testing.F) {
	for v, texts := range corpusResponses(f) {
		for i, t := range texts {
			f.Add(byte(map[string]int{V09: 0, V08: 1}[v]+2*(i%2)), t, []byte{byte(i), 9, 2})
		}
	}
	// The hostile corpus, under the UI policy (flag 8).
	for i, vec := range policytest.Corpus() {
		if vec.A2UI() {
			f.Add(byte(8+map[string]int{V09: 0, V08: 1}[vec.Version]), vec.ModelText(), []byte{byte(i), 5, 3})
		}
	}
	validators := map[string]*a2uitest.Validator{}
	if _, err := a2uitest.Find(); err == nil {
		for _, v := range []string{V09, V08} {
			validators[v] = a2uitest.New(f, v, nil)
		}
	}
	pol := policytest.Policy()
	f.Fuzz(func(t *testing.T, flags byte, text string, cut []byte) {
		v := versionOf(flags)
		c, err := Builtin(v, DefaultCatalogID(v))
		if err != nil {
			t.Fatal(err)
		}
		var opts []Option
		if flags&8 != 0 {
			// What is sent also passes the policy's checks of a component.
			opts = append(opts, WithPolicy(pol))
		}
		b := NewBuilder(c, opts...)
		cl := clientOf(c, validators[v])
		if flags&2 != 0 {
			for _, m := range fuzzShown[v] {
				if err := b.Shown([]byte(m)); err != nil {
					t.Fatal(err)
				}
				if err := cl.apply([]byte(m)); err != nil {
					t.Fatal(err)
				}
			}
		}
		cl.strict = true
		own := NewBuilder(c, opts...) // checks what is sent against the builder's own rules
		run, err := feed(b, text, feedOpts{chunks: chunkSizes(cut), flushEach: flags&4 != 0, onBatch: func(batch [][]byte) error {
			if err := stepCheck(cl)(batch); err != nil {
				return err
			}
			for _, m := range batch {
				if err := ownRules(own, m); err != nil {
					return fmt.Errorf("%s: %v", m, err)
				}
			}
			return nil
		}})
		if err != nil {
			t.Fatalf("%v\nemitted:\n%s", err, joinMsgs(run.out))
		}
		for _, x := range run.vs {
			if !strings.HasPrefix(x.Pointer, "/") || x.Message == "" {
				t.Fatalf("violation %q", x)
			}
		}
	})
}

// ownRules checks a message the builder sent against its own rules: it decodes, and
// each of its components passes the builder's checks.
func ownRules(b *Builder, raw []byte) error {
	m, err := DecodeMessage(b.version, raw)
	if err != nil {
		return err
	}
	for i, e := range asList(m.Body["components"]) {
		var r catalog.Report
		if b.checkComponent(asMap(e), fmt.Sprintf("/components/%d", i), &r) == nil {
			return fmt.Errorf("a component it sent breaks its rules: %v", r.Violations)
		}
	}
	return nil
}

// FuzzCompileCatalog compiles arbitrary A2UI catalog documents, as a client sends them
// inline: no panic, within bounded time; a catalog that compiles can be described and
// used to check a response. The fuzzer's bytes are a whole document, and a schema put
// in place of a component's, a function's parameters and the theme of a small catalog
// (which mutations keep valid JSON more often).
func FuzzCompileCatalog(f *testing.F) {
	f.Add(byte(0), spec.BasicCatalog, []byte(`{"type":"object"}`))
	f.Add(byte(0), spec.MinimalCatalog, []byte(`{"properties":{"child":{"$ref":"common_types.json#/$defs/ComponentId"}}}`))
	f.Add(byte(1), spec.StandardCatalog, []byte(`{"type":"object","properties":{"children":{"type":"object"}}}`))
	for _, name := range []string{"stack_v09.json", "stack_v08.json"} {
		vb := byte(0)
		if strings.Contains(name, "v08") {
			vb = 1
		}
		f.Add(vb, readFile(f, filepath.Join("testdata", "catalogs", name)), []byte(`{"oneOf":[false,{"type":"string"}]}`))
	}
	// The inline form of web_core's capabilities: components, functions as a list, theme.
	f.Add(byte(0), []byte(`{"catalogId":"x","components":{"Greeting":{"allOf":[{"$ref":"common_types.json#/$defs/ComponentCommon"},{"properties":{"component":{"const":"Greeting"},"text":{"$ref":"common_types.json#/$defs/DynamicString"},"child":{"$ref":"common_types.json#/$defs/ComponentId"}},"required":["component","text"]}]}},"functions":[{"name":"upper","returnType":"string","parameters":{"type":"object","properties":{"value":{"type":"string"}},"required":["value"]}}],"theme":{"accent":{"type":"string"}}}`), []byte(`{"anyOf":[{"required":["x"]},{"properties":{"y":false}}]}`))
	f.Add(byte(0), []byte(`{"components":{"A":{"$ref":"#/components/A"}}}`), []byte(`{"$ref":"#"}`))
	f.Add(byte(0), []byte(`{"components":{"A":{"oneOf":[false,{"type":"string"}]}},"$defs":{"theme":{"anyOf":[false,{"required":["x"]}]}}}`), []byte(`false`))
	f.Add(byte(1), []byte(`{"components":{"A":{"type":"object","properties":{"children":{"type":"object"},"child":{"type":"string"}}}},"styles":{"x":{"pattern":"("}}}`), []byte(`{"pattern":"(a+)+$"}`))
	f.Fuzz(func(t *testing.T, vb byte, doc, schema []byte) {
		v := versionOf(vb)
		useCatalog(t, v, doc)
		if !json.Valid(schema) {
			return
		}
		s := string(schema)
		if v == V09 {
			useCatalog(t, v, []byte(`{"components":{"A":`+s+`,"B":{"allOf":[{"$ref":"common_types.json#/$defs/ComponentCommon"},{"properties":{"component":{"const":"B"},"child":{"$ref":"common_types.json#/$defs/ComponentId"},"value":{"$ref":"common_types.json#/$defs/DynamicValue"}}}]}},"functions":[{"name":"f","parameters":`+s+`}],"theme":{"t":`+s+`}}`))
		} else {
			useCatalog(t, v, []byte(`{"components":{"A":`+s+`,"B":{"type":"object","properties":{"child":{"type":"string"},"children":`+s+`}}},"styles":{"t":`+s+`}}`))
		}
	})
}

// useCatalog compiles a catalog document and, if it compiles, describes it and checks a
// response that uses each of its component types and functions.
func useCatalog(t *testing.T, v string, doc []byte) {
	// Compiling and using a catalog must stay fast on any input: a slow one crashes
	// the fuzzer, which keeps the input.
	slow := time.AfterFunc(3*time.Second, func() {
		panic(fmt.Sprintf("a catalog took more than 3s: %q", doc))
	})
	defer slow.Stop()
	raw := catalog.A2UIDocument(v, "https://example.com/c.json", doc)
	c, err := catalog.NewCache(2, 1<<20, 0).Compile(raw)
	if err != nil {
		return
	}
	if c.A2UI == nil || c.A2UI.Version != v || len(c.A2UI.ComponentNames()) == 0 {
		t.Fatalf("compiled %+v", c.A2UI)
	}
	_ = Describe(c)
	var comps []string
	for i, name := range c.A2UI.ComponentNames() {
		n, _ := json.Marshal(name)
		id := "root"
		if i > 0 {
			id = fmt.Sprintf("c%d", i)
		}
		if v == V09 {
			fn, _ := json.Marshal(strings.Join(c.A2UI.FunctionNames(), ""))
			comps = append(comps, fmt.Sprintf(`{"id":%q,"component":%s,"child":"c1","children":["c1"],"text":"x","value":{"call":%s,"args":{}}}`, id, n, fn))
			comps = append(comps, fmt.Sprintf(`{"id":%q,"component":%s}`, id+"b", n))
		} else {
			comps = append(comps, fmt.Sprintf(`{"id":%q,"component":{%s:{"child":"c1","children":{"explicitList":["c1"]}}}}`, id, n))
			comps = append(comps, fmt.Sprintf(`{"id":%q,"component":{%s:{}}}`, id+"b", n))
		}
	}
	text := "```a2ui\n"
	if v == V09 {
		text += `{"createSurface":{"surfaceId":"s","catalogId":"https://example.com/c.json","theme":{"primaryColor":"#000000","t":1}}}` + "\n"
		for _, c := range comps {
			text += `{"updateComponents":{"surfaceId":"s","components":[` + c + "]}}\n"
		}
	} else {
		for _, c := range comps {
			text += `{"surfaceUpdate":{"surfaceId":"s","components":[` + c + "]}}\n"
		}
		text += `{"beginRendering":{"surfaceId":"s","root":"root","styles":{"font":"x","t":1}}}` + "\n"
	}
	text += "```\n"
	b := NewBuilder(c)
	cl := clientOf(c, nil)
	cl.strict = true
	if _, err := feed(b, text, feedOpts{chunks: []int{13}, onBatch: stepCheck(cl)}); err != nil {
		t.Fatal(err)
	}
}

// taggedBody turns a corpus response into the body of an <a2ui-json> block: its messages
// as one JSON array.
func taggedBody(text string) string {
	var msgs []string
	for _, s := range parseAll(text, nil) {
		if s.Kind == SegmentMessage {
			msgs = append(msgs, string(s.Raw))
		}
	}
	return "[" + strings.Join(msgs, ",\n") + "]"
}

// FuzzTagged reads arbitrary text as the body of an <a2ui-json> block, the A2UI agent
// SDKs' inference format, with prose around it, in arbitrary pieces: the same segments
// however the text is cut, and, through a builder, every state a client reaches is a valid
// surface, everything sent matching the official schema.
func FuzzTagged(f *testing.F) {
	for v, texts := range corpusResponses(f) {
		for i, t := range texts {
			f.Add(byte(map[string]int{V09: 0, V08: 1}[v]), taggedBody(t), []byte{byte(i), 5, 1})
		}
	}
	f.Add(byte(0), "\n```json\n[{\"version\":\"v0.9\",\"createSurface\":{\"surfaceId\":\"s\",\"catalogId\":\""+spec.BasicCatalogID+"\"}}]\n```\n", []byte{2})
	f.Add(byte(0), `[{"a":"</a2ui-json>"}, </a2ui-json><a2ui-json>{]`, []byte{1, 7})
	validators := map[string]*a2uitest.Validator{}
	if _, err := a2uitest.Find(); err == nil {
		for _, v := range []string{V09, V08} {
			validators[v] = a2uitest.New(f, v, nil)
		}
	}
	f.Fuzz(func(t *testing.T, flags byte, body string, cut []byte) {
		text := "Here it is: <a2ui-json>" + body + "</a2ui-json> Enjoy."
		whole := parseAll(text, nil)
		if d := sameSegments(parseAll(text, chunkSizes(cut)), whole); d != "" {
			t.Fatalf("the segments depend on the pieces: %s", d)
		}
		if d := sameSegments(parseAll(text, []int{1}), whole); d != "" {
			t.Fatalf("byte by byte: %s", d)
		}
		v := versionOf(flags)
		c, err := Builtin(v, DefaultCatalogID(v))
		if err != nil {
			t.Fatal(err)
		}
		cl := clientOf(c, validators[v])
		cl.strict = true
		run, err := feed(NewBuilder(c), text, feedOpts{chunks: chunkSizes(cut), onBatch: stepCheck(cl)})
		if err != nil {
			t.Fatalf("%v\nemitted:\n%s", err, joinMsgs(run.out))
		}
	})
}
