package mcpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/ids"
	"github.com/genuiserver/genui/schemas"
)

// Tool names.
const (
	GenerateUI   = "generate_ui"
	UIAction     = "ui_action"
	UIStream     = "ui_stream"
	UIToolResult = "ui_tool_result"
)

// A2UIMimeType is the MIME type of A2UI messages, as an embedded resource or in a host's
// io.modelcontextprotocol/ui mime types.
const A2UIMimeType = "application/a2ui+json"

// uiExtension is the MCP Apps extension's name in a client's capabilities.
const uiExtension = "io.modelcontextprotocol/ui"

// a2uiVersion is the A2UI version of the turns.
const a2uiVersion = a2ui.V09

type generateInput struct {
	Prompt         string `json:"prompt" jsonschema:"what the user asks for, in their words: the UI is composed for it"`
	ConversationID string `json:"conversationId,omitempty" jsonschema:"the conversationId of an earlier result, to continue that conversation; leave it out to start a new one"`
	Model          string `json:"model,omitempty" jsonschema:"the model to compose the UI with, one the server allows; leave it out for the server's default, or the one the conversation used last"`
}

type actionInput struct {
	ConversationID    string         `json:"conversationId" jsonschema:"the conversation whose surface the user acted on"`
	Name              string         `json:"name" jsonschema:"the action's name, as the component defines it"`
	SurfaceID         string         `json:"surfaceId" jsonschema:"the surface the user acted on"`
	SourceComponentID string         `json:"sourceComponentId" jsonschema:"the component the user acted on"`
	Timestamp         string         `json:"timestamp,omitempty" jsonschema:"when the user acted (RFC 3339); now if left out"`
	Context           map[string]any `json:"context,omitempty" jsonschema:"the action's context, resolved from the surface's data model"`
}

// turnOutput is a turn's structuredContent.
type turnOutput struct {
	ConversationID string            `json:"conversationId"`
	StreamID       string            `json:"streamId"`
	Messages       []json.RawMessage `json:"messages"`
	Text           string            `json:"text,omitempty"`
	ToolCalls      []toolCall        `json:"toolCalls,omitempty"`
}

// toolCall is a call of one of the app's tools that a turn ended with: the app runs it
// and answers with ui_tool_result.
type toolCall struct {
	CallID string          `json:"callId"`
	Name   string          `json:"name"`
	Input  json.RawMessage `json:"input"`
}

// toolResultInput is ui_tool_result's input; toolResultSchema describes it.
type toolResultInput struct {
	ConversationID string       `json:"conversationId"`
	Results        []toolResult `json:"results"`
}

type toolResult struct {
	CallID string          `json:"callId"`
	Name   string          `json:"name"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"`
}

// outputSchema is the tools' output schema: the SDK would infer a json.RawMessage as an
// array of bytes.
var outputSchema = &jsonschema.Schema{
	Type:     "object",
	Required: []string{"conversationId", "streamId", "messages"},
	Properties: map[string]*jsonschema.Schema{
		"conversationId": {Type: "string", Description: "the conversation to continue with generate_ui"},
		"streamId":       {Type: "string", Description: "the turn's durable stream"},
		"messages":       {Type: "array", Items: &jsonschema.Schema{Type: "object"}, Description: "the turn's A2UI v0.9 messages, in order"},
		"text":           {Type: "string", Description: "what the model wrote beside the UI"},
		"toolCalls": {Type: "array", Description: "the calls of the app's tools the turn ended with: the app runs them and answers with ui_tool_result",
			Items: &jsonschema.Schema{Type: "object", Required: []string{"callId", "name", "input"}, Properties: map[string]*jsonschema.Schema{
				"callId": {Type: "string"}, "name": {Type: "string"}, "input": {Type: "object"},
			}}},
	},
}

