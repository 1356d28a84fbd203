package main

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/genui/mcpapi"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/redistest"
)

// MCP across two replicas on a Redis Cluster: the app, talking to one replica, follows
// a generate_ui turn that runs on the other (ui_stream finds it through Redis), and the
// conversation started on one continues on the other.
func TestMCPAcrossReplicas(t *testing.T) {
	rdb := redistest.StartCluster(t, 3, 1)
	fake := fakegemini.New(fakegemini.WithPacing(40*time.Millisecond), fakegemini.WithResponder(func(r *fakegemini.Request) fakegemini.Reply {
		if strings.Contains(r.LastUserText(), "a sign-up form") {
			return fakegemini.Reply{Chunks: fakegemini.TextChunks(a2uitest.FormResponse, 20)}
		}
		return fakegemini.Reply{Chunks: fakegemini.TextChunks("Done.\n```a2ui\n"+
			`{"updateComponents":{"surfaceId":"form","components":[{"id":"title","component":"Text","text":"Join us today","variant":"h2"}]}}`+"\n```\n", 4)}
	}))
	defer fake.Close()
	a, b := startReplica(t, fake, rdb), startReplica(t, fake, rdb)
	connect := func(base string) *mcp.ClientSession {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(),
			&mcp.StreamableClientTransport{Endpoint: base + "/mcp", DisableStandaloneSSE: true}, nil)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cs.Close() })
		return cs
	}
	ca, cb := connect(a.base), connect(b.base)
	structured := func(res *mcp.CallToolResult, err error, v any) {
		t.Helper()
		if err != nil || res.IsError {
			t.Fatalf("%v %+v", err, res)
		}
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, v); err != nil {
			t.Fatal(err)
		}
	}
	type turn struct {
		ConversationID string            `json:"conversationId"`
		StreamID       string            `json:"streamId"`
		Messages       []json.RawMessage `json:"messages"`
	}

	args := map[string]any{"prompt": "a sign-up form"}
	done := make(chan turn, 1)
	go func() {
		res, err := ca.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpapi.GenerateUI, Arguments: args})
		var out turn
		if err == nil && !res.IsError {
			raw, _ := json.Marshal(res.StructuredContent)
			json.Unmarshal(raw, &out)
		}
		done <- out
	}()
	var streamed []json.RawMessage
	var streamID string
	for cursor, polls := 0, 0; ; polls++ {
		if polls > 100 {
			t.Fatal("ui_stream on the other replica never saw the turn end")
		}
		var out struct {
			StreamID string            `json:"streamId"`
			Messages []json.RawMessage `json:"messages"`
			Cursor   int               `json:"cursor"`
			Done     bool              `json:"done"`
		}
		res, err := cb.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpapi.UIStream,
			Arguments: map[string]any{"prompt": args["prompt"], "after": cursor, "waitMs": 5000}})
		structured(res, err, &out)
		streamed, streamID, cursor = append(streamed, out.Messages...), out.StreamID, out.Cursor
		if out.Done {
			break
		}
	}
	got := <-done
	// The result hands the turn over whole: the final state of what streamed.
	if got.ConversationID == "" || got.StreamID != streamID || !sameFinal(streamed, got.Messages) {
		t.Fatalf("the turn on A: %s, %d messages; followed on B: %s, %d messages", got.StreamID, len(got.Messages), streamID, len(streamed))
	}

	var next turn
	res, err := cb.CallTool(context.Background(), &mcp.CallToolParams{Name: mcpapi.GenerateUI,
		Arguments: map[string]any{"prompt": "make it friendlier", "conversationId": got.ConversationID}})
	structured(res, err, &next)
	if next.ConversationID != got.ConversationID || len(next.Messages) != 1 || !strings.Contains(string(next.Messages[0]), "Join us today") {
		t.Fatalf("continued on B: %+v", next)
	}
}

// sameFinal reports whether msgs are the final state of what streamed.
func sameFinal(streamed, msgs []json.RawMessage) bool {
	want, _ := json.Marshal(a2ui.Final(a2ui.V09, streamed))
	got, _ := json.Marshal(msgs)
	var x, y any
	return json.Unmarshal(want, &x) == nil && json.Unmarshal(got, &y) == nil && reflect.DeepEqual(x, y)
}
