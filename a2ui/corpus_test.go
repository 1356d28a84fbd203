package a2ui

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
)

// TestCorpus runs the validator corpus, testdata/corpus/<version>/*.txtar. Each case is a
// txtar file:
//
//	version: v0.9            the protocol version (required)
//	catalog: basic           the client's catalog: basic, flutter, minimal, standard, a
//	                         catalog id, or the id of the inline "catalog.json" section
//	feed: lines              optional: the response arrives line by line (default: whole)
//	-- catalog.json --       optional: an inline catalog document
//	-- shown --              optional: messages the client already has, one per line
//	-- response --           the model's response text
//	-- violations --         "<pointer> <message substring>" per line; none if absent
//	-- emitted --            optional: the messages the client receives, one per line
//
// Every case is also fed in many chunkings and with a flush after every segment: the
// violations must not change, every message the builder emits must validate against the
// official schema of its version and catalog, the client's surfaces must be valid after
// every flush, and all chunkings must leave the client in the same state. When the
// response has no violation, that state must be the surface the model wrote.
func TestCorpus(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join("testdata", "corpus", "*", "*.txtar"))
	if len(files) == 0 {
		t.Fatal("no corpus files")
	}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(filepath.Dir(f))+"/"+filepath.Base(f), ".txtar")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			runCase(t, f)
		})
	}
}

// corpusCase is a case file, read.
type corpusCase struct {
	version  string
	cat      *catalog.Catalog
	inline   []byte
	shown    [][]byte
	response string
	feed     string
	want     []wantViolation
	emitted  []string
	hasEmit  bool
}

type wantViolation struct{ ptr, substr string }

func loadCase(t testing.TB, path string) *corpusCase {
	t.Helper()
	a, err := parseArchive(readFile(t, path))
	if err != nil {
		t.Fatal(err)
	}
	cc := &corpusCase{version: a.header["version"], feed: a.header["feed"]}
	if cc.version != V09 && cc.version != V08 {
		t.Fatalf("version: %q", cc.version)
	}
	catName := a.header["catalog"]
	cc.cat, cc.inline, err = caseCatalog(cc.version, catName, a.sections["catalog.json"])
	if err != nil {
		t.Fatalf("catalog %q: %v", catName, err)
	}
	for _, l := range lines(a.sections["shown"]) {
		cc.shown = append(cc.shown, []byte(l))
	}
	resp, ok := a.sections["response"]
	if !ok {
		t.Fatal("no response section")
	}
	cc.response = resp
	for _, l := range lines(a.sections["violations"]) {
		ptr, sub, _ := strings.Cut(l, " ")
		cc.want = append(cc.want, wantViolation{ptr, strings.TrimSpace(sub)})
	}
	cc.emitted, cc.hasEmit = lines(a.sections["emitted"]), a.sections["emitted"] != "" || contains(a.order, "emitted")
	return cc
}

// start returns a builder and a client holding what the case's client shows, whose
// messages are checked against the official schemas by schema (if not nil).
func (cc *corpusCase) start(t testing.TB, schema *a2uitest.Validator) (*Builder, *client) {
	t.Helper()
	b := NewBuilder(cc.cat)
	v := clientOf(cc.cat, schema)
	for i, m := range cc.shown {
		if err := b.Shown(m); err != nil {
			t.Fatalf("shown %d: %v", i, err)
		}
		if err := v.apply(withVersion(cc.version, m)); err != nil {
			t.Fatalf("shown %d is not what a client can hold: %v", i, err)
		}
	}
	if err := v.check(); err != nil {
		t.Fatalf("the shown messages leave an invalid surface: %v", err)
	}
	v.strict = true
	return b, v
}

