package a2uitest

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// SuiteDir is the vendored official A2UI conformance suite.
func SuiteDir() string { return filepath.Join(root(), "testdata", "a2ui-conformance") }

// Conformance is what a2ui/CONFORMANCE.md says of the conformance suite: the cases that
// deviate, by "file case", with their class, and the counts of each file.
type Conformance struct {
	Deviations map[string]string
	Counts     map[string][3]int // applicable, agree, deviations
}

// ReadConformance reads the tables of a2ui/CONFORMANCE.md: the rows of "## Counts"
// (| `file` | applicable | agree | deviations |) and of "## Deviations"
// (| `file` | `case` | class |).
func ReadConformance() (*Conformance, error) {
	f, err := os.Open(filepath.Join(root(), "a2ui", "CONFORMANCE.md"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	c := &Conformance{Deviations: map[string]string{}, Counts: map[string][3]int{}}
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			section = strings.TrimPrefix(line, "## ")
			continue
		}
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.Trim(strings.TrimSpace(cells[i]), "`")
		}
		switch {
		case section == "Deviations" && len(cells) == 3:
			c.Deviations[cells[0]+" "+cells[1]] = cells[2]
		case section == "Counts" && len(cells) == 4:
			var n [3]int
			for i := range n {
				if n[i], err = strconv.Atoi(cells[i+1]); err != nil {
					return nil, fmt.Errorf("CONFORMANCE.md: counts of %s: %w", cells[0], err)
				}
			}
			c.Counts[cells[0]] = n
		}
	}
	return c, sc.Err()
}

// Case is one case of a suite file, decoded from YAML into JSON values (numbers are
// float64, as encoding/json decodes them).
type Case map[string]any

// Name is the case's name.
func (c Case) Name() string { s, _ := c["name"].(string); return s }

// Action is what the case does: "validate", "process_chunk", ….
func (c Case) Action() string { s, _ := c["action"].(string); return s }

// LoadSuite reads a suite file, by its path under SuiteDir.
func LoadSuite(t testing.TB, file string) []Case {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(SuiteDir(), file))
	if err != nil {
		t.Fatal(err)
	}
	var raw []any
	if err := yaml.Unmarshal(b, &raw); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	j, err := json.Marshal(raw)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	var cases []Case
	if err := json.Unmarshal(j, &cases); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return cases
}

// Runner runs one case: it returns "" when the case agrees, else what differed.
type Runner func(Case) string

// RunSuite runs every case of the suite files whose action has a runner (runners maps a
// file to its actions), logs the counts of each file, and fails when a case's outcome, or
// a file's counts, differ from what CONFORMANCE.md says.
func RunSuite(t *testing.T, runners map[string]map[string]Runner) {
	t.Helper()
	doc, err := ReadConformance()
	if err != nil {
		t.Fatal(err)
	}
	files := make([]string, 0, len(runners))
	for f := range runners {
		files = append(files, f)
	}
	sort.Strings(files)
	var changed []string
	for _, file := range files {
		var n [3]int // applicable, agree, deviations
		for _, c := range LoadSuite(t, file) {
			run, ok := runners[file][c.Action()]
			if !ok {
				continue
			}
			n[0]++
			got := run(c)
			key := file + " " + c.Name()
			_, listed := doc.Deviations[key]
			delete(doc.Deviations, key)
			switch {
			case got == "" && listed:
				changed = append(changed, fmt.Sprintf("%s: now agrees; remove it from the deviations", key))
			case got != "" && !listed:
				changed = append(changed, fmt.Sprintf("%s: deviates: %s", key, got))
			}
			if got == "" {
				n[1]++
			} else {
				n[2]++
				t.Logf("deviation %s: %s", key, got)
			}
		}
		t.Logf("%s: %d applicable, %d agree, %d deviations", file, n[0], n[1], n[2])
		if doc.Counts[file] != n {
			changed = append(changed, fmt.Sprintf("%s: counts are %v (applicable, agree, deviations), CONFORMANCE.md says %v", file, n, doc.Counts[file]))
		}
	}
	for key := range doc.Deviations {
		if file, _, _ := strings.Cut(key, " "); runners[file] != nil {
			changed = append(changed, fmt.Sprintf("%s: listed as a deviation, but no such case runs", key))
		}
	}
	sort.Strings(changed)
	for _, c := range changed {
		t.Error(c)
	}
}
