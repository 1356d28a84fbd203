package conversation_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/internal/testkit/conversationtest"
	"github.com/genuiserver/genui/internal/testkit/redistest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestMemoryStore(t *testing.T) {
	conversationtest.TestStore(t, func(t *testing.T, ttl time.Duration) conversation.Store {
		return conversation.NewMemory(1000, 1<<20, ttl)
	})
}

func TestRedisStore(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, client redis.UniversalClient, replicas int) {
		conversationtest.TestStore(t, func(t *testing.T, ttl time.Duration) conversation.Store {
			return conversation.NewRedis(client, ttl, conversation.WithKeyPrefix(redistest.UniquePrefix()), conversation.WithReplicaAcks(replicas, time.Second))
		})
		newStore := func(t *testing.T, ttl time.Duration, opts ...conversation.Option) conversation.Store {
			return conversation.NewRedis(client, ttl, append(opts, conversation.WithKeyPrefix(redistest.UniquePrefix()))...)
		}
		conversationtest.TestCallerLimit(t, newStore)
		conversationtest.TestWaiting(t, newStore)
	})
}

func commit(t *testing.T, s conversation.Store, id, line string) {
	t.Helper()
	_, h, err := s.Begin(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Commit(context.Background(), conversation.Update{Kind: "k", Append: []byte(line + "\n")}); err != nil {
		t.Fatal(err)
	}
}

func TestMemoryBounds(t *testing.T) {
	m := conversation.NewMemory(3, 0, time.Hour)
	for _, id := range []string{"conv-aaaa", "conv-bbbb", "conv-cccc", "conv-dddd"} {
		commit(t, m, id, "x")
	}
	if n, _ := m.Len(); n != 3 {
		t.Fatalf("%d conversations kept, want 3", n)
	}
	// The least recently used went first.
	st, h, _ := m.Begin(context.Background(), "conv-aaaa")
	h.Release()
	if st.History != nil {
		t.Fatalf("conv-aaaa should have been dropped: %q", st.History)
	}

	// The byte bound: 4 conversations of about 1 KiB under a 3 KiB bound.
	m = conversation.NewMemory(100, 3<<10, time.Hour)
	big := strings.Repeat("y", 900)
	for _, id := range []string{"conv-0001", "conv-0002", "conv-0003", "conv-0004"} {
		commit(t, m, id, big)
	}
	n, b := m.Len()
	if n != 2 || b > 3<<10 {
		t.Fatalf("%d conversations holding %d bytes under a 3 KiB bound", n, b)
	}

	// A held conversation is never dropped, however old.
	m = conversation.NewMemory(1, 0, time.Hour)
	_, held, _ := m.Begin(context.Background(), "conv-held")
	commit(t, m, "conv-next", "x")
	if err := held.Commit(context.Background(), conversation.Update{Kind: "k", Append: []byte("kept\n")}); err != nil {
		t.Fatal(err)
	}
	st, h, _ = m.Begin(context.Background(), "conv-held")
	h.Release()
	if string(st.History) != "kept\n" {
		t.Fatalf("held conversation: %q", st.History)
	}
}

func TestRedisLeaseIsRenewedWhileHeld(t *testing.T) {
	srv := redistest.Start(t)
	client := srv.Client(t)
	s := conversation.NewRedis(client, time.Minute, conversation.WithKeyPrefix(redistest.UniquePrefix()), conversation.WithLease(300*time.Millisecond))
	ctx := context.Background()
	_, h, err := s.Begin(ctx, "leased-conv")
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // three leases
	if _, _, err := s.Begin(ctx, "leased-conv"); !errors.Is(err, conversation.ErrBusy) {
		t.Fatalf("a renewed hold: %v, want ErrBusy", err)
	}
	if err := h.Commit(ctx, conversation.Update{Kind: "k", Append: []byte("x\n")}); err != nil {
		t.Fatal(err)
	}
}

func TestRedisLeaseFreesADeadReplicasConversation(t *testing.T) {
	srv := redistest.Start(t)
	prefix := redistest.UniquePrefix()
	dead := srv.Client(t)
	s1 := conversation.NewRedis(dead, time.Minute, conversation.WithKeyPrefix(prefix), conversation.WithLease(300*time.Millisecond))
	ctx := context.Background()
	_, h, err := s1.Begin(ctx, "orphan-conv")
	if err != nil {
		t.Fatal(err)
	}
	// The replica's connection to Redis dies: its renewals fail, and its lease runs out.
	dead.Close()
	s2 := conversation.NewRedis(srv.Client(t), time.Minute, conversation.WithKeyPrefix(prefix), conversation.WithLease(300*time.Millisecond))
	deadline := time.Now().Add(2 * time.Second)
	for {
		_, h2, err := s2.Begin(ctx, "orphan-conv")
		if err == nil {
			h2.Release()
			break
		}
		if !errors.Is(err, conversation.ErrBusy) || time.Now().After(deadline) {
			t.Fatalf("the orphaned conversation is still held: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	h.Release()
}

func TestValidID(t *testing.T) {
	for id, want := range map[string]bool{
		"abcdefgh": true, "a.b_c-d01234": true, strings.Repeat("x", 128): true,
		"short": false, strings.Repeat("x", 129): false, "has space1": false, "slash/abcd": false, "": false,
	} {
		if conversation.ValidID(id) != want {
			t.Errorf("ValidID(%q) = %v", id, !want)
		}
	}
}

func TestMemoryCallerLimit(t *testing.T) {
	newStore := func(t *testing.T, ttl time.Duration, opts ...conversation.Option) conversation.Store {
		return conversation.NewMemory(1000, 1<<20, ttl, opts...)
	}
	conversationtest.TestCallerLimit(t, newStore)
	conversationtest.TestWaiting(t, newStore)
}

// A conversation dropped by the memory store's bounds counts no more against its caller.
func TestMemoryCallerLimitAfterEviction(t *testing.T) {
	m := conversation.NewMemory(2, 0, time.Hour, conversation.WithCallerLimit(2, conversationtest.OwnerOf))
	alice := conversationtest.As(context.Background(), "alice")
	for _, id := range []string{"evict-a-01", "evict-a-02"} {
		_, h, err := m.Begin(alice, id)
		if err != nil {
			t.Fatal(err)
		}
		if err := h.Commit(context.Background(), conversation.Update{Kind: "k", Append: []byte("x\n")}); err != nil {
			t.Fatal(err)
		}
	}
	// Another caller's conversation drops alice's least recently used one.
	commit(t, m, "evict-b-01", "x")
	if n, _ := m.Stored(context.Background(), "alice"); n != 1 {
		t.Fatalf("Stored(alice) = %d after an eviction, want 1", n)
	}
	if _, h, err := m.Begin(alice, "evict-a-03"); err != nil {
		t.Fatalf("a new conversation after an eviction: %v", err)
	} else {
		h.Release()
	}
}

// A conversation that is gone from Redis without its caller's set knowing (a replica died
// between its Begin and its Release) is found out when the caller is at its limit.
func TestRedisCallerLimitForgetsVanishedConversations(t *testing.T) {
	srv := redistest.Start(t)
	client := srv.Client(t)
	prefix := redistest.UniquePrefix()
	s := conversation.NewRedis(client, time.Minute, conversation.WithKeyPrefix(prefix), conversation.WithCallerLimit(1, conversationtest.OwnerOf))
	alice := conversationtest.As(context.Background(), "alice")
	ctx := context.Background()
	_, h, err := s.Begin(alice, "vanish-a-01")
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Commit(ctx, conversation.Update{Kind: "k", Append: []byte("x\n")}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Begin(alice, "vanish-a-02"); err == nil {
		t.Fatal("over the limit: admitted")
	}
	k := prefix + "conv:{vanish-a-01}"
	if err := client.Del(ctx, k, k+":meta", k+":owner").Err(); err != nil {
		t.Fatal(err)
	}
	_, h, err = s.Begin(alice, "vanish-a-02")
	if err != nil {
		t.Fatalf("the vanished conversation still counts: %v", err)
	}
	h.Release()
	if n, err := s.Stored(ctx, "alice"); err != nil || n != 0 {
		t.Fatalf("Stored(alice) = %d, %v; want 0", n, err)
	}
}
