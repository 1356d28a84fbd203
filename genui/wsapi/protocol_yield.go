package yieldapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/transport"
	"github.com/genuiserver/genui/internal/jsonbody"
	"github.com/genuiserver/genui/internal/jsonenc"
	"github.com/genuiserver/genui/internal/ndjson"
	"github.com/genuiserver/genui/internal/sessionhub"
	"github.com/genuiserver/genui/internal/wsutil"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/tools"
)

// Server is the /session/{id} endpoint of a service.
type Server struct {
	svc          *genui.Service
	hub          *sessionhub.Hub
	prefix       string
	readLimit    int64
	writeTimeout time.Duration
	origins      []string
	log          *slog.Logger

	conns wsutil.Conns
}

// Option configures a Server.
type Option func(*Server)

// WithHub sets the hub of sessions, shared with the server's other WebSocket transports
// (default: a hub of its own, with a 5-minute reconnect window).
func WithHub(h *sessionhub.Hub) Option { return func(s *Server) { s.hub = h } }

// WithReadLimit sets the largest message a client may send (default 4 MiB); a larger one
// closes the connection with status 1009.
func WithReadLimit(n int64) Option { return func(s *Server) { s.readLimit = n } }

// WithOrigins sets the origins (host patterns; "*": any) allowed besides the server's own
// host.
func WithOrigins(patterns ...string) Option { return func(s *Server) { s.origins = patterns } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(s *Server) { s.log = l } }

// WithKeepalive sets how long a connection may be idle before the server pings it
// (default 30 s; negative: never) and how long the pong may take (default 10 s): a
// connection that does not answer is closed, and its session is let go as when it
// closes (a waiting one is kept for the reconnect window).
func WithKeepalive(interval, timeout time.Duration) Option {
	return func(s *Server) { s.conns.PingInterval, s.conns.PingTimeout = interval, timeout }
}

// New returns the /session/{id} endpoint of svc.
func New(svc *genui.Service, opts ...Option) *Server {
	s := &Server{svc: svc, prefix: "/session/", readLimit: 4 << 20, writeTimeout: 10 * time.Second, log: slog.Default()}
	for _, o := range opts {
		o(s)
	}
	if s.hub == nil {
		s.hub = sessionhub.New(svc, 5*time.Minute, s.log)
	}
	return s
}

// Routes is the endpoint's route, /session/{id}, for the server to mount behind its
// middleware stack (httpapi.WithRoutes).
func (s *Server) Routes() []transport.Route {
	return []transport.Route{{Method: http.MethodGet, Pattern: s.prefix + "{id}", Handler: s, Name: "websocket", Errors: transport.JSON}}
}

// ServeHTTP serves requests whose path is /session/{id}. It authenticates no one: serve
// it through Routes, behind the server's middleware stack.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if id == "" {
		id = strings.TrimPrefix(r.URL.Path, s.prefix)
	}
	s.serve(w, r, id)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request, id string) {
	if !conversation.ValidID(id) {
		wsutil.WriteError(w, http.StatusBadRequest, "INVALID_ARGUMENT", "id: the session id in /session/{id} must be 8 to 128 characters of A-Z a-z 0-9 . _ -")
		return
	}
	ws, ok := wsutil.Accept(w, r, s.origins, "/session/{id} is a WebSocket endpoint: connect with a WebSocket client and send {\"type\":\"init\",…}")
	if !ok {
		return
	}
	ws.SetReadLimit(s.readLimit)
	s.conns.Serve(r, ws, s.log, func(ctx context.Context) (func(websocket.MessageType, []byte), func(context.Context)) {
		c := &conn{s: s, ws: ws, ctx: ctx, id: id}
		return c.handle, func(ctx context.Context) { s.hub.Detach(ctx, c) }
	})
}

// Alive reports whether the connection answers a ping in time (sessionhub.Prober).
func (c *conn) Alive(ctx context.Context) bool { return wsutil.Alive(ctx, c.ws, c.s.conns.Timeout()) }

// Drop closes the connection (sessionhub.Prober).
func (c *conn) Drop() { c.ws.CloseNow() }

// dataKey is the key of this transport's state of a session in the hub.
type dataKey struct{}

