package genui_test

import (
	"context"
	"testing"
	"time"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/quota"
	"github.com/genuiserver/genui/schemas"
)

var (
	alice = auth.NewContext(context.Background(), auth.Caller{ID: "key:alice", Method: auth.MethodAPIKey})
	bob   = auth.NewContext(context.Background(), auth.Caller{ID: "key:bob", Method: auth.MethodAPIKey})
)

// What one caller creates is, to another, what an id that never existed is: sessions,
// streams, conversations and the sessions of the WebSocket transports.
func TestCallersAreKeptApart(t *testing.T) {
	release := make(chan struct{})
	m := &script{calls: []scripted{
		{parts: texts("one", "two"), wait: release},
		{parts: texts("alice's first.")},
		{parts: texts("bob's first.")},
	}}
	svc := newService(t, m)

	// Sessions.
	sid, err := svc.StartSession(alice, &schemas.StartSessionRequest{ProtocolVersion: "0.1.0", Catalog: request(t).Catalog})
	if err != nil {
		t.Fatal(err)
	}
	req := request(t)
	req.Catalog, req.SessionID = nil, sid
	theirs := genui.AsError(svcErr(svc.Stream(bob, req)))
	req.SessionID = "AAAAAAAAAAAAAAAAAAAAAA"
	never := genui.AsError(svcErr(svc.Stream(bob, req)))
	if theirs == nil || never == nil || theirs.Status != genui.StatusNotFound || theirs.Message != never.Message {
		t.Fatalf("bob with alice's session: %v; with an unknown one: %v", theirs, never)
	}

	// Streams: bob can neither read nor cancel alice's.
	st, err := svc.Stream(alice, request(t))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan []genui.Item)
	go func() { done <- readAll(t, st) }()
	if _, err := svc.Resume(bob, st.ID(), 0); genui.AsError(err).Status != genui.StatusNotFound {
		t.Fatalf("bob resuming alice's stream: %v", err)
	}
	if err := svc.Cancel(bob, st.ID()); genui.AsError(err).Status != genui.StatusNotFound {
		t.Fatalf("bob cancelling alice's stream: %v", err)
	}
	r, err := svc.Resume(alice, st.ID(), 0)
	if err != nil {
		t.Fatalf("alice resuming her stream: %v", err)
	}
	r.Close()
	close(release)
	if items := <-done; items[len(items)-1].Err != nil {
		t.Fatalf("alice's turn ended with %v", items[len(items)-1].Err)
	}

	// Conversations: one name, two conversations.
	for _, ctx := range []context.Context{alice, bob} {
		req := request(t)
		req.ConversationID = "same-name-1"
		if _, err := svc.Generate(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(m.reqs[2].Messages); n != 1 {
		t.Fatalf("bob's first turn read %d messages: alice's conversation", n)
	}

	// Sessions of the WebSocket transports.
	spec := &genui.SessionSpec{Generate: &schemas.GenerateRequest{Catalog: request(t).Catalog}}
	if err := svc.OpenSession(alice, "ws-session-1", spec); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SessionWaits(bob, "ws-session-1"); genui.AsError(err).Status != genui.StatusNotFound {
		t.Fatalf("bob reading alice's session: %v", err)
	}
	if err := svc.CloseSession(bob, "ws-session-1", time.Time{}); genui.AsError(err).Status != genui.StatusNotFound {
		t.Fatalf("bob closing alice's session: %v", err)
	}
	if _, err := svc.SessionWaits(alice, "ws-session-1"); err != nil {
		t.Fatalf("alice's session: %v", err)
	}
}

func svcErr(_ *genui.Stream, err error) error { return err }

// Limits: over one, a RESOURCE_EXHAUSTED error naming the limit and when to retry; each
// caller counted apart.
func TestQuota(t *testing.T) {
	release := make(chan struct{})
	m := &script{calls: []scripted{{parts: texts("held"), wait: release}, {parts: texts("ok")}, {parts: texts("ok")}, {parts: texts("ok")}, {parts: texts("ok")}}}
	owner := func(ctx context.Context) string { return auth.FromContext(ctx).LimitKey() }
	svc := newService(t, m, genui.WithQuota(quota.New(quota.Limits{Streams: 1, Catalogs: 1, Sessions: 1, Conversations: 1})),
		genui.WithConversations(conversation.NewMemory(100, 0, time.Hour, conversation.WithCallerLimit(1, owner))))
	st, err := svc.Stream(alice, request(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Stream(alice, request(t))
	if e := genui.AsError(err); e == nil || e.Status != genui.StatusResourceExhausted || e.RetryAfter <= 0 || e.Details.(map[string]any)["limit"] != "streams" {
		t.Fatalf("a second stream at once: %v", err)
	}
	// Bob has limits of his own; his catalog is alice's, already compiled, so it is no
	// new catalog.
	other, err := svc.Stream(bob, request(t))
	if err != nil {
		t.Fatalf("bob's stream: %v", err)
	}
	other.Close()
	close(release)
	readAll(t, st)
	// The stream's end freed its place.
	if _, err := svc.Generate(alice, request(t)); err != nil {
		t.Fatalf("after the stream: %v", err)
	}
	// A new catalog: one an hour.
	req := request(t)
	req.Catalog = schemas.CatalogOf(map[string]any{"type": "object", "properties": map[string]any{"widgets": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{"widget": map[string]any{"anyOf": []any{
		map[string]any{"type": "object", "properties": map[string]any{"Note": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}}, "required": []any{"Note"}},
	}}}}}}})
	if _, err := svc.StartSession(bob, &schemas.StartSessionRequest{ProtocolVersion: "0.1.0", Catalog: req.Catalog}); err != nil {
		t.Fatalf("bob's first new catalog: %v", err)
	}
	req.Catalog = schemas.CatalogOf(map[string]any{"type": "object", "properties": map[string]any{"widgets": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{"widget": map[string]any{"anyOf": []any{
		map[string]any{"type": "object", "properties": map[string]any{"Memo": map[string]any{"type": "object", "properties": map[string]any{"text": map[string]any{"type": "string"}}}}, "required": []any{"Memo"}},
	}}}}}}})
	_, err = svc.StartSession(bob, &schemas.StartSessionRequest{ProtocolVersion: "0.1.0", Catalog: req.Catalog})
	if e := genui.AsError(err); e == nil || e.Status != genui.StatusResourceExhausted || e.Details.(map[string]any)["limit"] != "catalogs" || e.Details.(map[string]any)["field"] != "catalog" {
		t.Fatalf("bob's second new catalog: %v", err)
	}
	// New sessions: one an hour; bob's first startSession counted one.
	_, err = svc.StartSession(bob, &schemas.StartSessionRequest{ProtocolVersion: "0.1.0", Catalog: request(t).Catalog})
	if e := genui.AsError(err); e == nil || e.Status != genui.StatusResourceExhausted || e.RetryAfter <= 0 || e.Details.(map[string]any)["limit"] != "sessions" {
		t.Fatalf("bob's second new session: %v", err)
	}
	// Stored conversations: one at once. Bob's first held conversation is stored; a
	// second is refused, while the first may go on; alice has her own.
	req = request(t)
	req.ConversationID = "bob-conv-1"
	if _, err := svc.Generate(bob, req); err != nil {
		t.Fatalf("bob's first conversation: %v", err)
	}
	req.ConversationID = "bob-conv-2"
	_, err = svc.Generate(bob, req)
	if e := genui.AsError(err); e == nil || e.Status != genui.StatusResourceExhausted || e.RetryAfter <= 0 ||
		e.Details.(map[string]any)["limit"] != "conversations" || e.Details.(map[string]any)["field"] != "conversationId" {
		t.Fatalf("bob's second stored conversation: %v", err)
	}
	req = request(t)
	req.ConversationID = "bob-conv-1"
	req.Conversation = append(req.Conversation, schemas.Message{Role: "model", Parts: []schemas.Part{{Type: schemas.PartText, Text: "ok"}}},
		schemas.Message{Role: "user", Parts: []schemas.Part{{Type: schemas.PartText, Text: "more"}}})
	req.Conversation = req.Conversation[len(req.Conversation)-1:]
	if _, err := svc.Generate(bob, req); err != nil {
		t.Fatalf("bob's first conversation, continued: %v", err)
	}
	req.ConversationID = "alice-conv-1"
	if _, err := svc.Generate(alice, req); err != nil {
		t.Fatalf("alice's first conversation: %v", err)
	}
	// A session that was never opened is unknown, not over the limit.
	if _, err := svc.AwaitAction(bob, "no-such-session-1", []string{"s1"}); genui.AsError(err).Status != genui.StatusNotFound {
		t.Fatalf("AwaitAction of an unknown session over the limit: %v", err)
	}
}
