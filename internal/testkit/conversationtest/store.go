// Package conversationtest holds the conformance tests that every conversation.Store
// implementation must pass.
package conversationtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/genuiserver/genui/conversation"
)

// TestStore runs the conformance tests of a Store. newStore returns a fresh store whose
// conversations expire ttl after their last turn.
func TestStore(t *testing.T, newStore func(t *testing.T, ttl time.Duration) conversation.Store) {
	ctx := context.Background()
	t.Run("a new conversation, then its turns", func(t *testing.T) {
		s := newStore(t, time.Minute)
		st, h := begin(t, s, "conv-0001")
		if st.Kind != "" || st.History != nil || st.Pending != nil || st.Session != nil {
			t.Fatalf("new conversation: %+v", st)
		}
		must(t, h.Commit(ctx, conversation.Update{Kind: "genui", Model: "googleai/gemini-2.5-flash", Append: []byte("{\"a\":1}\n{\"b\":2}\n"), Pending: []byte(`[{"callId":"c1"}]`)}))
		st, h = begin(t, s, "conv-0001")
		if st.Kind != "genui" || st.Model != "googleai/gemini-2.5-flash" || string(st.History) != "{\"a\":1}\n{\"b\":2}\n" || string(st.Pending) != `[{"callId":"c1"}]` {
			t.Fatalf("after one turn: kind %q model %q history %q pending %q", st.Kind, st.Model, st.History, st.Pending)
		}
		must(t, h.Commit(ctx, conversation.Update{Kind: "genui", Model: "openai/gpt-4.1-mini", Append: []byte("{\"c\":3}\n")}))
		st, h = begin(t, s, "conv-0001")
		defer h.Release()
		if string(st.History) != "{\"a\":1}\n{\"b\":2}\n{\"c\":3}\n" || st.Pending != nil || st.Model != "openai/gpt-4.1-mini" {
			t.Fatalf("after two turns: history %q pending %q model %q", st.History, st.Pending, st.Model)
		}
		// Another conversation is another.
		other, h2 := begin(t, s, "conv-0002")
		defer h2.Release()
		if other.History != nil || other.Kind != "" {
			t.Fatalf("conv-0002 sees %+v", other)
		}
	})
	t.Run("a session, kept until replaced", func(t *testing.T) {
		s := newStore(t, time.Minute)
		_, h := begin(t, s, "sess-0001")
		must(t, h.Commit(ctx, conversation.Update{Kind: "genui", Session: []byte(`{"catalog":{}}`)}))
		st, h := begin(t, s, "sess-0001")
		if string(st.Session) != `{"catalog":{}}` || st.History != nil {
			t.Fatalf("after the session's start: %+v", st)
		}
		must(t, h.Commit(ctx, conversation.Update{Kind: "genui", Append: []byte("x\n")}))
		st, h = begin(t, s, "sess-0001")
		if string(st.Session) != `{"catalog":{}}` || string(st.History) != "x\n" {
			t.Fatalf("a turn without a session changed it: %+v", st)
		}
		must(t, h.Commit(ctx, conversation.Update{Kind: "genui", Session: []byte(`{"tools":[]}`)}))
		st, h = begin(t, s, "sess-0001")
		defer h.Release()
		if string(st.Session) != `{"tools":[]}` || string(st.History) != "x\n" {
			t.Fatalf("a replaced session: %+v", st)
		}
	})
	t.Run("delete", func(t *testing.T) {
		s := newStore(t, time.Minute)
		_, h := begin(t, s, "del-conv1")
		must(t, h.Commit(ctx, conversation.Update{Kind: "genui", Append: []byte("x\n"), Pending: []byte("p"), Session: []byte("s")}))
		_, h = begin(t, s, "del-conv1")
		must(t, h.Delete(ctx))
		if err := h.Commit(ctx, conversation.Update{Kind: "genui"}); !errors.Is(err, conversation.ErrHoldLost) {
			t.Fatalf("a commit after Delete: %v, want ErrHoldLost", err)
		}
		h.Release()
		st, h := begin(t, s, "del-conv1")
		defer h.Release()
		if st.Kind != "" || st.History != nil || st.Pending != nil || st.Session != nil {
			t.Fatalf("after Delete: %+v", st)
		}
	})
	t.Run("one turn at a time", func(t *testing.T) {
		s := newStore(t, time.Minute)
		_, h := begin(t, s, "busy-conv")
		if _, _, err := s.Begin(ctx, "busy-conv"); !errors.Is(err, conversation.ErrBusy) {
			t.Fatalf("a second Begin: %v, want ErrBusy", err)
		}
		must(t, h.Commit(ctx, conversation.Update{Kind: "k", Append: []byte("x\n")}))
		_, h = begin(t, s, "busy-conv")
		h.Release()
		_, h = begin(t, s, "busy-conv")
		h.Release()
	})
	t.Run("peek", func(t *testing.T) {
		s := newStore(t, time.Minute)
		st, err := s.Peek(ctx, "peek-conv")
		must(t, err)
		if st.Kind != "" || st.History != nil || st.Pending != nil || st.Session != nil {
			t.Fatalf("peek of a new conversation: %+v", st)
		}
		_, h := begin(t, s, "peek-conv")
		if _, err := s.Peek(ctx, "peek-conv"); !errors.Is(err, conversation.ErrBusy) {
			t.Fatalf("peek of a held conversation: %v, want ErrBusy", err)
		}
		must(t, h.Commit(ctx, conversation.Update{Kind: "k", Append: []byte("x\n"), Pending: []byte("p"), Session: []byte("s")}))
		// Peeks hold nothing: two of them and a Begin all see the committed state.
		for i := 0; i < 2; i++ {
			st, err = s.Peek(ctx, "peek-conv")
			must(t, err)
			if st.Kind != "k" || string(st.History) != "x\n" || string(st.Pending) != "p" || string(st.Session) != "s" {
				t.Fatalf("peek %d after a commit: %+v", i, st)
			}
		}
		st, h = begin(t, s, "peek-conv")
		defer h.Release()
		if string(st.History) != "x\n" {
			t.Fatalf("begin after peeks: %+v", st)
		}
	})
	t.Run("release changes nothing", func(t *testing.T) {
		s := newStore(t, time.Minute)
		_, h := begin(t, s, "rel-conv1")
		must(t, h.Commit(ctx, conversation.Update{Kind: "k", Append: []byte("x\n"), Pending: []byte("p")}))
		_, h = begin(t, s, "rel-conv1")
		h.Release()
		h.Release() // twice is harmless
		if err := h.Commit(ctx, conversation.Update{Kind: "k", Append: []byte("lost\n")}); !errors.Is(err, conversation.ErrHoldLost) {
			t.Fatalf("commit after release: %v", err)
		}
		st, h := begin(t, s, "rel-conv1")
		defer h.Release()
		if string(st.History) != "x\n" || string(st.Pending) != "p" {
			t.Fatalf("after a release: %+v", st)
		}
		// A conversation begun and released without a commit is still new.
		st2, h2 := begin(t, s, "rel-conv2")
		h2.Release()
		st2, h2 = begin(t, s, "rel-conv2")
		defer h2.Release()
		if st2.Kind != "" || st2.History != nil {
			t.Fatalf("released new conversation: %+v", st2)
		}
	})
	t.Run("appended exactly once under contention", func(t *testing.T) {
		s := newStore(t, time.Minute)
		var commits, busy atomic.Int64
		var wg sync.WaitGroup
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func(w int) {
				defer wg.Done()
				for i := 0; i < 25; i++ {
					_, h, err := s.Begin(ctx, "contended")
					if errors.Is(err, conversation.ErrBusy) {
						busy.Add(1)
						continue
					}
					if err != nil {
						t.Error(err)
						return
					}
					if err := h.Commit(ctx, conversation.Update{Kind: "k", Append: []byte(fmt.Sprintf("%d.%d\n", w, i))}); err != nil {
						t.Error(err)
						return
					}
					commits.Add(1)
				}
			}(w)
		}
		wg.Wait()
		st, h := begin(t, s, "contended")
		defer h.Release()
		if n := int64(bytes.Count(st.History, []byte("\n"))); n != commits.Load() || n == 0 {
			t.Fatalf("%d lines after %d commits (%d busy)", n, commits.Load(), busy.Load())
		}
	})
	t.Run("expiry", func(t *testing.T) {
		// Each step has a third of the TTL to spare, for a loaded machine.
		const ttl = 600 * time.Millisecond
		s := newStore(t, ttl)
		_, h := begin(t, s, "expiring")
		must(t, h.Commit(ctx, conversation.Update{Kind: "k", Append: []byte("x\n")}))
		time.Sleep(ttl / 3)
		// A turn renews the TTL.
		st, h := begin(t, s, "expiring")
		must(t, h.Commit(ctx, conversation.Update{Kind: "k", Append: []byte("y\n")}))
		if string(st.History) != "x\n" {
			t.Fatalf("before expiry: %q", st.History)
		}
		time.Sleep(ttl * 2 / 3) // past the first commit's TTL, within the second's
		st, h = begin(t, s, "expiring")
		h.Release()
		if string(st.History) != "x\ny\n" {
			t.Fatalf("renewed: %q", st.History)
		}
		time.Sleep(ttl * 3 / 2)
		st, h = begin(t, s, "expiring")
		defer h.Release()
		if st.History != nil || st.Kind != "" {
			t.Fatalf("expired conversation: %+v", st)
		}
	})
	t.Run("ready", func(t *testing.T) {
		must(t, newStore(t, time.Minute).Ready(ctx))
	})
}

func begin(t *testing.T, s conversation.Store, id string) (*conversation.State, conversation.Hold) {
	t.Helper()
	st, h, err := s.Begin(context.Background(), id)
	if err != nil {
		t.Fatalf("Begin(%s): %v", id, err)
	}
	return st, h
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