// toolResultSchema is ui_tool_result's input schema: the SDK would infer a
// json.RawMessage as an array of bytes.
var toolResultSchema = &jsonschema.Schema{
	Type:     "object",
	Required: []string{"conversationId", "results"},
	Properties: map[string]*jsonschema.Schema{
		"conversationId": {Type: "string", Description: "the conversation whose turn called the tools"},
		"results": {Type: "array", MinItems: ptr(1), Description: "a result for each call the turn ended with, as its toolCalls gave them",
			Items: &jsonschema.Schema{Type: "object", Required: []string{"callId", "name"}, Properties: map[string]*jsonschema.Schema{
				"callId": {Type: "string", Description: "the call's callId"},
				"name":   {Type: "string", Description: "the call's name"},
				"output": {Description: "what the tool returned (any JSON value)"},
				"error":  {Type: "string", Description: "why the tool could not run, instead of output"},
			}}},
	},
}

func (s *Server) addTools() {
	addTurnTool(s.mcp, &mcp.Tool{
		Name:  GenerateUI,
		Title: "Generate UI",
		Description: "Shows the user an interactive UI (forms, lists, cards, charts of the A2UI basic catalog) composed for their request. " +
			"Pass the user's request as prompt; to refine or continue a UI shown before, pass the conversationId of its result.",
		OutputSchema: outputSchema,
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: false, OpenWorldHint: ptr(false)},
		// The app the result renders in (MCP Apps), under the key of the extension and
		// the flat key hosts still read.
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": AppURI}, "ui/resourceUri": AppURI},
	}, s.generate)
	mcp.AddTool(s.mcp, &mcp.Tool{
		Name:  UIStream,
		Title: "UI stream",
		Description: "The A2UI messages of a generate_ui call that runs now, found by its arguments, after a cursor; " +
			"waits up to waitMs for new ones. The app shows the surface growing with it while the call runs.",
		OutputSchema: streamSchema,
		Annotations:  &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)},
		Meta:         mcp.Meta{"ui": map[string]any{"resourceUri": AppURI, "visibility": []string{"app"}}},
	}, s.stream)
	addTurnTool(s.mcp, &mcp.Tool{
		Name:         UIAction,
		Title:        "UI action",
		Description:  "Sends the user's action on a surface (a button pressed, a form submitted) to the conversation that showed it; the result is the UI's next state.",
		OutputSchema: outputSchema,
		Annotations:  &mcp.ToolAnnotations{OpenWorldHint: ptr(false)},
		// Called by the app, not the model.
		Meta: mcp.Meta{"ui": map[string]any{"resourceUri": AppURI, "visibility": []string{"app"}}},
	}, s.action)
	addTurnTool(s.mcp, &mcp.Tool{
		Name:  UIToolResult,
		Title: "UI tool result",
		Description: "Answers the calls of the app's tools a turn ended with (the user's context, their location) and continues the conversation; " +
			"the result is the UI's next state.",
		InputSchema:  toolResultSchema,
		OutputSchema: outputSchema,
		Annotations:  &mcp.ToolAnnotations{OpenWorldHint: ptr(false)},
		Meta:         mcp.Meta{"ui": map[string]any{"resourceUri": AppURI, "visibility": []string{"app"}}},
	}, s.toolResult)
}

func ptr[T any](v T) *T { return &v }

type streamInput struct {
	Prompt         string `json:"prompt" jsonschema:"the prompt of the generate_ui call, as the tool's input gave it"`
	ConversationID string `json:"conversationId,omitempty" jsonschema:"the conversationId of that call's input, if it had one"`
	After          int    `json:"after,omitempty" jsonschema:"the cursor of the last answer: only what came after it (0: from the start)"`
	WaitMs         int    `json:"waitMs,omitempty" jsonschema:"how long to wait for something new, in milliseconds (at most 20000; default 10000)"`
}

// streamOutput is ui_stream's structuredContent.
type streamOutput struct {
	StreamID string            `json:"streamId,omitempty"`
	Messages []json.RawMessage `json:"messages"`
	Cursor   int               `json:"cursor"`
	Done     bool              `json:"done"`
}

