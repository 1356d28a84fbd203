package a2ui

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
)

// SegmentKind is what a [Segment] of model text holds.
type SegmentKind uint8

// Kinds of segments.
const (
	// SegmentText is prose for the user.
	SegmentText SegmentKind = iota
	// SegmentComponent is one component of an updateComponents (v0.9) or surfaceUpdate
	// (v0.8) message, as soon as it is complete, before its message is.
	SegmentComponent
	// SegmentMessage is one complete A2UI message.
	SegmentMessage
	// SegmentInvalid is text in an A2UI block that is not a JSON message.
	SegmentInvalid
)

// Segment is a piece of a model response: prose, or an A2UI component or message.
type Segment struct {
	Kind SegmentKind
	// Text is the prose (SegmentText) or the offending text (SegmentInvalid).
	Text string
	// Msg is the position of the message in the response, from 0 (components,
	// messages and invalid text that stands for one).
	Msg int
	// Index is the component's position in its message's component list.
	Index int
	// SurfaceID is the surface of a component's message when it came before the
	// components, else "".
	SurfaceID string
	// Op is the operation of a component's message: updateComponents (v0.9) or
	// surfaceUpdate (v0.8).
	Op string
	// Raw is the JSON of the component or message.
	Raw []byte
	// Err says what is wrong with a SegmentInvalid.
	Err string
}

// maxValue bounds one JSON value of a response (a message, or a list of them).
const maxValue = 4 << 20

// Parser reads a model response as it streams: prose, and A2UI messages written as JSON
// objects, one after another (JSON Lines) or in a JSON array, inside an
// <a2ui-json>…</a2ui-json> block (the format the A2UI agent SDKs prompt for, anywhere in
// a line, a fenced block inside it allowed), inside a fenced code block (```a2ui,
// ```json, ```jsonl or a bare ```) or on lines of their own. It yields each component of
// a component update as soon as its JSON object closes, and each message when it closes,
// so that a surface can be shown while the model is still writing it. Prose is yielded as
// it comes, but for what may still turn out to open a block (part of an <a2ui-json> tag,
// a line that may be a fence). A Parser is not safe for concurrent use.
type Parser struct {
	mode     mode
	line     strings.Builder // prose: the current line, held while it may open a block
	lineOut  bool            // part of the current prose line was already emitted
	fence    string          // the opening fence of the block we are in ("```", "~~~")
	other    bool            // the block is code of another language: prose
	skipEOL  bool            // drop the blanks and newline that end the line of a value
	wasProse bool            // the value just closed was prose
	tag      bool            // the block is an <a2ui-json> block: fence is its closing tag
	msgs     int             // messages started so far
	out      []Segment

	// The JSON value being read.
	buf       []byte
	stack     []frame
	inString  bool
	escaped   bool
	inBlock   bool   // the value is inside a fenced block
	lead      string // outside blocks: the blanks before the value on its line
	lineAt    int    // offset in buf of the current line of the value
	cur       int    // the number of the message being read, or -1
	yielded   bool   // segments were read from the value
	objects   int    // messages (objects) of the value so far
	elemStart int    // a list of messages: offset of an element that is not an object, or -1
	elemMsg   int    // its number
	junk      strings.Builder
}

type mode uint8

const (
	modeProse mode = iota // outside any block
	modeBlock             // inside an A2UI block, between values
	modeJSON              // inside a JSON value
	modeJunk              // inside an A2UI block, reading a line that is not JSON
)

// frame is one open object or array of the JSON value being read.
type frame struct {
	array     bool
	start     int    // offset of its opening bracket in buf
	key       string // objects: the last key read
	expectKey bool   // objects: the next string is a key
	keyStart  int    // objects: offset of the key string being read, or -1
	valStart  int    // objects: offset of the string value being read, or -1
	index     int    // arrays: the number of elements begun
	await     bool   // arrays: the next byte that is not a space begins an element
	surface   string // the operation object of a message: its surfaceId, once read
}

// NewParser returns a parser at the start of a response.
func NewParser() *Parser { return &Parser{} }

