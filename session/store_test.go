package session

import (
	"context"
	"errors"
	"regexp"
	"testing"
	"time"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/schemas"
)

func TestMemoryStoreExpiresIdleSessions(t *testing.T) {
	ctx := context.Background()
	cs := catalog.NewCache(4, 0, 0)
	basic, _ := schemas.SampleCatalog("basic")
	c, err := cs.Compile(schemas.CatalogOf(basic))
	if err != nil {
		t.Fatal(err)
	}
	m := NewMemory(2, 200*time.Millisecond)
	id, _ := create(ctx, m, c)
	if !regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`).MatchString(id) {
		t.Fatalf("id %q", id)
	}
	if got, err := m.Catalog(ctx, id); err != nil || got != c {
		t.Fatalf("%v %v", got, err)
	}
	time.Sleep(400 * time.Millisecond)
	if _, err := m.Catalog(ctx, id); !errors.Is(err, ErrNotFound) {
		t.Fatalf("expired session: %v", err)
	}
	// Bounded by entry count: the least recently used goes first.
	a, _ := create(ctx, m, c)
	b, _ := create(ctx, m, c)
	_, _ = m.Catalog(ctx, a)
	_, _ = create(ctx, m, c)
	if _, err := m.Catalog(ctx, b); !errors.Is(err, ErrNotFound) || m.Len() != 2 {
		t.Fatalf("LRU bound: %v, len %d", err, m.Len())
	}
}

// create stores c under a new session id and returns the id.
func create(ctx context.Context, s Store, c *catalog.Catalog) (string, error) {
	id := NewID()
	return id, s.Create(ctx, id, c)
}