var streamSchema = &jsonschema.Schema{
	Type:     "object",
	Required: []string{"messages", "cursor", "done"},
	Properties: map[string]*jsonschema.Schema{
		"streamId": {Type: "string", Description: "the turn's durable stream, once found"},
		"messages": {Type: "array", Items: &jsonschema.Schema{Type: "object"}, Description: "the turn's A2UI messages after the cursor given, in order"},
		"cursor":   {Type: "integer", Description: "what to pass as after next time"},
		"done":     {Type: "boolean", Description: "whether the turn has ended"},
	},
}

// Long polls of ui_stream.
const (
	defaultWait = 10 * time.Second
	maxWait     = 20 * time.Second
	// batch is how long a poll that has something goes on gathering what follows at
	// once (what was stored already, a burst of messages).
	batch = 20 * time.Millisecond
)

// stream serves ui_stream: the A2UI messages of a generate_ui call that runs now, found by
// its arguments, after a cursor, waiting for new ones up to waitMs.
func (s *Server) stream(ctx context.Context, _ *mcp.CallToolRequest, in streamInput) (*mcp.CallToolResult, *streamOutput, error) {
	if strings.TrimSpace(in.Prompt) == "" {
		return nil, nil, errors.New("prompt: must not be empty")
	}
	if in.After < 0 {
		return nil, nil, errors.New("after: must not be negative")
	}
	wait := defaultWait
	if in.WaitMs < 0 || in.WaitMs > int(maxWait/time.Millisecond) {
		return nil, nil, fmt.Errorf("waitMs: must be between 0 and %d", maxWait/time.Millisecond)
	} else if in.WaitMs > 0 {
		wait = time.Duration(in.WaitMs) * time.Millisecond
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	out := &streamOutput{Messages: []json.RawMessage{}, Cursor: in.After}
	key := turnKey(ctx, in.ConversationID, in.Prompt)
	// The call may not have begun yet: the host gives the app the tool's input as it
	// sends the call.
	for {
		id, err := s.turns.Get(ctx, key)
		if err != nil {
			return nil, nil, s.turnError(ctx, err)
		}
		if id != "" {
			out.StreamID = id
			break
		}
		select {
		case <-ctx.Done():
			return nil, out, nil
		case <-time.After(100 * time.Millisecond):
		}
	}
	st, err := s.svc.Resume(ctx, out.StreamID, in.After)
	if err != nil {
		if ctx.Err() != nil {
			return nil, out, nil
		}
		return nil, nil, s.turnError(ctx, err)
	}
	defer st.Close()
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	var timer *time.Timer
	err = st.Each(rctx, func(it genui.Item) error {
		out.Cursor = it.Seq
		if it.Final() {
			out.Done = true
			return nil
		}
		if it.Event != nil && it.Event.Type == schemas.EventA2UI {
			out.Messages = append(out.Messages, it.Event.A2UI)
			if timer == nil {
				timer = time.AfterFunc(batch, stop)
			}
		}
		return nil
	})
	if timer != nil {
		timer.Stop()
	}
	if err != nil && rctx.Err() == nil {
		return nil, nil, s.turnError(ctx, err)
	}
	return nil, out, nil
}

// generate serves generate_ui.
func (s *Server) generate(ctx context.Context, req *mcp.CallToolRequest, in generateInput) (*mcp.CallToolResult, *turnOutput, error) {
	prompt := strings.TrimSpace(in.Prompt)
	if prompt == "" {
		return nil, nil, errors.New("prompt: must not be empty")
	}
	if req.Params.RequestState != "" || len(req.Params.InputResponses) > 0 {
		// The retry of a call that asked the user: their answers continue the turn.
		return s.answered(ctx, req, turnKey(ctx, in.ConversationID, in.Prompt))
	}
	id := in.ConversationID
	if id == "" {
		id = ids.New()
		caps, err := a2uiCapabilities(req)
		if err != nil {
			return nil, nil, err
		}
		spec := &genui.SessionSpec{A2UI: &schemas.GenerateA2UIRequest{Version: a2uiVersion, A2UIClientCapabilities: caps}}
		if s.appTools && mayRunApp(req) {
			spec.A2UI.ClientTools = appTools
		}
		if asksUser(req) {
			spec.A2UI.ClientTools = append(slices.Clip(spec.A2UI.ClientTools), askUserTool)
		}
		if err := s.svc.OpenSession(ctx, id, spec); err != nil {
			return nil, nil, s.turnError(ctx, err)
		}
	}
	msg := schemas.Message{Role: "user", Parts: []schemas.Part{{Type: "text", Text: prompt}}}
	// The app finds the turn by the arguments it was given, to show it as it grows.
	return s.turn(ctx, req, id, msg, turnKey(ctx, in.ConversationID, in.Prompt), nil, genui.WithTurnModel(in.Model))
}

// action serves ui_action.
func (s *Server) action(ctx context.Context, req *mcp.CallToolRequest, in actionInput) (*mcp.CallToolResult, *turnOutput, error) {
	for _, f := range []struct{ name, v string }{{"conversationId", in.ConversationID}, {"name", in.Name}, {"surfaceId", in.SurfaceID}, {"sourceComponentId", in.SourceComponentID}} {
		if strings.TrimSpace(f.v) == "" {
			return nil, nil, fmt.Errorf("%s: must not be empty", f.name)
		}
	}
	if in.Timestamp != "" {
		if _, err := time.Parse(time.RFC3339Nano, in.Timestamp); err != nil {
			return nil, nil, fmt.Errorf("timestamp: not an RFC 3339 time: %q", in.Timestamp)
		}
	}
	cm := &a2ui.ClientMessage{Action: &a2ui.Action{Name: in.Name, SurfaceID: in.SurfaceID, SourceComponentID: in.SourceComponentID,
		Timestamp: in.Timestamp, Context: in.Context}}
	b, err := cm.Encode(a2uiVersion)
	if err != nil {
		return nil, nil, fmt.Errorf("context: %w", err)
	}
	msg := schemas.Message{Role: "user", Parts: []schemas.Part{{Type: "a2ui", Message: schemas.Object(b)}}}
	return s.turn(ctx, req, in.ConversationID, msg, "", nil)
}

// toolResult serves ui_tool_result: the app's answers to the calls of its tools that a
// turn ended with, which continue the conversation.
func (s *Server) toolResult(ctx context.Context, req *mcp.CallToolRequest, in toolResultInput) (*mcp.CallToolResult, *turnOutput, error) {
	if strings.TrimSpace(in.ConversationID) == "" {
		return nil, nil, errors.New("conversationId: must not be empty")
	}
	if len(in.Results) == 0 {
		return nil, nil, errors.New("results: give a result for each call the turn ended with")
	}
	msg := schemas.Message{Role: "user", Parts: make([]schemas.Part, len(in.Results))}
	for i, r := range in.Results {
		f := "results[" + strconv.Itoa(i) + "]"
		switch {
		case strings.TrimSpace(r.CallID) == "":
			return nil, nil, fmt.Errorf("%s.callId: must not be empty", f)
		case strings.TrimSpace(r.Name) == "":
			return nil, nil, fmt.Errorf("%s.name: must not be empty", f)
		case len(r.Output) > 0 && r.Error != "":
			return nil, nil, fmt.Errorf("%s: give either output or error, not both", f)
		case len(r.Output) == 0 && r.Error == "":
			return nil, nil, fmt.Errorf("%s.output: required (or error: why the tool could not run)", f)
		}
		msg.Parts[i] = schemas.Part{Type: schemas.PartToolResult, CallID: r.CallID, Name: r.Name, Output: r.Output, Error: r.Error}
	}
	res, out, err := s.turn(ctx, req, in.ConversationID, msg, "", nil)
	if err != nil {
		// The service names the results as parts of the request's first message.
		return nil, nil, errors.New(strings.ReplaceAll(err.Error(), "conversation[0].parts[", "results["))
	}
	return res, out, nil
}

// turn runs the next turn of conversation id with msg and gathers its A2UI messages; a
// key names its stream in s.turns while it runs, for ui_stream.
//
// prior, unless nil, is what the turns before this one asked the user, whose A2UI the
// result carries first.
func (s *Server) turn(ctx context.Context, req *mcp.CallToolRequest, id string, msg schemas.Message, key string, prior *askState, opts ...genui.TurnOption) (*mcp.CallToolResult, *turnOutput, error) {
	st, err := s.svc.SessionTurn(ctx, id, []schemas.Message{msg}, opts...)
	if err != nil {
		return nil, nil, s.turnError(ctx, err)
	}
	defer st.Close()
	if key != "" {
		if err := s.turns.Put(ctx, key, st.ID(), turnTTL); err != nil {
			// The result carries the whole turn: only its growing view is lost.
			s.log.WarnContext(ctx, "an MCP turn cannot be found by its app", "err", err)
		}
	}
	out := &turnOutput{ConversationID: id, StreamID: st.ID(), Messages: []json.RawMessage{}}
	var text strings.Builder
	var failed *genui.Error
	err = st.Each(ctx, func(it genui.Item) error {
		switch {
		case it.Err != nil:
			failed = it.Err
		case it.Event == nil:
		case it.Event.Type == schemas.EventA2UI:
			out.Messages = append(out.Messages, it.Event.A2UI)
		case it.Event.Type == schemas.EventText:
			text.WriteString(it.Event.Text)
		case it.Event.Type == schemas.EventToolCall && it.Event.ToolCall != nil:
			c := it.Event.ToolCall
			out.ToolCalls = append(out.ToolCalls, toolCall{CallID: c.CallID, Name: c.Name, Input: c.Input})
		}
		return nil
	})
	if err != nil {
		return nil, nil, s.turnError(ctx, err)
	}
	if failed != nil {
		return nil, nil, s.turnError(ctx, failed)
	}
	out.Text = strings.TrimSpace(text.String())
	if res, ok, err := s.askUser(ctx, req, out, prior); ok || err != nil {
		return res, nil, err
	}
	if prior != nil {
		out.Messages = append(slices.Clip(prior.messages), out.Messages...)
	}
	// The result hands the turn's UI over whole: each surface once, in its final state,
	// rather than the updates that streamed it.
	out.Messages = a2ui.Final(a2ui.V09, out.Messages)
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: summary(out)}}}
	if rendersA2UI(req) {
		b, _ := json.Marshal(out.Messages)
		res.Content = append(res.Content, &mcp.EmbeddedResource{
			Resource:    &mcp.ResourceContents{URI: "a2ui://conversation/" + id + "/" + out.StreamID, MIMEType: A2UIMimeType, Text: string(b)},
			Annotations: &mcp.Annotations{Audience: []mcp.Role{"user"}},
		})
	}
	return res, out, nil
}

