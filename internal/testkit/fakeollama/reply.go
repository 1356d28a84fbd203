package fakeollama

import (
	"cmp"
	"encoding/json"
	"time"

	"github.com/genuiserver/genui/internal/testkit/script"
)

// Reply is the scripted answer to one chat request.
type Reply struct {
	// Chunks become one streamed line each, before the final done line; a
	// non-streaming request gets them merged into one message.
	Chunks []Chunk
	// Err, if set, is sent as an HTTP error instead of any line.
	Err *APIError
	// MidStream, if set, makes the reply fail part-way (see [MidStreamFailure]).
	MidStream *MidStreamFailure
	// DoneReason of the final line; default "stop" ("length" when the output
	// reached num_predict).
	DoneReason string
	// Usage, if set, replaces the estimated counts.
	Usage *Usage
	// Latency and Pacing override the server defaults ([WithLatency],
	// [WithPacing]) when non-zero; a negative value means no delay.
	Latency, Pacing time.Duration
}

// MidStreamFailure makes a reply fail after some lines have been sent.
type MidStreamFailure struct {
	// After is the number of lines sent before the failure.
	After int
	// Err is sent as a last line {"error":"…"}. If nil, the connection is
	// cut instead. A non-streaming request gets Err as its HTTP error, or a
	// cut connection.
	Err *APIError
}

// Usage is the counts of the final line.
type Usage struct {
	// PromptEvalCount is the input tokens, EvalCount the output tokens.
	PromptEvalCount, EvalCount int
}

// Respond returns a Reply streaming the given chunks.
func Respond(chunks ...Chunk) Reply { return Reply{Chunks: chunks} }

// ErrorReply returns a Reply failing with err before any line.
func ErrorReply(err *APIError) Reply { return Reply{Err: err} }

// Chunk is the message content of one streamed line.
type Chunk struct {
	Content   string
	Thinking  string
	ToolCalls []ToolCall
}

// ToolCall is a function call of the model, its arguments an object.
type ToolCall struct {
	Function Function `json:"function"`
}

// Function is the call's function.
type Function struct {
	Index     int            `json:"index"`
	Name      string         `json:"name"`
	Arguments map[string]any `json:"arguments"`
}

// Text returns a chunk of content.
func Text(s string) Chunk { return Chunk{Content: s} }

// TextChunks splits s into at most n chunks of nearly equal length, never
// inside a UTF-8 sequence.
func TextChunks(s string, n int) []Chunk { return script.Split(s, n, Text) }

// Call returns a chunk with one tool call; nil args are {}.
func Call(name string, args map[string]any) Chunk {
	if args == nil {
		args = map[string]any{}
	}
	return Chunk{ToolCalls: []ToolCall{{Function: Function{Name: name, Arguments: args}}}}
}

// message is the wire message of a line.
type message struct {
	Role      string     `json:"role"`
	Content   string     `json:"content"`
	Thinking  string     `json:"thinking,omitempty"`
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
}

type line struct {
	Model     string  `json:"model"`
	CreatedAt string  `json:"created_at"`
	Message   message `json:"message"`
	Done      bool    `json:"done"`
	// The final line's.
	DoneReason         string `json:"done_reason,omitempty"`
	TotalDuration      int64  `json:"total_duration,omitempty"`
	LoadDuration       int64  `json:"load_duration,omitempty"`
	PromptEvalCount    int    `json:"prompt_eval_count,omitempty"`
	PromptEvalDuration int64  `json:"prompt_eval_duration,omitempty"`
	EvalCount          int    `json:"eval_count,omitempty"`
	EvalDuration       int64  `json:"eval_duration,omitempty"`
}

const createdAt = "2026-01-01T00:00:00.000000000Z"

func (r Reply) usage(req *Request) Usage {
	if r.Usage != nil {
		return *r.Usage
	}
	u := Usage{PromptEvalCount: max(1, (len(req.Raw)+3)/4)}
	for _, c := range r.Chunks {
		u.EvalCount += (len(c.Content) + len(c.Thinking) + 3) / 4
		for _, tc := range c.ToolCalls {
			b, _ := json.Marshal(tc.Function.Arguments)
			u.EvalCount += (len(b) + 3) / 4
		}
	}
	return u
}

func (r Reply) done(req *Request, msg message) line {
	u := r.usage(req)
	return line{Model: req.Model, CreatedAt: createdAt, Message: msg, Done: true,
		DoneReason: cmp.Or(r.DoneReason, "stop"), TotalDuration: 1_500_000_000, LoadDuration: 20_000_000,
		PromptEvalCount: u.PromptEvalCount, PromptEvalDuration: 300_000_000,
		EvalCount: u.EvalCount, EvalDuration: 1_100_000_000}
}

// lines returns the streamed lines of the reply.
func (r Reply) lines(req *Request) []line {
	out := make([]line, 0, len(r.Chunks)+1)
	calls := 0
	for _, c := range r.Chunks {
		tcs := append([]ToolCall(nil), c.ToolCalls...)
		for i := range tcs {
			tcs[i].Function.Index = calls
			calls++
		}
		out = append(out, line{Model: req.Model, CreatedAt: createdAt,
			Message: message{Role: "assistant", Content: c.Content, Thinking: c.Thinking, ToolCalls: tcs}})
	}
	return append(out, r.done(req, message{Role: "assistant"}))
}

// whole returns the non-streamed answer.
func (r Reply) whole(req *Request) line {
	msg := message{Role: "assistant"}
	for _, c := range r.Chunks {
		msg.Content += c.Content
		msg.Thinking += c.Thinking
		for _, tc := range c.ToolCalls {
			tc.Function.Index = len(msg.ToolCalls)
			msg.ToolCalls = append(msg.ToolCalls, tc)
		}
	}
	return r.done(req, msg)
}
