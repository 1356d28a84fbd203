package fakegemini

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/genuiserver/genui/internal/testkit/script"
)

// Reply is the scripted answer to one generate request.
type Reply struct {
	// Chunks become one streamed event each; a non-streaming request gets
	// their parts merged into a single response. No chunks means one event
	// without parts.
	Chunks []Chunk
	// Err, if set, is sent as an HTTP error instead of any event.
	Err *APIError
	// MidStream, if set, makes the reply fail part-way (see [MidStreamFailure]).
	MidStream *MidStreamFailure
	// FinishReason of the last event; default "STOP". Other values seen from
	// Gemini: MAX_TOKENS, SAFETY, RECITATION, MALFORMED_FUNCTION_CALL, OTHER.
	FinishReason string
	// Usage, if set, replaces the estimated usageMetadata of the last event.
	Usage *Usage
	// Latency and Pacing override the server defaults ([WithLatency],
	// [WithPacing]) when non-zero; a negative value means no delay.
	Latency, Pacing time.Duration
}

// MidStreamFailure makes a reply fail after some events have been sent.
type MidStreamFailure struct {
	// After is the number of events sent before the failure.
	After int
	// Err is written as a final event: a bare {"error":{…}} line without the
	// "data:" prefix, which the genai client reports as a genai.APIError.
	// If nil, the connection is cut instead (the genai v1.77.0 stream
	// iterator then ends with io.ErrUnexpectedEOF).
	// A non-streaming request gets Err as its HTTP error, or a cut connection.
	Err *APIError
}

// Respond returns a Reply streaming the given chunks.
func Respond(chunks ...Chunk) Reply { return Reply{Chunks: chunks} }

// ErrorReply returns a Reply failing with err before any event.
func ErrorReply(err *APIError) Reply { return Reply{Err: err} }

// Chunk is the content of one streamed event.
type Chunk struct {
	Parts []Part
}

// Text returns a chunk with one text part.
func Text(s string) Chunk { return Chunk{Parts: []Part{{Text: s}}} }

// Thought returns a chunk with one thought (reasoning) part.
func Thought(s string) Chunk { return Chunk{Parts: []Part{{Text: s, Thought: true}}} }

// FunctionCall returns a chunk with one functionCall part. A nil args map is
// sent as {}.
func FunctionCall(name string, args map[string]any) Chunk {
	if args == nil {
		args = map[string]any{}
	}
	return Chunk{Parts: []Part{{FunctionCall: &Call{Name: name, Args: args}}}}
}

// TextChunks splits s into at most n text chunks of nearly equal length,
// never inside a UTF-8 sequence.
func TextChunks(s string, n int) []Chunk { return script.Split(s, n, Text) }

// Content is a Gemini content: a role and its parts.
type Content struct {
	Role  string `json:"role,omitempty"`
	Parts []Part `json:"parts"`
}

// Part is one Gemini content part. A part sent by the server carries one
// kind only: a FunctionCall drops Text and Thought.
type Part struct {
	Text             string            `json:"text,omitempty"`
	Thought          bool              `json:"thought,omitempty"`
	FunctionCall     *Call             `json:"functionCall,omitempty"`
	FunctionResponse *FunctionResponse `json:"functionResponse,omitempty"`
	ThoughtSignature []byte            `json:"thoughtSignature,omitempty"`
}

// Call is a function call made by the model.
type Call struct {
	Name string         `json:"name"`
	Args map[string]any `json:"args"`
	ID   string         `json:"id,omitempty"`
}

// FunctionResponse is a tool result sent back by the client.
type FunctionResponse struct {
	Name     string         `json:"name"`
	Response map[string]any `json:"response"`
	ID       string         `json:"id,omitempty"`
}

// Usage is Gemini's usageMetadata.
type Usage struct {
	PromptTokenCount     int `json:"promptTokenCount"`
	CandidatesTokenCount int `json:"candidatesTokenCount,omitempty"`
	ThoughtsTokenCount   int `json:"thoughtsTokenCount,omitempty"`
	TotalTokenCount      int `json:"totalTokenCount"`
}

// APIError is an error answer in Google's format. Status defaults to the
// canonical name for Code (e.g. 429 → RESOURCE_EXHAUSTED).
type APIError struct {
	Code    int
	Status  string
	Message string
	// RetryDelay, if positive, adds a google.rpc.RetryInfo detail.
	RetryDelay time.Duration
	// Details are appended to the error's details as they are.
	Details []map[string]any
}

// RateLimited returns a 429 RESOURCE_EXHAUSTED error with a RetryInfo detail.
func RateLimited(retryDelay time.Duration) *APIError {
	return &APIError{Code: http.StatusTooManyRequests, RetryDelay: retryDelay,
		Message: "You exceeded your current quota, please check your plan and billing details. " +
			"For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."}
}

