package wsapi

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"sync"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/ids"
	"github.com/genuiserver/genui/internal/jsonbody"
	"github.com/genuiserver/genui/internal/jsonenc"
	"github.com/genuiserver/genui/internal/ndjson"
	"github.com/genuiserver/genui/internal/sessionhub"
	"github.com/genuiserver/genui/schemas"
)

func itoa(n int) string { return strconv.Itoa(n) }

// state is a session's state on this server, kept across its connections.
type state struct {
	mu sync.Mutex
	// acp: the session's updates and requests use ACP's spelling (the last prompt or
	// load was an ACP method).
	acp bool
	// end is the request answered when the interaction ends (a prompt, or the load that
	// took it over), nil when none waits.
	end *reply
	// calls are the client tool requests sent and not yet answered; results the answers
	// gathered until each call has one.
	calls   []schemas.ToolCall
	results map[string]schemas.Part
}

// dataKey is the key of this transport's state of a session in the hub.
type dataKey struct{}

func (c *conn) stateOf(s *sessionhub.Session) *state {
	return c.s.hub.Data(s, dataKey{}, func() any { return &state{} }).(*state)
}

// call runs one method; r is nil for a notification.
func (c *conn) call(method string, params json.RawMessage, r *reply) {
	acp := strings.HasPrefix(method, "session/")
	switch method {
	case "initialize":
		c.initialize(params, r)
	case "new_session", "session/new":
		c.newSession(params, r, acp)
	case "prompt", "session/prompt":
		c.prompt(params, r, acp)
	case "cancel", "session/cancel":
		c.cancel(params, r, acp)
	case "list_sessions", "session/list":
		c.listSessions(r, acp)
	case "load_session", "session/load", "resume_session", "session/resume":
		c.load(params, r, acp, method == "resume_session" || method == "session/resume")
	case "authenticate":
		c.authenticate(params, r)
	case "set_session_mode", "session/set_mode":
		c.setMode(params, r, acp)
	case "set_session_model", "session/set_model":
		c.setModel(params, r, acp)
	case "fork_session", "session/fork":
		c.fork(params, r, acp)
	default:
		r.send(nil, errorf(codeNoMethod, "method not found: "+strconv.Quote(method)))
	}
}

// The params' schemas, which name a field of the wrong type exactly
// (prompt[1].text).
var (
	initializeSchema = jsonbody.NewSchema(initializeParams{})
	newSessionSchema = jsonbody.NewSchema(newSessionParams{})
	sessionSchema    = jsonbody.NewSchema(sessionParams{})
	promptSchema     = jsonbody.NewSchema(promptParams{})
)

// decodeParams decodes params into v, whose schema is schema; a bad field is -32602
// naming it.
func decodeParams(params json.RawMessage, v any, schema *jsonbody.Schema) *rpcError {
	if len(params) == 0 || isNull(params) {
		return nil
	}
	if e := jsonbody.Decode(params, v, schema); e != nil {
		msg := e.Message
		field := ""
		if d, ok := e.Details.(map[string]any); ok {
			field, _ = d["field"].(string)
		}
		if field != "" {
			return invalidParams(field, strings.TrimPrefix(msg, field+": "))
		}
		return &rpcError{Code: codeInvalidParams, Message: "params: " + msg}
	}
	return nil
}

type initializeParams struct {
	ProtocolVersion json.RawMessage `json:"protocol_version,omitempty"`
	ACPVersion      json.RawMessage `json:"protocolVersion,omitempty"`
}

func (c *conn) initialize(params json.RawMessage, r *reply) {
	var p initializeParams
	if e := decodeParams(params, &p, initializeSchema); e != nil {
		r.send(nil, e)
		return
	}
	info := `{"name":"genui","title":"GenUI server","version":` + string(jsonenc.AppendString(nil, c.s.version)) + `}`
	if p.ACPVersion != nil && p.ProtocolVersion == nil {
		r.send([]byte(`{"protocolVersion":1,"agentCapabilities":{"loadSession":true,"promptCapabilities":{"image":true,"embeddedContext":true}},"agentInfo":`+info+`,"authMethods":[]}`), nil)
		return
	}
	r.send([]byte(`{"protocol_version":1,"agent_capabilities":{"load_session":true,"prompt_capabilities":{"image":true,"embedded_context":true},"client_tools":true,"ui":["genui","a2ui/v0.8","a2ui/v0.9"]},"agent_info":`+info+`}`), nil)
}

