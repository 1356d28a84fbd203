package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"
)

// The ws client: JSON-RPC 2.0 over a WebSocket at GET /ws, as genui/wsapi serves it.

const (
	wsPath = "/ws"
	// The two things new_session may carry (--ws-session).
	wsSpecStartSession = "startSession"
	wsSpecCatalog      = "catalog"
)

// wsURL is the /ws endpoint of a server at base (http or https).
func wsURL(base string) string {
	if rest, ok := strings.CutPrefix(base, "https://"); ok {
		return "wss://" + rest + wsPath
	}
	return "ws://" + strings.TrimPrefix(base, "http://") + wsPath
}

// wsConn is one client connection. Its methods are not safe for concurrent use.
type wsConn struct {
	c   *websocket.Conn
	id  int64        // the latest request id
	buf bytes.Buffer // the message being read
}

// dialWS opens a connection to the /ws endpoint of the server at base.
func dialWS(ctx context.Context, hc *http.Client, base string, timeout time.Duration) (*wsConn, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c, res, err := websocket.Dial(ctx, wsURL(base), &websocket.DialOptions{HTTPClient: hc})
	if err != nil {
		if res != nil && res.Body != nil {
			return nil, httpError("GET "+wsPath, res)
		}
		return nil, fmt.Errorf("GET %s: %w", wsPath, err)
	}
	c.SetReadLimit(16 << 20)
	return &wsConn{c: c}, nil
}

// close closes the connection with a close handshake, and without one if that fails.
func (w *wsConn) close() error {
	err := w.c.Close(websocket.StatusNormalClosure, "")
	if err != nil {
		_ = w.c.CloseNow()
	}
	return err
}

// read reads the next message; the bytes are valid until the next read.
func (w *wsConn) read(ctx context.Context) ([]byte, error) {
	typ, r, err := w.c.Reader(ctx)
	if err != nil {
		return nil, err
	}
	w.buf.Reset()
	if _, err := w.buf.ReadFrom(r); err != nil {
		return nil, err
	}
	if typ != websocket.MessageText {
		return nil, errors.New("a binary message: JSON-RPC messages are text")
	}
	return w.buf.Bytes(), nil
}

