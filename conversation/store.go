package conversation

import (
	"context"
	"errors"
	"regexp"

	"github.com/genuiserver/genui/internal/rediserr"
)

var (
	// ErrBusy reports a conversation that another turn holds.
	ErrBusy = errors.New("another turn of the conversation is running")
	// ErrHoldLost reports a hold that ended before its commit: its lease ran out (a turn
	// that outlived it while the store could not renew it).
	ErrHoldLost = errors.New("the conversation was released before the turn ended")
	// ErrUnavailable reports that a shared backend (Redis) cannot be reached; the request
	// may succeed later.
	ErrUnavailable = rediserr.ErrUnavailable
)

var idRE = regexp.MustCompile(`^[A-Za-z0-9._-]{8,128}$`)

// ValidID reports whether id is a conversation id: 8 to 128 characters of A-Z a-z 0-9
// . _ -.
func ValidID(id string) bool { return idRE.MatchString(id) }

// State is what a store holds of one conversation. A new (or expired) conversation has
// the zero State.
type State struct {
	// Kind names what the conversation belongs to (an endpoint and its UI format), as the
	// turn that committed it last said; "" for a new conversation.
	Kind string
	// Model names the model the conversation's turns use, as the turn that committed it
	// last said; "" when none was said.
	Model string
	// History is the conversation's messages, each a JSON object on a line of its own.
	History []byte
	// Pending is what the conversation waits for (the calls of client tools without a
	// result), encoded by the service; nil when it waits for nothing.
	Pending []byte
	// Session is what a session the server keeps for a client asks of each turn of the
	// conversation (its UI format, its client tools), encoded by the service; nil for a
	// conversation that is not a session's.
	Session []byte
}

// Update is what a turn changes in its conversation.
type Update struct {
	Kind string
	// Model replaces the conversation's model ("" for none). It holds no tab or newline.
	Model string
	// Append is appended to the history: whole lines.
	Append []byte
	// Pending replaces what the conversation waits for (nil: nothing).
	Pending []byte
	// Session, when not nil, replaces the conversation's session; nil keeps it.
	Session []byte
}

// Store keeps conversations. Implementations are safe for concurrent use.
type Store interface {
	// Begin holds the conversation id for one turn and returns its state; a conversation
	// another turn holds is ErrBusy. Every hold ends with Commit or Release.
	Begin(ctx context.Context, id string) (*State, Hold, error)
	// Peek returns the state of conversation id without holding it or renewing its idle
	// time; a conversation a turn holds is ErrBusy, as in Begin.
	Peek(ctx context.Context, id string) (*State, error)
	// Ready reports whether the store can serve requests.
	Ready(ctx context.Context) error
}

// Counter is what the stores (Memory and Redis) report of the conversations they keep.
type Counter interface {
	// Stored returns how many conversations are counted against caller owner
	// (WithCallerLimit).
	Stored(ctx context.Context, owner string) (int, error)
	// Waiting returns how many conversations wait for the results of calls of client
	// tools: their last turn ended with calls without a result, and they have not
	// expired.
	Waiting(ctx context.Context) (int, error)
}

var (
	_ Counter = (*Memory)(nil)
	_ Counter = (*Redis)(nil)
)

// Hold is a conversation held by one turn.
type Hold interface {
	// Commit applies the turn's update and lets the conversation go: the next Begin, on
	// any replica, sees it. The conversation's idle time starts again.
	Commit(ctx context.Context, u Update) error
	// Release lets the conversation go unchanged. After Commit it does nothing.
	Release()
	// Delete removes the conversation and lets it go: the next Begin sees a new one.
	Delete(ctx context.Context) error
}
