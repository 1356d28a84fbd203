// Package sessiontest holds the conformance tests that every session.Store implementation
// must pass.
package sessiontest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/session"
)

// TestStore runs the conformance tests of a Store. newStore returns a fresh store whose
// sessions expire after ttl of idleness, compiling catalogs with cs.
func TestStore(t *testing.T, newStore func(t *testing.T, cs *catalog.Cache, ttl time.Duration) session.Store) {
	ctx := context.Background()
	basic, err := schemas.SampleCatalog("basic")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("create and resolve", func(t *testing.T) {
		cs := catalog.NewCache(8, 0, 0)
		c, err := cs.Compile(schemas.CatalogOf(basic))
		if err != nil {
			t.Fatal(err)
		}
		s := newStore(t, cs, time.Minute)
		id, err := create(ctx, s, c)
		if err != nil {
			t.Fatal(err)
		}
		got, err := s.Catalog(ctx, id)
		if err != nil || got.Hash != c.Hash {
			t.Fatalf("%v %v", got, err)
		}
		if _, err := s.Catalog(ctx, "unknown"); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("unknown id: %v", err)
		}
		if err := s.Ready(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("idle sessions expire, used ones do not", func(t *testing.T) {
		cs := catalog.NewCache(8, 0, 0)
		c, _ := cs.Compile(schemas.CatalogOf(basic))
		s := newStore(t, cs, 1500*time.Millisecond)
		idle, _ := create(ctx, s, c)
		used, _ := create(ctx, s, c)
		for range 4 {
			time.Sleep(500 * time.Millisecond)
			if _, err := s.Catalog(ctx, used); err != nil {
				t.Fatalf("a session in use expired: %v", err)
			}
		}
		if _, err := s.Catalog(ctx, idle); !errors.Is(err, session.ErrNotFound) {
			t.Fatalf("idle session: %v", err)
		}
	})
}

// create stores c under a new session id and returns the id.
func create(ctx context.Context, s session.Store, c *catalog.Catalog) (string, error) {
	id := session.NewID()
	return id, s.Create(ctx, id, c)
}
