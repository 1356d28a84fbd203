package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/catalog"
)

// parse reads a model's text from stdin as it arrives and writes what a client would get:
// the prose, and each A2UI message once it may be sent, as JSON Lines, flushed after
// each read; then the violations.
func parse(cat *catalog.Catalog, stdin io.Reader, out flushWriter, opts []a2ui.Option) error {
	p, b := a2ui.NewParser(), a2ui.NewBuilder(cat, opts...)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	emit := func(segs []a2ui.Segment) error {
		text := ""
		flushText := func() error {
			if text == "" {
				return nil
			}
			err := enc.Encode(struct {
				Type string `json:"type"`
				Text string `json:"text"`
			}{"text", text})
			text = ""
			return err
		}
		for _, s := range segs {
			if s.Kind == a2ui.SegmentText {
				text += s.Text
				continue
			}
			if err := flushText(); err != nil {
				return err
			}
			b.Add(s)
			if err := writeMessages(out, b.Flush()); err != nil {
				return err
			}
		}
		return flushText()
	}
	buf := make([]byte, 32<<10)
	var carry []byte // the start of a character cut by a read
	for {
		n, rerr := stdin.Read(buf)
		chunk := append(carry, buf[:n]...)
		carry = nil
		if rerr == nil {
			// Hold back an incomplete UTF-8 sequence for the next read.
			cut := len(chunk)
			for i := len(chunk) - 1; i >= 0 && i >= len(chunk)-utf8.UTFMax; i-- {
				if utf8.RuneStart(chunk[i]) {
					if !utf8.FullRune(chunk[i:]) {
						cut = i
					}
					break
				}
			}
			carry = append([]byte(nil), chunk[cut:]...)
			chunk = chunk[:cut]
		}
		if err := emit(p.Push(string(chunk))); err != nil {
			return err
		}
		if err := out.Flush(); err != nil {
			return err
		}
		if errors.Is(rerr, io.EOF) {
			break
		}
		if rerr != nil {
			return fmt.Errorf("reading standard input: %w", rerr)
		}
	}
	if err := emit(p.Close()); err != nil {
		return err
	}
	msgs, vs := b.End()
	if err := writeMessages(out, msgs); err != nil {
		return err
	}
	for _, v := range a2ui.Violations(vs) {
		if err := enc.Encode(struct {
			Type string `json:"type"`
			a2ui.Violation
		}{"violation", v}); err != nil {
			return err
		}
	}
	if len(vs) > 0 {
		return errViolations
	}
	return nil
}

type flushWriter interface {
	io.Writer
	Flush() error
}

func writeMessages(w io.Writer, msgs [][]byte) error {
	for _, m := range msgs {
		if _, err := w.Write(append(m, '\n')); err != nil {
			return err
		}
	}
	return nil
}
