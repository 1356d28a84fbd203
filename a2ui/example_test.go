package a2ui_test

import (
	"fmt"
	"log"

	"github.com/genuiserver/genui/a2ui"
)

// A model response read as it streams: the parser cuts it into prose, components and
// messages; the builder sends each component as soon as the surface stays valid with it
// (here the root first, with no children yet, then each child with the root again), and
// End reports what broke a rule, for the model to repair.
func Example() {
	cat, err := a2ui.Builtin(a2ui.V09, a2ui.DefaultCatalogID(a2ui.V09))
	if err != nil {
		log.Fatal(err)
	}
	response := []string{
		"Here you are.\n```a2ui\n",
		`{"createSurface":{"surfaceId":"s","catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"}}` + "\n",
		`{"updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Column","children":["hi","bye"]},`,
		`{"id":"hi","component":"Text","text":"Hello"},`,
		`{"id":"bye","component":"Txt","text":"Bye"}]}}` + "\n```\n",
	}
	p, b := a2ui.NewParser(), a2ui.NewBuilder(cat)
	for _, chunk := range response {
		for _, seg := range p.Push(chunk) {
			if seg.Kind == a2ui.SegmentText {
				fmt.Printf("text: %q\n", seg.Text)
				continue
			}
			b.Add(seg)
		}
		for _, msg := range b.Flush() {
			fmt.Printf("send: %s\n", msg)
		}
	}
	for _, seg := range p.Close() {
		b.Add(seg)
	}
	msgs, violations := b.End()
	for _, msg := range msgs {
		fmt.Printf("send: %s\n", msg)
	}
	for _, v := range violations {
		fmt.Printf("repair: %s\n", v)
	}
	// Output:
	// text: "Here you are.\n"
	// send: {"version":"v0.9","createSurface":{"catalogId":"https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json","surfaceId":"s"}}
	// send: {"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"children":[],"component":"Column","id":"root"}]}}
	// send: {"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"component":"Text","id":"hi","text":"Hello"},{"children":["hi"],"component":"Column","id":"root"}]}}
	// repair: /1/updateComponents/components/2/component: unknown component type "Txt"; the catalog has AudioPlayer, Button, Card, CheckBox, ChoicePicker, Column, DateTimeInput, Divider, Icon, Image, List, Modal, Row, Slider, Tabs, Text, TextField, Video [unknown_component]
}
