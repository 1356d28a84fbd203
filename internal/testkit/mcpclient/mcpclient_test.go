package mcpclient

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/durable"
	"github.com/genuiserver/genui/genui/mcpapi"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/internal/testkit/leaktest"
	"github.com/genuiserver/genui/internal/testkit/nodetest"
	"github.com/genuiserver/genui/internal/testkit/redistest"
	"github.com/genuiserver/genui/internal/testkit/servetest"
)

func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

// TestTypeScriptSDKOnTwoReplicas runs replicas.test.mjs: the official TypeScript MCP SDK
// discovers /mcp, starts a conversation on one replica and continues it on the other,
// both holding conversations and streams in the same Redis; then every A2UI message of
// every tool result is checked against the specification's schemas, and the model is
// seen to get the first replica's turn in the second replica's history.
func TestTypeScriptSDKOnTwoReplicas(t *testing.T) {
	node := nodetest.Require(t, "@modelcontextprotocol/sdk")
	rdb := redistest.Start(t)
	fake := fakegemini.New(fakegemini.WithPacing(5*time.Millisecond), fakegemini.WithResponder(func(r *fakegemini.Request) fakegemini.Reply {
		if strings.Contains(r.LastUserText(), "a sign-up form") {
			return fakegemini.Reply{Chunks: fakegemini.TextChunks(a2uitest.FormResponse, 10)}
		}
		return fakegemini.Reply{Chunks: fakegemini.TextChunks("Done.\n```a2ui\n"+
			`{"updateComponents":{"surfaceId":"form","components":[{"id":"title","component":"Text","text":"Join us today","variant":"h2"}]}}`+"\n```\n", 4)}
	}))
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	replica := func() string {
		client := rdb.Client(t)
		svc := servetest.Service(t, servetest.PacedModel,
			genui.WithConversations(conversation.NewRedis(client, time.Hour)),
			genui.WithStreams(durable.NewRedisLog(client, time.Minute)))
		m := mcpapi.New(svc, mcpapi.WithLogger(servetest.Quiet), mcpapi.WithTurns(mcpapi.NewRedisTurns(client, "genui:")))
		return servetest.Serve(t, svc, m.Routes()...).URL + "/"
	}
	a, b := replica(), replica()
	record := filepath.Join(t.TempDir(), "record.json")
	nodetest.Run(t, node, []string{"GENUI_A=" + a, "GENUI_B=" + b, "MCP_RECORD=" + record}, "replicas.test.mjs")

	raw, err := os.ReadFile(record)
	if err != nil {
		t.Fatal(err)
	}
	var results []struct {
		Name   string `json:"name"`
		Result struct {
			IsError           bool `json:"isError"`
			StructuredContent struct {
				Messages []json.RawMessage `json:"messages"`
			} `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(raw, &results); err != nil || len(results) != 3 {
		t.Fatalf("record: %v, %d results", err, len(results))
	}
	v := a2uitest.New(t, "v0.9", nil)
	n := 0
	for _, r := range results {
		for _, m := range r.Result.StructuredContent.Messages {
			v.CheckAll(t, m)
			n++
		}
	}
	// The second replica's model call had the first replica's turn in its history.
	reqs := fake.Requests()
	if len(reqs) != 3 || len(reqs[1].Contents()) < 3 {
		t.Fatalf("%d model calls; the second had %d contents", len(reqs), len(reqs[1].Contents()))
	}
	t.Logf("%d A2UI messages in %d tool results, valid; the conversation went on across the replicas", n, len(results))
}
