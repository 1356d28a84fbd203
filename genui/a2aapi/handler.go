package a2aapi

import (
	"context"
	"errors"
	"iter"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"github.com/genuiserver/genui/genui"
)

// agent serves the A2A methods on the core: a2asrv.RequestHandler, behind each of
// a2a-go's transports. legacy is set for the A2A v0.3 transports, whose clients get one
// A2UI message per DataPart.
type agent struct {
	*Server
	legacy bool
}

var _ a2asrv.RequestHandler = (*agent)(nil)

// turn is a turn of a task: its task as stored, and the core stream that runs it.
type turn struct {
	t  *task
	st *genui.Stream
}

// begin decodes a message and starts its turn: a new task in the message's context (a
// new context when it names none), or the next turn of the input-required task it names.
// The task is stored, submitted, before anything runs.
func (a *agent) begin(ctx context.Context, req *a2a.SendMessageRequest) (*turn, error) {
	if req == nil || req.Message == nil {
		return nil, invalidParams("message", "required")
	}
	msg := req.Message
	var prev *task
	contextID := msg.ContextID
	if msg.TaskID != "" {
		var err error
		if prev, err = a.tasks.Get(ctx, msg.TaskID); err != nil {
			return nil, taskError(err, msg.TaskID)
		}
		switch st := prev.Task.Status.State; {
		case st.Terminal():
			return nil, invalidParams("message.taskId", "task %s is %s; send the message without taskId to start a new task in its context", msg.TaskID, stateName(st))
		case st != a2a.TaskStateInputRequired:
			return nil, a2a.NewError(a2a.ErrUnsupportedOperation, "message.taskId: task "+string(msg.TaskID)+" is still working; send the message when it waits for input").
				WithDetails(map[string]any{"field": "message.taskId"})
		case contextID != "" && contextID != prev.Task.ContextID:
			return nil, invalidParams("message.contextId", "task %s belongs to context %s", msg.TaskID, prev.Task.ContextID)
		}
		contextID = prev.Task.ContextID
	}
	if contextID == "" {
		contextID = a2a.NewContextID()
	}
	d, err := decode(ctx, msg, contextID)
	if err != nil {
		return nil, err
	}
	st, err := a.svc.StreamA2UI(ctx, d.req)
	if err != nil {
		return nil, coreError(err, d)
	}
	stored := *msg
	stored.ContextID = contextID
	t := &task{Stream: st.ID(), Wire: d.wire}
	if prev != nil {
		t.Task = prev.Task
		t.Task.History = append(t.Task.History, &stored)
		t.Task.Status = status(a2a.TaskStateWorking, nil)
	} else {
		t.Task = &a2a.Task{ID: a2a.NewTaskID(), ContextID: contextID, History: []*a2a.Message{&stored}, Status: status(a2a.TaskStateSubmitted, nil)}
	}
	stored.TaskID = t.Task.ID
	if err := a.tasks.Put(ctx, t); err != nil {
		st.Close()
		return nil, internal(err)
	}
	return &turn{t: t, st: st}, nil
}

func status(state a2a.TaskState, msg *a2a.Message) a2a.TaskStatus {
	now := time.Now().UTC()
	return a2a.TaskStatus{State: state, Message: msg, Timestamp: &now}
}

// run runs a turn, passing its events to send, the task first; once send fails, or ctx
// ends (the client went away), the turn goes on without it: its events stay in the
// turn's durable stream, which a resubscription reads. When the turn ends, the task is
// stored with its final status (its message holding the turn whole) before the final
// event is sent.
func (a *agent) run(ctx context.Context, tn *turn, send func(a2a.Event) bool) *task {
	t := tn.t
	defer tn.st.Close()
	gone := !send(snapshot(t.Task))
	enc := newEncoder(t, a.legacy)
	_ = tn.st.Each(ctx, func(it genui.Item) error {
		evs := enc.item(it)
		if enc.final != nil {
			if err := a.finish(ctx, t, enc); err != nil {
				evs = enc.unstored(evs, err)
				t.Task.Status, t.Turn = *enc.final, enc.whole()
			}
		}
		for _, ev := range evs {
			if gone {
				break
			}
			if !send(ev) {
				gone = true
				break
			}
		}
		return nil
	})
	if enc.final == nil {
		// The client went away before the end, which the core no longer passed on: read
		// the turn again for its end.
		wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
		defer cancel()
		enc = newEncoder(t, a.legacy)
		if a.replay(wait, t, enc) == nil {
			_ = a.finish(ctx, t, enc) // logged; no client waits for it
		}
	}
	if e := enc.failed; e != nil {
		// The client got a status message without the cause: the operator gets it.
		a.log.Warn("an A2A turn failed", "task", t.Task.ID, "status", string(e.Status), "err", e.Message)
	}
	return t
}

