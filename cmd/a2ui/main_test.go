package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/internal/testkit/policytest"
)

// The tool is tested as a process: built once, run with flags, files and standard input.

var bin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "a2ui-cli")
	if err != nil {
		panic(err)
	}
	bin = filepath.Join(dir, "a2ui")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		panic(fmt.Sprintf("go build: %v\n%s", err, out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

const basicID = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"

type result struct {
	code           int
	stdout, stderr string
}

func runTool(t *testing.T, stdin string, args ...string) result {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, out.String(), errb.String()}
}

type violation struct {
	Index   int    `json:"index"`
	Path    string `json:"path"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func violations(t *testing.T, stdout string) []violation {
	t.Helper()
	var out []violation
	for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
		if line == "" {
			continue
		}
		var v violation
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			t.Fatalf("not a violation line: %q: %v", line, err)
		}
		out = append(out, v)
	}
	return out
}

func lines(msgs ...string) string { return strings.Join(msgs, "\n") + "\n" }

const (
	create = `{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"` + basicID + `"}}`
	form   = `{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Column","children":["title","go"]},{"id":"title","component":"Text","text":"Hi"},{"id":"go","component":"Button","child":"go-label","action":{"event":{"name":"go"}}},{"id":"go-label","component":"Text","text":"Go"}]}}`
)

func update(comps string) string {
	return `{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[` + comps + `]}}`
}

func TestValidateValid(t *testing.T) {
	for name, in := range map[string]string{
		"json lines":  lines(create, form, `{"version":"v0.9","updateDataModel":{"surfaceId":"s","path":"/x","value":1}}`),
		"json array":  "[" + create + ",\n" + form + "]",
		"create only": lines(create),
	} {
		r := runTool(t, in, "validate", "--catalog", basicID)
		if r.code != 0 || r.stdout != "" {
			t.Errorf("%s: exit %d, %q %q", name, r.code, r.stdout, r.stderr)
		}
	}
}

// Each kind of violation: its code, where it is, and a message naming the id or field.
func TestValidateViolations(t *testing.T) {
	cases := []struct {
		name, in string
		shown    []string
		want     violation // Message: a part it must hold
	}{
		{"schema", lines(create, update(`{"id":"root","component":"Text","text":5}`)),
			nil, violation{1, "/updateComponents/components/0/text", "schema", "must be a string"}},
		{"unknown component", lines(create, update(`{"id":"root","component":"Carousel"}`)),
			nil, violation{1, "/updateComponents/components/0/component", "unknown_component", `"Carousel"`}},
		{"duplicate id", lines(create, update(`{"id":"root","component":"Text","text":"a"},{"id":"root","component":"Text","text":"b"}`)),
			nil, violation{1, "/updateComponents/components/1/id", "duplicate_id", `"root"`}},
		{"missing root", lines(create, update(`{"id":"top","component":"Text","text":"a"}`)),
			nil, violation{1, "/updateComponents/components/0", "missing_root", `"root"`}},
		{"dangling reference", lines(create, update(`{"id":"root","component":"Column","children":["gone"]}`)),
			nil, violation{1, "/updateComponents/components/0/children/0", "dangling_reference", `"gone"`}},
		{"cycle", lines(create, update(`{"id":"root","component":"Card","child":"a"},{"id":"a","component":"Card","child":"root"}`)),
			nil, violation{1, "/updateComponents/components/1/child", "cycle", `"a"`}},
		{"unreachable", lines(create, update(`{"id":"root","component":"Text","text":"a"},{"id":"lost","component":"Text","text":"b"}`)),
			nil, violation{1, "/updateComponents/components/1", "unreachable", `"lost"`}},
		{"too deep", lines(`{"version":"v0.9","updateDataModel":{"surfaceId":"s","value":` + strings.Repeat(`[`, 60) + strings.Repeat(`]`, 60) + `}}`),
			[]string{"s"}, violation{0, "/updateDataModel/value", "too_deep", "deeper than 50"}},
		{"invalid path", lines(create, update(`{"id":"root","component":"Text","text":{"path":"/a/~2"}}`)),
			nil, violation{1, "/updateComponents/components/0/text/path", "invalid_path", "JSON Pointer"}},
		{"unknown function", lines(create, update(`{"id":"root","component":"Text","text":{"call":"shout","args":{}}}`)),
			nil, violation{1, "/updateComponents/components/0/text/call", "unknown_function", `"shout"`}},
		{"unknown surface", lines(update(`{"id":"root","component":"Text","text":"a"}`)),
			nil, violation{0, "/updateComponents/components/0", "unknown_surface", `"s"`}},
		{"surface exists", lines(create, create),
			nil, violation{1, "/createSurface/surfaceId", "surface_exists", `"s"`}},
		{"catalog mismatch", lines(`{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"https://example.com/other"}}`),
			nil, violation{0, "/createSurface/catalogId", "catalog_mismatch", "https://example.com/other"}},
		{"missing version", lines(`{"createSurface":{"surfaceId":"s","catalogId":"` + basicID + `"}}`),
			nil, violation{0, "/version", "invalid_message", "v0.9"}},
		{"unknown operation", lines(`{"version":"v0.9","beginRendering":{"surfaceId":"s","root":"root"}}`),
			nil, violation{0, "/beginRendering", "invalid_message", "in v0.9 use createSurface"}},
		{"not json", lines(create, `{"version":"v0.9",`),
			nil, violation{1, "", "invalid_json", "not valid JSON"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := []string{"validate", "--catalog", basicID}
			for _, s := range c.shown {
				args = append(args, "--shown", s)
			}
			r := runTool(t, c.in, args...)
			if r.code != 1 {
				t.Fatalf("exit %d: %s %s", r.code, r.stdout, r.stderr)
			}
			vs := violations(t, r.stdout)
			for _, v := range vs {
				if v.Index == c.want.Index && v.Path == c.want.Path && v.Code == c.want.Code && strings.Contains(v.Message, c.want.Message) {
					return
				}
			}
			t.Fatalf("want %+v among %+v", c.want, vs)
		})
	}
}

func TestValidateShownAndVersions(t *testing.T) {
	up := lines(update(`{"id":"card","component":"Card","child":"t"},{"id":"t","component":"Text","text":"x"}`))
	if r := runTool(t, up, "validate", "--catalog", basicID, "--shown", "s"); r.code != 0 {
		t.Fatalf("an update of a shown surface before its root: exit %d %s", r.code, r.stdout)
	}
	v08 := lines(`{"beginRendering":{"surfaceId":"s","root":"root"}}`,
		`{"surfaceUpdate":{"surfaceId":"s","components":[{"id":"root","component":{"Text":{"text":{"literalString":"hi"}}}}]}}`)
	caps := filepath.Join(t.TempDir(), "caps.json")
	os.WriteFile(caps, []byte(`{"supportedCatalogIds":["https://a2ui.org/specification/v0_8/standard_catalog_definition.json"]}`), 0o644)
	if r := runTool(t, v08, "validate", "--capabilities", caps, "--version", "v0.8"); r.code != 0 {
		t.Fatalf("v0.8 through capabilities: exit %d %s %s", r.code, r.stdout, r.stderr)
	}
	// A catalog file, of the form a client sends inline.
	cat := filepath.Join(t.TempDir(), "cat.json")
	os.WriteFile(cat, []byte(`{"catalogId":"mine","components":{"Hello":{"type":"object","properties":{"component":{"const":"Hello"},"name":{"type":"string"}},"required":["component","name"]}}}`), 0o644)
	in := lines(`{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"mine"}}`, update(`{"id":"root","component":"Hello"}`))
	r := runTool(t, in, "validate", "--catalog", cat)
	if vs := violations(t, r.stdout); r.code != 1 || len(vs) != 1 || !strings.Contains(vs[0].Message, "name") {
		t.Fatalf("exit %d: %+v", r.code, vs)
	}
}

func TestValidateBadUsage(t *testing.T) {
	dir := t.TempDir()
	notJSON := filepath.Join(dir, "bad.json")
	os.WriteFile(notJSON, []byte("{nope"), 0o644)
	badSchema := filepath.Join(dir, "schema.json")
	os.WriteFile(badSchema, []byte(`{"catalogId":"x","components":{"A":{"type":12}}}`), 0o644)
	noID := filepath.Join(dir, "noid.json")
	os.WriteFile(noID, []byte(`{"components":{}}`), 0o644)
	for _, c := range []struct {
		args []string
		want string
	}{
		{nil, "Usage"},
		{[]string{"check"}, `unknown command "check"`},
		{[]string{"validate"}, "name the catalog"},
		{[]string{"validate", "--catalog", basicID, "--capabilities", "x"}, "give one"},
		{[]string{"validate", "--catalog"}, "flag needs an argument"},
		{[]string{"validate", "--colour", "red"}, "not defined"},
		{[]string{"validate", "--catalog", basicID, "--version", "v2"}, `"v2"`},
		{[]string{"validate", "--catalog", basicID, "extra"}, `"extra"`},
		{[]string{"validate", "--catalog", filepath.Join(dir, "missing.json")}, "no such file"},
		{[]string{"validate", "--catalog", notJSON}, "not a JSON object"},
		{[]string{"validate", "--catalog", badSchema}, "components.A"},
		{[]string{"validate", "--catalog", noID}, "no catalogId"},
		{[]string{"validate", "--capabilities", notJSON}, "capabilities"},
		{[]string{"parse", "--catalog", basicID, "--shown", ""}, "must not be empty"},
	} {
		r := runTool(t, create+"\n", c.args...)
		if r.code != 2 || !strings.Contains(r.stderr, c.want) || r.stdout != "" {
			t.Errorf("%q: exit %d, stderr %q, want 2 and %q", c.args, r.code, r.stderr, c.want)
		}
	}
}

func TestValidateEmptyInput(t *testing.T) {
	for _, in := range []string{"", "\n  \n"} {
		r := runTool(t, in, "validate", "--catalog", basicID)
		if r.code != 0 || r.stdout != "" || !strings.Contains(r.stderr, "no messages") {
			t.Fatalf("%q: exit %d %q %q", in, r.code, r.stdout, r.stderr)
		}
	}
}

// 10 MB of messages (1 MB under -short): one surface, thousands of components.
func TestValidateLargeInput(t *testing.T) {
	size := 10 << 20
	if testing.Short() {
		size = 1 << 20
	}
	var sb strings.Builder
	sb.WriteString(create + "\n")
	ids := []string{}
	for i := 0; sb.Len() < size; i++ {
		id := fmt.Sprintf("t%d", i)
		ids = append(ids, `"`+id+`"`)
		fmt.Fprintf(&sb, `{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":%q,"component":"Text","text":%q}]}}`+"\n", id, strings.Repeat("x", 200))
	}
	sb.WriteString(update(`{"id":"root","component":"Column","children":[`+strings.Join(ids, ",")+`]}`) + "\n")
	start := time.Now()
	r := runTool(t, sb.String(), "validate", "--catalog", basicID)
	if r.code != 0 {
		t.Fatalf("exit %d: %.300s %s", r.code, r.stdout, r.stderr)
	}
	t.Logf("%d bytes, %d messages in %v", sb.Len(), len(ids)+2, time.Since(start))
	// The same with one component broken: one violation, at its index.
	in := strings.Replace(sb.String(), `"text":"xxx`, `"text":7,"x":"xxx`, 1)
	r = runTool(t, in, "validate", "--catalog", basicID)
	if vs := violations(t, r.stdout); r.code != 1 || len(vs) == 0 || vs[0].Index != 1 {
		t.Fatalf("exit %d: %+v", r.code, vs)
	}
}

// parse writes what it reads as it reads it: the first component goes out before the
// input ends.
func TestParseStreams(t *testing.T) {
	cmd := exec.Command(bin, "parse", "--catalog", basicID)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		buf := make([]byte, 1<<16)
		var acc []byte
		for {
			n, err := out.Read(buf)
			acc = append(acc, buf[:n]...)
			for {
				i := bytes.IndexByte(acc, '\n')
				if i < 0 {
					break
				}
				lines <- string(acc[:i])
				acc = acc[i+1:]
			}
			if err != nil {
				return
			}
		}
	}()
	next := func() string {
		select {
		case l := <-lines:
			return l
		case <-time.After(10 * time.Second):
			t.Fatal("no output")
			return ""
		}
	}
	io.WriteString(in, "Here you are: <a2ui-json>[\n"+create+",\n")
	if l := next(); l != `{"type":"text","text":"Here you are: "}` {
		t.Fatalf("first line %s", l)
	}
	if l := next(); !strings.Contains(l, `"createSurface"`) {
		t.Fatalf("second line %s", l)
	}
	io.WriteString(in, `{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Column","children":["t"]},`)
	if l := next(); !strings.Contains(l, `"id":"root"`) {
		t.Fatalf("the root before the input ends: %s", l)
	}
	io.WriteString(in, `{"id":"t","component":"Text","text":"héllo"}]}}]</a2ui-json> Bye.`)
	in.Close()
	var rest []string
	for l := range lines {
		rest = append(rest, l)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v: %q", err, rest)
	}
	if len(rest) != 2 || !strings.Contains(rest[0], `"text":"héllo"`) || rest[1] != `{"type":"text","text":" Bye."}` {
		t.Fatalf("rest %q", rest)
	}
}

