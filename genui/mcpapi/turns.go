package mcpapi

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"time"

	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/redis/go-redis/v9"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/internal/rediserr"
)

// Turns finds the stream of a generate_ui call that runs now from what its app knows:
// the call's arguments (a host gives the app the tool's input before its result; MCP has
// no partial results). Any replica must find a turn any other runs: keep them in Redis
// when replicas share one ([NewRedisTurns]).
type Turns interface {
	// Put names the stream of the turn key identifies, for ttl.
	Put(ctx context.Context, key, streamID string, ttl time.Duration) error
	// Get returns the stream key names, "" when none.
	Get(ctx context.Context, key string) (string, error)
}

// turnKey identifies a generate_ui call by its caller and arguments.
func turnKey(ctx context.Context, conversationID, prompt string) string {
	sum := sha256.Sum256([]byte(conversationID + "\x00" + prompt))
	return auth.Scope(ctx, base64.RawURLEncoding.EncodeToString(sum[:16]))
}

// NewMemoryTurns keeps the running turns of this process, at most n.
func NewMemoryTurns(n int) Turns {
	return &memoryTurns{lru: expirable.NewLRU[string, string](n, nil, turnTTL)}
}

type memoryTurns struct {
	lru *expirable.LRU[string, string]
}

func (m *memoryTurns) Put(_ context.Context, key, streamID string, _ time.Duration) error {
	m.lru.Add(key, streamID)
	return nil
}

func (m *memoryTurns) Get(_ context.Context, key string) (string, error) {
	id, _ := m.lru.Get(key)
	return id, nil
}

// NewRedisTurns keeps the running turns in Redis, under prefix (e.g. "genui:"), shared by
// every replica using the same Redis.
func NewRedisTurns(client redis.UniversalClient, prefix string) Turns {
	return &redisTurns{client: client, prefix: prefix + "mcp-turn:"}
}

type redisTurns struct {
	client redis.UniversalClient
	prefix string
}

func (r *redisTurns) Put(ctx context.Context, key, streamID string, ttl time.Duration) error {
	if err := r.client.Set(ctx, r.prefix+key, streamID, ttl).Err(); err != nil {
		return rediserr.Wrap(ctx, "MCP turn index", err)
	}
	return nil
}

func (r *redisTurns) Get(ctx context.Context, key string) (string, error) {
	id, err := r.client.Get(ctx, r.prefix+key).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	if err != nil {
		return "", rediserr.Wrap(ctx, "MCP turn index", err)
	}
	return id, nil
}

// turnTTL is how long a turn is found by its call's arguments: longer than a turn runs.
const turnTTL = 10 * time.Minute
