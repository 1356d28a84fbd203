package durable_test

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui/durable"
	"github.com/genuiserver/genui/internal/testkit/durabletest"
)

func TestMemoryLog(t *testing.T) {
	durabletest.TestLog(t, func(t *testing.T, retention time.Duration) durable.Log {
		return durable.NewMemoryLog(retention)
	})
}

// Finished streams beyond the byte budget are dropped oldest first; a stream being written
// is never dropped, whatever the budget.
func TestMemoryLogByteBudget(t *testing.T) {
	ctx := context.Background()
	l := durable.NewMemoryLog(time.Minute, durable.WithMaxBytes(3*1330))
	running, err := l.Create(ctx, "running")
	if err != nil {
		t.Fatal(err)
	}
	if err := running.Append(ctx, make([]byte, 5000), false); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		p, err := l.Create(ctx, fmt.Sprint("s", i))
		if err != nil {
			t.Fatal(err)
		}
		if err := p.Append(ctx, make([]byte, 996), false); err != nil {
			t.Fatal(err)
		}
		if err := p.Append(ctx, []byte("end"), true); err != nil {
			t.Fatal(err)
		}
		p.Close()
	}
	for i, want := range []bool{false, false, true, true, true} {
		_, err := l.Read(ctx, fmt.Sprint("s", i), 0)
		if got := err == nil; got != want {
			t.Errorf("s%d kept: %v, want %v (%v)", i, got, want, err)
		}
	}
	r, err := l.Read(ctx, "running", 0)
	if err != nil {
		t.Fatalf("a running stream was dropped: %v", err)
	}
	r.Close()
	defer running.Close()
	// A kept stream reads back whole, its last record final.
	r, _ = l.Read(ctx, "s4", 0)
	defer r.Close()
	for seq, size := range []int{996, 3} {
		rec, ok, err := r.Next(ctx, time.Second)
		if err != nil || !ok || rec.Seq != seq+1 || len(rec.Data) != size || rec.Final != (seq == 1) {
			t.Fatalf("record %d: %+v %v %v", seq+1, rec, ok, err)
		}
	}
	if _, _, err := r.Next(ctx, time.Second); err != io.EOF {
		t.Fatalf("after the final record: %v", err)
	}
}
