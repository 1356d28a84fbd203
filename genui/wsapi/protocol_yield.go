package wsapi

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/jsonbody"
	"github.com/genuiserver/genui/internal/jsonenc"
	"github.com/genuiserver/genui/internal/sessionhub"
	"github.com/genuiserver/genui/schemas"
)

// The yield and resume dialect (seed 004's graph execution protocol), on
// /session/{id}: JSON text frames, each a message. Its turns are in
// protocol_yield_turns.go.

// yieldPrefix is the path of the endpoint, before the session's id.
const yieldPrefix = "/session/"

// yieldDialect is the dialect of /session/{id}.
func yieldDialect() *dialect {
	return &dialect{
		id:         yieldEndpoint,
		pattern:    yieldPrefix + "{id}",
		notUpgrade: "/session/{id} is a WebSocket endpoint: connect with a WebSocket client and send {\"type\":\"init\",…}",
		admit: func(w http.ResponseWriter, r *http.Request) bool {
			if !conversation.ValidID(yieldID(r)) {
				writeError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "id: the session id in /session/{id} must be 8 to 128 characters of A-Z a-z 0-9 . _ -")
				return false
			}
			return true
		},
		open: func(c conn, r *http.Request) handler { return &yieldConn{conn: c, id: yieldID(r)} },
	}
}

// yieldID is the session id in the path of r.
func yieldID(r *http.Request) string {
	if id := r.PathValue("id"); id != "" {
		return id
	}
	return strings.TrimPrefix(r.URL.Path, yieldPrefix)
}

// yieldKey is the key of the yield dialect's state of a session in the hub.
type yieldKey struct{}

// yieldState is the yield dialect's state of a session, kept across its connections on
// this server.
type yieldState struct {
	mu sync.Mutex
	// turn is the last turn started: its messages, whether it calls the model, and how
	// its fields are named; a failed turn is run again with them.
	turn turnInput
	// failed is the error of the last turn, when it failed: the effect the session
	// yielded, which a resume retries (success) or gives up (error).
	failed *genui.Error
	// yieldActions is the session's, as its last init said.
	yieldActions, known bool
}

type turnInput struct {
	msgs   []schemas.Message
	model  bool
	rename func(string) string
}

func newYieldState() any { return &yieldState{} }

func (c *yieldConn) stateOf(s *sessionhub.Session) *yieldState {
	return c.s.hub.Data(s, yieldKey{}, newYieldState).(*yieldState)
}

// yieldConn is one connection to /session/{id}.
type yieldConn struct {
	conn
	id string

	mu   sync.Mutex
	busy bool // a turn runs, or its end is being handled
	// surfaces are the surfaces the running turn showed, in order (for a UserAction yield).
	surfaces []string
	// yieldActions is the session's, as init or the stored session said.
	yieldActions bool
	// model is the model of the running turn ("" when a turn is followed again).
	model string
}

// inMessage is any message of the client.
type inMessage struct {
	Type      string          `json:"type"`
	GraphID   *string         `json:"graphId"`
	Input     json.RawMessage `json:"input"`
	Result    *effectResult   `json:"result"`
	SessionID *string         `json:"sessionId"`
	// YieldActions (init): a turn that shows surfaces yields a UserAction effect.
	YieldActions bool `json:"yieldActions"`
}

type effectResult struct {
	Type    string          `json:"type"`
	Value   json.RawMessage `json:"value"`
	Message string          `json:"message"`
}

// handle handles one message the client sent.
func (c *yieldConn) handle(typ websocket.MessageType, data []byte) {
	if typ != websocket.MessageText {
		c.fail("messages are JSON text frames, not binary", false)
		return
	}
	var m inMessage
	if err := json.Unmarshal(data, &m); err != nil {
		c.fail("invalid JSON: "+jsonbody.NotObject(data).Message, false)
		return
	}
	switch m.Type {
	case "ping":
		c.write([]byte(`{"type":"pong"}`))
	case "init":
		c.init(&m)
	case "resume":
		c.resume(&m)
	case "reconnect":
		c.reconnect(&m)
	case "":
		c.fail(`type: required: "init", "resume", "reconnect" or "ping"`, false)
	default:
		c.fail("type: unknown message type "+string(jsonenc.AppendString(nil, m.Type))+`: send "init", "resume", "reconnect" or "ping"`, false)
	}
}

// fail sends an error frame; a recoverable one names the session.
func (c *yieldConn) fail(msg string, recoverable bool) bool {
	kind := frameFatal
	if recoverable {
		kind = frameRetry
	}
	return c.write(appendFrame(nil, kind, msg, c.id, 0))
}

