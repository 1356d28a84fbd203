package genui

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/genuiserver/genui/auth"
)

// A request may name the model of its turn (the model field of a genui or A2UI request,
// and what each transport maps to it): one of the models the service lets its caller
// choose. A request that names none is served by the caller's default model, or the
// service's. A held conversation remembers the model its turns used and keeps it until a
// request names another.

// WithModels sets the models a request may name, each by its Name, beside the service's
// own model (New's), which a request may always name and which serves the requests that
// name none. A Model may be a fallback chain, named by its first model.
func WithModels(ms ...Model) Option {
	return func(sv *Service) {
		if sv.allowed == nil {
			sv.allowed = map[string]Model{}
		}
		for _, m := range ms {
			sv.allowed[m.Name()] = m
		}
	}
}

// WithCallerModels sets the models of one caller (by auth.Caller.ID), in place of the
// service's: def serves its requests that name no model (nil: the service's own model),
// and a request of the caller may name def or one of allowed (none given: the models
// WithModels allows everyone).
func WithCallerModels(callerID string, def Model, allowed ...Model) Option {
	return func(sv *Service) {
		if sv.callerModels == nil {
			sv.callerModels = map[string]*modelChoice{}
		}
		c := &modelChoice{def: def}
		if len(allowed) > 0 {
			c.allowed = map[string]Model{}
			for _, m := range allowed {
				c.allowed[m.Name()] = m
			}
		}
		sv.callerModels[callerID] = c
	}
}

// modelChoice is what one caller may choose: its default model and the others it may
// name (nil: the service's).
type modelChoice struct {
	def     Model
	allowed map[string]Model
}

// maxModelName bounds the model a request names.
const maxModelName = 256

// choice returns the default model of the caller of ctx and the models it may name.
func (s *Service) choice(ctx context.Context) (Model, map[string]Model) {
	def, allowed := s.model, s.allowed
	if c, ok := s.callerModels[auth.FromContext(ctx).ID]; ok {
		if c.def != nil {
			def = c.def
		}
		if c.allowed != nil {
			allowed = c.allowed
		}
	}
	return def, allowed
}

// modelFor returns the model of a turn whose request names named ("" for none) in a held
// conversation that used kept before ("" for none, or a conversation not held). A named
// model the caller may not choose is INVALID_ARGUMENT naming model; a kept model that is
// no longer served gives way to the caller's default.
func (s *Service) modelFor(ctx context.Context, named, kept string) (Model, *Error) {
	def, allowed := s.choice(ctx)
	if named == "" {
		if kept == "" || kept == def.Name() {
			return def, nil
		}
		if m, ok := allowed[kept]; ok {
			return m, nil
		}
		s.log.LogAttrs(ctx, slog.LevelInfo, "a held conversation's model is no longer served; its turn uses the default",
			slog.String("model", kept), slog.String("default", def.Name()))
		return def, nil
	}
	if len(named) > maxModelName || !utf8.ValidString(named) {
		return nil, fieldError("model", "must be a model's name of at most %d bytes of UTF-8, such as %q", maxModelName, def.Name())
	}
	if named == def.Name() {
		return def, nil
	}
	if m, ok := allowed[named]; ok {
		return m, nil
	}
	return nil, fieldError("model", "%q is not a model this server lets you choose; expected one of: %s", named, strings.Join(modelNames(def, allowed), ", "))
}

// Models returns the names of the models a request of the caller of ctx may name, its
// default first.
func (s *Service) Models(ctx context.Context) []string {
	return modelNames(s.choice(ctx))
}

// modelNames lists def, then the names of allowed, sorted.
func modelNames(def Model, allowed map[string]Model) []string {
	names := []string{def.Name()}
	for n := range allowed {
		if n != def.Name() {
			names = append(names, n)
		}
	}
	slices.Sort(names[1:])
	return names
}