type newSessionParams struct {
	Catalog                schemas.Catalog      `json:"catalog,omitempty"`
	SessionID              string               `json:"sessionId,omitempty"`
	A2UIClientCapabilities schemas.Object       `json:"a2uiClientCapabilities,omitempty"`
	A2UIClientDataModel    schemas.Object       `json:"a2uiClientDataModel,omitempty"`
	A2UIVersion            string               `json:"a2uiVersion,omitempty"`
	ClientTools            []schemas.ClientTool `json:"clientTools,omitempty"`
}

func (c *conn) newSession(params json.RawMessage, r *reply, acp bool) {
	var p newSessionParams
	if e := decodeParams(params, &p, newSessionSchema); e != nil {
		r.send(nil, e)
		return
	}
	if p.Catalog != nil && (p.A2UIClientCapabilities != nil || p.A2UIVersion != "") {
		r.send(nil, invalidParams("catalog", "give a genui catalog or A2UI client capabilities, not both"))
		return
	}
	if len(c.s.hub.Sessions(c)) >= c.s.maxSessions {
		r.send(nil, &rpcError{Code: codeLimit, Message: "a connection holds at most " + itoa(c.s.maxSessions) + " sessions", Data: map[string]any{"status": "RESOURCE_EXHAUSTED", "limit": c.s.maxSessions}})
		return
	}
	spec := &genui.SessionSpec{}
	if p.Catalog != nil || (p.SessionID != "" && p.A2UIClientCapabilities == nil && p.A2UIVersion == "") {
		spec.Generate = &schemas.GenerateRequest{SessionID: p.SessionID, Catalog: p.Catalog, ClientTools: p.ClientTools}
	} else {
		spec.A2UI = &schemas.GenerateA2UIRequest{Version: p.A2UIVersion, SessionID: p.SessionID,
			A2UIClientCapabilities: p.A2UIClientCapabilities, A2UIClientDataModel: p.A2UIClientDataModel, ClientTools: p.ClientTools}
	}
	id := ids.New()
	if err := c.s.svc.OpenSession(c.ctx, id, spec); err != nil {
		r.send(nil, fromService(err, func(f string) string {
			if f == "version" {
				return "a2uiVersion"
			}
			return f
		}))
		return
	}
	s, err := c.s.hub.Attach(c.ctx, id, c)
	if err != nil {
		r.send(nil, errorf(codeInternal, err.Error()))
		return
	}
	c.stateOf(s).acp = acp
	if acp {
		r.send([]byte(`{"sessionId":"`+id+`"}`), nil)
		return
	}
	r.send([]byte(`{"session_id":"`+id+`"}`), nil)
}

// sessionParams names a session, in either spelling.
type sessionParams struct {
	SessionID string `json:"session_id,omitempty"`
	ACPID     string `json:"sessionId,omitempty"`
	After     int    `json:"after,omitempty"`
}

func (p *sessionParams) id(acp bool) (string, *rpcError) {
	id := p.SessionID
	if id == "" {
		id = p.ACPID
	}
	if id == "" {
		if acp {
			return "", invalidParams("sessionId", "required: the session's id")
		}
		return "", invalidParams("session_id", "required: the session's id, from new_session")
	}
	return id, nil
}

// namesSession is params naming a session (in either spelling).
type namesSession interface {
	id(acp bool) (string, *rpcError)
}

// decodeSession decodes params into p and returns the session they name.
func decodeSession[P namesSession](params json.RawMessage, p P, schema *jsonbody.Schema, acp bool) (string, *rpcError) {
	if e := decodeParams(params, p, schema); e != nil {
		return "", e
	}
	return p.id(acp)
}

