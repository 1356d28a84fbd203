package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genuiserver/genui/genui/mcpapi"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/redistest"
	"github.com/genuiserver/genui/schemas"
)

// byModel is a fake Gemini serving the models a and b, each answering with a text that
// names it; fails, when it reports true for a model, answers that model's calls with a
// 429 whose wait is beyond any retry budget.
func byModel(fails func(model string) bool) *fakegemini.Server {
	return fakegemini.New(fakegemini.WithModels("a", "b"), fakegemini.WithResponder(func(r *fakegemini.Request) fakegemini.Reply {
		if fails != nil && fails(r.Model) {
			return fakegemini.ErrorReply(fakegemini.RateLimited(time.Minute))
		}
		return fakegemini.Respond(fakegemini.Text("served by " + r.Model))
	}))
}

// modelsSince returns the models the fake Gemini was called with since its n-th call.
func modelsSince(fake *fakegemini.Server, n int) []string {
	var out []string
	for _, r := range fake.Requests()[n:] {
		out = append(out, r.Model)
	}
	return out
}

// refusedModel is the message of a request that names googleai/zzz, field being the
// name the request's protocol gives the model.
func refusedModel(field string) string {
	return field + `: "googleai/zzz" is not a model this server lets you choose; expected one of: googleai/a, googleai/b`
}

