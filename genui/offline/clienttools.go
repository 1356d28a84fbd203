package offline

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/tools"
)

// The offline model and client tools: a user message that names a declared client tool
// (case does not matter) gets a call of it, with an input made of the schema's required
// properties; the results of client tools, when they come, are shown in a surface, their
// string values verbatim.

// clientTool is what the offline model knows of a client tool.
type clientTool struct {
	name   string
	schema map[string]any
}

func clientToolsOf(s *tools.ClientSet) []clientTool {
	if s == nil {
		return nil
	}
	out := make([]clientTool, 0, len(s.Tools))
	for _, t := range s.Tools {
		var schema map[string]any
		_ = json.Unmarshal(t.Schema, &schema)
		out = append(out, clientTool{name: t.Name, schema: schema})
	}
	return out
}

// clientToolsOfDefs reads the client tools among the tools of a Genkit model request.
func clientToolsOfDefs(defs []*ai.ToolDefinition) []clientTool {
	var out []clientTool
	for _, d := range defs {
		if d.Name != tools.AddOrUpdateSurface && d.Name != tools.DeleteSurface {
			out = append(out, clientTool{name: d.Name, schema: d.InputSchema})
		}
	}
	return out
}

// namedTools returns the client tools the text names, in the order the text names them.
func namedTools(ts []clientTool, text string) []*clientTool {
	lower := strings.ToLower(text)
	at := map[*clientTool]int{}
	var out []*clientTool
	for i := range ts {
		if k := strings.Index(lower, strings.ToLower(ts[i].name)); k >= 0 {
			at[&ts[i]] = k
			out = append(out, &ts[i])
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return at[out[i]] < at[out[j]] })
	return out
}

var thenWord = regexp.MustCompile(`(?i)\bthen\b`)

// nextCalls returns the client tools to call now: those the last user text names, in its
// first step ("use getLocation, then confirm" has two), or, once the turn has called the
// tools of some steps (its model messages since that text made calls), in the next step.
func nextCalls(ts []clientTool, messages []*ai.Message) []*clientTool {
	if len(ts) == 0 {
		return nil
	}
	done := 0
	for i := len(messages) - 1; i >= 0; i-- {
		m := messages[i]
		switch {
		case m.Role == ai.RoleModel && callsClientTools(m):
			done++
		case m.Role == ai.RoleUser && m.Text() != "":
			steps := thenWord.Split(m.Text(), -1)
			if done >= len(steps) {
				return nil
			}
			return namedTools(ts, steps[done])
		}
	}
	return nil
}

func callsClientTools(m *ai.Message) bool {
	for _, p := range m.Content {
		if p.IsToolRequest() && p.ToolRequest.Name != tools.AddOrUpdateSurface && p.ToolRequest.Name != tools.DeleteSurface {
			return true
		}
	}
	return false
}

// callsOf calls each tool with an input valid against a simple schema, after the words
// lead ("Calling").
func callsOf(lead string, named []*clientTool) []*ai.Part {
	names := make([]string, len(named))
	for i, t := range named {
		names[i] = t.name
	}
	parts := []*ai.Part{ai.NewTextPart(lead + " " + strings.Join(names, " and ") + ".")}
	for _, t := range named {
		input, _ := zeroValue(t.schema, 0).(map[string]any)
		if input == nil {
			input = map[string]any{}
		}
		parts = append(parts, ai.NewToolRequestPart(&ai.ToolRequest{Name: t.name, Input: input}))
	}
	return parts
}

// clientResults describes the results of client tools that a tool message holds, one
// line a result; "" when it holds none (it answers the UI tools, or tells of calls the
// service rejected). Any tool but the UI tools is the client's: a continuation need not
// declare the tools it answers.
func clientResults(m *ai.Message) string {
	var lines []string
	for _, p := range m.Content {
		if !p.IsToolResponse() || p.ToolResponse == nil || p.ToolResponse.Name == tools.AddOrUpdateSurface || p.ToolResponse.Name == tools.DeleteSurface {
			continue
		}
		out := p.ToolResponse.Output
		if o, ok := out.(map[string]any); ok {
			if st, _ := o["status"].(string); st == "rejected" || st == "not-run" {
				continue // the service's answer to a call it did not pass on
			}
			if e, ok := o["error"].(string); ok && len(o) == 1 {
				lines = append(lines, p.ToolResponse.Name+" failed: "+e)
				continue
			}
		}
		lines = append(lines, p.ToolResponse.Name+" returned "+describe(out))
	}
	return strings.Join(lines, "\n")
}

// describe writes a value for people: an object as "key: value" pairs in key order,
// strings as they are.
func describe(v any) string {
	switch t := v.(type) {
	case string:
		return t
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = k + ": " + describe(t[k])
		}
		return strings.Join(parts, ", ")
	}
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
