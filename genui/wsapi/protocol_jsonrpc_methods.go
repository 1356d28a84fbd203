package wsapi

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/ids"
	"github.com/genuiserver/genui/internal/jsonbody"
	"github.com/genuiserver/genui/internal/jsonenc"
	"github.com/genuiserver/genui/internal/sessionhub"
	"github.com/genuiserver/genui/schemas"
)

func itoa(n int) string { return strconv.Itoa(n) }

// A method runs one JSON-RPC method of a connection; r is nil for a notification, f the
// flavour the method's name chose.
type method func(c *rpcConn, params json.RawMessage, r *reply, f *flavour)

// methods are the methods, under the service's names and ACP's.
var methods map[string]method

func init() {
	methods = map[string]method{}
	for _, m := range []struct {
		genui, acp string
		run        method
	}{
		{"initialize", "", (*rpcConn).initialize},
		{"authenticate", "", (*rpcConn).authenticate},
		{"new_session", "session/new", (*rpcConn).newSession},
		{"prompt", "session/prompt", (*rpcConn).prompt},
		{"cancel", "session/cancel", (*rpcConn).cancel},
		{"list_sessions", "session/list", (*rpcConn).listSessions},
		{"load_session", "session/load", (*rpcConn).loadSession},
		{"resume_session", "session/resume", (*rpcConn).resumeSession},
		{"set_session_mode", "session/set_mode", (*rpcConn).setMode},
		{"set_session_model", "session/set_model", (*rpcConn).setModel},
		{"fork_session", "session/fork", (*rpcConn).fork},
	} {
		methods[m.genui] = m.run
		if m.acp != "" {
			methods[m.acp] = m.run
		}
	}
}

// call runs one method; r is nil for a notification.
func (c *rpcConn) call(name string, params json.RawMessage, r *reply) {
	m := methods[name]
	if m == nil {
		r.send(nil, errorf(codeNoMethod, "method not found: "+strconv.Quote(name)))
		return
	}
	f := genuiFlavour
	if strings.HasPrefix(name, "session/") {
		f = acpFlavour
	}
	m(c, params, r, f)
}

// state is a session's state on this server, kept across its connections.
type state struct {
	mu sync.Mutex
	// flavour is the spelling of the session's updates and requests: that of its last
	// prompt or load.
	flavour *flavour
	// end is the request answered when the interaction ends (a prompt, or the load that
	// took it over), nil when none waits.
	end *reply
	// calls are the client tool requests sent and not yet answered; results the answers
	// gathered until each call has one.
	calls   []schemas.ToolCall
	results map[string]schemas.Part
}

// rpcKey is the key of the JSON-RPC dialect's state of a session in the hub.
type rpcKey struct{}

func newState() any { return &state{flavour: genuiFlavour} }

func (c *rpcConn) stateOf(s *sessionhub.Session) *state {
	return c.s.hub.Data(s, rpcKey{}, newState).(*state)
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

// initialize answers in the spelling of its params: ACP's camelCase protocolVersion gets
// a camelCase result.
func (c *rpcConn) initialize(params json.RawMessage, r *reply, _ *flavour) {
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
	Model                  string               `json:"model,omitempty"`
}

func (c *rpcConn) newSession(params json.RawMessage, r *reply, f *flavour) {
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
		spec.Generate = &schemas.GenerateRequest{SessionID: p.SessionID, Catalog: p.Catalog, ClientTools: p.ClientTools, Model: p.Model}
	} else {
		spec.A2UI = &schemas.GenerateA2UIRequest{Version: p.A2UIVersion, SessionID: p.SessionID,
			A2UIClientCapabilities: p.A2UIClientCapabilities, A2UIClientDataModel: p.A2UIClientDataModel, ClientTools: p.ClientTools, Model: p.Model}
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
	st := c.stateOf(s)
	st.mu.Lock()
	st.flavour = f
	st.mu.Unlock()
	r.send(f.sessionResult(id), nil)
}

// sessionParams names a session, in either spelling.
type sessionParams struct {
	SessionID string `json:"session_id,omitempty"`
	ACPID     string `json:"sessionId,omitempty"`
	After     int    `json:"after,omitempty"`
}

func (p *sessionParams) id(f *flavour) (string, *rpcError) {
	id := p.SessionID
	if id == "" {
		id = p.ACPID
	}
	if id == "" {
		return "", f.noSession()
	}
	return id, nil
}

// namesSession is params naming a session (in either spelling).
type namesSession interface {
	id(f *flavour) (string, *rpcError)
}

// decodeSession decodes params into p and returns the session they name.
func decodeSession[P namesSession](params json.RawMessage, p P, schema *jsonbody.Schema, f *flavour) (string, *rpcError) {
	if e := decodeParams(params, p, schema); e != nil {
		return "", e
	}
	return p.id(f)
}

func notFound(id string) *rpcError {
	return &rpcError{Code: codeNotFound, Message: "session not found: " + strconv.Quote(id) + " is unknown, expired, closed or another connection's",
		Data: map[string]any{"status": "NOT_FOUND", "session_id": id}}
}

func (c *rpcConn) cancel(params json.RawMessage, r *reply, f *flavour) {
	var p sessionParams
	id, e := decodeSession(params, &p, sessionSchema, f)
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
			st.finish(st.flavourOf().stopReason("cancelled"), nil)
		}
	}
	r.send([]byte(`{}`), nil)
}