// Push reads the next piece of the response and returns the segments it completes.
func (p *Parser) Push(text string) []Segment {
	p.out = p.out[:0]
	for i := 0; i < len(text); i++ {
		p.byte(text[i])
	}
	if p.mode == modeProse {
		p.flushProse(false)
	}
	return p.out
}

// Close ends the response and returns what remains: held prose, and an invalid segment
// for a message cut off before its end.
func (p *Parser) Close() []Segment {
	p.out = p.out[:0]
	switch p.mode {
	case modeProse:
		p.flushProse(true)
	case modeJSON:
		value := p.buf
		if p.inBlock && p.fence != "" && isFence(p.buf[p.lineAt:], p.fence) {
			value = p.buf[:p.lineAt]
		}
		p.unfinished(value)
	case modeJunk:
		p.endJunk()
	}
	p.mode = modeProse
	return p.out
}

func (p *Parser) byte(c byte) {
	switch p.mode {
	case modeProse:
		p.prose(c)
	case modeBlock:
		p.block(c)
	case modeJSON:
		p.json(c)
	case modeJunk:
		if c == '\n' {
			p.endJunk()
			return
		}
		p.junk.WriteByte(c)
		if c == '>' && p.tag && strings.HasSuffix(p.junk.String(), closeTag) {
			// The closing tag ends the block, and the junk before it.
			s := p.junk.String()
			p.junk.Reset()
			p.junk.WriteString(s[:len(s)-len(closeTag)])
			p.endJunk()
			p.closeTag()
		}
	}
}

// closeTag ends an <a2ui-json> block: what follows the tag is prose, on a line part of
// which was shown.
func (p *Parser) closeTag() {
	p.line.Reset()
	p.mode, p.fence, p.tag, p.lineOut = modeProse, "", false, true
}

// prose reads text outside A2UI blocks, line by line: a line that opens a fence or
// starts a JSON object or array is held until it is known.
func (p *Parser) prose(c byte) {
	if p.skipEOL {
		switch c {
		case ' ', '\t', '\r':
			return
		case '\n':
			p.skipEOL = false
			return
		}
		p.skipEOL = false
	}
	p.line.WriteByte(c)
	if c == '>' && !p.other && strings.HasSuffix(p.line.String(), openTag) {
		line := p.line.String()
		p.emitText(line[:len(line)-len(openTag)])
		p.line.Reset()
		p.mode, p.fence, p.tag, p.lineOut = modeBlock, closeTag, true, true
		return
	}
	if c != '\n' {
		if !p.lineOut && p.other {
			return // code of another language: only its closing fence matters
		}
		if !p.lineOut {
			t := strings.TrimLeft(p.line.String(), " \t")
			switch {
			case t == "":
				return
			case t[0] == '{' || t[0] == '[':
				if !p.other {
					lead := p.line.String()
					p.line.Reset()
					p.startJSON(c, false)
					p.lead = lead[:len(lead)-1]
				}
				return
			case strings.HasPrefix("```", t) || strings.HasPrefix("~~~", t) || strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~"):
				return // may be a fence: wait for the line
			}
		}
		return
	}
	// A whole line. Only spaces and tabs may indent a fence, as when the line was read
	// in pieces.
	line := p.line.String()
	t := strings.TrimRightFunc(strings.TrimLeft(line, " \t"), unicode.IsSpace)
	if !p.lineOut {
		switch {
		case p.fence == "" && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")):
			fence, info := t[:3], strings.ToLower(strings.TrimSpace(t[3:]))
			p.line.Reset()
			p.fence = fence
			switch info {
			case "", "a2ui", "json", "jsonl", "ndjson", "a2ui-json":
				p.mode = modeBlock
			default:
				p.other = true // shown as it is
				p.emitText(line)
			}
			return
		case p.fence != "" && p.other && strings.HasPrefix(t, p.fence):
			p.fence, p.other = "", false
			p.line.Reset()
			p.emitText(line)
			return
		}
	}
	p.line.Reset()
	p.lineOut = false
	p.emitText(line)
}