func notFound(id string) *rpcError {
	return &rpcError{Code: codeNotFound, Message: "session not found: " + strconv.Quote(id) + " is unknown, expired, closed or another connection's",
		Data: map[string]any{"status": "NOT_FOUND", "session_id": id}}
}

// block is a prompt's content block (ACP's, and the service's UI parts).
type block struct {
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	Data     string `json:"data,omitempty"`
	MimeType string `json:"mimeType,omitempty"`
	URI      string `json:"uri,omitempty"`
	Name     string `json:"name,omitempty"`
	Resource *struct {
		URI      string `json:"uri,omitempty"`
		Text     string `json:"text,omitempty"`
		Blob     string `json:"blob,omitempty"`
		MimeType string `json:"mimeType,omitempty"`
	} `json:"resource,omitempty"`
	Event   *schemas.UIEvent `json:"event,omitempty"`
	Message schemas.Object   `json:"message,omitempty"`
}

type promptParams struct {
	sessionParams
	Prompt []block `json:"prompt,omitempty"`
}

// parts maps content blocks to a user message's parts.
func parts(blocks []block) ([]schemas.Part, *rpcError) {
	if len(blocks) == 0 {
		return nil, invalidParams("prompt", "required: at least one content block")
	}
	out := make([]schemas.Part, 0, len(blocks))
	for i, b := range blocks {
		f := "prompt[" + itoa(i) + "]"
		switch b.Type {
		case "text":
			out = append(out, schemas.Part{Type: schemas.PartText, Text: b.Text})
		case "image":
			if b.Data == "" && b.URI == "" {
				return nil, invalidParams(f+".data", "an image needs data (base64) with mimeType, or uri")
			}
			out = append(out, schemas.Part{Type: schemas.PartImage, Base64: b.Data, MimeType: b.MimeType, URL: b.URI})
		case "resource":
			if b.Resource == nil || (b.Resource.Text == "" && b.Resource.Blob == "") {
				return nil, invalidParams(f+".resource", "a resource needs text or blob")
			}
			if b.Resource.Text != "" {
				out = append(out, schemas.Part{Type: schemas.PartText, Text: b.Resource.Text})
			} else {
				out = append(out, schemas.Part{Type: schemas.PartImage, Base64: b.Resource.Blob, MimeType: b.Resource.MimeType})
			}
		case "resource_link":
			out = append(out, schemas.Part{Type: schemas.PartText, Text: "[" + b.Name + "](" + b.URI + ")"})
		case schemas.PartUIEvent:
			out = append(out, schemas.Part{Type: schemas.PartUIEvent, Event: b.Event})
		case "a2ui":
			out = append(out, schemas.Part{Type: "a2ui", Message: b.Message})
		case "":
			return nil, invalidParams(f+".type", "required: text, image, resource, resource_link, uiEvent or a2ui")
		default:
			return nil, invalidParams(f+".type", strconv.Quote(b.Type)+" is not supported: send text, image, resource, resource_link, uiEvent or a2ui")
		}
	}
	return out, nil
}

// renamePrompt names the fields of a prompt's turn as the prompt does.
func renamePrompt(f string) string {
	if rest, ok := strings.CutPrefix(f, "conversation[0].parts["); ok {
		return "prompt[" + rest
	}
	return f
}

func (c *conn) prompt(params json.RawMessage, r *reply, acp bool) {
	var p promptParams
	id, e := decodeSession(params, &p, promptSchema, acp)
	if e != nil {
		r.send(nil, e)
		return
	}
	ps, e := parts(p.Prompt)
	if e != nil {
		r.send(nil, e)
		return
	}
	s := c.s.hub.Owned(c.ctx, id, c)
	if s == nil {
		r.send(nil, notFound(id))
		return
	}
	st := c.stateOf(s)
	st.mu.Lock()
	busy := st.end != nil
	if !busy {
		st.end, st.acp = r, acp
		if r == nil {
			st.end = &reply{} // a notification's turn: its end goes nowhere, but it holds the session
		}
	}
	st.mu.Unlock()
	if busy {
		r.send(nil, &rpcError{Code: codeBusy, Message: "session busy: a prompt of the session is running or waits for its client tools; wait for its end, or cancel it",
			Data: map[string]any{"status": "ABORTED", "session_id": id}})
		return
	}
	c.startTurn(s, []schemas.Message{{Role: "user", Parts: ps}}, renamePrompt)
}

