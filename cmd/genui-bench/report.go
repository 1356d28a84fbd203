package main

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the JSON output. Field names are stable; units are in the names. A figure
// that could not be measured (no server pid, phase not run) is null.
type Report struct {
	Schema     string            `json:"schema"`
	StartedAt  string            `json:"started_at"`
	WallS      float64           `json:"wall_s"`
	Target     TargetInfo        `json:"target"`
	Settings   Settings          `json:"settings"`
	Summary    Summary           `json:"summary"`
	Latency    *LatencyReport    `json:"latency"`
	Throughput *ThroughputReport `json:"throughput"`
	Sessions   *SessionsReport   `json:"sessions"`
	Catalogs   *CatalogsReport   `json:"catalogs"`
	Streams    *StreamsReport    `json:"streams"`
	Streams10k *StreamsReport    `json:"streams_10k"`
	Bytes      *BytesReport      `json:"bytes"`
	A2UI       *A2UIReport       `json:"a2ui"`
	// Conversations is the opt-in conversations phase.
	Conversations *ConversationsReport `json:"conversations"`
	// A2A is the opt-in a2a phase.
	A2A *A2AReport `json:"a2a"`
	// WS is the opt-in ws phase.
	WS *WSReport `json:"ws"`
	// Redis is the opt-in redis phase.
	Redis *RedisReport `json:"redis"`
	// Open is the opt-in open phase.
	Open *OpenReport `json:"open"`
	// Floor is the opt-in floor phase.
	Floor *FloorReport `json:"floor"`
	// Policy is the opt-in policy phase.
	Policy *PolicyReport `json:"policy"`
	// Rows is the opt-in rows phase.
	Rows *RowsReport `json:"rows"`
	// Transports is the opt-in transports phase.
	Transports *TransportsReport `json:"transports"`
	Notes      []string          `json:"notes"`
}

type TargetInfo struct {
	URL           string `json:"url"`
	Mode          string `json:"mode"` // "child" (started by the bench), "url", or "none" (no phase needs one: floor alone)
	PID           int    `json:"pid"`  // 0: unknown
	Model         string `json:"model"`
	ProcStats     bool   `json:"proc_stats"`      // RSS and CPU figures available
	UsesFakeModel *bool  `json:"uses_fake_model"` // the server called the bench's fake Gemini
	FakeModelURL  string `json:"fake_model_url"`
	CPUs          int    `json:"cpus"`
	GoVersion     string `json:"go_version"`
	FDLimit       uint64 `json:"fd_limit"`
}

type Settings struct {
	Phases              []string `json:"phases"`
	Format              string   `json:"format"`
	Turns               int      `json:"turns"`
	LatencyConcurrency  int      `json:"latency_concurrency"`
	PhaseDurationS      float64  `json:"phase_duration_s"`
	Concurrency         []int    `json:"concurrency"`
	ModelLatencyMS      float64  `json:"model_latency_ms"`
	PacingMS            float64  `json:"pacing_ms"`
	TextChunks          int      `json:"text_chunks"`
	Sessions            int      `json:"sessions"`
	SessionConcurrency  int      `json:"session_concurrency"`
	Catalogs            int      `json:"catalogs"`
	CatalogBytes        int      `json:"catalog_bytes"`
	CatalogConcurrency  int      `json:"catalog_concurrency"`
	Streams             int      `json:"streams"`
	StreamModelLatencyS float64  `json:"stream_model_latency_s"`
	A2UITurns           int      `json:"a2ui_turns"`
	A2UIVersions        []string `json:"a2ui_versions"`
	A2UITokensPerS      float64  `json:"a2ui_tokens_per_s"`
	A2UIChunkTokens     int      `json:"a2ui_chunk_tokens"`
	A2UIModelLatencyMS  float64  `json:"a2ui_model_latency_ms"`
	ConvTurns           int      `json:"conv_turns"` // client tool round trips
	ConvConversations   int      `json:"conv_conversations"`
	ConvLength          int      `json:"conv_length"`
	ConvRounds          int      `json:"conv_rounds"`
	A2ATurns            int      `json:"a2a_turns"` // per path and round
	A2ARounds           int      `json:"a2a_rounds"`
	A2ATokensPerS       float64  `json:"a2a_tokens_per_s"` // 0: unpaced
	A2ABaseline         string   `json:"a2a_baseline"`     // held or stateless /generateA2ui turns
	WSConnections       int      `json:"ws_connections"`   // idle /ws connections per round
	WSIdleRounds        int      `json:"ws_idle_rounds"`
	WSTurns             int      `json:"ws_turns"` // per path and round
	WSRounds            int      `json:"ws_rounds"`
	WSBaseline          string   `json:"ws_baseline"` // held or stateless /generateUi turns
	WSSession           string   `json:"ws_session"`  // what new_session carries: startSession or catalog
	RedisConcurrency    int      `json:"redis_concurrency"`
	RedisDurationS      float64  `json:"redis_duration_s"`
	RedisLatencyTurns   int      `json:"redis_latency_turns"`
	RedisRounds         int      `json:"redis_rounds"`
	PolicyTurns         int      `json:"policy_turns"` // per kind, server and round
	PolicyRounds        int      `json:"policy_rounds"`
	RowsLevels          []int    `json:"rows_levels"`
	RowsTokensPerS      float64  `json:"rows_tokens_per_s"`           // of the paced turns
	RowsBaselineBin     string   `json:"rows_baseline_bin,omitempty"` // the server the rows phase compares with
	TransportsTurns     int      `json:"transports_turns"`            // per transport, server and round
	TransportsRounds    int      `json:"transports_rounds"`
	// TransportsBaselineBin is the server the transports phase compares with.
	TransportsBaselineBin string `json:"transports_baseline_bin,omitempty"`
	FreshServerPerPhase   bool   `json:"fresh_server_per_phase"`
}

// Summary holds the figures the performance targets (the target* constants) are stated in.
// cpu_per_turn_ms is over all throughput levels; the target is on cpu_per_turn_c64_ms.
type Summary struct {
	AddedTTFCP50C1MS        *float64 `json:"added_ttfc_p50_c1_ms"`
	AddedTTFCP99C64MS       *float64 `json:"added_ttfc_p99_c64_ms"`
	CPUPerTurnMS            *float64 `json:"cpu_per_turn_ms"`
	CPUPerTurnC64MS         *float64 `json:"cpu_per_turn_c64_ms"`
	TurnsPerSC64            *float64 `json:"turns_per_s_c64"`
	PeakRSSC256Bytes        *int64   `json:"peak_rss_c256_bytes"`
	IdleSessionBytes        *int64   `json:"idle_session_bytes"`
	OpenStreamBytes         *int64   `json:"open_stream_bytes"`
	CatalogBytesPerJSONByte *float64 `json:"catalog_bytes_per_json_byte"`
	TurnBytesNDJSON         *int64   `json:"turn_bytes_ndjson"`
	TurnBytesSSE            *int64   `json:"turn_bytes_sse"`
	Streams10kErrors        *int     `json:"streams_10k_errors"`
	// A2UI: median over the turns of first renderable / complete, in %, per version.
	A2UIFirstRenderablePct    *float64 `json:"a2ui_first_renderable_pct"`
	A2UIV08FirstRenderablePct *float64 `json:"a2ui_v08_first_renderable_pct"`
	// Conversations: bytes a held conversation keeps per byte its client received, the
	// server's CPU per held turn / per stateless turn, and the median client tool round
	// trip.
	ConvHeldBytesRatio    *float64 `json:"conv_held_bytes_ratio"`
	ConvCPURatio          *float64 `json:"conv_cpu_ratio"`
	ClientToolRoundTripMS *float64 `json:"client_tool_round_trip_ms"`
	// A2A: an A2A turn / the same /generateA2ui turn, medians over the turns (CPU: over
	// the rounds), for the time to the last A2UI message, to the end of the stream, and
	// the server's CPU per turn; and the A2A turn's added time to the end, in ms.
	A2ALastMessageRatio *float64 `json:"a2a_last_message_ratio"`
	A2AEndRatio         *float64 `json:"a2a_end_ratio"`
	A2ACPURatio         *float64 `json:"a2a_cpu_ratio"`
	A2AAddedEndMS       *float64 `json:"a2a_added_end_ms"`
	// MCP (the a2a phase's MCP path): time to the last A2UI message and CPU per turn,
	// over /generateA2ui's.
	MCPLastMessageRatio *float64 `json:"mcp_last_message_ratio"`
	MCPCPURatio         *float64 `json:"mcp_cpu_ratio"`
	// Open: what one more open stream costs the server, between the open phase's two
	// levels around 2,000 and 6,000 streams (or its last two): peak RSS (VmHWM),
	// goroutines and descriptors.
	OpenRSSPerStreamBytes   *int64   `json:"open_rss_per_stream_bytes"`
	OpenGoroutinesPerStream *float64 `json:"open_goroutines_per_stream"`
	OpenFDsPerStream        *float64 `json:"open_fds_per_stream"`
	// Floor: what one more open stream costs net/http alone (the floor phase's proxy),
	// peak RSS between the same levels as the open phase's figure.
	FloorRSSPerStreamBytes *int64 `json:"floor_rss_per_stream_bytes"`
	// WS: server RSS per idle /ws connection holding one session (median over the
	// rounds), and a /ws prompt / the same /generateUi NDJSON turn, medians over the
	// rounds, for the time to the first UI update, to the end, and the server's CPU per
	// turn.
	WSIdleConnectionBytes *int64   `json:"ws_idle_connection_bytes"`
	WSFirstUIRatio        *float64 `json:"ws_first_ui_ratio"`
	WSEndRatio            *float64 `json:"ws_end_ratio"`
	WSCPURatio            *float64 `json:"ws_cpu_ratio"`
	// Redis: two replicas on a Redis Cluster / on one node (turns/s, their CPU per turn);
	// what acknowledgements add to a turn (p50 end, one at a time) and the shared limits to
	// the replicas' CPU per turn, both on the cluster.
	RedisClusterTurnsRatio *float64 `json:"redis_cluster_turns_ratio"`
	RedisClusterCPURatio   *float64 `json:"redis_cluster_cpu_ratio"`
	RedisAcksAddedEndMS    *float64 `json:"redis_acks_added_end_ms"`
	RedisLimitsAddedCPUMS  *float64 `json:"redis_limits_added_cpu_ms"`
	// Policy: the server's CPU per turn with the default UI policy / with every rule off,
	// the median of the per-round ratios, for unpaced A2UI turns and for genui turns.
	PolicyA2UICPURatio  *float64 `json:"policy_a2ui_cpu_ratio"`
	PolicyGenUICPURatio *float64 `json:"policy_genui_cpu_ratio"`
	// Rows: the largest A2UI bytes received / bytes of the final state over the current
	// server's turns; and at 2,000 rows, unpaced, the A2UI bytes the baseline server sent
	// / the current server's (null without --rows-baseline-bin).
	RowsReceivedPerFinalMax       *float64 `json:"rows_received_per_final_max"`
	RowsBaselineReceivedRatio2000 *float64 `json:"rows_baseline_received_ratio_2000"`
	// Transports: the largest after / before CPU per turn ratio over the transports
	// (each the median of the per-round ratios); null without a baseline.
	TransportsCPURatioMax *float64 `json:"transports_cpu_ratio_max"`
}