func (c *rpcConn) listSessions(_ json.RawMessage, r *reply, f *flavour) {
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
		b = append(b, f.idHead...)
		b = append(b, s.ID...)
		b = append(b, `","state":"`...)
		b = append(b, state...)
		b = append(b, `"}`...)
	}
	r.send(append(b, "]}"...), nil)
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
func (c *rpcConn) authenticate(params json.RawMessage, r *reply, _ *flavour) {
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
// it by: the one the client used, else the flavour's.
func choice(snake, camel *string, snakeName, camelName string, f *flavour) (*string, string) {
	switch {
	case snake != nil:
		return snake, snakeName
	case camel != nil:
		return camel, camelName
	}
	return nil, f.name(snakeName, camelName)
}

// choiceParams are params naming a session and a choice for it (a mode, a model).
type choiceParams interface {
	namesSession
	choice(f *flavour) (*string, string)
}

func (p *modeParams) choice(f *flavour) (*string, string) {
	return choice(p.ModeID, p.ACPModeID, "mode_id", "modeId", f)
}

func (p *modelParams) choice(f *flavour) (*string, string) {
	return choice(p.ModelID, p.ACPModelID, "model_id", "modelId", f)
}

// decodeChoice decodes params naming one of this connection's sessions and a choice
// (what: "mode", "model") for it; it returns the choice and its field, or answers r
// with the error (ok false).
func (c *rpcConn) decodeChoice(params json.RawMessage, r *reply, f *flavour, p choiceParams, schema *jsonbody.Schema, what string) (value, field string, ok bool) {
	id, e := decodeSession(params, p, schema, f)
	if e != nil {
		r.send(nil, e)
		return "", "", false
	}
	v, field := p.choice(f)
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
func (c *rpcConn) setMode(params json.RawMessage, r *reply, f *flavour) {
	if mode, field, ok := c.decodeChoice(params, r, f, &modeParams{}, modeSchema, "mode"); ok {
		r.send(nil, invalidParams(field, "unknown mode "+strconv.Quote(mode)+": this agent has no session modes"))
	}
}

// setModel answers set_session_model: the session's next turns use the model, one the
// server lets the caller choose.
func (c *rpcConn) setModel(params json.RawMessage, r *reply, f *flavour) {
	p := &modelParams{}
	model, field, ok := c.decodeChoice(params, r, f, p, modelSchema, "model")
	if !ok {
		return
	}
	id, _ := p.id(f)
	if err := c.s.svc.SetSessionModel(c.ctx, id, model); err != nil {
		r.send(nil, fromService(err, func(string) string { return field }))
		return
	}
	r.send([]byte(`{}`), nil)
}

// fork answers fork_session: the service cannot copy a session's conversation, so the
// method is not available (-32601, status UNIMPLEMENTED) once its params are valid.
func (c *rpcConn) fork(params json.RawMessage, r *reply, f *flavour) {
	var p sessionParams
	id, e := decodeSession(params, &p, sessionSchema, f)
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
