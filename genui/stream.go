package genui

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime/debug"
	"sync/atomic"
	"time"

	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/genui/durable"
	"github.com/genuiserver/genui/internal/ids"
	"github.com/genuiserver/genui/internal/jsonenc"
	"github.com/genuiserver/genui/schemas"
)

// Stream validates and prepares a turn and creates its durable stream; [Stream.Each] then
// runs the turn. Errors before the turn starts are *Error values (INVALID_ARGUMENT naming the field, NOT_FOUND for an unknown session, or the store's failure).
//
// The turn outlives ctx, the request of the client that started it (ctx only lends it
// its values: trace, logger): it goes on while that client or any other, on any replica
// sharing the stream log, reads the stream, then for the grace period, and ends early on
// [Service.Cancel] or [Service.Shutdown].
func (s *Service) Stream(ctx context.Context, req *schemas.GenerateRequest) (*Stream, error) {
	t, err := s.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	return s.stream(ctx, t)
}

// StreamA2UI is [Service.Stream] for a turn whose UI is A2UI: its stream carries A2UI
// messages (schemas.EventA2UI) and text, then the result.
func (s *Service) StreamA2UI(ctx context.Context, req *schemas.GenerateA2UIRequest) (*Stream, error) {
	t, err := s.prepareA2UI(ctx, req)
	if err != nil {
		return nil, err
	}
	return s.stream(ctx, t)
}

func (s *Service) stream(ctx context.Context, t *turn) (*Stream, error) {
	release, e := s.startTurn(ctx)
	if e != nil {
		t.end()
		return nil, e
	}
	id := ids.New()
	key := auth.Scope(ctx, id)
	p, err := s.streams.Create(ctx, key)
	if err != nil {
		release()
		t.end()
		return nil, AsError(fmt.Errorf("creating a stream: %w", err))
	}
	runCtx, cancel := context.WithCancelCause(context.WithoutCancel(ctx))
	r := &running{id: key, p: p, cancel: cancel, release: release}
	r.origin.Store(true)
	s.wg.Add(1)
	s.track(r)
	return &Stream{id: id, svc: s, turn: t, run: r, ctx: runCtx}, nil
}

// Resume reads the durable stream id from after its first after items (0: from the start):
// what was stored, then the live tail. An unknown or expired stream is a NOT_FOUND *Error
// wrapping durable.ErrStreamNotFound.
func (s *Service) Resume(ctx context.Context, id string, after int) (*Stream, error) {
	r, err := s.streams.Read(ctx, auth.Scope(ctx, id), after)
	if err != nil {
		return nil, AsError(err)
	}
	return &Stream{id: id, r: r}, nil
}

// Generate runs a turn to its end and returns its result, every tool request included.
// Nothing is stored: cancelling ctx cancels the turn. It runs the generateUi flow.
func (s *Service) Generate(ctx context.Context, req *schemas.GenerateRequest) (*schemas.Result, error) {
	t, err := s.prepare(ctx, req)
	if err != nil {
		return nil, err
	}
	defer t.end()
	release, e := s.startTurn(ctx)
	if e != nil {
		return nil, e
	}
	defer release()
	return s.runFlow(ctx, t, nil)
}

// GenerateA2UI is [Service.Generate] for a turn whose UI is A2UI: the result's message
// holds the turn's A2UI messages in Genkit's A2UI data part.
func (s *Service) GenerateA2UI(ctx context.Context, req *schemas.GenerateA2UIRequest) (*schemas.Result, error) {
	t, err := s.prepareA2UI(ctx, req)
	if err != nil {
		return nil, err
	}
	defer t.end()
	release, e := s.startTurn(ctx)
	if e != nil {
		return nil, e
	}
	defer release()
	return s.runFlow(ctx, t, nil)
}

// Reasons a turn is stopped.
var (
	errAbandoned = errors.New("no client read the stream during the grace period")
	errCancelled = errors.New("cancelled by request")
	errShutdown  = errors.New("the server is shutting down")
)

