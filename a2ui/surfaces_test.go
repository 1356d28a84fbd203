package a2ui_test

import (
	"strings"
	"testing"

	"github.com/genuiserver/genui/a2ui"
)

// A surface built by many messages comes back as its createSurface, its data model and
// one update holding the latest version of each component; a deleted one as its
// deleteSurface; one created again starts afresh.
func TestSurfaces(t *testing.T) {
	s := a2ui.NewSurfaces()
	for _, m := range []string{
		`{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"c"}}`,
		`{"version":"v0.9","updateDataModel":{"surfaceId":"s","path":"/form","value":{"a":""}}}`,
		`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Column","children":[]}]}}`,
		`{"version":"v0.9","createSurface":{"surfaceId":"t","catalogId":"c"}}`,
		`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"title","component":"Text","text":"Hi"},{"id":"root","component":"Column","children":["title"]}]}}`,
		`{"updateDataModel":{"surfaceId":"s","path":"/form","value":{"a":"x"}}}`,
		`{"version":"v0.9","deleteSurface":{"surfaceId":"t"}}`,
	} {
		if _, err := s.Apply([]byte(m)); err != nil {
			t.Fatalf("%s: %v", m, err)
		}
	}
	got := func(id string) string {
		var b strings.Builder
		for _, m := range s.Messages(id) {
			b.Write(m)
			b.WriteByte('\n')
		}
		return b.String()
	}
	want := `{"version":"v0.9","createSurface":{"catalogId":"c","surfaceId":"s"}}
{"version":"v0.9","updateDataModel":{"path":"/form","surfaceId":"s","value":{"a":"x"}}}
{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"children":["title"],"component":"Column","id":"root"},{"component":"Text","id":"title","text":"Hi"}]}}
`
	if g := got("s"); g != want {
		t.Errorf("s:\n%s\nwant:\n%s", g, want)
	}
	if g := got("t"); g != `{"version":"v0.9","deleteSurface":{"surfaceId":"t"}}`+"\n" {
		t.Errorf("t: %s", g)
	}
	if _, err := s.Apply([]byte(`{"version":"v0.9","createSurface":{"surfaceId":"t","catalogId":"c"}}`)); err != nil {
		t.Fatal(err)
	}
	if g := got("t"); g != `{"version":"v0.9","createSurface":{"catalogId":"c","surfaceId":"t"}}`+"\n" {
		t.Errorf("t again: %s", g)
	}
	if got("u") != "" {
		t.Error("an unknown surface has messages")
	}
	if _, err := s.Apply([]byte(`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"component":"Text"}]}}`)); err == nil {
		t.Error("a component without id applied")
	}
}