// wsMessage is what the client reads of a message from the server: a response, a
// session_update notification or a request (client_tool).
type wsMessage struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		SessionID string `json:"session_id"`
		Update    struct {
			Type  string          `json:"type"`
			Event json.RawMessage `json:"event"`
		} `json:"update"`
	} `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// request is the JSON-RPC request id with method and params (a JSON object).
func wsRequest(id int64, method string, params []byte) []byte {
	b := append([]byte(`{"jsonrpc":"2.0","id":`), strconv.FormatInt(id, 10)...)
	b = append(b, `,"method":`...)
	b = strconv.AppendQuote(b, method)
	b = append(b, `,"params":`...)
	b = append(b, params...)
	return append(b, '}')
}

// call sends a request and reads its response; any other message before it is an error
// (initialize and new_session are answered alone).
func (w *wsConn) call(ctx context.Context, method string, params []byte, timeout time.Duration) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	w.id++
	if err := w.c.Write(ctx, websocket.MessageText, wsRequest(w.id, method, params)); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	data, err := w.read(ctx)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	var m wsMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("%s: a message that is not JSON: %s", method, truncate(data, 300))
	}
	switch {
	case string(m.ID) != strconv.FormatInt(w.id, 10):
		return nil, fmt.Errorf("%s: a message other than its response: %s", method, truncate(data, 300))
	case m.Error != nil:
		return nil, fmt.Errorf("%s: JSON-RPC error %d: %s", method, m.Error.Code, m.Error.Message)
	case len(m.Result) == 0:
		return nil, fmt.Errorf("%s: a response without result: %s", method, truncate(data, 300))
	}
	return bytes.Clone(m.Result), nil
}

// initialize sends initialize.
func (w *wsConn) initialize(ctx context.Context, timeout time.Duration) error {
	res, err := w.call(ctx, "initialize", []byte(`{"protocol_version":1}`), timeout)
	if err == nil && !bytes.Contains(res, []byte(`"protocol_version"`)) {
		err = fmt.Errorf("initialize: a result without protocol_version: %s", truncate(res, 300))
	}
	return err
}

// newSession sends new_session with params and returns the session's id.
func (w *wsConn) newSession(ctx context.Context, params []byte, timeout time.Duration) (string, error) {
	res, err := w.call(ctx, "new_session", params, timeout)
	if err != nil {
		return "", err
	}
	var v struct {
		SessionID string `json:"session_id"`
	}
	if err := json.Unmarshal(res, &v); err != nil || v.SessionID == "" {
		return "", fmt.Errorf("new_session: a result without session_id: %s", truncate(res, 300))
	}
	return v.SessionID, nil
}

// wsTurnResult is one prompt seen by the client. Times are from just before the request
// is sent.
type wsTurnResult struct {
	firstUI  time.Duration // the first ui_update notification
	end      time.Duration // the prompt's response
	updates  int           // ui_update notifications
	received int64         // message bytes
	err      error
}

// wsKind is what a message from the server is to a prompt.
type wsKind int

const (
	wsOther    wsKind = iota
	wsUIUpdate        // session_update of type ui_update
	wsText            // session_update of type agent_message_chunk
	wsResponse        // a response
)

var (
	wsUpdatePrefix = []byte(`{"jsonrpc":"2.0","method":"session_update","params":{"session_id":"`)
	wsUpdateType   = []byte(`,"update":{"type":"`)
)

// wsClassify tells what a message is, and for a notification whether it is of session
// sid. The layout genui/wsapi writes is matched by prefix; anything else is decoded, so
// other key orders work too.
func wsClassify(msg []byte, sid string) (kind wsKind, ours bool, m *wsMessage, err error) {
	if rest, ok := bytes.CutPrefix(msg, wsUpdatePrefix); ok && len(rest) > len(sid) && string(rest[:len(sid)]) == sid && rest[len(sid)] == '"' {
		if i := bytes.Index(rest, wsUpdateType); i >= 0 {
			typ := rest[i+len(wsUpdateType):]
			switch {
			case bytes.HasPrefix(typ, []byte(`ui_update"`)):
				return wsUIUpdate, true, nil, nil
			case bytes.HasPrefix(typ, []byte(`agent_message_chunk"`)):
				return wsText, true, nil, nil
			}
		}
	}
	m = &wsMessage{}
	if err := json.Unmarshal(msg, m); err != nil {
		return wsOther, false, nil, fmt.Errorf("a message that is not JSON: %s", truncate(msg, 300))
	}
	switch {
	case m.Method == "session_update":
		ours = m.Params.SessionID == sid
		switch m.Params.Update.Type {
		case "ui_update":
			return wsUIUpdate, ours, m, nil
		case "agent_message_chunk":
			return wsText, ours, m, nil
		}
		return wsOther, ours, m, nil
	case m.Method == "" && len(m.ID) > 0:
		return wsResponse, false, m, nil
	}
	return wsOther, false, m, nil
}

// prompt sends a prompt of session sid with text and reads the session's updates up to
// the prompt's response, which must have stop_reason end_turn after at least one
// ui_update.
func (w *wsConn) prompt(ctx context.Context, sid string, text []byte, timeout time.Duration) (r wsTurnResult) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	w.id++
	params := append([]byte(`{"session_id":`), strconv.Quote(sid)...)
	params = append(params, `,"prompt":[{"type":"text","text":`...)
	params = append(params, text...)
	params = append(params, "}]}"...)
	req := wsRequest(w.id, "prompt", params)
	id := strconv.FormatInt(w.id, 10)
	start := time.Now()
	if err := w.c.Write(ctx, websocket.MessageText, req); err != nil {
		r.err = fmt.Errorf("prompt: %w", err)
		return r
	}
	for {
		data, err := w.read(ctx)
		now := time.Since(start)
		if err != nil {
			r.err = fmt.Errorf("prompt: reading: %w", err)
			return r
		}
		r.received += int64(len(data))
		kind, ours, m, err := wsClassify(data, sid)
		switch {
		case err != nil:
			r.err = fmt.Errorf("prompt: %w", err)
			return r
		case kind == wsUIUpdate && ours:
			if r.updates == 0 {
				r.firstUI = now
			}
			r.updates++
		case kind == wsText && ours:
		case kind == wsResponse && string(m.ID) == id:
			r.end = now
			var res struct {
				StopReason string `json:"stop_reason"`
			}
			switch {
			case m.Error != nil:
				r.err = fmt.Errorf("prompt: JSON-RPC error %d: %s", m.Error.Code, m.Error.Message)
			case json.Unmarshal(m.Result, &res) != nil || res.StopReason == "":
				r.err = fmt.Errorf("prompt: a response without stop_reason: %s", truncate(data, 300))
			case res.StopReason != "end_turn":
				r.err = fmt.Errorf("prompt: stop_reason %q, want \"end_turn\"", res.StopReason)
			case r.updates == 0:
				r.err = errors.New("prompt: no ui_update before the response")
			}
			return r
		default:
			r.err = fmt.Errorf("prompt: an unexpected message: %s", truncate(data, 300))
			return r
		}
	}
}

// wsHTTPClient is the client that dials /ws connections: no pool (each connection is
// taken over by its WebSocket) and no overall timeout.
func wsHTTPClient() *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	return &http.Client{Transport: &http.Transport{Proxy: http.ProxyFromEnvironment, DialContext: d.DialContext,
		DisableCompression: true, TLSHandshakeTimeout: 10 * time.Second}}
}
