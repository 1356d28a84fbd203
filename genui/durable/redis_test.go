package durable_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/genuiserver/genui/genui/durable"
	"github.com/genuiserver/genui/internal/testkit/durabletest"
	"github.com/genuiserver/genui/internal/testkit/redistest"
)

func TestRedisLog(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, client redis.UniversalClient, replicas int) {
		ignore := goleak.IgnoreCurrent()
		durabletest.TestLog(t, func(t *testing.T, retention time.Duration) durable.Log {
			return durable.NewRedisLog(client, retention, durable.WithKeyPrefix(redistest.UniquePrefix()), durable.WithReplicaAcks(replicas, time.Second))
		})
		goleak.VerifyNone(t, append(redistest.IgnoreClientGoroutines(), ignore)...)
	})
}

// A stream produced through one RedisLog instance, read, watched and cancelled through
// another.
func TestRedisLogReplicas(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	clientA, clientB := srv.Client(t), srv.Client(t)
	ignore := goleak.IgnoreCurrent()
	beat := durable.WithHeartbeat(100 * time.Millisecond)
	a := durable.NewRedisLog(clientA, time.Minute, beat)
	b := durable.NewRedisLog(clientB, time.Minute, beat)

	t.Run("produce on A, read on B", func(t *testing.T) {
		p, err := a.Create(ctx, "x")
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if _, err := b.Create(ctx, "x"); !errors.Is(err, durable.ErrStreamExists) {
			t.Fatalf("create on B: %v", err)
		}
		mustAppend(t, p, "a", false)
		mustAppend(t, p, "b", false)
		r, err := b.Read(ctx, "x", 0)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		if !p.Watched(ctx) {
			t.Fatal("a reader on B does not count as watching")
		}
		expectRecord(t, r, 1, "a", false)
		expectRecord(t, r, 2, "b", false)
		go func() {
			time.Sleep(50 * time.Millisecond)
			_ = p.Append(ctx, []byte("c"), false)
			_ = p.Append(ctx, []byte("end"), true)
		}()
		expectRecord(t, r, 3, "c", false)
		expectRecord(t, r, 4, "end", true)
		if _, _, err := r.Next(ctx, time.Second); err != io.EOF {
			t.Fatalf("after the final record: %v", err)
		}
		r.Close()
		if p.Watched(ctx) {
			t.Fatal("watched after the reader closed")
		}
		// Resume after an offset on B once finished.
		r2, err := b.Read(ctx, "x", 2)
		if err != nil {
			t.Fatal(err)
		}
		defer r2.Close()
		expectRecord(t, r2, 3, "c", false)
		expectRecord(t, r2, 4, "end", true)
	})

	t.Run("cancel on B stops the producer on A", func(t *testing.T) {
		p, _ := a.Create(ctx, "y")
		defer p.Close()
		start := time.Now()
		if err := b.Cancel(ctx, "y"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-p.Cancelled():
		case <-time.After(2 * time.Second):
			t.Fatal("producer not told about the cancel")
		}
		t.Logf("cancel seen after %v", time.Since(start))
	})

	t.Run("producer killed mid-stream", func(t *testing.T) {
		// The producer's replica "dies": its connection goes away, its heartbeat stops.
		dying := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
		p, err := durable.NewRedisLog(dying, time.Minute, beat).Create(ctx, "z")
		if err != nil {
			t.Fatal(err)
		}
		mustAppend(t, p, "a", false)
		mustAppend(t, p, "b", false)
		r, _ := b.Read(ctx, "z", 0)
		defer r.Close()
		expectRecord(t, r, 1, "a", false)
		_ = dying.Close()
		p.Close() // ends the heartbeat goroutine; it can no longer reach Redis
		start := time.Now()
		expectRecord(t, r, 2, "b", false)
		if _, _, err := r.Next(ctx, 10*time.Second); !errors.Is(err, durable.ErrProducerLost) {
			t.Fatalf("want ErrProducerLost, got %v", err)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("loss detected after %v", d)
		}
		// A client resuming later gets the stored records, then the loss.
		r2, _ := a.Read(ctx, "z", 0)
		defer r2.Close()
		expectRecord(t, r2, 1, "a", false)
		expectRecord(t, r2, 2, "b", false)
		if _, _, err := r2.Next(ctx, time.Second); !errors.Is(err, durable.ErrProducerLost) {
			t.Fatalf("resumed: want ErrProducerLost, got %v", err)
		}
	})
	t.Run("stalled producer declared lost", func(t *testing.T) {
		// A producer whose heartbeat lapses (a long GC pause, a partition) is declared
		// lost once, for everyone: its later appends fail instead of reaching some
		// readers only.
		slow := durable.NewRedisLog(clientA, time.Minute, durable.WithHeartbeat(time.Hour))
		p, _ := slow.Create(ctx, "stalled")
		defer p.Close()
		mustAppend(t, p, "a", false)
		r, _ := b.Read(ctx, "stalled", 0)
		defer r.Close()
		expectRecord(t, r, 1, "a", false)
		clientA.Del(ctx, "genui:stream:{stalled}:alive") // what expiry would do
		if _, _, err := r.Next(ctx, 5*time.Second); !errors.Is(err, durable.ErrProducerLost) {
			t.Fatalf("want ErrProducerLost, got %v", err)
		}
		if err := p.Append(ctx, []byte("late"), false); !errors.Is(err, durable.ErrStreamNotFound) {
			t.Fatalf("append after being declared lost: %v", err)
		}
	})

	t.Run("presence of a dead reader expires", func(t *testing.T) {
		p, _ := a.Create(ctx, "w")
		defer p.Close()
		dying := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
		r, _ := durable.NewRedisLog(dying, time.Minute, beat).Read(ctx, "w", 0)
		if !p.Watched(ctx) {
			t.Fatal("not watched")
		}
		_ = dying.Close()
		r.Close() // cannot reach Redis to unregister
		start := time.Now()
		for p.Watched(ctx) {
			if time.Since(start) > 2*time.Second {
				t.Fatal("still watched by a dead reader")
			}
			time.Sleep(20 * time.Millisecond)
		}
		t.Logf("dead reader's presence gone after %v", time.Since(start))
	})
	goleak.VerifyNone(t, ignore)
}

