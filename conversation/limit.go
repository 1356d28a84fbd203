package conversation

import (
	"context"
	"time"

	"github.com/firebase/genkit/go/core/status"

	"github.com/genuiserver/genui/internal/redisconn"
	"github.com/genuiserver/genui/quota"
)

// Option configures a store: NewMemory's or NewRedis's (an option of one kind of store
// only is ignored by the other).
type Option func(*options)

// RedisOption configures a Redis store.
//
// Deprecated: Option configures both stores; RedisOption is its old name.
type RedisOption = Option

type options struct {
	prefix string
	lease  time.Duration
	limit  callerLimit
	ack    redisconn.Ack
}

// callerLimit bounds the conversations one caller has stored at once.
type callerLimit struct {
	max   int
	owner func(context.Context) string
}

// WithCallerLimit makes the store refuse a new conversation of a caller that has max
// conversations stored already (max ≤ 0: no limit). owner names the caller of a Begin's
// context ("" for one not counted); a conversation is counted against the caller that
// created it, from its first Begin until it expires, is dropped or deleted, or its first
// hold ends without a commit. A refusal is an error wrapping a *quota.Exceeded of limit
// "conversations" whose RetryAfter is when the caller's oldest conversation expires (it
// also reads as a Genkit RESOURCE_EXHAUSTED *status.Error).
//
// With Redis the count is shared by every replica: each caller has a sorted set of its
// conversations scored by their expiry, updated in the scripts that change them.
func WithCallerLimit(max int, owner func(context.Context) string) Option {
	return func(o *options) {
		if max > 0 && owner != nil {
			o.limit = callerLimit{max: max, owner: owner}
		}
	}
}

// ownerOf is the caller a new conversation begun with ctx is counted against: "" when
// there is no limit.
func (l callerLimit) ownerOf(ctx context.Context) string {
	if l.max <= 0 {
		return ""
	}
	return l.owner(ctx)
}

// exceeded is the refusal of a new conversation of a caller at the limit, retry after
// the caller's first conversation expires.
func (l callerLimit) exceeded(retry time.Duration) error {
	return &limitError{&quota.Exceeded{Limit: "conversations", Max: float64(l.max), RetryAfter: max(retry, time.Second)}}
}

// limitError is a refused new conversation. It unwraps to its *quota.Exceeded; as a
// Genkit *status.Error it is RESOURCE_EXHAUSTED, with the limit and retryAfter in its
// details, so that a caller mapping Genkit errors answers 429 (without Retry-After: a
// caller that reads the *quota.Exceeded can set it).
type limitError struct{ e *quota.Exceeded }

func (e *limitError) Error() string { return e.e.Error() }

func (e *limitError) Unwrap() error { return e.e }

func (e *limitError) As(target any) bool {
	p, ok := target.(**status.Error)
	if !ok {
		return false
	}
	*p = status.PublicErrorf(status.ErrResourceExhausted, "%s", e.e.Error()).
		WithDetails(map[string]any{"limit": e.e.Limit, "retryAfter": e.e.RetryAfterSeconds(), "field": "conversationId"})
	return true
}
