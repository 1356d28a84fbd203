package genui_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/firebase/genkit/go/ai"

	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/schemas"
)

// runSession runs one turn of a session and returns its result.
func runSession(t *testing.T, svc *genui.Service, id string, parts ...schemas.Part) *schemas.Result {
	t.Helper()
	ctx := context.Background()
	st, err := svc.SessionTurn(ctx, id, []schemas.Message{{Role: "user", Parts: parts}})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var res *schemas.Result
	if err := st.Each(ctx, func(it genui.Item) error {
		if it.Err != nil {
			t.Fatal(it.Err)
		}
		if it.Result != nil {
			res = &schemas.Result{}
			if err := json.Unmarshal(it.Result, res); err != nil {
				t.Fatal(err)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if res == nil {
		t.Fatal("no result")
	}
	return res
}

// A session keeps its catalog and client tools: each turn sends only the new content; a
// turn that calls a client tool leaves the session waiting for the call, with its input,
// until a turn answers it.
func TestSessionWaitsForItsCalls(t *testing.T) {
	store := conversation.NewMemory(100, 0, time.Hour)
	m := &script{calls: []scripted{
		{parts: []*ai.Part{ai.NewTextPart("Looking."), callPart("getLocation", map[string]any{"precise": true})}},
		{parts: texts("Berlin.")},
	}}
	svc := newService(t, m, genui.WithConversations(store))
	ctx := context.Background()
	const id = "session-test-0001"
	spec := &genui.SessionSpec{Generate: &schemas.GenerateRequest{Catalog: request(t).Catalog, ClientTools: []schemas.ClientTool{locationTool}}}
	if err := svc.OpenSession(ctx, id, spec); err != nil {
		t.Fatal(err)
	}
	if calls, _, err := svc.SessionCalls(ctx, id); err != nil || len(calls) != 0 {
		t.Fatalf("a new session waits for %v (%v)", calls, err)
	}

	before := time.Now()
	res := runSession(t, svc, id, text("where am I?"))
	if res.FinishReason != "interrupted" {
		t.Fatalf("%+v", res)
	}
	// Readers keep neither each other nor a turn off the session: replicas asking at once
	// what it waits for (one cleaning up after a closed connection, one loading it for a
	// new one) all get the answer.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 50 {
				if w, err := svc.SessionWaits(ctx, id); err != nil || len(w.Calls) != 1 {
					t.Errorf("a concurrent read: %+v (%v)", w, err)
					return
				}
			}
		})
	}
	wg.Wait()
	calls, since, err := svc.SessionCalls(ctx, id)
	if err != nil || len(calls) != 1 || calls[0].Name != "getLocation" || string(calls[0].Input) != `{"precise":true}` || since.Before(before.Add(-time.Millisecond)) || time.Since(since) > time.Minute {
		t.Fatalf("waiting for %+v since %v (%v)", calls, since, err)
	}
	// A waiting session keeps its spec.
	if err := genui.AsError(svc.OpenSession(ctx, id, spec)); err == nil || err.Status != genui.StatusFailedPrecondition {
		t.Fatalf("opening a waiting session again: %v", err)
	}

	res = runSession(t, svc, id, resultPart(calls[0].CallID, "getLocation", `{"city":"Berlin"}`))
	if res.FinishReason != "stop" || len(m.reqs) != 2 {
		t.Fatalf("%+v", res)
	}
	if m.reqs[1].ClientTools == nil {
		t.Fatal("the second turn got no client tools: the session's spec was not used")
	}
	if calls, _, err := svc.SessionCalls(ctx, id); err != nil || len(calls) != 0 {
		t.Fatalf("after the answer: %v (%v)", calls, err)
	}
	if err := svc.OpenSession(ctx, id, spec); err != nil {
		t.Fatalf("opening a session that waits for nothing again: %v", err)
	}
}

func TestSessionErrors(t *testing.T) {
	svc := newService(t, &script{}, genui.WithConversations(conversation.NewMemory(100, 0, time.Hour)))
	ctx := context.Background()
	for name, tc := range map[string]struct {
		id   string
		spec *genui.SessionSpec
		want string
	}{
		"no request":  {"session-0001", &genui.SessionSpec{}, "session: "},
		"two":         {"session-0001", &genui.SessionSpec{Generate: request(t), A2UI: &schemas.GenerateA2UIRequest{}}, "session: "},
		"bad id":      {"x", &genui.SessionSpec{Generate: request(t)}, "session: "},
		"bad catalog": {"session-0001", &genui.SessionSpec{Generate: &schemas.GenerateRequest{Catalog: schemas.Catalog(`{"type":"string"}`)}}, "catalog"},
		"bad tool":    {"session-0001", &genui.SessionSpec{Generate: &schemas.GenerateRequest{Catalog: request(t).Catalog, ClientTools: []schemas.ClientTool{{Name: "no spaces"}}}}, "clientTools[0].name"},
	} {
		e := genui.AsError(svc.OpenSession(ctx, tc.id, tc.spec))
		if e == nil || e.Status != genui.StatusInvalidArgument || !strings.HasPrefix(e.Message, tc.want) {
			t.Errorf("%s: %+v", name, e)
		}
	}
	for _, id := range []string{"session-unknown", "x"} {
		if _, err := svc.SessionTurn(ctx, id, nil); genui.AsError(err).Status != genui.StatusNotFound {
			t.Errorf("a turn of %s: %v", id, err)
		}
		if _, _, err := svc.SessionCalls(ctx, id); genui.AsError(err).Status != genui.StatusNotFound {
			t.Errorf("the calls of %s: %v", id, err)
		}
	}
}
