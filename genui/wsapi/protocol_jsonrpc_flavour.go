package wsapi

import (
	"strconv"

	"github.com/genuiserver/genui/internal/jsonenc"
)

// A flavour is a spelling of the JSON-RPC dialect: the service's own (snake_case:
// session_id, session_update, stop_reason) or ACP's (camelCase: sessionId,
// session/update with update.sessionUpdate, stopReason). A method's name chooses it
// (ACP's are under "session/"), and a session's updates and requests follow the
// flavour of its last prompt or load. Its prefixes are ready to append: nothing is
// built for an update.
type flavour struct {
	// camel: a field given in neither spelling is named in camelCase.
	camel bool
	// sessionKey is the name of the session's id.
	sessionKey string
	// missingSession is the problem of params that name no session.
	missingSession string

	idHead     string // {"<session>":"  of a result or a list entry naming a session
	updateHead string // a session update up to its session's id
	textHead   string // a text update's head, after its seq
	textTail   string // what closes a text update
	uiHead     string // a UI update's head, after its seq
	toolHead   string // a client_tool request's params up to the session's id
	toolCall   string // from the session's id to the call's id
	stopHead   string // {"<stop reason>":"
}

func newFlavour(camel bool, session, call, stop, update, missing, text, textTail, ui string) *flavour {
	return &flavour{
		camel:          camel,
		sessionKey:     session,
		missingSession: missing,
		idHead:         `{"` + session + `":"`,
		updateHead:     `{"jsonrpc":"2.0","method":"` + update + `","params":{"` + session + `":"`,
		textHead:       text,
		textTail:       textTail,
		uiHead:         ui,
		toolHead:       `,"method":"client_tool","params":{"` + session + `":"`,
		toolCall:       `","` + call + `":`,
		stopHead:       `{"` + stop + `":"`,
	}
}

// The flavours: the service's, and ACP's.
var (
	genuiFlavour = newFlavour(false, "session_id", "call_id", "stop_reason", "session_update",
		"required: the session's id, from new_session",
		`,"update":{"type":"agent_message_chunk","chunk":`, "}}}",
		`,"update":{"type":"ui_update","event":`)
	acpFlavour = newFlavour(true, "sessionId", "callId", "stopReason", "session/update",
		"required: the session's id",
		`,"update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":`, "}}}}",
		`,"update":{"sessionUpdate":"ui_update","event":`)
)

// name is the name of a field given in neither spelling.
func (f *flavour) name(snake, camel string) string {
	if f.camel {
		return camel
	}
	return snake
}

// sessionResult is the result naming session id.
func (f *flavour) sessionResult(id string) []byte {
	return []byte(f.idHead + id + `"}`)
}

// stopReason is the result of an interaction's end.
func (f *flavour) stopReason(reason string) []byte {
	return []byte(f.stopHead + reason + `"}`)
}

// noSession is the error of params that name no session.
func (f *flavour) noSession() *rpcError { return invalidParams(f.sessionKey, f.missingSession) }

// appendText appends a text update's body (after its seq).
func (f *flavour) appendText(b []byte, text string) []byte {
	b = append(b, f.textHead...)
	b = jsonenc.AppendString(b, text)
	return append(b, f.textTail...)
}

// appendSeq appends an update's head: its session's id and seq.
func (f *flavour) appendSeq(b []byte, id string, seq int) []byte {
	b = append(b, f.updateHead...)
	b = append(b, id...)
	b = append(b, `","seq":`...)
	return strconv.AppendInt(b, int64(seq), 10)
}
