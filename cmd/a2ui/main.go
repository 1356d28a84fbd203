package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/policy"
)

const usage = `Usage:
  a2ui validate (--catalog FILE | --capabilities FILE) [--version v0.9|v0.8] [--shown SURFACE]... [--policy FILE | --no-policy]
  a2ui parse    (--catalog FILE | --capabilities FILE) [--version v0.9|v0.8] [--shown SURFACE]... [--policy FILE | --no-policy]

validate reads A2UI messages on standard input (JSON Lines, or one JSON array) and prints
each violation as a JSON line {"index","path","code","message"}.
parse reads a model's text on standard input as it arrives and prints, as JSON Lines, the
prose ({"type":"text","text":…}) and each A2UI message once it may be sent, then each
violation ({"type":"violation",…}).
Both apply the default UI policy besides the catalog: URLs (https: and http:, mailto: and
tel: for links; no javascript:, data: documents, file:, computed URLs), functions,
accessibility, obscured fields; its violations have the rule's code (unsafe_url,
function_not_allowed, inaccessible, sensitive_input).

  --catalog FILE        the catalog: a catalog document, or the id of a built-in catalog
  --capabilities FILE   the client's a2uiClientCapabilities: the catalog is chosen from them
  --version V           the A2UI version: v0.9 (default) or v0.8
  --shown SURFACE       a surface the renderer already has (repeatable)
  --policy FILE         the UI policy: a policy file, as genui-server's --policy-file (its
                        callers are not used)
  --no-policy           check against the catalog and A2UI's rules only

Exit status: 0 valid, 1 violations, 2 bad usage or an unreadable catalog.
`

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

// usageError is a problem with the command line or its files: exit status 2.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func badUsage(format string, args ...any) error {
	return &usageError{fmt.Sprintf(format, args...)}
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		fmt.Fprint(stderr, usage)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd := args[0]
	fs := flag.NewFlagSet("a2ui "+cmd, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	catalogFile := fs.String("catalog", "", "")
	capsFile := fs.String("capabilities", "", "")
	version := fs.String("version", a2ui.V09, "")
	var shown stringList
	fs.Var(&shown, "shown", "")
	policyFile := fs.String("policy", "", "")
	noPolicy := fs.Bool("no-policy", false, "")
	out := bufio.NewWriterSize(stdout, 32<<10)
	defer out.Flush()
	err := func() error {
		if cmd != "validate" && cmd != "parse" {
			return badUsage("unknown command %q: use validate or parse", cmd)
		}
		if err := fs.Parse(args[1:]); err != nil {
			return badUsage("%v", err)
		}
		if fs.NArg() > 0 {
			return badUsage("unexpected argument %q: the messages come on standard input", fs.Arg(0))
		}
		v, fe := a2ui.CheckVersion(*version)
		if fe != nil || *version == "" {
			return badUsage("--version: %q is not an A2UI version this tool speaks: v0.9 or v0.8", *version)
		}
		cat, err := loadCatalog(v, *catalogFile, *capsFile)
		if err != nil {
			return err
		}
		pol, err := loadPolicy(*policyFile, *noPolicy)
		if err != nil {
			return err
		}
		opts := []a2ui.Option{a2ui.WithShown(shown...), a2ui.WithPolicy(pol)}
		if cmd == "validate" {
			return validate(cat, stdin, out, stderr, opts)
		}
		return parse(cat, stdin, out, opts)
	}()
	var ue *usageError
	switch {
	case errors.As(err, &ue):
		out.Flush()
		fmt.Fprintf(stderr, "a2ui %s: %v\n\n%s", cmd, err, usage)
		return 2
	case errors.Is(err, errViolations):
		return 1
	case err != nil:
		out.Flush()
		fmt.Fprintf(stderr, "a2ui %s: %v\n", cmd, err)
		return 2
	}
	return 0
}

type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	if v == "" {
		return errors.New("a surface id must not be empty")
	}
	*s = append(*s, v)
	return nil
}

var errViolations = errors.New("violations")

// loadPolicy returns the UI policy of --policy (a policy file), none with --no-policy,
// else the default one.
func loadPolicy(file string, none bool) (*policy.Policy, error) {
	switch {
	case none && file != "":
		return nil, badUsage("--policy and --no-policy: give one")
	case none:
		return nil, nil
	case file == "":
		return policy.Default(), nil
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, fmt.Errorf("--policy: %w", err)
	}
	defer f.Close()
	set, err := policy.Decode(f)
	if err != nil {
		return nil, fmt.Errorf("--policy %s: %w", file, err)
	}
	return set.Default.Active(), nil
}

