package quota

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/genuiserver/genui/internal/testkit/redistest"
)

// Replicas sharing a Redis share each caller's limits: three Quotas, one Redis, on each
// topology.
func TestSharedLimits(t *testing.T) {
	redistest.EachTopology(t, func(t *testing.T, client redis.UniversalClient, _ int) {
		ctx := context.Background()
		replicas := func(l Limits) []*Quota {
			prefix := redistest.UniquePrefix()
			return []*Quota{New(l, WithRedis(client, prefix)), New(l, WithRedis(client, prefix)), New(l, WithRedis(client, prefix))}
		}
		t.Run("streams", func(t *testing.T) {
			qs := replicas(Limits{Streams: 2})
			r1, err := qs[0].Admit(ctx, "alice")
			must(t, err)
			r2, err := qs[1].Admit(ctx, "alice")
			must(t, err)
			if _, err := qs[2].Admit(ctx, "alice"); IsExceeded(err) == nil || IsExceeded(err).Limit != "streams" {
				t.Fatalf("a third turn on a third replica: %v", err)
			}
			r3, err := qs[2].Admit(ctx, "bob")
			must(t, err)
			r1()
			r1() // twice: once
			r4, err := qs[2].Admit(ctx, "alice")
			must(t, err)
			for _, r := range []func(){r2, r3, r4} {
				r()
			}
		})
		t.Run("rate", func(t *testing.T) {
			// 5 turns a second, burst 5, asked for 40 times at once across 3 replicas.
			qs := replicas(Limits{Rate: 5, Burst: 5})
			var admitted atomic.Int64
			var wg sync.WaitGroup
			var retry atomic.Int64
			for i := range 40 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					release, err := qs[i%3].Admit(ctx, "carol")
					if err == nil {
						admitted.Add(1)
						release()
						return
					}
					if e := IsExceeded(err); e == nil || e.Limit != "rate" || e.RetryAfterSeconds() < 1 {
						t.Errorf("refusal: %v", err)
					} else {
						retry.Store(int64(e.RetryAfter))
					}
				}()
			}
			wg.Wait()
			if n := admitted.Load(); n != 5 {
				t.Fatalf("%d turns admitted at once across 3 replicas, want the burst of 5", n)
			}
			time.Sleep(time.Duration(retry.Load()))
			release, err := qs[1].Admit(ctx, "carol")
			must(t, err)
			release()
		})
		t.Run("fractional rate", func(t *testing.T) {
			qs := replicas(Limits{Rate: 0.5, Burst: 1})
			release, err := qs[0].Admit(ctx, "dave")
			must(t, err)
			release()
			_, err = qs[1].Admit(ctx, "dave")
			if e := IsExceeded(err); e == nil || e.RetryAfter < time.Second || e.RetryAfter > 2*time.Second {
				t.Fatalf("a second turn within 2 s at 0.5/s: %v", err)
			}
		})
		t.Run("hourly catalogs and sessions", func(t *testing.T) {
			qs := replicas(Limits{Catalogs: 2, Sessions: 1})
			must(t, qs[0].AdmitCatalog(ctx, "erin"))
			must(t, qs[1].AdmitCatalog(ctx, "erin"))
			if e := IsExceeded(qs[2].AdmitCatalog(ctx, "erin")); e == nil || e.Limit != "catalogs" || e.RetryAfter < 29*time.Minute {
				t.Fatalf("a third catalog in an hour: %v", e)
			}
			must(t, qs[2].AdmitSession(ctx, "erin"))
			if e := IsExceeded(qs[0].AdmitSession(ctx, "erin")); e == nil || e.Limit != "sessions" {
				t.Fatalf("a second session in an hour: %v", e)
			}
		})
		t.Run("a dead replica's places expire", func(t *testing.T) {
			qs := replicas(Limits{Streams: 1})
			for _, q := range qs {
				q.shared.lease = 600 * time.Millisecond
			}
			if _, err := qs[0].Admit(ctx, "frank"); err != nil { // never released: the replica "dies"
				t.Fatal(err)
			}
			if _, err := qs[1].Admit(ctx, "frank"); IsExceeded(err) == nil {
				t.Fatalf("while the lease lasts: %v", err)
			}
			// The running turn renews its lease: it still holds after two leases.
			time.Sleep(1200 * time.Millisecond)
			if _, err := qs[1].Admit(ctx, "frank"); IsExceeded(err) == nil {
				t.Fatalf("a renewed lease: %v", err)
			}
		})
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Without Redis (a stopped one) a shared limit answers the store's error, not a refusal.
func TestSharedLimitsUnavailable(t *testing.T) {
	srv := redistest.Start(t)
	q := New(Limits{Streams: 1, Rate: 5}, WithRedis(srv.Client(t), "x:"))
	srv.Stop()
	_, err := q.Admit(context.Background(), "a")
	if err == nil || IsExceeded(err) != nil {
		t.Fatalf("Admit with Redis down: %v", err)
	}
	if q.Running() != 0 {
		t.Fatalf("a refused turn holds a place: %d", q.Running())
	}
}
