package web_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/genui/gemini"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/longlist"
)

// longListRows is the length of the list TestA2UILongListInChromium streams.
const longListRows = 2000

// TestA2UILongListInChromium streams a 2,000-row A2UI v0.9 surface to the playground in
// headless Chromium (web/e2e/longlist.test.mjs): the Gemini adapter talks to a fake
// Gemini writing longlist.Text(2000) in 3,000 chunks a millisecond apart, the server
// re-sends the growing list as it streams, and the official renderer draws every row.
// The page records the A2UI lines it received and when the first and the last row were
// drawn. Those lines are the ones the server sent, valid against the specification, and
// at most three times the bytes of the surface's final state (a2ui.Final).
func TestA2UILongListInChromium(t *testing.T) {
	b := needBrowser(t)
	seen := exchanges{path: "/generateA2ui"}

	fake := fakegemini.New(fakegemini.WithPacing(time.Millisecond))
	t.Cleanup(fake.Close)
	fake.Enqueue(fakegemini.Respond(fakegemini.TextChunks(longlist.Text(longListRows), 3000)...))
	m, err := gemini.New(context.Background(), gemini.Config{Name: "googleai/gemini-2.5-flash", APIKey: "test-key", BaseURL: fake.URL(), Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	var served atomic.Int64 // how long the server took to stream the turn, in ns
	srv := newServerWith(t, genkit.Init(context.Background()), m, func(h http.Handler) http.Handler {
		h = seen.record(h)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			start := time.Now()
			h.ServeHTTP(w, r)
			if r.URL.Path == seen.path {
				served.Store(int64(time.Since(start)))
			}
		})
	})
	recordFile := filepath.Join(t.TempDir(), "longlist-record.json")

	began := time.Now()
	b.run(t, "longlist.test.mjs", "GENUI_URL="+srv.URL+"/", "LONGLIST_RECORD="+recordFile,
		fmt.Sprintf("LONGLIST_ROWS=%d", longListRows))
	elapsed := time.Since(began)

	var rec struct {
		Rows     int      `json:"rows"`     // Text elements drawn reading "Row i of the list"
		Distinct int      `json:"distinct"` // distinct i among them, each in [0, rows)
		Received []string `json:"received"` // the A2UI lines of the response, as received
		Bytes    int      `json:"bytes"`
		FirstRow float64  `json:"firstRowMs"` // from the click on Send
		LastRow  float64  `json:"lastRowMs"`
		Surface  float64  `json:"firstSurfaceMs"` // from the turn's start, as the page's inspector timed it
		Total    float64  `json:"totalMs"`
		Problems []string `json:"problems"`
	}
	readRecord(t, recordFile, &rec)
	if rec.Rows != longListRows || rec.Distinct != longListRows {
		t.Errorf("the page drew %d rows (%d distinct), want %d", rec.Rows, rec.Distinct, longListRows)
	}
	if !(rec.FirstRow > 0 && rec.FirstRow < rec.LastRow) {
		t.Errorf("the first row was drawn at %v ms, the last at %v ms; the list should grow as it streams", rec.FirstRow, rec.LastRow)
	}
	if len(rec.Problems) > 0 {
		t.Errorf("the page saw errors:\n%s", strings.Join(rec.Problems, "\n"))
	}

	seen.mu.Lock()
	turns := seen.list
	seen.mu.Unlock()
	if len(turns) != 1 {
		t.Fatalf("the server saw %d POST /generateA2ui, want 1", len(turns))
	}
	_, body := turns[0].response()
	sent := a2uitest.Lines(body)
	if len(sent) == 0 {
		t.Fatalf("the server sent no A2UI line:\n%.500s", body)
	}
	a2uitest.New(t, "v0.9", nil).CheckAll(t, sent...)

	// The page received what the server sent, line for line.
	sentBytes := 0
	raw := make([]json.RawMessage, len(sent))
	for i, l := range sent {
		sentBytes += len(l)
		raw[i] = l
	}
	received := 0
	for _, l := range rec.Received {
		received += len(l)
	}
	if received != rec.Bytes {
		t.Errorf("record: %d bytes counted, %d in the lines recorded", rec.Bytes, received)
	}
	if len(rec.Received) != len(sent) || received != sentBytes {
		t.Errorf("the page received %d A2UI lines, %d bytes; the server sent %d, %d bytes", len(rec.Received), received, len(sent), sentBytes)
	} else {
		for i, l := range rec.Received {
			if !bytes.Equal([]byte(l), sent[i]) {
				t.Errorf("A2UI line %d as received differs from the one sent:\n%.300s\n%.300s", i, l, sent[i])
				break
			}
		}
	}

	final, rows := 0, 0
	for _, m := range a2ui.Final(a2ui.V09, raw) {
		final += len(m)
		rows += strings.Count(string(m), `"component":"Text"`)
	}
	if rows != longListRows {
		t.Errorf("the final state of the lines sent holds %d rows, want %d", rows, longListRows)
	}
	if received > 3*final {
		t.Errorf("the page received %d A2UI bytes for a final state of %d (%.2f×), want at most 3×", received, final, float64(received)/float64(final))
	}
	t.Logf("%d rows drawn; %d A2UI lines, %d bytes for a final state of %d bytes (%.2f×)",
		rec.Rows, len(rec.Received), received, final, float64(received)/float64(final))
	t.Logf("from Send: first row drawn at %.0f ms, last row at %.0f ms; the inspector: first surface %.0f ms, turn %.0f ms; the server streamed it in %v; browser test %v",
		rec.FirstRow, rec.LastRow, rec.Surface, rec.Total, time.Duration(served.Load()).Round(time.Millisecond), elapsed.Round(time.Millisecond))
}
