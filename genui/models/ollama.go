package models

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/providererr"
)

// ollamaChat is an Ollama chat model called through Ollama's /api/chat, registered in
// Genkit as ollama/<model>. Genkit's ollama plugin (v1.13.1) sends the same requests, but
// from a streamed answer it keeps only the message: the last line's token counts
// (prompt_eval_count, eval_count), so every turn counted 0 tokens; its done_reason, so an
// answer cut at num_predict read as finished; and the HTTP status, so an error read as an
// empty answer. It also gives its HTTP client no way in for a caller. This model reads
// all of them; the plugin still lists the server's models to Genkit tooling.
type ollamaChat struct {
	url    string // …/api/chat
	model  string
	client *http.Client
}

// defineOllama registers the Ollama model in g.
func defineOllama(g *genkit.Genkit, host, model string) ai.Model {
	c := &ollamaChat{url: strings.TrimRight(host, "/") + "/api/chat", model: model, client: &http.Client{}}
	return genkit.DefineModel(g, "ollama/"+model, &ai.ModelOptions{
		Label:    "Ollama - " + model,
		Supports: &ai.ModelSupports{Multiturn: true, Tools: true, SystemRole: true, Media: true, ToolChoice: true},
	}, c.generate)
}

// The wire format of /api/chat.
type (
	ollamaRequest struct {
		Model    string          `json:"model"`
		Messages []ollamaMessage `json:"messages"`
		Tools    []ollamaTool    `json:"tools,omitempty"`
		Stream   bool            `json:"stream"`
		Options  map[string]any  `json:"options,omitempty"`
	}
	ollamaMessage struct {
		Role      string           `json:"role"`
		Content   string           `json:"content"`
		Thinking  string           `json:"thinking,omitempty"`
		Images    []string         `json:"images,omitempty"`
		ToolCalls []ollamaToolCall `json:"tool_calls,omitempty"`
		ToolName  string           `json:"tool_name,omitempty"`
	}
	ollamaToolCall struct {
		ID       string `json:"id,omitempty"`
		Function struct {
			Name      string `json:"name"`
			Arguments any    `json:"arguments"`
		} `json:"function"`
	}
	ollamaTool struct {
		Type     string `json:"type"`
		Function struct {
			Name        string         `json:"name"`
			Description string         `json:"description,omitempty"`
			Parameters  map[string]any `json:"parameters"`
		} `json:"function"`
	}
	// ollamaLine is one line of a streamed answer, or the whole answer.
	ollamaLine struct {
		Message         ollamaMessage `json:"message"`
		Done            bool          `json:"done"`
		DoneReason      string        `json:"done_reason"`
		PromptEvalCount int           `json:"prompt_eval_count"`
		EvalCount       int           `json:"eval_count"`
		Error           string        `json:"error"`
	}
)

func (c *ollamaChat) generate(ctx context.Context, in *ai.ModelRequest, cb func(context.Context, *ai.ModelResponseChunk) error) (*ai.ModelResponse, error) {
	body, err := c.request(in, cb != nil)
	if err != nil {
		return nil, err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	hreq.Header.Set("Content-Type", "application/json")
	hres, err := c.client.Do(hreq)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		// The cause names the endpoint's address: logs get it, clients do not.
		return nil, (&genui.Error{Status: genui.StatusUnavailable, Message: "ollama: the model could not be reached (" + providererr.Unreachable(err) + "); try again"}).WithCause(err)
	}
	defer func() { _ = hres.Body.Close() }()
	if hres.StatusCode != http.StatusOK {
		return nil, ollamaError(hres)
	}
	msg := &ai.Message{Role: ai.RoleModel}
	dec := json.NewDecoder(hres.Body)
	for {
		var line ollamaLine
		if err := dec.Decode(&line); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF // the answer ended before its last line
			}
			return nil, (&genui.Error{Status: genui.StatusUnavailable, Message: "ollama: the answer broke off; try again"}).WithCause(err)
		}
		if line.Error != "" {
			return nil, &genui.Error{Status: genui.StatusUnavailable, Message: "ollama: " + line.Error}
		}
		parts, err := ollamaParts(line.Message)
		if err != nil {
			return nil, err
		}
		if cb != nil && len(parts) > 0 {
			if err := cb(ctx, &ai.ModelResponseChunk{Role: ai.RoleModel, Content: parts}); err != nil {
				return nil, err
			}
		}
		for _, p := range parts {
			// Adjacent pieces of text (or of reasoning) make one part.
			if n := len(msg.Content); n > 0 && p.Kind != ai.PartToolRequest && msg.Content[n-1].Kind == p.Kind {
				last := *msg.Content[n-1]
				last.Text += p.Text
				msg.Content[n-1] = &last
				continue
			}
			msg.Content = append(msg.Content, p)
		}
		if line.Done {
			resp := &ai.ModelResponse{Request: in, Message: msg, FinishReason: ai.FinishReasonStop,
				Usage: &ai.GenerationUsage{InputTokens: line.PromptEvalCount, OutputTokens: line.EvalCount,
					TotalTokens: line.PromptEvalCount + line.EvalCount}}
			if line.DoneReason == "length" {
				resp.FinishReason = ai.FinishReasonLength
			}
			return resp, nil
		}
	}
}