// finish stores the task as its turn left it: the final status, its message holding the
// turn whole (each surface in its final state, see encoder.whole). Its error says the end
// is not stored: the client must not be told it.
func (a *agent) finish(ctx context.Context, t *task, enc *encoder) error {
	t.Task.Status = *enc.final
	t.Turn = enc.whole()
	if len(t.Turn) > 0 {
		// The message's parts are the turn's, made for each reader (present).
		if m := t.Task.Status.Message; m != nil {
			cp := *m
			cp.Parts = nil
			t.Task.Status.Message = &cp
		} else {
			t.Task.Status.Message = enc.message()
		}
	}
	if err := a.tasks.Put(context.WithoutCancel(ctx), t); err != nil {
		a.log.Warn("storing a finished A2A task failed", "task", t.Task.ID, "err", err)
		return err
	}
	return nil
}

// replay reads a turn's stream to its end through enc.
func (a *agent) replay(ctx context.Context, t *task, enc *encoder) error {
	st, err := a.svc.Resume(ctx, t.Stream, 0)
	if err != nil {
		return err
	}
	defer st.Close()
	if err := st.Each(ctx, func(it genui.Item) error { enc.item(it); return nil }); err != nil {
		return err
	}
	if enc.final == nil {
		return errors.New("the stream ended without a final item")
	}
	return nil
}

// present is the task as a client reads it: its status message holding its latest turn
// whole (text, calls, and each surface in its final state), encoded for the client's
// wire, and its state as readers see it.
func (a *agent) present(t *task) *a2a.Task {
	m := t.Task.Status.Message
	fill := m != nil && len(m.Parts) == 0 && len(t.Turn) > 0
	if !fill && readState(t.Task.Status.State) == t.Task.Status.State {
		return t.Task
	}
	cp := *t.Task
	cp.Status.State = readState(cp.Status.State)
	if fill {
		msg := *m
		msg.Parts = parts(t.Turn, t.Wire, a.legacy)
		cp.Status.Message = &msg
	}
	return &cp
}

// readState is a stored task's state as a reader sees it: working, not submitted, as a
// task's turn starts before the task is stored.
func readState(s a2a.TaskState) a2a.TaskState {
	if s == a2a.TaskStateSubmitted {
		return a2a.TaskStateWorking
	}
	return s
}

// snapshot is the task as a stream's first event: its state, without the message of a
// status whose parts the stream then carries.
func snapshot(t *a2a.Task) *a2a.Task {
	cp := *t
	cp.Status.Message = nil
	return &cp
}

// SendStreamingMessage implements a2asrv.RequestHandler: the task, then a status update
// for each A2UI message and each line of text, then the final status (input-required,
// completed, failed or canceled), then the stream ends.
func (a *agent) SendStreamingMessage(ctx context.Context, req *a2a.SendMessageRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		tn, err := a.begin(ctx, req)
		if err != nil {
			yield(nil, err)
			return
		}
		a.run(ctx, tn, func(ev a2a.Event) bool { return yield(ev, nil) })
	}
}

// SendMessage implements a2asrv.RequestHandler: the turn runs to its end, and the task
// comes back with a status message holding the turn whole: its text, its calls, and each
// surface once, in its final state (what the A2UI Lit shell renders); or, asked to return
// immediately, the task comes back submitted.
func (a *agent) SendMessage(ctx context.Context, req *a2a.SendMessageRequest) (a2a.SendMessageResult, error) {
	if n := historyLength(req.Config); n != nil && *n < 0 {
		return nil, invalidParams("configuration.historyLength", "must be 0 or more, got %d", *n)
	}
	tn, err := a.begin(ctx, req)
	if err != nil {
		return nil, err
	}
	if req.Config != nil && req.Config.ReturnImmediately {
		// v0.3's blocking: false. The turn runs to its end as if its client read it (the
		// service's Shutdown and tasks/cancel stop it); the client polls tasks/get or
		// resubscribes.
		snap := snapshot(tn.t.Task)
		go a.run(context.WithoutCancel(ctx), tn, func(a2a.Event) bool { return true })
		return withHistory(snap, historyLength(req.Config)), nil
	}
	t := a.run(ctx, tn, func(a2a.Event) bool { return true })
	return withHistory(a.present(t), historyLength(req.Config)), nil
}

func historyLength(c *a2a.SendMessageConfig) *int {
	if c == nil {
		return nil
	}
	return c.HistoryLength
}