// startTurn runs a turn of s with msgs; its end answers the session's waiting request.
func (c *conn) startTurn(s *sessionhub.Session, msgs []schemas.Message, rename func(string) string) {
	st := c.stateOf(s)
	c.mu.Lock()
	over := c.turns >= c.s.maxTurns
	if !over {
		c.turns++
	}
	c.mu.Unlock()
	if over {
		st.finish(nil, &rpcError{Code: codeLimit, Message: "a connection runs at most " + itoa(c.s.maxTurns) + " turns at once",
			Data: map[string]any{"status": "RESOURCE_EXHAUSTED", "limit": c.s.maxTurns}})
		return
	}
	stream, err := c.s.svc.SessionTurn(c.ctx, s.ID, msgs)
	if err != nil {
		c.mu.Lock()
		c.turns--
		c.mu.Unlock()
		if sessionhub.Inconsistent(err) {
			c.s.hub.Drop(c.ctx, s.ID)
		}
		st.finish(nil, fromService(err, rename))
		return
	}
	c.s.hub.Started(s, stream.ID())
	// The connection's count of turns drops when the turn's last item arrives, before the
	// client reads the end and may start the next one; at the latest when the turn ends.
	var released sync.Once
	release := func() {
		released.Do(func() {
			c.mu.Lock()
			c.turns--
			c.mu.Unlock()
		})
	}
	go func() {
		defer func() {
			release()
			c.s.hub.Ended(c.ctx, s, stream.ID())
		}()
		stream.Each(c.ctx, func(it genui.Item) error {
			if it.Final() {
				release()
			}
			return c.forward(s, it)
		})
	}()
}

var errDetached = errors.New("the session's connection changed")

// forward passes an item of a session's turn to the client while the session is this
// connection's; the final item ends the turn.
func (c *conn) forward(s *sessionhub.Session, it genui.Item) error {
	if !c.s.hub.Owner(s, c) {
		return errDetached
	}
	st := c.stateOf(s)
	if it.Event != nil {
		if it.Event.Type == schemas.EventToolCall {
			return nil // the call is a client_tool request when the turn ends
		}
		if !c.write(c.appendUpdate(nil, s.ID, it, st.isACP())) {
			return errDetached
		}
		c.s.hub.Delivered(s, it.Seq)
		return nil
	}
	c.s.hub.Delivered(s, it.Seq)
	c.s.hub.Finished(s)
	c.ended(s, it)
	return nil
}

func (st *state) isACP() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.acp
}

