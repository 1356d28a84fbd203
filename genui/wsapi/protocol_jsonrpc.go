package wsapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/coder/websocket"

	"github.com/genuiserver/genui/internal/jsonenc"
)

// The JSON-RPC 2.0 dialect, on /ws: text frames, each a message or a batch of them. The
// methods are in protocol_jsonrpc_methods.go and protocol_jsonrpc_turns.go; their
// spelling, the service's or ACP's, in protocol_jsonrpc_flavour.go.

// jsonrpcDialect is the dialect of the endpoint at path.
func jsonrpcDialect(path string) *dialect {
	return &dialect{
		id:         jsonrpcEndpoint,
		pattern:    path,
		notUpgrade: path + " is a WebSocket endpoint of JSON-RPC 2.0: connect with a WebSocket client",
		open:       func(c conn, _ *http.Request) handler { return &rpcConn{conn: c} },
	}
}

// rpcConn is one client's connection to /ws.
type rpcConn struct {
	conn

	mu    sync.Mutex
	turns int
}

// message is any JSON-RPC message a client sends: a request, a notification (no id) or
// a response to one of the server's requests (result or error, no method).
type message struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Method  json.RawMessage `json:"method"`
	Params  json.RawMessage `json:"params"`
	Result  json.RawMessage `json:"result"`
	Error   *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// handle handles one message the client sent.
func (c *rpcConn) handle(typ websocket.MessageType, data []byte) {
	if typ != websocket.MessageText {
		c.write(appendResponse(nil, nil, nil, errorf(codeInvalidRequest, "binary frames are not JSON-RPC: send each message as a text frame")))
		return
	}
	c.dispatch(data)
}

// dispatch handles one frame: a message or a batch of them.
func (c *rpcConn) dispatch(data []byte) {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '[' {
		var batch []json.RawMessage
		if err := json.Unmarshal(data, &batch); err != nil {
			c.write(appendResponse(nil, nil, nil, errorf(codeParse, "parse error: "+err.Error())))
			return
		}
		if len(batch) == 0 {
			c.write(appendResponse(nil, nil, nil, errorf(codeInvalidRequest, "an empty batch: send at least one request")))
			return
		}
		if len(batch) > c.s.maxBatch {
			c.write(appendResponse(nil, nil, nil, &rpcError{Code: codeLimit, Message: "a batch of " + itoa(len(batch)) + " messages: at most " + itoa(c.s.maxBatch) + " per batch"}))
			return
		}
		b := &batchReply{c: c, waiting: 1} // the guard, released when every request is in
		for _, raw := range batch {
			c.handleOne(raw, b)
		}
		b.add(nil)
		return
	}
	if !json.Valid(data) {
		var v any
		err := json.Unmarshal(data, &v)
		c.write(appendResponse(nil, nil, nil, errorf(codeParse, "parse error: "+err.Error())))
		return
	}
	c.handleOne(data, nil)
}

// handleOne handles one message; its response goes to b when it is part of a batch.
func (c *rpcConn) handleOne(raw []byte, b *batchReply) {
	var m message
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		b.reply(c, nil).send(nil, errorf(codeInvalidRequest, "invalid request: a message must be a JSON object"))
		return
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		b.reply(c, nil).send(nil, errorf(codeInvalidRequest, "invalid request: "+err.Error()))
		return
	}
	id := m.ID
	if len(id) > 0 && !validID(id) {
		b.reply(c, nil).send(nil, errorf(codeInvalidRequest, "invalid request: id must be a string, a number or null"))
		return
	}
	if m.JSONRPC != "2.0" {
		b.reply(c, id).send(nil, errorf(codeInvalidRequest, `invalid request: jsonrpc must be "2.0"`))
		return
	}
	if len(m.Method) == 0 {
		if len(id) > 0 && (m.Result != nil || m.Error != nil) {
			c.answer(id, m.Result, m.Error)
			return
		}
		b.reply(c, id).send(nil, errorf(codeInvalidRequest, "invalid request: method is missing"))
		return
	}
	var method string
	if err := json.Unmarshal(m.Method, &method); err != nil {
		b.reply(c, id).send(nil, errorf(codeInvalidRequest, "invalid request: method must be a string"))
		return
	}
	if p := bytes.TrimSpace(m.Params); len(p) > 0 && p[0] != '{' && !isNull(p) {
		b.reply(c, id).send(nil, errorf(codeInvalidParams, "params: expected an object"))
		return
	}
	var r *reply
	if len(id) > 0 {
		r = b.reply(c, id)
	}
	c.call(method, m.Params, r)
}

func validID(id json.RawMessage) bool {
	switch id[0] {
	case '"', 'n', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return true
	}
	return false
}

// reply is where the response to one request goes: the connection, or a batch's slot.
// A notification has none (nil, or a reply without a connection when it must hold a
// session's place): its response goes nowhere.
type reply struct {
	c    *rpcConn
	id   json.RawMessage
	b    *batchReply
	once sync.Once
}

func (r *reply) send(result []byte, err *rpcError) {
	if r == nil || r.c == nil {
		return
	}
	r.once.Do(func() {
		msg := appendResponse(nil, r.id, result, err)
		if r.b != nil {
			r.b.add(msg)
			return
		}
		r.c.write(msg)
	})
}

// batchReply gathers a batch's responses and sends them as one array when each request
// has been answered (a prompt's when its turn ends).
type batchReply struct {
	c       *rpcConn
	mu      sync.Mutex
	slots   [][]byte
	waiting int
}

func (b *batchReply) reply(c *rpcConn, id json.RawMessage) *reply {
	if b == nil {
		return &reply{c: c, id: id}
	}
	b.mu.Lock()
	b.waiting++
	b.mu.Unlock()
	return &reply{c: c, id: id, b: b}
}

// add adds a response (nil: releases the guard). A batch of notifications only is
// answered with nothing.
func (b *batchReply) add(msg []byte) {
	b.mu.Lock()
	if msg != nil {
		b.slots = append(b.slots, msg)
	}
	b.waiting--
	done := b.waiting == 0 && len(b.slots) > 0
	b.mu.Unlock()
	if done {
		out := append([]byte{'['}, bytes.Join(b.slots, []byte{','})...)
		b.c.write(append(out, ']'))
	}
}

// appendResponse appends a response: result (JSON) or err.
func appendResponse(b []byte, id json.RawMessage, result []byte, err *rpcError) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b = append(b, id...)
	if err != nil {
		enc, e := jsonenc.Marshal(err)
		if e != nil {
			enc, _ = jsonenc.Marshal(&rpcError{Code: err.Code, Message: err.Message})
		}
		b = append(b, `,"error":`...)
		b = append(b, enc...)
		return append(b, '}')
	}
	b = append(b, `,"result":`...)
	b = append(b, result...)
	return append(b, '}')
}

func isNull(raw json.RawMessage) bool { return bytes.Equal(bytes.TrimSpace(raw), []byte("null")) }
