package reflection

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/core/status"
	"github.com/firebase/genkit/go/core/tracing"
)

// session is one WebSocket connection to the manager, from register to drop.
type session struct {
	c   *Client
	ws  *websocket.Conn
	ctx context.Context // cancelled, with errDisconnected, when the connection drops
	end context.CancelCauseFunc

	wmu sync.Mutex // one frame at a time, so each action's notifications keep their order

	mu         sync.Mutex
	nextID     int
	pending    map[string]func(*message) // our requests (register) by id
	inputs     map[string]*inputQueue    // bidi runs by request id
	registered bool
}

func newSession(c *Client, ws *websocket.Conn) *session {
	return &session{c: c, ws: ws, pending: map[string]func(*message){}, inputs: map[string]*inputQueue{}}
}

// serve registers, then dispatches the manager's messages until the connection drops or ctx is
// done. On return every action started on this connection has been cancelled. It reports
// whether the manager acknowledged the registration.
func (s *session) serve(ctx context.Context) bool {
	s.ctx, s.end = context.WithCancelCause(ctx)
	defer func() {
		s.end(errDisconnected)
		s.ws.CloseNow()
		s.mu.Lock()
		for _, q := range s.inputs {
			q.close()
		}
		s.mu.Unlock()
	}()
	log := s.c.log
	s.register()
	for {
		_, data, err := s.ws.Read(s.ctx)
		if err != nil {
			if ctx.Err() == nil {
				log.Info("connection to the Genkit manager lost; reconnecting", "err", err)
			}
			break
		}
		s.handle(data)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.registered
}

// register sends register as a request (the CLI answers only requests with a truthy id) and
// takes the telemetry server URL from the answer.
func (s *session) register() {
	o := s.c.opts
	params := map[string]any{
		"id":                       o.runtimeID,
		"pid":                      os.Getpid(),
		"name":                     o.name,
		"genkitVersion":            genkitVersion(),
		"reflectionApiSpecVersion": specVersion,
		"envs":                     []string{"dev"},
	}
	t := time.AfterFunc(registerAfter, func() {
		s.c.log.Warn("the Genkit manager has not answered register", "after", registerAfter)
	})
	err := s.request("register", params, func(m *message) {
		t.Stop()
		if m.Error != nil {
			s.c.log.Error("the Genkit manager refused register", "err", m.Error)
			return
		}
		var res struct {
			TelemetryServerURL string `json:"telemetryServerUrl"`
		}
		_ = json.Unmarshal(m.Result, &res)
		s.mu.Lock()
		s.registered = true
		s.mu.Unlock()
		s.c.log.Info("registered with the Genkit manager (Dev UI)", "runtime", o.runtimeID)
		o.telemetry(res.TelemetryServerURL)
	})
	if err != nil {
		t.Stop()
	}
}

// request sends a request to the manager; onReply runs on the read loop when it is answered.
func (s *session) request(method string, params any, onReply func(*message)) error {
	s.mu.Lock()
	s.nextID++
	id := strconv.Itoa(s.nextID)
	s.pending[id] = onReply
	s.mu.Unlock()
	return s.write(outgoing{JSONRPC: "2.0", ID: id, Method: method, Params: params})
}

func (s *session) notify(method string, params any) error {
	return s.write(outgoing{JSONRPC: "2.0", Method: method, Params: params})
}

func (s *session) reply(id json.RawMessage, result any) {
	raw, err := json.Marshal(result)
	if err != nil {
		s.fail(id, newError(codeInternal, status.Internal, "internal error: encoding the result: "+err.Error()))
		return
	}
	s.send(response{JSONRPC: "2.0", ID: id, Result: raw})
}

func (s *session) fail(id json.RawMessage, e *rpcError) {
	s.send(response{JSONRPC: "2.0", ID: id, Error: e})
}

func (s *session) send(r response) {
	if err := s.write(r); err != nil {
		s.c.log.Debug("could not answer the Genkit manager", "err", err)
	}
}

func (s *session) write(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(s.ctx, writeTimeout)
	defer cancel()
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.ws.Write(ctx, websocket.MessageText, b)
}

// handle dispatches one frame. It runs on the read loop, so it never blocks: requests that run
// user code get their own goroutine.
func (s *session) handle(data []byte) {
	m, replyTo, perr := parse(data)
	if perr != nil {
		s.c.log.Debug("invalid message from the Genkit manager", "err", perr.Message)
		s.fail(replyTo, perr)
		return
	}
	if m.Method == "" {
		s.mu.Lock()
		onReply := s.pending[idKey(m.ID)]
		delete(s.pending, idKey(m.ID))
		s.mu.Unlock()
		if onReply != nil {
			onReply(m)
		}
		return
	}
	isRequest := len(m.ID) > 0
	switch m.Method {
	case "listActions", "listValues", "runAction", "cancelAction":
		if !isRequest {
			s.c.log.Debug("ignoring a request sent as a notification", "method", m.Method)
			return
		}
		var q *inputQueue
		if m.Method == "runAction" {
			// Input chunks may follow at once: their queue must exist before they arrive.
			var peek struct {
				StreamInput bool `json:"streamInput"`
			}
			if len(m.Params) > 0 && json.Unmarshal(m.Params, &peek) == nil && peek.StreamInput {
				q = newInputQueue()
				s.mu.Lock()
				if old := s.inputs[idKey(m.ID)]; old != nil {
					old.close()
				}
				s.inputs[idKey(m.ID)] = q
				s.mu.Unlock()
			}
		}
		s.c.wg.Add(1)
		go s.serveRequest(m, q)
	case "configure":
		var p struct {
			TelemetryServerURL string `json:"telemetryServerUrl"`
		}
		if e := decodeParams(m.Params, &p); e != nil {
			s.answerNotification(m, e)
			return
		}
		s.c.opts.telemetry(p.TelemetryServerURL)
		s.answerNotification(m, nil)
	// The CLI's names, then the RFC's.
	case "sendInputStreamChunk", "streamInputChunk", "endInputStream", "endStreamInput":
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
			Chunk     json.RawMessage `json:"chunk"`
		}
		if e := decodeParams(m.Params, &p); e != nil || !validID(p.RequestID) {
			if e == nil {
				e = newError(codeInvalidParams, status.InvalidArgument, "invalid params: requestId is required")
			}
			s.answerNotification(m, e)
			return
		}
		s.mu.Lock()
		q := s.inputs[idKey(p.RequestID)]
		s.mu.Unlock()
		switch {
		case q == nil:
			s.c.log.Debug("input for no running bidi action", "requestId", idKey(p.RequestID))
		case m.Method == "sendInputStreamChunk" || m.Method == "streamInputChunk":
			if len(p.Chunk) == 0 {
				p.Chunk = nullID
			}
			q.push(p.Chunk)
		default:
			q.close()
		}
		s.answerNotification(m, nil)
	default:
		if isRequest {
			s.fail(m.ID, newError(codeMethodNotFound, status.Unimplemented, "method not found: "+m.Method))
		}
	}
}

