package genui_test

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/testkit/redistest"
	"github.com/genuiserver/genui/schemas"
)

const convID = "conv-test-0001"

func heldRequest(t *testing.T, parts ...schemas.Part) *schemas.GenerateRequest {
	req := request(t)
	req.ConversationID = convID
	req.Conversation = []schemas.Message{{Role: "user", Parts: parts}}
	return req
}

func text(s string) schemas.Part { return schemas.Part{Type: "text", Text: s} }

func resultPart(id, name, output string) schemas.Part {
	return schemas.Part{Type: "toolResult", CallID: id, Name: name, Output: json.RawMessage(output)}
}

// stored reads what the store holds of a conversation.
func stored(t *testing.T, s conversation.Store, id string) *conversation.State {
	t.Helper()
	st, h, err := s.Begin(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	h.Release()
	return st
}

func lines(b []byte) []string {
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

// generate runs a turn and returns its result or error.
func generate(t *testing.T, svc *genui.Service, req *schemas.GenerateRequest) (*schemas.Result, *genui.Error) {
	t.Helper()
	res, err := svc.Generate(context.Background(), req)
	if err != nil {
		return nil, genui.AsError(err)
	}
	return res, nil
}

func callsOf(r *schemas.Result) []string {
	var ids []string
	for _, c := range r.Message.Content {
		if c.ToolRequest != nil {
			ids = append(ids, c.ToolRequest.Ref)
		}
	}
	return ids
}

// The server keeps the history: each turn appends what the request added and what the
// client received, once; the model reads the whole.
func TestHeldConversationHistory(t *testing.T) {
	store := conversation.NewMemory(100, 0, time.Hour)
	m := &script{calls: []scripted{
		{parts: []*ai.Part{ai.NewTextPart("Here."), surfacePart}},
		{parts: texts("Again.")},
	}}
	svc := newService(t, m, genui.WithConversations(store))
	if _, e := generate(t, svc, heldRequest(t, text("hi"))); e != nil {
		t.Fatal(e)
	}
	st := stored(t, store, convID)
	want := []string{
		`{"role":"user","parts":[{"type":"text","text":"hi"}]}`,
		`{"role":"model","parts":[{"type":"text","text":"Here."},{"type":"ui","definition":{"surfaceId":"s1","root":"t","widgets":[{"id":"t","widget":{"Text":{"text":"Looking…"}}}]}}]}`,
	}
	if st.Kind != "genui" || strings.Join(lines(st.History), "\n") != strings.Join(want, "\n") || st.Pending != nil {
		t.Fatalf("after one turn: %q %q %q", st.Kind, st.History, st.Pending)
	}
	if _, e := generate(t, svc, heldRequest(t, text("again"))); e != nil {
		t.Fatal(e)
	}
	// The model read the history and the new message.
	msgs := m.reqs[1].Messages
	if len(msgs) != 4 || msgs[0].Text() != "hi" || msgs[1].Role != ai.RoleModel || msgs[2].Role != ai.RoleTool || msgs[3].Text() != "again" {
		b, _ := json.Marshal(msgs)
		t.Fatalf("the model read %s", b)
	}
	if st := stored(t, store, convID); len(lines(st.History)) != 4 {
		t.Fatalf("after two turns: %q", st.History)
	}
}

// A call waits in the store: the next request sends only its result.
func TestHeldConversationToolRoundTrip(t *testing.T) {
	store := conversation.NewMemory(100, 0, time.Hour)
	m := &script{calls: []scripted{
		{parts: []*ai.Part{ai.NewTextPart("Looking."), callPart("getLocation", map[string]any{"precise": true}), callPart("confirm", map[string]any{})}},
		{parts: texts("Berlin, confirmed.")},
	}}
	svc := newService(t, m, genui.WithConversations(store))
	req := heldRequest(t, text("where am I?"))
	req.ClientTools = []schemas.ClientTool{locationTool, {Name: "confirm"}}
	res, e := generate(t, svc, req)
	if e != nil {
		t.Fatal(e)
	}
	ids := callsOf(res)
	if len(ids) != 2 || !strings.HasSuffix(ids[0], "."+strings.SplitN(ids[1], ".", 2)[1]) {
		t.Fatalf("calls %v", ids)
	}
	if st := stored(t, store, convID); !bytes.Contains(st.Pending, []byte(ids[0])) || !bytes.Contains(st.History, []byte(`"type":"toolCall"`)) {
		t.Fatalf("stored %q %q", st.History, st.Pending)
	}

	// One result: nothing for the model yet; the other is still awaited.
	res, e = generate(t, svc, heldRequest(t, resultPart(ids[1], "confirm", `true`)))
	if e != nil {
		t.Fatal(e)
	}
	if res.FinishReason != "interrupted" || res.Usage.ModelCalls != 0 || strings.Join(callsOf(res), ",") != ids[0] || len(m.reqs) != 1 {
		t.Fatalf("after one of two results: %+v, %d model calls", res, len(m.reqs))
	}
	// The same result again is a conflict, and changes nothing.
	if _, e := generate(t, svc, heldRequest(t, resultPart(ids[1], "confirm", `false`))); e == nil || e.Status != genui.StatusAborted ||
		e.Details.(map[string]any)["field"] != "conversation[0].parts[0].callId" || !strings.Contains(e.Message, "answered already") {
		t.Fatalf("a second result: %+v", e)
	}
	// The last result: the model sees both, paired with its calls, in one message.
	res, e = generate(t, svc, heldRequest(t, resultPart(ids[0], "getLocation", `{"city":"Berlin"}`)))
	if e != nil {
		t.Fatal(e)
	}
	if res.FinishReason != "stop" || len(m.reqs) != 2 {
		t.Fatalf("continued: %+v", res)
	}
	msgs := m.reqs[1].Messages
	tool := msgs[len(msgs)-1]
	b, _ := json.Marshal(tool)
	if tool.Role != ai.RoleTool || len(tool.Content) != 2 || !strings.Contains(string(b), `"output":{"city":"Berlin"}`) || !strings.Contains(string(b), `"output":true`) ||
		tool.Content[0].ToolResponse.Ref != ids[0] || tool.Content[1].ToolResponse.Ref != ids[1] {
		t.Fatalf("the model's responses: %s", b)
	}
	st := stored(t, store, convID)
	if st.Pending != nil || len(lines(st.History)) != 4 {
		t.Fatalf("after the round trip: %q %q", st.History, st.Pending)
	}
	// Answered calls stay answered.
	if _, e := generate(t, svc, heldRequest(t, resultPart(ids[0], "getLocation", `{}`))); e == nil || e.Status != genui.StatusAborted {
		t.Fatalf("a result for an answered call: %+v", e)
	}
	if st2 := stored(t, store, convID); !bytes.Equal(st2.History, st.History) {
		t.Fatal("a conflict changed the history")
	}
}

// A new user message while calls wait answers them "not answered".
func TestNewMessageAnswersPendingCalls(t *testing.T) {
	store := conversation.NewMemory(100, 0, time.Hour)
	m := &script{calls: []scripted{
		{parts: []*ai.Part{callPart("getLocation", map[string]any{"precise": true})}},
		{parts: texts("Fine.")},
	}}
	svc := newService(t, m, genui.WithConversations(store))
	req := heldRequest(t, text("where am I?"))
	req.ClientTools = []schemas.ClientTool{locationTool}
	if _, e := generate(t, svc, req); e != nil {
		t.Fatal(e)
	}
	if _, e := generate(t, svc, heldRequest(t, text("never mind"))); e != nil {
		t.Fatal(e)
	}
	msgs := m.reqs[1].Messages
	b, _ := json.Marshal(msgs[len(msgs)-2:])
	if msgs[len(msgs)-2].Role != ai.RoleTool || !strings.Contains(string(b), "not answered") || msgs[len(msgs)-1].Text() != "never mind" {
		t.Fatalf("the model read %s", b)
	}
}

// Results for calls the conversation never made: 409 for a call of another
// conversation, 400 for an unknown one; a model message while calls wait is a 400.
func TestForeignAndUnknownResults(t *testing.T) {
	store := conversation.NewMemory(100, 0, time.Hour)
	m := &script{calls: []scripted{
		{parts: []*ai.Part{callPart("getLocation", map[string]any{"precise": true})}},
		{parts: []*ai.Part{callPart("getLocation", map[string]any{"precise": true})}},
	}}
	svc := newService(t, m, genui.WithConversations(store))
	var ids []string
	for _, id := range []string{convID, "conv-test-other"} {
		req := heldRequest(t, text("where?"))
		req.ConversationID = id
		req.ClientTools = []schemas.ClientTool{locationTool}
		res, e := generate(t, svc, req)
		if e != nil {
			t.Fatal(e)
		}
		ids = append(ids, callsOf(res)...)
	}
	before := stored(t, store, convID)
	if _, e := generate(t, svc, heldRequest(t, resultPart(ids[1], "getLocation", `{}`))); e == nil || e.Status != genui.StatusAborted || !strings.Contains(e.Message, "another conversation") {
		t.Fatalf("a result for another conversation's call: %+v", e)
	}
	for _, unknown := range []string{"nope", "my.call.id", "a.b", strings.Repeat("x", 22) + ".short"} {
		if _, e := generate(t, svc, heldRequest(t, resultPart(unknown, "getLocation", `{}`))); e == nil || e.Status != genui.StatusInvalidArgument || !strings.Contains(e.Message, `no call "`+unknown+`"`) {
			t.Fatalf("a result for an unknown call %q: %+v", unknown, e)
		}
	}
	req := heldRequest(t, text("x"))
	req.Conversation = []schemas.Message{{Role: "model", Parts: []schemas.Part{text("x")}}, {Role: "user", Parts: []schemas.Part{text("y")}}}
	if _, e := generate(t, svc, req); e == nil || e.Status != genui.StatusInvalidArgument || e.Details.(map[string]any)["field"] != "conversation[0].role" {
		t.Fatalf("a model message while calls wait: %+v", e)
	}
	if after := stored(t, store, convID); !bytes.Equal(after.History, before.History) || !bytes.Equal(after.Pending, before.Pending) {
		t.Fatal("a refused request changed the conversation")
	}
}

// One turn at a time: a second concurrent turn is a 409 naming conversationId; the
// conversation is free again the moment the first turn's result is read.
func TestConcurrentTurnIsAConflict(t *testing.T) {
	release := make(chan struct{})
	m := &script{calls: []scripted{{parts: texts("slow", "done"), wait: release}, {parts: texts("next")}}}
	svc := newService(t, m)
	st, err := svc.Stream(context.Background(), heldRequest(t, text("one")))
	if err != nil {
		t.Fatal(err)
	}
	_, e := generate(t, svc, heldRequest(t, text("two")))
	if e == nil || e.Status != genui.StatusAborted || e.Details.(map[string]any)["field"] != "conversationId" {
		t.Fatalf("a concurrent turn: %+v", e)
	}
	close(release)
	var next *genui.Error
	err = st.Each(context.Background(), func(it genui.Item) error {
		if it.Final() {
			// A client sends its next request the moment the stream ends.
			_, next = generate(t, svc, heldRequest(t, text("three")))
		}
		return nil
	})
	st.Close()
	if err != nil || next != nil {
		t.Fatalf("the request right after the result: %v %+v", err, next)
	}
}

// A turn that fails appends nothing: the same request can be sent again.
func TestFailedTurnAppendsNothing(t *testing.T) {
	store := conversation.NewMemory(100, 0, time.Hour)
	m := &script{calls: []scripted{
		{err: &genui.Error{Status: genui.StatusInvalidArgument, Message: "model says no"}},
		{parts: texts("ok")},
	}}
	svc := newService(t, m, genui.WithConversations(store))
	if _, e := generate(t, svc, heldRequest(t, text("hi"))); e == nil {
		t.Fatal("want an error")
	}
	if st := stored(t, store, convID); st.History != nil || st.Kind != "" {
		t.Fatalf("a failed turn stored %q", st.History)
	}
	if _, e := generate(t, svc, heldRequest(t, text("hi"))); e != nil {
		t.Fatal(e)
	}
	if st := stored(t, store, convID); len(lines(st.History)) != 2 {
		t.Fatalf("after the retry: %q", st.History)
	}
}

// A conversation belongs to the endpoint that started it.
func TestHeldConversationKind(t *testing.T) {
	m := &script{calls: []scripted{{parts: texts("ok")}}}
	svc := newService(t, m)
	if _, e := generate(t, svc, heldRequest(t, text("hi"))); e != nil {
		t.Fatal(e)
	}
	req := a2uiRequest("hi")
	req.ConversationID = convID
	_, err := svc.GenerateA2UI(context.Background(), req)
	if e := genui.AsError(err); e.Status != genui.StatusInvalidArgument || !strings.Contains(e.Message, "belongs to /generateUi") {
		t.Fatalf("an A2UI turn of a genui conversation: %+v", e)
	}
}

// An A2UI conversation's history keeps what the client received, compacted.
func TestHeldA2UIHistoryIsCompacted(t *testing.T) {
	store := conversation.NewMemory(100, 0, time.Hour)
	m := &script{calls: []scripted{{parts: helloSurface}, {parts: texts("ok")}}}
	svc := newService(t, m, genui.WithConversations(store))
	req := a2uiRequest("hello")
	req.ConversationID = convID
	st, err := svc.StreamA2UI(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var received [][]byte
	for _, it := range readAll(t, st) {
		if it.Event != nil && it.Event.Type == schemas.EventA2UI {
			received = append(received, it.Event.A2UI)
		}
	}
	held := stored(t, store, convID)
	ls := lines(held.History)
	if held.Kind != "a2ui/v0.9" || len(ls) != 2 || len(received) != 3 {
		t.Fatalf("%d messages received; stored %q", len(received), held.History)
	}
	// Each run of A2UI messages is kept as the model reads it: each component once, in
	// its shortest form (the version is the conversation's).
	want := `{"role":"model","parts":[{"type":"text","text":"Hi.\n"},{"type":"a2ui","message":{"createSurface":{"catalogId":"` + basic + `","surfaceId":"s"}}},{"type":"a2ui","message":{"updateComponents":{"surfaceId":"s","components":[{"children":["t"],"component":"Column","id":"root"},{"component":"Text","id":"t","text":"Hello"}]}}}]}`
	if ls[1] != want {
		t.Fatalf("stored\n%s\nwant\n%s", ls[1], want)
	}
	// The next turn reads it.
	req = a2uiRequest("more")
	req.ConversationID = convID
	if _, err := svc.GenerateA2UI(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if model := m.reqs[1].Messages[1]; model.Role != ai.RoleModel || !strings.Contains(model.Text(), `"createSurface"`) {
		t.Fatalf("the model read %q", model.Text())
	}
}

// Two services sharing Redis are two replicas: a conversation started on one continues
// on the other.
func TestHeldConversationOnAnotherReplica(t *testing.T) {
	srv := redistest.Start(t)
	prefix := redistest.UniquePrefix()
	m1 := &script{calls: []scripted{{parts: []*ai.Part{ai.NewTextPart("Looking."), callPart("getLocation", map[string]any{"precise": true})}}}}
	m2 := &script{calls: []scripted{{parts: texts("Berlin.")}}}
	a := newService(t, m1, genui.WithConversations(conversation.NewRedis(srv.Client(t), time.Minute, conversation.WithKeyPrefix(prefix))))
	b := newService(t, m2, genui.WithConversations(conversation.NewRedis(srv.Client(t), time.Minute, conversation.WithKeyPrefix(prefix))))
	req := heldRequest(t, text("where am I?"))
	req.ClientTools = []schemas.ClientTool{locationTool}
	res, e := generate(t, a, req)
	if e != nil {
		t.Fatal(e)
	}
	id := callsOf(res)[0]
	res, e = generate(t, b, heldRequest(t, resultPart(id, "getLocation", `{"city":"Berlin"}`)))
	if e != nil || res.FinishReason != "stop" {
		t.Fatalf("on the second replica: %+v %+v", res, e)
	}
	msgs := m2.reqs[0].Messages
	if len(msgs) != 3 || msgs[0].Text() != "where am I?" || msgs[1].Content[1].ToolRequest.Ref != id || msgs[2].Content[0].ToolResponse.Ref != id {
		bs, _ := json.Marshal(msgs)
		t.Fatalf("the second replica's model read %s", bs)
	}
	// The first replica sees the answered call.
	if _, e := generate(t, a, heldRequest(t, resultPart(id, "getLocation", `{}`))); e == nil || e.Status != genui.StatusAborted {
		t.Fatalf("a result answered on the other replica: %+v", e)
	}
}

// A conversation past the size a held conversation may reach is refused, naming it.
func TestHeldConversationLimit(t *testing.T) {
	m := &script{calls: []scripted{{parts: texts(strings.Repeat("long answer ", 20))}}}
	svc := newService(t, m, genui.WithMaxConversationBytes(100))
	if _, e := generate(t, svc, heldRequest(t, text("hi"))); e != nil {
		t.Fatal(e)
	}
	_, e := generate(t, svc, heldRequest(t, text("more")))
	if e == nil || e.Status != genui.StatusFailedPrecondition || e.Details.(map[string]any)["field"] != "conversationId" || !strings.Contains(e.Message, "start another conversation") {
		t.Fatalf("past the limit: %+v", e)
	}
}
