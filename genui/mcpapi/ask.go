package mcpapi

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/schemas"
)

// Asking the user in the middle of a turn: with a caller of the 2026-07-28 revision that
// can elicit answers, a conversation gets the client tool ask_user. A turn that calls it
// ends, and the call's result asks for input (resultType "input_required", one
// elicitation per question, and an opaque requestState); the client asks the user and
// calls again with the same arguments, their answers and the state, which continue the
// conversation. Nothing waits on the server in between but the conversation's stored
// state, as for every other client tool.

// AskUser is the name of the client tool that asks the user through the caller.
const AskUser = "ask_user"

var askUserTool = schemas.ClientTool{Name: AskUser,
	Description: "Asks the user one short question in their host's own dialog and returns {answer}, or an error when they decline. " +
		"Use it only when the UI cannot be composed without something only the user can say; a form in the UI asks for everything else.",
	InputSchema: schemas.Object(`{"type":"object","properties":{` +
		`"question":{"type":"string","description":"the question, in the user's language"},` +
		`"choices":{"type":"array","items":{"type":"string"},"description":"the answers to choose from, if the answer is one of a few"}},` +
		`"required":["question"]}`)}

// asksUser reports whether the caller answers input requests with elicitations: it
// speaks the 2026-07-28 revision (earlier ones have no input requests, and a stateless
// server cannot send them requests of its own) and elicits forms.
func asksUser(req *mcp.CallToolRequest) bool {
	if req.ProtocolVersion() < "2026-07-28" {
		return false
	}
	caps := req.ClientCapabilities()
	return caps != nil && caps.Elicitation != nil && (caps.Elicitation.Form != nil || caps.Elicitation.URL == nil)
}

// askState is a call's requestState: the conversation, and the streams of the turns so
// far, whose A2UI messages the final result carries.
type askState struct {
	ConversationID string   `json:"c"`
	Streams        []string `json:"s"`
	// messages are those streams' A2UI messages, read back on the retry.
	messages []json.RawMessage
}

// askKey is where a stream that asked the user is known as its caller's, for ttl.
func askKey(ctx context.Context, streamID string) string {
	sum := sha256.Sum256([]byte("ask\x00" + streamID))
	return auth.Scope(ctx, base64.RawURLEncoding.EncodeToString(sum[:16]))
}

// askUser turns a turn that ended with calls of ask_user into a result that asks the
// caller for the answers; ok is false for any other turn (calls of the app's tools go
// to the app as toolCalls).
func (s *Server) askUser(ctx context.Context, req *mcp.CallToolRequest, out *turnOutput, prior *askState) (res *mcp.CallToolResult, ok bool, err error) {
	if len(out.ToolCalls) == 0 || !asksUser(req) {
		return nil, false, nil
	}
	for _, c := range out.ToolCalls {
		if c.Name != AskUser {
			return nil, false, nil
		}
	}
	st := askState{ConversationID: out.ConversationID, Streams: []string{out.StreamID}}
	if prior != nil {
		st.Streams = append(slices.Clip(prior.Streams), out.StreamID)
	}
	if err := s.turns.Put(ctx, askKey(ctx, out.StreamID), out.ConversationID, turnTTL); err != nil {
		return nil, true, s.turnError(ctx, err)
	}
	requests := mcp.InputRequestMap{}
	for _, c := range out.ToolCalls {
		var in struct {
			Question string   `json:"question"`
			Choices  []string `json:"choices"`
		}
		_ = json.Unmarshal(c.Input, &in) // checked against the tool's schema by the service
		answer := map[string]any{"type": "string", "title": "Your answer"}
		if len(in.Choices) > 0 {
			answer["enum"] = in.Choices
		}
		requests[c.CallID] = &mcp.ElicitParams{Mode: "form", Message: in.Question,
			RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"answer": answer}, "required": []string{"answer"}}}
	}
	b, _ := json.Marshal(&st)
	return &mcp.CallToolResult{InputRequests: requests, RequestState: base64.RawURLEncoding.EncodeToString(b)}, true, nil
}

var partsField = regexp.MustCompile(`conversation\[0\]\.parts\[\d+\]`)

// answered serves the retry of a generate_ui call that asked the user: the answers in
// its inputResponses continue the conversation its requestState names.
func (s *Server) answered(ctx context.Context, req *mcp.CallToolRequest, key string) (*mcp.CallToolResult, *turnOutput, error) {
	var st askState
	raw, err := base64.RawURLEncoding.DecodeString(req.Params.RequestState)
	if err != nil || json.Unmarshal(raw, &st) != nil || st.ConversationID == "" || len(st.Streams) == 0 {
		return nil, nil, errors.New("requestState: not a state this server gave; send it back as the input-required result gave it")
	}
	for _, id := range st.Streams {
		conv, err := s.turns.Get(ctx, askKey(ctx, id))
		if err != nil {
			return nil, nil, s.turnError(ctx, err)
		}
		if conv != st.ConversationID {
			return nil, nil, fmt.Errorf("requestState: unknown or expired; to go on, call generate_ui with conversationId %q and the user's answer as prompt", st.ConversationID)
		}
	}
	if len(req.Params.InputResponses) == 0 {
		return nil, nil, errors.New("inputResponses: required with requestState: the user's answers")
	}
	msg := schemas.Message{Role: "user"}
	for _, id := range slices.Sorted(maps.Keys(req.Params.InputResponses)) {
		er, ok := req.Params.InputResponses[id].(*mcp.ElicitResult)
		if !ok {
			return nil, nil, fmt.Errorf("inputResponses[%q]: not the result of an elicitation", id)
		}
		p := schemas.Part{Type: schemas.PartToolResult, CallID: id, Name: AskUser}
		switch er.Action {
		case "accept":
			content := er.Content
			if content == nil {
				content = map[string]any{}
			}
			p.Output, _ = json.Marshal(content)
		case "decline":
			p.Error = "the user declined to answer"
		case "cancel":
			p.Error = "the user dismissed the question without answering"
		default:
			return nil, nil, fmt.Errorf("inputResponses[%q].action: %q is not accept, decline or cancel", id, er.Action)
		}
		msg.Parts = append(msg.Parts, p)
	}
	// What the earlier rounds showed goes in the final result, each message once.
	for _, id := range st.Streams {
		msgs, err := s.a2uiOf(ctx, id)
		if err != nil {
			return nil, nil, s.turnError(ctx, err)
		}
		st.messages = append(st.messages, msgs...)
	}
	res, out, err := s.turn(ctx, req, st.ConversationID, msg, key, &st)
	if err != nil {
		return nil, nil, errors.New(partsField.ReplaceAllString(err.Error(), "inputResponses"))
	}
	return res, out, nil
}

// a2uiOf returns the A2UI messages of a stream that has ended.
func (s *Server) a2uiOf(ctx context.Context, streamID string) ([]json.RawMessage, error) {
	st, err := s.svc.Resume(ctx, streamID, 0)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	var msgs []json.RawMessage
	err = st.Each(ctx, func(it genui.Item) error {
		if it.Event != nil && it.Event.Type == schemas.EventA2UI {
			msgs = append(msgs, it.Event.A2UI)
		}
		return nil
	})
	return msgs, err
}
