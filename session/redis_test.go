package session_test

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

	"github.com/genuiserver/genui/internal/redistest"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/session"
	"github.com/genuiserver/genui/session/sessiontest"
	"github.com/genuiserver/genui/tools"
)

// newClient returns a client of srv with short timeouts and no retries, closed when t ends.
func newClient(t testing.TB, srv *redistest.Server) *redis.Client {
	c := redis.NewClient(&redis.Options{
		Addr:          srv.Addr(),
		DialTimeout:   500 * time.Millisecond,
		ReadTimeout:   500 * time.Millisecond,
		WriteTimeout:  500 * time.Millisecond,
		MaxRetries:    -1,
		DialerRetries: 1,
	})
	t.Cleanup(func() { _ = c.Close() })
	if err := c.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	return c
}

// go-redis logs every failed dial; the tests provoke many on purpose.
func init() { redis.SetLogger(quiet{}) }

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

var prefixes atomic.Int64

// uniquePrefix isolates the keys of one test on a shared server.
func uniquePrefix() string { return fmt.Sprintf("t%d:", prefixes.Add(1)) }

func basicCatalog(t testing.TB, cs *session.Catalogs) *tools.Catalog {
	t.Helper()
	basic, err := schemas.SampleCatalog("basic")
	if err != nil {
		t.Fatal(err)
	}
	c, err := cs.Compile(basic)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRedisLog(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv)
	ignore := goleak.IgnoreCurrent()
	sessiontest.TestLog(t, func(t *testing.T, retention time.Duration) session.Log {
		return session.NewRedisLog(client, retention, session.WithKeyPrefix(uniquePrefix()))
	})
	goleak.VerifyNone(t, ignore)
}

func TestRedisStore(t *testing.T) {
	srv := redistest.Start(t)
	client := newClient(t, srv)
	sessiontest.TestStore(t, func(t *testing.T, cs *session.Catalogs, ttl time.Duration) session.Store {
		return session.NewRedis(client, cs, ttl, session.WithKeyPrefix(uniquePrefix()))
	})
}

// Two replicas: each has its own client, Catalogs and near cache, and they share Redis.
func TestRedisStoreReplicas(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	const ttl = time.Second
	csA, csB := session.NewCatalogs(8, 0), session.NewCatalogs(8, 0)
	clientA := newClient(t, srv)
	a := session.NewRedis(clientA, csA, ttl)
	b := session.NewRedis(newClient(t, srv), csB, ttl)
	c := basicCatalog(t, csA)

	id, err := a.Create(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	// B has never seen the catalog: it fetches its JSON and compiles it.
	got, err := b.Catalog(ctx, id)
	if err != nil || got.Hash != c.Hash || got == c {
		t.Fatalf("session of A on B: %v %v", got, err)
	}
	if cached, ok := csB.Lookup(c.Hash); !ok || cached != got {
		t.Fatal("B did not cache the catalog it compiled")
	}
	// Key layout.
	if v := clientA.Get(ctx, "genui:session:"+id).Val(); v != c.Hash {
		t.Fatalf("session key holds %q", v)
	}
	if v := clientA.Get(ctx, "genui:catalog:"+c.Hash).Val(); v != string(c.Canonical) {
		t.Fatal("catalog key does not hold the canonical JSON")
	}
	if _, err := b.Catalog(ctx, "unknown"); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}

	// A session used only on A (near-cache hits) stays alive for B; an idle one expires.
	hot, _ := a.Create(ctx, c)
	idle, _ := a.Create(ctx, c)
	for end := time.Now().Add(2 * ttl); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if _, err := a.Catalog(ctx, hot); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Catalog(ctx, hot); err != nil {
		t.Fatalf("a session hot on A expired for B: %v", err)
	}
	if _, err := b.Catalog(ctx, idle); !errors.Is(err, session.ErrNotFound) {
		t.Fatalf("idle session: %v", err)
	}
	// The catalog outlives its sessions.
	if pttl := clientA.PTTL(ctx, "genui:catalog:"+c.Hash).Val(); pttl <= 0 || pttl > ttl {
		t.Fatalf("catalog key TTL %v", pttl)
	}
}

