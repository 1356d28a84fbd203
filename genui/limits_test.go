package genui_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/metrics"
	"github.com/genuiserver/genui/schemas"
)

// column writes a Column of n texts, top-down, one component per part.
func column(n int) []*ai.Part {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprintf(`"t%d"`, i)
	}
	parts := texts("Here.\n```a2ui\n", `{"createSurface":{"surfaceId":"s","catalogId":"`+basic+`"}}`+"\n",
		`{"updateComponents":{"surfaceId":"s","components":[`+"\n", `{"id":"root","component":"Column","children":[`+strings.Join(ids, ",")+`]}`)
	for i := range n {
		parts = append(parts, ai.NewTextPart(fmt.Sprintf(",\n{\"id\":\"t%d\",\"component\":\"Text\",\"text\":\"Row %d\"}", i, i)))
	}
	return append(parts, ai.NewTextPart("\n]}}\n```\n"))
}

// limitHit checks that a turn ended with the RESOURCE_EXHAUSTED error of limit.
func limitHit(t *testing.T, last genui.Item, limit string, value any) {
	t.Helper()
	if last.Err == nil || last.Err.Status != genui.StatusResourceExhausted {
		t.Fatalf("the turn ended with %+v, want RESOURCE_EXHAUSTED", last)
	}
	d, _ := last.Err.Details.(map[string]any)
	if d["limit"] != limit || fmt.Sprint(d["value"]) != fmt.Sprint(value) || !strings.Contains(last.Err.Message, limit) {
		t.Fatalf("the error names %v (%v), want %s (%v): %s", d["limit"], d["value"], limit, value, last.Err.Message)
	}
}

