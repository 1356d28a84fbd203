package a2ui

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/policytest"
	"github.com/genuiserver/genui/policy"
)

func messagesOf(v *policytest.Vector) []json.RawMessage {
	var out []json.RawMessage
	for _, m := range v.Messages() {
		out = append(out, json.RawMessage(m))
	}
	return out
}

// TestPolicyCorpusValidate judges each vector of the hostile corpus: valid without a
// policy, and a violation of the expected rule with it, whose message does not repeat
// what it refuses.
func TestPolicyCorpusValidate(t *testing.T) {
	p := policytest.Policy()
	n := 0
	for _, v := range policytest.Corpus() {
		if !v.A2UI() {
			continue
		}
		n++
		t.Run(v.Name, func(t *testing.T) {
			c := mustBuiltin(t, v.Version)
			msgs := messagesOf(&v)
			if vs := Validate(c, msgs); len(vs) > 0 && v.Code != CodeInaccessible {
				t.Fatalf("without a policy the vector is not valid: %v", vs)
			}
			vs := Validate(c, msgs, WithPolicy(p))
			found := false
			for _, x := range vs {
				if x.Code == v.Code {
					found = true
				}
				if strings.Contains(x.Message, policytest.Needle) {
					t.Errorf("the message repeats what it refuses: %s", x)
				}
			}
			if !found {
				t.Fatalf("no %s violation; got %v", v.Code, vs)
			}
		})
	}
	if n < 40 {
		t.Fatalf("the corpus has %d A2UI vectors, want at least 40", n)
	}
}

// TestPolicyCorpusBuilder streams each vector as a model writes it: nothing of what the
// policy refuses reaches the client, the builder reports it, the repair completes the
// surface with a safe image, and every message the client gets is valid A2UI.
func TestPolicyCorpusBuilder(t *testing.T) {
	p := policytest.Policy()
	for _, v := range policytest.Corpus() {
		if !v.A2UI() {
			continue
		}
		t.Run(v.Name, func(t *testing.T) {
			c := mustBuiltin(t, v.Version)
			b := NewBuilder(c, WithPolicy(p))
			var sent [][]byte
			feed := func(text string) []Violation {
				ps := NewParser()
				for _, chunk := range chunks(text, 7) {
					for _, seg := range ps.Push(chunk) {
						if seg.Kind != SegmentText {
							b.Add(seg)
						}
					}
					sent = append(sent, b.Flush()...)
				}
				for _, seg := range ps.Close() {
					if seg.Kind != SegmentText {
						b.Add(seg)
					}
				}
				out, vs := b.End()
				sent = append(sent, out...)
				return Violations(vs)
			}
			vs := feed(v.ModelText())
			found := false
			for _, x := range vs {
				found = found || x.Code == v.Code
			}
			if !found {
				t.Fatalf("no %s violation; got %v", v.Code, vs)
			}
			if vs := feed(v.Repair()); len(vs) > 0 {
				t.Fatalf("the repair broke rules: %v", vs)
			}
			all := string(joinLines(sent))
			if strings.Contains(all, policytest.Needle) {
				t.Fatalf("what the policy refuses reached the client:\n%s", all)
			}
			if !strings.Contains(all, policytest.Safe) {
				t.Fatalf("the repair's safe image did not reach the client:\n%s", all)
			}
			a2uitest.New(t, v.Version, nil).CheckAll(t, sent...)
		})
	}
}

func chunks(s string, n int) []string {
	var out []string
	for len(s) > n {
		out = append(out, s[:n])
		s = s[n:]
	}
	return append(out, s)
}

func joinLines(msgs [][]byte) []byte {
	var out []byte
	for _, m := range msgs {
		out = append(append(out, m...), '\n')
	}
	return out
}

func mustBuiltin(t *testing.T, version string) *catalog.Catalog {
	t.Helper()
	c, err := Builtin(version, DefaultCatalogID(version))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPolicyBenign passes what a model writes within the default policy: https images
// with descriptions, a labelled button, links in Markdown, openUrl to mailto:, relative
// URLs, data bound to images.
func TestPolicyBenign(t *testing.T) {
	c := mustBuiltin(t, V09)
	msgs := []json.RawMessage{
		json.RawMessage(`{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json","theme":{"iconUrl":"https://cdn.example.com/i.png"}}}`),
		json.RawMessage(`{"version":"v0.9","updateDataModel":{"surfaceId":"s","path":"/","value":{"pic":"https://cdn.example.com/a.png","note":"Time: 10:30","items":[{"src":"/local/b.png"}]}}}`),
		json.RawMessage(`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[` +
			`{"id":"root","component":"Column","children":["a","b","l","t","f","list"]},` +
			`{"id":"a","component":"Image","url":{"path":"/pic"},"description":"A"},` +
			`{"id":"b","component":"Button","child":"bl","action":{"functionCall":{"call":"openUrl","args":{"url":"mailto:help@example.com"}}}},` +
			`{"id":"bl","component":"Row","children":["bi","bt"]},{"id":"bi","component":"Icon","name":"mail"},{"id":"bt","component":"Text","text":"Mail us"},` +
			`{"id":"l","component":"Image","url":"img/logo.png","accessibility":{"label":"Logo"}},` +
			`{"id":"t","component":"Text","text":"See [the docs](https://docs.example.com/x)."},` +
			`{"id":"f","component":"TextField","label":"Name","value":{"path":"/name"}},` +
			`{"id":"list","component":"List","children":{"componentId":"row","path":"/items"}},` +
			`{"id":"row","component":"Image","url":{"path":"src"},"description":"item"}]}}`),
	}
	if vs := Validate(c, msgs, WithPolicy(policy.Default())); len(vs) > 0 {
		t.Fatalf("benign UI refused: %v", vs)
	}
}
