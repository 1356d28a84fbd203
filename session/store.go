package session

import (
	"context"
	"errors"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/internal/ids"
	"github.com/genuiserver/genui/internal/rediserr"
)

// ErrNotFound reports an unknown or expired session id.
var ErrNotFound = errors.New("session not found")

// Store maps session ids to compiled catalogs.
type Store interface {
	// Create stores the catalog under the session id (a new one: see NewID; the service
	// may put it behind its caller's prefix).
	Create(ctx context.Context, id string, c *catalog.Catalog) error
	// Catalog returns the session's catalog, or an error wrapping ErrNotFound.
	Catalog(ctx context.Context, id string) (*catalog.Catalog, error)
	// Ready reports whether the store can serve requests.
	Ready(ctx context.Context) error
}

// NewID returns a new session id: 128 random bits, base64url without padding (22 chars).
func NewID() string { return ids.New() }

// Memory is the in-process Store: an LRU bounded by entry count whose entries expire after
// an idle TTL (each use renews it). Sessions share catalog pointers, so a session costs an
// id and an LRU entry.
type Memory struct {
	lru *expirable.LRU[string, *catalog.Catalog]
}

// NewMemory returns a Memory store holding at most size sessions, each expiring ttl after
// its last use.
func NewMemory(size int, ttl time.Duration) *Memory {
	return &Memory{lru: expirable.NewLRU[string, *catalog.Catalog](size, nil, ttl)}
}

// Create implements Store.
func (m *Memory) Create(_ context.Context, id string, c *catalog.Catalog) error {
	m.lru.Add(id, c)
	return nil
}

// Catalog implements Store. A hit renews the session's TTL.
func (m *Memory) Catalog(_ context.Context, id string) (*catalog.Catalog, error) {
	c, ok := m.lru.Get(id)
	if !ok {
		return nil, ErrNotFound
	}
	m.lru.Add(id, c) // renew the idle TTL
	return c, nil
}

// Ready implements Store; memory is always ready.
func (m *Memory) Ready(context.Context) error { return nil }

// Len returns the number of live sessions.
func (m *Memory) Len() int { return m.lru.Len() }

// ErrUnavailable reports that a shared backend (Redis) cannot be reached; the request may
// succeed later.
var ErrUnavailable = rediserr.ErrUnavailable