// Each limit ends a runaway turn with a structured error naming it; what the client was
// shown before is valid A2UI, and the turn is counted by its limit.
func TestTurnLimits(t *testing.T) {
	t.Run("components", func(t *testing.T) {
		met := metrics.New()
		m := &script{calls: []scripted{{parts: column(300)}}}
		svc := newService(t, m, genui.WithLimits(genui.Limits{Components: 100}), genui.WithMetrics(met))
		msgs, last := collect(t, svc, a2uiRequest("a long list"))
		limitHit(t, last, "components", 100)
		a2uitest.New(t, "v0.9", nil).CheckAll(t, msgs...)
		all := string(joinBytes(msgs))
		if !strings.Contains(all, `"id":"t97"`) || strings.Contains(all, `"id":"t99"`) {
			t.Fatalf("the client got %d messages; want the texts up to the limit (root and 99 texts)", len(msgs))
		}
		if got := counter(t, met, "genui_turn_limits_total", "components"); got != 1 {
			t.Errorf("genui_turn_limits_total{limit=components} = %v", got)
		}
	})
	t.Run("outputBytes", func(t *testing.T) {
		m := &script{calls: []scripted{{parts: column(300)}}}
		svc := newService(t, m, genui.WithLimits(genui.Limits{OutputBytes: 4000}))
		msgs, last := collect(t, svc, a2uiRequest("a long list"))
		limitHit(t, last, "outputBytes", 4000)
		a2uitest.New(t, "v0.9", nil).CheckAll(t, msgs...)
	})
	t.Run("dataModelBytes", func(t *testing.T) {
		parts := texts("```a2ui\n", `{"createSurface":{"surfaceId":"s","catalogId":"`+basic+`"}}`+"\n")
		for i := range 50 {
			parts = append(parts, ai.NewTextPart(fmt.Sprintf(`{"updateDataModel":{"surfaceId":"s","path":"/rows/%d","value":"%s"}}`+"\n", i, strings.Repeat("x", 100))))
		}
		m := &script{calls: []scripted{{parts: append(parts, ai.NewTextPart("```\n"))}}}
		svc := newService(t, m, genui.WithLimits(genui.Limits{DataModelBytes: 2000}))
		msgs, last := collect(t, svc, a2uiRequest("data"))
		limitHit(t, last, "dataModelBytes", 2000)
		if len(msgs) < 10 || len(msgs) > 25 {
			t.Fatalf("%d messages reached the client, want the createSurface and the updates within 2000 bytes", len(msgs))
		}
	})
	t.Run("toolCalls", func(t *testing.T) {
		var parts []*ai.Part
		for range 5 {
			parts = append(parts, surfacePart)
		}
		m := &script{calls: []scripted{{parts: parts}}}
		svc := newService(t, m, genui.WithLimits(genui.Limits{ToolCalls: 3}))
		items := collectItems(t, svc, request(t))
		shown := 0
		for _, it := range items {
			if it.Event != nil && it.Event.Type == schemas.EventToolRequest {
				shown++
			}
		}
		limitHit(t, items[len(items)-1], "toolCalls", 3)
		if shown != 3 {
			t.Fatalf("%d surfaces reached the client, want 3", shown)
		}
	})
	t.Run("components in a genui surface", func(t *testing.T) {
		widgets := []any{map[string]any{"id": "root", "widget": map[string]any{"Column": map[string]any{"children": []any{}}}}}
		for i := range 20 {
			widgets = append(widgets, map[string]any{"id": fmt.Sprint(i), "widget": map[string]any{"Text": map[string]any{"text": "x"}}})
		}
		m := &script{calls: []scripted{{parts: []*ai.Part{callPart("addOrUpdateSurface", map[string]any{"surfaceId": "s1", "definition": map[string]any{"root": "root", "widgets": widgets}})}}}}
		svc := newService(t, m, genui.WithLimits(genui.Limits{Components: 10}))
		items := collectItems(t, svc, request(t))
		limitHit(t, items[len(items)-1], "components", 10)
	})
	t.Run("turnTime", func(t *testing.T) {
		hold := make(chan struct{})
		defer close(hold)
		m := &script{calls: []scripted{{parts: texts("Thinking", " forever"), wait: hold}}}
		svc := newService(t, m, genui.WithLimits(genui.Limits{TurnTime: 100 * time.Millisecond}))
		began := time.Now()
		items := collectItems(t, svc, request(t))
		limitHit(t, items[len(items)-1], "turnTime", "100ms")
		if took := time.Since(began); took > 5*time.Second {
			t.Fatalf("the turn took %v", took)
		}
	})
	t.Run("maxOutputTokens", func(t *testing.T) {
		m := &script{calls: []scripted{{parts: texts("Here is a very long"), finish: ai.FinishReasonLength}}}
		svc := newService(t, m, genui.WithLimits(genui.Limits{MaxOutputTokens: 1000}))
		items := collectItems(t, svc, request(t))
		limitHit(t, items[len(items)-1], "maxOutputTokens", 1000)
		if m.reqs[0].MaxOutputTokens != 1000 {
			t.Fatalf("the model call asked for %d tokens at most", m.reqs[0].MaxOutputTokens)
		}
	})
	t.Run("a 2,000-row list completes within the defaults", func(t *testing.T) {
		m := &script{calls: []scripted{{parts: column(2000)}}}
		svc := newService(t, m)
		msgs, last := collect(t, svc, a2uiRequest("my contacts"))
		if last.Result == nil {
			t.Fatalf("the turn ended with %+v", last.Err)
		}
		if n := len(joinBytes(msgs)); n > 3*2000*60 {
			t.Fatalf("%d bytes for a 2,000-row list", n)
		}
	})
}

func joinBytes(msgs [][]byte) []byte {
	var out []byte
	for _, m := range msgs {
		out = append(append(out, m...), '\n')
	}
	return out
}

// counter reads a counter of met by its one label's value.
func counter(t *testing.T, met *metrics.Metrics, name, label string) float64 {
	t.Helper()
	fams, err := met.Gatherer().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				if m.GetLabel()[0].GetValue() == label {
					return m.GetCounter().GetValue()
				}
			}
		}
	}
	return 0
}

var _ = context.Background

// Components a model wrote before it paused mid-surface reach the client while it
// pauses, not when its next text comes.
func TestA2UIShownWhileTheModelPauses(t *testing.T) {
	hold := make(chan struct{})
	parts := column(40)
	m := &script{calls: []scripted{{parts: parts, wait: hold}}}
	svc := newService(t, m)
	st, err := svc.StreamA2UI(context.Background(), a2uiRequest("a list"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	seen := make(chan string, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = st.Each(context.Background(), func(it genui.Item) error {
			if it.Event != nil && it.Event.Type == schemas.EventA2UI {
				seen <- string(it.Event.A2UI)
			}
			return nil
		})
	}()
	// The model holds before its last part (the block's end): every row is written.
	deadline := time.After(5 * time.Second)
	var all strings.Builder
	for !strings.Contains(all.String(), `"id":"t39"`) {
		select {
		case m := <-seen:
			all.WriteString(m)
		case <-deadline:
			close(hold)
			t.Fatalf("the rows written before the pause did not reach the client while the model paused:\n%s", all.String())
		}
	}
	close(hold)
	<-done
}