// The performance targets the table shows next to the figures they apply to.
const (
	targetAddedP50C1   = "added p50 <= 0.5"
	targetAddedP99C64  = "added p99 <= 10"
	targetC64          = ">= 1500 turns/s, CPU/turn <= 1.0 ms"
	targetC256         = "peak RSS <= 100 MiB"
	targetSession      = "<= 512 B"
	targetCatalog      = "<= 10x JSON size"
	targetStream       = "<= 32 KiB"
	targetStreams10k   = "<= 32 KiB, 10k without errors"
	targetTurnBodySize = "body <= 2048 B"
	targetA2UI         = "first renderable <= 25% of complete"
	targetConvBytes    = "held bytes < 2x received"
	targetConvCPU      = "held CPU per turn <= stateless"
	targetA2A          = "<= 1.2x /generateA2ui"
	targetWSIdle       = "<= 16 KiB"
	targetWS           = "/ws <= 1.1x NDJSON"
	targetPolicy       = "on <= 1.05x off"
	targetRows         = "received <= 3x final state"
	targetTransports   = "after <= 1.05x before"
)

type LatencyReport struct {
	Format string         `json:"format"`
	Levels []LatencyLevel `json:"levels"`
}

// LatencyLevel: server_* through the server, direct_* straight to the fake model with
// the genai client, added_* = server − direct per percentile.
type LatencyLevel struct {
	Concurrency         int      `json:"concurrency"`
	Turns               int      `json:"turns"`
	Errors              int      `json:"errors"`
	DirectCalls         int      `json:"direct_calls"`
	DirectErrors        int      `json:"direct_errors"`
	ServerTTFCP50MS     float64  `json:"server_ttfc_p50_ms"`
	ServerTTFCP90MS     float64  `json:"server_ttfc_p90_ms"`
	ServerTTFCP99MS     float64  `json:"server_ttfc_p99_ms"`
	ServerEndP50MS      float64  `json:"server_end_p50_ms"`
	ServerEndP90MS      float64  `json:"server_end_p90_ms"`
	ServerEndP99MS      float64  `json:"server_end_p99_ms"`
	DirectTTFCP50MS     float64  `json:"direct_ttfc_p50_ms"`
	DirectTTFCP90MS     float64  `json:"direct_ttfc_p90_ms"`
	DirectTTFCP99MS     float64  `json:"direct_ttfc_p99_ms"`
	DirectEndP50MS      float64  `json:"direct_end_p50_ms"`
	DirectEndP90MS      float64  `json:"direct_end_p90_ms"`
	DirectEndP99MS      float64  `json:"direct_end_p99_ms"`
	AddedTTFCP50MS      float64  `json:"added_ttfc_p50_ms"`
	AddedTTFCP90MS      float64  `json:"added_ttfc_p90_ms"`
	AddedTTFCP99MS      float64  `json:"added_ttfc_p99_ms"`
	AddedEndP50MS       float64  `json:"added_end_p50_ms"`
	AddedEndP90MS       float64  `json:"added_end_p90_ms"`
	AddedEndP99MS       float64  `json:"added_end_p99_ms"`
	ServerCPUPerTurnMS  *float64 `json:"server_cpu_per_turn_ms"`
	ServerTurnsPerS     float64  `json:"server_turns_per_s"`
	DirectCallsPerS     float64  `json:"direct_calls_per_s"`
	ServerElapsedS      float64  `json:"server_elapsed_s"`
	DirectElapsedS      float64  `json:"direct_elapsed_s"`
	ServerPhaseLimitHit bool     `json:"server_phase_limit_hit"`
}

type ThroughputReport struct {
	Format       string            `json:"format"`
	DurationS    float64           `json:"duration_s"`
	Levels       []ThroughputLevel `json:"levels"`
	CPUPerTurnMS *float64          `json:"cpu_per_turn_ms"` // all levels together
	BenchCPUMS   float64           `json:"bench_cpu_per_turn_ms"`
}

type ThroughputLevel struct {
	Concurrency  int      `json:"concurrency"`
	Turns        int      `json:"turns"`
	Errors       int      `json:"errors"`
	ElapsedS     float64  `json:"elapsed_s"`
	TurnsPerS    float64  `json:"turns_per_s"`
	TTFCP50MS    float64  `json:"ttfc_p50_ms"`
	TTFCP99MS    float64  `json:"ttfc_p99_ms"`
	EndP99MS     float64  `json:"end_p99_ms"`
	CPUPerTurnMS *float64 `json:"cpu_per_turn_ms"`
	PeakRSSBytes *int64   `json:"peak_rss_bytes"`
	// BenchCPUPerTurnMS is the bench process's own CPU (clients and fake model).
	BenchCPUPerTurnMS float64 `json:"bench_cpu_per_turn_ms"`
}

type SessionsReport struct {
	Sessions        int      `json:"sessions"`
	Errors          int      `json:"errors"`
	Concurrency     int      `json:"concurrency"`
	CreatedPerS     float64  `json:"created_per_s"`
	RSSBeforeBytes  *int64   `json:"rss_before_bytes"`
	RSSAfterBytes   *int64   `json:"rss_after_bytes"`
	BytesPerSession *int64   `json:"bytes_per_session"`
	CPUPerSessionMS *float64 `json:"cpu_per_session_ms"`
	PhaseLimitHit   bool     `json:"phase_limit_hit"`
}

// CatalogsReport: one session per distinct generated catalog. bytes_per_catalog =
// (rss_after_bytes − rss_before_bytes) / created (the session's own bytes included);
// bytes_per_json_byte = bytes_per_catalog / catalog_json_bytes.
type CatalogsReport struct {
	Catalogs         int      `json:"catalogs"` // requested
	Created          int      `json:"created"`  // sessions created
	Errors           int      `json:"errors"`
	Concurrency      int      `json:"concurrency"`
	CatalogJSONBytes int      `json:"catalog_json_bytes"` // size of each catalog as compact JSON
	ElapsedS         float64  `json:"elapsed_s"`
	CreatedPerS      float64  `json:"created_per_s"`
	RSSBeforeBytes   *int64   `json:"rss_before_bytes"`
	RSSAfterBytes    *int64   `json:"rss_after_bytes"`
	BytesPerCatalog  *int64   `json:"bytes_per_catalog"`
	BytesPerJSONByte *float64 `json:"bytes_per_json_byte"`
	CPUPerCatalogMS  *float64 `json:"cpu_per_catalog_ms"`
	PhaseLimitHit    bool     `json:"phase_limit_hit"`
	FirstError       string   `json:"first_error,omitempty"`
}

type StreamsReport struct {
	Streams        int     `json:"streams"`
	Opened         int     `json:"opened"` // response headers received
	Errors         int     `json:"errors"`
	ModelCallsHeld int     `json:"model_calls_held"` // calls the fake held at the measurement
	OpenS          float64 `json:"open_s"`           // until every header arrived
	RSSBeforeBytes *int64  `json:"rss_before_bytes"`
	RSSOpenBytes   *int64  `json:"rss_open_bytes"`
	BytesPerStream *int64  `json:"bytes_per_stream"`
	Cancelled      int     `json:"cancelled"` // acknowledged by POST /generateUi/cancel
	FDLimit        uint64  `json:"fd_limit"`
	FirstError     string  `json:"first_error,omitempty"`
}

type BytesReport struct {
	NDJSONBodyBytes int64 `json:"ndjson_body_bytes"`
	NDJSONWireBytes int64 `json:"ndjson_wire_bytes"`
	SSEBodyBytes    int64 `json:"sse_body_bytes"`
	SSEWireBytes    int64 `json:"sse_wire_bytes"`
}

// A2UIReport is the a2ui phase: how incrementally a surface the model writes as A2UI
// text reaches the client. Times are in ms from just before the request is sent.
type A2UIReport struct {
	TokensPerS     float64             `json:"tokens_per_s"`
	ChunkTokens    int                 `json:"chunk_tokens"`
	ModelLatencyMS float64             `json:"model_latency_ms"`
	TargetPct      float64             `json:"target_pct"` // first renderable / complete
	Versions       []A2UIVersionReport `json:"versions"`
}

