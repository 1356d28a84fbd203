package a2ui

import (
	"strings"
	"testing"

	"github.com/genuiserver/genui/internal/testkit/a2uitest"
)

// turn feeds the responses of one turn (a response, then the model's repairs) to one
// builder, checking the client's surfaces after every flush, and returns what each
// response emitted and the violations of each.
func turn(t *testing.T, version string, responses ...string) (emitted [][]string, violations [][]string) {
	t.Helper()
	c, err := Builtin(version, DefaultCatalogID(version))
	if err != nil {
		t.Fatal(err)
	}
	b := NewBuilder(c)
	cl := clientOf(c, a2uitest.New(t, version, nil))
	cl.strict = true
	for i, text := range responses {
		run, err := feed(b, text, feedOpts{chunks: []int{7}, onBatch: stepCheck(cl)})
		if err != nil {
			t.Fatalf("response %d: %v", i, err)
		}
		var out []string
		for _, m := range run.out {
			out = append(out, string(m))
		}
		emitted = append(emitted, out)
		violations = append(violations, violationStrings(run.vs))
	}
	return emitted, violations
}

func block(msgs ...string) string {
	return "```a2ui\n" + strings.Join(msgs, "\n") + "\n```\n"
}

const create09 = `{"createSurface":{"surfaceId":"s","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}`

// TestRepairCompletes checks a turn whose first response breaks rules and whose second
// repairs them: what waited for references goes out once the repair completes it, and
// the violations of the first response are not reported again.
func TestRepairCompletes(t *testing.T) {
	emitted, vs := turn(t, V09,
		block(create09,
			`{"updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Column","children":["t","c"]},{"id":"t","component":"Text","text":5},{"id":"c","component":"Card","child":"x"},{"id":"orphan","component":"Text","text":"?"}]}}`),
		block(`{"updateComponents":{"surfaceId":"s","components":[{"id":"t","component":"Text","text":"five"},{"id":"x","component":"Text","text":"x"}]}}`),
	)
	if len(vs[0]) != 3 || !strings.Contains(strings.Join(vs[0], "\n"), `"x"`) || !strings.Contains(strings.Join(vs[0], "\n"), "orphan") {
		t.Fatalf("first response: %q", vs[0])
	}
	if len(vs[1]) != 0 {
		t.Fatalf("the repair: %q", vs[1])
	}
	last := emitted[1][len(emitted[1])-1]
	if !strings.Contains(last, `"children":["t","c"]`) {
		t.Fatalf("the root does not go out with both children: %s", strings.Join(emitted[1], "\n"))
	}
}

// TestRepairDropsWhatHadNoSurface checks that components written for a surface that was
// never created do not outlive their response: the violation asks for them again.
func TestRepairDropsWhatHadNoSurface(t *testing.T) {
	emitted, vs := turn(t, V09,
		block(`{"createSurface":{"surfaceId":"s","catalogId":"https://example.com/other.json"}}`,
			`{"updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Text","text":"hi"}]}}`),
		block(create09),
		block(`{"updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Text","text":"hi"}]}}`),
	)
	if len(vs[0]) != 2 || !strings.Contains(vs[0][1], "write them again after a valid createSurface") {
		t.Fatalf("first response: %q", vs[0])
	}
	if len(emitted[1]) != 1 || !strings.Contains(emitted[1][0], "createSurface") || len(vs[1]) != 0 {
		t.Fatalf("second response: %q %q", emitted[1], vs[1])
	}
	if len(emitted[2]) != 1 || len(vs[2]) != 0 {
		t.Fatalf("third response: %q %q", emitted[2], vs[2])
	}
}

// TestRepairBeginRendering checks v0.8: a beginRendering whose root never came waits
// across responses for the repair that writes it, and is then sent once.
func TestRepairBeginRendering(t *testing.T) {
	emitted, vs := turn(t, V08,
		block(`{"beginRendering":{"surfaceId":"s","root":"root"}}`,
			`{"surfaceUpdate":{"surfaceId":"s","components":[{"id":"main","component":{"Text":{"text":{"literalString":"hi"}}}}]}}`),
		block(`{"surfaceUpdate":{"surfaceId":"s","components":[{"id":"root","component":{"Column":{"children":{"explicitList":["main"]}}}}]}}`),
	)
	if len(emitted[0]) != 0 || len(vs[0]) != 1 || !strings.Contains(vs[0][0], `renders from "root"`) {
		t.Fatalf("first response: %q %q", emitted[0], vs[0])
	}
	if len(vs[1]) != 0 || len(emitted[1]) != 2 || !strings.Contains(emitted[1][1], "beginRendering") {
		t.Fatalf("the repair: %q %q", emitted[1], vs[1])
	}
}

// TestTemplateAndOutside checks a component used both as a template and outside one,
// whose children differ in each place: the client gets the version valid in both.
func TestTemplateAndOutside(t *testing.T) {
	emitted, vs := turn(t, V09, block(create09,
		`{"updateDataModel":{"surfaceId":"s","path":"/items","value":[{"name":"a"}]}}`,
		`{"updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Column","children":["list","row"]},{"id":"list","component":"List","children":{"componentId":"row","path":"/items"}},{"id":"row","component":"Row","children":["fixed","name"]},{"id":"fixed","component":"Text","text":"•"},{"id":"name","component":"Text","text":{"path":"name"}}]}}`))
	if len(vs[0]) != 1 || !strings.Contains(vs[0][0], "relative data path") {
		t.Fatalf("violations: %q", vs[0])
	}
	all := strings.Join(emitted[0], "\n")
	if !strings.Contains(all, `"children":["fixed"]`) || strings.Contains(all, `"id":"name"`) {
		t.Fatalf("emitted:\n%s", all)
	}
}