// A request chooses its model on every transport: the genui and A2UI HTTP APIs, A2A,
// AG-UI, MCP and the WebSocket API. The model named serves the turn, its result's usage
// says so where the protocol carries usage, a model the server does not allow is refused
// in the protocol's own words naming its own field, and a request naming none is served
// by the default model.
func TestRequestChoosesItsModel(t *testing.T) {
	fake := byModel(nil)
	defer fake.Close()
	srv := startServer(t, []string{"GOOGLE_GEMINI_BASE_URL=" + fake.URL(), "GEMINI_API_KEY=k"}, "/readyz",
		"--model", "googleai/a", "--models-allowed", "googleai/b")
	catalog, _ := schemas.SampleCatalog("basic")
	c := mustMarshal(catalog)
	// served checks that the calls since the n-th were one, of the model (a or b); none
	// when model is "".
	served := func(t *testing.T, what string, n int, model string) {
		t.Helper()
		want := []string{model}
		if model == "" {
			want = nil
		}
		if got := modelsSince(fake, n); strings.Join(got, ",") != strings.Join(want, ",") || len(got) != len(want) {
			t.Errorf("%s: the fake Gemini was called for %q; want %q", what, got, want)
		}
	}
	httpRefusal := `{"error":{"status":"INVALID_ARGUMENT","message":` + mustMarshal(refusedModel("model")) + `,"details":{"field":"model"}}}` + "\n"

	t.Run("GET /models", func(t *testing.T) {
		status, _, body := getWith(t, srv.base+"/models", nil)
		if status != 200 || body != `{"default":"googleai/a","models":["googleai/a","googleai/b"]}`+"\n" {
			t.Errorf("%d %s", status, body)
		}
	})

	t.Run("genui and A2UI", func(t *testing.T) {
		for _, tc := range []struct{ path, body string }{
			{"/generateUi", turnBody(c, "hi", `,"model":"googleai/b"`)},
			{"/generateA2ui", `{"model":"googleai/b","conversation":[{"role":"user","parts":[{"type":"text","text":"hi"}]}]}`},
		} {
			n := len(fake.Requests())
			status, _, body := postJSON(t, srv.base+tc.path, nil, tc.body)
			if status != 200 || !strings.Contains(body, "served by b") || !strings.Contains(body, `"modelCalls":1,"model":"googleai/b"}`) {
				t.Errorf("%s naming googleai/b: %d %s", tc.path, status, body)
			}
			served(t, tc.path+" naming googleai/b", n, "b")

			n = len(fake.Requests())
			status, _, body = postJSON(t, srv.base+tc.path, nil, strings.Replace(tc.body, `"googleai/b"`, `"googleai/zzz"`, 1))
			if status != 400 || body != httpRefusal {
				t.Errorf("%s naming googleai/zzz: %d %s\nwant %s", tc.path, status, body, httpRefusal)
			}
			served(t, tc.path+" naming googleai/zzz", n, "")

			n = len(fake.Requests())
			status, _, body = postJSON(t, srv.base+tc.path, nil, strings.Replace(tc.body, `"model":"googleai/b"`, `"model":null`, 1))
			if status != 200 || !strings.Contains(body, "served by a") || !strings.Contains(body, `"modelCalls":1,"model":"googleai/a"}`) {
				t.Errorf("%s naming no model: %d %s", tc.path, status, body)
			}
			served(t, tc.path+" naming no model", n, "a")
		}
	})

	// A2A, 0.3 (message/stream, and message/send) and 1.0 (SendStreamingMessage): the
	// message's metadata.model.
	t.Run("A2A", func(t *testing.T) {
		for _, tc := range []struct{ path, method string }{
			{"/a2a", "message/stream"},
			{"/a2a", "message/send"},
			{"/a2a/v1", "SendStreamingMessage"},
		} {
			what := tc.path + " " + tc.method
			header := map[string]string{}
			if tc.path == "/a2a/v1" {
				header["A2A-Version"] = "1.0"
			}
			params := func(model string) string {
				m := map[string]any{"role": "user", "kind": "message", "messageId": fmt.Sprint(time.Now().UnixNano()), "parts": []any{map[string]any{"kind": "text", "text": "hi"}}}
				if tc.path == "/a2a/v1" {
					m = map[string]any{"role": "ROLE_USER", "messageId": fmt.Sprint(time.Now().UnixNano()), "parts": []any{map[string]any{"text": "hi"}}}
				}
				if model != "" {
					m["metadata"] = map[string]any{"model": model}
				}
				return rpc(tc.method, map[string]any{"message": m})
			}
			for _, step := range []struct{ named, served string }{{"googleai/b", "b"}, {"", "a"}} {
				n := len(fake.Requests())
				status, _, body := postJSON(t, srv.base+tc.path, header, params(step.named))
				if status != 200 || !strings.Contains(body, `"served by `+step.served+`"`) || strings.Contains(body, `"error"`) {
					t.Errorf("%s naming %q: %d %s", what, step.named, status, body)
				}
				served(t, fmt.Sprintf("%s naming %q", what, step.named), n, step.served)
			}
			n := len(fake.Requests())
			status, _, body := postJSON(t, srv.base+tc.path, header, params("googleai/zzz"))
			var refusal struct {
				Error struct {
					Code    int
					Message string
					Data    json.RawMessage
				}
			}
			if err := json.Unmarshal([]byte(sseData(body)), &refusal); err != nil || status != 200 || refusal.Error.Code != -32602 ||
				refusal.Error.Message != refusedModel("message.metadata.model") || !strings.Contains(string(refusal.Error.Data), `"field":"message.metadata.model"`) {
				t.Errorf("%s naming googleai/zzz: %d %s", what, status, body)
			}
			served(t, what+" naming googleai/zzz", n, "")
		}
	})

	// AG-UI: the run input's forwardedProps.model; RUN_FINISHED's usage names the
	// provider and model that served the run.
	t.Run("AG-UI", func(t *testing.T) {
		run := func(props map[string]any) (int, string) {
			in := map[string]any{"threadId": "thread-1", "runId": fmt.Sprint("run-", time.Now().UnixNano()), "messages": []any{map[string]any{"id": "u1", "role": "user", "content": "hi"}},
				"tools": []any{}, "context": []any{}, "state": map[string]any{}, "forwardedProps": props}
			status, _, body := postJSON(t, srv.base+"/ag-ui", nil, mustMarshal(in))
			return status, body
		}
		for _, step := range []struct {
			props  map[string]any
			served string
		}{{map[string]any{"model": "googleai/b"}, "b"}, {map[string]any{}, "a"}, {map[string]any{"model": nil}, "a"}} {
			n := len(fake.Requests())
			status, body := run(step.props)
			finished := sseEvent(body, "RUN_FINISHED")
			if status != 200 || !strings.Contains(body, `"delta":"served by `+step.served+`"`) ||
				!strings.Contains(finished, `"usage":[{"provider":"googleai","model":"`+step.served+`",`) {
				t.Errorf("forwardedProps %v: %d %s", step.props, status, body)
			}
			served(t, fmt.Sprintf("forwardedProps %v", step.props), n, step.served)
		}
		// Refused before the run starts: a 400 whose details name forwardedProps.model.
		n := len(fake.Requests())
		status, body := run(map[string]any{"model": "googleai/zzz"})
		var refusal struct {
			Error struct {
				Status, Message string
				Details         map[string]any
			}
		}
		if err := json.Unmarshal([]byte(body), &refusal); err != nil || status != 400 || refusal.Error.Status != "INVALID_ARGUMENT" ||
			refusal.Error.Message != refusedModel("forwardedProps.model") || len(refusal.Error.Details) != 1 || refusal.Error.Details["field"] != "forwardedProps.model" {
			t.Errorf("forwardedProps.model googleai/zzz: %d %s", status, body)
		}
		served(t, "forwardedProps.model googleai/zzz", n, "")
	})

	// MCP: generate_ui's model argument; the conversation it starts keeps the model.
	t.Run("MCP", func(t *testing.T) {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: srv.base + "/mcp", DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		type output struct {
			ConversationID string `json:"conversationId"`
			Text           string `json:"text"`
		}
		generate := func(args map[string]any) (*mcp.CallToolResult, output) {
			t.Helper()
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpapi.GenerateUI, Arguments: args})
			if err != nil {
				t.Fatalf("generate_ui %v: %v", args, err)
			}
			var out output
			raw, _ := json.Marshal(res.StructuredContent)
			_ = json.Unmarshal(raw, &out)
			return res, out
		}
		var conv string
		for _, step := range []struct {
			args   map[string]any
			cont   bool // continue the conversation of the first step
			served string
		}{
			{map[string]any{"prompt": "hi", "model": "googleai/b"}, false, "b"},
			{map[string]any{"prompt": "hi"}, false, "a"},
			{map[string]any{"prompt": "and again"}, true, "b"}, // the conversation keeps b
		} {
			if step.cont {
				step.args["conversationId"] = conv
			}
			n := len(fake.Requests())
			res, out := generate(step.args)
			if res.IsError || !strings.Contains(out.Text, "served by "+step.served) {
				t.Errorf("generate_ui %v: %s", step.args, mustMarshal(res))
			}
			served(t, fmt.Sprintf("generate_ui %v", step.args), n, step.served)
			if conv == "" {
				conv = out.ConversationID
			}
		}
		n := len(fake.Requests())
		res, _ := generate(map[string]any{"prompt": "hi", "model": "googleai/zzz"})
		var text *mcp.TextContent
		if len(res.Content) == 1 {
			text, _ = res.Content[0].(*mcp.TextContent)
		}
		if !res.IsError || text == nil || text.Text != refusedModel("model") {
			t.Errorf("generate_ui naming googleai/zzz: %s", mustMarshal(res))
		}
		served(t, "generate_ui naming googleai/zzz", n, "")
	})

	// The WebSocket API: new_session's model, then set_session_model's model_id; a
	// session keeps its model from turn to turn.
	t.Run("WebSocket", func(t *testing.T) {
		ws, _, err := websocket.Dial(context.Background(), "ws"+strings.TrimPrefix(srv.base, "http")+"/ws", nil)
		if err != nil {
			t.Fatal(err)
		}
		defer ws.Close(websocket.StatusNormalClosure, "")
		id := 0
		// exchange sends a request and returns its response and every frame up to it.
		exchange := func(method string, params any) (map[string]any, string) {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			id++
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
			if err := ws.Write(ctx, websocket.MessageText, b); err != nil {
				t.Fatal(err)
			}
			var frames strings.Builder
			for {
				_, data, err := ws.Read(ctx)
				if err != nil {
					t.Fatalf("%s: %v after %s", method, err, frames.String())
				}
				frames.Write(data)
				frames.WriteByte('\n')
				var m map[string]any
				_ = json.Unmarshal(data, &m)
				if m["id"] == float64(id) && m["method"] == nil {
					return m, frames.String()
				}
			}
		}
		// refused checks a JSON-RPC error naming googleai/zzz at field.
		refused := func(what string, res map[string]any, field string) {
			t.Helper()
			e, _ := res["error"].(map[string]any)
			data, _ := e["data"].(map[string]any)
			if e == nil || e["code"] != float64(-32602) || e["message"] != refusedModel(field) || data["field"] != field || data["status"] != "INVALID_ARGUMENT" {
				t.Errorf("%s: %v", what, res)
			}
		}
		n := len(fake.Requests())
		res, _ := exchange("new_session", map[string]any{"catalog": catalog, "model": "googleai/zzz"})
		refused("new_session naming googleai/zzz", res, "params.model")
		served(t, "new_session naming googleai/zzz", n, "")

		res, _ = exchange("new_session", map[string]any{"catalog": catalog, "model": "googleai/b"})
		session, _ := res["result"].(map[string]any)["session_id"].(string)
		if session == "" {
			t.Fatalf("new_session: %v", res)
		}
		prompt := func(step string, model string) {
			t.Helper()
			n := len(fake.Requests())
			res, frames := exchange("prompt", map[string]any{"session_id": session, "prompt": []any{map[string]any{"type": "text", "text": "hi"}}})
			if res["error"] != nil || !strings.Contains(frames, "served by "+model) {
				t.Errorf("%s: %s", step, frames)
			}
			served(t, step, n, model)
		}
		prompt("the first turn of a session naming googleai/b", "b")
		prompt("its next turn", "b")
		res, _ = exchange("set_session_model", map[string]any{"session_id": session, "model_id": "googleai/a"})
		if res["error"] != nil {
			t.Fatalf("set_session_model googleai/a: %v", res)
		}
		prompt("a turn after set_session_model googleai/a", "a")
		res, _ = exchange("set_session_model", map[string]any{"session_id": session, "model_id": "googleai/b"})
		if res["error"] != nil {
			t.Fatalf("set_session_model googleai/b: %v", res)
		}
		prompt("a turn after set_session_model googleai/b", "b")
		res, _ = exchange("set_session_model", map[string]any{"session_id": session, "model_id": "googleai/zzz"})
		refused("set_session_model googleai/zzz", res, "params.model_id")
		prompt("a turn after a refused set_session_model", "b")

		res, _ = exchange("new_session", map[string]any{"catalog": catalog})
		other, _ := res["result"].(map[string]any)["session_id"].(string)
		if other == "" {
			t.Fatalf("new_session: %v", res)
		}
		session = other
		prompt("a turn of a session naming no model", "a")
	})
}

