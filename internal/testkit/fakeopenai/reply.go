package fakeopenai

import (
	"cmp"
	"encoding/json"
	"time"

	"github.com/genuiserver/genui/internal/testkit/script"
)

// Reply is the scripted answer to one chat request.
type Reply struct {
	// Chunks are the streamed deltas, in order; a non-streaming request gets
	// them merged into one message.
	Chunks []Chunk
	// Err, if set, is sent as an HTTP error instead of any event.
	Err *APIError
	// MidStream, if set, makes the reply fail part-way (see [MidStreamFailure]).
	MidStream *MidStreamFailure
	// FinishReason of the last choice chunk; default "tool_calls" when the
	// reply calls a tool, else "stop". OpenAI also sends "length" and
	// "content_filter".
	FinishReason string
	// Usage, if set, replaces the estimated usage.
	Usage *Usage
	// Latency and Pacing override the server defaults ([WithLatency],
	// [WithPacing]) when non-zero; a negative value means no delay.
	Latency, Pacing time.Duration
}

// MidStreamFailure makes a reply fail after some events have been sent.
type MidStreamFailure struct {
	// After is the number of events sent before the failure (the first
	// event is the one with the assistant role).
	After int
	// Err is sent as a last event "data: {"error":{…}}", which openai-go
	// reports as a stream error. If nil, the connection is cut instead. A
	// non-streaming request gets Err as its HTTP error, or a cut connection.
	Err *APIError
}

// Respond returns a Reply streaming the given chunks.
func Respond(chunks ...Chunk) Reply { return Reply{Chunks: chunks} }

// ErrorReply returns a Reply failing with err before any event.
func ErrorReply(err *APIError) Reply { return Reply{Err: err} }

// Chunk is a text delta, or a tool call streamed in pieces.
type Chunk struct {
	Text string
	Call *Call
	// Pieces is how many deltas a call's arguments are split into (default
	// 3, at most one per byte of the arguments).
	Pieces int
}

// Call is a tool call made by the model.
type Call struct {
	ID, Name string
	// Arguments is the call's JSON arguments, as streamed.
	Arguments string
}

// Usage is OpenAI's usage object.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
}

// Text returns a text delta.
func Text(s string) Chunk { return Chunk{Text: s} }

// TextChunks splits s into at most n text deltas of nearly equal length,
// never inside a UTF-8 sequence.
func TextChunks(s string, n int) []Chunk { return script.Split(s, n, Text) }

// ToolCall returns a tool call with id, name and args (marshalled to JSON;
// nil is {}), streamed in 3 pieces.
func ToolCall(id, name string, args any) Chunk {
	if args == nil {
		args = map[string]any{}
	}
	b, err := json.Marshal(args)
	if err != nil {
		panic(err)
	}
	return Chunk{Call: &Call{ID: id, Name: name, Arguments: string(b)}, Pieces: 3}
}

// wire types of the answers.
type (
	chunkJSON struct {
		ID      string       `json:"id"`
		Object  string       `json:"object"`
		Created int64        `json:"created"`
		Model   string       `json:"model"`
		Choices []choiceJSON `json:"choices"`
		Usage   *Usage       `json:"usage,omitempty"`
	}
	choiceJSON struct {
		Index        int          `json:"index"`
		Delta        *messageJSON `json:"delta,omitempty"`
		Message      *messageJSON `json:"message,omitempty"`
		Logprobs     *struct{}    `json:"logprobs"`
		FinishReason *string      `json:"finish_reason"`
	}
	messageJSON struct {
		Role      string         `json:"role,omitempty"`
		Content   *string        `json:"content,omitempty"`
		Refusal   *string        `json:"refusal,omitempty"`
		ToolCalls []toolCallJSON `json:"tool_calls,omitempty"`
	}
	toolCallJSON struct {
		Index    *int   `json:"index,omitempty"`
		ID       string `json:"id,omitempty"`
		Type     string `json:"type,omitempty"`
		Function struct {
			Name      string `json:"name,omitempty"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	}
)

const created = 1767225600

func (r Reply) finishReason() string {
	for _, c := range r.Chunks {
		if c.Call != nil {
			return cmp.Or(r.FinishReason, "tool_calls")
		}
	}
	return cmp.Or(r.FinishReason, "stop")
}

func (r Reply) usage(req *Request) *Usage {
	if r.Usage != nil {
		return r.Usage
	}
	u := Usage{PromptTokens: max(1, (len(req.Raw)+3)/4)}
	for _, c := range r.Chunks {
		u.CompletionTokens += (len(c.Text) + 3) / 4
		if c.Call != nil {
			u.CompletionTokens += (len(c.Call.Arguments) + 3) / 4
		}
	}
	u.TotalTokens = u.PromptTokens + u.CompletionTokens
	return &u
}

// chunks returns the streamed events of the reply.
func (r Reply) chunks(req *Request, id string) []chunkJSON {
	event := func(delta *messageJSON, finish *string) chunkJSON {
		return chunkJSON{ID: id, Object: "chat.completion.chunk", Created: created, Model: req.Model,
			Choices: []choiceJSON{{Delta: delta, FinishReason: finish}}}
	}
	empty := ""
	out := []chunkJSON{event(&messageJSON{Role: "assistant", Content: &empty, Refusal: nil}, nil)}
	calls := 0
	for _, c := range r.Chunks {
		if c.Call == nil {
			text := c.Text
			out = append(out, event(&messageJSON{Content: &text}, nil))
			continue
		}
		index := calls
		calls++
		args := c.Call.Arguments
		n := min(max(cmp.Or(c.Pieces, 3), 1), max(len(args), 1))
		for i := range n {
			tc := toolCallJSON{Index: &index}
			if i == 0 {
				tc.ID, tc.Type, tc.Function.Name = c.Call.ID, "function", c.Call.Name
			}
			tc.Function.Arguments = args[i*len(args)/n : (i+1)*len(args)/n]
			out = append(out, event(&messageJSON{ToolCalls: []toolCallJSON{tc}}, nil))
		}
	}
	finish := r.finishReason()
	out = append(out, event(&messageJSON{}, &finish))
	if req.IncludeUsage {
		out = append(out, chunkJSON{ID: id, Object: "chat.completion.chunk", Created: created, Model: req.Model,
			Choices: []choiceJSON{}, Usage: r.usage(req)})
	}
	return out
}

// completion returns the non-streamed answer.
func (r Reply) completion(req *Request, id string) map[string]any {
	msg := &messageJSON{Role: "assistant"}
	var text []byte
	hasText := false
	for _, c := range r.Chunks {
		if c.Call == nil {
			text, hasText = append(text, c.Text...), true
			continue
		}
		tc := toolCallJSON{ID: c.Call.ID, Type: "function"}
		tc.Function.Name, tc.Function.Arguments = c.Call.Name, c.Call.Arguments
		msg.ToolCalls = append(msg.ToolCalls, tc)
	}
	if hasText {
		s := string(text)
		msg.Content = &s
	}
	finish := r.finishReason()
	return map[string]any{"id": id, "object": "chat.completion", "created": created, "model": req.Model,
		"choices": []choiceJSON{{Message: msg, FinishReason: &finish}}, "usage": r.usage(req)}
}
