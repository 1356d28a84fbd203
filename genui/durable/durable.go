package durable

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/firebase/genkit/go/core"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/jsonenc"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/session"
)

// RunFunc runs one turn, emitting its events.
type RunFunc func(ctx context.Context, emit core.StreamCallback[schemas.Event]) (*schemas.Result, error)

// Manager starts turns into a stream log and reads them back.
type Manager struct {
	log   session.Log
	grace time.Duration
	lg    *slog.Logger

	wg      sync.WaitGroup
	mu      sync.Mutex
	running map[string]context.CancelCauseFunc
}

// Option configures a Manager.
type Option func(*Manager)

// WithGrace sets how long a turn runs on while no client reads its stream (default 30 s).
func WithGrace(d time.Duration) Option { return func(m *Manager) { m.grace = d } }

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(m *Manager) { m.lg = l } }

// New returns a Manager writing to log.
func New(log session.Log, opts ...Option) *Manager {
	m := &Manager{log: log, grace: 30 * time.Second, lg: slog.Default(), running: map[string]context.CancelCauseFunc{}}
	for _, o := range opts {
		o(m)
	}
	return m
}

// Reasons a turn is stopped.
var (
	errAbandoned = errors.New("no client read the stream during the grace period")
	errCancelled = errors.New("cancelled by request")
	errShutdown  = errors.New("the server is shutting down")
)

// Start creates a stream and runs the turn into it in the background; ctx only provides
// values (trace, logger): the turn outlives it. It returns the new stream's id.
func (m *Manager) Start(ctx context.Context, run RunFunc) (string, error) {
	id := session.NewID()
	p, err := m.log.Create(ctx, id)
	if err != nil {
		return "", fmt.Errorf("creating stream: %w", err)
	}
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	m.mu.Lock()
	m.running[id] = cancel
	m.mu.Unlock()
	m.wg.Add(1)
	go m.produce(runCtx, cancel, id, p, run)
	return id, nil
}

func (m *Manager) produce(ctx context.Context, cancel context.CancelCauseFunc, id string, p session.Producer, run RunFunc) {
	defer m.wg.Done()
	defer func() {
		m.mu.Lock()
		delete(m.running, id)
		m.mu.Unlock()
		cancel(nil)
		p.Close()
	}()
	stop := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		m.watch(ctx, cancel, p, stop)
	}()
	res, err := m.run(ctx, p, run)
	close(stop)
	<-watched

	final := &record{Type: "result", Result: res}
	if err != nil {
		final = &record{Type: "error", Error: m.turnError(ctx, err).Wire()}
	}
	b, merr := jsonenc.Marshal(final)
	if merr != nil {
		b, _ = jsonenc.Marshal(&record{Type: "error", Error: &schemas.Error{Status: genui.StatusInternal, Message: "encoding the result: " + merr.Error()}})
	}
	actx, acancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer acancel()
	if err := p.Append(actx, b, true); err != nil {
		m.lg.Warn("storing the end of a stream failed", "stream", id, "err", err)
	}
}

// run runs the turn, storing each event; a panic ends the stream with an error.
func (m *Manager) run(ctx context.Context, p session.Producer, run RunFunc) (res *schemas.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			m.lg.Error("panic in a turn", "err", v, "stack", string(debug.Stack()))
			res, err = nil, &genui.Error{Status: genui.StatusInternal, Message: "internal error"}
		}
	}()
	buf := make([]byte, 0, 1024)
	return run(ctx, func(ctx context.Context, ev schemas.Event) error {
		var err error
		buf, err = appendEventRecord(buf[:0], &ev)
		if err != nil {
			return err
		}
		// The log keeps the bytes: hand it its own copy.
		return p.Append(ctx, append([]byte(nil), buf...), false)
	})
}

func (m *Manager) turnError(ctx context.Context, err error) *genui.Error {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errAbandoned):
		return &genui.Error{Status: genui.StatusCancelled, Message: fmt.Sprintf("the turn was cancelled because no client read its stream for %v", m.grace)}
	case errors.Is(cause, errCancelled):
		return &genui.Error{Status: genui.StatusCancelled, Message: "the turn was cancelled by request"}
	case errors.Is(cause, errShutdown):
		return &genui.Error{Status: genui.StatusUnavailable, Message: "the server shut down before the turn finished; retry it"}
	}
	return genui.AsError(err)
}