// failService sends the error frame of an error of the service (see yieldFrames): a
// stored session that cannot be read is not recoverable, and is cleaned up.
func (c *yieldConn) failService(err error, rename func(string) string) {
	e := genui.AsError(err)
	msg := e.Message
	if d, ok := e.Details.(map[string]any); ok {
		if f, _ := d["field"].(string); f != "" && f != "session" {
			msg = strings.Replace(msg, f, rename(f), 1)
		}
	}
	if sessionhub.Inconsistent(err) {
		// Seed 004: session state inconsistent → not recoverable, the session cleaned up.
		c.s.hub.Drop(c.ctx, c.id)
		c.fail(msg, false)
		return
	}
	c.write(appendServiceFrame(nil, e, msg, c.id))
}

// begin claims the connection for one turn; false (and an error sent) when one runs.
func (c *yieldConn) begin() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy {
		c.fail("a turn of the session is running: wait for its yield, done or error", true)
		return false
	}
	c.busy = true
	return true
}

func (c *yieldConn) idle() {
	c.mu.Lock()
	c.busy = false
	c.mu.Unlock()
}

func inputField(f string) string { return "input." + f }

func (c *yieldConn) init(m *inMessage) {
	graph := ""
	if m.GraphID != nil {
		graph = *m.GraphID
	}
	if graph != "generateUi" && graph != "generateA2ui" {
		if graph == "" {
			c.fail(`graphId: required: "generateUi" or "generateA2ui"`, false)
		} else {
			c.fail("graphId: unknown graph "+string(jsonenc.AppendString(nil, graph))+`: "generateUi" or "generateA2ui"`, false)
		}
		return
	}
	if len(m.Input) == 0 || m.Input[0] != '{' {
		c.fail("input: required: the "+graph+" request, a JSON object", false)
		return
	}
	spec := &genui.SessionSpec{}
	var msgs []schemas.Message
	if graph == "generateUi" {
		var req schemas.GenerateRequest
		if e := jsonbody.Decode(m.Input, &req, generateSchema); e != nil {
			c.failService(e, inputField)
			return
		}
		msgs = req.Conversation
		req.Conversation, req.ConversationID = nil, ""
		spec.Generate = &req
	} else {
		var req schemas.GenerateA2UIRequest
		if e := jsonbody.Decode(m.Input, &req, a2uiSchema); e != nil {
			c.failService(e, inputField)
			return
		}
		msgs = req.Conversation
		req.Conversation, req.ConversationID = nil, ""
		spec.A2UI = &req
	}
	spec.YieldActions = m.YieldActions
	c.mu.Lock()
	c.yieldActions = m.YieldActions
	c.mu.Unlock()
	s, err := c.s.hub.Attach(c.ctx, c.id, c)
	if err != nil {
		c.fail("the session is attached to another connection; reconnect to take it over", false)
		return
	}
	if !c.begin() {
		return
	}
	st := c.stateOf(s)
	st.mu.Lock()
	st.yieldActions, st.known = m.YieldActions, true
	st.failed = nil // a new init gives up a failed effect
	st.mu.Unlock()
	c.s.hub.Keep(s, time.Time{})
	if err := c.open(spec); err != nil {
		c.idle()
		c.failService(err, inputField)
		return
	}
	c.turn(msgs, true, func(f string) string { return "input." + f })
}

// open opens the session with spec; a genui spec without a catalog or session uses the
// path's session: its startSession session, or the spec it already has.
func (c *yieldConn) open(spec *genui.SessionSpec) error {
	g := spec.Generate
	implicit := g != nil && g.Catalog == nil && g.SessionID == ""
	if !implicit {
		return c.s.svc.OpenSession(c.ctx, c.id, spec)
	}
	withPath := *g
	withPath.SessionID = c.id
	sp := *spec
	sp.Generate = &withPath
	err := c.s.svc.OpenSession(c.ctx, c.id, &sp)
	if err == nil || genui.AsError(err).Status != genui.StatusNotFound {
		return err
	}
	if _, _, err := c.s.svc.SessionCalls(c.ctx, c.id); err == nil {
		return nil // a session of /ws, with its own spec
	}
	return &genui.Error{Status: genui.StatusInvalidArgument, Message: "catalog: give a catalog or a sessionId (the path's id is no session of startSession)",
		Details: map[string]any{"field": "catalog"}}
}