// answerNotification answers a notification method that was sent as a request (with an id).
func (s *session) answerNotification(m *message, e *rpcError) {
	switch {
	case len(m.ID) == 0:
		if e != nil {
			s.c.log.Debug("invalid notification from the Genkit manager", "method", m.Method, "err", e.Message)
		}
	case e != nil:
		s.fail(m.ID, e)
	default:
		s.send(response{JSONRPC: "2.0", ID: m.ID, Result: nullID})
	}
}

// serveRequest answers one request; a panic becomes -32603 instead of ending the process.
func (s *session) serveRequest(m *message, q *inputQueue) {
	defer s.c.wg.Done()
	if q != nil {
		defer func() {
			s.mu.Lock()
			if s.inputs[idKey(m.ID)] == q {
				delete(s.inputs, idKey(m.ID))
			}
			s.mu.Unlock()
			q.close()
		}()
	}
	defer func() {
		if r := recover(); r != nil {
			s.c.log.Error("reflection request panicked", "method", m.Method, "panic", r)
			e := newError(codeInternal, status.Internal, fmt.Sprintf("internal error: %v", r))
			e.Data.Details.Stack = string(debug.Stack())
			s.fail(m.ID, e)
		}
	}()
	switch m.Method {
	case "listActions":
		s.reply(m.ID, map[string]any{"actions": s.c.reg.actions(s.ctx)})
	case "listValues":
		s.listValues(m)
	case "runAction":
		s.runAction(m, q)
	case "cancelAction":
		var p struct {
			TraceID string `json:"traceId"`
		}
		if e := decodeParams(m.Params, &p); e != nil {
			s.fail(m.ID, e)
		} else if p.TraceID == "" {
			s.fail(m.ID, newError(codeInvalidParams, status.InvalidArgument, "invalid params: traceId is required"))
		} else if !s.c.cancelRun(p.TraceID) {
			s.fail(m.ID, newError(codeCancelFailed, status.NotFound, "Action not found or already completed"))
		} else {
			s.reply(m.ID, map[string]string{"message": "Action cancelled"})
		}
	}
}

