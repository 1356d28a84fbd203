package a2ui

import (
	"strings"
	"testing"
)

// TestParserProse checks text that looks like JSON at the start of a prose line but is
// not: it stays prose, as it was written, however the text is cut.
func TestParserProse(t *testing.T) {
	for _, tc := range []struct {
		name, text string
	}{
		{"citation", "See the note.\n[1] is a citation, not a message.\n"},
		{"braces", "{x} means the set of x.\nDone."},
		{"indented braces", "Sets:\n  {a, b} and {c}\n"},
		{"unclosed brace", "{ an aside that never closes\nand more prose"},
		{"numbers", "[1, 2, 3] are the first numbers"},
		{"other code", "```go\nm := map[string]int{\"a\": 1}\n```\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, ch := range [][]int{nil, {1}, {2}, {5}} {
				var text strings.Builder
				for _, s := range parseAll(tc.text, ch) {
					if s.Kind != SegmentText {
						t.Fatalf("chunks %v: %s", ch, segString(s))
					}
					text.WriteString(s.Text)
				}
				if text.String() != tc.text {
					t.Fatalf("chunks %v: prose %q, want %q", ch, text.String(), tc.text)
				}
			}
		})
	}
}

// TestParserBlocks checks how the parser reads A2UI blocks: messages numbered in the
// order they were written, components as they close, what is not a message.
func TestParserBlocks(t *testing.T) {
	type seg struct {
		kind SegmentKind
		msg  int
		text string // prose, or a substring of an invalid segment's Err
	}
	for _, tc := range []struct {
		name string
		text string
		want []seg
	}{
		{
			"unclosed message before the closing fence",
			"Here:\n```a2ui\n{\"deleteSurface\":{\"surfaceId\":\"a\"}}\n{\"deleteSurface\":{\"surfaceId\":\"s\"}\n```\nThat is all.\n",
			[]seg{{SegmentText, 0, "Here:\n"}, {SegmentMessage, 0, ""}, {SegmentInvalid, 1, "ends before its JSON"}, {SegmentText, 0, "That is all.\n"}},
		},
		{
			"unclosed message at the end",
			"```a2ui\n{\"deleteSurface\":{\"surfaceId\":\"s\"}\n```",
			[]seg{{SegmentInvalid, 0, "ends before its JSON"}},
		},
		{
			"list with elements that are not objects",
			"```json\n[\"x\", {\"deleteSurface\":{\"surfaceId\":\"s\"}}, 3, [1]]\n```\n",
			[]seg{{SegmentInvalid, 0, "a message is a JSON object"}, {SegmentMessage, 1, ""}, {SegmentInvalid, 2, "a message is a JSON object"}, {SegmentInvalid, 3, "a message is a JSON object"}},
		},
		{
			"unbalanced bracket",
			"```a2ui\n{\"deleteSurface\":{\"surfaceId\":\"s\"]}\n{\"deleteSurface\":{\"surfaceId\":\"t\"}}\n```\n",
			[]seg{{SegmentInvalid, 0, "unbalanced"}, {SegmentMessage, 1, ""}},
		},
		{
			"prose in a block",
			"```a2ui\nfirst this:\n{\"deleteSurface\":{\"surfaceId\":\"s\"}}\n```\n",
			[]seg{{SegmentInvalid, 0, "not an A2UI message"}, {SegmentMessage, 1, ""}},
		},
		{
			"components before their surface id",
			"```a2ui\n{\"updateComponents\":{\"components\":[{\"id\":\"root\",\"component\":\"Text\",\"text\":\"x\"}],\"surfaceId\":\"s\"}}\n```\n",
			[]seg{{SegmentComponent, 0, ""}, {SegmentMessage, 0, ""}},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, ch := range [][]int{nil, {1}, {3}} {
				got := mergeText(parseAll(tc.text, ch))
				if len(got) != len(tc.want) {
					var sb strings.Builder
					for _, s := range got {
						sb.WriteString(segString(s) + "\n")
					}
					t.Fatalf("chunks %v: %d segments, want %d:\n%s", ch, len(got), len(tc.want), sb.String())
				}
				for i, w := range tc.want {
					g := got[i]
					ok := g.Kind == w.kind
					switch w.kind {
					case SegmentText:
						ok = ok && g.Text == w.text
					case SegmentInvalid:
						ok = ok && g.Msg == w.msg && strings.Contains(g.Err, w.text)
					default:
						ok = ok && g.Msg == w.msg
					}
					if !ok {
						t.Fatalf("chunks %v: segment %d is %s, want %+v", ch, i, segString(g), w)
					}
				}
			}
		})
	}
}

// TestParserComponentOp checks that components say which operation they belong to.
func TestParserComponentOp(t *testing.T) {
	segs := parseAll("```a2ui\n{\"surfaceUpdate\":{\"surfaceId\":\"s\",\"components\":[{\"id\":\"a\"}]}}\n{\"updateComponents\":{\"surfaceId\":\"s\",\"components\":[{\"id\":\"b\"}]}}\n```\n", nil)
	var ops []string
	for _, s := range segs {
		if s.Kind == SegmentComponent {
			ops = append(ops, s.Op+"/"+s.SurfaceID)
		}
	}
	if strings.Join(ops, ",") != "surfaceUpdate/s,updateComponents/s" {
		t.Fatalf("component segments: %v", ops)
	}
}
