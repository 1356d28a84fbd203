package aguiapi

import (
	"strconv"

	"github.com/genuiserver/genui/internal/jsonenc"
)

// AG-UI event types this server sends.
const (
	runStarted        = "RUN_STARTED"
	runFinished       = "RUN_FINISHED"
	runError          = "RUN_ERROR"
	textStart         = "TEXT_MESSAGE_START"
	textContent       = "TEXT_MESSAGE_CONTENT"
	textEnd           = "TEXT_MESSAGE_END"
	toolCallStart     = "TOOL_CALL_START"
	toolCallArgs      = "TOOL_CALL_ARGS"
	toolCallEnd       = "TOOL_CALL_END"
	activitySnapshot  = "ACTIVITY_SNAPSHOT"
	activityDelta     = "ACTIVITY_DELTA"
	reasoningEncValue = "REASONING_ENCRYPTED_VALUE"
)

// The events, as @ag-ui/core 1.0 defines them. Optional members are left out when unset,
// never null: the client rejects null.
type (
	runStartedEvent struct {
		Type        string `json:"type"`
		ThreadID    string `json:"threadId"`
		RunID       string `json:"runId"`
		ParentRunID string `json:"parentRunId,omitempty"`
	}
	runFinishedEvent struct {
		Type     string        `json:"type"`
		ThreadID string        `json:"threadId"`
		RunID    string        `json:"runId"`
		Outcome  *outcome      `json:"outcome,omitempty"`
		Usage    []*tokenUsage `json:"usage,omitempty"`
	}
	outcome struct {
		Type       string       `json:"type"` // success, interrupt
		Interrupts []*interrupt `json:"interrupts,omitempty"`
	}
	interrupt struct {
		ID             string         `json:"id"`
		Reason         string         `json:"reason"`
		Message        string         `json:"message,omitempty"`
		ToolCallID     string         `json:"toolCallId,omitempty"`
		ResponseSchema map[string]any `json:"responseSchema,omitempty"`
	}
	tokenUsage struct {
		Provider          string `json:"provider,omitempty"`
		Model             string `json:"model,omitempty"`
		InputTokens       int    `json:"inputTokens,omitempty"`
		OutputTokens      int    `json:"outputTokens,omitempty"`
		TotalTokens       int    `json:"totalTokens,omitempty"`
		CachedInputTokens int    `json:"cachedInputTokens,omitempty"`
	}
	runErrorEvent struct {
		Type     string         `json:"type"`
		Message  string         `json:"message"`
		Code     string         `json:"code,omitempty"`
		Metadata *errorMetadata `json:"metadata,omitempty"`
	}
	// errorMetadata is what a RUN_ERROR tells beyond its message and code: the error's
	// details, as the service's other endpoints give them ({"limit":"components",
	// "value":10000} for a turn stopped at a limit).
	errorMetadata struct {
		Details any `json:"details"`
	}
	textEvent struct {
		Type      string `json:"type"`
		MessageID string `json:"messageId"`
		Role      string `json:"role,omitempty"`  // START
		Delta     string `json:"delta,omitempty"` // CONTENT
	}
	toolCallEvent struct {
		Type            string `json:"type"`
		ToolCallID      string `json:"toolCallId"`
		ToolCallName    string `json:"toolCallName,omitempty"`    // START
		ParentMessageID string `json:"parentMessageId,omitempty"` // START
		Delta           string `json:"delta,omitempty"`           // ARGS
	}
	encryptedValueEvent struct {
		Type           string `json:"type"`
		Subtype        string `json:"subtype"`
		EntityID       string `json:"entityId"`
		EncryptedValue string `json:"encryptedValue"`
	}
)

// frame appends one SSE event: its id (the stream and the event's place in it, which
// Last-Event-ID hands back) and its data, framed with LF only, as @ag-ui/client splits
// events on "\n\n".
func frame(b []byte, stream string, n int, data []byte) []byte {
	b = append(b, "id: "...)
	b = append(b, stream...)
	b = append(b, '.')
	b = strconv.AppendInt(b, int64(n), 10)
	b = append(b, "\ndata: "...)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// encode encodes an event without HTML escaping.
func encode(v any) []byte {
	b, err := jsonenc.Marshal(v)
	if err != nil {
		panic("aguiapi: an event does not encode: " + err.Error())
	}
	return b
}

// snapshotData encodes an ACTIVITY_SNAPSHOT of an A2UI surface from its messages:
// {"type":"ACTIVITY_SNAPSHOT","messageId":…,"activityType":"a2ui-surface","replace":true,
// "content":{"a2ui_operations":[…]}}, the messages copied as they are.
func snapshotData(b []byte, messageID string, msgs [][]byte) []byte {
	b = append(b, `{"type":"`+activitySnapshot+`","messageId":`...)
	b = jsonenc.AppendString(b, messageID)
	b = append(b, `,"activityType":"a2ui-surface","replace":true,"content":{"a2ui_operations":[`...)
	for i, m := range msgs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, m...)
	}
	return append(b, "]}}"...)
}

// deltaData encodes an ACTIVITY_DELTA that appends one A2UI message to the operations of
// an A2UI surface's activity: {"type":"ACTIVITY_DELTA","messageId":…,
// "activityType":"a2ui-surface","patch":[{"op":"add","path":"/a2ui_operations/-",
// "value":<msg>}]}, the message copied as it is.
func deltaData(b []byte, messageID string, msg []byte) []byte {
	b = append(b, `{"type":"`+activityDelta+`","messageId":`...)
	b = jsonenc.AppendString(b, messageID)
	b = append(b, `,"activityType":"a2ui-surface","patch":[{"op":"add","path":"/a2ui_operations/-","value":`...)
	b = append(b, msg...)
	return append(b, "}]}"...)
}
