package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

type format int

const (
	formatNDJSON format = iota
	formatSSE
)

func (f format) String() string {
	if f == formatSSE {
		return "sse"
	}
	return "ndjson"
}

func (f format) path() string {
	if f == formatSSE {
		return "/generateUi?stream=true"
	}
	return "/generateUi"
}

func (f format) accept() string {
	if f == formatSSE {
		return "text/event-stream"
	}
	return "application/x-ndjson"
}

// newHTTPClient returns a keep-alive client for many concurrent connections to one host.
// If wire is not nil, it counts the bytes read from every connection.
func newHTTPClient(wire *atomic.Int64) *http.Client {
	d := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:               http.ProxyFromEnvironment,
		DialContext:         d.DialContext,
		MaxIdleConns:        0, // no global limit
		MaxIdleConnsPerHost: 16384,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	if wire != nil {
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &countingConn{Conn: c, n: wire}, nil
		}
	}
	return &http.Client{Transport: tr}
}

type countingConn struct {
	net.Conn
	n *atomic.Int64
}

func (c *countingConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// drain reads what is left of a body (bounded) so that its connection can be reused.
func drain(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 4<<20))
	_ = body.Close()
}

// httpError describes a non-2xx answer.
func httpError(what string, res *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(res.Body, 512))
	return fmt.Errorf("%s: HTTP %s: %s", what, res.Status, bytes.TrimSpace(b))
}

// postJSON posts body and returns the response, already checked for a 2xx status.
func postJSON(ctx context.Context, hc *http.Client, u string, body []byte, accept string, header ...string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if accept != "" {
		req.Header.Set("Accept", accept)
	}
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode/100 != 2 {
		err := httpError("POST "+req.URL.Path, res)
		drain(res.Body)
		return nil, err
	}
	return res, nil
}

// startSession creates a session with the catalog in body and returns its id.
func startSession(ctx context.Context, hc *http.Client, base string, body []byte, timeout time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	res, err := postJSON(ctx, hc, base+"/startSession", body, "application/json")
	if err != nil {
		return "", err
	}
	defer drain(res.Body)
	var out struct {
		Result string `json:"result"`
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 64<<10)).Decode(&out); err != nil || out.Result == "" {
		return "", fmt.Errorf("POST /startSession: unexpected answer (%v)", err)
	}
	return out.Result, nil
}

func sessionBody(catalog []byte) []byte {
	return fmt.Appendf(nil, `{"data":{"protocolVersion":"0.1.0","catalog":%s}}`, catalog)
}

func turnBody(sessionID, text string) []byte {
	t, _ := json.Marshal(text)
	return fmt.Appendf(nil, `{"data":{"sessionId":%q,"conversation":[{"role":"user","parts":[{"type":"text","text":%s}]}]}}`, sessionID, t)
}

// turnResult is one /generateUi turn seen by the client.
type turnResult struct {
	ttfc time.Duration // first toolRequest event
	end  time.Duration // result event
	body int64         // response body bytes
	err  error
}

var readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, 16<<10) }}

// turn runs one /generateUi turn and reads its stream to the end.
func turn(ctx context.Context, hc *http.Client, base string, f format, body []byte, timeout time.Duration) (r turnResult) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	res, err := postJSON(ctx, hc, base+f.path(), body, f.accept())
	if err != nil {
		r.err = err
		return r
	}
	defer drain(res.Body)
	cr := &countingReader{r: res.Body}
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(cr)
	defer func() {
		br.Reset(nil)
		readerPool.Put(br)
	}()
	var long []byte // a line longer than the reader's buffer
	for {
		frag, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			long = append(long, frag...)
			continue
		}
		line := frag
		if long != nil {
			line, long = append(long, frag...), nil
		}
		switch kind, payload := classify(f, line); kind {
		case eventTool:
			if r.ttfc == 0 {
				r.ttfc = time.Since(start)
			}
		case eventResult:
			if r.end == 0 {
				r.end = time.Since(start)
			}
		case eventError:
			if r.err == nil {
				r.err = fmt.Errorf("error event: %s", truncate(payload, 300))
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && r.err == nil {
				r.err = fmt.Errorf("reading the stream: %w", err)
			}
			break
		}
	}
	r.body = cr.n
	switch {
	case r.err != nil:
	case r.ttfc == 0:
		r.err = errors.New("stream without a toolRequest event")
	case r.end == 0:
		r.err = errors.New("stream without a result event")
	}
	return r
}

type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

type eventKind int

const (
	eventOther eventKind = iota
	eventTool
	eventResult
	eventError
)

var (
	ndjsonPrefix = []byte(`{"type":"`)
	ssePrefix    = []byte("data:")
	toolKey      = []byte(`"toolRequest`)
)

// classify tells what one line of a stream is. The common layouts are matched by
// prefix; anything else is decoded, so other servers' key orders work too.
func classify(f format, line []byte) (eventKind, []byte) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return eventOther, nil
	}
	if f == formatSSE {
		payload, ok := bytes.CutPrefix(line, ssePrefix)
		if !ok {
			return eventOther, nil // comment, event:, id:
		}
		payload = bytes.TrimSpace(payload)
		switch {
		case bytes.HasPrefix(payload, []byte(`{"message":`)):
			if bytes.Contains(payload, toolKey) {
				return eventTool, payload
			}
			return eventOther, payload
		case bytes.HasPrefix(payload, []byte(`{"result":`)):
			return eventResult, payload
		case bytes.HasPrefix(payload, []byte(`{"error":`)):
			return eventError, payload
		}
		var v struct {
			Message, Result, Error json.RawMessage
		}
		switch {
		case json.Unmarshal(payload, &v) != nil:
			return eventOther, payload
		case v.Error != nil:
			return eventError, payload
		case v.Result != nil:
			return eventResult, payload
		case bytes.Contains(v.Message, toolKey):
			return eventTool, payload
		}
		return eventOther, payload
	}
	var typ []byte
	if rest, ok := bytes.CutPrefix(line, ndjsonPrefix); ok {
		if i := bytes.IndexByte(rest, '"'); i >= 0 {
			typ = rest[:i]
		}
	} else {
		var v struct {
			Type string `json:"type"`
		}
		if json.Unmarshal(line, &v) == nil {
			typ = []byte(v.Type)
		}
	}
	switch string(typ) {
	case "toolRequest":
		return eventTool, line
	case "result":
		return eventResult, line
	case "error":
		return eventError, line
	}
	return eventOther, line
}

func truncate(b []byte, n int) string {
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