func TestParseViolations(t *testing.T) {
	r := runTool(t, "```a2ui\n"+create+"\n"+update(`{"id":"root","component":"Column","children":["gone"]}`)+"\n```\n", "parse", "--catalog", basicID)
	if r.code != 1 || !strings.Contains(r.stdout, `{"type":"violation","index":1,"path":"/updateComponents/components/0/children/0","code":"dangling_reference"`) {
		t.Fatalf("exit %d %s", r.code, r.stdout)
	}
}

// TestValidatePolicy runs the hostile corpus through the command: with the corpus's
// policy every vector is a violation of its rule (exit 1), whose message does not repeat
// what it refuses; with --no-policy every vector is valid; the default policy passes
// benign output and refuses a javascript: image. Under -short it runs one vector of each
// code and version (the a2ui package runs them all in process).
func TestValidatePolicy(t *testing.T) {
	file := filepath.Join(t.TempDir(), "policy.json")
	if err := os.WriteFile(file, []byte(policytest.PolicyFile), 0o600); err != nil {
		t.Fatal(err)
	}
	n := 0
	seen := map[[2]string]bool{}
	for _, v := range policytest.Corpus() {
		if !v.A2UI() {
			continue
		}
		if testing.Short() {
			if seen[[2]string{v.Version, v.Code}] {
				continue
			}
			seen[[2]string{v.Version, v.Code}] = true
		}
		n++
		id := "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
		if v.Version == "v0.8" {
			id = "https://a2ui.org/specification/v0_8/standard_catalog_definition.json"
		}
		in := lines(v.Messages()...)
		r := runTool(t, in, "validate", "--version", v.Version, "--catalog", id, "--policy", file)
		found := false
		for _, x := range violations(t, r.stdout) {
			found = found || x.Code == v.Code
			if strings.Contains(x.Message, policytest.Needle) {
				t.Errorf("%s: the message repeats what it refuses: %s", v.Name, x.Message)
			}
		}
		if r.code != 1 || !found {
			t.Errorf("%s: exit %d, no %s violation: %s %s", v.Name, r.code, v.Code, r.stdout, r.stderr)
		}
		if r := runTool(t, in, "validate", "--version", v.Version, "--catalog", id, "--no-policy"); r.code != 0 && v.Code != "inaccessible" {
			t.Errorf("%s: not valid without a policy: %s", v.Name, r.stdout)
		}
	}
	t.Logf("%d vectors, each a violation", n)
	img := update(`{"id":"root","component":"Column","children":["pic"]},{"id":"pic","component":"Image","url":"JaVa\tScript:alert(1)","description":"d"}`)
	r := runTool(t, lines(create, img), "validate", "--catalog", basicID)
	if vs := violations(t, r.stdout); r.code != 1 || len(vs) != 1 || vs[0].Code != "unsafe_url" || vs[0].Path != "/updateComponents/components/1/url" {
		t.Errorf("the default policy: exit %d %s", r.code, r.stdout)
	}
	ok := update(`{"id":"root","component":"Column","children":["pic"]},{"id":"pic","component":"Image","url":"https://img.example.org/a.png","description":"d"}`)
	if r := runTool(t, lines(create, ok), "validate", "--catalog", basicID); r.code != 0 {
		t.Errorf("benign output: exit %d %s", r.code, r.stdout)
	}
	if r := runTool(t, lines(create), "validate", "--catalog", basicID, "--policy", file, "--no-policy"); r.code != 2 {
		t.Errorf("--policy with --no-policy: exit %d", r.code)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`{"urlSchemes":["javascript"]}`), 0o600)
	if r := runTool(t, lines(create), "validate", "--catalog", basicID, "--policy", bad); r.code != 2 || !strings.Contains(r.stderr, "urlSchemes") {
		t.Errorf("a bad policy file: exit %d %s", r.code, r.stderr)
	}
}