// A2UIVersionReport: the figures of the successful turns of one A2UI version, each as
// median, min and max over the turns. first_renderable = the client first holds the
// root and, reachable from it, a visible leaf (Text, Icon, TextField, a Button's label…);
// complete = the last A2UI message; ratio_pct = first_renderable / complete per turn.
// model_* are when the fake model had sent the chunk completing the first renderable
// part and the whole surface (what any server could do at best); server_lag_max = per
// turn, the largest delay between the moment a component could have been shown (it,
// its single children and its parent written) and its arrival at the client.
type A2UIVersionReport struct {
	Version       string  `json:"version"`
	Turns         int     `json:"turns"`
	Errors        int     `json:"errors"`
	Components    int     `json:"components"` // scripted, all checked present at the end
	ScriptBytes   int     `json:"script_bytes"`
	ScriptTokens  int     `json:"script_tokens"` // bytes/4
	Chunks        int     `json:"chunks"`
	ModelStreamMS float64 `json:"model_stream_ms"` // scheduled time of the last chunk
	// ScriptFirstRenderablePct: the share of the script's text the model has written when
	// its first renderable part is complete.
	ScriptFirstRenderablePct float64   `json:"script_first_renderable_pct"`
	FirstMessageMS           a2uiStat  `json:"first_message_ms"`
	FirstRenderableMS        a2uiStat  `json:"first_renderable_ms"`
	CompleteMS               a2uiStat  `json:"complete_ms"`
	ResultMS                 a2uiStat  `json:"result_ms"`
	RatioPct                 a2uiStat  `json:"ratio_pct"`
	ModelFirstRenderable     *a2uiStat `json:"model_first_renderable_ms"`
	ModelComplete            *a2uiStat `json:"model_complete_ms"`
	ModelRatioPct            *a2uiStat `json:"model_ratio_pct"`
	ServerLagMaxMS           *a2uiStat `json:"server_lag_max_ms"`
	ModelCalls               int       `json:"model_calls"` // over all turns
	Pass                     bool      `json:"pass"`        // no error, >= 20 components, median ratio <= target
	FirstError               string    `json:"first_error,omitempty"`
}

// ConversationsReport is the conversations phase. Round trips: a turn whose model calls
// the client tool getLocation (finishReason "interrupted"), then its stateless
// continuation with the tool's result (finishReason "stop"); times in ms from just before
// the request to the result line, median [min-max] over the successful round trips,
// round_trip_ms from the first request to the continuation's result line. Conversations:
// per mode, conversations of turns_per_conversation turns, one turn after another, in
// rounds alternating stateless and held. held_* are from GET /readyz (the growth of
// conversations.held and conversations.bytes over the held runs), null when it does not
// report them; held_bytes_per_received_byte = held_bytes_per_conversation / the bytes
// the client received per held conversation; cpu_per_turn_held_per_stateless = the held
// mode's CPU per turn / the stateless mode's.
type ConversationsReport struct {
	RoundTrips               int            `json:"round_trips"`
	RoundTripErrors          int            `json:"round_trip_errors"`
	CallTurnMS               *a2uiStat      `json:"call_turn_ms"`
	ContinuationMS           *a2uiStat      `json:"continuation_ms"`
	RoundTripMS              *a2uiStat      `json:"round_trip_ms"`
	RoundTripFirstError      string         `json:"round_trip_first_error,omitempty"`
	Conversations            int            `json:"conversations"` // per mode and round
	TurnsPerConversation     int            `json:"turns_per_conversation"`
	Rounds                   int            `json:"rounds"`
	Stateless                ConvModeReport `json:"stateless"`
	Held                     ConvModeReport `json:"held"`
	HeldConversations        *int64         `json:"held_conversations"`
	HeldBytes                *int64         `json:"held_bytes"`
	HeldBytesPerConversation *int64         `json:"held_bytes_per_conversation"`
	HeldBytesRatio           *float64       `json:"held_bytes_per_received_byte"`
	HeldBytesTarget          float64        `json:"held_bytes_per_received_byte_target"` // below
	CPURatio                 *float64       `json:"cpu_per_turn_held_per_stateless"`
	CPURatioTarget           float64        `json:"cpu_per_turn_held_per_stateless_target"` // at most
}

// ConvModeReport: the conversations of one mode over all rounds. cpu_per_turn_ms is the
// median over the rounds of Δ(utime+stime) of the server / turns (null without a pid);
// the bytes are medians over the successful conversations of the sums of their turns'
// request and response bodies; turn_ms is from request to result line.
type ConvModeReport struct {
	Conversations                int       `json:"conversations"`
	Turns                        int       `json:"turns"` // ended with a result line
	Errors                       int       `json:"errors"`
	CPUPerTurnMS                 *float64  `json:"cpu_per_turn_ms"`
	CPUPerTurnRoundsMS           []float64 `json:"cpu_per_turn_rounds_ms"`
	ReceivedBytesPerConversation int64     `json:"received_bytes_per_conversation"`
	SentBytesPerConversation     int64     `json:"sent_bytes_per_conversation"`
	TurnMS                       *a2uiStat `json:"turn_ms"`
	FirstError                   string    `json:"first_error,omitempty"`
}

// A2AReport is the a2a phase: the same A2UI turn (the fake model's v0.9 script) through
// POST /generateA2ui in NDJSON and through the A2A agent (message/stream with the A2UI
// extension), one turn at a time, in rounds of a block of turns per path. Times in ms from
// just before the request is sent, median [min-max] over the successful turns.
// *_ratio = the A2A median / the /generateA2ui median; added_*_ms = A2A median −
// /generateA2ui median; the CPU figures are medians over the rounds.
type A2AReport struct {
	Version        string  `json:"version"`
	Extension      string  `json:"extension"`
	Baseline       string  `json:"baseline"`     // held: /generateA2ui turns with a new conversationId each; stateless
	TokensPerS     float64 `json:"tokens_per_s"` // 0: unpaced
	Paced          bool    `json:"paced"`
	ChunkTokens    int     `json:"chunk_tokens"`
	ModelLatencyMS float64 `json:"model_latency_ms"`
	Components     int     `json:"components"`
	Chunks         int     `json:"chunks"`
	ModelStreamMS  float64 `json:"model_stream_ms"` // scheduled time of the last chunk
	// A2UIMessages is the number of A2UI messages of the warm-up /generateA2ui turn, which
	// every turn of both paths must carry.
	A2UIMessages        int           `json:"a2ui_messages"`
	TurnsPerRound       int           `json:"turns_per_round"` // per path
	Rounds              int           `json:"rounds"`
	GenerateA2UI        A2APathReport `json:"generate_a2ui"`
	A2A                 A2APathReport `json:"a2a"`
	AddedFirstMessageMS *float64      `json:"added_first_message_ms"`
	AddedLastMessageMS  *float64      `json:"added_last_message_ms"`
	AddedEndMS          *float64      `json:"added_end_ms"`
	AddedCPUPerTurnMS   *float64      `json:"added_cpu_per_turn_ms"`
	LastMessageRatio    *float64      `json:"last_message_ratio"`
	EndRatio            *float64      `json:"end_ratio"`
	CPURatio            *float64      `json:"cpu_per_turn_ratio"`
	// MCP is the same turn as a call of the MCP tool generate_ui, and mcp_* its figures
	// against /generateA2ui (as for A2A).
	MCP                   A2APathReport `json:"mcp"`
	MCPAddedLastMessageMS *float64      `json:"mcp_added_last_message_ms"`
	MCPAddedEndMS         *float64      `json:"mcp_added_end_ms"`
	MCPAddedCPUPerTurnMS  *float64      `json:"mcp_added_cpu_per_turn_ms"`
	MCPLastMessageRatio   *float64      `json:"mcp_last_message_ratio"`
	MCPEndRatio           *float64      `json:"mcp_end_ratio"`
	MCPCPURatio           *float64      `json:"mcp_cpu_per_turn_ratio"`
	TargetRatio           float64       `json:"target_ratio"` // at most, for each ratio
	// Pass: no failed turn and every ratio measured within the target.
	Pass bool `json:"pass"`
}

// A2APathReport: the turns of one path over all rounds. first_message = the first A2UI
// message, last_message = the last one, end = the result line (/generateA2ui) or the
// final status (A2A); cpu_per_turn_ms = the median over the rounds of Δ(utime+stime) of
// the server over the round's block / its turns (null without a pid); response_bytes =
// the median response body of a turn.
type A2APathReport struct {
	Path               string    `json:"path"`
	Turns              int       `json:"turns"`
	Errors             int       `json:"errors"`
	A2UIMessages       int       `json:"a2ui_messages"` // per successful turn
	FirstMessageMS     *a2uiStat `json:"first_message_ms"`
	LastMessageMS      *a2uiStat `json:"last_message_ms"`
	EndMS              *a2uiStat `json:"end_ms"`
	CPUPerTurnMS       *float64  `json:"cpu_per_turn_ms"`
	CPUPerTurnRoundsMS []float64 `json:"cpu_per_turn_rounds_ms"`
	ResponseBytes      *int64    `json:"response_bytes"`
	FirstError         string    `json:"first_error,omitempty"`
}

func round(x float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(x*p) / p
}

func msOf(d time.Duration) float64 { return round(float64(d)/float64(time.Millisecond), 4) }

func ptr[T any](v T) *T { return &v }

