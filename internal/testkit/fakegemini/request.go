package fakegemini

import (
	"net/http"
	"strings"

	"github.com/genuiserver/genui/internal/testkit/script"
)

// Request is a captured generate request.
type Request struct {
	// Model is the model name from the path, without "models/".
	Model string
	// Stream is true for streamGenerateContent, false for generateContent.
	Stream bool
	// Header is a copy of the request headers.
	Header http.Header
	// Proto is the request's protocol: "HTTP/1.1", or "HTTP/2.0" from a client that
	// speaks HTTP/2 without TLS.
	Proto string
	// Body is the decoded JSON body; Raw holds its bytes.
	Body map[string]any
	Raw  []byte

	parsed wireRequest
	call   script.Call
}

// wireRequest is the part of GenerateContentRequest the accessors read.
type wireRequest struct {
	Contents          []Content `json:"contents"`
	SystemInstruction Content   `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []FunctionDeclaration `json:"functionDeclarations"`
	} `json:"tools"`
}

// FunctionDeclaration is a tool declared in the request.
type FunctionDeclaration struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	// Parameters is the OpenAPI-style schema ("type":"OBJECT", …).
	Parameters map[string]any `json:"parameters,omitempty"`
	// ParametersJSONSchema is the full JSON Schema, if the client sent one.
	ParametersJSONSchema any `json:"parametersJsonSchema,omitempty"`
}

// Done is closed when the server has finished handling the request.
func (r *Request) Done() <-chan struct{} { return r.call.Done() }

// Cancelled reports whether the client went away (or the server closed)
// before the reply was fully written.
func (r *Request) Cancelled() bool { return r.call.Cancelled() }

// Contents returns the conversation sent in the request.
func (r *Request) Contents() []Content { return r.parsed.Contents }

// SystemText returns the text of the system instruction.
func (r *Request) SystemText() string { return partsText(r.parsed.SystemInstruction.Parts) }

// LastUserText returns the text of the last content with role "user" (or
// no role).
func (r *Request) LastUserText() string {
	for i := len(r.parsed.Contents) - 1; i >= 0; i-- {
		if c := r.parsed.Contents[i]; c.Role == "user" || c.Role == "" {
			return partsText(c.Parts)
		}
	}
	return ""
}

// FunctionDeclarations returns every function declared in the request's tools.
func (r *Request) FunctionDeclarations() []FunctionDeclaration {
	var out []FunctionDeclaration
	for _, t := range r.parsed.Tools {
		out = append(out, t.FunctionDeclarations...)
	}
	return out
}

// FunctionResponses returns the functionResponse parts of the last content,
// i.e. the tool results of the previous turn.
func (r *Request) FunctionResponses() []FunctionResponse {
	var out []FunctionResponse
	if n := len(r.parsed.Contents); n > 0 {
		for _, p := range r.parsed.Contents[n-1].Parts {
			if p.FunctionResponse != nil {
				out = append(out, *p.FunctionResponse)
			}
		}
	}
	return out
}

func partsText(parts []Part) string {
	var b strings.Builder
	for _, p := range parts {
		if !p.Thought {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}