// produce runs a streamed turn in the caller's goroutine: each event is stored, then
// passed to send while the client that started the turn is attached; the result or
// error is stored as the stream's final record.
func (s *Service) produce(st *Stream, send func(Item) error) {
	r, p, ctx := st.run, st.run.p, st.ctx
	defer s.wg.Done()
	defer func() {
		s.untrack(r.id)
		r.cancel(nil)
		p.Close()
		r.release()
	}()
	seq := 0
	began, shown := time.Now(), false
	defer func() { s.metrics.Stream(time.Since(began)) }()
	deliver := func(it Item) {
		seq++
		it.Seq = seq
		if r.origin.Load() && send(it) != nil {
			r.origin.Store(false) // the client is gone; the turn goes on for the others
		}
	}
	res, err := s.runRecovered(ctx, st.turn, func(ctx context.Context, ev schemas.Event) error {
		if err := p.Append(ctx, appendEventRecord(nil, &ev), false); err != nil {
			return storeError(err)
		}
		if !shown && (ev.Type == schemas.EventToolRequest || ev.Type == schemas.EventA2UI) {
			shown = true
			s.metrics.FirstSurface(time.Since(began))
		}
		deliver(Item{Event: &ev})
		return nil
	})
	var final []byte
	if err == nil {
		final, err = appendResultRecord(nil, res)
	}
	if err != nil {
		final = appendErrorRecord(nil, s.turnError(ctx, err))
	}
	if err := s.appendFinal(ctx, p, final); err != nil {
		// What was not stored is not told: a client resuming the stream could not read
		// it. The turn ends for its client with the store's error.
		s.log.Warn("storing the end of a stream failed", "stream", r.id, "err", err)
		final = appendErrorRecord(nil, storeError(err))
	}
	it, _ := decodeRecord(durable.Record{Data: final})
	deliver(it)
}

// appendFinal stores a stream's final record, trying again while the log is unavailable
// (a Redis failover) for up to finalWait.
func (s *Service) appendFinal(ctx context.Context, p durable.Producer, final []byte) error {
	actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finalWait)
	defer cancel()
	backoff := 50 * time.Millisecond
	for {
		err := p.Append(actx, final, true)
		if err == nil || !errors.Is(err, durable.ErrUnavailable) {
			return err
		}
		select {
		case <-actx.Done():
			return err
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, time.Second)
	}
}

// storeError is the error of a turn whose stream the log could not store a record of: a
// stream the log no longer has (declared lost, or lost by Redis in a failover) is as
// retryable as a log that cannot be reached.
func storeError(err error) *Error {
	if errors.Is(err, durable.ErrStreamNotFound) {
		return &Error{Status: StatusUnavailable, Message: "the stream log lost the turn's stream; retry the turn", RetryAfter: time.Second, cause: err}
	}
	return AsError(err)
}

// finalWait bounds how long a stream's end is tried while the log is unavailable: longer
// than a Redis failover takes.
const finalWait = 10 * time.Second

// runRecovered runs the turn, emitting each event; a panic ends it with an error.
func (s *Service) runRecovered(ctx context.Context, t *turn, emit func(context.Context, schemas.Event) error) (res *schemas.Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			s.log.Error("panic in a turn", "err", v, "stack", string(debug.Stack()))
			res, err = nil, &Error{Status: StatusInternal, Message: "internal error"}
		}
	}()
	return s.runFlow(ctx, t, emit)
}

func (s *Service) turnError(ctx context.Context, err error) *Error {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errAbandoned):
		return &Error{Status: StatusCancelled, Message: fmt.Sprintf("the turn was cancelled because no client read its stream for %v", s.grace)}
	case errors.Is(cause, errCancelled):
		return &Error{Status: StatusCancelled, Message: "the turn was cancelled by request"}
	case errors.Is(cause, errShutdown):
		return &Error{Status: StatusUnavailable, Message: "the server shut down before the turn finished; retry it"}
	}
	return AsError(err)
}

// running is a streamed turn of this process.
type running struct {
	id     string
	p      durable.Producer
	cancel context.CancelCauseFunc
	origin atomic.Bool // the client that started the turn is attached
	since  time.Time   // when the stream was first seen unwatched; zero while watched
	// release frees the turn's place among its caller's running turns.
	release func()
}

// track registers a running turn, starting the watch loop if it is not running.
func (s *Service) track(r *running) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.running[r.id] = r
	if !s.watching {
		s.watching = true
		s.wg.Add(1)
		go s.watch()
	}
}

