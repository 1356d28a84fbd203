package longlist

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/genuiserver/genui/a2ui"
)

// Text returns what a model writes for a v0.9 surface "s" of the basic catalog holding
// a Column "root" of n Text rows, top-down, one component per line, in an ```a2ui block
// after a line of prose: the root first, listing every row's id.
func Text(n int) string {
	var b strings.Builder
	b.WriteString("Here is the list.\n```a2ui\n")
	b.WriteString(`{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}` + "\n")
	b.WriteString(`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[` + "\n" + `{"id":"root","component":"Column","children":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `"r%d"`, i)
	}
	b.WriteString("]}")
	for i := range n {
		fmt.Fprintf(&b, ",\n{\"id\":\"r%d\",\"component\":\"Text\",\"text\":\"Row %d of the list\"}", i, i)
	}
	b.WriteString("\n]}}\n```\n")
	return b.String()
}

// Final returns the size of the final state of a turn's v0.9 messages (a2ui.Final: what
// a result that hands the turn over whole carries) and the Text rows it holds.
func Final(msgs [][]byte) (size, rows int) {
	raw := make([]json.RawMessage, len(msgs))
	for i, m := range msgs {
		raw[i] = m
	}
	for _, m := range a2ui.Final(a2ui.V09, raw) {
		size += len(m)
		rows += strings.Count(string(m), `"component":"Text"`)
	}
	return size, rows
}