// GetTask implements a2asrv.RequestHandler, on any replica sharing the task store.
func (a *agent) GetTask(ctx context.Context, req *a2a.GetTaskRequest) (*a2a.Task, error) {
	if req.HistoryLength != nil && *req.HistoryLength < 0 {
		return nil, invalidParams("historyLength", "must be 0 or more, got %d", *req.HistoryLength)
	}
	t, err := a.tasks.Get(ctx, req.ID)
	if err != nil {
		return nil, taskError(err, req.ID)
	}
	return withHistory(a.present(t), req.HistoryLength), nil
}

// withHistory limits a task's history to its last n messages.
func withHistory(t *a2a.Task, n *int) *a2a.Task {
	if n == nil || *n < 0 || *n >= len(t.History) {
		return t
	}
	cp := *t
	cp.History = t.History[len(t.History)-*n:]
	return &cp
}

// CancelTask implements a2asrv.RequestHandler: a running turn is cancelled wherever it
// runs (its model call stops, its stream ends canceled); a task waiting for input is
// canceled at once; a finished one cannot be.
func (a *agent) CancelTask(ctx context.Context, req *a2a.CancelTaskRequest) (*a2a.Task, error) {
	t, err := a.tasks.Get(ctx, req.ID)
	if err != nil {
		return nil, taskError(err, req.ID)
	}
	switch st := t.Task.Status.State; {
	case st.Terminal():
		return nil, a2a.NewError(a2a.ErrTaskNotCancelable, "task "+string(req.ID)+" is "+stateName(st)+": it cannot be canceled")
	case st == a2a.TaskStateInputRequired:
		t.Task.Status = status(a2a.TaskStateCanceled, &a2a.Message{ID: a2a.NewMessageID(), Role: a2a.MessageRoleAgent,
			TaskID: t.Task.ID, ContextID: t.Task.ContextID, Parts: []*a2a.Part{a2a.NewTextPart("The task was canceled by request.")}})
		t.Turn = nil
		if err := a.tasks.Put(ctx, t); err != nil {
			return nil, internal(err)
		}
		return t.Task, nil
	}
	if err := a.svc.Cancel(ctx, t.Stream); err != nil && genui.AsError(err).Status != genui.StatusNotFound {
		return nil, internal(err)
	}
	// Wait for the turn to end where it runs, and for its final status.
	wait, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if final, err := a.finalStatus(wait, t); err == nil {
		t.Task.Status = *final
	} else {
		t.Task.Status = status(a2a.TaskStateCanceled, nil)
	}
	if t.Task.Status.State != a2a.TaskStateCanceled {
		return nil, a2a.NewError(a2a.ErrTaskNotCancelable, "task "+string(req.ID)+" ended ("+stateName(t.Task.Status.State)+") before it could be canceled")
	}
	return t.Task, nil
}

// finalStatus reads a turn's stream to its end and returns the final status it gives.
func (a *agent) finalStatus(ctx context.Context, t *task) (*a2a.TaskStatus, error) {
	enc := newEncoder(t, a.legacy)
	if err := a.replay(ctx, t, enc); err != nil {
		return nil, err
	}
	return enc.final, nil
}

// SubscribeToTask implements a2asrv.RequestHandler (tasks/resubscribe in A2A v0.3).
//
// A2A 1.0, 3.1.6 Subscribe to Task: "The operation MUST return a Task object as the first
// event in the stream, representing the current state of the task at the time of
// subscription": the stream opens with the task as stored (its state; the parts of its
// status message are those the stream then carries). Then come the status updates of
// the task's latest turn in the order they were generated (3.5.2, "Events MUST NOT be
// reordered"), read from the turn's durable stream, on any replica, from its first
// event, then its live tail until the turn ends. A2A v0.3, 7.9 tasks/resubscribe, leaves
// the events missed during the disconnection to the server ("whether it attempts to
// backfill some missed events or only sends new ones from the point of resubscription
// is implementation-dependent"): this server backfills the whole turn, every status
// message under the id it had in the first stream, so that a client drops those it
// has. What a client read of an earlier stream is never guessed.
func (a *agent) SubscribeToTask(ctx context.Context, req *a2a.SubscribeToTaskRequest) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		t, err := a.tasks.Get(ctx, req.ID)
		if err != nil {
			yield(nil, taskError(err, req.ID))
			return
		}
		ended := finished(t)
		snap := snapshot(t.Task)
		snap.Status.State = readState(snap.Status.State)
		if !yield(snap, nil) {
			return
		}
		st, err := a.svc.Resume(ctx, t.Stream, 0)
		if err != nil {
			// The stream is gone (expired): the task is all there is.
			if ended {
				yield(a.storedFinal(t), nil)
			}
			return
		}
		defer st.Close()
		enc := newEncoder(t, a.legacy)
		_ = st.Each(ctx, func(it genui.Item) error {
			evs := enc.item(it)
			if enc.final != nil && !ended {
				// Stored before the client sees the end, which it may answer at once.
				if err := a.finish(ctx, t, enc); err != nil {
					evs = enc.unstored(evs, err)
					t.Task.Status, t.Turn = *enc.final, enc.whole()
				}
			}
			for i, ev := range evs {
				if ended && enc.final != nil && i == len(evs)-1 {
					ev = a.endOf(t, ev)
				}
				if !yield(ev, nil) {
					return errGone
				}
			}
			return nil
		})
	}
}