func (s *Service) untrack(id string) {
	s.mu.Lock()
	delete(s.running, id)
	idle := len(s.running) == 0 && s.watching
	s.mu.Unlock()
	if idle {
		select {
		case s.idle <- struct{}{}:
		default:
		}
	}
}

// watch cancels the running turns that were cancelled explicitly (on any replica), or
// whose streams no client read for the grace period. One loop watches every turn of the
// service; it ends when none runs.
func (s *Service) watch() {
	defer s.wg.Done()
	tick := min(s.grace/4, time.Second)
	if tick <= 0 {
		tick = time.Millisecond
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	var turns []*running
	for {
		var now time.Time
		select {
		case now = <-t.C:
		case <-s.idle:
			now = time.Now()
		}
		s.mu.Lock()
		if len(s.running) == 0 {
			s.watching = false
			s.unread.Store(0)
			s.mu.Unlock()
			return
		}
		turns = turns[:0]
		for _, r := range s.running {
			turns = append(turns, r)
		}
		s.mu.Unlock()
		for _, r := range turns {
			select {
			case <-r.p.Cancelled():
				r.cancel(errCancelled)
				continue
			default:
			}
			watched := r.origin.Load()
			if !watched {
				ctx, cancel := context.WithTimeout(context.Background(), tick)
				watched = r.p.Watched(ctx)
				cancel()
			}
			switch {
			case watched:
				r.since = time.Time{}
			case r.since.IsZero():
				r.since = now
			case now.Sub(r.since) >= s.grace:
				r.cancel(errAbandoned)
			}
		}
		unread := 0
		for _, r := range turns {
			if !r.since.IsZero() {
				unread++
			}
		}
		s.unread.Store(int64(unread))
	}
}

// Cancel stops the turn of a stream now, wherever it runs; its stream then ends with a
// CANCELLED error. An unknown stream is a NOT_FOUND *Error.
func (s *Service) Cancel(ctx context.Context, id string) error {
	key := auth.Scope(ctx, id)
	s.mu.Lock()
	local := s.running[key]
	s.mu.Unlock()
	if local != nil {
		local.cancel(errCancelled)
	}
	err := s.streams.Cancel(ctx, key)
	if local != nil && errors.Is(err, durable.ErrStreamNotFound) {
		return nil
	}
	if errors.Is(err, durable.ErrStreamNotFound) {
		return (&Error{Status: StatusNotFound, Message: "streamId: unknown or expired stream", Details: map[string]any{"field": "streamId"}}).WithCause(err)
	}
	if err != nil {
		return AsError(err)
	}
	return nil
}

// Shutdown waits for the turns still running until ctx is done, then cancels them and
// waits for them to store their end.
func (s *Service) Shutdown(ctx context.Context) {
	done := make(chan struct{})
	go func() {
		s.wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return
	case <-ctx.Done():
	}
	s.mu.Lock()
	for _, r := range s.running {
		r.cancel(errShutdown)
	}
	s.mu.Unlock()
	<-done
}

// Stream is one durable stream: its events, then exactly one result or error. A stream
// from [Service.Stream] runs its turn when read; one from [Service.Resume] reads what its
// turn, wherever it runs, stored.
type Stream struct {
	id string

	// A new stream: the turn, run by Each.
	svc  *Service
	turn *turn
	run  *running
	ctx  context.Context // the turn's
	ran  atomic.Bool

	// A resumed stream: its reader.
	r    durable.Reader
	done bool
}

// Model returns the name of the model chosen for the stream's turn ("" for a stream read
// again with Resume). With a fallback chain, the result's usage names the model that
// served it.
func (st *Stream) Model() string {
	if st.turn == nil || st.turn.model == nil {
		return ""
	}
	return st.turn.model.Name()
}

// ID returns the stream's id, with which any client can read it again ([Service.Resume]) or
// cancel its turn ([Service.Cancel]).
func (st *Stream) ID() string { return st.id }

// Item is one entry of a stream: an event, or the final result or error.
type Item struct {
	// Seq is the item's position in the stream, from 1.
	Seq   int
	Event *schemas.Event
	// Result is the turn's result, encoded as JSON without its tool requests (each was an
	// event of the stream).
	Result json.RawMessage
	Err    *Error
}

// Final reports whether the item ends the stream.
func (it *Item) Final() bool { return it.Result != nil || it.Err != nil }

var errLost = &Error{Status: StatusUnavailable, Message: "the server producing this stream stopped before the turn finished; retry the turn"}

// Each passes the stream's items to send, in order, until the final one, and returns nil
// then.
//
// For a stream from [Service.Stream], Each runs the turn in the caller's goroutine: each
// event is stored, then sent. When ctx ends or send fails, the client is taken for gone:
// nothing more is sent, and the turn goes on, for other readers, until it ends or no one
// has read its stream for the grace period; Each returns when the turn has ended.
//
// For a stream from [Service.Resume], Each reads what is stored, then the live tail; it
// returns ctx's error, or send's, when either ends it first.
//
// send is called from one goroutine at a time.
func (st *Stream) Each(ctx context.Context, send func(Item) error) error {
	if st.run != nil {
		if !st.ran.CompareAndSwap(false, true) {
			return errors.New("genui: a stream's turn runs once")
		}
		stop := context.AfterFunc(ctx, func() { st.run.origin.Store(false) })
		defer stop()
		st.svc.produce(st, send)
		return nil
	}
	for !st.done {
		it, err := st.next(ctx)
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := send(it); err != nil {
			return err
		}
	}
	return nil
}

// next returns the next stored item; io.EOF after the final one (a stream resumed after
// its end has none).
func (st *Stream) next(ctx context.Context) (Item, error) {
	rec, _, err := st.r.Next(ctx, 0)
	switch {
	case errors.Is(err, durable.ErrProducerLost):
		st.done = true
		return Item{Err: errLost}, nil
	case err != nil:
		return Item{}, err
	}
	it, err := decodeRecord(rec)
	if err != nil {
		return Item{}, err
	}
	if it.Final() {
		st.done = true
	}
	return it, nil
}

// Close releases the stream: a resumed stream's reader; a new stream whose turn never ran
// ends without it (readers of its stream then learn that it was lost).
func (st *Stream) Close() {
	if st.run != nil {
		if st.ran.CompareAndSwap(false, true) {
			st.turn.end()
			st.svc.untrack(st.run.id)
			st.run.cancel(nil)
			st.run.p.Close()
			st.run.release()
			st.svc.wg.Done()
		}
		return
	}
	st.r.Close()
}

// Records of a stream. Each event is encoded once, here; a tool request's input is
// stored as the JSON it was encoded to, and read back as a slice of the record.
//
//	text:         't' index(uvarint) text
//	tool request: 'q' index(uvarint) len(name)(uvarint) name len(ref)(uvarint) ref input
//	A2UI message: 'a' index(uvarint) message
//	tool call:    'c' index(uvarint) len(callId)(uvarint) callId len(name)(uvarint) name
//	              len(signature)(uvarint) signature input
//	result:       'R' JSON of the result without its tool requests
//	error:        'E' JSON of the error as clients get it
const (
	recText        = 't'
	recToolRequest = 'q'
	recA2UI        = 'a'
	recToolCall    = 'c'
	recResult      = 'R'
	recError       = 'E'
)

func appendEventRecord(b []byte, ev *schemas.Event) []byte {
	if ev.Type == schemas.EventToolCall && ev.ToolCall != nil {
		tc := ev.ToolCall
		b = append(b, recToolCall)
		b = binary.AppendUvarint(b, uint64(ev.Index))
		for _, s := range []string{tc.CallID, tc.Name, tc.Signature} {
			b = binary.AppendUvarint(b, uint64(len(s)))
			b = append(b, s...)
		}
		return append(b, tc.Input...)
	}
	if ev.Type == schemas.EventToolRequest && ev.ToolRequest != nil {
		tr := ev.ToolRequest
		if b == nil {
			b = make([]byte, 0, 1+3*binary.MaxVarintLen32+len(tr.Name)+len(tr.Ref)+len(tr.Input))
		}
		b = append(b, recToolRequest)
		b = binary.AppendUvarint(b, uint64(ev.Index))
		b = binary.AppendUvarint(b, uint64(len(tr.Name)))
		b = append(b, tr.Name...)
		b = binary.AppendUvarint(b, uint64(len(tr.Ref)))
		b = append(b, tr.Ref...)
		return append(b, tr.Input...)
	}
	if ev.Type == schemas.EventA2UI {
		if b == nil {
			b = make([]byte, 0, 1+binary.MaxVarintLen32+len(ev.A2UI))
		}
		b = append(b, recA2UI)
		b = binary.AppendUvarint(b, uint64(ev.Index))
		return append(b, ev.A2UI...)
	}
	if b == nil {
		b = make([]byte, 0, 1+binary.MaxVarintLen32+len(ev.Text))
	}
	b = append(b, recText)
	b = binary.AppendUvarint(b, uint64(ev.Index))
	return append(b, ev.Text...)
}

func appendResultRecord(b []byte, r *schemas.Result) ([]byte, error) {
	cp := *r
	cp.ToolRequests = nil
	// The A2UI messages were events of the stream too.
	for i, c := range cp.Message.Content {
		if c.Data != nil {
			cp.Message.Content = append(cp.Message.Content[:i:i], cp.Message.Content[i+1:]...)
			break
		}
	}
	enc, err := jsonenc.Marshal(&cp)
	if err != nil {
		return nil, fmt.Errorf("encoding the result: %w", err)
	}
	return append(append(b, recResult), enc...), nil
}

func appendErrorRecord(b []byte, e *Error) []byte {
	enc, err := jsonenc.Marshal(e.Wire())
	if err != nil { // details that do not encode: drop them
		enc, _ = jsonenc.Marshal(&schemas.Error{Status: string(e.Status), Message: e.Message})
	}
	return append(append(b, recError), enc...)
}

var errBadRecord = errors.New("malformed stream record")

func decodeRecord(rec durable.Record) (Item, error) {
	it := Item{Seq: rec.Seq}
	b := rec.Data
	if len(b) == 0 {
		return it, fmt.Errorf("stream record %d: %w", rec.Seq, errBadRecord)
	}
	kind, b := b[0], b[1:]
	switch kind {
	case recResult:
		it.Result = b
		return it, nil
	case recError:
		var w schemas.Error
		if err := json.Unmarshal(b, &w); err != nil {
			return it, fmt.Errorf("stream record %d: %w", rec.Seq, err)
		}
		it.Err = &Error{Status: Status(w.Status), Message: w.Message, Details: w.Details}
		return it, nil
	case recText, recToolRequest, recA2UI, recToolCall:
	default:
		return it, fmt.Errorf("stream record %d: %w", rec.Seq, errBadRecord)
	}
	index, n := binary.Uvarint(b)
	if n <= 0 {
		return it, fmt.Errorf("stream record %d: %w", rec.Seq, errBadRecord)
	}
	b = b[n:]
	switch kind {
	case recText:
		it.Event = &schemas.Event{Type: schemas.EventText, Index: int(index), Text: string(b)}
		return it, nil
	case recA2UI:
		it.Event = &schemas.Event{Type: schemas.EventA2UI, Index: int(index), A2UI: b}
		return it, nil
	}
	if kind == recToolCall {
		id, b, ok := cutString(b)
		name, b, ok2 := cutString(b)
		sig, b, ok3 := cutString(b)
		if !ok || !ok2 || !ok3 {
			return it, fmt.Errorf("stream record %d: %w", rec.Seq, errBadRecord)
		}
		it.Event = &schemas.Event{Type: schemas.EventToolCall, Index: int(index),
			ToolCall: &schemas.ToolCall{CallID: id, Name: name, Signature: sig, Input: b}}
		return it, nil
	}
	name, b, ok := cutString(b)
	ref, b, ok2 := cutString(b)
	if !ok || !ok2 {
		return it, fmt.Errorf("stream record %d: %w", rec.Seq, errBadRecord)
	}
	it.Event = &schemas.Event{Type: schemas.EventToolRequest, Index: int(index),
		ToolRequest: &schemas.ToolRequest{Name: name, Ref: ref, Input: b}}
	return it, nil
}

// cutString reads a length-prefixed string.
func cutString(b []byte) (string, []byte, bool) {
	n, k := binary.Uvarint(b)
	if k <= 0 || uint64(len(b)-k) < n {
		return "", nil, false
	}
	return string(b[k : k+int(n)]), b[k+int(n):], true
}