// appendUpdate appends an event's session_update notification.
func (c *conn) appendUpdate(b []byte, id string, it genui.Item, acp bool) []byte {
	ev := it.Event
	if acp {
		b = append(b, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"`...)
	} else {
		b = append(b, `{"jsonrpc":"2.0","method":"session_update","params":{"session_id":"`...)
	}
	b = append(b, id...)
	b = append(b, `","seq":`...)
	b = strconv.AppendInt(b, int64(it.Seq), 10)
	switch {
	case ev.Type == schemas.EventText && acp:
		b = append(b, `,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":`...)
		b = jsonenc.AppendString(b, ev.Text)
		return append(b, "}}}}"...)
	case ev.Type == schemas.EventText:
		b = append(b, `,"update":{"type":"agent_message_chunk","chunk":`...)
		b = jsonenc.AppendString(b, ev.Text)
		return append(b, "}}}"...)
	case acp:
		b = append(b, `,"update":{"sessionUpdate":"ui_update","event":`...)
	default:
		b = append(b, `,"update":{"type":"ui_update","event":`...)
	}
	b = ndjson.AppendEvent(b, ev)
	return append(b, "}}}"...)
}

// ended handles the end of a turn of s: the client tool requests of the calls it waits
// for, or the end of the interaction.
func (c *conn) ended(s *sessionhub.Session, it genui.Item) {
	st := c.stateOf(s)
	if it.Err != nil {
		if it.Err.Status == genui.StatusCancelled {
			st.finish([]byte(stopReason("cancelled", st.isACP())), nil)
			return
		}
		st.finish(nil, fromService(it.Err, renamePrompt))
		return
	}
	var res struct {
		FinishReason string `json:"finishReason"`
	}
	json.Unmarshal(it.Result, &res)
	if res.FinishReason == schemas.FinishInterrupted {
		calls, _, err := c.s.svc.SessionCalls(context.WithoutCancel(c.ctx), s.ID)
		if err != nil {
			st.finish(nil, fromService(err, renamePrompt))
			return
		}
		if len(calls) > 0 {
			c.request(s, calls)
			return
		}
	}
	reason := "end_turn"
	switch res.FinishReason {
	case "length":
		reason = "max_tokens"
	case "blocked":
		reason = "refusal"
	}
	st.finish([]byte(stopReason(reason, st.isACP())), nil)
}

func stopReason(reason string, acp bool) string {
	if acp {
		return `{"stopReason":"` + reason + `"}`
	}
	return `{"stop_reason":"` + reason + `"}`
}

// finish answers the request waiting for the interaction's end.
func (st *state) finish(result []byte, err *rpcError) {
	st.mu.Lock()
	r := st.end
	st.end, st.calls, st.results = nil, nil, nil
	st.mu.Unlock()
	r.send(result, err)
}

// request sends the client a client_tool request for each call s waits for.
func (c *conn) request(s *sessionhub.Session, calls []schemas.ToolCall) {
	st := c.stateOf(s)
	st.mu.Lock()
	st.calls, st.results = calls, nil
	acp := st.acp
	st.mu.Unlock()
	for _, tc := range calls {
		var b []byte
		b = append(b, `{"jsonrpc":"2.0","id":`...)
		b = jsonenc.AppendString(b, "call:"+tc.CallID)
		if acp {
			b = append(b, `,"method":"client_tool","params":{"sessionId":"`...)
			b = append(b, s.ID...)
			b = append(b, `","callId":`...)
		} else {
			b = append(b, `,"method":"client_tool","params":{"session_id":"`...)
			b = append(b, s.ID...)
			b = append(b, `","call_id":`...)
		}
		b = jsonenc.AppendString(b, tc.CallID)
		b = append(b, `,"name":`...)
		b = jsonenc.AppendString(b, tc.Name)
		b = append(b, `,"input":`...)
		in := tc.Input
		if len(in) == 0 {
			in = json.RawMessage("{}")
		}
		b = append(b, in...)
		b = append(b, "}}"...)
		if !c.write(b) {
			return
		}
	}
}

// answer takes the client's response to a client_tool request: once every call of the
// session has its answer, the turn continues.
func (c *conn) answer(id json.RawMessage, result json.RawMessage, rerr *struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}) {
	var sid string
	if json.Unmarshal(id, &sid) != nil || !strings.HasPrefix(sid, "call:") {
		c.s.log.Debug("a /ws response to no request", "id", string(id))
		return
	}
	callID := strings.TrimPrefix(sid, "call:")
	for _, s := range c.s.hub.Sessions(c) {
		st := c.stateOf(s)
		st.mu.Lock()
		var tc *schemas.ToolCall
		for i := range st.calls {
			if st.calls[i].CallID == callID {
				tc = &st.calls[i]
			}
		}
		if tc == nil {
			st.mu.Unlock()
			continue
		}
		p := schemas.Part{Type: schemas.PartToolResult, CallID: tc.CallID, Name: tc.Name}
		switch {
		case rerr != nil:
			p.Error = rerr.Message
			if p.Error == "" {
				p.Error = "error " + itoa(rerr.Code)
			}
		case isNull(result):
			p.Output = json.RawMessage("null")
		default:
			p.Output = result
		}
		if st.results == nil {
			st.results = map[string]schemas.Part{}
		}
		st.results[callID] = p
		var msg []schemas.Part
		if len(st.results) == len(st.calls) {
			for _, call := range st.calls {
				msg = append(msg, st.results[call.CallID])
			}
			st.calls, st.results = nil, nil
		}
		st.mu.Unlock()
		if msg != nil {
			c.startTurn(s, []schemas.Message{{Role: "user", Parts: msg}}, sameField)
		}
		return
	}
	c.s.log.Debug("a /ws response to a request no longer waiting", "id", sid)
}

