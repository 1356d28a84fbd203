package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/genuiserver/genui/a2ui"
)

// TestA2UIScripts checks the scripts the fake model writes: 20 or more components written
// top-down, valid for the server's own checks (its streaming parser and builder, fed the
// chunks the fake streams) against the version's default catalog, and rendered whole by
// the bench's client model from the messages the builder makes of them.
func TestA2UIScripts(t *testing.T) {
	for _, v := range a2uiVersions {
		t.Run(v, func(t *testing.T) {
			s, err := a2uiScriptFor(v)
			if err != nil {
				t.Fatal(err)
			}
			if len(s.comps) < a2uiMinComponents {
				t.Fatalf("%d components, want at least %d", len(s.comps), a2uiMinComponents)
			}
			if s.firstAt <= s.ready || s.firstAt >= s.lastAt || s.lastAt > len(s.text) {
				t.Fatalf("offsets: ready %d, first renderable %d, last %d, text %d", s.ready, s.firstAt, s.lastAt, len(s.text))
			}
			pv := protocolVersion(v)
			cat, err := a2ui.Builtin(pv, a2ui.DefaultCatalogID(pv))
			if err != nil {
				t.Fatal(err)
			}
			b, p := a2ui.NewBuilder(cat), a2ui.NewParser()
			model := newA2UISurfaces(pv)
			renderableAt, messages := -1, 0
			apply := func(msgs [][]byte) {
				for _, m := range msgs {
					var msg map[string]json.RawMessage
					if err := json.Unmarshal(m, &msg); err != nil {
						t.Fatalf("builder message %s: %v", m, err)
					}
					if err := model.apply(msg, nil); err != nil {
						t.Fatalf("client model: %v", err)
					}
					messages++
					if renderableAt < 0 && model.renderable(s.surfaceID) {
						renderableAt = messages
					}
				}
			}
			for _, c := range s.chunks(4 * 16) {
				for _, seg := range p.Push(c) {
					b.Add(seg)
				}
				apply(b.Flush())
			}
			for _, seg := range p.Close() {
				b.Add(seg)
			}
			out, violations := b.End()
			apply(out)
			if len(violations) > 0 {
				t.Fatalf("the server's builder rejects the script: %v", violations)
			}
			if miss := model.missing(s); len(miss) > 0 {
				t.Fatalf("the client model misses %v", miss)
			}
			if renderableAt < 2 || renderableAt >= messages {
				t.Fatalf("renderable after message %d of %d", renderableAt, messages)
			}
		})
	}
}

func TestA2UISurfaceModel(t *testing.T) {
	apply := func(m *a2uiSurfaces, line string) {
		t.Helper()
		var msg map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatal(err)
		}
		if err := m.apply(msg, nil); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	m := newA2UISurfaces("v0.9")
	apply(m, `{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Column","children":["t"]},{"id":"t","component":"Text","text":"hi"}]}}`)
	if m.renderable("s") {
		t.Fatal("renderable before createSurface")
	}
	m = newA2UISurfaces("v0.9")
	apply(m, `{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"c"}}`)
	apply(m, `{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Column","children":[]}]}}`)
	apply(m, `{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"card","component":"Card","child":"row"},{"id":"row","component":"Row","children":[]},{"id":"root","component":"Column","children":["card"]}]}}`)
	if m.renderable("s") {
		t.Fatal("renderable with layouts only")
	}
	apply(m, `{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"b","component":"Button","child":"l","action":{"event":{"name":"x"}}},{"id":"l","component":"Text","text":"OK"},{"id":"row","component":"Row","children":["b"]}]}}`)
	if !m.renderable("s") {
		t.Fatal("a button's label in a card is renderable")
	}
	if err := m.apply(map[string]json.RawMessage{"version": json.RawMessage(`"v0.8"`), "deleteSurface": json.RawMessage(`{"surfaceId":"s"}`)}, nil); err == nil {
		t.Fatal("a v0.8 message accepted in a v0.9 turn")
	}

	m = newA2UISurfaces("v0.8")
	apply(m, `{"surfaceUpdate":{"surfaceId":"s","components":[{"id":"r","component":{"Column":{"children":{"explicitList":["i"]}}}},{"id":"i","component":{"Icon":{"name":{"literalString":"mail"}}}}]}}`)
	if m.renderable("s") {
		t.Fatal("v0.8: renderable before beginRendering")
	}
	apply(m, `{"beginRendering":{"surfaceId":"s","root":"r"}}`)
	if !m.renderable("s") {
		t.Fatal("v0.8: an icon under the root is renderable")
	}
}

