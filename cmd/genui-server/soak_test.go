package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/redistest"
	"github.com/genuiserver/genui/schemas"
)

var soakDuration = flag.Duration("soak", 90*time.Second, "how long TestSoak runs its workload (e.g. -soak=10m)")

const (
	soakWorkers   = 6
	soakOpTimeout = 20 * time.Second
	// soakIdle is how long the load stops before the server is measured: longer than
	// --stream-retention (3s) and --stream-grace (2s), so that finished streams expired and
	// abandoned turns ended.
	soakIdle = 3500 * time.Millisecond
	// soakSettle bounds how much longer the end measurement waits for goroutines still
	// winding down (closing connections, timers firing) before it counts them as leaked.
	soakSettle = 10 * time.Second

	soakA2UIExtension = "https://a2ui.org/a2a-extension/a2ui/v0.9"
	soakBasicCatalog  = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
)

// The operations every worker cycles through, in this order.
var soakKinds = []string{
	"ndjson", "sse", "json", "a2ui", "a2a", "agui", "ws", "yield",
	"resume", "cancel", "clienttool", "429-always", "429-once",
}

// soakModel answers the fake Gemini's requests from their content alone, so that any
// number of turns of any kind may run at once.
type soakModel struct {
	mu   sync.Mutex
	seen map[string]bool // the inject-429-once-<n> markers that got their 429
}

var (
	soakOnceRe    = regexp.MustCompile(`inject-429-once-\d+`)
	soakCatalogRe = regexp.MustCompile(`"catalogId":"([^"]+)"`)
)

func (m *soakModel) respond(req *fakegemini.Request) fakegemini.Reply {
	text := req.LastUserText()
	if strings.Contains(text, "inject-429-always") {
		return fakegemini.ErrorReply(fakegemini.RateLimited(20 * time.Millisecond))
	}
	if key := soakOnceRe.FindString(text); key != "" {
		m.mu.Lock()
		first := !m.seen[key]
		m.seen[key] = true
		m.mu.Unlock()
		if first {
			return fakegemini.ErrorReply(fakegemini.RateLimited(20 * time.Millisecond))
		}
	}
	var surfaceTool, locationTool bool
	for _, d := range req.FunctionDeclarations() {
		switch d.Name {
		case "addOrUpdateSurface":
			surfaceTool = true
		case "getLocation":
			locationTool = true
		}
	}
	if locationTool && len(req.FunctionResponses()) == 0 {
		return fakegemini.Respond(fakegemini.Text("Calling getLocation."), fakegemini.FunctionCall("getLocation", nil))
	}
	if surfaceTool {
		if strings.Contains(text, "soak-slow") {
			// Long enough for a cancel to land mid-turn.
			r := fakegemini.Respond(fakegemini.Text("Working"), fakegemini.Text(" on"), fakegemini.Text(" it"),
				fakegemini.Text(" slowly."), fakegemini.FunctionCall("addOrUpdateSurface", textSurface))
			r.Pacing = 300 * time.Millisecond
			return r
		}
		return fakegemini.Respond(fakegemini.Text("Here is "), fakegemini.Text("a surface "), fakegemini.Text("for you."),
			fakegemini.FunctionCall("addOrUpdateSurface", textSurface))
	}
	// An A2UI turn: the catalog id the system prompt names.
	id := soakBasicCatalog
	if m := soakCatalogRe.FindStringSubmatch(req.SystemText()); m != nil {
		id = m[1]
	}
	return fakegemini.Reply{Chunks: fakegemini.TextChunks(soakForm(id), 5)}
}

// soakForm is the A2UI v0.9 form of TestA2ATasksAcrossReplicas, on the given catalog.
func soakForm(catalogID string) string {
	return "Here is the form.\n```a2ui\n" +
		`{"createSurface":{"surfaceId":"form","catalogId":"` + catalogID + `"}}` + "\n" +
		`{"updateComponents":{"surfaceId":"form","components":[` + "\n" +
		`{"id":"root","component":"Column","children":["title","submit"]},` + "\n" +
		`{"id":"title","component":"Text","text":"Join us"},` + "\n" +
		`{"id":"submit","component":"Button","child":"label","action":{"event":{"name":"join"}}},` + "\n" +
		`{"id":"label","component":"Text","text":"Join"}` + "\n" + "]}}\n```\n"
}

// soakClient is what every operation shares; read-only once set up.
type soakClient struct {
	base    string
	key     string
	session string // a /startSession session on the basic catalog
	catalog string // the basic catalog's JSON
	http    *http.Client
	// resumeRef is the undisturbed NDJSON stream of the resume operation's request.
	resumeRef []string
}

func (c *soakClient) do(ctx context.Context, path string, header map[string]string, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+c.key)
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return c.http.Do(req)
}