// loadCatalog compiles the catalog of --catalog (a file, or a built-in catalog's id) or
// the one chosen from the capabilities of --capabilities.
func loadCatalog(version, catalogFile, capsFile string) (*catalog.Catalog, error) {
	switch {
	case catalogFile == "" && capsFile == "":
		return nil, badUsage("name the catalog: --catalog FILE or --capabilities FILE")
	case catalogFile != "" && capsFile != "":
		return nil, badUsage("--catalog and --capabilities both name the catalog: give one")
	case catalogFile != "" && a2ui.IsBuiltin(version, catalogFile):
		return a2ui.Builtin(version, catalogFile)
	case catalogFile != "":
		doc, err := os.ReadFile(catalogFile)
		if err != nil {
			return nil, fmt.Errorf("--catalog: %w", err)
		}
		var head struct {
			CatalogID string `json:"catalogId"`
			ID        string `json:"$id"`
		}
		if err := json.Unmarshal(doc, &head); err != nil {
			return nil, fmt.Errorf("--catalog %s: not a JSON object: %w", catalogFile, err)
		}
		id := head.CatalogID
		if id == "" {
			id = head.ID
		}
		if id == "" {
			return nil, fmt.Errorf("--catalog %s: the catalog has no catalogId", catalogFile)
		}
		c, err := a2ui.CompileCatalog(version, id, doc)
		if err != nil {
			return nil, fmt.Errorf("--catalog %s: %w", catalogFile, err)
		}
		return c, nil
	}
	raw, err := os.ReadFile(capsFile)
	if err != nil {
		return nil, fmt.Errorf("--capabilities: %w", err)
	}
	caps, fe := a2ui.ParseCapabilities(version, raw, "capabilities")
	if fe != nil {
		return nil, fmt.Errorf("--capabilities %s: %v", capsFile, fe)
	}
	id, doc, fe := caps.Choose(version, "capabilities")
	if fe != nil {
		return nil, fmt.Errorf("--capabilities %s: %v", capsFile, fe)
	}
	c, err := a2ui.CompileCatalog(version, id, doc)
	if err != nil {
		return nil, fmt.Errorf("--capabilities %s: catalog %q: %w", capsFile, id, err)
	}
	return c, nil
}

// validate checks the messages of stdin.
func validate(cat *catalog.Catalog, stdin io.Reader, out io.Writer, stderr io.Writer, opts []a2ui.Option) error {
	msgs, bad, err := readMessages(stdin)
	if err != nil {
		return err
	}
	if len(msgs) == 0 && len(bad) == 0 {
		fmt.Fprintln(stderr, "a2ui validate: no messages on standard input")
		return nil
	}
	vs := append(bad, a2ui.Validate(cat, msgs, opts...)...)
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for _, v := range vs {
		if err := enc.Encode(v); err != nil {
			return err
		}
	}
	if len(vs) > 0 {
		fmt.Fprintf(stderr, "a2ui validate: %d violations in %d messages\n", len(vs), len(msgs))
		return errViolations
	}
	return nil
}

// readMessages reads JSON Lines, or one JSON array, of messages. A line that is not JSON
// is kept: Validate reports it at its index. An array that is not JSON is a violation.
func readMessages(r io.Reader) ([]json.RawMessage, []a2ui.Violation, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	head, err := peekNonSpace(br)
	if err != nil && err != io.EOF {
		return nil, nil, fmt.Errorf("reading standard input: %w", err)
	}
	if head == '[' {
		var list []json.RawMessage
		if err := json.NewDecoder(br).Decode(&list); err != nil {
			return nil, []a2ui.Violation{{Code: a2ui.CodeInvalidJSON, Message: "not a JSON array of messages: " + err.Error()}}, nil
		}
		return list, nil, nil
	}
	var msgs []json.RawMessage
	for {
		line, err := br.ReadBytes('\n')
		if t := bytes.TrimSpace(line); len(t) > 0 {
			msgs = append(msgs, json.RawMessage(t))
		}
		if err == io.EOF {
			return msgs, nil, nil
		}
		if err != nil {
			return nil, nil, fmt.Errorf("reading standard input: %w", err)
		}
	}
}

func peekNonSpace(br *bufio.Reader) (byte, error) {
	for {
		b, err := br.Peek(1)
		if err != nil {
			return 0, err
		}
		switch b[0] {
		case ' ', '\t', '\r', '\n':
			_, _ = br.ReadByte()
			continue
		}
		return b[0], nil
	}
}