// waiting reads what the session waits for: calls, or the user's action; an unknown,
// idle or expired session is an error sent (nil).
func (c *yieldConn) waiting(what string) *genui.SessionWait {
	w, err := c.s.svc.SessionWaits(c.ctx, c.id)
	if err != nil {
		if genui.AsError(err).Status == genui.StatusNotFound {
			// Nothing to keep of it for this connection.
			if s := c.s.hub.Owned(c.ctx, c.id, c); s != nil {
				c.s.hub.Forget(s)
			}
			c.fail(what+": the session is unknown or expired", false)
			return nil
		}
		c.failService(err, sameField)
		return nil
	}
	c.mu.Lock()
	c.yieldActions = w.YieldActions
	c.mu.Unlock()
	if len(w.Calls) == 0 && len(w.Awaiting) == 0 {
		c.fail(what+": the session waits for no effect (not suspended): send init", false)
		return nil
	}
	if c.s.hub.Expired(w.Since) {
		if s := c.s.hub.Owned(c.ctx, c.id, c); s != nil {
			c.s.hub.Forget(s)
		}
		c.s.svc.CloseSession(context.WithoutCancel(c.ctx), c.id, w.Since)
		c.fail(what+": the session expired: it waited longer than "+c.s.hub.Window().String(), false)
		return nil
	}
	return w
}

func (c *yieldConn) resume(m *inMessage) {
	if m.Result == nil {
		c.fail(`result: required: {"type":"success","value":…} or {"type":"error","message":"…"}`, false)
		return
	}
	part := schemas.Part{Type: schemas.PartToolResult}
	switch m.Result.Type {
	case "success":
		part.Output = m.Result.Value
		if len(part.Output) == 0 {
			part.Output = json.RawMessage("null")
		}
	case "error":
		part.Error = m.Result.Message
		if part.Error == "" {
			part.Error = "the client reported an error"
		}
	default:
		c.fail(`result.type: must be "success" or "error"`, false)
		return
	}
	s, err := c.s.hub.Attach(c.ctx, c.id, c)
	if err != nil {
		c.fail("the session is attached to another connection; reconnect to take it over", false)
		return
	}
	if !c.begin() {
		return
	}
	if c.failedEffect(s) != nil {
		c.retry(s, m.Result)
		return
	}
	w := c.waiting("resume")
	if w == nil {
		c.idle()
		return
	}
	if len(w.Calls) == 0 {
		c.act(m.Result)
		return
	}
	part.CallID, part.Name = w.Calls[0].CallID, w.Calls[0].Name
	c.turn([]schemas.Message{{Role: "user", Parts: []schemas.Part{part}}}, len(w.Calls) == 1, func(f string) string { return "result" })
}

func (c *yieldConn) reconnect(m *inMessage) {
	if m.SessionID == nil || *m.SessionID == "" {
		c.fail("sessionId: required: the sessionId of the last yield or error", false)
		return
	}
	if *m.SessionID != c.id {
		c.fail("sessionId: not the session of this path (/session/"+c.id+")", false)
		return
	}
	s := c.s.hub.Take(c.ctx, c.id, c)
	if !c.begin() {
		return
	}
	st := c.stateOf(s)
	st.mu.Lock()
	if st.known {
		c.mu.Lock()
		c.yieldActions = st.yieldActions
		c.mu.Unlock()
	}
	st.mu.Unlock()
	// follow replays the turn of stream from its start, then follows it live.
	follow := func(stream string) error {
		rd, err := c.s.svc.Resume(c.ctx, stream, 0)
		if err != nil {
			return err
		}
		c.mu.Lock()
		c.surfaces, c.model = nil, ""
		c.mu.Unlock()
		c.write(append(append([]byte(`{"type":"progress","effect":{"type":"LlmComplete","model":`), jsonenc.AppendString(nil, c.s.svc.Model())...), `},"status":"executing"}`...))
		go func() {
			defer rd.Close()
			rd.Each(c.ctx, func(it genui.Item) error { return c.forward(s, it) })
		}()
		return nil
	}
	if stream, _ := c.s.hub.Running(s); stream != "" {
		if err := follow(stream); err != nil {
			c.idle()
			c.failService(err, sameField)
		}
		return
	}
	// A turn that ended while no connection held the session: it is replayed from its
	// durable stream, and its end handled now (a stream past its retention is gone: the
	// session is taken as it is).
	if stream := c.s.hub.Missed(s); stream != "" && follow(stream) == nil {
		return
	}
	if e := c.failedEffect(s); e != nil {
		c.idle()
		c.yieldFailed(e)
		return
	}
	w := c.waiting("reconnect")
	if w == nil {
		c.idle()
		return
	}
	c.idle()
	if len(w.Calls) > 0 {
		c.yield(w.Calls[0])
	} else {
		c.yieldAction(w.Awaiting)
	}
}

var (
	generateSchema = jsonbody.NewSchema(schemas.GenerateRequest{})
	a2uiSchema     = jsonbody.NewSchema(schemas.GenerateA2UIRequest{})
)