// request encodes the Genkit request for /api/chat.
func (c *ollamaChat) request(in *ai.ModelRequest, stream bool) ([]byte, error) {
	req := ollamaRequest{Model: c.model, Stream: stream}
	for _, m := range in.Messages {
		om := ollamaMessage{Role: string(m.Role)}
		switch m.Role {
		case ai.RoleModel:
			om.Role = "assistant"
		case ai.RoleTool:
			om.Role = "tool"
		}
		var text strings.Builder
		var results []ollamaMessage
		for _, p := range m.Content {
			switch {
			case p.IsText():
				text.WriteString(p.Text)
			case p.IsMedia():
				data, ok := strings.CutPrefix(p.Text, "data:")
				_, b64, isBase64 := strings.Cut(data, ";base64,")
				if !ok || !isBase64 {
					return nil, &genui.Error{Status: genui.StatusInvalidArgument, Message: "ollama: only inline (data: URL) media can be sent"}
				}
				om.Images = append(om.Images, b64)
			case p.IsToolRequest():
				var tc ollamaToolCall
				tc.ID, tc.Function.Name, tc.Function.Arguments = p.ToolRequest.Ref, p.ToolRequest.Name, p.ToolRequest.Input
				if tc.Function.Arguments == nil {
					tc.Function.Arguments = map[string]any{}
				}
				om.ToolCalls = append(om.ToolCalls, tc)
			case p.IsToolResponse():
				out, err := json.Marshal(p.ToolResponse.Output)
				if err != nil {
					return nil, err
				}
				results = append(results, ollamaMessage{Role: "tool", Content: string(out), ToolName: p.ToolResponse.Name})
			}
		}
		om.Content = text.String()
		if om.Content != "" || len(om.Images) > 0 || len(om.ToolCalls) > 0 || len(results) == 0 {
			req.Messages = append(req.Messages, om)
		}
		req.Messages = append(req.Messages, results...)
	}
	if in.ToolChoice != ai.ToolChoiceNone { // Ollama has no tool choice: none declares no tools
		for _, t := range in.Tools {
			var ot ollamaTool
			ot.Type, ot.Function.Name, ot.Function.Description, ot.Function.Parameters = "function", t.Name, t.Description, t.InputSchema
			req.Tools = append(req.Tools, ot)
		}
		// Genkit hands over the tools in no fixed order; by name, every call of a catalog
		// renders the same prompt prefix, which Ollama's cache reuses.
		slices.SortFunc(req.Tools, func(a, b ollamaTool) int { return strings.Compare(a.Function.Name, b.Function.Name) })
	}
	switch cfg := in.Config.(type) {
	case nil:
	case *ai.GenerationCommonConfig:
		req.Options = commonOptions(cfg)
	case ai.GenerationCommonConfig:
		req.Options = commonOptions(&cfg)
	case map[string]any:
		req.Options = cfg
	default:
		return nil, &genui.Error{Status: genui.StatusInvalidArgument, Message: fmt.Sprintf("ollama: unexpected configuration %T", in.Config)}
	}
	return json.Marshal(req)
}

// commonOptions maps Genkit's common configuration to Ollama's options.
func commonOptions(cfg *ai.GenerationCommonConfig) map[string]any {
	opts := map[string]any{}
	if cfg.MaxOutputTokens > 0 {
		opts["num_predict"] = cfg.MaxOutputTokens
	}
	if cfg.Temperature != 0 {
		opts["temperature"] = cfg.Temperature
	}
	if cfg.TopP > 0 {
		opts["top_p"] = cfg.TopP
	}
	if cfg.TopK > 0 {
		opts["top_k"] = cfg.TopK
	}
	if len(cfg.StopSequences) > 0 {
		opts["stop"] = cfg.StopSequences
	}
	return opts
}

// ollamaParts returns the Genkit parts of a line's message.
func ollamaParts(m ollamaMessage) ([]*ai.Part, error) {
	var parts []*ai.Part
	if m.Thinking != "" {
		parts = append(parts, ai.NewReasoningPart(m.Thinking, nil))
	}
	if m.Content != "" {
		parts = append(parts, ai.NewTextPart(m.Content))
	}
	for _, tc := range m.ToolCalls {
		args := tc.Function.Arguments
		if s, ok := args.(string); ok { // some models' templates give a JSON string
			var v map[string]any
			if err := json.Unmarshal([]byte(s), &v); err != nil {
				return nil, &genui.Error{Status: genui.StatusInternal, Message: fmt.Sprintf("ollama: the arguments of %s are not a JSON object: %v", tc.Function.Name, err)}
			}
			args = v
		}
		if args == nil {
			args = map[string]any{}
		}
		parts = append(parts, ai.NewToolRequestPart(&ai.ToolRequest{Name: tc.Function.Name, Input: args, Ref: tc.ID}))
	}
	return parts, nil
}

// ollamaError maps an HTTP error of Ollama, {"error":"…"}, to the service's error.
func ollamaError(res *http.Response) *genui.Error {
	b, _ := io.ReadAll(io.LimitReader(res.Body, 64<<10))
	var body struct {
		Error string `json:"error"`
	}
	msg := strings.TrimSpace(string(b))
	if json.Unmarshal(b, &body) == nil && body.Error != "" {
		msg = body.Error
	}
	e := &genui.Error{Status: providererr.Status(res.StatusCode), Message: fmt.Sprintf("ollama: %d %s", res.StatusCode, msg),
		RetryAfter: providererr.RetryAfter(res.Header, time.Now())}
	return e
}
