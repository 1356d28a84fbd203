package a2ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/genuiserver/genui/a2ui/spec"
	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
)

// validResponse is a response that breaks no rule, with its catalog and what the client
// shows before it.
type validResponse struct {
	name    string
	version string
	cat     *catalog.Catalog
	inline  []byte
	shown   [][]byte
	text    string
}

// officialExamples returns the example surfaces of the specification's v0.9 catalogs,
// as @a2ui/web_core ships them, written as a model writes them: prose, then a fenced
// block with one message per line and no "version" (pretty printed when pretty is set).
func officialExamples(t testing.TB, pretty bool) []validResponse {
	t.Helper()
	s, err := a2uitest.Find()
	if err != nil {
		t.Skip(err)
	}
	var out []validResponse
	for catName, id := range map[string]string{"basic": spec.BasicCatalogID, "minimal": spec.MinimalCatalogID} {
		var files []string
		for _, dir := range []string{
			filepath.Join(s.Dir, "v0_9", "schemas", "catalogs", catName, "examples"),
			filepath.Join(s.Dir, "v0_9", "catalogs", catName, "examples"),
			filepath.Join("..", "web", "a2ui", "node_modules", "@a2ui", "web_core", "src", "v0_9", "schemas", "catalogs", catName, "examples"),
		} {
			if files, _ = filepath.Glob(filepath.Join(dir, "*.json")); len(files) > 0 {
				break
			}
		}
		if len(files) == 0 {
			t.Logf("no %s examples installed", catName)
			continue
		}
		c, err := Builtin(V09, id)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			var ex struct {
				Name     string           `json:"name"`
				Messages []map[string]any `json:"messages"`
			}
			if err := json.Unmarshal(readFile(t, f), &ex); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			var sb strings.Builder
			fmt.Fprintf(&sb, "Here is %s.\n\n```a2ui\n", ex.Name)
			for _, m := range ex.Messages {
				delete(m, "version")
				var b []byte
				if pretty {
					b, _ = json.MarshalIndent(m, "", "  ")
				} else {
					b, _ = json.Marshal(m)
				}
				sb.Write(b)
				sb.WriteByte('\n')
			}
			sb.WriteString("```\n\nIt is ready.")
			out = append(out, validResponse{name: catName + "/" + filepath.Base(f), version: V09, cat: c, text: sb.String()})
		}
	}
	if len(out) == 0 && testing.Short() {
		t.Skip("skipped under -short: needs @a2ui/web_core's examples from npm (npm ci in web/a2ui)")
	}
	if len(out) < 26 {
		t.Fatalf("only %d official examples", len(out))
	}
	return out
}

// validCorpus returns the corpus cases that break no rule.
func validCorpus(t testing.TB) []validResponse {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*", "*.txtar"))
	var out []validResponse
	for _, f := range files {
		cc := loadCase(t, f)
		if len(cc.want) > 0 {
			continue
		}
		out = append(out, validResponse{name: f, version: cc.version, cat: cc.cat, inline: cc.inline, shown: cc.shown, text: cc.response})
	}
	return out
}

// TestStreamingGuarantee checks the central guarantee of the builder on valid responses
// (the official example surfaces and the valid corpus cases), fed in pieces of many
// sizes: after every flush, what the client holds is a valid surface (its root once
// anything shows, every reference resolved, no cycle, every message valid against the
// official schema), and at the end it holds exactly the surface the model wrote. The
// parser's segments must not depend on the pieces either.
func TestStreamingGuarantee(t *testing.T) {
	cases := append(officialExamples(t, false), officialExamples(t, true)...)
	for i := range cases[len(cases)/2:] {
		cases[len(cases)/2+i].name += " (pretty)"
	}
	cases = append(cases, validCorpus(t)...)
	rng := rand.New(rand.NewSource(1))
	for _, vr := range cases {
		t.Run(vr.name, func(t *testing.T) {
			chunks := [][]int{nil, {1}, lineChunks(vr.text), randomChunks(rng, 50, 8), {3}, {16}, randomChunks(rng, 50, 64)}
			if testing.Short() {
				chunks = chunks[:4]
			}
			var segs []Segment
			var final *client
			schema := newValidator(t, vr.version, vr.cat.A2UI.ID, vr.inline)
			for _, ch := range chunks {
				for _, each := range []bool{false, true} {
					b := NewBuilder(vr.cat)
					cl := clientOf(vr.cat, schema)
					for _, m := range vr.shown {
						if err := b.Shown(m); err != nil {
							t.Fatal(err)
						}
						if err := cl.apply(withVersion(vr.version, m)); err != nil {
							t.Fatal(err)
						}
					}
					expected := cl.clone()
					cl.strict = true
					steps := 0
					run, err := feed(b, vr.text, feedOpts{chunks: ch, flushEach: each, onBatch: func(batch [][]byte) error {
						steps++
						return stepCheck(cl)(batch)
					}})
					if err != nil {
						t.Fatalf("chunks %v flushEach=%v: %v\nemitted:\n%s", ch, each, err, joinMsgs(run.out))
					}
					if len(run.vs) > 0 {
						t.Fatalf("chunks %v: violations of a valid response:\n%s", ch, strings.Join(violationStrings(run.vs), "\n"))
					}
					if err := applyWritten(expected, vr.version, vr.cat.A2UI.ID, run.segs); err != nil {
						t.Fatal(err)
					}
					if d := cl.diff(expected); d != "" {
						t.Fatalf("chunks %v flushEach=%v: the client does not end with the surface the model wrote: %s", ch, each, d)
					}
					if segs == nil {
						segs, final = run.segs, cl
						continue
					}
					if d := sameSegments(run.segs, segs); d != "" {
						t.Fatalf("chunks %v: the parser's segments depend on the chunking: %s", ch, d)
					}
					if d := cl.diff(final); d != "" {
						t.Fatalf("chunks %v: the final state depends on the chunking: %s", ch, d)
					}
				}
			}
		})
	}
}

