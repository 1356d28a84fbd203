package redistest

import (
	"net"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestStartStopRestart(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := Start(t)
	if !strings.HasPrefix(s.URL(), "redis://127.0.0.1:") || !strings.HasSuffix(s.URL(), "/0") {
		t.Fatalf("URL %q", s.URL())
	}
	if err := ping(s.Addr()); err != nil {
		t.Fatal(err)
	}
	s.Stop()
	if c, err := net.Dial("tcp", s.Addr()); err == nil {
		c.Close()
		t.Fatal("port still open after Stop")
	}
	s.Stop() // idempotent
	s.Restart()
	if err := ping(s.Addr()); err != nil {
		t.Fatalf("after restart: %v", err)
	}
	s.Stop()
}
