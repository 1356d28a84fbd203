package a2uitest

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
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
