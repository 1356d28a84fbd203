package conversationtest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/firebase/genkit/go/core/status"

	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/quota"
)

// NewLimitedStore returns a fresh store whose conversations expire ttl after their last
// turn, configured with opts (conversation.WithCallerLimit among them).
type NewLimitedStore func(t *testing.T, ttl time.Duration, opts ...conversation.Option) conversation.Store

type ownerKey struct{}

// As returns ctx whose conversations are counted against owner (OwnerOf reads it).
func As(ctx context.Context, owner string) context.Context {
	return context.WithValue(ctx, ownerKey{}, owner)
}

// OwnerOf is the owner function of the tests: the owner As put in ctx.
func OwnerOf(ctx context.Context) string {
	o, _ := ctx.Value(ownerKey{}).(string)
	return o
}

// TestCallerLimit runs the conformance tests of WithCallerLimit and of the store's
// Counter: a caller has at most a number of conversations stored at once, counted from
// their first Begin until they expire, are deleted or their first hold ends uncommitted.
func TestCallerLimit(t *testing.T, newStore NewLimitedStore) {
	bg := context.Background()
	alice, bob := As(bg, "alice"), As(bg, "bob")
	t.Run("at most max conversations of a caller", func(t *testing.T) {
		s := newStore(t, time.Minute, conversation.WithCallerLimit(2, OwnerOf))
		commitAs(t, s, alice, "lim-a-0001")
		commitAs(t, s, alice, "lim-a-0002")
		refusedAs(t, s, alice, "lim-a-0003", 2, time.Minute)
		stored(t, s, "alice", 2)
		// A conversation it has is continued, whoever's context it comes in.
		commitAs(t, s, alice, "lim-a-0001")
		commitAs(t, s, bob, "lim-a-0002")
		stored(t, s, "alice", 2)
		stored(t, s, "bob", 0)
		// Another caller has its own count; an uncounted caller has none.
		commitAs(t, s, bob, "lim-b-0001")
		commitAs(t, s, bob, "lim-b-0002")
		refusedAs(t, s, bob, "lim-b-0003", 2, time.Minute)
		commitAs(t, s, bg, "lim-anon-01")
		stored(t, s, "bob", 2)
	})
	t.Run("deleted, or begun and released, counts no more", func(t *testing.T) {
		s := newStore(t, time.Minute, conversation.WithCallerLimit(2, OwnerOf))
		commitAs(t, s, alice, "del-a-0001")
		commitAs(t, s, alice, "del-a-0002")
		_, h := beginAs(t, s, alice, "del-a-0001")
		must(t, h.Delete(bg))
		stored(t, s, "alice", 1)
		// A new conversation counts while it is held, before any commit.
		_, held := beginAs(t, s, alice, "del-a-0003")
		stored(t, s, "alice", 2)
		refusedAs(t, s, alice, "del-a-0004", 2, time.Minute)
		held.Release()
		stored(t, s, "alice", 1)
		commitAs(t, s, alice, "del-a-0004")
		refusedAs(t, s, alice, "del-a-0005", 2, time.Minute)
		// Released after a commit, a conversation stays counted.
		_, h = beginAs(t, s, alice, "del-a-0004")
		h.Release()
		stored(t, s, "alice", 2)
	})
	t.Run("expired, counts no more", func(t *testing.T) {
		const ttl = 600 * time.Millisecond
		s := newStore(t, ttl, conversation.WithCallerLimit(1, OwnerOf))
		commitAs(t, s, alice, "exp-a-0001")
		refusedAs(t, s, alice, "exp-a-0002", 1, ttl)
		time.Sleep(ttl + ttl/2)
		stored(t, s, "alice", 0)
		commitAs(t, s, alice, "exp-a-0002")
		refusedAs(t, s, alice, "exp-a-0003", 1, ttl)
	})
	t.Run("a turn renews a conversation's place", func(t *testing.T) {
		const ttl = 900 * time.Millisecond
		s := newStore(t, ttl, conversation.WithCallerLimit(1, OwnerOf))
		commitAs(t, s, alice, "ren-a-0001")
		time.Sleep(ttl / 2)
		commitAs(t, s, alice, "ren-a-0001")
		time.Sleep(ttl * 2 / 3) // past the first commit's expiry, within the second's
		stored(t, s, "alice", 1)
		refusedAs(t, s, alice, "ren-a-0002", 1, ttl)
	})
	t.Run("concurrent new conversations", func(t *testing.T) {
		const limit = 3
		s := newStore(t, time.Minute, conversation.WithCallerLimit(limit, OwnerOf))
		var (
			wg                sync.WaitGroup
			mu                sync.Mutex
			admitted, refused int
		)
		for w := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 5 {
					_, h, err := s.Begin(alice, fmt.Sprintf("con-%d-%04d", w, i))
					var over *quota.Exceeded
					switch {
					case errors.As(err, &over):
						mu.Lock()
						refused++
						mu.Unlock()
						continue
					case err != nil:
						t.Error(err)
						return
					}
					if err := h.Commit(bg, conversation.Update{Kind: "k", Append: []byte("x\n")}); err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					admitted++
					mu.Unlock()
				}
			}()
		}
		wg.Wait()
		if admitted != limit || refused != 8*5-limit {
			t.Fatalf("%d admitted, %d refused; want %d and %d", admitted, refused, limit, 8*5-limit)
		}
		stored(t, s, "alice", limit)
	})
	t.Run("no limit", func(t *testing.T) {
		s := newStore(t, time.Minute, conversation.WithCallerLimit(0, OwnerOf))
		for i := range 5 {
			commitAs(t, s, alice, fmt.Sprintf("nol-a-%04d", i))
		}
		stored(t, s, "alice", 0)
	})
}

