package genui

import (
	"context"
	"errors"

	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/schemas"
)

// flows are the service's Genkit flows. Each is defined twice over the same function:
//
//   - registered in Genkit, with typed input and output, so that the Dev UI lists it with
//     its schemas, validates what is typed there, runs it and shows its traces;
//   - an unregistered twin of the same name with untyped input and output, which the
//     service runs for every request. Genkit validates a typed action's input and output
//     against their JSON Schemas on every run, recompiling the schemas each time (about
//     0.17 ms for a small generateUi request, 20 times the cost of the flow itself); the
//     service has already decoded and validated the request, so the twin skips that.
//
// Both produce the same trace: a flow span named after the flow, with the model calls as
// its children.
type flows struct {
	startSession *core.Flow[any, any, struct{}]
	generateUI   *core.Flow[any, any, schemas.Event]
	generateA2UI *core.Flow[any, any, schemas.Event]
}

func defineFlows(g *genkit.Genkit, s *Service) flows {
	genkit.DefineFlow(g, "startSession", s.startSession)
	// The Dev UI shows a turn's stream as Genkit chunks, as Genkit clients read it over
	// SSE: tool requests, calls of client tools as Genkit interrupts, A2UI messages in
	// Genkit's A2UI data part.
	genkit.DefineStreamingFlow(g, "generateUi", func(ctx context.Context, req *schemas.GenerateRequest, emit core.StreamCallback[schemas.Chunk]) (*schemas.Result, error) {
		return s.generateFlow(ctx, req, chunks(emit))
	})
	genkit.DefineStreamingFlow(g, "generateA2ui", func(ctx context.Context, req *schemas.GenerateA2UIRequest, emit core.StreamCallback[schemas.Chunk]) (*schemas.Result, error) {
		return s.generateA2UIFlow(ctx, req, chunks(emit))
	})
	return flows{
		startSession: core.NewFlow("startSession", func(ctx context.Context, in any) (any, error) {
			req, _ := in.(*schemas.StartSessionRequest)
			return s.startSession(ctx, req)
		}),
		generateUI: core.NewStreamingFlow("generateUi", func(ctx context.Context, in any, emit core.StreamCallback[schemas.Event]) (any, error) {
			req, _ := in.(*schemas.GenerateRequest)
			return s.generateFlow(ctx, req, emit)
		}),
		generateA2UI: core.NewStreamingFlow("generateA2ui", func(ctx context.Context, in any, emit core.StreamCallback[schemas.Event]) (any, error) {
			req, _ := in.(*schemas.GenerateA2UIRequest)
			return s.generateA2UIFlow(ctx, req, emit)
		}),
	}
}

// chunks passes events to emit as Genkit chunks.
func chunks(emit core.StreamCallback[schemas.Chunk]) core.StreamCallback[schemas.Event] {
	if emit == nil {
		return nil
	}
	return func(ctx context.Context, ev schemas.Event) error { return emit(ctx, schemas.ChunkOf(ev)) }
}

type turnKey struct{}

// runFlow runs a prepared turn through its flow: generateUi, or generateA2ui.
func (s *Service) runFlow(ctx context.Context, t *turn, emit core.StreamCallback[schemas.Event]) (*schemas.Result, error) {
	f := s.flows.generateUI
	if t.a2ui != nil {
		f = s.flows.generateA2UI
	}
	out, err := f.Action.Run(context.WithValue(ctx, turnKey{}, t), t.req, emit)
	if err != nil {
		return nil, err
	}
	res, ok := out.(*schemas.Result)
	if !ok {
		return nil, errors.New("generateUi returned no result")
	}
	return res, nil
}

// generateFlow is the generateUi flow: one turn. A turn the service prepared comes in the
// context; a run from Genkit tooling is prepared here.
func (s *Service) generateFlow(ctx context.Context, req *schemas.GenerateRequest, emit core.StreamCallback[schemas.Event]) (*schemas.Result, error) {
	t, _ := ctx.Value(turnKey{}).(*turn)
	if t == nil || t.req != any(req) {
		var err error
		if t, err = s.prepare(ctx, req); err != nil {
			return nil, err
		}
	}
	return s.run(ctx, t, emit)
}

// generateA2UIFlow is the generateA2ui flow: one A2UI turn.
func (s *Service) generateA2UIFlow(ctx context.Context, req *schemas.GenerateA2UIRequest, emit core.StreamCallback[schemas.Event]) (*schemas.Result, error) {
	t, _ := ctx.Value(turnKey{}).(*turn)
	if t == nil || t.req != any(req) {
		var err error
		if t, err = s.prepareA2UI(ctx, req); err != nil {
			return nil, err
		}
	}
	return s.run(ctx, t, emit)
}
