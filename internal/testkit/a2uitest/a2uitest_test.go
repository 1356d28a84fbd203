package a2uitest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSpecCases runs the specification's own test cases of server_to_client.json
// through the validator: each valid case passes, each invalid one fails. The cases are
// in the specification's repository only, not in the npm package.
func TestSpecCases(t *testing.T) {
	s, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(s.Dir, "v0_9", "test", "cases", "*.json"))
	if len(files) == 0 {
		t.Skipf("no specification test cases in %s (the npm copy of the schemas has none)", s.Dir)
	}
	v := New(t, "v0.9", nil)
	n := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var suite struct {
			Schema string `json:"schema"`
			Tests  []struct {
				Description string          `json:"description"`
				Valid       bool            `json:"valid"`
				Data        json.RawMessage `json:"data"`
			} `json:"tests"`
		}
		if err := json.Unmarshal(b, &suite); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, tc := range suite.Tests {
			var err error
			switch suite.Schema {
			case "server_to_client.json":
				v.surfaces = map[string]string{}
				err = v.Check(tc.Data)
			case "client_to_server.json":
				err = v.CheckClient(tc.Data)
			default:
				continue
			}
			n++
			if (err == nil) != tc.Valid {
				t.Errorf("%s: %s: valid=%v, validator says %v", filepath.Base(f), tc.Description, tc.Valid, err)
			}
		}
	}
	t.Logf("%d specification cases", n)
	if n < 50 {
		t.Errorf("only %d cases ran", n)
	}
}

func TestLines(t *testing.T) {
	in := "{\"type\":\"text\",\"text\":\"x\"}\n{\"version\":\"v0.9\",\"deleteSurface\":{\"surfaceId\":\"s\"}}\n{\"type\":\"result\",\"result\":{}}\n"
	got := Lines([]byte(in))
	if len(got) != 1 || !strings.Contains(string(got[0]), "deleteSurface") {
		t.Fatalf("Lines = %q", got)
	}
}
