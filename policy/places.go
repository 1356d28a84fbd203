package policy

import (
	"strings"
)

// Place is where a URL goes in a component or widget: the property path from its
// properties ("url", "media/src", "images/*/url", "*" an array's items) and the kind of
// URL it holds.
type Place struct {
	Path []string
	Kind Kind
}

// URL formats: a property a catalog marks with one of them holds a URL.
var urlFormats = map[string]bool{"uri": true, "uri-reference": true, "iri": true, "iri-reference": true, "url": true}

// IsURLFormat reports whether a JSON Schema "format" marks a URL.
func IsURLFormat(format string) bool { return urlFormats[format] }

// URLName reports whether a property's name says it holds a URL: url, uri, href, src,
// link, or a name ending in one of them (imageUrl, iconURL, thumbnailSrc).
func URLName(prop string) bool {
	l := strings.ToLower(prop)
	for _, s := range []string{"url", "uri", "href", "src", "link"} {
		if l == s || strings.HasSuffix(l, s) && len(prop) > len(s) && prop[len(prop)-len(s)] >= 'A' && prop[len(prop)-len(s)] <= 'Z' {
			return true
		}
	}
	return false
}

// KindOf guesses where a URL property of a component or widget type goes from their
// names: an image (image, img, icon, avatar, logo, photo, picture, thumbnail, poster),
// a video or audio source (video, audio, media, sound, movie), else a link.
func KindOf(typ, prop string) Kind {
	l := strings.ToLower(prop)
	t := strings.ToLower(typ)
	if l == "url" || l == "src" || l == "uri" {
		l = t + l // the type says what an unqualified URL is
	}
	for _, w := range []string{"video", "audio", "media", "sound", "movie"} {
		if strings.Contains(l, w) {
			return Media
		}
	}
	for _, w := range []string{"image", "img", "icon", "avatar", "logo", "photo", "picture", "thumbnail", "poster"} {
		if strings.Contains(l, w) {
			return Image
		}
	}
	return Link
}

// Accessibility: the properties that describe an image, label an input, or give any
// element an accessible name.
var (
	imageDescriptions = []string{"description", "altText", "alt", "semanticLabel", "semanticsLabel"}
	inputLabels       = []string{"label", "labelText"}
)

// ImageDescriptions lists the properties that describe an image, one of which an image
// must set when its type declares any.
func ImageDescriptions() []string { return imageDescriptions }

// InputLabels lists the properties that label an input, one of which an input must set
// when its type declares any.
func InputLabels() []string { return inputLabels }

// IsImage reports whether a component or widget type is an image by its name.
func IsImage(typ string) bool { return typ == "Image" || strings.HasSuffix(typ, "Image") }

// IsInput reports whether a component or widget type is an input that a label names.
func IsInput(typ string) bool {
	for _, s := range []string{"TextField", "Input", "CheckBox", "Checkbox", "Slider", "ChoicePicker", "MultipleChoice", "DateTimeInput", "Switch"} {
		if typ == s || strings.HasSuffix(typ, s) {
			return true
		}
	}
	return false
}

// IsButton reports whether a component or widget type is a button by its name.
func IsButton(typ string) bool { return strings.HasSuffix(typ, "Button") }

// InaccessibleImage, InaccessibleInput and InaccessibleButton are the messages of
// [Inaccessible] violations.
const (
	InaccessibleImage  = "the UI policy refuses an image without a description: set %s, a short text a screen reader says instead of the image"
	InaccessibleInput  = "the UI policy refuses an input without a label: set %s, which a screen reader says for it"
	InaccessibleButton = "the UI policy refuses a button without text: its child must show a Text (or carry an accessibility label), which a screen reader says for it"
)
