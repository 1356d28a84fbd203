package wsapi

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"strings"

	"github.com/coder/websocket"

	"github.com/genuiserver/genui/internal/jsonenc"
)

// accept upgrades r to a WebSocket. origins are the host patterns allowed besides r's own
// host ("*": any). A request that is not an upgrade gets 426 with notUpgrade as the
// message; any refusal is a JSON error {"error":{"status","message"}}, and accept
// reports false.
func accept(w http.ResponseWriter, r *http.Request, origins []string, notUpgrade string) (*websocket.Conn, bool) {
	if !headerHas(r.Header, "Connection", "upgrade") || !headerHas(r.Header, "Upgrade", "websocket") {
		w.Header().Set("Connection", "Upgrade")
		w.Header().Set("Upgrade", "websocket")
		writeError(w, http.StatusUpgradeRequired, "FAILED_PRECONDITION", notUpgrade)
		return nil, false
	}
	opts := &websocket.AcceptOptions{OriginPatterns: origins}
	for _, o := range origins {
		if o == "*" {
			opts.InsecureSkipVerify = true
		}
	}
	jw := &jsonErrors{ResponseWriter: w}
	ws, err := websocket.Accept(jw, r, opts)
	if err != nil {
		return nil, false
	}
	return ws, true
}

// writeError writes a JSON error response.
func writeError(w http.ResponseWriter, code int, status, message string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Del("X-Content-Type-Options")
	w.WriteHeader(code)
	b := append([]byte(`{"error":{"status":"`), status...)
	b = append(b, `","message":`...)
	b = jsonenc.AppendString(b, message)
	w.Write(append(b, "}}\n"...))
}

func headerHas(h http.Header, key, token string) bool {
	for _, v := range h.Values(key) {
		for _, t := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(t), token) {
				return true
			}
		}
	}
	return false
}

// jsonErrors turns the plain-text error coder/websocket writes when it refuses a
// handshake into a JSON error; a successful handshake hijacks the connection through it.
type jsonErrors struct {
	http.ResponseWriter
	code int
}

func (j *jsonErrors) WriteHeader(code int) {
	if code < 400 {
		j.ResponseWriter.WriteHeader(code)
		return
	}
	j.code = code
}

func (j *jsonErrors) Write(p []byte) (int, error) {
	if j.code == 0 {
		return j.ResponseWriter.Write(p)
	}
	status := "INVALID_ARGUMENT"
	switch j.code {
	case http.StatusForbidden:
		status = "PERMISSION_DENIED"
	case http.StatusInternalServerError:
		status = "INTERNAL"
	case http.StatusMethodNotAllowed, http.StatusUpgradeRequired:
		status = "FAILED_PRECONDITION"
	}
	writeError(j.ResponseWriter, j.code, status, strings.TrimSpace(string(p)))
	return len(p), nil
}

// readSize and writeSize are the sizes of a connection's read and write buffers: an idle
// connection keeps them, and net/http's are 4 KiB each. A client's messages are small
// (a prompt, an answer): a larger one is read past the buffer, straight from the
// connection. The server's updates are larger, and each is written in one call when it
// fits.
const (
	readSize  = 1 << 9
	writeSize = 1 << 10
)

// Hijack hijacks the connection with buffers of readSize and writeSize. The bytes net/http read ahead
// go to the new reader's own buffer, where coder/websocket looks for them.
func (j *jsonErrors) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, brw, err := http.NewResponseController(j.ResponseWriter).Hijack()
	if err != nil {
		return nil, nil, err
	}
	n := brw.Reader.Buffered()
	if n > readSize || brw.Writer.Buffered() > 0 {
		return conn, brw, nil
	}
	ahead, _ := brw.Reader.Peek(n)
	r := bufio.NewReaderSize(io.MultiReader(bytes.NewReader(bytes.Clone(ahead)), conn), readSize)
	if n > 0 {
		if _, err := r.Peek(n); err != nil {
			conn.Close()
			return nil, nil, err
		}
	}
	return conn, bufio.NewReadWriter(r, bufio.NewWriterSize(conn, writeSize)), nil
}

func (j *jsonErrors) Flush() { http.NewResponseController(j.ResponseWriter).Flush() }