// Two replicas on one Redis, --model a fallback chain googleai/a,googleai/b: while a
// answers 429 a turn is served by b, and its usage says so; a held conversation keeps
// the model a request named on one replica for its next turns on the other, while a
// serves again.
func TestChosenModelAcrossReplicas(t *testing.T) {
	rdb := redistest.Start(t)
	var aFails atomic.Bool
	fake := byModel(func(model string) bool { return model == "a" && aFails.Load() })
	defer fake.Close()
	start := func() *replica {
		return startServer(t, []string{"GOOGLE_GEMINI_BASE_URL=" + fake.URL(), "GEMINI_API_KEY=k"}, "/readyz",
			"--model", "googleai/a,googleai/b", "--redis-url", rdb.URL())
	}
	r1, r2 := start(), start()
	catalog, _ := schemas.SampleCatalog("basic")
	c := mustMarshal(catalog)

	if status, _, body := getWith(t, r2.base+"/models", nil); status != 200 || body != `{"default":"googleai/a","models":["googleai/a","googleai/b"]}`+"\n" {
		t.Errorf("GET /models: %d %s", status, body)
	}

	// The chain passes a turn a cannot serve on to b: the result says b served it.
	aFails.Store(true)
	n := len(fake.Requests())
	status, _, body := postJSON(t, r1.base+"/generateUi", nil, turnBody(c, "hi", ""))
	if status != 200 || !strings.Contains(body, `"text":"served by b"`) || !strings.Contains(body, `"modelCalls":1,"model":"googleai/b"}`) {
		t.Fatalf("a turn while a answers 429: %d %s", status, body)
	}
	if got := modelsSince(fake, n); len(got) < 2 || got[0] != "a" || got[len(got)-1] != "b" || strings.Count(strings.Join(got, ","), "b") != 1 {
		t.Errorf("the fake Gemini was called for %q; want a, then b once", got)
	}

	// A held conversation, a serving again: the model the last turn named stays with the
	// conversation, on either replica.
	aFails.Store(false)
	for i, step := range []struct {
		on            *replica
		named, served string
	}{
		{r1, "", "a"},
		{r2, "googleai/b", "b"},
		{r1, "", "b"},
		{r2, "", "b"},
		{r1, "googleai/a", "a"},
		{r2, "", "a"},
	} {
		extra := `,"conversationId":"choose-conv-1"`
		if step.named != "" {
			extra += `,"model":"` + step.named + `"`
		}
		n := len(fake.Requests())
		status, _, body := postJSON(t, step.on.base+"/generateUi", nil, turnBody(c, fmt.Sprint("turn ", i+1), extra))
		if status != 200 || !strings.Contains(body, `"text":"served by `+step.served+`"`) || !strings.Contains(body, `"modelCalls":1,"model":"googleai/`+step.served+`"}`) {
			t.Fatalf("turn %d naming %q: %d %s", i+1, step.named, status, body)
		}
		reqs := fake.Requests()[n:]
		if len(reqs) != 1 || reqs[0].Model != step.served {
			t.Fatalf("turn %d naming %q: the fake Gemini was called for %q; want [%s]", i+1, step.named, modelsSince(fake, n), step.served)
		}
		// The model read the whole conversation: the turns before, held in Redis.
		if got := len(reqs[0].Contents()); got != 2*i+1 {
			t.Fatalf("turn %d: the model read %d messages; want %d", i+1, got, 2*i+1)
		}
	}
}

// sseData returns the data of the first event of an SSE body, or the body when it is
// not SSE.
func sseData(body string) string {
	for _, line := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			return d
		}
	}
	return body
}

// sseEvent returns the data of the first event of an SSE body whose type is typ.
func sseEvent(body, typ string) string {
	for _, line := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(d, `"type":"`+typ+`"`) {
			return d
		}
	}
	return ""
}
