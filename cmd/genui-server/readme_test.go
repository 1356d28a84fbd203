package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// repoRoot is the repository root, relative to this package.
const repoRoot = "../.."

// TestREADMECommandsRunAsWritten runs, against the server the README's quick start starts
// (the offline model, no key), every curl to localhost:3400 of the sh and bash blocks of
// README.md, CONTRIBUTING.md and the pages under docs/, exactly as written but for the
// port: each must exit 0, and every curl in it must get a 2xx. Commands run in page order
// from a copy of the repository root (symbolic links), so a command may read what an
// earlier one of its page wrote (| tee turn1.sse) or use a variable an earlier one set
// (SID=$(curl …)). Commands with an elided part (…), a key ($ALICE_KEY) or a server of
// their block's own configuration are skipped, and logged.
func TestREADMECommandsRunAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: starts the server binary and runs the documentation's curl commands")
	}
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("curl is not installed")
		}
		t.Skip("curl is not installed")
	}
	byFile := docCommandsOf(t)
	if len(byFile) == 0 {
		t.Skip("no page has a curl to localhost:3400 in a sh or bash block")
	}
	srv := startQuickStart(t)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.base, "http://"))
	dir := repoCopy(t)
	for _, cmds := range byFile {
		r := &docRunner{port: port, dir: dir, vars: map[string]string{}, failed: map[string]string{}, varDir: t.TempDir()}
		for _, c := range cmds {
			name := c.file + ":" + strconv.Itoa(c.line)
			if c.skip != "" {
				t.Logf("%s: skipped, %s: %s", name, c.skip, oneLine(c.text))
				continue
			}
			t.Run(name, func(t *testing.T) { r.run(t, c) })
		}
	}
}

// A docCommand is one shell command of a sh or bash block of a Markdown page.
type docCommand struct {
	file    string   // relative to the repository root
	line    int      // where the command starts
	text    string   // as written, its prompt ($ ) stripped, continuation lines kept
	assigns []string // the variables it sets, when it only sets variables
	skip    string   // why it is not run, or ""
}

// docCommandsOf returns the commands to run (or to log as skipped) of each page, in page
// order, omitting pages that have none.
func docCommandsOf(t *testing.T) [][]docCommand {
	t.Helper()
	var out [][]docCommand
	for _, f := range markdownPages(t) {
		b, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		var cmds []docCommand
		for _, blk := range shellBlocks(string(b)) {
			cmds = append(cmds, blockCommands(f, blk)...)
		}
		if len(cmds) > 0 {
			out = append(out, cmds)
		}
	}
	return out
}