func (s *session) listValues(m *message) {
	var p struct {
		Type string `json:"type"`
	}
	if e := decodeParams(m.Params, &p); e != nil {
		s.fail(m.ID, e)
		return
	}
	values := map[string]any{}
	switch p.Type {
	case "defaultModel":
		if dm := s.c.reg.defaultModel(); dm != "" {
			values["defaultModel"] = dm
		}
	case "middleware":
		values = s.c.reg.middleware()
	default:
		s.fail(m.ID, newError(codeInvalidParams, status.InvalidArgument,
			fmt.Sprintf("invalid params: type %q is not supported; use defaultModel or middleware", p.Type)))
		return
	}
	s.reply(m.ID, map[string]any{"values": values})
}

// runActionParams are the tools API's run request spread out, plus the two mode flags.
type runActionParams struct {
	Key             string            `json:"key"`
	Input           json.RawMessage   `json:"input"`
	Init            json.RawMessage   `json:"init"` // the session initialisation of a bidi action
	Context         json.RawMessage   `json:"context"`
	TelemetryLabels map[string]string `json:"telemetryLabels"`
	Stream          bool              `json:"stream"`
	StreamInput     bool              `json:"streamInput"`
	// Also sent, and ignored: runtimeId (the manager's routing).
}

// runAction runs an action as Genkit's reflection servers do (runAction in
// genkit/reflection.go), over JSON-RPC: runActionState with the trace id as soon as the root
// span starts, then streamChunk notifications when stream is true, then the response.
//
// A bidirectional run (streamInput) of an api.BidiAction is a session opened with
// ConnectJSON, fed the input chunks in order and closed by endInputStream; as in Genkit's own
// client, the run's input is not used (the chunks are the input). Any other action run
// with streamInput reads the chunks with [InputStream]. init goes to api.BidiAction only.
func (s *session) runAction(m *message, q *inputQueue) {
	var p runActionParams
	if e := decodeParams(m.Params, &p); e != nil {
		s.fail(m.ID, e)
		return
	}
	if p.Key == "" {
		s.fail(m.ID, newError(codeInvalidParams, status.InvalidArgument, "invalid params: key is required"))
		return
	}
	var actx core.ActionContext
	if hasValue(p.Context) {
		if err := json.Unmarshal(p.Context, &actx); err != nil {
			s.fail(m.ID, newError(codeInvalidParams, status.InvalidArgument, "invalid params: context must be an object"))
			return
		}
	}
	action := s.c.reg.resolve(p.Key)
	if action == nil {
		s.fail(m.ID, newError(codeActionNotFound, status.NotFound, fmt.Sprintf("action %q not found", p.Key)))
		return
	}
	bidi, isBidi := action.(api.BidiAction)
	if hasValue(p.Init) && !isBidi {
		s.fail(m.ID, newError(codeInvalidParams, status.InvalidArgument,
			fmt.Sprintf("invalid params: action %q does not accept init", p.Key)))
		return
	}
	requestID := idKey(m.ID)
	ctx, cancel := context.WithCancelCause(s.ctx)
	defer cancel(nil)

	var mu sync.Mutex
	var traceID string
	defer func() { // also when the action panics
		mu.Lock()
		defer mu.Unlock()
		if traceID != "" {
			s.c.untrack(traceID)
		}
	}()
	ctx = tracing.WithTelemetryCallback(ctx, func(tid, _ string) {
		// Called for every span the run starts; the first is the root.
		mu.Lock()
		first := traceID == ""
		if first {
			traceID = tid
		}
		mu.Unlock()
		if first {
			s.c.track(tid, cancel)
			_ = s.notify("runActionState", map[string]any{"requestId": requestID, "state": map[string]string{"traceId": tid}})
		}
	})
	if actx != nil {
		ctx = core.WithActionContext(ctx, actx)
	}
	if len(p.TelemetryLabels) > 0 {
		ctx = tracing.WithTelemetryLabels(ctx, p.TelemetryLabels)
	}
	var cb func(context.Context, json.RawMessage) error
	if p.Stream {
		cb = func(_ context.Context, chunk json.RawMessage) error {
			return s.notify("streamChunk", map[string]any{"requestId": requestID, "chunk": chunk})
		}
	}
	var result json.RawMessage
	var err error
	switch {
	case q != nil && isBidi:
		result, err = runSession(ctx, bidi, p.Init, q, cb)
	case isBidi && hasValue(p.Init):
		var res *api.ActionRunResult[json.RawMessage]
		res, err = bidi.RunBidiJSON(ctx, p.Input, cb, &api.BidiJSONOptions{Init: p.Init})
		if res != nil {
			result = res.Result
		}
	default:
		if q != nil {
			ctx = withInput(ctx, q)
		}
		var res *api.ActionRunResult[json.RawMessage]
		res, err = action.RunJSONWithTelemetry(ctx, p.Input, cb)
		if res != nil {
			result = res.Result
			if res.TraceId != "" {
				mu.Lock()
				if traceID == "" {
					traceID = res.TraceId
				}
				mu.Unlock()
			}
		}
	}
	mu.Lock()
	tid := traceID
	mu.Unlock()
	if tid != "" {
		s.c.untrack(tid) // before answering: a cancelAction after the answer finds nothing
	}
	if err != nil {
		s.fail(m.ID, actionError(err, tid, ctx.Err() != nil))
		return
	}
	if len(result) == 0 {
		result = nullID
	}
	s.reply(m.ID, map[string]any{"result": result, "telemetry": map[string]string{"traceId": tid}})
}