// pct is the nearest-rank percentile of sorted durations.
func pct(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(math.Ceil(p*float64(len(sorted)))) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func fmtMS(x float64) string {
	switch {
	case math.Abs(x) < 10:
		return fmt.Sprintf("%.3f ms", x)
	case math.Abs(x) < 100:
		return fmt.Sprintf("%.2f ms", x)
	}
	return fmt.Sprintf("%.1f ms", x)
}

func fmtMSp(x *float64) string {
	if x == nil {
		return "n/a"
	}
	return fmtMS(*x)
}

// fmtStat prints a median and its range with prec decimals.
func fmtStat(s a2uiStat, prec int, unit string) string {
	return fmt.Sprintf("%.*f%s [%.*f-%.*f]", prec, s.Median, unit, prec, s.Min, prec, s.Max)
}

func fmtBytes(n int64) string {
	a := math.Abs(float64(n))
	switch {
	case a >= 1<<30:
		return fmt.Sprintf("%.2f GiB", float64(n)/(1<<30))
	case a >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case a >= 10<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}

func fmtBytesp(n *int64) string {
	if n == nil {
		return "n/a"
	}
	return fmtBytes(*n)
}

// writeTable prints the report for people.
func writeTable(w io.Writer, r *Report) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	p := func(format string, a ...any) { fmt.Fprintf(tw, format+"\n", a...) }
	t := r.Target
	pid := "pid unknown: no RSS/CPU"
	if t.PID != 0 {
		pid = fmt.Sprintf("pid %d", t.PID)
	}
	if t.Mode == "none" {
		p("genui-bench  no genui server (no phase run needs one)  %d CPUs  %s  wall %.0f s", t.CPUs, t.GoVersion, r.WallS)
	} else {
		p("genui-bench  %s (%s, %s, model %s)  %d CPUs  %s  wall %.0f s", t.URL, t.Mode, pid, t.Model, t.CPUs, t.GoVersion, r.WallS)
	}
	if s := r.Settings; t.Mode != "none" {
		p("fake model: %s", fakeModelLine(s))
	}
	if l := r.Latency; l != nil {
		writeLatency(p, l)
	}
	if th := r.Throughput; th != nil {
		writeThroughput(p, th)
	}
	if r.Sessions != nil || r.Catalogs != nil || r.Streams != nil || r.Streams10k != nil {
		writeMemoryHeader(p)
	}
	if v := r.Sessions; v != nil {
		writeSessionsRow(p, v)
	}
	if v := r.Catalogs; v != nil {
		writeCatalogsRow(p, v)
	}
	writeStreamsRows(p, r.Streams, r.Streams10k)
	if b := r.Bytes; b != nil {
		writeBytes(p, b)
	}
	if a := r.A2UI; a != nil {
		writeA2UI(p, a)
	}
	if c := r.Conversations; c != nil {
		writeConversations(p, c)
	}
	if a := r.A2A; a != nil {
		writeA2A(p, a)
	}
	if w := r.WS; w != nil {
		writeWS(p, w)
	}
	if rd := r.Redis; rd != nil {
		writeRedis(p, rd)
	}
	if o := r.Open; o != nil {
		writeOpen(p, o)
	}
	if f := r.Floor; f != nil {
		writeFloor(p, f)
	}
	if pr := r.Policy; pr != nil {
		writePolicy(p, pr)
	}
	if rw := r.Rows; rw != nil {
		writeRows(p, rw)
	}
	if tr := r.Transports; tr != nil {
		writeTransports(p, tr)
	}
	if notes := reportNotes(r); len(notes) > 0 {
		p("")
		for _, n := range notes {
			p("note: %s", n)
		}
	}
	return tw.Flush()
}

// fakeModelLine describes the fake model of the latency and throughput turns.
func fakeModelLine(s Settings) string {
	return fmt.Sprintf("latency %s, pacing %s, %d text event(s) + 1 surface; format %s", fmtMS(s.ModelLatencyMS), fmtMS(s.PacingMS), s.TextChunks, s.Format)
}

// reportNotes returns the report's notes, repeats next to each other dropped, each on
// one line.
func reportNotes(r *Report) []string {
	notes := slices.Compact(slices.Clone(r.Notes))
	for i, n := range notes {
		notes[i] = strings.ReplaceAll(n, "\n", " ")
	}
	return notes
}

// writeLatency prints the latency phase.
func writeLatency(p func(string, ...any), l *LatencyReport) {
	p("")
	p("LATENCY (%s; ms from request to event; added = server - direct, per percentile)", l.Format)
	p("level\tturns\terr\tserver p50/p90/p99\tdirect p50/p90/p99\tadded p50/p90/p99\ttarget")
	for _, v := range l.Levels {
		target := ""
		if v.Concurrency == 1 {
			target = targetAddedP50C1
		} else if v.Concurrency == 64 {
			target = targetAddedP99C64
		}
		trio := func(a, b, c float64) string { return fmt.Sprintf("%.3f / %.3f / %.3f", a, b, c) }
		p("first tool chunk c=%d\t%d\t%d\t%s\t%s\t%s\t%s", v.Concurrency, v.Turns, v.Errors+v.DirectErrors,
			trio(v.ServerTTFCP50MS, v.ServerTTFCP90MS, v.ServerTTFCP99MS),
			trio(v.DirectTTFCP50MS, v.DirectTTFCP90MS, v.DirectTTFCP99MS),
			trio(v.AddedTTFCP50MS, v.AddedTTFCP90MS, v.AddedTTFCP99MS), target)
		p("end of stream    c=%d\t\t\t%s\t%s\t%s\t", v.Concurrency,
			trio(v.ServerEndP50MS, v.ServerEndP90MS, v.ServerEndP99MS),
			trio(v.DirectEndP50MS, v.DirectEndP90MS, v.DirectEndP99MS),
			trio(v.AddedEndP50MS, v.AddedEndP90MS, v.AddedEndP99MS))
	}
	for _, v := range l.Levels {
		if v.Concurrency == 1 {
			p("server CPU per turn c=1: %s (%.0f turns/s through the server, %.0f calls/s direct)", fmtMSp(v.ServerCPUPerTurnMS), v.ServerTurnsPerS, v.DirectCallsPerS)
		}
	}
}

// writeThroughput prints the throughput phase.
func writeThroughput(p func(string, ...any), th *ThroughputReport) {
	p("")
	p("THROUGHPUT (%s, %.1f s per level, closed loop)", th.Format, th.DurationS)
	p("clients\tturns/s\tturns\terrors\tCPU/turn\tbench CPU/turn\tttfc p50\tttfc p99\tpeak RSS\ttarget")
	for _, v := range th.Levels {
		target := ""
		switch v.Concurrency {
		case 64:
			target = targetC64
		case 256:
			target = targetC256
		}
		p("%d\t%.0f\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s", v.Concurrency, v.TurnsPerS, v.Turns, v.Errors, fmtMSp(v.CPUPerTurnMS),
			fmtMS(v.BenchCPUPerTurnMS), fmtMS(v.TTFCP50MS), fmtMS(v.TTFCP99MS), fmtBytesp(v.PeakRSSBytes), target)
	}
	p("all levels\t\t\t\t%s\t%s\t\t\t\t", fmtMSp(th.CPUPerTurnMS), fmtMS(th.BenchCPUMS))
}

// writeMemoryHeader prints the caption and the header of the memory table, whose rows
// the sessions, catalogs and streams phases print.
func writeMemoryHeader(p func(string, ...any)) {
	p("")
	p("MEMORY (server RSS, median of 5 samples; includes GC headroom)")
	p("what\tper item\tRSS before -> after\terrors\tdetail\ttarget")
}

// writeSessionsRow prints the sessions phase's row of the memory table.
func writeSessionsRow(p func(string, ...any), v *SessionsReport) {
	p("idle session\t%s\t%s -> %s\t%d\t%d sessions at c=%d, %.0f/s, CPU %s each\t%s", fmtBytesp(v.BytesPerSession),
		fmtBytesp(v.RSSBeforeBytes), fmtBytesp(v.RSSAfterBytes), v.Errors, v.Sessions, v.Concurrency, v.CreatedPerS, fmtMSp(v.CPUPerSessionMS),
		targetSession)
}

// writeCatalogsRow prints the catalogs phase's row of the memory table.
func writeCatalogsRow(p func(string, ...any), v *CatalogsReport) {
	ratio := ""
	if v.BytesPerJSONByte != nil {
		ratio = fmt.Sprintf(" (%.1fx JSON)", *v.BytesPerJSONByte)
	}
	p("catalog\t%s%s\t%s -> %s\t%d\t%d/%d catalogs of %s JSON at c=%d in %.1f s, CPU %s each\t%s",
		fmtBytesp(v.BytesPerCatalog), ratio, fmtBytesp(v.RSSBeforeBytes), fmtBytesp(v.RSSAfterBytes), v.Errors,
		v.Created, v.Catalogs, fmtBytes(int64(v.CatalogJSONBytes)), v.Concurrency, v.ElapsedS, fmtMSp(v.CPUPerCatalogMS), targetCatalog)
}

// writeStreamsRows prints the streams phase's rows of the memory table: the default
// level and, with --streams-10k, the 10,000 streams; nil ones are skipped.
func writeStreamsRows(p func(string, ...any), streams, streams10k *StreamsReport) {
	for i, v := range []*StreamsReport{streams, streams10k} {
		if v == nil {
			continue
		}
		target := targetStream
		if i == 1 {
			target = targetStreams10k
		}
		p("open stream\t%s\t%s -> %s\t%d\t%d/%d open in %.1f s, %d model calls held, %d cancelled\t%s",
			fmtBytesp(v.BytesPerStream), fmtBytesp(v.RSSBeforeBytes), fmtBytesp(v.RSSOpenBytes), v.Errors,
			v.Opened, v.Streams, v.OpenS, v.ModelCallsHeld, v.Cancelled, target)
	}
}

// writeBytes prints the bytes phase.
func writeBytes(p func(string, ...any), b *BytesReport) {
	p("")
	p("BYTES PER SIMPLE TURN (text + one surface + result)")
	p("format\tbody\twire (headers, chunking)\ttarget")
	p("ndjson\t%d B\t%d B\t%s", b.NDJSONBodyBytes, b.NDJSONWireBytes, targetTurnBodySize)
	p("sse\t%d B\t%d B\t%s", b.SSEBodyBytes, b.SSEWireBytes, targetTurnBodySize)
}

// writeA2UI prints the a2ui phase.
func writeA2UI(p func(string, ...any), a *A2UIReport) {
	p("")
	p("A2UI (model %.0f tokens/s in %d-token chunks, first token after %s; ms from request; median [min-max])",
		a.TokensPerS, a.ChunkTokens, fmtMS(a.ModelLatencyMS))
	p("version\tcomponents\tturns\terr\tfirst message\tfirst renderable\tcomplete\tfirst/complete\tmodel-bound\tserver lag max\ttarget")
	for _, v := range a.Versions {
		verdict := "FAIL"
		if v.Pass {
			verdict = "pass"
		}
		model, lag := "n/a", "n/a"
		if v.ModelRatioPct != nil {
			model = fmt.Sprintf("%.1f%%", v.ModelRatioPct.Median)
		}
		if v.ServerLagMaxMS != nil {
			lag = fmtStat(*v.ServerLagMaxMS, 2, "")
		}
		p("%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s: %s", v.Version, v.Components, v.Turns, v.Errors,
			fmtStat(v.FirstMessageMS, 0, ""), fmtStat(v.FirstRenderableMS, 0, ""), fmtStat(v.CompleteMS, 0, ""),
			fmtStat(v.RatioPct, 1, "%"), model, lag, targetA2UI, verdict)
	}
}

// writeConversations prints the conversations phase.
func writeConversations(p func(string, ...any), c *ConversationsReport) {
	stat := func(s *a2uiStat) string {
		if s == nil {
			return "n/a"
		}
		return fmtStat(*s, 2, "")
	}
	verdict := func(ok bool) string {
		if ok {
			return "pass"
		}
		return "FAIL"
	}
	p("")
	p("CONVERSATIONS (/generateUi NDJSON, basic catalog in every request; ms from request to result line; median [min-max])")
	p("client tool	round trips	err	call turn (interrupted)	continuation (stop)	round trip")
	p("getLocation	%d	%d	%s	%s	%s", c.RoundTrips, c.RoundTripErrors, stat(c.CallTurnMS), stat(c.ContinuationMS), stat(c.RoundTripMS))
	p("%d conversation(s) of %d turns per mode and round, %d round(s) alternating stateless and held, one turn at a time",
		c.Conversations, c.TurnsPerConversation, c.Rounds)
	p("mode	conversations	turns	err	CPU/turn (median)	CPU/turn per round	received/conversation	sent/conversation	turn")
	for _, m := range []struct {
		name string
		v    *ConvModeReport
	}{{"stateless", &c.Stateless}, {"held", &c.Held}} {
		rounds := make([]string, len(m.v.CPUPerTurnRoundsMS))
		for i, x := range m.v.CPUPerTurnRoundsMS {
			rounds[i] = fmt.Sprintf("%.3f", x)
		}
		perRound := "n/a"
		if len(rounds) > 0 {
			perRound = strings.Join(rounds, " / ")
		}
		p("%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s", m.name, m.v.Conversations, m.v.Turns, m.v.Errors, fmtMSp(m.v.CPUPerTurnMS), perRound,
			fmtBytes(m.v.ReceivedBytesPerConversation), fmtBytes(m.v.SentBytesPerConversation), stat(m.v.TurnMS))
	}
	p("held by the server (GET /readyz)")
	p("figure\tvalue\ttarget")
	held, heldTarget := "n/a (not reported by /readyz)", targetConvBytes
	if c.HeldBytesPerConversation != nil {
		held = fmt.Sprintf("%s per conversation (%d conversations, %s)", fmtBytes(*c.HeldBytesPerConversation), *c.HeldConversations, fmtBytes(*c.HeldBytes))
		if c.HeldBytesRatio != nil {
			held += fmt.Sprintf(" / %s received = %.2fx", fmtBytes(c.Held.ReceivedBytesPerConversation), *c.HeldBytesRatio)
			heldTarget += ": " + verdict(*c.HeldBytesRatio < c.HeldBytesTarget)
		}
	}
	p("held bytes per conversation\t%s\t%s", held, heldTarget)
	cpu, cpuTarget := "n/a", targetConvCPU
	if c.CPURatio != nil {
		cpu = fmt.Sprintf("%s / %s = %.2fx", fmtMSp(c.Held.CPUPerTurnMS), fmtMSp(c.Stateless.CPUPerTurnMS), *c.CPURatio)
		cpuTarget += ": " + verdict(*c.CPURatio <= c.CPURatioTarget)
	}
	p("CPU per turn held / stateless\t%s\t%s", cpu, cpuTarget)
}

// writeA2A prints the a2a phase.
func writeA2A(p func(string, ...any), a *A2AReport) {
	stat := func(s *a2uiStat) string {
		if s == nil {
			return "n/a"
		}
		return fmtStat(*s, 2, "")
	}
	pace := "unpaced model (every chunk at once)"
	if a.Paced {
		pace = fmt.Sprintf("model %.0f tokens/s in %d-token chunks, first token after %s, last chunk at %s",
			a.TokensPerS, a.ChunkTokens, fmtMS(a.ModelLatencyMS), fmtMS(a.ModelStreamMS))
	}
	p("")
	p("A2A (A2UI %s surface of %d components in %d chunks, %s; %d round(s) of %d turns per path; ms from request; median [min-max])",
		a.Version, a.Components, a.Chunks, pace, a.Rounds, a.TurnsPerRound)
	base := "/generateA2ui NDJSON, a new conversationId per turn (held, as A2A holds each context)"
	if a.Baseline == "stateless" {
		base = "/generateA2ui NDJSON, stateless"
	}
	p("%s vs A2A v0.3 message/stream (SSE, X-A2A-Extensions %s, a new context per turn) vs MCP tools/call generate_ui (%s, stateless, a new conversation per turn; the A2UI comes with the result)",
		base, a.Extension, mcpVersion)
	p("path\tturns\terr\tA2UI msgs\tfirst message\tlast message\tend\tCPU/turn (median)\tCPU/turn per round\tresponse")
	for _, v := range []*A2APathReport{&a.GenerateA2UI, &a.A2A, &a.MCP} {
		rounds := make([]string, len(v.CPUPerTurnRoundsMS))
		for i, x := range v.CPUPerTurnRoundsMS {
			rounds[i] = fmt.Sprintf("%.2f", x)
		}
		perRound := "n/a"
		if len(rounds) > 0 {
			perRound = strings.Join(rounds, " / ")
		}
		p("%s\t%d\t%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s", v.Path, v.Turns, v.Errors, v.A2UIMessages, stat(v.FirstMessageMS),
			stat(v.LastMessageMS), stat(v.EndMS), fmtMSp(v.CPUPerTurnMS), perRound, fmtBytesp(v.ResponseBytes))
	}
	p("A2A and MCP against /generateA2ui (medians; CPU: medians over the rounds)")
	p("figure\tpath / /generateA2ui\tadded by the path\ttarget")
	row := func(name string, ratio, added *float64) {
		r, target := "n/a", targetA2A
		if ratio != nil {
			r = fmt.Sprintf("%.3fx", *ratio)
			if *ratio <= a.TargetRatio {
				target += ": pass"
			} else {
				target += ": FAIL"
			}
		}
		p("%s\t%s\t%s\t%s", name, r, fmtMSp(added), target)
	}
	p("A2A first message\t\t%s\t", fmtMSp(a.AddedFirstMessageMS))
	row("A2A last message", a.LastMessageRatio, a.AddedLastMessageMS)
	row("A2A end", a.EndRatio, a.AddedEndMS)
	row("A2A CPU per turn", a.CPURatio, a.AddedCPUPerTurnMS)
	row("MCP last message", a.MCPLastMessageRatio, a.MCPAddedLastMessageMS)
	row("MCP end", a.MCPEndRatio, a.MCPAddedEndMS)
	row("MCP CPU per turn", a.MCPCPURatio, a.MCPAddedCPUPerTurnMS)
}

// OpenReport is the open phase: levels of N turns at once (/generateA2ui, stateless,
// the fake's v0.9 script after model_latency_ms at tokens_per_s) on one fresh server,
// N ascending. Per level: the most turns open at once, the server's peaks while they ran
// (VmHWM, reset before the level; goroutines, live heap and descriptors, sampled every
// 250 ms from /metrics and /proc), the times of the first A2UI message and of the end
// (median [min-max] over the turns), what the first message came later than the model
// wrote it, and what the server holds after. *_per_stream = the growth from the level
// before (the baseline for the first) / the growth in streams.
type OpenReport struct {
	Endpoint            string  `json:"endpoint"`
	Version             string  `json:"version"`
	TokensPerS          float64 `json:"tokens_per_s"`
	ModelLatencyMS      float64 `json:"model_latency_ms"`
	ModelFirstMessageMS float64 `json:"model_first_message_ms"` // when the model has written the first A2UI message
	ModelStreamMS       float64 `json:"model_stream_ms"`        // when it has written everything
	// H2C: the server reached the model over HTTP/2 without TLS (--model-h2c).
	H2C      bool        `json:"h2c"`
	FDLimit  uint64      `json:"fd_limit"`
	Baseline OpenServer  `json:"baseline"`
	Levels   []OpenLevel `json:"levels"`
}

// OpenServer is the server after the warm-up turn, before the first level.
type OpenServer struct {
	RSSBytes       int64 `json:"rss_bytes"`
	HeapInuseBytes int64 `json:"heap_inuse_bytes"`
	Goroutines     int64 `json:"goroutines"`
	FDs            int64 `json:"fds"`
}

// OpenLevel is one level of the open phase.
type OpenLevel struct {
	Streams             int       `json:"streams"`
	MaxConcurrent       int       `json:"max_concurrent"`
	Errors              int       `json:"errors"`
	FirstError          string    `json:"first_error,omitempty"`
	WallS               float64   `json:"wall_s"`
	PeakRSSBytes        int64     `json:"peak_rss_bytes"`
	PeakHeapInuseBytes  int64     `json:"peak_heap_inuse_bytes"`
	PeakGoroutines      int64     `json:"peak_goroutines"`
	PeakFDs             int64     `json:"peak_fds"`
	RSSPerStreamBytes   *int64    `json:"rss_per_stream_bytes"`
	HeapPerStreamBytes  *int64    `json:"heap_per_stream_bytes"`
	GoroutinesPerStream *float64  `json:"goroutines_per_stream"`
	FDsPerStream        *float64  `json:"fds_per_stream"`
	FirstMessageMS      *a2uiStat `json:"first_message_ms"`
	EndMS               *a2uiStat `json:"end_ms"`
	AddedFirstMessageMS *float64  `json:"added_first_message_ms"` // median first message − the model's
	AfterGoroutines     int64     `json:"after_goroutines"`
	AfterFDs            int64     `json:"after_fds"`
}

// goal returns the per-stream figures of the level that goes past 6,000 streams from one
// at or past 2,000 (the measure), else of the last level.
func (o *OpenReport) goal() (*int64, *float64, *float64) {
	streams := make([]int, len(o.Levels))
	for i, lv := range o.Levels {
		streams[i] = lv.Streams
	}
	i := goalLevel(streams)
	if i < 0 {
		return nil, nil, nil
	}
	lv := o.Levels[i]
	return lv.RSSPerStreamBytes, lv.GoroutinesPerStream, lv.FDsPerStream
}

// goalLevel returns the index of the first level of streams at or past 6,000 that
// follows one at or past 2,000, else of the last level; -1 without levels.
func goalLevel(streams []int) int {
	for i := 1; i < len(streams); i++ {
		if streams[i-1] >= 2000 && streams[i] >= 6000 {
			return i
		}
	}
	return len(streams) - 1
}

// writeOpen prints the open phase.
func writeOpen(p func(string, ...any), o *OpenReport) {
	model := "HTTP/1.1, a connection per call"
	if o.H2C {
		model = "HTTP/2 without TLS (--model-h2c), one connection"
	}
	p("")
	p("Open streams (%s %s, stateless; the model %s to its first token, then %.0f tokens/s: first A2UI message written at %s, all at %s; the model over %s)",
		o.Endpoint, o.Version, fmtMS(o.ModelLatencyMS), o.TokensPerS, fmtMS(o.ModelFirstMessageMS), fmtMS(o.ModelStreamMS), model)
	p("baseline: RSS %s, live heap %s, %d goroutines, %d descriptors", fmtBytes(o.Baseline.RSSBytes), fmtBytes(o.Baseline.HeapInuseBytes),
		o.Baseline.Goroutines, o.Baseline.FDs)
	p("streams\tat once\terr\tpeak RSS\tper stream\tlive heap\tper stream\tgoroutines\tper stream\tdescriptors\tper stream\tfirst A2UI message (ms)\tadded\tend (ms)\tafter: goroutines, fds")
	f := func(x *float64) string {
		if x == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.2f", *x)
	}
	for _, lv := range o.Levels {
		p("%d\t%d\t%d\t%s\t%s\t%s\t%s\t%d\t%s\t%d\t%s\t%s\t%s\t%s\t%d, %d", lv.Streams, lv.MaxConcurrent, lv.Errors,
			fmtBytes(lv.PeakRSSBytes), fmtBytesp(lv.RSSPerStreamBytes), fmtBytes(lv.PeakHeapInuseBytes), fmtBytesp(lv.HeapPerStreamBytes),
			lv.PeakGoroutines, f(lv.GoroutinesPerStream), lv.PeakFDs, f(lv.FDsPerStream), fmtStatp(lv.FirstMessageMS),
			fmtMSp(lv.AddedFirstMessageMS), fmtStatp(lv.EndMS), lv.AfterGoroutines, lv.AfterFDs)
	}
	p("target: <= 48 KiB of peak RSS per open stream between 2,000 and 6,000 streams")
}

// FloorReport is the floor phase: the open phase's streams through the smallest Go
// server doing the same plumbing (the proxy: an HTTP/1.1 net/http handler posting each
// request to the fake model over one shared h2c connection and copying the answer's
// lines, flushed), levels of N at once, N ascending. The fake sends the open phase's
// model events (events of event_bytes in all) at its times. Per level: the most streams open
// at once (from response headers to end), the proxy's peak RSS (VmHWM, reset before the
// level) and its largest goroutines and descriptors sampled every 250 ms, and the times
// to the end of each stream. *_per_stream = the growth from the level before (the
// baseline for the first) / the growth in streams.
type FloorReport struct {
	TokensPerS        float64      `json:"tokens_per_s"`
	ModelLatencyMS    float64      `json:"model_latency_ms"`
	ModelFirstEventMS float64      `json:"model_first_event_ms"` // when the fake model sends its first event
	ModelStreamMS     float64      `json:"model_stream_ms"`      // and its last
	Events            int          `json:"events"`               // per stream
	EventBytes        int          `json:"event_bytes"`          // per stream, as the fake model sends them
	RequestBytes      int          `json:"request_bytes"`
	ProxyPID          int          `json:"proxy_pid"`
	FDLimit           uint64       `json:"fd_limit"`
	Baseline          FloorProxy   `json:"baseline"`
	Levels            []FloorLevel `json:"levels"`
}

// FloorProxy is the proxy after a warm-up stream, before the first level.
type FloorProxy struct {
	RSSBytes   int64 `json:"rss_bytes"`
	Goroutines int64 `json:"goroutines"`
	FDs        int64 `json:"fds"`
}

// FloorLevel is one level of the floor phase.
type FloorLevel struct {
	Streams             int       `json:"streams"`
	MaxOpen             int       `json:"max_open"`
	Errors              int       `json:"errors"`
	FirstError          string    `json:"first_error,omitempty"`
	WallS               float64   `json:"wall_s"`
	PeakRSSBytes        int64     `json:"peak_rss_bytes"`
	PeakGoroutines      int64     `json:"peak_goroutines"`
	PeakFDs             int64     `json:"peak_fds"`
	RSSPerStreamBytes   *int64    `json:"rss_per_stream_bytes"`
	GoroutinesPerStream *float64  `json:"goroutines_per_stream"`
	FDsPerStream        *float64  `json:"fds_per_stream"`
	EndMS               *a2uiStat `json:"end_ms"`
}

// goal returns the peak RSS per extra stream of the level the open phase's figure is
// taken at.
func (f *FloorReport) goal() *int64 {
	streams := make([]int, len(f.Levels))
	for i, lv := range f.Levels {
		streams[i] = lv.Streams
	}
	if i := goalLevel(streams); i >= 0 {
		return f.Levels[i].RSSPerStreamBytes
	}
	return nil
}

// writeFloor prints the floor phase.
func writeFloor(p func(string, ...any), f *FloorReport) {
	f2 := func(x *float64) string {
		if x == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.2f", *x)
	}
	p("")
	p("Floor: net/http alone (an HTTP/1.1 handler streaming the body of an h2c call of the fake model, no other work; %s requests; the open phase's model, %d events of %s in all, the first at %s, the last at %s)",
		fmtBytes(int64(f.RequestBytes)), f.Events, fmtBytes(int64(f.EventBytes)), fmtMS(f.ModelFirstEventMS), fmtMS(f.ModelStreamMS))
	p("baseline: RSS %s, %d goroutines, %d descriptors", fmtBytes(f.Baseline.RSSBytes), f.Baseline.Goroutines, f.Baseline.FDs)
	p("streams\topen at once\terr\tpeak RSS\tper extra stream\tgoroutines\tper stream\tdescriptors\tper stream\tend (ms)")
	for _, lv := range f.Levels {
		p("%d\t%d\t%d\t%s\t%s\t%d\t%s\t%d\t%s\t%s", lv.Streams, lv.MaxOpen, lv.Errors, fmtBytes(lv.PeakRSSBytes),
			fmtBytesp(lv.RSSPerStreamBytes), lv.PeakGoroutines, f2(lv.GoroutinesPerStream), lv.PeakFDs, f2(lv.FDsPerStream), fmtStatp(lv.EndMS))
	}
}

// PolicyReport is the policy phase: two servers side by side, "on" with the default UI
// policy and "off" with --policy-off all, the same turns on both in rounds, the first
// server alternating between rounds (first_per_round). Per kind of turn: CPU per turn =
// Δ(utime+stime) of the server over its block / the block's turns, per round, and the
// median over the rounds; cpu_ratio = the median of the per-round ratios on / off, which
// the target applies to; cpu_ratio_of_medians = on's median / off's.
type PolicyReport struct {
	Version    string `json:"a2ui_version"`
	Components int    `json:"components"`
	Chunks     int    `json:"chunks"` // of the fake model's A2UI script, all sent at once
	// A2UIMessages is the number of A2UI messages of every A2UI turn, the same on both
	// servers (checked turn by turn); GenUISurfaces the tool requests of a genui turn,
	// the same on both servers (checked in the warm-up).
	A2UIMessages  int `json:"a2ui_messages"`
	GenUISurfaces int `json:"genui_surfaces"`
	TurnsPerRound int `json:"turns_per_round"` // per kind and server
	Rounds        int `json:"rounds"`
	WarmupTurns   int `json:"warmup_turns"` // per kind and server
	// CPUSource is where the CPU figures come from: "clock", each server's CPU-time clock
	// (utime+stime in ns), or "ticks", /proc/<pid>/stat (in 10 ms ticks) where the clock
	// cannot be read.
	CPUSource     string         `json:"cpu_source"`
	Servers       []PolicyServer `json:"servers"`
	FirstPerRound []string       `json:"first_per_round"`
	A2UI          PolicyKind     `json:"a2ui"`
	GenUI         PolicyKind     `json:"genui"`
	TargetRatio   float64        `json:"target_ratio"` // at most, for each kind's cpu_ratio
	// Pass: both kinds' cpu_ratio measured within the target.
	Pass bool `json:"pass"`
}

// PolicyServer is one server of the policy phase: its name, its flags besides the base
// flags and --server-args, and its pid.
type PolicyServer struct {
	Name  string   `json:"name"`
	Flags []string `json:"flags"`
	PID   int      `json:"pid"`
}

// PolicyKind is one kind of turn of the policy phase on both servers. end = from just
// before the request to the result line, median [min-max] over the turns.
type PolicyKind struct {
	Kind                  string     `json:"kind"`
	Request               string     `json:"request"`
	TurnsPerServer        int        `json:"turns_per_server"` // over the rounds
	OnCPUPerTurnMS        *float64   `json:"on_cpu_per_turn_ms"`
	OffCPUPerTurnMS       *float64   `json:"off_cpu_per_turn_ms"`
	OnCPUPerTurnRoundsMS  []float64  `json:"on_cpu_per_turn_rounds_ms"`
	OffCPUPerTurnRoundsMS []float64  `json:"off_cpu_per_turn_rounds_ms"`
	OnTicksRounds         []int      `json:"on_ticks_rounds"` // utime+stime ticks (10 ms) of /proc/<pid>/stat over each round's block
	OffTicksRounds        []int      `json:"off_ticks_rounds"`
	CPURatioRounds        []*float64 `json:"cpu_ratio_rounds"` // null for a round where off took no tick
	CPURatio              *float64   `json:"cpu_ratio"`
	CPURatioOfMedians     *float64   `json:"cpu_ratio_of_medians"`
	AddedCPUPerTurnMS     *float64   `json:"added_cpu_per_turn_ms"` // on median − off median
	OnEndMS               a2uiStat   `json:"on_end_ms"`
	OffEndMS              a2uiStat   `json:"off_end_ms"`
	Met                   bool       `json:"met"` // cpu_ratio <= target_ratio
}

// writePolicy prints the policy phase.
func writePolicy(p func(string, ...any), pr *PolicyReport) {
	join := func(xs []float64, prec int) string {
		if len(xs) == 0 {
			return "n/a"
		}
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = fmt.Sprintf("%.*f", prec, x)
		}
		return strings.Join(out, " / ")
	}
	p("")
	source := "read in ns from each server's CPU-time clock; ticks: /proc/<pid>/stat, 10 ms"
	if pr.CPUSource != "clock" {
		source = "from /proc/<pid>/stat, in 10 ms ticks"
	}
	p("POLICY (the default UI policy on vs --policy-off all, two servers side by side; %d round(s) of %d turns per kind and server, first server per round: %s; CPU per turn = Δ(utime+stime) / turns, %s)",
		pr.Rounds, pr.TurnsPerRound, strings.Join(pr.FirstPerRound, ", "), source)
	for _, v := range pr.Servers {
		flags := "the default UI policy"
		if len(v.Flags) > 0 {
			flags = strings.Join(v.Flags, " ")
		}
		p("server %s: pid %d, %s", v.Name, v.PID, flags)
	}
	p("A2UI: %s; %d components in %d chunks, %d A2UI messages per turn, the same on both servers", pr.A2UI.Request, pr.Components, pr.Chunks, pr.A2UIMessages)
	p("genui: %s; %d surface(s) per turn, the same on both servers", pr.GenUI.Request, pr.GenUISurfaces)
	p("kind\tserver\tturns\tCPU/turn (median)\tCPU/turn per round\tticks per round\tend (ms, median [min-max])")
	for _, k := range []*PolicyKind{&pr.A2UI, &pr.GenUI} {
		ticks := func(xs []int) string {
			if len(xs) == 0 {
				return "n/a"
			}
			return strings.Trim(fmt.Sprint(xs), "[]")
		}
		p("%s\ton\t%d\t%s\t%s\t%s\t%s", k.Kind, k.TurnsPerServer, fmtMSp(k.OnCPUPerTurnMS), join(k.OnCPUPerTurnRoundsMS, 3),
			ticks(k.OnTicksRounds), fmtStat(k.OnEndMS, 3, ""))
		p("%s\toff\t%d\t%s\t%s\t%s\t%s", k.Kind, k.TurnsPerServer, fmtMSp(k.OffCPUPerTurnMS), join(k.OffCPUPerTurnRoundsMS, 3),
			ticks(k.OffTicksRounds), fmtStat(k.OffEndMS, 3, ""))
	}
	p("CPU per turn on / off (ratio: median of the per-round ratios)")
	p("kind\tratio\tper round\tratio of medians\tadded CPU/turn\ttarget")
	for _, k := range []*PolicyKind{&pr.A2UI, &pr.GenUI} {
		ratio, target := "n/a", targetPolicy
		if k.CPURatio != nil {
			ratio = fmt.Sprintf("%.3fx", *k.CPURatio)
			if k.Met {
				target += ": pass"
			} else {
				target += ": FAIL"
			}
		}
		rounds := make([]string, len(k.CPURatioRounds))
		for i, x := range k.CPURatioRounds {
			rounds[i] = "n/a"
			if x != nil {
				rounds[i] = fmt.Sprintf("%.3f", *x)
			}
		}
		perRound := "n/a"
		if len(rounds) > 0 {
			perRound = strings.Join(rounds, " / ")
		}
		ofMedians := "n/a"
		if k.CPURatioOfMedians != nil {
			ofMedians = fmt.Sprintf("%.3fx", *k.CPURatioOfMedians)
		}
		p("%s\t%s\t%s\t%s\t%s\t%s", k.Kind, ratio, perRound, ofMedians, fmtMSp(k.AddedCPUPerTurnMS), target)
	}
}