// summary is a turn's text for the model and for hosts that show no UI: the surfaces
// shown, the model's words, and how to continue.
func summary(out *turnOutput) string {
	var shown []string
	for _, m := range out.Messages {
		if !bytes.Contains(m, []byte(`"createSurface"`)) {
			continue
		}
		var v struct {
			CreateSurface *struct {
				SurfaceID string `json:"surfaceId"`
			} `json:"createSurface"`
		}
		if json.Unmarshal(m, &v) == nil && v.CreateSurface != nil && !slices.Contains(shown, v.CreateSurface.SurfaceID) {
			shown = append(shown, v.CreateSurface.SurfaceID)
		}
	}
	var b strings.Builder
	switch len(shown) {
	case 0:
		b.WriteString("No new surface was shown")
	default:
		b.WriteString("Shown to the user: ")
		for i, id := range shown {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("surface " + strconv.Quote(id))
		}
	}
	b.WriteString(" (" + strconv.Itoa(len(out.Messages)) + " A2UI messages).")
	if out.Text != "" {
		b.WriteString(" The UI's author said: " + out.Text)
	}
	if len(out.ToolCalls) > 0 {
		b.WriteString(" The UI is not finished: it waits for the app showing it to answer ")
		for i, c := range out.ToolCalls {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(c.Name)
		}
		b.WriteString(", which the app does by itself. If the user sees no app, call generate_ui with this conversationId and a new prompt to go on without it.")
	}
	b.WriteString(" To change or continue this UI, call generate_ui with conversationId " + strconv.Quote(out.ConversationID) + ".")
	return b.String()
}

