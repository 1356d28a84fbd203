package a2ui_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/policy"
)

// benchResponse is a model response writing one surface of 29 components (a column of
// cards, each a row of a text and a button), cut into chunks of 64 bytes as a model
// streams it.
func benchResponse() []string {
	var b strings.Builder
	b.WriteString("Here you are.\n```a2ui\n")
	b.WriteString(`{"createSurface":{"surfaceId":"s","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}` + "\n")
	b.WriteString(`{"updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Column","children":[`)
	for i := range 7 {
		if i > 0 {
			b.WriteString(",")
		}
		fmt.Fprintf(&b, `"card%d"`, i)
	}
	b.WriteString(`]}`)
	for i := range 7 {
		fmt.Fprintf(&b, `,{"id":"card%d","component":"Card","child":"row%d"}`, i, i)
		fmt.Fprintf(&b, `,{"id":"row%d","component":"Row","children":["text%d","button%d"]}`, i, i, i)
		fmt.Fprintf(&b, `,{"id":"text%d","component":"Text","text":"Item number %d, with a few words about it"}`, i, i)
		fmt.Fprintf(&b, `,{"id":"button%d","component":"Button","child":"text%d","action":{"event":{"name":"pick","context":{"item":%d}}}}`, i, i, i)
	}
	b.WriteString("]}}\n```\n")
	s := b.String()
	var chunks []string
	for len(s) > 64 {
		chunks = append(chunks, s[:64])
		s = s[64:]
	}
	return append(chunks, s)
}

// BenchmarkBuilder measures a turn's A2UI work: parsing a streamed response and
// building, checking and sending its surface component by component, without a UI
// policy and with the default one.
func BenchmarkBuilder(b *testing.B) {
	b.Run("schema", func(b *testing.B) { benchBuilder(b) })
	b.Run("policy", func(b *testing.B) { benchBuilder(b, a2ui.WithPolicy(policy.Default())) })
}

func benchBuilder(b *testing.B, opts ...a2ui.Option) {
	cat, err := a2ui.Builtin(a2ui.V09, a2ui.DefaultCatalogID(a2ui.V09))
	if err != nil {
		b.Fatal(err)
	}
	response := benchResponse()
	b.ReportAllocs()
	for b.Loop() {
		p, bl := a2ui.NewParser(), a2ui.NewBuilder(cat, opts...)
		sent := 0
		for _, chunk := range response {
			for _, seg := range p.Push(chunk) {
				if seg.Kind != a2ui.SegmentText {
					bl.Add(seg)
				}
			}
			sent += len(bl.Flush())
		}
		for _, seg := range p.Close() {
			bl.Add(seg)
		}
		msgs, violations := bl.End()
		if len(violations) > 0 || sent+len(msgs) < 10 {
			b.Fatalf("sent %d+%d, violations %v", sent, len(msgs), violations)
		}
	}
}