func runCase(t *testing.T, path string) {
	cc := loadCase(t, path)
	var chunks []int
	if cc.feed == "lines" {
		for _, l := range strings.SplitAfter(cc.response, "\n") {
			chunks = append(chunks, len(l))
		}
	}
	schema := newValidator(t, cc.version, cc.cat.A2UI.ID, cc.inline)
	b, cl := cc.start(t, schema)
	expected := cl.clone()
	run, err := feed(b, cc.response, feedOpts{chunks: chunks, onBatch: stepCheck(cl)})
	if err != nil {
		t.Fatalf("%v\nemitted so far:\n%s", err, joinMsgs(run.out))
	}
	checkViolations(t, run.vs, cc.want)
	if cc.hasEmit {
		if d := diffMessages(run.out, cc.emitted); d != "" {
			t.Errorf("emitted messages: %s\ngot:\n%s", d, joinMsgs(run.out))
		}
	}
	if len(run.vs) == 0 {
		// The client holds the surface the model wrote.
		if err := applyWritten(expected, cc.version, cc.cat.A2UI.ID, run.segs); err != nil {
			t.Fatalf("the response as written does not apply: %v", err)
		}
		if d := cl.diff(expected); d != "" {
			t.Errorf("the client does not hold what the model wrote: %s", d)
		}
	}
	// Other chunkings, and a flush after every segment: the same violations, a valid
	// surface at every step, the same final state.
	for name, ch := range chunkings(int64(len(cc.response))) {
		for _, each := range []bool{false, true} {
			b2, cl2 := cc.start(t, schema)
			r2, err := feed(b2, cc.response, feedOpts{chunks: ch, flushEach: each, onBatch: stepCheck(cl2)})
			if err != nil {
				t.Fatalf("chunks %s flushEach=%v: %v\nemitted so far:\n%s", name, each, err, joinMsgs(r2.out))
			}
			if a, w := violationStrings(r2.vs), violationStrings(run.vs); !reflect.DeepEqual(a, w) {
				t.Errorf("chunks %s flushEach=%v: violations\n%s\nwant (whole)\n%s", name, each, strings.Join(a, "\n"), strings.Join(w, "\n"))
			}
			if d := cl2.diff(cl); d != "" {
				t.Errorf("chunks %s flushEach=%v: final state differs from the whole response's: %s", name, each, d)
			}
			if d := sameSegments(r2.segs, run.segs); d != "" {
				t.Errorf("chunks %s: parser segments differ: %s", name, d)
			}
		}
	}
}

// stepCheck applies each batch to the client and checks that it holds valid surfaces.
func stepCheck(cl *client) func([][]byte) error {
	return func(batch [][]byte) error {
		for _, m := range batch {
			if err := cl.apply(m); err != nil {
				return fmt.Errorf("emitted %s: %v", m, err)
			}
		}
		if err := cl.check(); err != nil {
			return fmt.Errorf("after a flush: %v", err)
		}
		return nil
	}
}

// applyWritten applies the messages the model wrote, as written (with "version", and the
// catalog id the client advertised), to a client. v0.9 messages for a surface written
// before its createSurface wait for it, as the builder has them wait.
func applyWritten(cl *client, version, catalogID string, segs []Segment) error {
	waiting := map[string][][]byte{}
	for _, s := range segs {
		if s.Kind != SegmentMessage {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(s.Raw, &m); err != nil {
			return err
		}
		for _, op := range []string{CreateSurface, BeginRendering} {
			if body := asMap(m[op]); body != nil {
				body["catalogId"] = catalogID
			}
		}
		raw, _ := json.Marshal(m)
		var sid string
		for _, op := range []string{UpdateComponents, UpdateDataModel, CreateSurface} {
			if body := asMap(m[op]); body != nil {
				sid, _ = body["surfaceId"].(string)
			}
		}
		if version == V09 && sid != "" && cl.surfaces[sid] == nil && m[CreateSurface] == nil {
			waiting[sid] = append(waiting[sid], raw)
			continue
		}
		if err := cl.apply(withVersion(version, raw)); err != nil {
			return err
		}
		if m[CreateSurface] != nil {
			for _, w := range waiting[sid] {
				if err := cl.apply(withVersion(version, w)); err != nil {
					return err
				}
			}
			delete(waiting, sid)
		}
	}
	return nil
}

func violationStrings(vs []catalog.Violation) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = v.String()
	}
	sort.Strings(out)
	return out
}

func checkViolations(t *testing.T, got []catalog.Violation, want []wantViolation) {
	t.Helper()
	used := make([]bool, len(got))
	for _, w := range want {
		found := false
		for i, v := range got {
			if !used[i] && v.Pointer == w.ptr && strings.Contains(v.Message, w.substr) {
				used[i], found = true, true
				break
			}
		}
		if !found {
			t.Errorf("missing violation %s %q", w.ptr, w.substr)
		}
	}
	for i, v := range got {
		if !used[i] {
			t.Errorf("unexpected violation %s", v)
		}
	}
	if t.Failed() {
		t.Logf("violations:\n%s", strings.Join(violationStrings(got), "\n"))
	}
}

func diffMessages(got [][]byte, want []string) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d messages, want %d:\n%s", len(got), len(want), strings.Join(want, "\n"))
	}
	for i := range got {
		var a, b any
		if err := json.Unmarshal(got[i], &a); err != nil {
			return fmt.Sprintf("message %d: %v", i, err)
		}
		if err := json.Unmarshal([]byte(want[i]), &b); err != nil {
			return fmt.Sprintf("want %d: %v", i, err)
		}
		if !reflect.DeepEqual(a, b) {
			return fmt.Sprintf("message %d:\n%s\nwant\n%s", i, got[i], want[i])
		}
	}
	return ""
}

func joinMsgs(ms [][]byte) string {
	var sb strings.Builder
	for _, m := range ms {
		sb.Write(m)
		sb.WriteByte('\n')
	}
	return sb.String()
}