// A stream produced through one RedisLog instance, read, watched and cancelled through
// another.
func TestRedisLogReplicas(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	clientA, clientB := newClient(t, srv), newClient(t, srv)
	ignore := goleak.IgnoreCurrent()
	beat := session.WithHeartbeat(100 * time.Millisecond)
	a := session.NewRedisLog(clientA, time.Minute, beat)
	b := session.NewRedisLog(clientB, time.Minute, beat)

	t.Run("produce on A, read on B", func(t *testing.T) {
		p, err := a.Create(ctx, "x")
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if _, err := b.Create(ctx, "x"); !errors.Is(err, session.ErrStreamExists) {
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
		p, err := session.NewRedisLog(dying, time.Minute, beat).Create(ctx, "z")
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
		if _, _, err := r.Next(ctx, 10*time.Second); !errors.Is(err, session.ErrProducerLost) {
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
		if _, _, err := r2.Next(ctx, time.Second); !errors.Is(err, session.ErrProducerLost) {
			t.Fatalf("resumed: want ErrProducerLost, got %v", err)
		}
	})
	t.Run("stalled producer declared lost", func(t *testing.T) {
		// A producer whose heartbeat lapses (a long GC pause, a partition) is declared
		// lost once, for everyone: its later appends fail instead of reaching some
		// readers only.
		slow := session.NewRedisLog(clientA, time.Minute, session.WithHeartbeat(time.Hour))
		p, _ := slow.Create(ctx, "stalled")
		defer p.Close()
		mustAppend(t, p, "a", false)
		r, _ := b.Read(ctx, "stalled", 0)
		defer r.Close()
		expectRecord(t, r, 1, "a", false)
		clientA.Del(ctx, "genui:stream:{stalled}:alive") // what expiry would do
		if _, _, err := r.Next(ctx, 5*time.Second); !errors.Is(err, session.ErrProducerLost) {
			t.Fatalf("want ErrProducerLost, got %v", err)
		}
		if err := p.Append(ctx, []byte("late"), false); !errors.Is(err, session.ErrStreamNotFound) {
			t.Fatalf("append after being declared lost: %v", err)
		}
	})

	t.Run("presence of a dead reader expires", func(t *testing.T) {
		p, _ := a.Create(ctx, "w")
		defer p.Close()
		dying := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
		r, _ := session.NewRedisLog(dying, time.Minute, beat).Read(ctx, "w", 0)
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
func TestRedisUnavailable(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	client, client2 := newClient(t, srv), newClient(t, srv)
	ignore := goleak.IgnoreCurrent()
	cs := session.NewCatalogs(8, 0)
	c := basicCatalog(t, cs)
	store := session.NewRedis(client, cs, time.Minute)
	replica := session.NewRedis(client2, session.NewCatalogs(8, 0), time.Minute)
	log := session.NewRedisLog(client, time.Minute, session.WithHeartbeat(100*time.Millisecond))

	id, err := store.Create(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
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
		if !errors.Is(err, session.ErrUnavailable) || !strings.Contains(err.Error(), "unavailable: redis: ") {
			t.Errorf("%s while Redis is down: %v", what, err)
		}
	}
	start := time.Now()
	_, err = replica.Catalog(ctx, id)
	unavailable("Store.Catalog", err)
	_, err = store.Create(ctx, c)
	unavailable("Store.Create", err)
	unavailable("Store.Ready", store.Ready(ctx))
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
	t.Logf("10 calls failed in %v, e.g. %v", time.Since(start), err)
	// A session in the near cache, renewed less than a tenth of its TTL ago, is served
	// without Redis.
	if got, err := store.Catalog(ctx, id); err != nil || got != c {
		t.Errorf("near-cache hit while Redis is down: %v", err)
	}
	p.Close()
	r.Close()

	srv.Restart() // empty: persistence is off
	deadline := time.Now().Add(5 * time.Second)
	for store.Ready(ctx) != nil || log.Ready(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("not ready after the restart: %v / %v", store.Ready(ctx), log.Ready(ctx))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := replica.Catalog(ctx, id); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("session lost with Redis's data: %v", err)
	}
	id2, err := store.Create(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := replica.Catalog(ctx, id2); err != nil || got.Hash != c.Hash {
		t.Fatalf("after the restart: %v", err)
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

func mustAppend(t *testing.T, p session.Producer, data string, final bool) {
	t.Helper()
	if err := p.Append(context.Background(), []byte(data), final); err != nil {
		t.Fatal(err)
	}
}

func expectRecord(t *testing.T, r session.Reader, seq int, data string, final bool) {
	t.Helper()
	rec, ok, err := r.Next(context.Background(), 5*time.Second)
	if err != nil || !ok || rec.Seq != seq || string(rec.Data) != data || rec.Final != final {
		t.Fatalf("want #%d %q final=%v, got %+v ok=%v err=%v", seq, data, final, rec, ok, err)
	}
}
