package session_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/internal/testkit/redistest"
	"github.com/genuiserver/genui/internal/testkit/sessiontest"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/session"
)

func basicCatalog(t testing.TB, cs *catalog.Cache) *catalog.Catalog {
	t.Helper()
	basic, err := schemas.SampleCatalog("basic")
	if err != nil {
		t.Fatal(err)
	}
	c, err := cs.Compile(schemas.CatalogOf(basic))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestRedisStore(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, client redis.UniversalClient, replicas int) {
		sessiontest.TestStore(t, func(t *testing.T, cs *catalog.Cache, ttl time.Duration) session.Store {
			return session.NewRedis(client, cs, ttl, session.WithKeyPrefix(redistest.UniquePrefix()), session.WithReplicaAcks(replicas, time.Second))
		})
	})
}

// Two replicas: each has its own client, Catalogs and near cache, and they share Redis.
func TestRedisStoreReplicas(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	const ttl = time.Second
	csA, csB := catalog.NewCache(8, 0, 0), catalog.NewCache(8, 0, 0)
	clientA := srv.Client(t)
	a := session.NewRedis(clientA, csA, ttl)
	b := session.NewRedis(srv.Client(t), csB, ttl)
	c := basicCatalog(t, csA)

	id, err := create(ctx, a, c)
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
	hot, _ := create(ctx, a, c)
	idle, _ := create(ctx, a, c)
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

// Redis stops: the store fails promptly with ErrUnavailable, but for a session its near
// cache renewed recently; Redis comes back: the same clients work again.
func TestRedisStoreUnavailable(t *testing.T) {
	ctx := context.Background()
	srv := redistest.Start(t)
	client, client2 := srv.Client(t), srv.Client(t)
	ignore := goleak.IgnoreCurrent()
	cs := catalog.NewCache(8, 0, 0)
	c := basicCatalog(t, cs)
	store := session.NewRedis(client, cs, time.Minute)
	replica := session.NewRedis(client2, catalog.NewCache(8, 0, 0), time.Minute)

	id, err := create(ctx, store, c)
	if err != nil {
		t.Fatal(err)
	}
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
	_, err = create(ctx, store, c)
	unavailable("Store.Create", err)
	unavailable("Store.Ready", store.Ready(ctx))
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("failing took %v", d)
	}
	// A session in the near cache, renewed less than a tenth of its TTL ago, is served
	// without Redis.
	if got, err := store.Catalog(ctx, id); err != nil || got != c {
		t.Errorf("near-cache hit while Redis is down: %v", err)
	}

	srv.Restart() // empty: persistence is off
	deadline := time.Now().Add(5 * time.Second)
	for store.Ready(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("not ready after the restart: %v", store.Ready(ctx))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := replica.Catalog(ctx, id); !errors.Is(err, session.ErrNotFound) {
		t.Errorf("session lost with Redis's data: %v", err)
	}
	id2, err := create(ctx, store, c)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := replica.Catalog(ctx, id2); err != nil || got.Hash != c.Hash {
		t.Fatalf("after the restart: %v", err)
	}
	goleak.VerifyNone(t, ignore, redistest.IgnoreGoroutines())
}

// create stores c under a new session id and returns the id.
func create(ctx context.Context, s session.Store, c *catalog.Catalog) (string, error) {
	id := session.NewID()
	return id, s.Create(ctx, id, c)
}