// The tags of the A2UI agent SDKs' inference format.
const (
	openTag  = "<a2ui-json>"
	closeTag = "</a2ui-json>"
)

// tagStart is the length of the longest end of s that may begin an <a2ui-json> tag.
func tagStart(s string) int {
	for k := min(len(s), len(openTag)-1); k > 0; k-- {
		if strings.HasPrefix(openTag, s[len(s)-k:]) {
			return k
		}
	}
	return 0
}

// flushProse emits the held part of the current prose line that cannot open a block.
func (p *Parser) flushProse(final bool) {
	s := p.line.String()
	if s == "" {
		return
	}
	if k := tagStart(s); k > 0 && !final && !p.other && k < len(s) {
		// Emit what comes before a tag that may be opening; hold the tag.
		p.line.Reset()
		p.line.WriteString(s[len(s)-k:])
		p.lineOut = true
		p.emitText(s[:len(s)-k])
		return
	} else if k > 0 && !final && !p.other {
		return
	}
	t := strings.TrimLeft(s, " \t")
	if !final && !p.lineOut && (t == "" || strings.HasPrefix("```", t) || strings.HasPrefix("~~~", t) ||
		strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~")) {
		return
	}
	p.line.Reset()
	p.lineOut = !final
	p.emitText(s)
}

func (p *Parser) emitText(s string) {
	if s == "" {
		return
	}
	if n := len(p.out); n > 0 && p.out[n-1].Kind == SegmentText {
		p.out[n-1].Text += s
		return
	}
	p.out = append(p.out, Segment{Kind: SegmentText, Text: s})
}

// block reads an A2UI block between values.
func (p *Parser) block(c byte) {
	switch {
	case c == '\n' || c == ' ' || c == '\t' || c == '\r' || c == ',':
		if c == '\n' {
			p.line.Reset()
		}
		return
	case c == '{' || c == '[':
		p.line.Reset()
		p.startJSON(c, true)
		return
	}
	p.line.WriteByte(c)
	t := p.line.String()
	if strings.HasPrefix(p.fence, t) {
		switch {
		case t == p.fence && p.tag: // the closing tag: prose goes on right after it
			p.closeTag()
		case t == p.fence: // the closing fence: the rest of its line is dropped
			p.line.Reset()
			p.mode = modeJunk
			p.junk.Reset()
			p.junk.WriteString(junkClose)
		}
		return
	}
	if p.tag && (strings.HasPrefix(t, "```") || strings.HasPrefix(t, "~~~") || strings.HasPrefix("```", t) || strings.HasPrefix("~~~", t)) {
		// A fence inside an <a2ui-json> block: its line is dropped.
		if len(t) >= 3 {
			p.line.Reset()
			p.mode = modeJunk
			p.junk.Reset()
			p.junk.WriteString(junkRest)
		}
		return
	}
	p.mode = modeJunk
	p.junk.Reset()
	p.junk.WriteString(t)
	p.line.Reset()
}

func (p *Parser) endJunk() {
	s := p.junk.String()
	p.junk.Reset()
	p.mode = modeBlock
	if strings.HasPrefix(s, junkClose) {
		p.fence = ""
		p.mode = modeProse
		p.skipEOL = true
		return
	}
	if strings.HasPrefix(s, junkRest) {
		return
	}
	if strings.TrimSpace(s) != "" {
		p.invalid(s, "not an A2UI message: inside an A2UI block, write only JSON messages")
	}
}

// invalid yields text that stands for a message of its own and is not one.
func (p *Parser) invalid(text, why string) {
	p.out = append(p.out, Segment{Kind: SegmentInvalid, Text: text, Msg: p.msgs, Err: why})
	p.msgs++
}

// invalidValue yields the JSON value being read, which is not a message: as the message
// it began, if it began one, else as a message of its own.
func (p *Parser) invalidValue(text, why string) {
	if p.cur >= 0 {
		p.out = append(p.out, Segment{Kind: SegmentInvalid, Text: text, Msg: p.cur, Err: why})
		p.cur = -1
		return
	}
	p.invalid(text, why)
}