// RowsReport is the rows phase: for each level and pace, one /generateA2ui turn whose
// model writes one surface, a Column "root" of N Text rows, top-down; on a fresh server
// per turn (fresh_server_per_turn; with --url the one server), after a warm-up turn of
// warmup_rows rows. A turn is bounded by timeout_s. The current server is the one under
// test; the baseline (baseline_bin) runs the same turns, the first server alternating
// between levels.
type RowsReport struct {
	Endpoint           string      `json:"endpoint"`
	Version            string      `json:"a2ui_version"`
	CatalogID          string      `json:"catalog_id"`
	ChunkTokens        int         `json:"chunk_tokens"`
	TokensPerS         float64     `json:"tokens_per_s"` // of the paced turns
	TimeoutS           float64     `json:"timeout_s"`
	WarmupRows         int         `json:"warmup_rows"`
	FreshServerPerTurn bool        `json:"fresh_server_per_turn"`
	BaselineBin        string      `json:"baseline_bin,omitempty"`
	Levels             []RowsLevel `json:"levels"`
	TargetRatio        float64     `json:"target_ratio"` // at most, for received_per_final of the current server
	// Pass: every turn of the current server received at most target_ratio times its
	// final state.
	Pass bool `json:"pass"`
}

// RowsLevel is one level at one pace. *_ratio = baseline / current: the A2UI bytes
// received, the time to the end, the server's CPU and peak RSS (null without a
// baseline); baseline_cut: the baseline's turn was cut at the timeout, so its ratios are
// lower bounds.
type RowsLevel struct {
	Rows          int       `json:"rows"`
	Pace          string    `json:"pace"` // unpaced or paced
	Components    int       `json:"components"`
	ScriptBytes   int       `json:"script_bytes"` // what the model writes, whole
	Chunks        int       `json:"chunks"`
	ModelStreamMS float64   `json:"model_stream_ms"` // scheduled time of the last chunk
	FirstServer   string    `json:"first_server"`
	Current       RowsTurn  `json:"current"`
	Baseline      *RowsTurn `json:"baseline"`
	BaselineCut   bool      `json:"baseline_cut"`
	ReceivedRatio *float64  `json:"received_ratio"`
	TimeRatio     *float64  `json:"time_ratio"`
	CPURatio      *float64  `json:"cpu_ratio"`
	PeakRSSRatio  *float64  `json:"peak_rss_ratio"`
}