// state is this transport's state of a session, kept across its connections on this
// server.
type state struct {
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

func (c *conn) stateOf(s *sessionhub.Session) *state {
	return c.s.hub.Data(s, dataKey{}, func() any { return &state{} }).(*state)
}

// conn is one connection to /session/{id}.
type conn struct {
	s   *Server
	ws  *websocket.Conn
	ctx context.Context
	id  string

	mu   sync.Mutex
	busy bool // a turn runs, or its end is being handled
	// surfaces are the surfaces the running turn showed, in order (for a UserAction yield).
	surfaces []string
	// yieldActions is the session's, as init or the stored session said.
	yieldActions bool
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
func (c *conn) handle(typ websocket.MessageType, data []byte) {
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

func (c *conn) write(b []byte) bool {
	ctx, cancel := context.WithTimeout(c.ctx, c.s.writeTimeout)
	defer cancel()
	if err := c.ws.Write(ctx, websocket.MessageText, b); err != nil {
		c.ws.CloseNow()
		return false
	}
	return true
}

// fail sends an error message; a recoverable one names the session.
func (c *conn) fail(msg string, recoverable bool) bool {
	b := append([]byte(`{"type":"error","message":`), jsonenc.AppendString(nil, msg)...)
	if recoverable {
		b = append(b, `,"recoverable":true,"sessionId":"`...)
		b = append(b, c.id...)
		b = append(b, `"}`...)
	} else {
		b = append(b, `,"recoverable":false}`...)
	}
	return c.write(b)
}

// failService sends the error of the service: recoverable when the session is intact
// and the same message may succeed later.
func (c *conn) failService(err error, rename func(string) string) {
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
	switch e.Status {
	case genui.StatusInvalidArgument, genui.StatusNotFound, genui.StatusPermissionDenied, genui.StatusUnauthenticated, genui.StatusUnimplemented:
		c.fail(msg, false)
	case genui.StatusResourceExhausted:
		// A limit: recoverable, after retryAfter seconds.
		b := append([]byte(`{"type":"error","message":`), jsonenc.AppendString(nil, msg)...)
		b = append(b, `,"recoverable":true,"sessionId":"`...)
		b = append(b, c.id...)
		b = append(b, `","retryAfter":`...)
		b = strconv.AppendInt(b, int64(e.RetryAfterSeconds()), 10)
		c.write(append(b, '}'))
	default:
		c.fail(msg, true)
	}
}

// begin claims the connection for one turn; false (and an error sent) when one runs.
func (c *conn) begin() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.busy {
		c.fail("a turn of the session is running: wait for its yield, done or error", true)
		return false
	}
	c.busy = true
	return true
}

func (c *conn) idle() {
	c.mu.Lock()
	c.busy = false
	c.mu.Unlock()
}

func inputField(f string) string { return "input." + f }

func (c *conn) init(m *inMessage) {
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
func (c *conn) open(spec *genui.SessionSpec) error {
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

// turn runs a turn of the session with msgs; model says whether it calls the model.
func (c *conn) turn(msgs []schemas.Message, model bool, rename func(string) string) {
	stream, err := c.s.svc.SessionTurn(c.ctx, c.id, msgs)
	if err != nil {
		c.idle()
		c.failService(err, rename)
		return
	}
	s := c.s.hub.Owned(c.ctx, c.id, c)
	if s == nil {
		s = c.s.hub.Take(c.ctx, c.id, c)
	}
	c.s.hub.Started(s, stream.ID())
	st := c.stateOf(s)
	st.mu.Lock()
	st.turn, st.failed = turnInput{msgs: msgs, model: model, rename: rename}, nil
	st.mu.Unlock()
	c.mu.Lock()
	c.surfaces = nil
	c.mu.Unlock()
	if model {
		c.write(append(append([]byte(`{"type":"progress","effect":{"type":"LlmComplete","model":`), jsonenc.AppendString(nil, c.s.svc.Model())...), `},"status":"executing"}`...))
	}
	go func() {
		defer c.s.hub.Ended(c.ctx, s, stream.ID())
		stream.Each(c.ctx, func(it genui.Item) error { return c.forward(s, it) })
	}()
}

var errDetached = errors.New("the session's connection changed")

// forward passes an item of the session's turn on while the session is this
// connection's; the final item ends the turn.
func (c *conn) forward(s *sessionhub.Session, it genui.Item) error {
	if !c.s.hub.Owner(s, c) {
		return errDetached
	}
	if it.Event != nil {
		if it.Event.Type == schemas.EventToolCall {
			return nil // yielded when the turn ends
		}
		c.shown(it.Event)
		b := append([]byte(`{"type":"progress","effect":{"type":"LlmComplete","event":`), ndjson.AppendEvent(nil, it.Event)...)
		if !c.write(append(b, `},"status":"executing"}`...)) {
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

// ended handles the end of a turn: a yield of the first call the session waits for, or
// done, or, when the turn failed, a yield of the failed effect.
func (c *conn) ended(s *sessionhub.Session, it genui.Item) {
	// The connection is free before the client reads the end: its next message may follow
	// at once.
	if it.Err != nil && it.Err.Status == genui.StatusCancelled {
		c.idle()
		c.failService(it.Err, sameField)
		return
	}
	if it.Err != nil {
		// Seed 004: effect execution failed → a yield of the failed effect; the client
		// retries it with resume (or gives it up with an error result), here or after a
		// reconnect within the window. The session is as it was before the turn.
		st := c.stateOf(s)
		st.mu.Lock()
		st.failed = it.Err
		st.mu.Unlock()
		c.s.hub.Keep(s, time.Now().Add(c.s.hub.Window()))
		c.idle()
		c.yieldFailed(it.Err)
		return
	}
	ctx := context.WithoutCancel(c.ctx)
	var res struct {
		FinishReason string `json:"finishReason"`
	}
	json.Unmarshal(it.Result, &res)
	if res.FinishReason == schemas.FinishInterrupted {
		w, err := c.s.svc.SessionWaits(ctx, c.id)
		if err != nil {
			c.idle()
			c.failService(err, sameField)
			return
		}
		if len(w.Calls) > 0 {
			c.idle()
			c.yield(w.Calls[0])
			return
		}
	}
	c.mu.Lock()
	surfaces, yieldActions := c.surfaces, c.yieldActions
	c.mu.Unlock()
	if yieldActions && len(surfaces) > 0 {
		_, err := c.s.svc.AwaitAction(ctx, c.id, surfaces)
		c.idle()
		if err != nil {
			c.failService(err, sameField)
			return
		}
		c.yieldAction(surfaces)
		return
	}
	c.idle()
	b := append([]byte(`{"type":"done","result":`), it.Result...)
	c.write(append(b, '}'))
}

// yieldFailed yields the model call that failed with e.
func (c *conn) yieldFailed(e *genui.Error) {
	b := append([]byte(`{"type":"yield","effect":{"type":"LlmComplete","model":`), jsonenc.AppendString(nil, c.s.svc.Model())...)
	b = append(b, `,"error":{"status":`...)
	b = jsonenc.AppendString(b, string(e.Status))
	b = append(b, `,"message":`...)
	b = jsonenc.AppendString(b, e.Message)
	if e.RetryAfter > 0 {
		b = append(b, `,"retryAfter":`...)
		b = strconv.AppendInt(b, int64(e.RetryAfterSeconds()), 10)
	}
	if d, _ := e.Details.(map[string]any); d != nil {
		// A turn limit the model reached: its name.
		if limit, ok := d["limit"].(string); ok {
			b = append(b, `,"limit":`...)
			b = jsonenc.AppendString(b, limit)
		}
	}
	b = append(b, `}},"sessionId":"`...)
	b = append(b, c.id...)
	c.write(append(b, `"}`...))
}

// failedEffect returns the error of the failed effect s yielded, nil when none.
func (c *conn) failedEffect(s *sessionhub.Session) *genui.Error {
	st := c.stateOf(s)
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.failed
}

// retry answers the yield of a failed effect: a success runs the failed turn again; an
// error gives it up, and the session yields what it waits for, or ends with done, null.
func (c *conn) retry(s *sessionhub.Session, r *effectResult) {
	st := c.stateOf(s)
	st.mu.Lock()
	t := st.turn
	if r.Type == "success" {
		// The failed effect stays until the turn starts again (turn): a retry refused
		// before it starts (a limit) leaves it to retry later.
		st.mu.Unlock()
		c.turn(t.msgs, t.model, t.rename)
		return
	}
	st.failed = nil
	st.mu.Unlock()
	c.s.hub.Keep(s, time.Time{})
	w, err := c.s.svc.SessionWaits(c.ctx, c.id)
	c.idle()
	switch {
	case err != nil && genui.AsError(err).Status != genui.StatusNotFound:
		c.failService(err, sameField)
	case err == nil && len(w.Calls) > 0:
		c.yield(w.Calls[0])
	case err == nil && len(w.Awaiting) > 0:
		c.yieldAction(w.Awaiting)
	default:
		c.write([]byte(`{"type":"done","result":null}`))
	}
}

func (c *conn) yield(tc schemas.ToolCall) {
	b := append([]byte(`{"type":"yield","effect":{"type":"ClientTool","name":`), jsonenc.AppendString(nil, tc.Name)...)
	b = append(b, `,"input":`...)
	in := tc.Input
	if len(in) == 0 {
		in = json.RawMessage("{}")
	}
	b = append(b, in...)
	b = append(b, `,"callId":`...)
	b = jsonenc.AppendString(b, tc.CallID)
	b = append(b, `},"sessionId":"`...)
	b = append(b, c.id...)
	c.write(append(b, `"}`...))
}

// shown records the surfaces an event shows (and forgets the ones it deletes).
func (c *conn) shown(ev *schemas.Event) {
	var id string
	del := false
	switch ev.Type {
	case schemas.EventToolRequest:
		var in struct {
			SurfaceID string `json:"surfaceId"`
		}
		json.Unmarshal(ev.ToolRequest.Input, &in)
		id, del = in.SurfaceID, ev.ToolRequest.Name == tools.DeleteSurface
	case schemas.EventA2UI:
		var m map[string]struct {
			SurfaceID string `json:"surfaceId"`
		}
		json.Unmarshal(ev.A2UI, &m)
		for k, v := range m {
			if v.SurfaceID != "" {
				id, del = v.SurfaceID, k == "deleteSurface"
			}
		}
	}
	if id == "" {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	out := c.surfaces[:0:0]
	for _, s := range c.surfaces {
		if s != id {
			out = append(out, s)
		}
	}
	if !del {
		out = append(out, id)
	}
	c.surfaces = out
}

// yieldAction yields the surfaces that wait for the user's action.
func (c *conn) yieldAction(surfaces []string) {
	b := []byte(`{"type":"yield","effect":{"type":"UserAction","surfaceIds":[`)
	for i, s := range surfaces {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, s)
	}
	b = append(b, `]},"sessionId":"`...)
	b = append(b, c.id...)
	c.write(append(b, `"}`...))
}

// waiting reads what the session waits for: calls, or the user's action; an unknown,
// idle or expired session is an error sent (nil).
func (c *conn) waiting(what string) *genui.SessionWait {
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

func (c *conn) resume(m *inMessage) {
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

func (c *conn) reconnect(m *inMessage) {
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
		c.surfaces = nil
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

// act answers a UserAction: the user's action (value) is the next turn's message; an
// error result (the user left the surfaces) ends the interaction with done, null.
func (c *conn) act(r *effectResult) {
	if r.Type == "error" {
		if _, err := c.s.svc.AwaitAction(context.WithoutCancel(c.ctx), c.id, nil); err != nil {
			c.idle()
			c.failService(err, sameField)
			return
		}
		c.idle()
		c.write([]byte(`{"type":"done","result":null}`))
		return
	}
	part, problem := actionPart(r.Value)
	if problem != "" {
		c.idle()
		c.fail("result.value: "+problem, false)
		return
	}
	c.turn([]schemas.Message{{Role: "user", Parts: []schemas.Part{part}}}, true, func(f string) string { return "result.value" })
}

// actionPart maps the value answering a UserAction to a message part: a genui event
// ({surfaceId, widgetId, eventType,…}), an A2UI client message ({version, action} or
// {userAction}), or text (a string, or {text}).
func actionPart(v json.RawMessage) (schemas.Part, string) {
	var text string
	if json.Unmarshal(v, &text) == nil && text != "" {
		return schemas.Part{Type: schemas.PartText, Text: text}, ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(v, &obj) != nil {
		return schemas.Part{}, "the user's action: a genui event, an A2UI action message, or text"
	}
	switch {
	case obj["widgetId"] != nil || obj["eventType"] != nil:
		var ev schemas.UIEvent
		if err := json.Unmarshal(v, &ev); err != nil {
			return schemas.Part{}, "a genui event {surfaceId, widgetId, eventType, value}: " + err.Error()
		}
		return schemas.Part{Type: schemas.PartUIEvent, Event: &ev}, ""
	case obj["action"] != nil || obj["userAction"] != nil:
		var m schemas.Object
		json.Unmarshal(v, &m)
		return schemas.Part{Type: "a2ui", Message: m}, ""
	case obj["text"] != nil:
		if json.Unmarshal(obj["text"], &text) == nil && text != "" {
			return schemas.Part{Type: schemas.PartText, Text: text}, ""
		}
	}
	return schemas.Part{}, "the user's action: a genui event {surfaceId, widgetId, eventType}, an A2UI action message {version, action}, or text"
}

var (
	generateSchema = jsonbody.NewSchema(schemas.GenerateRequest{})
	a2uiSchema     = jsonbody.NewSchema(schemas.GenerateA2UIRequest{})
)

// Shutdown closes every connection with status 1001 (going away) and refuses new ones;
// the sessions they held wait for their clients to reconnect (to another replica).
// net/http's Server.Shutdown does not close hijacked connections: register it with
// RegisterOnShutdown.
func (s *Server) Shutdown() { s.conns.Shutdown() }

// sameField keeps the service's name of a field.
func sameField(f string) string { return f }

// Conns returns the number of open connections.
func (s *Server) Conns() int { return s.conns.Len() }