// TestWaiting runs the conformance tests of Counter.Waiting: the conversations whose
// last commit left calls without a result, until they expire or are deleted.
func TestWaiting(t *testing.T, newStore NewLimitedStore) {
	ctx := context.Background()
	const ttl = 600 * time.Millisecond
	s := newStore(t, ttl)
	waiting(t, s, 0)
	_, h := begin(t, s, "wait-0001")
	must(t, h.Commit(ctx, conversation.Update{Kind: "k", Append: []byte("x\n"), Pending: []byte(`[{"callId":"c1"}]`)}))
	_, h = begin(t, s, "wait-0002")
	must(t, h.Commit(ctx, conversation.Update{Kind: "k", Append: []byte("x\n"), Pending: []byte(`[{"callId":"c2"}]`)}))
	_, h = begin(t, s, "wait-0003")
	must(t, h.Commit(ctx, conversation.Update{Kind: "k", Append: []byte("x\n")}))
	waiting(t, s, 2)
	// The results came: it waits no more.
	_, h = begin(t, s, "wait-0001")
	must(t, h.Commit(ctx, conversation.Update{Kind: "k", Append: []byte("y\n")}))
	waiting(t, s, 1)
	_, h = begin(t, s, "wait-0002")
	must(t, h.Delete(ctx))
	waiting(t, s, 0)
	_, h = begin(t, s, "wait-0003")
	must(t, h.Commit(ctx, conversation.Update{Kind: "k", Pending: []byte(`[{"callId":"c3"}]`)}))
	waiting(t, s, 1)
	time.Sleep(ttl + ttl/2)
	waiting(t, s, 0)
}

func beginAs(t *testing.T, s conversation.Store, ctx context.Context, id string) (*conversation.State, conversation.Hold) {
	t.Helper()
	st, h, err := s.Begin(ctx, id)
	if err != nil {
		t.Fatalf("Begin(%s) as %q: %v", id, OwnerOf(ctx), err)
	}
	return st, h
}

func commitAs(t *testing.T, s conversation.Store, ctx context.Context, id string) {
	t.Helper()
	_, h := beginAs(t, s, ctx, id)
	must(t, h.Commit(context.Background(), conversation.Update{Kind: "k", Append: []byte("x\n")}))
}

// refusedAs checks that a new conversation id of the caller of ctx is refused by the
// limit of conversations, retry within ttl, and holds nothing.
func refusedAs(t *testing.T, s conversation.Store, ctx context.Context, id string, limit int, ttl time.Duration) {
	t.Helper()
	_, h, err := s.Begin(ctx, id)
	if err == nil {
		h.Release()
		t.Fatalf("Begin(%s) as %q admitted, want refused", id, OwnerOf(ctx))
	}
	var over *quota.Exceeded
	if !errors.As(err, &over) || over.Limit != "conversations" || over.Max != float64(limit) {
		t.Fatalf("Begin(%s) as %q: %v, want a *quota.Exceeded of conversations, max %d", id, OwnerOf(ctx), err, limit)
	}
	if over.RetryAfter < time.Second || over.RetryAfter > max(ttl, time.Second) {
		t.Errorf("RetryAfter %v, want within the TTL %v (at least 1s)", over.RetryAfter, ttl)
	}
	var ge *status.Error
	if !errors.As(err, &ge) || ge.Status != status.ResourceExhausted || ge.Details["limit"] != "conversations" {
		t.Errorf("as a Genkit error: %+v", ge)
	}
	// The refusal held nothing: the id is free.
	if _, err := s.Peek(context.Background(), id); err != nil {
		t.Errorf("Peek(%s) after a refusal: %v", id, err)
	}
}

func stored(t *testing.T, s conversation.Store, owner string, want int) {
	t.Helper()
	c, ok := s.(conversation.Counter)
	if !ok {
		t.Fatalf("%T is not a conversation.Counter", s)
	}
	n, err := c.Stored(context.Background(), owner)
	if err != nil || n != want {
		t.Fatalf("Stored(%q) = %d, %v; want %d", owner, n, err, want)
	}
}

func waiting(t *testing.T, s conversation.Store, want int) {
	t.Helper()
	c, ok := s.(conversation.Counter)
	if !ok {
		t.Fatalf("%T is not a conversation.Counter", s)
	}
	n, err := c.Waiting(context.Background())
	if err != nil || n != want {
		t.Fatalf("Waiting() = %d, %v; want %d", n, err, want)
	}
}
