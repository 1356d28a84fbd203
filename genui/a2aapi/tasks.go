package a2aapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/hashicorp/golang-lru/v2/expirable"
	"github.com/redis/go-redis/v9"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/internal/redisconn"
	"github.com/genuiserver/genui/internal/rediserr"
)

// task is what the server keeps of an A2A task: the task as clients see it, and where its
// latest turn streams.
type task struct {
	// Task is the task: its status, the user messages of its turns. After a turn, its
	// status message, as tasks/get returns it, holds the turn whole: its parts are kept
	// in Turn, and the message here has none (see agent.present).
	Task *a2a.Task `json:"task"`
	// Turn is what the latest turn sent, once it ended: its text and calls, and each run
	// of its A2UI messages as the final state of the surfaces (see encoder.whole).
	Turn []turnPart `json:"turn,omitempty"`
	// Stream is the core stream of the task's latest turn.
	Stream string `json:"stream"`
	// Wire is what the latest turn's A2UI parts are encoded for (the A2UI version, the
	// MIME type).
	Wire wire `json:"wire"`
}

// TaskStore keeps A2A tasks, by id. Implementations are safe for concurrent use.
type TaskStore interface {
	// Put stores the task, replacing what was stored under its id; its idle time starts
	// again.
	Put(ctx context.Context, t *task) error
	// Get returns the task, or an error wrapping a2a.ErrTaskNotFound.
	Get(ctx context.Context, id a2a.TaskID) (*task, error)
	// Ready reports whether the store can serve requests.
	Ready(ctx context.Context) error
}

// NewMemoryTasks returns a TaskStore in process: at most size tasks, each expiring ttl
// after it was last stored or read.
func NewMemoryTasks(size int, ttl time.Duration) TaskStore {
	return &memoryTasks{lru: expirable.NewLRU[a2a.TaskID, *memoryTask](max(size, 1), nil, ttl)}
}

type memoryTasks struct {
	lru *expirable.LRU[a2a.TaskID, *memoryTask]
}

// memoryTask is a task as stored, never changed (Put and Get copy what a caller may
// change: the task's fields and its history's list; messages are not changed once
// made).
type memoryTask struct {
	t task
}

// copyTask copies a task but for its messages.
func copyTask(t *task) task {
	cp := *t
	at := *t.Task
	at.History = slices.Clone(at.History)
	cp.Task = &at
	return cp
}

// scoped is the key of task id of the caller of ctx: another caller's lookup misses.
func scoped(ctx context.Context, id a2a.TaskID) a2a.TaskID {
	return a2a.TaskID(auth.Scope(ctx, string(id)))
}

func (m *memoryTasks) Put(ctx context.Context, t *task) error {
	m.lru.Add(scoped(ctx, t.Task.ID), &memoryTask{t: copyTask(t)})
	return nil
}

func (m *memoryTasks) Get(ctx context.Context, id a2a.TaskID) (*task, error) {
	id = scoped(ctx, id)
	e, ok := m.lru.Get(id)
	if !ok {
		return nil, a2a.ErrTaskNotFound
	}
	m.lru.Add(id, e) // renew the idle TTL
	t := copyTask(&e.t)
	return &t, nil
}

func (m *memoryTasks) Ready(context.Context) error { return nil }

func decodeTask(b []byte) (*task, error) {
	var t task
	if err := json.Unmarshal(b, &t); err != nil || t.Task == nil {
		return nil, fmt.Errorf("a stored task cannot be read: %v", err)
	}
	return &t, nil
}

// NewRedisTasks returns a TaskStore shared by the replicas using client: each task under
// <prefix>a2a-task:<id>, expiring ttl after it was last stored or read. A task's state
// is stored, and reported, once acks.Replicas replicas of its primary have it (none: at
// once).
func NewRedisTasks(client redis.UniversalClient, ttl time.Duration, prefix string, acks ...TaskAcks) TaskStore {
	if ttl <= 0 {
		panic("a2aapi.NewRedisTasks: ttl must be positive")
	}
	r := &redisTasks{client: client, ttl: ttl, prefix: prefix}
	for _, a := range acks {
		r.ack = redisconn.Ack{Replicas: a.Replicas, Timeout: a.Timeout}
	}
	return r
}

// TaskAcks are the replicas a Redis task store waits for, at most Timeout, before a
// task's state is reported.
type TaskAcks struct {
	Replicas int
	Timeout  time.Duration
}

type redisTasks struct {
	client redis.UniversalClient
	ttl    time.Duration
	prefix string
	ack    redisconn.Ack
}

const taskStoreWhat = "A2A task store"

func (r *redisTasks) key(ctx context.Context, id a2a.TaskID) string {
	return r.prefix + "a2a-task:" + auth.Scope(ctx, string(id))
}

// The task is at <key>.
func (r *redisTasks) Put(ctx context.Context, t *task) error {
	b, err := json.Marshal(t)
	if err != nil {
		return fmt.Errorf("encoding task %s: %w", t.Task.ID, err)
	}
	key := r.key(ctx, t.Task.ID)
	if err := r.ack.Do(ctx, r.client, key, func(c redis.Cmdable) error { return c.Set(ctx, key, b, r.ttl).Err() }); err != nil {
		return rediserr.Wrap(ctx, taskStoreWhat, err)
	}
	return nil
}

func (r *redisTasks) Get(ctx context.Context, id a2a.TaskID) (*task, error) {
	b, err := r.client.GetEx(ctx, r.key(ctx, id), r.ttl).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, a2a.ErrTaskNotFound
	}
	if err != nil {
		return nil, rediserr.Wrap(ctx, taskStoreWhat, err)
	}
	return decodeTask(b)
}

func (r *redisTasks) Ready(ctx context.Context) error {
	if err := redisconn.Ready(ctx, r.client); err != nil {
		return rediserr.Wrap(ctx, taskStoreWhat, err)
	}
	return nil
}
