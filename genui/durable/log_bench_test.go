package durable_test

import (
	"bytes"
	"context"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui/durable"
	"github.com/genuiserver/genui/internal/testkit/redistest"
)

func BenchmarkMemoryLogAppendRead(b *testing.B) {
	benchAppendRead(b, durable.NewMemoryLog(time.Minute))
}

func BenchmarkRedisLogAppendRead(b *testing.B) {
	srv := redistest.Start(b)
	benchAppendRead(b, durable.NewRedisLog(srv.Client(b), time.Minute))
}

// benchAppendRead appends b.N events of a typical size to one stream while a reader tails
// it, and reports the cost per event: stored, then delivered to the reader.
func benchAppendRead(b *testing.B, log durable.Log) {
	ctx := context.Background()
	event := append(bytes.Repeat([]byte("x"), 199), '\n') // a 200-byte NDJSON line
	id := "bench"
	p, err := log.Create(ctx, id)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	r, err := log.Read(ctx, id, 0)
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 1; i <= b.N; i++ {
			rec, ok, err := r.Next(ctx, 10*time.Second)
			if err != nil || !ok || rec.Seq != i {
				b.Errorf("record %d: %+v ok=%v err=%v", i, rec, ok, err)
				return
			}
		}
	}()
	for i := 1; i <= b.N; i++ {
		if err := p.Append(ctx, event, i == b.N); err != nil {
			b.Fatal(err)
		}
	}
	<-done
	b.ReportMetric(float64(time.Since(start).Nanoseconds())/float64(b.N), "ns/event")
}