// finished reports whether a task's latest turn has ended: the task waits for input, or
// is done.
func finished(t *task) bool {
	return t.Task.Status.State.Terminal() || t.Task.Status.State == a2a.TaskStateInputRequired
}

// endOf is the final event of a finished task's resubscription: its turn's, unless the
// task changed state since (a task waiting for input, then canceled), when it is the
// task's status.
func (a *agent) endOf(t *task, ev a2a.Event) a2a.Event {
	if su, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && su.Status.State == t.Task.Status.State {
		return ev
	}
	return a.storedFinal(t)
}

// storedFinal is the status of a task as stored, as a status update.
func (a *agent) storedFinal(t *task) *a2a.TaskStatusUpdateEvent {
	return &a2a.TaskStatusUpdateEvent{TaskID: t.Task.ID, ContextID: t.Task.ContextID, Status: a.present(t).Status}
}

var errGone = errors.New("the client is gone")

// ListTasks implements a2asrv.RequestHandler: not offered.
func (a *agent) ListTasks(context.Context, *a2a.ListTasksRequest) (*a2a.ListTasksResponse, error) {
	return nil, a2a.NewError(a2a.ErrUnsupportedOperation, "ListTasks is not supported: read a task with GetTask")
}

// GetTaskPushConfig implements a2asrv.RequestHandler: push notifications are not offered.
func (a *agent) GetTaskPushConfig(context.Context, *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

// ListTaskPushConfigs implements a2asrv.RequestHandler: push notifications are not offered.
func (a *agent) ListTaskPushConfigs(context.Context, *a2a.ListTaskPushConfigRequest) (*a2a.ListTaskPushConfigResponse, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

// CreateTaskPushConfig implements a2asrv.RequestHandler: push notifications are not offered.
func (a *agent) CreateTaskPushConfig(context.Context, *a2a.PushConfig) (*a2a.PushConfig, error) {
	return nil, a2a.ErrPushNotificationNotSupported
}

// DeleteTaskPushConfig implements a2asrv.RequestHandler: push notifications are not offered.
func (a *agent) DeleteTaskPushConfig(context.Context, *a2a.DeleteTaskPushConfigRequest) error {
	return a2a.ErrPushNotificationNotSupported
}

// GetExtendedAgentCard implements a2asrv.RequestHandler: the public card is all there is.
func (a *agent) GetExtendedAgentCard(context.Context, *a2a.GetExtendedAgentCardRequest) (*a2a.AgentCard, error) {
	return nil, a2a.ErrExtendedCardNotConfigured
}

// stateName is a task state as A2A v0.3 names it (input-required, completed, …).
func stateName(s a2a.TaskState) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(string(s), "TASK_STATE_")), "_", "-")
}

// coreError maps an error of the core to its A2A code, its field named as in the A2A
// message.
func coreError(err error, d *decoded) error {
	e := genui.AsError(err)
	var field string
	if m, ok := e.Details.(map[string]any); ok {
		field, _ = m["field"].(string)
	}
	msg := e.Message
	if field != "" {
		a2aField := a2aFieldOf(field, d)
		msg = a2aField + strings.TrimPrefix(msg, field)
		field = a2aField
	}
	return errorOf(e, msg, field)
}

// a2aFieldOf names a field of the core's request as the A2A message holds it.
func a2aFieldOf(field string, d *decoded) string {
	switch {
	case strings.HasPrefix(field, "a2uiClientCapabilities"), strings.HasPrefix(field, "a2uiClientDataModel"), strings.HasPrefix(field, "clientTools"), field == "model":
		return "message.metadata." + field
	case field == "conversationId":
		return "message.contextId"
	case strings.HasPrefix(field, "conversation[0].parts["):
		rest := strings.TrimPrefix(field, "conversation[0].parts[")
		i := strings.IndexByte(rest, ']')
		if i < 0 {
			return field
		}
		var k int
		for _, c := range rest[:i] {
			k = k*10 + int(c-'0')
		}
		if k < len(d.partOf) {
			return "message.parts[" + strconv.Itoa(d.partOf[k]) + "]" + rest[i+1:]
		}
	case strings.HasPrefix(field, "conversation"):
		return "message.parts"
	}
	return field
}