// RowsTurn is one turn of the rows phase. Times in ms from just before the request:
// first_message and last_message = the first and last A2UI messages; first_renderable =
// the first A2UI message after which the root has children; end = the result or error
// line, or the cut. a2ui_bytes = the A2UI messages received; body_bytes = the whole
// response body; final_bytes = the messages compacted into the surface's final state
// (a2ui.Final); received_per_final = a2ui_bytes / final_bytes. rows = the root's
// children that are Text components of the final state. model_sent_bytes = the text the
// fake model had sent when its call ended (what the server read, and what was in
// flight). cpu_ms = Δ(utime+stime) of the server over the turn (cpu_source: clock, its
// CPU-time clock, or ticks, /proc/<pid>/stat); peak_rss_bytes = the larger of VmHWM,
// reset before the turn, and VmRSS sampled every 20 ms. ended: result, error (status,
// limit and limit_value from the error line's details), cut, or failed (message).
type RowsTurn struct {
	Server             string   `json:"server"`
	PID                int      `json:"pid"`
	Ended              string   `json:"ended"`
	ErrorStatus        string   `json:"error_status,omitempty"`
	Limit              string   `json:"limit,omitempty"`
	LimitValue         any      `json:"limit_value,omitempty"`
	Message            string   `json:"message,omitempty"`
	ModelSentBytes     int64    `json:"model_sent_bytes"`
	A2UIMessages       int      `json:"a2ui_messages"`
	A2UIBytes          int64    `json:"a2ui_bytes"`
	BodyBytes          int64    `json:"body_bytes"`
	FinalBytes         int64    `json:"final_bytes"`
	ReceivedPerFinal   *float64 `json:"received_per_final"`
	Rows               int      `json:"rows"`
	FirstMessageMS     *float64 `json:"first_message_ms"`
	FirstRenderableMS  *float64 `json:"first_renderable_ms"`
	LastMessageMS      *float64 `json:"last_message_ms"`
	FirstRenderablePct *float64 `json:"first_renderable_pct"` // of last_message
	EndMS              float64  `json:"end_ms"`
	CPUMS              *float64 `json:"cpu_ms"`
	CPUSource          string   `json:"cpu_source,omitempty"`
	PeakRSSBytes       *int64   `json:"peak_rss_bytes"`
}

