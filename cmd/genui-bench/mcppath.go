package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// The MCP path of the a2a phase: the same A2UI turn as a call of the server's MCP tool
// generate_ui (Streamable HTTP, stateless, JSON-RPC tools/call answered on an SSE
// stream), whose result carries the turn's A2UI messages in structuredContent. MCP has
// no partial results: every message arrives with the result.

const (
	// mcpEndpoint is the server's MCP endpoint, and mcpVersion the protocol revision of
	// the calls (the newest the official TypeScript SDK speaks, as hosts do).
	mcpEndpoint = "/mcp"
	mcpVersion  = "2025-11-25"
)

// mcpBody is the tools/call of the phase: generate_ui with the phase's user message,
// which opens a conversation the server holds.
func mcpBody() []byte { return mcpBodyText(a2aText) }

// mcpBodyText is a tools/call of generate_ui with the user message text.
func mcpBodyText(text string) []byte {
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"generate_ui","arguments":{"prompt":%q}}}`, text)
}

// mcpResponse is what the client reads of the call's response.
type mcpResponse struct {
	ID     json.RawMessage `json:"id"`
	Result *struct {
		IsError bool `json:"isError"`
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
		StructuredContent *struct {
			ConversationID string                       `json:"conversationId"`
			Messages       []map[string]json.RawMessage `json:"messages"`
		} `json:"structuredContent"`
	} `json:"result"`
	Error json.RawMessage `json:"error"`
}

// mcpTurn runs one MCP turn: tools/call generate_ui, the SSE stream read to its end. It
// applies each A2UI message of the result to a client surface model and checks that the
// client renders every component of the script.
func mcpTurn(ctx context.Context, hc *http.Client, base string, s *a2uiScript, timeout time.Duration) (r a2aTurnResult) {
	return mcpCall(ctx, hc, base, s, mcpBody(), timeout)
}

// mcpCall is mcpTurn of a tools/call request, req.
func mcpCall(ctx context.Context, hc *http.Client, base string, s *a2uiScript, req []byte, timeout time.Duration) (r a2aTurnResult) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	res, err := postJSON(ctx, hc, base+mcpEndpoint, req, "application/json, text/event-stream", "MCP-Protocol-Version", mcpVersion)
	if err != nil {
		r.err = err
		return r
	}
	defer drain(res.Body)
	cr := &countingReader{r: res.Body}
	var body []byte
	switch ct := res.Header.Get("Content-Type"); {
	case strings.HasPrefix(ct, "application/json"):
		body, err = io.ReadAll(cr)
	case strings.HasPrefix(ct, "text/event-stream"):
		body, err = sseResponse(bufio.NewReaderSize(cr, 64<<10))
	default:
		err = fmt.Errorf("Content-Type %q", ct)
	}
	now := time.Since(start)
	r.received = cr.n
	if err != nil {
		r.err = fmt.Errorf("POST %s: %w", mcpEndpoint, err)
		return r
	}
	var msg mcpResponse
	if err := json.Unmarshal(body, &msg); err != nil {
		r.err = fmt.Errorf("the response is not JSON-RPC: %s", truncate(body, 300))
		return r
	}
	switch res := msg.Result; {
	case len(msg.Error) > 0:
		r.err = fmt.Errorf("JSON-RPC error: %s", truncate(msg.Error, 500))
	case res == nil:
		r.err = fmt.Errorf("a response without result: %s", truncate(body, 300))
	case res.IsError:
		var text []string
		for _, c := range res.Content {
			text = append(text, c.Text)
		}
		r.err = fmt.Errorf("a tool error: %s", strings.Join(text, " "))
	case res.StructuredContent == nil || res.StructuredContent.ConversationID == "":
		r.err = fmt.Errorf("a result without structuredContent: %s", truncate(body, 300))
	case len(res.StructuredContent.Messages) == 0:
		r.err = errors.New("the result holds no A2UI message")
	}
	if r.err != nil {
		return r
	}
	model := newA2UISurfaces(s.version)
	for _, m := range msg.Result.StructuredContent.Messages {
		if err := model.apply(m, nil); err != nil {
			r.err = err
			return r
		}
		raw, _ := json.Marshal(m)
		r.raw = append(r.raw, raw)
		r.messages++
	}
	r.firstMessage, r.lastMessage, r.end = now, now, now
	if miss := model.missing(s); len(miss) > 0 {
		r.err = fmt.Errorf("the client renders %d of the %d scripted components at the end; missing: %s",
			len(s.comps)-len(miss), len(s.comps), strings.Join(miss, ", "))
	}
	return r
}

// sseResponse reads an SSE stream to its end and returns the data of its one event
// holding a JSON-RPC response (the server may send notifications first).
func sseResponse(br *bufio.Reader) ([]byte, error) {
	var data, resp []byte
	for {
		line, err := br.ReadBytes('\n')
		line = bytes.TrimRight(line, "\r\n")
		switch {
		case len(line) == 0 && len(data) > 0:
			var probe struct {
				Method string `json:"method"`
			}
			if json.Unmarshal(data, &probe) == nil && probe.Method == "" {
				if resp != nil {
					return nil, errors.New("two responses in one stream")
				}
				resp = bytes.Clone(data)
			}
			data = data[:0]
		case bytes.HasPrefix(line, []byte("data:")):
			data = append(data, bytes.TrimPrefix(line[len("data:"):], []byte(" "))...)
		}
		if err != nil {
			if !errors.Is(err, io.EOF) {
				return nil, err
			}
			if resp == nil {
				return nil, errors.New("the stream ended without a response")
			}
			return resp, nil
		}
	}
}