// post sends a request and reads its whole answer.
func (c *soakClient) post(ctx context.Context, path string, header map[string]string, body string) (int, http.Header, string, error) {
	res, err := c.do(ctx, path, header, body)
	if err != nil {
		return 0, nil, "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, string(b), err
}

func (c *soakClient) wsURL(path string) string {
	return "ws" + strings.TrimPrefix(c.base, "http") + path + "?access_token=" + c.key
}

func soakUserText(text string) map[string]any {
	return map[string]any{"role": "user", "parts": []any{map[string]any{"type": "text", "text": text}}}
}

// turnBody is a /generateUi request: on the shared session, or with the catalog inline.
// Its JSON is the same for the same arguments.
func (c *soakClient) turnBody(inline bool, conversation []any, extra map[string]any) string {
	m := map[string]any{"conversation": conversation}
	if inline {
		m["catalog"] = json.RawMessage(c.catalog)
	} else {
		m["sessionId"] = c.session
	}
	maps.Copy(m, extra)
	b, _ := json.Marshal(m)
	return string(b)
}

// soakOp is one operation as it runs: what it read, for the failure message, and the
// turns it made the server run.
type soakOp struct {
	kind     string
	n        int
	out      strings.Builder
	turns    map[string]int // by status: ok, CANCELLED, RESOURCE_EXHAUSTED
	injected string         // the status of the injected error it met, as expected
}

func (o *soakOp) logf(format string, args ...any) {
	if o.out.Len() < 64<<10 {
		fmt.Fprintf(&o.out, format+"\n", args...)
	}
}

func (o *soakOp) turn(status string) { o.turns[status]++ }

// soakLines reads an NDJSON stream to its end, without keepalive lines.
func soakLines(r io.Reader) ([]string, error) {
	br := bufio.NewReader(r)
	var out []string
	for {
		line, err := br.ReadString('\n')
		if line = strings.TrimSuffix(line, "\n"); line != "" && line != `{"type":"keepalive"}` {
			out = append(out, line)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// soakSSEData reads an SSE stream to its end and returns its data fields.
func soakSSEData(r io.Reader) ([]string, error) {
	br := bufio.NewReader(r)
	var out []string
	for {
		line, err := br.ReadString('\n')
		if d, ok := strings.CutPrefix(strings.TrimSuffix(line, "\n"), "data: "); ok {
			out = append(out, d)
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// soakEvent is any NDJSON line of /generateUi or /generateA2ui.
type soakEvent struct {
	Type         string `json:"type"`
	ToolRequests []struct {
		Name string `json:"name"`
	} `json:"toolRequests"`
	CallID string `json:"callId"`
	Name   string `json:"name"`
	Result *struct {
		FinishReason string `json:"finishReason"`
	} `json:"result"`
	Error *struct {
		Status  string `json:"status"`
		Message string `json:"message"`
	} `json:"error"`
	// Bare A2UI messages.
	CreateSurface    json.RawMessage `json:"createSurface"`
	UpdateComponents json.RawMessage `json:"updateComponents"`
}

func (e *soakEvent) final() bool { return e.Type == "result" || e.Type == "error" }

func (e *soakEvent) surfaces() int {
	n := 0
	for _, tr := range e.ToolRequests {
		if tr.Name == "addOrUpdateSurface" {
			n++
		}
	}
	return n
}

// soakParse decodes a stream's lines and checks that exactly one result or error line
// ends it.
func soakParse(lines []string) ([]soakEvent, error) {
	if len(lines) == 0 {
		return nil, errors.New("an empty stream")
	}
	evs := make([]soakEvent, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal([]byte(l), &evs[i]); err != nil {
			return nil, fmt.Errorf("line %d is not JSON: %v", i+1, err)
		}
		if evs[i].final() != (i == len(lines)-1) {
			return nil, fmt.Errorf("line %d of %d: a result or error line must end the stream, once", i+1, len(lines))
		}
	}
	return evs, nil
}

// soakGenui checks a /generateUi stream that ends with a result of finishReason finish,
// having shown at least one surface when finish is "stop".
func soakGenui(lines []string, finish string) ([]soakEvent, error) {
	evs, err := soakParse(lines)
	if err != nil {
		return nil, err
	}
	last := evs[len(evs)-1]
	if last.Type != "result" || last.Result == nil {
		return nil, fmt.Errorf("the stream ended with %s", lines[len(lines)-1])
	}
	if last.Result.FinishReason != finish {
		return nil, fmt.Errorf("finishReason %q, want %q", last.Result.FinishReason, finish)
	}
	surfaces := 0
	for _, e := range evs {
		surfaces += e.surfaces()
	}
	if finish == "stop" && surfaces == 0 {
		return nil, errors.New("no addOrUpdateSurface in the stream")
	}
	return evs, nil
}

// soakNDJSONTurn posts a /generateUi (or /generateA2ui) request and reads its NDJSON stream.
func (c *soakClient) ndjsonTurn(ctx context.Context, op *soakOp, path, body string) ([]string, error) {
	res, err := c.do(ctx, path, nil, body)
	if err != nil {
		return nil, err
	}
	defer res.Body.Close()
	lines, err := soakLines(res.Body)
	op.logf("%s: %d %s\n%s", path, res.StatusCode, res.Header.Get("Content-Type"), strings.Join(lines, "\n"))
	if err != nil {
		return nil, fmt.Errorf("reading the stream: %w", err)
	}
	if res.StatusCode != 200 {
		return nil, fmt.Errorf("status %d", res.StatusCode)
	}
	if res.Header.Get("X-Genkit-Stream-Id") == "" {
		return nil, errors.New("no X-Genkit-Stream-Id")
	}
	return lines, nil
}

// genuiTurnOK runs a /generateUi turn in NDJSON that must end "stop" with its surface.
func (c *soakClient) genuiTurnOK(ctx context.Context, op *soakOp, body string) error {
	lines, err := c.ndjsonTurn(ctx, op, "/generateUi", body)
	if err != nil {
		return err
	}
	if _, err := soakGenui(lines, "stop"); err != nil {
		return err
	}
	op.turn("ok")
	return nil
}

// 1. A /generateUi turn in NDJSON.
func soakNDJSON(ctx context.Context, c *soakClient, op *soakOp) error {
	return c.genuiTurnOK(ctx, op, c.turnBody(false, []any{soakUserText(fmt.Sprintf("soak ndjson %d", op.n))}, nil))
}

// 2. A /generateUi turn in Genkit SSE, the catalog inline and the request wrapped in data.
func soakSSE(ctx context.Context, c *soakClient, op *soakOp) error {
	body := `{"data":` + c.turnBody(true, []any{soakUserText(fmt.Sprintf("soak sse %d", op.n))}, nil) + `}`
	res, err := c.do(ctx, "/generateUi", map[string]string{"Accept": "text/event-stream"}, body)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := soakSSEData(res.Body)
	op.logf("%d %s\n%s", res.StatusCode, res.Header.Get("Content-Type"), strings.Join(data, "\n"))
	if err != nil {
		return err
	}
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		return fmt.Errorf("status %d, %s", res.StatusCode, res.Header.Get("Content-Type"))
	}
	surfaces := 0
	for i, d := range data {
		var ev struct {
			Message *struct {
				Content []struct {
					ToolRequest *struct{ Name string } `json:"toolRequest"`
				} `json:"content"`
			} `json:"message"`
			Result *struct {
				FinishReason string `json:"finishReason"`
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(d), &ev); err != nil {
			return fmt.Errorf("event %d is not JSON: %v", i+1, err)
		}
		if (ev.Result != nil || ev.Error != nil) != (i == len(data)-1) {
			return fmt.Errorf("event %d of %d: a result or error must end the stream, once", i+1, len(data))
		}
		switch {
		case ev.Error != nil:
			return fmt.Errorf("the stream ended with an error: %s", ev.Error)
		case ev.Result != nil && ev.Result.FinishReason != "stop":
			return fmt.Errorf("finishReason %q", ev.Result.FinishReason)
		case ev.Message != nil:
			for _, p := range ev.Message.Content {
				if p.ToolRequest != nil && p.ToolRequest.Name == "addOrUpdateSurface" {
					surfaces++
				}
			}
		}
	}
	if len(data) == 0 || surfaces == 0 {
		return fmt.Errorf("%d events, %d surfaces", len(data), surfaces)
	}
	op.turn("ok")
	return nil
}

// 3. A /generateUi turn answered as one JSON object.
func soakJSON(ctx context.Context, c *soakClient, op *soakOp) error {
	body := c.turnBody(true, []any{soakUserText(fmt.Sprintf("soak json %d", op.n))}, nil)
	status, h, got, err := c.post(ctx, "/generateUi", map[string]string{"Accept": "application/json"}, body)
	op.logf("%d %s\n%s", status, h.Get("Content-Type"), got)
	if err != nil {
		return err
	}
	var res struct {
		Result *struct {
			FinishReason string `json:"finishReason"`
			ToolRequests []struct {
				Name string `json:"name"`
			} `json:"toolRequests"`
		} `json:"result"`
	}
	if status != 200 || json.Unmarshal([]byte(got), &res) != nil || res.Result == nil {
		return fmt.Errorf("status %d", status)
	}
	if res.Result.FinishReason != "stop" || len(res.Result.ToolRequests) == 0 || res.Result.ToolRequests[0].Name != "addOrUpdateSurface" {
		return errors.New("no stop with a surface")
	}
	op.turn("ok")
	return nil
}

// 4. A /generateA2ui turn in NDJSON, on the basic catalog.
func soakA2UI(ctx context.Context, c *soakClient, op *soakOp) error {
	body, _ := json.Marshal(map[string]any{"version": "v0.9", "conversation": []any{soakUserText(fmt.Sprintf("soak a2ui %d", op.n))}})
	lines, err := c.ndjsonTurn(ctx, op, "/generateA2ui", string(body))
	if err != nil {
		return err
	}
	evs, err := soakParse(lines)
	if err != nil {
		return err
	}
	last := evs[len(evs)-1]
	if last.Type != "result" || last.Result.FinishReason != "stop" {
		return fmt.Errorf("the stream ended with %s", lines[len(lines)-1])
	}
	var created, components bool
	for _, e := range evs {
		created = created || e.CreateSurface != nil
		components = components || e.UpdateComponents != nil
	}
	if !created || !components {
		return errors.New("no createSurface and updateComponents")
	}
	op.turn("ok")
	return nil
}

// 5. A2A message/stream with the A2UI v0.9 extension, to its final status update.
func soakA2A(ctx context.Context, c *soakClient, op *soakOp) error {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": op.n, "method": "message/stream", "params": map[string]any{
		"message": map[string]any{"role": "user", "kind": "message", "messageId": fmt.Sprintf("soak-m-%d", op.n),
			"parts": []any{map[string]any{"kind": "text", "text": fmt.Sprintf("soak a2a %d", op.n)}}}}})
	res, err := c.do(ctx, "/a2a", map[string]string{"X-A2A-Extensions": soakA2UIExtension, "Accept": "text/event-stream"}, string(body))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := soakSSEData(res.Body)
	op.logf("%d %s\n%s", res.StatusCode, res.Header.Get("Content-Type"), strings.Join(data, "\n"))
	if err != nil {
		return err
	}
	if res.StatusCode != 200 {
		return fmt.Errorf("status %d", res.StatusCode)
	}
	var created, components bool
	state := ""
	for i, d := range data {
		var ev struct {
			Result *struct {
				Kind   string `json:"kind"`
				Final  bool   `json:"final"`
				Status struct {
					State string `json:"state"`
				} `json:"status"`
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal([]byte(d), &ev); err != nil || ev.Error != nil || ev.Result == nil {
			return fmt.Errorf("event %d: not a result", i+1)
		}
		created = created || strings.Contains(d, `"createSurface"`)
		components = components || strings.Contains(d, `"updateComponents"`)
		if ev.Result.Final != (i == len(data)-1) {
			return fmt.Errorf("event %d of %d: the final status update must end the stream, once", i+1, len(data))
		}
		if ev.Result.Final {
			state = ev.Result.Status.State
		}
	}
	if state != "input-required" || !created || !components {
		return fmt.Errorf("final state %q, createSurface %v, updateComponents %v", state, created, components)
	}
	op.turn("ok")
	return nil
}

// 6. An AG-UI run to RUN_FINISHED.
func soakAGUI(ctx context.Context, c *soakClient, op *soakOp) error {
	body, _ := json.Marshal(map[string]any{"threadId": fmt.Sprintf("soak-t-%d", op.n), "runId": fmt.Sprintf("soak-r-%d", op.n),
		"messages": []any{map[string]any{"id": "m1", "role": "user", "content": fmt.Sprintf("soak agui %d", op.n)}}})
	res, err := c.do(ctx, "/ag-ui", map[string]string{"Accept": "text/event-stream"}, string(body))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	data, err := soakSSEData(res.Body)
	op.logf("%d %s\n%s", res.StatusCode, res.Header.Get("Content-Type"), strings.Join(data, "\n"))
	if err != nil {
		return err
	}
	if res.StatusCode != 200 || len(data) == 0 {
		return fmt.Errorf("status %d, %d events", res.StatusCode, len(data))
	}
	snapshots := 0
	for i, d := range data {
		var ev struct {
			Type    string `json:"type"`
			Outcome *struct {
				Type string `json:"type"`
			} `json:"outcome"`
		}
		if err := json.Unmarshal([]byte(d), &ev); err != nil {
			return fmt.Errorf("event %d is not JSON", i+1)
		}
		last := i == len(data)-1
		switch {
		case ev.Type == "RUN_ERROR":
			return fmt.Errorf("RUN_ERROR: %s", d)
		case (ev.Type == "RUN_FINISHED") != last:
			return fmt.Errorf("event %d of %d: RUN_FINISHED must end the run, once", i+1, len(data))
		case last && (ev.Outcome == nil || ev.Outcome.Type != "success"):
			return fmt.Errorf("RUN_FINISHED without success: %s", d)
		case ev.Type == "ACTIVITY_SNAPSHOT":
			snapshots++
		}
	}
	if snapshots == 0 {
		return errors.New("no ACTIVITY_SNAPSHOT")
	}
	op.turn("ok")
	return nil
}

// soakRPCMessage is any JSON-RPC message of /ws.
type soakRPCMessage struct {
	ID     any             `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

// soakCall sends a request on /ws and reads up to its response, returning the
// notifications before it.
func soakCall(ctx context.Context, op *soakOp, conn *websocket.Conn, id int, method string, params any) (soakRPCMessage, []soakRPCMessage, error) {
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err := conn.Write(ctx, websocket.MessageText, b); err != nil {
		return soakRPCMessage{}, nil, err
	}
	var before []soakRPCMessage
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return soakRPCMessage{}, before, err
		}
		op.logf("< %s", data)
		var m soakRPCMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return m, before, fmt.Errorf("not JSON: %s", data)
		}
		if m.Method == "" && m.ID == float64(id) {
			if m.Error != nil {
				return m, before, fmt.Errorf("%s: %s", method, m.Error)
			}
			return m, before, nil
		}
		before = append(before, m)
	}
}

// 7. A /ws session on A2UI: initialize, new_session, prompt, its updates, its result.
func soakWS(ctx context.Context, c *soakClient, op *soakOp) error {
	conn, _, err := websocket.Dial(ctx, c.wsURL("/ws"), &websocket.DialOptions{HTTPClient: c.http})
	if err != nil {
		return err
	}
	defer conn.CloseNow()
	conn.SetReadLimit(4 << 20)
	if _, _, err := soakCall(ctx, op, conn, 1, "initialize", map[string]any{"protocol_version": 1}); err != nil {
		return err
	}
	res, _, err := soakCall(ctx, op, conn, 2, "new_session", map[string]any{"cwd": "/tmp", "mcp_servers": []any{}})
	if err != nil {
		return err
	}
	var session struct {
		SessionID string `json:"session_id"`
	}
	if json.Unmarshal(res.Result, &session) != nil || session.SessionID == "" {
		return fmt.Errorf("new_session: %s", res.Result)
	}
	res, updates, err := soakCall(ctx, op, conn, 3, "prompt", map[string]any{"session_id": session.SessionID,
		"prompt": []any{map[string]any{"type": "text", "text": fmt.Sprintf("soak ws %d", op.n)}}})
	if err != nil {
		return err
	}
	var stop struct {
		StopReason string `json:"stop_reason"`
	}
	if json.Unmarshal(res.Result, &stop) != nil || stop.StopReason != "end_turn" {
		return fmt.Errorf("prompt: %s", res.Result)
	}
	created := false
	for i, u := range updates {
		if u.Method != "session_update" {
			return fmt.Errorf("update %d: %s", i+1, u.Method)
		}
		created = created || (strings.Contains(string(u.Params), `"ui_update"`) && strings.Contains(string(u.Params), `"createSurface"`))
	}
	if !created {
		return errors.New("no ui_update with createSurface")
	}
	op.turn("ok")
	return conn.Close(websocket.StatusNormalClosure, "")
}

// soakYieldMessage is any message of /session/{id}.
type soakYieldMessage struct {
	Type   string `json:"type"`
	Effect struct {
		Type   string          `json:"type"`
		Name   string          `json:"name"`
		CallID string          `json:"callId"`
		Event  json.RawMessage `json:"event"`
	} `json:"effect"`
	SessionID string `json:"sessionId"`
	Result    *struct {
		FinishReason string `json:"finishReason"`
	} `json:"result"`
	Message string `json:"message"`
}

// soakUntil reads /session/{id} messages up to one of the given types; an error message,
// or one of another final type, fails.
func soakUntil(ctx context.Context, op *soakOp, conn *websocket.Conn, want string) (soakYieldMessage, []soakYieldMessage, error) {
	var before []soakYieldMessage
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			return soakYieldMessage{}, before, err
		}
		op.logf("< %s", data)
		var m soakYieldMessage
		if err := json.Unmarshal(data, &m); err != nil {
			return m, before, fmt.Errorf("not JSON: %s", data)
		}
		switch {
		case m.Type == want:
			return m, before, nil
		case m.Type == "progress":
			before = append(before, m)
		default:
			return m, before, fmt.Errorf("got %s while waiting for %s", data, want)
		}
	}
}

func soakSend(ctx context.Context, op *soakOp, conn *websocket.Conn, msg string) error {
	op.logf("> %s", msg)
	return conn.Write(ctx, websocket.MessageText, []byte(msg))
}

// 8. An interaction on /session/{id} that yields a client tool's call and resumes with
// its result; every other time, the connection drops at the yield and a new one
// reconnects first.
func soakYield(ctx context.Context, c *soakClient, op *soakOp) error {
	status, _, got, err := c.post(ctx, "/startSession", nil, `{"protocolVersion":"0.1.0","catalog":`+c.catalog+`}`)
	var session struct{ Result string }
	if err != nil || status != 200 || json.Unmarshal([]byte(got), &session) != nil || session.Result == "" {
		return fmt.Errorf("startSession: %d %s %v", status, got, err)
	}
	id := session.Result
	dial := func() (*websocket.Conn, error) {
		conn, _, err := websocket.Dial(ctx, c.wsURL("/session/"+id), &websocket.DialOptions{HTTPClient: c.http})
		if err == nil {
			conn.SetReadLimit(4 << 20)
		}
		return conn, err
	}
	conn, err := dial()
	if err != nil {
		return err
	}
	defer func() { conn.CloseNow() }()
	init, _ := json.Marshal(map[string]any{"type": "init", "graphId": "generateUi", "input": map[string]any{
		"conversation": []any{soakUserText(fmt.Sprintf("soak yield %d: where am I?", op.n))},
		"clientTools":  []any{map[string]any{"name": "getLocation", "description": "The user's city"}}}})
	if err := soakSend(ctx, op, conn, string(init)); err != nil {
		return err
	}
	y, _, err := soakUntil(ctx, op, conn, "yield")
	if err != nil {
		return err
	}
	if y.Effect.Type != "ClientTool" || y.Effect.Name != "getLocation" || y.Effect.CallID == "" || y.SessionID != id {
		return fmt.Errorf("yield: %+v", y)
	}
	op.turn("ok") // the turn that called the tool ended, interrupted
	if op.n%2 == 0 {
		conn.Close(websocket.StatusNormalClosure, "")
		if conn, err = dial(); err != nil {
			return err
		}
		if err := soakSend(ctx, op, conn, `{"type":"reconnect","sessionId":"`+id+`"}`); err != nil {
			return err
		}
		again, _, err := soakUntil(ctx, op, conn, "yield")
		if err != nil {
			return err
		}
		if again.Effect.CallID != y.Effect.CallID {
			return fmt.Errorf("the reconnect yielded call %q, not %q", again.Effect.CallID, y.Effect.CallID)
		}
	}
	if err := soakSend(ctx, op, conn, `{"type":"resume","result":{"type":"success","value":{"city":"Lisbon"}}}`); err != nil {
		return err
	}
	done, progress, err := soakUntil(ctx, op, conn, "done")
	if err != nil {
		return err
	}
	surface := false
	for _, p := range progress {
		surface = surface || strings.Contains(string(p.Effect.Event), `"addOrUpdateSurface"`)
	}
	if done.Result == nil || done.Result.FinishReason != "stop" || !surface {
		return fmt.Errorf("done without a stop and a surface: %+v", done)
	}
	op.turn("ok")
	return conn.Close(websocket.StatusNormalClosure, "")
}

// soakResumeBody is the request of the resume operation, the same every time, so that
// every run of it streams exactly the lines of c.resumeRef.
func (c *soakClient) resumeBody() string {
	return c.turnBody(false, []any{soakUserText("soak resume")}, nil)
}

// 9. An NDJSON turn whose client drops after the first line, then reads the stream again
// by its id: the rest after that line (?after=1), or every other time the whole of it.
func soakResume(ctx context.Context, c *soakClient, op *soakOp) error {
	rctx, drop := context.WithCancel(ctx)
	defer drop()
	res, err := c.do(rctx, "/generateUi", nil, c.resumeBody())
	if err != nil {
		return err
	}
	stream := res.Header.Get("X-Genkit-Stream-Id")
	first, err := bufio.NewReader(res.Body).ReadString('\n')
	drop()
	res.Body.Close()
	op.logf("%d stream %s, first line %s", res.StatusCode, stream, first)
	if err != nil || res.StatusCode != 200 || stream == "" {
		return fmt.Errorf("first line: status %d, %v", res.StatusCode, err)
	}
	first = strings.TrimSuffix(first, "\n")
	path, got := "/generateUi?after=1", []string{first}
	if op.n%2 == 1 {
		path, got = "/generateUi", nil
	}
	res, err = c.do(ctx, path, map[string]string{"X-Genkit-Stream-Id": stream}, "")
	if err != nil {
		return err
	}
	defer res.Body.Close()
	rest, err := soakLines(res.Body)
	op.logf("%s: %d\n%s", path, res.StatusCode, strings.Join(rest, "\n"))
	if err != nil {
		return err
	}
	if res.StatusCode != 200 || res.Header.Get("X-Genkit-Stream-Id") != stream {
		return fmt.Errorf("resuming: status %d, stream %q", res.StatusCode, res.Header.Get("X-Genkit-Stream-Id"))
	}
	got = append(got, rest...)
	if _, err := soakGenui(got, "stop"); err != nil {
		return err
	}
	if !slices.Equal(got, c.resumeRef) {
		return fmt.Errorf("%d lines read, %d in the undisturbed stream:\n%s", len(got), len(c.resumeRef), strings.Join(c.resumeRef, "\n"))
	}
	op.turn("ok")
	return nil
}

// 10. An NDJSON turn cancelled after its first line: its stream ends CANCELLED.
func soakCancel(ctx context.Context, c *soakClient, op *soakOp) error {
	res, err := c.do(ctx, "/generateUi", nil, c.turnBody(false, []any{soakUserText(fmt.Sprintf("soak-slow cancel %d", op.n))}, nil))
	if err != nil {
		return err
	}
	defer res.Body.Close()
	stream := res.Header.Get("X-Genkit-Stream-Id")
	br := bufio.NewReader(res.Body)
	first, err := br.ReadString('\n')
	op.logf("%d stream %s, first line %s", res.StatusCode, stream, first)
	if err != nil || res.StatusCode != 200 || stream == "" {
		return fmt.Errorf("first line: status %d, %v", res.StatusCode, err)
	}
	status, _, got, err := c.post(ctx, "/generateUi/cancel", nil, `{"streamId":"`+stream+`"}`)
	op.logf("cancel: %d %s", status, got)
	if err != nil || status != 200 {
		return fmt.Errorf("cancel: %d %v", status, err)
	}
	rest, err := soakLines(br)
	op.logf("%s", strings.Join(rest, "\n"))
	if err != nil {
		return err
	}
	evs, err := soakParse(append([]string{strings.TrimSuffix(first, "\n")}, rest...))
	if err != nil {
		return err
	}
	if last := evs[len(evs)-1]; last.Type != "error" || last.Error.Status != "CANCELLED" {
		return errors.New("the stream did not end CANCELLED")
	}
	op.turn("CANCELLED")
	return nil
}

// 11. A client tool's round trip in a conversation the server holds.
func soakClientTool(ctx context.Context, c *soakClient, op *soakOp) error {
	conv := fmt.Sprintf("soak-conv-%06d", op.n)
	tools := []any{map[string]any{"name": "getLocation", "description": "The user's city",
		"inputSchema": map[string]any{"type": "object", "properties": map[string]any{}}}}
	lines, err := c.ndjsonTurn(ctx, op, "/generateUi", c.turnBody(false, []any{soakUserText(fmt.Sprintf("soak tool %d: where am I?", op.n))},
		map[string]any{"conversationId": conv, "clientTools": tools}))
	if err != nil {
		return err
	}
	evs, err := soakGenui(lines, "interrupted")
	if err != nil {
		return err
	}
	op.turn("ok")
	callID := ""
	for _, e := range evs {
		if e.Type == "toolCall" && e.Name == "getLocation" {
			callID = e.CallID
		}
	}
	if callID == "" {
		return errors.New("no toolCall line")
	}
	result := map[string]any{"role": "user", "parts": []any{map[string]any{"type": "toolResult", "callId": callID, "name": "getLocation",
		"output": map[string]any{"city": "Berlin"}}}}
	return c.genuiTurnOK(ctx, op, c.turnBody(false, []any{result}, map[string]any{"conversationId": conv}))
}

// 12. A turn whose every model call is rate limited: after the retries it fails
// RESOURCE_EXHAUSTED. The stream has started when the model is called, so the error is
// the stream's last line, not an HTTP status.
func soak429Always(ctx context.Context, c *soakClient, op *soakOp) error {
	lines, err := c.ndjsonTurn(ctx, op, "/generateUi", c.turnBody(false, []any{soakUserText(fmt.Sprintf("soak inject-429-always %d", op.n))}, nil))
	if err != nil {
		return err
	}
	evs, err := soakParse(lines)
	if err != nil {
		return err
	}
	if last := evs[len(evs)-1]; last.Type != "error" || last.Error.Status != "RESOURCE_EXHAUSTED" {
		return errors.New("the stream did not end RESOURCE_EXHAUSTED")
	}
	op.turn("RESOURCE_EXHAUSTED")
	op.injected = "RESOURCE_EXHAUSTED"
	return nil
}

// 13. A turn whose first model call is rate limited: the retry succeeds.
func soak429Once(ctx context.Context, c *soakClient, op *soakOp) error {
	return c.genuiTurnOK(ctx, op, c.turnBody(false, []any{soakUserText(fmt.Sprintf("soak inject-429-once-%d", op.n))}, nil))
}

var soakOps = map[string]func(context.Context, *soakClient, *soakOp) error{
	"ndjson": soakNDJSON, "sse": soakSSE, "json": soakJSON, "a2ui": soakA2UI, "a2a": soakA2A, "agui": soakAGUI,
	"ws": soakWS, "yield": soakYield, "resume": soakResume, "cancel": soakCancel, "clienttool": soakClientTool,
	"429-always": soak429Always, "429-once": soak429Once,
}

// soakRun runs the workers and tallies what they did.
type soakRun struct {
	c      *soakClient
	seq    atomic.Int64
	failed atomic.Bool

	mu       sync.Mutex
	ops      map[string]int           // operations by kind
	took     map[string]time.Duration // their total time, by kind
	slowest  map[string]time.Duration
	injected map[string]int // injected errors by kind and status
	turns    map[string]int // turns the server ran, by status
	failures []string
}

// phase runs the workers until the deadline, or the first unexpected error, and waits for
// the operations in flight.
func (r *soakRun) phase(until time.Time) {
	var wg sync.WaitGroup
	for range soakWorkers {
		wg.Go(func() {
			for time.Now().Before(until) && !r.failed.Load() {
				n := int(r.seq.Add(1) - 1)
				r.one(soakKinds[n%len(soakKinds)], n)
			}
		})
	}
	wg.Wait()
}

func (r *soakRun) one(kind string, n int) {
	ctx, cancel := context.WithTimeout(context.Background(), soakOpTimeout)
	defer cancel()
	op := &soakOp{kind: kind, n: n, turns: map[string]int{}}
	began := time.Now()
	err := soakOps[kind](ctx, r.c, op)
	took := time.Since(began)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ops[kind]++
	r.took[kind] += took
	r.slowest[kind] = max(r.slowest[kind], took)
	for s, k := range op.turns {
		r.turns[s] += k
	}
	if op.injected != "" {
		r.injected[kind+" "+op.injected]++
	}
	if err != nil {
		r.failed.Store(true)
		if len(r.failures) < 5 {
			r.failures = append(r.failures, fmt.Sprintf("operation %s #%d failed after %v: %v\n%s", kind, n, took.Round(time.Millisecond), err, op.out.String()))
		}
	}
}

// soakSample is the server's state when idle.
type soakSample struct {
	goroutines, heap float64
	metrics          string
}

// soakMeasure forces a garbage collection through pprof, then reads /metrics.
func soakMeasure(ctx context.Context, base, pprofAddr string) (soakSample, error) {
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	get := func(u string) (string, error) {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
		res, err := client.Do(req)
		if err != nil {
			return "", err
		}
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		if err == nil && res.StatusCode != 200 {
			err = fmt.Errorf("GET %s: %d", u, res.StatusCode)
		}
		return string(b), err
	}
	if _, err := get("http://" + pprofAddr + "/debug/pprof/heap?gc=1"); err != nil {
		return soakSample{}, err
	}
	m, err := get(base + "/metrics")
	if err != nil {
		return soakSample{}, err
	}
	return soakSample{goroutines: soakMetric(m, "go_goroutines"), heap: soakMetric(m, "go_memstats_heap_inuse_bytes"), metrics: m}, nil
}

// soakMetric sums the samples of a metric, over all its labels; -1 when it has none.
func soakMetric(text, name string) float64 {
	sum, found := 0.0, false
	for _, l := range strings.Split(text, "\n") {
		rest, ok := strings.CutPrefix(l, name)
		if !ok || rest == "" {
			continue
		}
		switch rest[0] {
		case '{':
			rest = rest[strings.LastIndexByte(rest, '}')+1:]
		case ' ':
		default:
			continue // another metric whose name starts with this one
		}
		if fields := strings.Fields(rest); len(fields) > 0 {
			if v, err := strconv.ParseFloat(fields[0], 64); err == nil {
				sum, found = sum+v, true
			}
		}
	}
	if !found {
		return -1
	}
	return sum
}

// soakMetricLabel is one labelled sample, e.g. genui_turns_total{status="ok"}; 0 when absent.
func soakMetricLabel(text, name, labels string) float64 {
	prefix := name + "{" + labels + "} "
	for _, l := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(l, prefix); ok {
			f, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
			return f
		}
	}
	return 0
}

// soakArtifacts is the repository's test-artifacts directory, created if need be.
func soakArtifacts() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
	dir = filepath.Join(dir, "test-artifacts")
	return dir, os.MkdirAll(dir, 0o755)
}

// soakServerProblems is what the server logged at WARN and above, the last lines of it.
func soakServerProblems(r *replica) string {
	var out []string
	for _, l := range strings.Split(logsOf(r), "\n") {
		if strings.Contains(l, "level=WARN") || strings.Contains(l, "level=ERROR") {
			out = append(out, l)
		}
	}
	if len(out) > 60 {
		out = out[len(out)-60:]
	}
	return strings.Join(out, "\n")
}

// TestSoak runs every kind of operation the server serves, many times over, from several
// clients at once, against one replica with Redis and API keys, for -soak (90 s by
// default). Only the injected model rate limits may fail, and exactly as expected. At the
// end the server is back where it was after the warm-up: no goroutine or memory left
// behind, no stream open, and as many turns counted as the clients ran.
func TestSoak(t *testing.T) {
	if testing.Short() {
		t.Skip("skipped under -short: a soak test of the server binary with redis-server")
	}
	rdb := redistest.Start(t)
	model := &soakModel{seen: map[string]bool{}}
	fake := fakegemini.New(fakegemini.WithResponder(model.respond), fakegemini.WithPacing(30*time.Millisecond))
	defer fake.Close()
	pprofAddr := freeAddr(t)
	srv := startReplica(t, fake, rdb, "--api-keys-file", keysFile(t), "--pprof-addr", pprofAddr,
		"--stream-retention", "3s", "--stream-grace", "2s")

	transport := &http.Transport{MaxIdleConnsPerHost: 2 * soakWorkers, IdleConnTimeout: 30 * time.Second}
	defer transport.CloseIdleConnections()
	catalog, _ := schemas.SampleCatalog("basic")
	c := &soakClient{base: srv.base, key: aliceKey, catalog: mustMarshal(catalog), http: &http.Client{Transport: transport}}
	status, _, body := postJSON(t, srv.base+"/startSession", as(aliceKey), `{"protocolVersion":"0.1.0","catalog":`+c.catalog+`}`)
	var session struct{ Result string }
	if status != 200 || json.Unmarshal([]byte(body), &session) != nil || session.Result == "" {
		t.Fatalf("startSession: %d %s", status, body)
	}
	c.session = session.Result

	// The reference of the resume operation: its stream read without interruption.
	status, h, body := postJSON(t, srv.base+"/generateUi", as(aliceKey), c.resumeBody())
	c.resumeRef = strings.Split(strings.TrimSuffix(body, "\n"), "\n")
	if _, err := soakGenui(c.resumeRef, "stop"); status != 200 || h.Get("X-Genkit-Stream-Id") == "" || err != nil {
		t.Fatalf("the undisturbed turn: %d %v\n%s", status, err, body)
	}

	r := &soakRun{c: c, ops: map[string]int{}, took: map[string]time.Duration{}, slowest: map[string]time.Duration{},
		injected: map[string]int{}, turns: map[string]int{"ok": 1}}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf(format+"\n\nserver warnings and errors (the full log follows):\n%s", append(args, soakServerProblems(srv))...)
	}
	measure := func() soakSample {
		t.Helper()
		transport.CloseIdleConnections()
		time.Sleep(soakIdle)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s, err := soakMeasure(ctx, srv.base, pprofAddr)
		if err != nil || s.goroutines < 0 || s.heap < 0 {
			fail("measuring the server: %v (goroutines %v, heap %v)", err, s.goroutines, s.heap)
		}
		return s
	}

	// The warm-up (the first tenth of the run) fills the caches and pools; then the load
	// pauses and the server is measured idle, as it is at the end, so that the two
	// measurements compare like with like.
	dur := *soakDuration
	start := time.Now()
	warmUp := dur / 10
	r.phase(start.Add(warmUp))
	if len(r.failures) > 0 {
		fail("%s", strings.Join(r.failures, "\n\n"))
	}
	warmOps := int(r.seq.Load())
	base := measure()
	t.Logf("warm-up: %d operations in %v; idle: %.0f goroutines, heap in use %.1f MiB", warmOps, warmUp, base.goroutines, base.heap/(1<<20))

	// The load resumes for the rest of the duration (the idle pause not counted).
	r.phase(time.Now().Add(dur - warmUp))
	ran := time.Since(start)
	if len(r.failures) > 0 {
		fail("%s", strings.Join(r.failures, "\n\n"))
	}
	end := measure()
	// Goroutines still winding down (connections closing, timers firing) get a little more
	// time before they count as leaked.
	for deadline := time.Now().Add(soakSettle); end.goroutines > base.goroutines+5 && time.Now().Before(deadline); {
		time.Sleep(time.Second)
		end = measure()
	}

	if dir, err := soakArtifacts(); err != nil {
		t.Logf("no test-artifacts directory: %v", err)
	} else if err := os.WriteFile(filepath.Join(dir, "soak-metrics.txt"), []byte(end.metrics), 0o644); err != nil {
		t.Logf("saving the metrics: %v", err)
	}

	total := 0
	var perKind []string
	for _, k := range soakKinds {
		total += r.ops[k]
		mean := time.Duration(0)
		if r.ops[k] > 0 {
			mean = r.took[k] / time.Duration(r.ops[k])
		}
		perKind = append(perKind, fmt.Sprintf("  %-10s %5d  mean %7v  slowest %v", k, r.ops[k], mean.Round(time.Millisecond), r.slowest[k].Round(time.Millisecond)))
	}
	turns := 0
	for _, k := range r.turns {
		turns += k
	}
	var genuiLines []string
	for _, l := range strings.Split(end.metrics, "\n") {
		if strings.HasPrefix(l, "genui_") && !strings.Contains(l, "_bucket{") {
			genuiLines = append(genuiLines, "  "+l)
		}
	}
	t.Logf("soak: %v (%v of load, %d workers), %d operations, %d turns, %.1f turns/s\noperations by kind:\n%s\nerrors by kind (all injected): %v\nturns by status: %v\ngoroutines: %.0f after warm-up, %.0f at the end\nheap in use: %.1f MiB after warm-up, %.1f MiB at the end\n/metrics (genui_, without buckets):\n%s",
		ran.Round(time.Second), dur, soakWorkers, total, turns, float64(turns)/dur.Seconds(), strings.Join(perKind, "\n"),
		r.injected, r.turns, base.goroutines, end.goroutines, base.heap/(1<<20), end.heap/(1<<20), strings.Join(genuiLines, "\n"))

	var problems []string
	for _, k := range soakKinds {
		if r.ops[k] == 0 {
			problems = append(problems, fmt.Sprintf("no %s operation ran", k))
		}
	}
	// Every injected error is one of the inject-429-always operations, and each of them
	// met it.
	if n, want := r.injected["429-always RESOURCE_EXHAUSTED"], r.ops["429-always"]; n != want || len(r.injected) > 1 {
		problems = append(problems, fmt.Sprintf("injected errors %v, want %d of 429-always RESOURCE_EXHAUSTED", r.injected, want))
	}
	// Goroutines: a few may belong to the measurement itself or to idle connections of the
	// server's own clients (Gemini, Redis), whose pools vary by a connection or two.
	if end.goroutines > base.goroutines+5 {
		problems = append(problems, fmt.Sprintf("goroutines: %.0f at the end, %.0f after the warm-up (at most +5)", end.goroutines, base.goroutines))
	}
	// Heap after a forced GC: bounded caches (sessions, compiled catalogs, held state) keep
	// filling after the warm-up, and allocator fragmentation varies between runs, so half
	// again plus 8 MiB; a leak of per-turn state grows with the run instead (thousands of
	// turns) and overshoots it.
	if end.heap > 1.5*base.heap+8<<20 {
		problems = append(problems, fmt.Sprintf("heap in use: %.1f MiB at the end, %.1f MiB after the warm-up (at most 1.5× + 8 MiB)", end.heap/(1<<20), base.heap/(1<<20)))
	}
	if v := soakMetric(end.metrics, "genui_open_streams"); v != 0 {
		problems = append(problems, fmt.Sprintf("genui_open_streams %v at the end", v))
	}
	if v := soakMetric(end.metrics, "genui_open_connections"); v > 0 {
		problems = append(problems, fmt.Sprintf("genui_open_connections %v at the end", v))
	}
	if v := soakMetric(end.metrics, "genui_waiting_sessions"); v > 0 {
		problems = append(problems, fmt.Sprintf("genui_waiting_sessions %v at the end", v))
	}
	// Turns: every turn reaches the model loop once the request is accepted, whatever its
	// end (genui/turn.go counts it as it returns, genui/stream.go runs it even when the
	// client left), and no operation here is refused before that: the model's 429s come
	// after the stream started. So the server counted exactly the turns the clients ran,
	// by status (the ones that called a client tool and the ones that continued them
	// included); a turn stopped by /generateUi/cancel is counted CANCELLED, as its
	// stream ends.
	for s, want := range r.turns {
		got := soakMetricLabel(end.metrics, "genui_turns_total", `status="`+s+`"`)
		if got != float64(want) {
			problems = append(problems, fmt.Sprintf("genui_turns_total{status=%q} %v, the clients ran %d", s, got, want))
		}
	}
	if got := soakMetric(end.metrics, "genui_turns_total"); got != float64(turns) {
		problems = append(problems, fmt.Sprintf("genui_turns_total %v in all, the clients ran %d", got, turns))
	}
	// Three retries for each inject-429-always turn, one for each inject-429-once turn.
	if got, want := soakMetric(end.metrics, "genui_model_retries_total"), 3*r.ops["429-always"]+r.ops["429-once"]; got != float64(want) {
		problems = append(problems, fmt.Sprintf("genui_model_retries_total %v, want %d", got, want))
	}
	if got, want := soakMetric(end.metrics, "genui_client_tool_calls_total"), r.ops["clienttool"]+r.ops["yield"]; got != float64(want) {
		problems = append(problems, fmt.Sprintf("genui_client_tool_calls_total %v, want %d", got, want))
	}
	if len(problems) > 0 {
		fail("%s", strings.Join(problems, "\n"))
	}
}