// watch cancels the turn when it was cancelled explicitly, or when no reader was attached
// for the grace period.
func (m *Manager) watch(ctx context.Context, cancel context.CancelCauseFunc, p session.Producer, stop <-chan struct{}) {
	tick := min(m.grace/4, time.Second)
	if tick <= 0 {
		tick = time.Millisecond
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	var since time.Time // when the stream was first seen unwatched; zero while watched
	for {
		select {
		case <-stop:
			return
		case <-ctx.Done():
			return
		case <-p.Cancelled():
			cancel(errCancelled)
			return
		case now := <-t.C:
			switch {
			case p.Watched(ctx):
				since = time.Time{}
			case since.IsZero():
				since = now
			case now.Sub(since) >= m.grace:
				cancel(errAbandoned)
				return
			}
		}
	}
}

// Cancel stops the turn of a stream now, wherever it runs.
func (m *Manager) Cancel(ctx context.Context, id string) error {
	m.mu.Lock()
	local := m.running[id]
	m.mu.Unlock()
	if local != nil {
		local(errCancelled)
	}
	err := m.log.Cancel(ctx, id)
	if local != nil && errors.Is(err, session.ErrStreamNotFound) {
		return nil
	}
	return err
}

// Shutdown waits for the turns still running until ctx is done, then cancels them and
// waits for them to store their end.
func (m *Manager) Shutdown(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		m.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	m.mu.Lock()
	for _, cancel := range m.running {
		cancel(errShutdown)
	}
	m.mu.Unlock()
	<-done
}

// Item is one entry of a stream as a transport encodes it: an event, or the final result
// or error.
type Item struct {
	Seq    int
	Event  *schemas.Event
	Result *schemas.Result
	Err    *schemas.Error
}

// Final reports whether the item ends the stream.
func (it *Item) Final() bool { return it.Result != nil || it.Err != nil }

// Subscription reads one stream.
type Subscription struct {
	r    session.Reader
	done bool
}

// Subscribe reads the stream id from after its first after items (0: from the start). It
// fails with an error wrapping session.ErrStreamNotFound for unknown or expired streams.
func (m *Manager) Subscribe(ctx context.Context, id string, after int) (*Subscription, error) {
	r, err := m.log.Read(ctx, id, after)
	if err != nil {
		return nil, err
	}
	return &Subscription{r: r}, nil
}

// ErrProducerLost is the error item a stream ends with when its producer died.
var errLost = &schemas.Error{Status: genui.StatusUnavailable, Message: "the server producing this stream stopped before the turn finished; retry the turn"}

// Next returns the next item, waiting at most wait (0: no limit); ok is false when wait
// passed first. After the final item it returns io.EOF.
func (s *Subscription) Next(ctx context.Context, wait time.Duration) (Item, bool, error) {
	if s.done {
		return Item{}, false, io.EOF
	}
	rec, ok, err := s.r.Next(ctx, wait)
	switch {
	case errors.Is(err, session.ErrProducerLost):
		s.done = true
		return Item{Err: errLost}, true, nil
	case err != nil || !ok:
		return Item{}, ok, err
	}
	it, err := decodeRecord(rec)
	if err != nil {
		return Item{}, false, err
	}
	if it.Final() {
		s.done = true
	}
	return it, true, nil
}

// Close detaches the subscription.
func (s *Subscription) Close() { s.r.Close() }

// record is how items are stored: a schemas.Event, or {"type":"result"|"error",…}.
type record struct {
	Type        string               `json:"type"`
	Index       int                  `json:"index,omitempty"`
	ToolRequest *schemas.ToolRequest `json:"toolRequest,omitempty"`
	Text        string               `json:"text,omitempty"`
	Result      *schemas.Result      `json:"result,omitempty"`
	Error       *schemas.Error       `json:"error,omitempty"`
}

func appendEventRecord(b []byte, ev *schemas.Event) ([]byte, error) {
	enc, err := jsonenc.Marshal(&record{Type: string(ev.Type), Index: ev.Index, ToolRequest: ev.ToolRequest, Text: ev.Text})
	return append(b, enc...), err
}

func decodeRecord(rec session.Record) (Item, error) {
	var r record
	if err := json.Unmarshal(rec.Data, &r); err != nil {
		return Item{}, fmt.Errorf("stream record %d: %w", rec.Seq, err)
	}
	it := Item{Seq: rec.Seq}
	switch r.Type {
	case "result":
		if r.Result == nil {
			r.Result = &schemas.Result{}
		}
		it.Result = r.Result
	case "error":
		if r.Error == nil {
			r.Error = &schemas.Error{Status: genui.StatusInternal}
		}
		it.Err = r.Error
	default:
		it.Event = &schemas.Event{Type: schemas.EventType(r.Type), Index: r.Index, ToolRequest: r.ToolRequest, Text: r.Text}
	}
	return it, nil
}
