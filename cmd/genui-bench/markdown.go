package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// The Markdown report (--markdown FILE): the figures of one run as a page of the docs,
// the one place performance figures are kept. Each phase's section holds what the table
// on stdout prints for it, with the same writers: their tab-separated lines become
// Markdown tables, their other lines paragraphs.

// phaseInfo names a phase in the Markdown report and says what it measures.
type phaseInfo struct {
	title string
	about string
}

// phaseInfos holds every phase of allPhases.
var phaseInfos = map[string]phaseInfo{
	"latency": {"Added latency",
		"Turns one after another, then over `--latency-concurrency` closed-loop clients, through the server, next to the same model calls made straight to the fake model with the genai client. Added = server percentile − direct percentile, for the first tool chunk and the end of the stream; also the server's CPU per turn at concurrency 1."},
	"throughput": {"Throughput",
		"For each `--concurrency` level, closed-loop clients start turns for `--duration`: turns/s, errors, the server's CPU per turn (Δ(utime+stime) / completed turns) and its peak RSS."},
	"sessions": {"Idle sessions",
		"Server RSS before and after creating `--sessions` sessions with the basic catalog: bytes per idle session. RSS is coarse: it includes the garbage collector's headroom."},
	"catalogs": {"Catalogs",
		"Server RSS before and after creating `--catalogs` sessions, each with its own generated catalog of `--catalog-bytes` of compact JSON that the server compiles and keeps: bytes per catalog, their ratio to the catalog's JSON size, and CPU per catalog."},
	"streams": {"Open streams on a slow model",
		"`--streams` turns held open at once on a model that holds its answer: server RSS per open stream (with `--streams-10k`, also 10,000 streams and their errors)."},
	"bytes": {"Bytes per turn",
		"Response body bytes of one simple turn (text, one surface, result) in NDJSON and in SSE, and the same on the wire with the status line, headers and chunked framing."},
	"a2ui": {"A2UI streaming",
		"How early an A2UI surface streamed by `POST /generateA2ui` becomes renderable: a 29-component surface written by the fake model at `--a2ui-tokens-per-s`, the first renderable part against the complete surface, per A2UI version."},
	"conversations": {"Client tools and conversations",
		"Client tool round trips, then multi-turn conversations the client resends whole (stateless) next to conversations the server holds (`conversationId`): the bytes held against the bytes the client received, and the server's CPU per turn."},
	"a2a": {"A2A and MCP",
		"The same A2UI turn through `POST /generateA2ui`, through the A2A agent (`message/stream` with the A2UI extension) and through the MCP tool `generate_ui`: times to the first and last A2UI message and to the end, and the server's CPU per turn, as ratios to `/generateA2ui`."},
	"ws": {"WebSocket",
		"`GET /ws`, JSON-RPC 2.0 over WebSocket: the server's RSS per idle connection holding one session, and a prompt over `/ws` next to the same turn over `POST /generateUi` NDJSON (time to the first UI update, to the end, CPU per turn)."},
	"redis": {"Redis",
		"Two replicas sharing one Redis node, then a Redis Cluster the bench starts: turns/s and CPU per turn, cluster against single, and what `--redis-wait-replicas 1` adds to a turn and the shared limits to its CPU."},
	"open": {"Open streams",
		"Levels of stateless `POST /generateA2ui` turns held open at once on one fresh server, the model paced as a real one: the server's peak RSS, live heap, goroutines and descriptors per extra open stream, and the times of the first A2UI message and of the end."},
	"floor": {"net/http floor",
		"The open phase's measure on net/http alone (a plain HTTP/1.1 handler streaming an h2c call of the fake model), no genui server: the peak RSS per extra open stream, a floor for the open phase's figure."},
	"policy": {"UI policy",
		"Two servers side by side, the default UI policy on one and `--policy-off all` on the other: the server's CPU per turn of unpaced A2UI turns and of genui turns, on against off, in rounds alternating the first server."},
	"rows": {"Long lists",
		"One A2UI surface of a Column of N Text rows per level, unpaced and paced: the A2UI bytes the client received against the bytes of the surface's final state, time, the server's CPU and peak RSS, and how the turn ended."},
	"transports": {"Transports",
		"The server's CPU per turn through each transport (genui NDJSON and SSE, A2UI NDJSON, A2A, AG-UI, MCP, `/ws`, the yield protocol), unpaced; with `--transports-baseline-bin`, next to a baseline binary's, side by side."},
}

