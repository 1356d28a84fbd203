package script

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestNextTakesQueueThenFallback(t *testing.T) {
	s := New[string, string]("fake")
	s.Enqueue("one", "two")
	fallback := func(req string) string { return "fallback " + req }
	var got []string
	for _, req := range []string{"a", "b", "c"} {
		got = append(got, s.Next(req, fallback))
	}
	if want := []string{"one", "two", "fallback c"}; !slices.Equal(got, want) {
		t.Errorf("replies = %q, want %q", got, want)
	}
	if reqs := s.Requests(); !slices.Equal(reqs, []string{"a", "b", "c"}) {
		t.Errorf("Requests() = %q", reqs)
	}
}

func TestWaitRequests(t *testing.T) {
	s := New[int, int]("fake")
	go func() {
		time.Sleep(10 * time.Millisecond)
		s.Next(1, func(int) int { return 0 })
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.WaitRequests(ctx, 1); err != nil {
		t.Fatalf("WaitRequests(1) = %v", err)
	}

	short, cancelShort := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancelShort()
	if err := s.WaitRequests(short, 2); err != context.DeadlineExceeded {
		t.Errorf("WaitRequests(2) with a short deadline = %v", err)
	}

	s.Stop()
	s.Stop() // a second Stop does nothing
	<-s.Stopped()
	if err := s.WaitRequests(ctx, 2); err == nil || err.Error() != "fake: server closed" {
		t.Errorf("WaitRequests after Stop = %v, want fake: server closed", err)
	}
}

func TestCall(t *testing.T) {
	var c Call
	select {
	case <-c.Done():
		t.Fatal("Done closed before Finish")
	default:
	}
	c.Finish()
	<-c.Done()
	if c.Cancelled() {
		t.Error("Cancelled without Abort")
	}

	var aborted Call
	func() {
		defer func() {
			if r := recover(); r != http.ErrAbortHandler {
				t.Errorf("Abort panicked with %v, want http.ErrAbortHandler", r)
			}
		}()
		aborted.Abort()
	}()
	if !aborted.Cancelled() {
		t.Error("not Cancelled after Abort")
	}
}

func TestStream(t *testing.T) {
	var c Call
	w := httptest.NewRecorder()
	c.Stream(context.Background(), w, make(chan struct{}), time.Millisecond, [][]byte{[]byte("a\n"), []byte("b\n")})
	if w.Code != http.StatusOK || w.Body.String() != "a\nb\n" || !w.Flushed {
		t.Errorf("Stream wrote %d %q (flushed %v)", w.Code, w.Body, w.Flushed)
	}
	if c.Cancelled() {
		t.Error("Cancelled after a whole stream")
	}

	stop := make(chan struct{})
	close(stop)
	w = httptest.NewRecorder()
	func() {
		defer func() { _ = recover() }()
		c.Stream(context.Background(), w, stop, time.Hour, [][]byte{[]byte("a\n"), []byte("b\n")})
	}()
	if w.Body.String() != "a\n" || !c.Cancelled() {
		t.Errorf("a stopped Stream wrote %q, cancelled %v", w.Body, c.Cancelled())
	}
}

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		s    string
		n    int
		want []string
	}{
		{"", 3, []string{""}},
		{"abcdef", 0, []string{"abcdef"}},
		{"abcdef", 4, []string{"a", "bc", "d", "ef"}},
		{"héé", 5, []string{"h", "é", "é"}},
	} {
		if got := Split(tc.s, tc.n, strings.Clone); !slices.Equal(got, tc.want) {
			t.Errorf("Split(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