func (c *conn) cancel(params json.RawMessage, r *reply, acp bool) {
	var p sessionParams
	id, e := decodeSession(params, &p, sessionSchema, acp)
	if e != nil {
		r.send(nil, e)
		return
	}
	s := c.s.hub.Owned(c.ctx, id, c)
	if s == nil {
		r.send(nil, notFound(id))
		return
	}
	st := c.stateOf(s)
	if stream, _ := c.s.hub.Running(s); stream != "" {
		if err := c.s.svc.Cancel(c.ctx, stream); err != nil && genui.AsError(err).Status != genui.StatusNotFound {
			r.send(nil, fromService(err, sameField))
			return
		}
	} else {
		st.mu.Lock()
		waiting := len(st.calls) > 0
		st.mu.Unlock()
		if waiting {
			st.finish([]byte(stopReason("cancelled", st.isACP())), nil)
		}
	}
	r.send([]byte(`{}`), nil)
}

func (c *conn) listSessions(r *reply, acp bool) {
	b := []byte(`{"sessions":[`)
	for i, s := range c.s.hub.Sessions(c) {
		if i > 0 {
			b = append(b, ',')
		}
		state := "idle"
		st := c.stateOf(s)
		st.mu.Lock()
		if len(st.calls) > 0 {
			state = "waiting"
		}
		st.mu.Unlock()
		if stream, _ := c.s.hub.Running(s); stream != "" {
			state = "running"
		}
		if acp {
			b = append(b, `{"sessionId":"`...)
		} else {
			b = append(b, `{"session_id":"`...)
		}
		b = append(b, s.ID...)
		b = append(b, `","state":"`...)
		b = append(b, state...)
		b = append(b, `"}`...)
	}
	r.send(append(b, "]}"...), nil)
}

