package durable_test

import (
	"testing"
	"time"

	"github.com/genuiserver/genui/genui/durable"
	"github.com/genuiserver/genui/genui/durable/durabletest"
)

func TestMemoryLog(t *testing.T) {
	durabletest.TestLog(t, func(t *testing.T, retention time.Duration) durable.Log {
		return durable.NewMemoryLog(retention)
	})
}