// markdownPages returns README.md, CONTRIBUTING.md when there is one, and the Markdown
// pages under docs/, relative to the repository root.
func markdownPages(t *testing.T) []string {
	t.Helper()
	pages := []string{"README.md"}
	if _, err := os.Stat(filepath.Join(repoRoot, "CONTRIBUTING.md")); err == nil {
		pages = append(pages, "CONTRIBUTING.md")
	}
	err := filepath.WalkDir(filepath.Join(repoRoot, "docs"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.EqualFold(filepath.Ext(p), ".md") {
			rel, _ := filepath.Rel(repoRoot, p)
			pages = append(pages, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return pages
}

// A shellBlock is the text of a fenced sh or bash block, as lines.
type shellBlock struct {
	line  int // of the block's first line, after its fence
	lines []string
}

var docFenceRE = regexp.MustCompile("^ {0,3}(`{3,}|~{3,})[ \t]*([^ \t`]*)")

// shellBlocks returns the fenced blocks of a Markdown page whose info string is sh or bash.
func shellBlocks(page string) []shellBlock {
	var out []shellBlock
	var cur *shellBlock
	fence := ""
	for i, l := range strings.Split(page, "\n") {
		m := docFenceRE.FindStringSubmatch(l)
		switch {
		case fence == "" && m != nil:
			fence = m[1]
			if lang := strings.ToLower(m[2]); lang == "sh" || lang == "bash" {
				cur = &shellBlock{line: i + 2}
			}
		case fence != "" && m != nil && m[1][0] == fence[0] && len(m[1]) >= len(fence) && m[2] == "":
			if cur != nil {
				out = append(out, *cur)
			}
			fence, cur = "", nil
		case cur != nil:
			cur.lines = append(cur.lines, l)
		}
	}
	return out
}

// blockCommands splits a block into commands (a command goes on while a quote or $( is
// open or a line ends with \) and returns those to run: each curl to localhost:3400 and
// each command that only sets variables, with the reason to skip it, if any.
func blockCommands(file string, b shellBlock) []docCommand {
	var out []docCommand
	server := ""
	for i := 0; i < len(b.lines); i++ {
		start := i
		text := strings.TrimPrefix(b.lines[i], "$ ")
		for shellOpen(text) && i+1 < len(b.lines) {
			i++
			text += "\n" + b.lines[i]
		}
		c := docCommand{file: file, line: b.line + start, text: text}
		words := shellWords(text)
		if len(words) == 0 {
			continue
		}
		if s := serverStart(words); s != "" {
			server = fmt.Sprintf("%s:%d (%s)", file, c.line, s)
			continue
		}
		c.assigns = assignments(words)
		isCurl := slices.Contains(words, "curl") || strings.Contains(text, "$(curl ")
		if !(isCurl && strings.Contains(text, "localhost:3400")) && c.assigns == nil {
			continue
		}
		c.skip = skipReason(text, server)
		out = append(out, c)
	}
	return out
}

var keyVarRE = regexp.MustCompile(`\$\{?([A-Za-z0-9_]*(?i:key|token|secret|password)[A-Za-z0-9_]*)`)

// skipReason says why a command is not run: it has an elided part, needs a key, or talks
// to a server its block starts with a configuration of its own (server).
func skipReason(text, server string) string {
	switch {
	case strings.Contains(text, "…"):
		return "it has an elided part (…)"
	case keyVarRE.MatchString(text):
		return "it needs a key ($" + keyVarRE.FindStringSubmatch(text)[1] + ")"
	case server != "":
		return "it talks to the server of " + server + ", not the quick start's"
	}
	return ""
}

var assignRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// assignments returns the variables a command sets when all it does is set variables
// (NAME=value …), or nil.
func assignments(words []string) []string {
	var names []string
	for _, w := range words {
		if !assignRE.MatchString(w) {
			return nil
		}
		names = append(names, w[:strings.IndexByte(w, '=')])
	}
	return names
}

// serverStart returns how a command starts a server with a configuration of its own
// (the environment it sets or its arguments), or "" when it starts none, or starts the
// quick start's (a plain make run).
func serverStart(words []string) string {
	i := 0
	for i < len(words) && assignRE.MatchString(words[i]) {
		i++
	}
	env, rest := i > 0, words[i:]
	switch {
	case len(rest) == 0:
		return ""
	case len(rest) >= 2 && rest[0] == "make" && rest[1] == "run":
		if env || len(rest) > 2 {
			return strings.Join(words, " ")
		}
		return ""
	case filepath.Base(rest[0]) == "genui-server",
		len(rest) >= 3 && rest[0] == "go" && rest[1] == "run" && strings.Contains(rest[2], "genui-server"),
		len(rest) >= 2 && rest[0] == "docker" && rest[1] == "run":
		return strings.Join(words, " ")
	}
	return ""
}

// A shellScanner walks shell text, knowing which quotes and substitutions are open.
type shellScanner struct {
	stack []byte // open contexts: ' " ( `
}

func (s *shellScanner) top() byte {
	if len(s.stack) == 0 {
		return 0
	}
	return s.stack[len(s.stack)-1]
}

func (s *shellScanner) push(c byte) { s.stack = append(s.stack, c) }
func (s *shellScanner) pop()        { s.stack = s.stack[:len(s.stack)-1] }

// step reads the character at text[i] and returns how many characters it took (an
// escape takes two, a comment to the end of its line).
func (s *shellScanner) step(text string, i int) int {
	c := text[i]
	switch top := s.top(); {
	case top == '\'':
		if c == '\'' {
			s.pop()
		}
	case c == '\\':
		return min(2, len(text)-i)
	case top == '"' && c == '"', top == '`' && c == '`', top == '(' && c == ')':
		s.pop()
	case c == '$' && i+1 < len(text) && text[i+1] == '(':
		s.push('(')
		return 2
	case c == '`':
		s.push('`')
	case top == '"':
	case c == '\'' || c == '"' || c == '(':
		s.push(c)
	case c == '#' && (i == 0 || strings.IndexByte(" \t\n;|&(", text[i-1]) >= 0):
		if end := strings.IndexByte(text[i:], '\n'); end >= 0 {
			return end
		}
		return len(text) - i
	}
	return 1
}

// shellOpen reports whether a command goes on past the end of text: a quote, $( or
// backquote is open, or text ends with a backslash.
func shellOpen(text string) bool {
	var s shellScanner
	for i := 0; i < len(text); {
		if text[i] == '\\' && s.top() != '\'' && i+1 == len(text) {
			return true
		}
		i += s.step(text, i)
	}
	return len(s.stack) > 0
}

// shellWords splits a command into its words at the top level (quotes, $(…) and
// backquotes kept whole), without its comments; a continuation (\ and a newline) is a
// space.
func shellWords(text string) []string {
	var s shellScanner
	var words []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() > 0 {
			words = append(words, cur.String())
			cur.Reset()
		}
	}
	for i := 0; i < len(text); {
		c := text[i]
		top := len(s.stack) == 0
		switch {
		case top && (c == ' ' || c == '\t' || c == '\n'):
			flush()
			i++
			continue
		case top && c == '#' && cur.Len() == 0:
			end := strings.IndexByte(text[i:], '\n')
			if end < 0 {
				end = len(text) - i
			}
			i += end
			continue
		case top && c == '\\' && strings.HasPrefix(text[i:], "\\\n"):
			flush()
			i += 2
			continue
		}
		n := s.step(text, i)
		cur.WriteString(text[i : i+n])
		i += n
	}
	flush()
	return words
}

var varRE = regexp.MustCompile(`\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))`)

// usedVars returns the variables a command expands: $NAME and ${NAME} outside single
// quotes and comments.
func usedVars(text string) []string {
	var s shellScanner
	var names []string
	for i := 0; i < len(text); {
		if text[i] == '$' && s.top() != '\'' {
			if m := varRE.FindStringSubmatch(text[i:]); m != nil {
				names = append(names, m[1]+m[2])
			}
		}
		i += s.step(text, i)
	}
	return names
}

// startQuickStart starts the server as the quick start does (make run: no flags, so the
// offline model when no key is in the environment) on a free port, its environment
// cleared of every setting and key the server reads.
func startQuickStart(t *testing.T) *replica {
	t.Helper()
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if serverSetting(k) {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
	srv := startServer(t, nil, "/readyz")
	var ready struct {
		Model string
		LLM   *bool
	}
	_, _, body := call(t, http.MethodGet, srv.base+"/readyz", nil, "")
	if err := json.Unmarshal([]byte(body), &ready); err != nil || ready.LLM == nil || *ready.LLM {
		t.Fatalf("the quick start's server runs %q, not the offline model: %s", ready.Model, body)
	}
	return srv
}

// serverSetting reports whether an environment variable configures the server or holds
// a model provider's key or address.
func serverSetting(k string) bool {
	for _, p := range []string{"GENUI_", "GEMINI_", "GOOGLE_", "OPENAI_", "OLLAMA_", "ANTHROPIC_", "VERTEX"} {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return strings.HasSuffix(k, "_API_KEY") || k == "PORT"
}

// repoCopy returns a directory holding a symbolic link to each entry of the repository
// root: commands run from it read the repository's files (schemas/catalogs/basic.json)
// and write theirs (turn1.sse) outside the repository.
func repoCopy(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	root, err := filepath.Abs(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if err := os.Symlink(filepath.Join(root, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A docRunner runs the commands of one page in order, keeping the variables they set.
type docRunner struct {
	port   string
	dir    string            // where commands run
	varDir string            // where a command leaves the values of the variables it sets
	vars   map[string]string // set by earlier commands of the page
	failed map[string]string // variables whose command failed, with where it is
}

// curlStatus makes every curl of a command also write its HTTP status to standard error,
// leaving its output and arguments as they are.
const curlStatus = `curl() { command curl -w '%{stderr}\ncurl-status %{http_code}\n' "$@"; }`

var statusRE = regexp.MustCompile(`(?m)^curl-status (\d{3})$`)

// run runs c with sh -c, and checks it exits 0, every curl in it got a 2xx, its answers
// carry no error and the variables it sets have values.
func (r *docRunner) run(t *testing.T, c docCommand) {
	for _, a := range c.assigns {
		r.failed[a] = fmt.Sprintf("%s:%d", c.file, c.line)
	}
	prelude, err := r.prelude(c)
	if err != nil {
		t.Fatalf("cannot run as written: %v\n%s", err, c.text)
	}
	start := time.Now()
	code, stdout, stderr := runShell(r.dir, r.script(c, prelude))
	statuses := statusRE.FindAllStringSubmatch(stderr, -1)
	stderr = statusRE.ReplaceAllString(stderr, "")
	problem := commandProblem(code, statuses, strings.Contains(c.text, "curl"))
	if problem == "" {
		problem = answerError(stdout)
	}
	if problem == "" {
		problem = r.keepVars(c)
	}
	if problem != "" {
		t.Fatalf("%s\n%s\nstdout:\n%s\nstderr:\n%s", problem, c.text, clip(stdout), clip(stderr))
	}
	t.Logf("exit 0, HTTP %s, %v\n%s", statusList(statuses), time.Since(start).Round(time.Millisecond), clip(stdout))
}

// script is the shell script that runs c as written, on the server's port, after
// prelude, keeping its exit status and leaving the values of the variables it sets in
// varDir.
func (r *docRunner) script(c docCommand, prelude string) string {
	text := strings.ReplaceAll(c.text, "localhost:3400", "localhost:"+r.port)
	script := curlStatus + "\n" + prelude + text + "\n__status=$?\n"
	for _, a := range c.assigns {
		script += fmt.Sprintf("printf %%s \"$%s\" > '%s'\n", a, filepath.Join(r.varDir, a))
	}
	return script + "exit $__status\n"
}

// keepVars keeps the values of the variables c set, for the commands after it, or says
// which one it left empty (or null, as jq writes a missing field).
func (r *docRunner) keepVars(c docCommand) string {
	for _, a := range c.assigns {
		v, _ := os.ReadFile(filepath.Join(r.varDir, a))
		if len(v) == 0 || string(v) == "null" {
			return fmt.Sprintf("sets $%s to %q", a, v)
		}
		r.vars[a] = string(v)
		delete(r.failed, a)
	}
	return ""
}

// prelude returns the assignments that give a command the variables earlier commands
// of its page set, or why it cannot run.
func (r *docRunner) prelude(c docCommand) (string, error) {
	var b strings.Builder
	for _, v := range usedVars(c.text) {
		if slices.Contains(c.assigns, v) {
			continue
		}
		if where, ok := r.failed[v]; ok {
			return "", fmt.Errorf("$%s is set by %s, which failed", v, where)
		}
		val, ok := r.vars[v]
		if !ok {
			if _, env := os.LookupEnv(v); env {
				continue
			}
			return "", fmt.Errorf("$%s is set by no earlier command of %s", v, c.file)
		}
		fmt.Fprintf(&b, "%s='%s'\n", v, strings.ReplaceAll(val, "'", `'"'"'`))
	}
	return b.String(), nil
}

// commandProblem says what is wrong with a command's run: its exit status, a curl that
// got no 2xx (000: no answer), or a curl command whose curl reported nothing.
func commandProblem(code int, statuses [][]string, curl bool) string {
	var bad []string
	for _, s := range statuses {
		if s[1][0] != '2' {
			bad = append(bad, s[1])
		}
	}
	switch {
	case len(bad) > 0:
		return fmt.Sprintf("curl got HTTP %s (exit status %d)", strings.Join(bad, ", "), code)
	case code != 0:
		return fmt.Sprintf("exit status %d", code)
	case curl && len(statuses) == 0:
		return "no curl reported an HTTP status (does the command set -w?)"
	}
	return ""
}

// answerError returns the first line of a command's output that is an error answered
// with a 2xx: a JSON object (alone on its line, or an SSE data line) with an "error"
// member, or an event of type error or RUN_ERROR; or "".
func answerError(stdout string) string {
	for _, l := range strings.Split(stdout, "\n") {
		l = strings.TrimPrefix(strings.TrimSpace(l), "data: ")
		var v struct {
			Error  json.RawMessage `json:"error"`
			Type   string          `json:"type"`
			Result struct {
				IsError bool `json:"isError"`
			} `json:"result"`
		}
		if json.Unmarshal([]byte(l), &v) != nil {
			continue
		}
		if v.Error != nil || v.Type == "error" || v.Type == "RUN_ERROR" || v.Result.IsError {
			return "the answer carries an error: " + oneLine(l)
		}
	}
	return ""
}

// runShell runs script with sh -c in dir, for at most 30 seconds, and returns its exit
// status (-1 if it did not exit), standard output and standard error.
func runShell(dir, script string) (int, string, string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "sh", "-c", script)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if err != nil && ctx.Err() != nil {
		stderr.WriteString("\n(timed out after 30s)")
	}
	return code, stdout.String(), stderr.String()
}

// statusList is the HTTP statuses of a run, for the log.
func statusList(statuses [][]string) string {
	if len(statuses) == 0 {
		return "none"
	}
	var s []string
	for _, m := range statuses {
		s = append(s, m[1])
	}
	return strings.Join(s, ", ")
}

// clip shortens a command's output for a report.
func clip(s string) string {
	if len(s) > 3000 {
		return s[:3000] + "\n…"
	}
	return s
}

// oneLine is a command on one line, for the log.
func oneLine(s string) string {
	r := []rune(strings.Join(strings.Fields(strings.ReplaceAll(s, "\\\n", " ")), " "))
	if len(r) > 200 {
		return string(r[:200]) + "…"
	}
	return string(r)
}

// Commands are split as the shell reads them, and those to run are told from those to
// skip; variables are found outside single quotes.
func TestDocShellCommands(t *testing.T) {
	page := "Text\n```sh\n" +
		"$ curl -s localhost:3400/a -d '{\"x\":\n  \"it'\"'\"'s\"}'   # a comment\n" +
		"# {\"output\":1}\n" +
		"SID=$(curl -s localhost:3400/startSession -H 'A: b' \\\n  -d \"{\\\"c\\\":$(cat f)}\" | sed 's/.*\"result\":\"\\([^\"]*\\)\".*/\\1/')\n" +
		"curl localhost:3400/b -d '{\"s\":\"'$SID'\",\"t\":\"$NOT\"}' | tee out\n" +
		"websocat ws://localhost:3400/ws\n" +
		"curl localhost:3400/c -H \"Authorization: Bearer $ALICE_KEY\"\n" +
		"curl localhost:3400/d …\n" +
		"GENUI_MODEL=x genui-server\n" +
		"curl localhost:3400/e\n" +
		"```\n```json\ncurl localhost:3400/f\n```\n"
	blocks := shellBlocks(page)
	if len(blocks) != 1 || blocks[0].line != 3 {
		t.Fatalf("blocks: %+v", blocks)
	}
	var got []string
	for _, c := range blockCommands("p.md", blocks[0]) {
		got = append(got, fmt.Sprintf("%d %v %q", c.line, c.assigns, c.skip))
	}
	want := []string{
		`3 [] ""`,
		`6 [SID] ""`,
		`8 [] ""`,
		`10 [] "it needs a key ($ALICE_KEY)"`,
		`11 [] "it has an elided part (…)"`,
		`13 [] "it talks to the server of p.md:12 (GENUI_MODEL=x genui-server), not the quick start's"`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("commands:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if v := usedVars(`curl -d '{"s":"'$SID'","t":"$NOT"}' -H "$EXT" ${X}`); !slices.Equal(v, []string{"SID", "EXT", "X"}) {
		t.Errorf("usedVars: %v", v)
	}
	if serverStart(shellWords("make run   # the quick start")) != "" || serverStart(shellWords("PORT=1 make run")) == "" {
		t.Error("serverStart: make run is the quick start's server, PORT=1 make run is not")
	}
	for out, bad := range map[string]bool{
		`{"type":"result","result":{"finishReason":"stop"}}`:                         false,
		"id: 1\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"kind\":\"task\"}}": false,
		`{"type":"error","error":{"status":"UNAVAILABLE"}}`:                          true,
		"data: {\"jsonrpc\":\"2.0\",\"id\":1,\"error\":{\"code\":-32602}}":           true,
		"data: {\"type\":\"RUN_ERROR\",\"message\":\"x\"}":                           true,
		`{"jsonrpc":"2.0","id":1,"result":{"isError":true,"content":[]}}`:            true,
	} {
		if got := answerError(out); (got != "") != bad {
			t.Errorf("answerError(%q) = %q", out, got)
		}
	}
	if commandProblem(0, [][]string{{"", "200"}, {"", "404"}}, true) == "" || commandProblem(0, nil, true) == "" ||
		commandProblem(1, nil, false) == "" || commandProblem(0, [][]string{{"", "204"}}, true) != "" {
		t.Error("commandProblem: a 404, no status or exit 1 is a problem, a 204 and exit 0 is not")
	}
}
