package durable

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/firebase/genkit/go/core"
	"github.com/redis/go-redis/v9"

	"github.com/genuiserver/genui/internal/redistest"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/session"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

func events(n int) RunFunc {
	return func(ctx context.Context, emit core.StreamCallback[schemas.Event]) (*schemas.Result, error) {
		for i := range n {
			ev := schemas.Event{Type: schemas.EventToolRequest, ToolRequest: &schemas.ToolRequest{Name: "addOrUpdateSurface", Ref: fmt.Sprint(i),
				Input: json.RawMessage(`{"surfaceId":"s","definition":{"root":"t","widgets":[{"id":"t","widget":{"Text":{"text":"hello"}}}]}}`)}}
			if err := emit(ctx, ev); err != nil {
				return nil, err
			}
		}
		return &schemas.Result{FinishReason: "stop", Message: schemas.ResultMessage{Role: "model", Content: []schemas.TextContent{}}}, nil
	}
}

func readAll(t testing.TB, m *Manager, id string) []Item {
	t.Helper()
	sub, err := m.Subscribe(context.Background(), id, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	var items []Item
	for {
		it, ok, err := sub.Next(context.Background(), 10*time.Second)
		if err == io.EOF {
			return items
		}
		if err != nil || !ok {
			t.Fatalf("next: ok=%v err=%v", ok, err)
		}
		items = append(items, it)
	}
}

func TestStreamEndsWithTheResult(t *testing.T) {
	m := New(session.NewMemoryLog(time.Minute), WithLogger(quiet))
	id, err := m.Start(context.Background(), events(3))
	if err != nil {
		t.Fatal(err)
	}
	items := readAll(t, m, id)
	if len(items) != 4 || items[3].Result == nil || items[0].Event.ToolRequest.Ref != "0" || items[3].Seq != 4 {
		t.Fatalf("%+v", items)
	}
}

func TestPanicInATurnEndsTheStreamWithAnError(t *testing.T) {
	m := New(session.NewMemoryLog(time.Minute), WithLogger(quiet))
	id, _ := m.Start(context.Background(), func(context.Context, core.StreamCallback[schemas.Event]) (*schemas.Result, error) {
		panic("boom")
	})
	items := readAll(t, m, id)
	if len(items) != 1 || items[0].Err == nil || items[0].Err.Status != "INTERNAL" {
		t.Fatalf("%+v", items)
	}
}

func TestShutdownCancelsTurnsAfterTheDeadline(t *testing.T) {
	m := New(session.NewMemoryLog(time.Minute), WithLogger(quiet))
	id, _ := m.Start(context.Background(), func(ctx context.Context, _ core.StreamCallback[schemas.Event]) (*schemas.Result, error) {
		<-ctx.Done()
		return nil, ctx.Err()
	})
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	m.Shutdown(ctx)
	items := readAll(t, m, id)
	if len(items) != 1 || items[0].Err == nil || items[0].Err.Status != "UNAVAILABLE" {
		t.Fatalf("%+v", items)
	}
}

// BenchmarkDurableEvent measures what the durable path adds per streamed event: encoding
// the record, storing it, waking the reader, decoding it (in-memory log).
func BenchmarkDurableEvent(b *testing.B) {
	benchDurable(b, session.NewMemoryLog(time.Minute))
}

func benchDurable(b *testing.B, log session.Log) {
	m := New(log, WithLogger(quiet))
	b.ReportAllocs()
	b.ResetTimer()
	const perStream = 100
	for n := 0; n < b.N; n += perStream {
		id, err := m.Start(context.Background(), events(perStream))
		if err != nil {
			b.Fatal(err)
		}
		if items := readAll(b, m, id); len(items) != perStream+1 {
			b.Fatalf("%d items", len(items))
		}
	}
}

// BenchmarkDurableEventRedis is BenchmarkDurableEvent on the Redis stream log.
func BenchmarkDurableEventRedis(b *testing.B) {
	rdb := redistest.Start(b)
	opts, _ := redis.ParseURL(rdb.URL())
	client := redis.NewClient(opts)
	defer client.Close()
	benchDurable(b, session.NewRedisLog(client, time.Minute))
}