// runSession runs a bidi action as a streaming session (api.BidiAction.ConnectJSON): the
// input chunks go to the session in order until the input ends, its stream chunks go to cb,
// and its output is the result. Everything it starts has ended when it returns.
func runSession(ctx context.Context, bidi api.BidiAction, init json.RawMessage, q *inputQueue,
	cb func(context.Context, json.RawMessage) error) (json.RawMessage, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	conn, err := bidi.ConnectJSON(ctx, &api.BidiJSONOptions{Init: init})
	if err != nil {
		return nil, err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel() // ends the feeder when the action returns without reading all its input
	wg.Add(2)
	go func() { // the feeder
		defer wg.Done()
		for {
			c, more := q.next(ctx)
			if !more {
				// The input ended (or the run did): the action sees its input channel close.
				_ = conn.Close()
				return
			}
			if err := conn.Send(c); err != nil {
				// An invalid chunk has failed the session (Output reports it); a completed
				// or cancelled one takes no more input.
				return
			}
		}
	}()
	done := make(chan struct{})
	go func() { // the stream: always drained, since the session waits for its reader
		defer wg.Done()
		defer close(done)
		forward := cb != nil
		for chunk, err := range conn.Receive() {
			if err != nil {
				return
			}
			if forward && cb(ctx, chunk) != nil {
				forward = false // the connection dropped; the run is being cancelled
			}
		}
	}()
	out, err := conn.Output()
	<-done // chunks precede the response
	return out, err
}

// hasValue reports whether a JSON value is present and not null.
func hasValue(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, nullID)
}
