package session_test

import (
	"testing"
	"time"

	"github.com/genuiserver/genui/session"
	"github.com/genuiserver/genui/session/sessiontest"
)

func TestMemoryLog(t *testing.T) {
	sessiontest.TestLog(t, func(t *testing.T, retention time.Duration) session.Log {
		return session.NewMemoryLog(retention)
	})
}

func TestMemoryStore(t *testing.T) {
	sessiontest.TestStore(t, func(t *testing.T, cs *session.Catalogs, ttl time.Duration) session.Store {
		return session.NewMemory(100, ttl)
	})
}
