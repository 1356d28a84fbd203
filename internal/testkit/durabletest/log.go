// Package durabletest holds the conformance tests that every durable.Log implementation
// must pass.
package durabletest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui/durable"
)

// TestLog runs the conformance tests of a Log. newLog returns a fresh log whose finished
// streams are kept for retention.
func TestLog(t *testing.T, newLog func(t *testing.T, retention time.Duration) durable.Log) {
	ctx := context.Background()
	t.Run("replay then tail then EOF", func(t *testing.T) {
		l := newLog(t, time.Minute)
		p, err := l.Create(ctx, "s1")
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close()
		if _, err := l.Create(ctx, "s1"); !errors.Is(err, durable.ErrStreamExists) {
			t.Fatalf("duplicate create: %v", err)
		}
		must(t, p.Append(ctx, []byte("a"), false))
		must(t, p.Append(ctx, []byte("b"), false))
		r, err := l.Read(ctx, "s1", 0)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		expect(t, r, 1, "a", false)
		expect(t, r, 2, "b", false)
		if _, ok, err := r.Next(ctx, 50*time.Millisecond); ok || err != nil {
			t.Fatalf("caught up: want a timeout, got ok=%v err=%v", ok, err)
		}
		go func() {
			time.Sleep(50 * time.Millisecond)
			_ = p.Append(ctx, []byte("c"), false)
			_ = p.Append(ctx, []byte("end"), true)
		}()
		expect(t, r, 3, "c", false)
		expect(t, r, 4, "end", true)
		if _, _, err := r.Next(ctx, time.Second); err != io.EOF {
			t.Fatalf("after the final record: %v", err)
		}
		if err := p.Append(ctx, []byte("late"), false); err == nil {
			t.Fatal("append after the final record must fail")
		}
	})
	t.Run("read after an offset and after completion", func(t *testing.T) {
		l := newLog(t, time.Minute)
		p, _ := l.Create(ctx, "s2")
		defer p.Close()
		for i := 1; i <= 5; i++ {
			must(t, p.Append(ctx, []byte(fmt.Sprint(i)), i == 5))
		}
		r, err := l.Read(ctx, "s2", 3)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		expect(t, r, 4, "4", false)
		expect(t, r, 5, "5", true)
	})
	t.Run("unknown stream", func(t *testing.T) {
		l := newLog(t, time.Minute)
		if _, err := l.Read(ctx, "nope", 0); !errors.Is(err, durable.ErrStreamNotFound) {
			t.Fatalf("%v", err)
		}
		if err := l.Cancel(ctx, "nope"); !errors.Is(err, durable.ErrStreamNotFound) {
			t.Fatalf("%v", err)
		}
	})
	t.Run("expires after retention", func(t *testing.T) {
		l := newLog(t, 300*time.Millisecond)
		p, _ := l.Create(ctx, "s3")
		must(t, p.Append(ctx, []byte("x"), true))
		p.Close()
		deadline := time.Now().Add(5 * time.Second)
		for {
			r, err := l.Read(ctx, "s3", 0)
			if errors.Is(err, durable.ErrStreamNotFound) {
				return
			}
			if err == nil {
				r.Close()
			}
			if time.Now().After(deadline) {
				t.Fatal("stream still readable long after its retention")
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	t.Run("watched and cancelled", func(t *testing.T) {
		l := newLog(t, time.Minute)
		p, _ := l.Create(ctx, "s4")
		defer p.Close()
		if p.Watched(ctx) {
			t.Fatal("watched before any reader")
		}
		r, _ := l.Read(ctx, "s4", 0)
		waitFor(t, func() bool { return p.Watched(ctx) }, "watched with a reader")
		r.Close()
		waitFor(t, func() bool { return !p.Watched(ctx) }, "unwatched after the reader closed")
		must(t, l.Cancel(ctx, "s4"))
		select {
		case <-p.Cancelled():
		case <-time.After(5 * time.Second):
			t.Fatal("producer not told about the cancel")
		}
	})
	t.Run("producer lost", func(t *testing.T) {
		l := newLog(t, time.Minute)
		p, _ := l.Create(ctx, "s5")
		must(t, p.Append(ctx, []byte("a"), false))
		r, _ := l.Read(ctx, "s5", 0)
		defer r.Close()
		expect(t, r, 1, "a", false)
		p.Close()
		if _, _, err := r.Next(ctx, 10*time.Second); !errors.Is(err, durable.ErrProducerLost) {
			t.Fatalf("want ErrProducerLost, got %v", err)
		}
	})
	t.Run("many readers see the same records", func(t *testing.T) {
		l := newLog(t, time.Minute)
		p, _ := l.Create(ctx, "s6")
		defer p.Close()
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for range 8 {
			r, err := l.Read(ctx, "s6", 0)
			if err != nil {
				t.Fatal(err)
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer r.Close()
				for i := 1; ; i++ {
					rec, ok, err := r.Next(ctx, 10*time.Second)
					if err == io.EOF {
						if i != 101 {
							errs <- fmt.Errorf("EOF after %d records", i-1)
						}
						return
					}
					if err != nil || !ok || rec.Seq != i || string(rec.Data) != fmt.Sprint(i) {
						errs <- fmt.Errorf("record %d: %+v ok=%v err=%v", i, rec, ok, err)
						return
					}
				}
			}()
		}
		for i := 1; i <= 100; i++ {
			must(t, p.Append(ctx, []byte(fmt.Sprint(i)), i == 100))
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Error(err)
		}
	})
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func expect(t *testing.T, r durable.Reader, seq int, data string, final bool) {
	t.Helper()
	rec, ok, err := r.Next(context.Background(), 10*time.Second)
	if err != nil || !ok || rec.Seq != seq || string(rec.Data) != data || rec.Final != final {
		t.Fatalf("want #%d %q final=%v, got %+v ok=%v err=%v", seq, data, final, rec, ok, err)
	}
}

func waitFor(t *testing.T, cond func() bool, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting: " + what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