// machineInfo is what the Markdown report says of the machine the run took place on.
// Empty or zero fields are unknown.
type machineInfo struct {
	CPUModel      string
	CPUs          int
	MemTotalBytes int64
	GoVersion     string
	OS, Arch      string
}

// markdownMeta is what the Markdown report holds besides the Report.
type markdownMeta struct {
	Command  string // the command line, shell-quoted
	Revision string // the commit the bench was built from, "+dirty" when modified; "": unknown
	Machine  machineInfo
}

// writeMarkdownFile writes the Markdown report of r, produced by args, to path.
func writeMarkdownFile(path string, r *Report, args []string) error {
	var buf bytes.Buffer
	meta := markdownMeta{Command: commandLine("genui-bench", args), Revision: buildRevision(), Machine: readMachine()}
	if err := writeMarkdown(&buf, r, meta); err != nil {
		return fmt.Errorf("--markdown: %w", err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("--markdown: %w", err)
	}
	return nil
}

// writeMarkdown writes the Markdown report: title, run and machine, then one section per
// phase that ran, in the order of allPhases, then the notes.
func writeMarkdown(w io.Writer, r *Report, m markdownMeta) error {
	bw := bufio.NewWriter(w)
	writeMarkdownHead(bw, r, m)
	for _, phase := range allPhases {
		lines, ran := phaseLines(r, phase)
		if !ran {
			continue
		}
		info := phaseInfos[phase]
		fmt.Fprintf(bw, "\n## %s (`%s`)\n\n%s\n", info.title, phase, info.about)
		if lines == nil {
			fmt.Fprintf(bw, "\nNo figures: the phase was skipped (see the notes).\n")
			continue
		}
		writeMarkdownBlocks(bw, lines)
	}
	if notes := reportNotes(r); len(notes) > 0 {
		fmt.Fprintf(bw, "\n## Notes\n\n")
		for _, n := range notes {
			fmt.Fprintf(bw, "- %s\n", mdEscape(n))
		}
	}
	return bw.Flush()
}

// writeMarkdownHead writes the title, the notice that the file is generated, and the
// run: date, machine, server and command line.
func writeMarkdownHead(w io.Writer, r *Report, m markdownMeta) {
	fmt.Fprintf(w, "# Benchmarks\n\n")
	fmt.Fprintf(w, "This file is generated by `genui-bench --markdown` (cmd/genui-bench) from one run; "+
		"do not edit it by hand. To update it, run the command below again and commit the result. "+
		"What each figure means: `go doc ./cmd/genui-bench`.\n\n")
	fmt.Fprintf(w, "- Date: %s\n", reportDate(r))
	fmt.Fprintf(w, "- Machine: %s\n", machineLine(m.Machine))
	fmt.Fprintf(w, "- Go: %s\n", orUnknown(m.Machine.GoVersion))
	if m.Revision != "" {
		fmt.Fprintf(w, "- Commit: %s\n", m.Revision)
	}
	fmt.Fprintf(w, "- Server: %s\n", mdEscape(serverLine(r.Target)))
	if r.Target.Mode != "none" {
		fmt.Fprintf(w, "- Fake model (latency and throughput turns): %s\n", mdEscape(fakeModelLine(r.Settings)))
	}
	fmt.Fprintf(w, "- Phases: %s\n", strings.Join(r.Settings.Phases, ", "))
	fmt.Fprintf(w, "- Wall time: %.0f s\n", r.WallS)
	fmt.Fprintf(w, "\nCommand:\n\n```sh\n%s\n```\n", m.Command)
}

// reportDate returns the day the run started, YYYY-MM-DD (UTC).
func reportDate(r *Report) string {
	t, err := time.Parse(time.RFC3339, r.StartedAt)
	if err != nil {
		return "unknown"
	}
	return t.UTC().Format(time.DateOnly)
}

// machineLine describes the machine: CPU model, logical CPUs, memory, OS/arch.
func machineLine(m machineInfo) string {
	mem := "memory unknown"
	if m.MemTotalBytes > 0 {
		mem = fmtBytes(m.MemTotalBytes) + " of memory"
	}
	return fmt.Sprintf("%s, %d CPUs, %s, %s/%s", mdEscape(orUnknown(m.CPUModel)), m.CPUs, mem, m.OS, m.Arch)
}

// serverLine describes the server under test.
func serverLine(t TargetInfo) string {
	switch t.Mode {
	case "none":
		return "none (no phase run needs one)"
	case "url":
		return fmt.Sprintf("%s, started by hand, model %s", t.URL, t.Model)
	}
	return fmt.Sprintf("a child server started by the bench (model %s, against a fake Gemini the bench serves)", t.Model)
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}

// phaseLines returns the lines the table prints for phase, and whether the phase ran;
// nil lines for a phase that ran without figures (skipped, with a note).
func phaseLines(r *Report, phase string) (lines []string, ran bool) {
	write := phaseWriter(r, phase)
	if write == nil {
		return nil, slices.Contains(r.Settings.Phases, phase)
	}
	write(func(format string, a ...any) { lines = append(lines, fmt.Sprintf(format, a...)) })
	return lines, true
}

// phaseWriter returns the writer of phase's part of the table, nil when the report has
// no figures of the phase. The memory table the sessions, catalogs and streams phases
// share in the table is split here, its header repeated in each.
func phaseWriter(r *Report, phase string) func(p func(string, ...any)) {
	type printer = func(string, ...any)
	switch {
	case phase == "latency" && r.Latency != nil:
		return func(p printer) { writeLatency(p, r.Latency) }
	case phase == "throughput" && r.Throughput != nil:
		return func(p printer) { writeThroughput(p, r.Throughput) }
	case phase == "sessions" && r.Sessions != nil:
		return func(p printer) { writeMemoryHeader(p); writeSessionsRow(p, r.Sessions) }
	case phase == "catalogs" && r.Catalogs != nil:
		return func(p printer) { writeMemoryHeader(p); writeCatalogsRow(p, r.Catalogs) }
	case phase == "streams" && (r.Streams != nil || r.Streams10k != nil):
		return func(p printer) { writeMemoryHeader(p); writeStreamsRows(p, r.Streams, r.Streams10k) }
	case phase == "bytes" && r.Bytes != nil:
		return func(p printer) { writeBytes(p, r.Bytes) }
	case phase == "a2ui" && r.A2UI != nil:
		return func(p printer) { writeA2UI(p, r.A2UI) }
	case phase == "conversations" && r.Conversations != nil:
		return func(p printer) { writeConversations(p, r.Conversations) }
	case phase == "a2a" && r.A2A != nil:
		return func(p printer) { writeA2A(p, r.A2A) }
	case phase == "ws" && r.WS != nil:
		return func(p printer) { writeWS(p, r.WS) }
	case phase == "redis" && r.Redis != nil:
		return func(p printer) { writeRedis(p, r.Redis) }
	case phase == "open" && r.Open != nil:
		return func(p printer) { writeOpen(p, r.Open) }
	case phase == "floor" && r.Floor != nil:
		return func(p printer) { writeFloor(p, r.Floor) }
	case phase == "policy" && r.Policy != nil:
		return func(p printer) { writePolicy(p, r.Policy) }
	case phase == "rows" && r.Rows != nil:
		return func(p printer) { writeRows(p, r.Rows) }
	case phase == "transports" && r.Transports != nil:
		return func(p printer) { writeTransports(p, r.Transports) }
	}
	return nil
}

// writeMarkdownBlocks writes a phase's lines: each run of tab-separated lines as a table
// whose first line is the header, each other non-empty line as a paragraph.
func writeMarkdownBlocks(w io.Writer, lines []string) {
	for i := 0; i < len(lines); {
		if !strings.Contains(lines[i], "\t") {
			if s := strings.TrimSpace(lines[i]); s != "" {
				fmt.Fprintf(w, "\n%s\n", mdParagraph(s))
			}
			i++
			continue
		}
		j := i
		for j < len(lines) && strings.Contains(lines[j], "\t") {
			j++
		}
		writeMarkdownTable(w, lines[i:j])
		i = j
	}
}

// writeMarkdownTable writes tab-separated lines as a Markdown table, the first line the
// header, every row padded to the widest.
func writeMarkdownTable(w io.Writer, lines []string) {
	rows := make([][]string, len(lines))
	width := 0
	for i, l := range lines {
		rows[i] = strings.Split(l, "\t")
		width = max(width, len(rows[i]))
	}
	fmt.Fprintln(w)
	for i, row := range rows {
		writeMarkdownRow(w, row, width)
		if i == 0 {
			writeMarkdownRow(w, slices.Repeat([]string{"---"}, width), width)
		}
	}
}

// writeMarkdownRow writes one row of width cells, missing ones empty.
func writeMarkdownRow(w io.Writer, cells []string, width int) {
	var b strings.Builder
	b.WriteString("|")
	for i := range width {
		cell := ""
		if i < len(cells) {
			cell = mdEscape(strings.TrimSpace(cells[i]))
		}
		b.WriteString(" " + cell + " |")
	}
	fmt.Fprintln(w, b.String())
}

// mdEscape escapes what Markdown would read as markup in text the table prints: a
// backslash, code spans, emphasis (an underscore only at a word's edge: within a word it
// is text), table cells' bars, and HTML tags and autolinks (a < before a letter, /, ! or
// ?); "<= 10" and "->" stay as they are.
func mdEscape(s string) string {
	rs := []rune(s)
	var b strings.Builder
	for i, r := range rs {
		var prev, next rune
		if i > 0 {
			prev = rs[i-1]
		}
		if i+1 < len(rs) {
			next = rs[i+1]
		}
		if mdMarkup(r, prev, next) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// mdMarkup tells whether r, between prev and next (0 at an edge), is markup to escape.
func mdMarkup(r, prev, next rune) bool {
	switch r {
	case '\\', '`', '*', '|':
		return true
	case '_':
		return !isWordRune(prev) || !isWordRune(next)
	case '<':
		return unicode.IsLetter(next) || next == '/' || next == '!' || next == '?'
	}
	return false
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// mdParagraph escapes s for a paragraph of its own: as mdEscape, and a first character
// that would start a heading, a quote or a list.
func mdParagraph(s string) string {
	s = mdEscape(s)
	if s != "" && strings.ContainsRune("#>-+=", rune(s[0])) {
		return "\\" + s
	}
	return s
}

// commandLine returns name and args as one shell command line, quoting the arguments
// that need it.
func commandLine(name string, args []string) string {
	parts := []string{name}
	for _, a := range args {
		parts = append(parts, shellQuote(a))
	}
	return strings.Join(parts, " ")
}

// shellQuote returns s as a POSIX shell word.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./=:,+@%", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// readMachine reads what is cheaply known of this machine: the Go runtime's figures,
// /proc/cpuinfo's model name and /proc/meminfo's MemTotal.
func readMachine() machineInfo {
	m := machineInfo{CPUs: runtime.NumCPU(), GoVersion: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		m.CPUModel = cpuModel(string(b))
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		m.MemTotalBytes = memTotal(string(b))
	}
	return m
}

// cpuModel returns the first "model name" of a /proc/cpuinfo, "" without one.
func cpuModel(cpuinfo string) string {
	for line := range strings.Lines(cpuinfo) {
		key, value, ok := strings.Cut(line, ":")
		if ok && strings.TrimSpace(key) == "model name" {
			return strings.Join(strings.Fields(value), " ")
		}
	}
	return ""
}

// memTotal returns MemTotal of a /proc/meminfo in bytes, 0 without it.
func memTotal(meminfo string) int64 {
	for line := range strings.Lines(meminfo) {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kib, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return 0
			}
			return kib << 10
		}
	}
	return 0
}

// buildRevision returns the VCS revision the bench was built from ("+dirty" when the tree
// was modified), "" when the build did not record one (-buildvcs=false, no checkout).
func buildRevision() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	var rev, dirty string
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				dirty = "+dirty"
			}
		}
	}
	if rev == "" {
		return ""
	}
	return rev + dirty
}