func TestStatOf(t *testing.T) {
	if s := statOf([]float64{5, 1, 3}, 2); s != (a2uiStat{Median: 3, Min: 1, Max: 5}) {
		t.Fatalf("odd: %+v", s)
	}
	if s := statOf([]float64{4, 1, 2, 3}, 2); s != (a2uiStat{Median: 2.5, Min: 1, Max: 4}) {
		t.Fatalf("even: %+v", s)
	}
}

func TestA2UISchedule(t *testing.T) {
	s, err := a2uiScriptFor("v0.9")
	if err != nil {
		t.Fatal(err)
	}
	chunks := s.chunks(64)
	if strings.Join(chunks, "") != s.text || len(chunks[0]) != 64 {
		t.Fatal("chunks do not split the text in 64-byte pieces")
	}
	at := schedule(chunks, 150, 100*time.Millisecond)
	// 64 bytes = 16 tokens = 106.7 ms at 150 tokens/s.
	if d := at[0] - 100*time.Millisecond - 16*time.Second/150; d < -time.Microsecond || d > time.Microsecond {
		t.Fatalf("first chunk at %s", at[0])
	}
	want := 100*time.Millisecond + time.Duration(float64(len(s.text))/4/150*float64(time.Second))
	if d := at[len(at)-1] - want; d < -time.Microsecond || d > time.Microsecond {
		t.Fatalf("last chunk at %s, want %s", at[len(at)-1], want)
	}
	if chunkAt(64, 64) != 0 || chunkAt(65, 64) != 1 {
		t.Fatal("chunkAt")
	}
}

// TestA2UIPhase runs the a2ui phase briefly (a fast model) against the real server: the
// figures are there and every turn's surface is complete with one model call.
func TestA2UIPhase(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the server")
	}
	defer goleak.VerifyNone(t)
	bin := buildServerBin(t)
	rep, table := runJSON(t, "--server-bin", bin, "--phases", "a2ui", "--a2ui-turns", "2", "--a2ui-tokens-per-s", "3000")
	a := rep.A2UI
	if a == nil || len(a.Versions) != len(a2uiVersions) || a.TokensPerS != 3000 || a.ChunkTokens != 16 || a.TargetPct != 25 {
		t.Fatalf("a2ui: %+v", a)
	}
	for _, v := range a.Versions {
		if v.Turns != 2 || v.Errors != 0 || v.ModelCalls != 2 || v.Components < a2uiMinComponents || v.FirstError != "" {
			t.Errorf("%s: %+v", v.Version, v)
		}
		if v.FirstMessageMS.Median <= 0 || v.FirstRenderableMS.Min < v.FirstMessageMS.Min ||
			v.CompleteMS.Median <= v.FirstRenderableMS.Median || v.ResultMS.Median < v.CompleteMS.Median ||
			v.RatioPct.Median <= 0 || v.RatioPct.Max >= 100 {
			t.Errorf("%s times: %+v", v.Version, v)
		}
		if v.ModelRatioPct == nil || v.ServerLagMaxMS == nil || v.ModelFirstRenderable.Median <= 0 {
			t.Errorf("%s: no model-bound figures: %+v", v.Version, v)
		}
	}
	s := rep.Summary
	if s.A2UIFirstRenderablePct == nil || s.A2UIV08FirstRenderablePct == nil || *s.A2UIFirstRenderablePct != a.Versions[0].RatioPct.Median {
		t.Fatalf("summary: %+v", s)
	}
	for _, want := range []string{"A2UI", "v0.9", "v0.8", "first renderable <= 25% of complete"} {
		if !strings.Contains(table, want) {
			t.Errorf("table lacks %q", want)
		}
	}
}
