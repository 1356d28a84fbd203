package a2aapi

import (
	"context"
	"fmt"
	"iter"

	legacy "github.com/a2aproject/a2a-go/a2a"
	legacysrv "github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

// v03 serves the agent over A2A v0.3 JSON-RPC through a2a-go's v0.3 line
// (github.com/a2aproject/a2a-go v0.3.15, the release a2av0 itself converts from): a
// legacysrv.RequestHandler whose methods convert with a2av0's conversions and call the
// agent.
//
// a2a-go v2.4.0's own v0.3 handler (a2av0.NewJSONRPCHandler) writes an error's data as
// A2A 1.0's list of typed details, which v0.3 clients do not read (Flutter's genui_a2a
// casts data to a map), and has no option to do otherwise; the v0.3 line writes the
// error's details as the data object, as A2A v0.3 has it. contract_test.go fails when a
// newer a2av0 writes an object, when this can go.
type v03 struct{ a *agent }

var _ legacysrv.RequestHandler = v03{}

func (v v03) OnGetTask(ctx context.Context, q *legacy.TaskQueryParams) (*legacy.Task, error) {
	t, err := v.a.GetTask(ctx, a2av0.ToV1GetTaskRequest(q))
	if err != nil {
		return nil, v03Error(err)
	}
	return a2av0.FromV1Task(t), nil
}

// OnListTasks: A2A v0.3 has no tasks/list over JSON-RPC.
func (v v03) OnListTasks(context.Context, *legacy.ListTasksRequest) (*legacy.ListTasksResponse, error) {
	return nil, legacy.ErrMethodNotFound
}

func (v v03) OnCancelTask(ctx context.Context, id *legacy.TaskIDParams) (*legacy.Task, error) {
	t, err := v.a.CancelTask(ctx, a2av0.ToV1CancelTaskRequest(id))
	if err != nil {
		return nil, v03Error(err)
	}
	return a2av0.FromV1Task(t), nil
}

func (v v03) OnSendMessage(ctx context.Context, p *legacy.MessageSendParams) (legacy.SendMessageResult, error) {
	req, err := a2av0.ToV1SendMessageRequest(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", legacy.ErrInvalidParams, err)
	}
	res, err := v.a.SendMessage(ctx, req)
	if err != nil {
		return nil, v03Error(err)
	}
	ev, err := a2av0.FromV1Event(res)
	if err != nil {
		return nil, v03Error(err)
	}
	r, ok := ev.(legacy.SendMessageResult)
	if !ok {
		return nil, legacy.NewError(legacy.ErrInvalidAgentResponse, fmt.Sprintf("unexpected result %T", ev))
	}
	return r, nil
}

func (v v03) OnResubscribeToTask(ctx context.Context, id *legacy.TaskIDParams) iter.Seq2[legacy.Event, error] {
	return v03Events(v.a.SubscribeToTask(ctx, a2av0.ToV1SubscribeToTaskRequest(id)))
}

func (v v03) OnSendMessageStream(ctx context.Context, p *legacy.MessageSendParams) iter.Seq2[legacy.Event, error] {
	req, err := a2av0.ToV1SendMessageRequest(p)
	if err != nil {
		return func(yield func(legacy.Event, error) bool) {
			yield(nil, fmt.Errorf("%w: %w", legacy.ErrInvalidParams, err))
		}
	}
	return v03Events(v.a.SendStreamingMessage(ctx, req))
}

// v03Events are a stream's events and error as v0.3 has them.
func v03Events(evs iter.Seq2[a2a.Event, error]) iter.Seq2[legacy.Event, error] {
	return func(yield func(legacy.Event, error) bool) {
		for ev, err := range evs {
			var out legacy.Event
			if err == nil {
				out, err = a2av0.FromV1Event(ev)
			}
			if err != nil {
				yield(nil, v03Error(err))
				return
			}
			if !yield(out, nil) {
				return
			}
		}
	}
}

func (v v03) OnGetTaskPushConfig(ctx context.Context, p *legacy.GetTaskPushConfigParams) (*legacy.TaskPushConfig, error) {
	c, err := v.a.GetTaskPushConfig(ctx, a2av0.ToV1GetTaskPushConfigRequest(p))
	if err != nil {
		return nil, v03Error(err)
	}
	return a2av0.FromV1PushConfig(c), nil
}

func (v v03) OnListTaskPushConfig(ctx context.Context, p *legacy.ListTaskPushConfigParams) ([]*legacy.TaskPushConfig, error) {
	cs, err := v.a.ListTaskPushConfigs(ctx, a2av0.ToV1ListTaskPushConfigRequest(p))
	if err != nil {
		return nil, v03Error(err)
	}
	return a2av0.FromV1PushConfigs(cs.Configs), nil
}

func (v v03) OnSetTaskPushConfig(ctx context.Context, p *legacy.TaskPushConfig) (*legacy.TaskPushConfig, error) {
	c, err := v.a.CreateTaskPushConfig(ctx, a2av0.ToV1PushConfig(p))
	if err != nil {
		return nil, v03Error(err)
	}
	return a2av0.FromV1PushConfig(c), nil
}

func (v v03) OnDeleteTaskPushConfig(ctx context.Context, p *legacy.DeleteTaskPushConfigParams) error {
	if err := v.a.DeleteTaskPushConfig(ctx, a2av0.ToV1DeleteTaskPushConfigRequest(p)); err != nil {
		return v03Error(err)
	}
	return nil
}

func (v v03) OnGetExtendedAgentCard(ctx context.Context) (*legacy.AgentCard, error) {
	card, err := v.a.GetExtendedAgentCard(ctx, &a2a.GetExtendedAgentCardRequest{})
	if err != nil {
		return nil, v03Error(err)
	}
	return a2av0.FromV1AgentCard(card), nil
}