// goal returns the largest received_per_final of the current server's turns, and the
// baseline / current ratio of the A2UI bytes received at 2,000 rows, unpaced.
func (r *RowsReport) goal() (worst, at2000 *float64) {
	for _, lv := range r.Levels {
		if x := lv.Current.ReceivedPerFinal; x != nil && (worst == nil || *x > *worst) {
			worst = ptr(*x)
		}
		if lv.Rows == 2000 && lv.Pace == rowsUnpaced {
			at2000 = lv.ReceivedRatio
		}
	}
	return worst, at2000
}

// writeRows prints the rows phase.
func writeRows(p func(string, ...any), r *RowsReport) {
	ms := func(x *float64) string {
		if x == nil {
			return "n/a"
		}
		return fmt.Sprintf("%.0f", *x)
	}
	server := "a fresh server per turn"
	if !r.FreshServerPerTurn {
		server = "one server"
	}
	p("")
	p("ROWS (%s, A2UI %s, the basic catalog: one Column of N Text rows, written top-down in %d-token chunks, unpaced (every chunk at once) or paced at %.0f tokens/s; %s, after a warm-up turn of %d rows; each turn bounded by --timeout %.0f s)",
		r.Endpoint, r.Version, r.ChunkTokens, r.TokensPerS, server, r.WarmupRows, r.TimeoutS)
	if r.BaselineBin != "" {
		p("baseline: %s; current: the server under test", r.BaselineBin)
	}
	p("rows\tpace\tserver\tmodel wrote\tA2UI msgs\treceived\tbody\tfinal state\treceived/final\tfirst renderable\tlast message\tend (ms)\tCPU\tpeak RSS\trows shown\tended")
	row := func(lv *RowsLevel, t *RowsTurn) {
		first := "n/a"
		if t.FirstRenderableMS != nil && t.FirstRenderablePct != nil {
			first = fmt.Sprintf("%s ms (%.1f%%)", ms(t.FirstRenderableMS), *t.FirstRenderablePct)
		}
		p("%d\t%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%s\t%s\t%d\t%s", lv.Rows, lv.Pace, t.Server,
			fmtBytes(t.ModelSentBytes), t.A2UIMessages, fmtBytes(t.A2UIBytes), fmtBytes(t.BodyBytes), fmtBytes(t.FinalBytes),
			fmtRatio(t.ReceivedPerFinal), first, ms(t.LastMessageMS), t.EndMS, fmtMSp(t.CPUMS), fmtBytesp(t.PeakRSSBytes),
			t.Rows, rowsEnding(t))
	}
	for i := range r.Levels {
		lv := &r.Levels[i]
		if lv.Baseline != nil && lv.FirstServer == rowsBaseline {
			row(lv, lv.Baseline)
		}
		row(lv, &lv.Current)
		if lv.Baseline != nil && lv.FirstServer != rowsBaseline {
			row(lv, lv.Baseline)
		}
	}
	verdict := "FAIL"
	if r.Pass {
		verdict = "pass"
	}
	p("model wrote: what the fake model had sent when the turn ended (all of its script unless the turn stopped first); received: the A2UI messages; final state: them compacted (a2ui.Final)")
	p("target: %s (the current server's turns): %s", targetRows, verdict)
	if r.BaselineBin == "" {
		return
	}
	p("baseline / current (> : the baseline's turn was cut at the timeout, a lower bound)")
	p("rows\tpace\treceived\ttime to end\tCPU\tpeak RSS")
	for _, lv := range r.Levels {
		f := func(x *float64) string {
			if x == nil {
				return "n/a"
			}
			if lv.BaselineCut {
				return fmt.Sprintf("> %.2fx", *x)
			}
			return fmt.Sprintf("%.2fx", *x)
		}
		p("%d\t%s\t%s\t%s\t%s\t%s", lv.Rows, lv.Pace, f(lv.ReceivedRatio), f(lv.TimeRatio), f(lv.CPURatio), f(lv.PeakRSSRatio))
	}
}

