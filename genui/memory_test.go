package genui

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"testing"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/tools"
)

// catalogMemory compiles n distinct variants of a catalog, derives from each what a turn
// needs (the UI tools, the system prompt), and returns the live heap each holds, and the
// size of its JSON.
func catalogMemory(t testing.TB, file string, n int) (perCatalog, jsonSize float64) {
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var schema map[string]any
	if err := json.Unmarshal(b, &schema); err != nil {
		t.Fatal(err)
	}
	cs := catalog.NewCache(n, 0, 0)
	raws := make([][]byte, n)
	for i := range raws {
		schema["description"] = fmt.Sprint("variant ", i)
		raws[i], _ = json.Marshal(schema)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for _, raw := range raws {
		c, err := cs.Compile(raw)
		if err != nil {
			t.Fatal(err)
		}
		tools.For(c)
		systemPrompt(c)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(cs)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(n), float64(len(raws[0]))
}

// A compiled catalog, with what turns derive from it, holds at most 10 times its JSON.
func TestCompiledCatalogMemory(t *testing.T) {
	for _, file := range []string{"../schemas/catalogs/basic.json", "../schemas/catalogs/rich.json", "../catalog/testdata/large.json"} {
		per, size := catalogMemory(t, file, 50)
		t.Logf("%s: %.0f bytes of JSON, %.0f bytes compiled (%.1fx)", file, size, per, per/size)
		if per > 10*size {
			t.Errorf("%s: a compiled catalog holds %.1fx its JSON", file, per/size)
		}
	}
}

// BenchmarkCatalogMemory reports the live heap of a compiled catalog of 22 KB of JSON with
// its derived prompt and tools, in bytes and in multiples of its JSON.
func BenchmarkCatalogMemory(b *testing.B) {
	for b.Loop() {
		per, size := catalogMemory(b, "../catalog/testdata/large.json", 20)
		b.ReportMetric(per, "B/catalog")
		b.ReportMetric(per/size, "x-json")
	}
}