// Redis stops: everything that needs it fails promptly with ErrUnavailable; Redis comes
// back: the same clients work again.
func TestRedisLogUnavailable(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	client := srv.Client(t)
	ignore := goleak.IgnoreCurrent()
	log := durable.NewRedisLog(client, time.Minute, durable.WithHeartbeat(100*time.Millisecond))

	p, err := log.Create(ctx, "before")
	if err != nil {
		t.Fatal(err)
	}
	mustAppend(t, p, "a", false)
	r, _ := log.Read(ctx, "before", 0)
	expectRecord(t, r, 1, "a", false)

	srv.Stop()
	unavailable := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, durable.ErrUnavailable) || !strings.Contains(err.Error(), "unavailable: redis: ") {
			t.Errorf("%s while Redis is down: %v", what, err)
		}
	}
	start := time.Now()
	_, err = log.Read(ctx, "before", 0)
	unavailable("Log.Read", err)
	_, err = log.Create(ctx, "new")
	unavailable("Log.Create", err)
	unavailable("Log.Cancel", log.Cancel(ctx, "other"))
	unavailable("Log.Ready", log.Ready(ctx))
	unavailable("Producer.Append", p.Append(ctx, []byte("b"), false))
	_, _, err = r.Next(ctx, 5*time.Second)
	unavailable("Reader.Next", err)
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("failing took %v", d)
	}
	t.Logf("7 calls failed in %v, e.g. %v", time.Since(start), err)
	p.Close()
	r.Close()

	srv.Restart() // empty: persistence is off
	deadline := time.Now().Add(5 * time.Second)
	for log.Ready(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("not ready after the restart: %v", log.Ready(ctx))
		}
		time.Sleep(50 * time.Millisecond)
	}
	p2, err := log.Create(ctx, "after")
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	mustAppend(t, p2, "x", true)
	r2, err := log.Read(ctx, "after", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	expectRecord(t, r2, 1, "x", true)
	p2.Close()
	r2.Close()
	goleak.VerifyNone(t, ignore, redistest.IgnoreGoroutines())
}