// unfinished handles a JSON value that ends before its JSON does: inside a block it is an
// invalid message; outside blocks it was prose, unless components were read from it.
func (p *Parser) unfinished(value []byte) {
	if p.inBlock || p.yielded {
		p.invalidValue(string(value), "the message ends before its JSON does: a message is one complete JSON object")
		return
	}
	p.asProse(value)
}

// asProse gives back a value read outside blocks as the prose it turned out to be.
func (p *Parser) asProse(value []byte) {
	if p.cur >= 0 {
		p.msgs-- // the message it seemed to begin
		p.cur = -1
	}
	p.emitText(p.lead + string(value))
	p.lead = ""
}

func (p *Parser) startJSON(c byte, inBlock bool) {
	p.mode = modeJSON
	p.inBlock = inBlock
	p.buf = p.buf[:0]
	p.stack = p.stack[:0]
	p.inString, p.escaped = false, false
	p.lead, p.lineAt, p.cur, p.yielded, p.objects, p.elemStart = "", 0, -1, false, 0, -1
	p.json(c)
}

// msgDepth is the depth of the frames of messages: 1 when the value is a message, 2 when
// it is a list of messages.
func (p *Parser) msgDepth() int {
	if len(p.stack) > 0 && p.stack[0].array {
		return 2
	}
	return 1
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

func (p *Parser) json(c byte) {
	if len(p.buf) >= maxValue {
		p.bad(fmt.Sprintf("a JSON value longer than %d bytes", maxValue))
		return
	}
	off := len(p.buf)
	p.buf = append(p.buf, c)
	if c == '\n' {
		// JSON strings hold no raw line breaks: a line of the value that is the
		// block's closing fence ends the block, and the value with it.
		if p.inBlock && p.fence != "" && isFence(p.buf[p.lineAt:off], p.fence) {
			p.unfinished(p.buf[:p.lineAt])
			p.fence = ""
			p.endJSON(false)
			p.mode = modeProse
			return
		}
		p.lineAt = off + 1
	}
	if c == '>' && p.tag && !p.inString && len(p.buf) >= len(closeTag) && string(p.buf[len(p.buf)-len(closeTag):]) == closeTag {
		// The block closes inside the value: the value is cut off.
		p.unfinished(p.buf[:len(p.buf)-len(closeTag)])
		p.endJSON(false)
		p.closeTag()
		return
	}
	if p.inString {
		switch {
		case p.escaped:
			p.escaped = false
		case c == '\\':
			p.escaped = true
		case c == '"':
			p.inString = false
			p.stringEnd(off)
		}
		return
	}
	n := len(p.stack)
	if n > 0 && p.stack[n-1].array && p.stack[n-1].await && !isSpace(c) && c != ']' && c != ',' {
		p.stack[n-1].index++
		p.stack[n-1].await = false
		if n == 1 && c != '{' && c != '[' && p.inBlock {
			// An element of a list of messages that is not an object.
			p.elemStart, p.elemMsg = off, p.msgs
			p.msgs++
		}
	}
	if n == 1 && p.elemStart >= 0 && (c == ',' || c == ']') && !p.inString {
		p.out = append(p.out, Segment{Kind: SegmentInvalid, Text: strings.TrimSpace(string(p.buf[p.elemStart:off])), Msg: p.elemMsg,
			Err: "not an A2UI message: a message is a JSON object"})
		p.elemStart = -1
	}
	switch c {
	case '"':
		p.inString = true
		if n > 0 && !p.stack[n-1].array {
			if f := &p.stack[n-1]; f.expectKey {
				f.keyStart = off
			} else {
				f.valStart = off
			}
		}
	case '{', '[':
		p.stack = append(p.stack, frame{array: c == '[', start: off, expectKey: c == '{', await: c == '[', keyStart: -1, valStart: -1})
		if c == '{' && len(p.stack) == p.msgDepth() {
			p.msgs++
			p.cur = p.msgs - 1
			p.objects++
		}
	case '}', ']':
		if n == 0 || p.stack[n-1].array != (c == ']') {
			p.bad("not valid JSON: unbalanced " + string(c))
			return
		}
		f := p.stack[n-1]
		p.stack = p.stack[:n-1]
		p.wasProse = false
		p.closed(&f, off)
		if len(p.stack) == 0 {
			p.endJSON(p.wasProse)
		}
	case ',':
		if n > 0 {
			if f := &p.stack[n-1]; f.array {
				f.await = true
			} else {
				f.expectKey = true
			}
		}
	}
}

// bad gives up on the JSON value being read: inside an A2UI block it is an invalid
// message; on a line of prose it was prose after all.
func (p *Parser) bad(why string) {
	if p.inBlock || p.yielded {
		p.invalidValue(string(p.buf), why)
		p.endJSON(false)
		if p.inBlock {
			// The rest of its line belongs to the broken message.
			p.mode = modeJunk
			p.junk.Reset()
			p.junk.WriteString(junkRest)
		}
		return
	}
	p.asProse(p.buf)
	p.endJSON(true)
}

// Markers of what the junk of a block's line is: the rest of the closing fence's line,
// the rest of a broken message's line.
const (
	junkClose = "\x00close"
	junkRest  = "\x00rest"
)

// isFence reports whether a line is the closing fence of a block.
func isFence(line []byte, fence string) bool {
	t := strings.TrimSpace(string(line))
	return strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == ""
}

// stringEnd handles the end of a string whose closing quote is at off.
func (p *Parser) stringEnd(off int) {
	n := len(p.stack)
	if n == 0 || p.stack[n-1].array {
		return
	}
	f := &p.stack[n-1]
	if f.expectKey && f.keyStart >= 0 {
		f.key = ""
		_ = json.Unmarshal(p.buf[f.keyStart:off+1], &f.key)
		f.keyStart, f.expectKey = -1, false
		return
	}
	if f.valStart >= 0 {
		// The surfaceId of a message's operation, read before its components.
		if n == p.msgDepth()+1 && f.key == "surfaceId" {
			_ = json.Unmarshal(p.buf[f.valStart:off+1], &f.surface)
		}
		f.valStart = -1
	}
}

// closed handles the end of frame f, whose closing bracket is at off.
func (p *Parser) closed(f *frame, off int) {
	d, md := len(p.stack)+1, p.msgDepth() // f was at depth d
	switch {
	case d == md && !f.array:
		raw := p.buf[f.start : off+1]
		if md == 1 && !p.inBlock && !p.yielded && !json.Valid(raw) {
			p.asProse(raw) // {braces} in prose
			p.wasProse = true
			return
		}
		p.out = append(p.out, Segment{Kind: SegmentMessage, Msg: p.cur, Raw: append([]byte(nil), raw...)})
		p.cur, p.yielded = -1, true
	case d == md && md == 1:
		// A list of messages ended.
		if !p.inBlock && p.objects == 0 {
			p.asProse(p.buf[f.start : off+1]) // [brackets] in prose
			p.wasProse = true
		}
	case d == md:
		p.invalid(string(p.buf[f.start:off+1]), "not an A2UI message: a message is a JSON object")
	case d == md+3 && !f.array:
		// An element of the components list of a message's operation.
		comps, op, msg := &p.stack[d-2], &p.stack[d-3], &p.stack[d-4]
		if comps.array && op.key == "components" && (msg.key == "updateComponents" || msg.key == "surfaceUpdate") {
			p.out = append(p.out, Segment{Kind: SegmentComponent, Msg: p.cur, Index: comps.index - 1,
				SurfaceID: op.surface, Op: msg.key, Raw: append([]byte(nil), p.buf[f.start:off+1]...)})
			p.yielded = true
		}
	}
}

// endJSON ends the JSON value being read. asProse says that the value was prose after
// all: the rest of its line is prose too.
func (p *Parser) endJSON(asProse bool) {
	p.buf = p.buf[:0]
	p.stack = p.stack[:0]
	p.cur, p.elemStart = -1, -1
	if p.inBlock {
		p.mode = modeBlock
	} else {
		p.mode = modeProse
		p.skipEOL = !asProse
	}
	p.line.Reset()
	p.lineOut = false
}