// load attaches a session to this connection: a running turn is replayed and followed,
// the calls it waits for are requested again, and r is answered when the interaction
// ends; an idle session is answered at once (resume: a "not waiting" error).
func (c *conn) load(params json.RawMessage, r *reply, acp, resume bool) {
	var p sessionParams
	id, e := decodeSession(params, &p, sessionSchema, acp)
	if e != nil {
		r.send(nil, e)
		return
	}
	if p.After < 0 {
		r.send(nil, invalidParams("after", "must not be negative"))
		return
	}
	// A session another connection holds is taken over when that connection is the same
	// authenticated caller's, or does not answer a ping (a half-open connection).
	s, err := c.s.hub.Claim(c.ctx, id, c)
	if err != nil {
		r.send(nil, notFound(id))
		return
	}
	st := c.stateOf(s)
	idResult := func() []byte {
		if acp {
			return []byte(`{"sessionId":"` + id + `"}`)
		}
		return []byte(`{"session_id":"` + id + `"}`)
	}
	busy := &rpcError{Code: codeBusy, Message: "session busy: another request of this connection follows the session", Data: map[string]any{"status": "ABORTED"}}
	// follow replays the turn of stream from its durable log after the client's first
	// after items, then follows it live; the turn's end answers r.
	follow := func(stream string) (bool, error) {
		rd, err := c.s.svc.Resume(c.ctx, stream, p.After)
		if err != nil {
			return false, err
		}
		if !st.take(r, acp, id) {
			rd.Close()
			r.send(nil, busy)
			return true, nil
		}
		go func() {
			defer rd.Close()
			rd.Each(c.ctx, func(it genui.Item) error { return c.forward(s, it) })
		}()
		return true, nil
	}
	if stream, _ := c.s.hub.Running(s); stream != "" {
		if _, err := follow(stream); err != nil {
			r.send(nil, fromService(err, sameField))
		}
		return
	}
	// A turn that ended while no connection held the session: its end, and whatever of it
	// the client missed, come from the durable stream. A stream past its retention is
	// gone: the session is loaded as it is.
	if stream := c.s.hub.Missed(s); stream != "" {
		if ok, _ := follow(stream); ok {
			return
		}
	}
	calls, since, err := c.s.svc.SessionCalls(c.ctx, id)
	if err != nil {
		c.s.hub.Forget(s)
		if genui.AsError(err).Status == genui.StatusNotFound {
			r.send(nil, notFound(id))
			return
		}
		if sessionhub.Inconsistent(err) {
			c.s.hub.Drop(c.ctx, id)
		}
		r.send(nil, fromService(err, sameField))
		return
	}
	if len(calls) > 0 && c.s.hub.Expired(since) {
		c.s.hub.Forget(s)
		c.s.svc.CloseSession(context.WithoutCancel(c.ctx), id, since)
		expired := &rpcError{Code: codeExpired, Message: "session expired: it waited for its client tools longer than " + c.s.hub.Window().String(),
			Data: map[string]any{"status": "NOT_FOUND", "session_id": id}}
		st.finish(nil, expired) // the prompt that waited, if this connection still has it
		r.send(nil, expired)
		return
	}
	if len(calls) == 0 {
		if resume {
			r.send(nil, &rpcError{Code: codeState, Message: "session not waiting: nothing runs and it waits for no client tool; send a prompt",
				Data: map[string]any{"status": "FAILED_PRECONDITION", "session_id": id}})
			return
		}
		st.mu.Lock()
		st.acp = acp
		st.mu.Unlock()
		r.send(idResult(), nil)
		return
	}
	if !st.take(r, acp, id) {
		r.send(nil, busy)
		return
	}
	c.request(s, calls)
}

// take makes r the request answered when the session's interaction ends, replacing one
// of a connection that went, or of one the session was taken from (which is told so).
func (st *state) take(r *reply, acp bool, id string) bool {
	st.mu.Lock()
	old := st.end
	if old != nil && old.c != nil && old.c.ctx.Err() == nil && r != nil && old.c == r.c {
		st.mu.Unlock()
		return false
	}
	if r == nil {
		r = &reply{}
	}
	st.end, st.acp = r, acp
	st.mu.Unlock()
	if old != nil && old.c != nil && old.c != r.c && old.c.ctx.Err() == nil {
		old.send(nil, &rpcError{Code: codeNotFound, Message: "session taken over: " + strconv.Quote(id) + " was loaded by another connection",
			Data: map[string]any{"status": "NOT_FOUND", "session_id": id}})
	}
	return true
}

// sameField keeps the service's name of a field.
func sameField(f string) string { return f }

// authParams are authenticate's params (ACP's methodId).
type authParams struct {
	MethodID    string `json:"method_id,omitempty"`
	ACPMethodID string `json:"methodId,omitempty"`
}

var authSchema = jsonbody.NewSchema(authParams{})

// authenticate answers {}: a connection is authenticated by the credentials of its
// upgrade request (an API key or a JWT, when the server requires them), so nothing is
// left to do once it is open; initialize lists no authentication methods.
func (c *conn) authenticate(params json.RawMessage, r *reply) {
	var p authParams
	if e := decodeParams(params, &p, authSchema); e != nil {
		r.send(nil, e)
		return
	}
	r.send([]byte(`{}`), nil)
}