// An Append whose answer was lost (stored, but the connection broke, as when a primary
// fails right after a write) is tried again: the record is stored once, and the stream
// goes on after it.
func TestRedisLogAppendTriedAgain(t *testing.T) {
	ctx := context.Background()
	client := redistest.Start(t).Client(t)
	lose := &loseAnswer{}
	client.AddHook(lose)
	log := durable.NewRedisLog(client, time.Minute)
	p, err := log.Create(ctx, "s")
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	for i, rec := range []struct {
		data  string
		final bool
	}{{"a", false}, {"b", false}, {"end", true}} {
		lose.next.Store(true)
		if err := p.Append(ctx, []byte(rec.data), rec.final); !errors.Is(err, durable.ErrUnavailable) {
			t.Fatalf("record %d: the answer was lost, yet Append said %v", i+1, err)
		}
		mustAppend(t, p, rec.data, rec.final)
	}
	if err := p.Append(ctx, []byte("late"), false); err == nil {
		t.Fatal("appended after the final record")
	}
	r, err := log.Read(ctx, "s", 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	expectRecord(t, r, 1, "a", false)
	expectRecord(t, r, 2, "b", false)
	expectRecord(t, r, 3, "end", true)
	if _, _, err := r.Next(ctx, time.Second); !errors.Is(err, io.EOF) {
		t.Fatalf("after the final record: %v", err)
	}
}

// A turn ends on a record whose try failed after storing it (its client never saw it):
// the final record, tried again itself, goes after it; so does the mark of a producer
// closed without one.
func TestRedisLogEndAfterAFailedTry(t *testing.T) {
	ctx := context.Background()
	client := redistest.Start(t).Client(t)
	lose := &loseAnswer{}
	client.AddHook(lose)
	log := durable.NewRedisLog(client, time.Minute)
	for _, final := range []bool{true, false} {
		id := fmt.Sprint("final-", final)
		p, err := log.Create(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		mustAppend(t, p, "a", false)
		lose.next.Store(true)
		if err := p.Append(ctx, []byte("b"), false); !errors.Is(err, durable.ErrUnavailable) {
			t.Fatalf("the answer was lost, yet Append said %v", err)
		}
		if final {
			lose.next.Store(true)
			if err := p.Append(ctx, []byte("failed"), true); !errors.Is(err, durable.ErrUnavailable) {
				t.Fatalf("the answer was lost, yet Append said %v", err)
			}
			mustAppend(t, p, "failed", true)
		}
		p.Close()
		r, err := log.Read(ctx, id, 0)
		if err != nil {
			t.Fatal(err)
		}
		expectRecord(t, r, 1, "a", false)
		expectRecord(t, r, 2, "b", false)
		if final {
			expectRecord(t, r, 3, "failed", true)
			if _, _, err := r.Next(ctx, time.Second); !errors.Is(err, io.EOF) {
				t.Fatalf("after the final record: %v", err)
			}
		} else if _, _, err := r.Next(ctx, time.Second); !errors.Is(err, durable.ErrProducerLost) {
			t.Fatalf("after a close without a final record: %v", err)
		}
		r.Close()
	}
}

// loseAnswer runs the next script call, then fails it as a broken connection would.
type loseAnswer struct{ next atomic.Bool }

func (*loseAnswer) DialHook(next redis.DialHook) redis.DialHook { return next }
func (l *loseAnswer) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if name := cmd.Name(); (name == "evalsha" || name == "eval") && err == nil && l.next.CompareAndSwap(true, false) {
			return io.ErrUnexpectedEOF
		}
		return err
	}
}
func (*loseAnswer) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func mustAppend(t *testing.T, p durable.Producer, data string, final bool) {
	t.Helper()
	if err := p.Append(context.Background(), []byte(data), final); err != nil {
		t.Fatal(err)
	}
}

func expectRecord(t *testing.T, r durable.Reader, seq int, data string, final bool) {
	t.Helper()
	rec, ok, err := r.Next(context.Background(), 5*time.Second)
	if err != nil || !ok || rec.Seq != seq || string(rec.Data) != data || rec.Final != final {
		t.Fatalf("want #%d %q final=%v, got %+v ok=%v err=%v", seq, data, final, rec, ok, err)
	}
}