// Unavailable returns a 503 UNAVAILABLE "model is overloaded" error.
func Unavailable() *APIError {
	return &APIError{Code: http.StatusServiceUnavailable, Message: "The model is overloaded. Please try again later."}
}

// Error implements error.
func (e *APIError) Error() string {
	return fmt.Sprintf("fakegemini: %d %s: %s", e.Code, e.status(), e.Message)
}

var statusNames = map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED",
	404: "NOT_FOUND", 409: "ABORTED", 429: "RESOURCE_EXHAUSTED", 499: "CANCELLED", 500: "INTERNAL",
	501: "NOT_IMPLEMENTED", 503: "UNAVAILABLE", 504: "DEADLINE_EXCEEDED"}

func (e *APIError) status() string { return cmp.Or(e.Status, statusNames[e.Code], "UNKNOWN") }

// body renders {"error":{…}} on one line.
func (e *APIError) body() []byte {
	v := map[string]any{"code": e.Code, "message": e.Message, "status": e.status()}
	details := e.Details
	if e.RetryDelay > 0 {
		// protobuf JSON Duration: 0, 3, 6 or 9 fractional digits ("1s", "1.500s").
		d := fmt.Sprintf("%d.%09d", e.RetryDelay/time.Second, e.RetryDelay%time.Second)
		for range 3 {
			d = strings.TrimSuffix(d, "000")
		}
		details = append([]map[string]any{{"@type": "type.googleapis.com/google.rpc.RetryInfo",
			"retryDelay": strings.TrimSuffix(d, ".") + "s"}}, details...)
	}
	if len(details) > 0 {
		v["details"] = details
	}
	b, _ := json.Marshal(map[string]any{"error": v})
	return b
}

func writeError(w http.ResponseWriter, e *APIError) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(e.Code)
	_, _ = w.Write(e.body())
}

// response is the wire GenerateContentResponse.
type response struct {
	Candidates    []candidate `json:"candidates"`
	UsageMetadata *Usage      `json:"usageMetadata,omitempty"`
	ModelVersion  string      `json:"modelVersion"`
	ResponseID    string      `json:"responseId"`
}

type candidate struct {
	Content      Content `json:"content"`
	FinishReason string  `json:"finishReason,omitempty"`
	Index        int     `json:"index"`
}

// build turns a reply into its events, or into one event holding all parts
// (adjacent text parts joined) when merged.
func (r Reply) build(req *Request, id string, merged bool) []response {
	chunks := r.Chunks
	if len(chunks) == 0 {
		chunks = []Chunk{{}}
	}
	u := Usage{PromptTokenCount: max(1, (len(req.Raw)+3)/4)}
	var out []response
	all := []Part{}
	var texts []*strings.Builder
	for i, c := range chunks {
		parts := append([]Part{}, c.Parts...)
		for j, p := range parts {
			if p.FunctionCall != nil {
				p.Text, p.Thought = "", false
				parts[j] = p
			}
			b, _ := json.Marshal(p.FunctionCall)
			switch {
			case p.FunctionCall != nil:
				u.CandidatesTokenCount += (len(b) + 3) / 4
			case p.Thought:
				u.ThoughtsTokenCount += (len(p.Text) + 3) / 4
			default:
				u.CandidatesTokenCount += (len(p.Text) + 3) / 4
			}
			if !merged {
				continue
			}
			// The parts of one response: adjacent texts joined (a builder, so that a
			// reply of thousands of chunks is not quadratic).
			if n := len(all); n > 0 && isText(all[n-1]) && isText(p) && all[n-1].Thought == p.Thought {
				texts[n-1].WriteString(p.Text)
			} else {
				all = append(all, p)
				texts = append(texts, &strings.Builder{})
				texts[len(texts)-1].WriteString(p.Text)
			}
		}
		if merged {
			if i < len(chunks)-1 {
				continue
			}
			for k := range all {
				if isText(all[k]) {
					all[k].Text = texts[k].String()
				}
			}
			parts = all
		}
		usage := u
		usage.TotalTokenCount = u.PromptTokenCount + u.CandidatesTokenCount + u.ThoughtsTokenCount
		out = append(out, response{ModelVersion: req.Model, ResponseID: id, UsageMetadata: &usage,
			Candidates: []candidate{{Content: Content{Role: "model", Parts: parts}}}})
	}
	last := &out[len(out)-1]
	last.Candidates[0].FinishReason = cmp.Or(r.FinishReason, "STOP")
	if r.Usage != nil {
		last.UsageMetadata = r.Usage
	}
	return out
}

func isText(p Part) bool { return p.FunctionCall == nil && p.FunctionResponse == nil }
