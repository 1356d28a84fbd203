package a2aapi

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/redis/go-redis/v9"

	"github.com/genuiserver/genui/internal/testkit/redistest"
)

// testTaskStore checks what a TaskStore keeps: tasks by id, the latest Put of each,
// expiry.
func testTaskStore(t *testing.T, newStore func(ttl time.Duration) TaskStore) {
	ctx := context.Background()
	s := newStore(time.Minute)
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("unknown task: %v", err)
	}
	tk := &task{Task: &a2a.Task{ID: "t1", ContextID: "c1", Status: a2a.TaskStatus{State: a2a.TaskStateWorking},
		History: []*a2a.Message{{ID: "m", Role: a2a.MessageRoleUser, Parts: a2a.ContentParts{a2a.NewTextPart("hi"), a2a.NewDataPart(map[string]any{"a": []any{1.0}})}}}},
		Stream: "s1", Wire: wire{Version: "v0.9", MIME: MIMEv091}}
	if err := s.Put(ctx, tk); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "t1")
	if err != nil {
		t.Fatal(err)
	}
	if got.Stream != "s1" || got.Wire.MIME != MIMEv091 || got.Task.ContextID != "c1" ||
		got.Task.History[0].Parts[1].Content.(a2a.Data).Value.(map[string]any)["a"].([]any)[0] != 1.0 {
		t.Fatalf("stored %+v", got)
	}
	got.Task.Status.State = a2a.TaskStateInputRequired
	if err := s.Put(ctx, got); err != nil {
		t.Fatal(err)
	}
	if got, _ = s.Get(ctx, "t1"); got.Task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("after a second Put: %s", got.Task.Status.State)
	}
	if err := s.Ready(ctx); err != nil {
		t.Fatal(err)
	}
	// Expiry.
	s = newStore(200 * time.Millisecond)
	if err := s.Put(ctx, tk); err != nil {
		t.Fatal(err)
	}
	time.Sleep(400 * time.Millisecond)
	if _, err := s.Get(ctx, "t1"); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Fatalf("expired task: %v", err)
	}
}

func TestMemoryTasks(t *testing.T) {
	testTaskStore(t, func(ttl time.Duration) TaskStore { return NewMemoryTasks(100, ttl) })
}

func TestRedisTasks(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, client redis.UniversalClient, replicas int) {
		testTaskStore(t, func(ttl time.Duration) TaskStore {
			return NewRedisTasks(client, ttl, redistest.UniquePrefix(), TaskAcks{Replicas: replicas, Timeout: time.Second})
		})
	})
}