// modeParams are set_session_mode's params.
type modeParams struct {
	sessionParams
	ModeID    *string `json:"mode_id,omitempty"`
	ACPModeID *string `json:"modeId,omitempty"`
}

// modelParams are set_session_model's params.
type modelParams struct {
	sessionParams
	ModelID    *string `json:"model_id,omitempty"`
	ACPModelID *string `json:"modelId,omitempty"`
}

var (
	modeSchema  = jsonbody.NewSchema(modeParams{})
	modelSchema = jsonbody.NewSchema(modelParams{})
)

// choice returns the value of a field given in either spelling, and the name to report
// it by: the one the client used, else the method's spelling.
func choice(snake, camel *string, snakeName, camelName string, acp bool) (*string, string) {
	switch {
	case snake != nil:
		return snake, snakeName
	case camel != nil:
		return camel, camelName
	case acp:
		return nil, camelName
	}
	return nil, snakeName
}

// choiceParams are params naming a session and a choice for it (a mode, a model).
type choiceParams interface {
	namesSession
	choice(acp bool) (*string, string)
}

func (p *modeParams) choice(acp bool) (*string, string) {
	return choice(p.ModeID, p.ACPModeID, "mode_id", "modeId", acp)
}

func (p *modelParams) choice(acp bool) (*string, string) {
	return choice(p.ModelID, p.ACPModelID, "model_id", "modelId", acp)
}

// decodeChoice decodes params naming one of this connection's sessions and a choice
// (what: "mode", "model") for it; it returns the choice and its field, or answers r
// with the error (ok false).
func (c *conn) decodeChoice(params json.RawMessage, r *reply, acp bool, p choiceParams, schema *jsonbody.Schema, what string) (value, field string, ok bool) {
	id, e := decodeSession(params, p, schema, acp)
	if e != nil {
		r.send(nil, e)
		return "", "", false
	}
	v, field := p.choice(acp)
	if v == nil || *v == "" {
		r.send(nil, invalidParams(field, "required: the "+what+"'s id"))
		return "", "", false
	}
	if c.s.hub.Owned(c.ctx, id, c) == nil {
		r.send(nil, notFound(id))
		return "", "", false
	}
	return *v, field, true
}

// setMode answers set_session_mode: this agent has no session modes (new_session lists
// none), so every mode is unknown.
func (c *conn) setMode(params json.RawMessage, r *reply, acp bool) {
	if mode, field, ok := c.decodeChoice(params, r, acp, &modeParams{}, modeSchema, "mode"); ok {
		r.send(nil, invalidParams(field, "unknown mode "+strconv.Quote(mode)+": this agent has no session modes"))
	}
}

// setModel answers set_session_model: the server's one model is the only one a session
// may use; setting it is a no-op.
func (c *conn) setModel(params json.RawMessage, r *reply, acp bool) {
	model, field, ok := c.decodeChoice(params, r, acp, &modelParams{}, modelSchema, "model")
	switch {
	case !ok:
	case model != c.s.svc.Model():
		r.send(nil, invalidParams(field, "unknown model "+strconv.Quote(model)+": this server runs "+strconv.Quote(c.s.svc.Model())))
	default:
		r.send([]byte(`{}`), nil)
	}
}

// fork answers fork_session: the service cannot copy a session's conversation, so the
// method is not available (-32601, status UNIMPLEMENTED) once its params are valid.
func (c *conn) fork(params json.RawMessage, r *reply, acp bool) {
	var p sessionParams
	id, e := decodeSession(params, &p, sessionSchema, acp)
	if e != nil {
		r.send(nil, e)
		return
	}
	if c.s.hub.Owned(c.ctx, id, c) == nil {
		r.send(nil, notFound(id))
		return
	}
	r.send(nil, &rpcError{Code: codeNoMethod, Message: "fork_session is not available: this server cannot copy a session's conversation; start a new_session",
		Data: map[string]any{"status": string(genui.StatusUnimplemented), "session_id": id}})
}