func lineChunks(text string) []int {
	var out []int
	for _, l := range strings.SplitAfter(text, "\n") {
		if len(l) > 0 {
			out = append(out, len(l))
		}
	}
	return out
}

// TestStreamingShowsEarly checks that streaming is worth it: on the official examples
// fed line by line with one component per line, the client sees the surface grow, the
// root first.
func TestStreamingShowsEarly(t *testing.T) {
	for _, vr := range officialExamples(t, true) {
		b := NewBuilder(vr.cat)
		cl := clientOf(vr.cat, nil)
		cl.strict = true
		var sizes []int
		_, err := feed(b, vr.text, feedOpts{chunks: lineChunks(vr.text), onBatch: func(batch [][]byte) error {
			if err := stepCheck(cl)(batch); err != nil {
				return err
			}
			n := 0
			for _, s := range cl.surfaces {
				n += len(s.comps)
			}
			sizes = append(sizes, n)
			return nil
		}})
		if err != nil {
			t.Fatalf("%s: %v", vr.name, err)
		}
		if !sort.IntsAreSorted(sizes) {
			t.Errorf("%s: the surface shrank: %v", vr.name, sizes)
		}
	}
}

// TestParserChunking checks that the parser's segments do not depend on how the text is
// cut, on every corpus response and example, cut everywhere in two and in random pieces.
func TestParserChunking(t *testing.T) {
	var texts []string
	for _, vr := range officialExamples(t, true) {
		texts = append(texts, vr.text)
	}
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*", "*.txtar"))
	for _, f := range files {
		a, err := parseArchive(readFile(t, f))
		if err != nil {
			t.Fatal(err)
		}
		texts = append(texts, a.sections["response"])
	}
	rng := rand.New(rand.NewSource(2))
	for _, text := range texts {
		whole := parseAll(text, nil)
		for i := 0; i <= len(text); i += 1 + len(text)/97 {
			if d := sameSegments(parseSplit(text, i), whole); d != "" {
				t.Fatalf("cut at %d: %s\n%s", i, d, text)
			}
		}
		for k := 0; k < 5; k++ {
			if d := sameSegments(parseAll(text, randomChunks(rng, 40, 1+rng.Intn(20))), whole); d != "" {
				t.Fatalf("random pieces: %s\n%s", d, text)
			}
		}
	}
}

// parseAll parses text cut in pieces of the given sizes (cycled; nil: whole).
func parseAll(text string, chunks []int) []Segment {
	p := NewParser()
	var out []Segment
	keep := func(segs []Segment) {
		for _, s := range segs {
			s.Raw = bytes.Clone(s.Raw)
			out = append(out, s)
		}
	}
	for i, k := 0, 0; i < len(text); k++ {
		n := len(text) - i
		if len(chunks) > 0 && chunks[k%len(chunks)] < n {
			n = max(chunks[k%len(chunks)], 1)
		}
		keep(p.Push(text[i : i+n]))
		i += n
	}
	keep(p.Close())
	return out
}

func parseSplit(text string, at int) []Segment {
	p := NewParser()
	var out []Segment
	for _, part := range []string{text[:at], text[at:]} {
		for _, s := range p.Push(part) {
			s.Raw = bytes.Clone(s.Raw)
			out = append(out, s)
		}
	}
	return append(out, p.Close()...)
}

// TestCorpusSeedsFuzz writes nothing; it checks that the corpus and the examples load,
// which the fuzz targets use as seeds.
func TestOfficialExamplesLoad(t *testing.T) {
	if n := len(officialExamples(t, false)); n < 26 {
		t.Fatalf("%d examples", n)
	}
	if _, err := os.Stat(filepath.Join("testdata", "corpus")); err != nil {
		t.Fatal(err)
	}
}
