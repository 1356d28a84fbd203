package a2ui

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/internal/testkit/a2uitest"
)

// shapes are surfaces a model writes top-down, one component per line: a column of n
// texts, a column of n cards each holding a row of a text and a button, and a column of
// n rows each growing its own list of three texts.
var shapes = map[string]func(n int) []string{
	"column": func(n int) []string {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf("%q", fmt.Sprintf("t%d", i))
		}
		out := []string{`{"id":"root","component":"Column","children":[` + strings.Join(ids, ",") + `]}`}
		for i := range n {
			out = append(out, fmt.Sprintf(`{"id":"t%d","component":"Text","text":"Row number %d of the list"}`, i, i))
		}
		return out
	},
	"cards": func(n int) []string {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf(`"c%d"`, i)
		}
		out := []string{`{"id":"root","component":"Column","children":[` + strings.Join(ids, ",") + `]}`}
		for i := range n {
			out = append(out, fmt.Sprintf(`{"id":"c%d","component":"Card","child":"r%d"}`, i, i),
				fmt.Sprintf(`{"id":"r%d","component":"Row","children":["x%d","b%d"]}`, i, i, i),
				fmt.Sprintf(`{"id":"x%d","component":"Text","text":"Item %d"}`, i, i),
				fmt.Sprintf(`{"id":"b%d","component":"Button","child":"bl%d","action":{"event":{"name":"pick"}}}`, i, i),
				fmt.Sprintf(`{"id":"bl%d","component":"Text","text":"Pick"}`, i))
		}
		return out
	},
	"rows": func(n int) []string {
		ids := make([]string, n)
		for i := range ids {
			ids[i] = fmt.Sprintf(`"r%d"`, i)
		}
		out := []string{`{"id":"root","component":"Column","children":[` + strings.Join(ids, ",") + `]}`}
		for i := range n {
			out = append(out, fmt.Sprintf(`{"id":"r%d","component":"Row","children":["a%d","b%d","c%d"]}`, i, i, i, i))
			for _, x := range "abc" {
				out = append(out, fmt.Sprintf(`{"id":"%c%d","component":"Text","text":"%c"}`, x, i, x))
			}
		}
		return out
	},
}

// streamSurface feeds a surface as a model writes it, in chunks of size bytes a
// millisecond apart, flushing when due after each, and returns what the client received
// and how much of the model's text had come when the root first showed a child.
func streamSurface(t testing.TB, comps []string, size int) ([][]byte, float64) {
	t.Helper()
	c, err := Builtin(V09, DefaultCatalogID(V09))
	if err != nil {
		t.Fatal(err)
	}
	text := "```a2ui\n" + `{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}` + "\n" +
		`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[` + "\n" + strings.Join(comps, ",\n") + "\n]}}\n```\n"
	b, p := NewBuilder(c), NewParser()
	var sent [][]byte
	now := time.Unix(0, 0)
	total, first := len(text), -1
	for len(text) > 0 {
		now = now.Add(time.Millisecond)
		n := min(size, len(text))
		for _, seg := range p.Push(text[:n]) {
			if seg.Kind != SegmentText {
				b.Add(seg)
			}
		}
		text = text[n:]
		sent = append(sent, b.FlushDue(now)...)
		if first < 0 && firstShown(sent) < len(sent) {
			first = total - len(text)
		}
	}
	for _, seg := range p.Close() {
		b.Add(seg)
	}
	out, vs := b.End()
	if len(vs) > 0 {
		t.Fatalf("violations: %v", vs)
	}
	return append(sent, out...), float64(first) / float64(total)
}

func totalBytes(msgs [][]byte) int {
	n := 0
	for _, m := range msgs {
		n += len(m)
	}
	return n
}

// TestLinearOutput streams surfaces of growing lists as a model writes them: whatever the
// shape, the size and the chunking, the client receives at most three times the bytes of
// the surface's final state, every state it sees is valid, the final state is the whole
// surface, and the first components go out as soon as they are written.
func TestLinearOutput(t *testing.T) {
	for name, shape := range shapes {
		for _, n := range []int{10, 100, 1000} {
			for _, size := range []int{16, 64, 4096} {
				comps := shape(n)
				sent, first := streamSurface(t, comps, size)
				var raw []json.RawMessage
				for _, m := range sent {
					raw = append(raw, m)
				}
				final := 0
				for _, m := range Compact(V09, raw) {
					final += len(m) + len(`"version":"v0.9",`)
				}
				ratio := float64(totalBytes(sent)) / float64(final)
				if ratio > 3 {
					t.Errorf("%s of %d in chunks of %d: %d bytes sent for a final state of %d: %.1f×", name, n, size, totalBytes(sent), final, ratio)
				}
				// The final state holds every component the model wrote.
				s := NewSurfaces()
				for _, m := range sent {
					if _, err := s.Apply(m); err != nil {
						t.Fatal(err)
					}
				}
				if got := strings.Count(string(s.Messages("s")[1]), `"id":`); got != len(comps) {
					t.Errorf("%s of %d in chunks of %d: the client ends with %d of %d components", name, n, size, got, len(comps))
				}
				if n == 100 && size == 64 {
					a2uitest.New(t, V09, nil).CheckAll(t, sent...)
					// A child of the root shows as soon as its first item is written (the
					// root's line and the item's, then the chunk that ends it), as it did
					// when the builder flushed after every chunk.
					per := map[string]int{"column": 1, "cards": 5, "rows": 4}[name]
					early := len(strings.Join(comps[:1+per], ",\n")) + 200 + size
					if total := len(strings.Join(comps, ",\n")) + 200; first*float64(total) > float64(early) {
						t.Errorf("%s: the root first shows a child after %.1f%% of the model's text, not once its first item is written (%.1f%%)", name, 100*first, 100*float64(early)/float64(total))
					}
				}
			}
		}
	}
}

// firstShown returns the index of the first message in which the root has a child.
func firstShown(msgs [][]byte) int {
	for i, m := range msgs {
		var msg struct {
			UpdateComponents struct {
				Components []struct {
					ID       string `json:"id"`
					Children []any  `json:"children"`
				} `json:"components"`
			} `json:"updateComponents"`
		}
		_ = json.Unmarshal(m, &msg)
		for _, c := range msg.UpdateComponents.Components {
			if c.ID == "root" && len(c.Children) > 0 {
				return i
			}
		}
	}
	return len(msgs)
}