// TransportsReport is the transports phase: the server under test ("after") and, with
// --transports-baseline-bin, a baseline binary ("before"), side by side; the same turns
// through every transport on both, in rounds, the first server alternating between
// rounds (first_per_round). Per transport: CPU per turn = Δ(utime+stime) of the server
// over its block / the block's turns, per round, and the median over the rounds;
// cpu_ratio = the median of the per-round ratios after / before, which the target
// applies to; cpu_ratio_of_medians = after's median / before's.
type TransportsReport struct {
	A2UIVersion string `json:"a2ui_version"`
	Components  int    `json:"components"`
	Chunks      int    `json:"chunks"` // of the fake model's A2UI script, all sent at once
	// BaselineBin is the before server's binary; empty: the phase ran one server.
	BaselineBin   string `json:"baseline_bin,omitempty"`
	TurnsPerRound int    `json:"turns_per_round"` // per transport and server
	Rounds        int    `json:"rounds"`
	WarmupTurns   int    `json:"warmup_turns"` // per transport and server
	// CPUSource is where the CPU figures come from: "clock", each server's CPU-time clock
	// (utime+stime in ns), or "ticks", /proc/<pid>/stat (in 10 ms ticks) where the clock
	// cannot be read.
	CPUSource     string             `json:"cpu_source"`
	Servers       []TransportsServer `json:"servers"`
	FirstPerRound []string           `json:"first_per_round"`
	Transports    []TransportsKind   `json:"transports"`
	TargetRatio   float64            `json:"target_ratio"` // at most, for each transport's cpu_ratio
	// AllWithin: every transport's cpu_ratio within the target; null without a baseline.
	// Reported, not a failure of the run.
	AllWithin *bool `json:"all_within"`
}

// TransportsServer is one server of the transports phase: its name (after, before), its
// binary and its pid.
type TransportsServer struct {
	Name string `json:"name"`
	Bin  string `json:"bin"`
	PID  int    `json:"pid"`
}

// TransportsKind is one transport of the transports phase on the servers. end = from
// just before the request (for /ws and yield: the prompt or init message) to the turn's
// end, median [min-max] over the turns. The before_* figures and the ratios are null
// without a baseline.
type TransportsKind struct {
	Transport                string     `json:"transport"`
	Request                  string     `json:"request"`
	TurnsPerServer           int        `json:"turns_per_server"` // over the rounds
	AfterCPUPerTurnMS        *float64   `json:"after_cpu_per_turn_ms"`
	BeforeCPUPerTurnMS       *float64   `json:"before_cpu_per_turn_ms"`
	AfterCPUPerTurnRoundsMS  []float64  `json:"after_cpu_per_turn_rounds_ms"`
	BeforeCPUPerTurnRoundsMS []float64  `json:"before_cpu_per_turn_rounds_ms"`
	AfterTicksRounds         []int      `json:"after_ticks_rounds"` // utime+stime ticks (10 ms) of /proc/<pid>/stat over each round's block
	BeforeTicksRounds        []int      `json:"before_ticks_rounds"`
	CPURatioRounds           []*float64 `json:"cpu_ratio_rounds"` // null for a round where before took no CPU
	CPURatio                 *float64   `json:"cpu_ratio"`
	CPURatioOfMedians        *float64   `json:"cpu_ratio_of_medians"`
	AddedCPUPerTurnMS        *float64   `json:"added_cpu_per_turn_ms"` // after median − before median
	AfterEndMS               a2uiStat   `json:"after_end_ms"`
	BeforeEndMS              *a2uiStat  `json:"before_end_ms"`
	Within                   *bool      `json:"within"` // cpu_ratio <= target_ratio
}

// goal returns the largest cpu_ratio over the transports (null when none has one).
func (r *TransportsReport) goal() (worst *float64) {
	for _, k := range r.Transports {
		if x := k.CPURatio; x != nil && (worst == nil || *x > *worst) {
			worst = ptr(*x)
		}
	}
	return worst
}

// writeTransports prints the transports phase.
func writeTransports(p func(string, ...any), tr *TransportsReport) {
	join := func(xs []float64, prec int) string {
		if len(xs) == 0 {
			return "n/a"
		}
		out := make([]string, len(xs))
		for i, x := range xs {
			out[i] = fmt.Sprintf("%.*f", prec, x)
		}
		return strings.Join(out, " / ")
	}
	ticks := func(xs []int) string {
		if len(xs) == 0 {
			return "n/a"
		}
		return strings.Trim(fmt.Sprint(xs), "[]")
	}
	p("")
	source := "read in ns from each server's CPU-time clock; ticks: /proc/<pid>/stat, 10 ms"
	if tr.CPUSource != "clock" {
		source = "from /proc/<pid>/stat, in 10 ms ticks"
	}
	servers := "the server under test alone (no --transports-baseline-bin)"
	if len(tr.Servers) > 1 {
		servers = "the server under test (after) vs a baseline binary (before), side by side"
	}
	p("TRANSPORTS (%s; %d round(s) of %d unpaced turns per transport and server after %d warm-up turns, first server per round: %s; CPU per turn = Δ(utime+stime) / turns, %s)",
		servers, tr.Rounds, tr.TurnsPerRound, tr.WarmupTurns, strings.Join(tr.FirstPerRound, ", "), source)
	for _, v := range tr.Servers {
		p("server %s: pid %d, %s", v.Name, v.PID, v.Bin)
	}
	p("A2UI turns: %s, %d components in %d chunks, sent at once", tr.A2UIVersion, tr.Components, tr.Chunks)
	for _, k := range tr.Transports {
		p("%s: %s", k.Transport, k.Request)
	}
	p("transport\tserver\tturns\tCPU/turn (median)\tCPU/turn per round\tticks per round\tend (ms, median [min-max])")
	for _, k := range tr.Transports {
		p("%s\tafter\t%d\t%s\t%s\t%s\t%s", k.Transport, k.TurnsPerServer, fmtMSp(k.AfterCPUPerTurnMS), join(k.AfterCPUPerTurnRoundsMS, 3),
			ticks(k.AfterTicksRounds), fmtStat(k.AfterEndMS, 3, ""))
		if k.BeforeEndMS != nil {
			p("%s\tbefore\t%d\t%s\t%s\t%s\t%s", k.Transport, k.TurnsPerServer, fmtMSp(k.BeforeCPUPerTurnMS), join(k.BeforeCPUPerTurnRoundsMS, 3),
				ticks(k.BeforeTicksRounds), fmtStat(*k.BeforeEndMS, 3, ""))
		}
	}
	if len(tr.Servers) < 2 {
		return
	}
	p("CPU per turn after / before (ratio: median of the per-round ratios; reported, not a failure)")
	p("transport\tratio\tper round\tratio of medians\tadded CPU/turn\ttarget")
	for _, k := range tr.Transports {
		ratio, target := "n/a", targetTransports
		if k.CPURatio != nil {
			ratio = fmt.Sprintf("%.3fx", *k.CPURatio)
		}
		if k.Within != nil {
			if *k.Within {
				target += ": within"
			} else {
				target += ": OUT"
			}
		}
		rounds := make([]string, len(k.CPURatioRounds))
		for i, x := range k.CPURatioRounds {
			rounds[i] = "n/a"
			if x != nil {
				rounds[i] = fmt.Sprintf("%.3f", *x)
			}
		}
		perRound := "n/a"
		if len(rounds) > 0 {
			perRound = strings.Join(rounds, " / ")
		}
		ofMedians := "n/a"
		if k.CPURatioOfMedians != nil {
			ofMedians = fmt.Sprintf("%.3fx", *k.CPURatioOfMedians)
		}
		p("%s\t%s\t%s\t%s\t%s\t%s", k.Transport, ratio, perRound, ofMedians, fmtMSp(k.AddedCPUPerTurnMS), target)
	}
	if tr.AllWithin != nil {
		verdict := "every transport within the target"
		if !*tr.AllWithin {
			verdict = "some transport(s) out of the target"
		}
		p("target: %s per transport: %s", targetTransports, verdict)
	}
}