// a2uiCapabilities returns the A2UI client capabilities a call carries in _meta.a2ui
// (A2UI over MCP: {"clientCapabilities": {"v0.9": {"supportedCatalogIds": […]}}}), nil
// when it carries none: the conversation then uses the basic catalog.
func a2uiCapabilities(req *mcp.CallToolRequest) (schemas.Object, error) {
	m, ok := req.Params.Meta["a2ui"]
	if !ok {
		return nil, nil
	}
	a, ok := m.(map[string]any)
	if !ok {
		return nil, errors.New("_meta.a2ui: must be an object")
	}
	caps, ok := a["clientCapabilities"].(map[string]any)
	if !ok {
		return nil, errors.New("_meta.a2ui.clientCapabilities: must be an object")
	}
	b, err := json.Marshal(caps)
	if err != nil {
		return nil, fmt.Errorf("_meta.a2ui.clientCapabilities: %w", err)
	}
	return schemas.Object(b), nil
}

// appTools are the client tools of the app (web/a2ui/src/mcpapp.js): it runs their calls
// in the user's host and answers them with ui_tool_result.
var appTools = []schemas.ClientTool{
	{Name: "get_user_context", InputSchema: schemas.Object(`{"type":"object","properties":{}}`),
		Description: "Returns the user's locale, time zone, local date and time, and colour theme, as the app showing the UI knows them. " +
			"Call it when what the UI shows depends on the user's date, time, language or place, rather than guessing them."},
	{Name: "get_location", InputSchema: schemas.Object(`{"type":"object","properties":{}}`),
		Description: "Returns where the user is ({latitude, longitude, accuracyMeters}) if they allow it, or an error. " +
			"Call it only when the UI needs the user's place, such as what is near them."},
}

