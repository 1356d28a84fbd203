package session_test

import (
	"testing"
	"time"

	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/internal/testkit/sessiontest"
	"github.com/genuiserver/genui/session"
)

func TestMemoryStore(t *testing.T) {
	sessiontest.TestStore(t, func(t *testing.T, cs *catalog.Cache, ttl time.Duration) session.Store {
		return session.NewMemory(100, ttl)
	})
}