// mayRunApp reports whether the caller may show the app and so run its tools: a caller
// of the 2026-07-28 revision says whether it renders MCP Apps in its capabilities; an
// earlier one's are not seen by a stateless server, and it may.
func mayRunApp(req *mcp.CallToolRequest) bool {
	if req.ProtocolVersion() < "2026-07-28" {
		return true
	}
	return listsUIType(req, AppMimeType)
}

// listsUIType reports whether the caller's capabilities list mimeType among those of its
// MCP Apps extension.
func listsUIType(req *mcp.CallToolRequest, mimeType string) bool {
	caps := req.ClientCapabilities()
	if caps == nil {
		return false
	}
	ext, _ := caps.Extensions[uiExtension].(map[string]any)
	types, _ := ext["mimeTypes"].([]any)
	return slices.Contains(types, any(mimeType))
}

// rendersA2UI reports whether the client renders A2UI itself: it sends A2UI client
// capabilities with the call, or has application/a2ui+json among the mime types of its
// MCP Apps extension (a stateless server sees the extension of 2026-07-28 clients only,
// which send their capabilities with every request).
func rendersA2UI(req *mcp.CallToolRequest) bool {
	if _, ok := req.Params.Meta["a2ui"]; ok {
		return true
	}
	return listsUIType(req, A2UIMimeType)
}
