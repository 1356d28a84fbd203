// Command genui-bench measures a GenUI generation server the same way every time: the
// latency it adds to the model's own, its throughput, its memory per idle session, per
// catalog and per open stream, its CPU per turn and per catalog, the bytes it sends per
// turn and, on request, how incrementally an A2UI surface reaches the client, what client
// tools and conversations the server holds cost, what an A2UI turn through the A2A
// agent costs next to the same turn through /generateA2ui, what an idle WebSocket
// connection at GET /ws costs and a prompt over it next to the same turn over NDJSON,
// what checking every turn's UI against the UI policy costs the server's CPU, and what a
// long list streamed as A2UI costs: the bytes a client receives next to those of the
// surface's final state, time, CPU and memory, next to another server binary's; and the
// server's CPU per turn through each of its transports, next to another server binary's.
//
// It speaks only the public HTTP contract of genui_server (POST /startSession,
// POST /generateUi in NDJSON or Genkit SSE, POST /generateUi/cancel, GET /readyz,
// POST /generateA2ui in NDJSON for the a2ui and rows phases, client tools, conversationId and the
// conversations figures of /readyz for the conversations phase, and A2A v0.3 JSON-RPC
// message/stream at POST /a2a and MCP's tools/call of generate_ui at POST /mcp for the a2a
// phase, JSON-RPC 2.0 over a WebSocket at GET /ws
// (initialize, new_session, prompt and its session_update notifications) for the ws
// phase, and all of these with POST /ag-ui (AG-UI's RunAgentInput, answered as SSE) and
// the yield and resume protocol at GET /session/{id} (init, progress, done) for the
// transports phase), so it can measure any compatible implementation by URL.
//
// # Modes
//
// By default it builds ./cmd/genui-server (or runs --server-bin) as a child process
// pointed at a fake Gemini it serves itself (GEMINI_API_KEY=k,
// GOOGLE_GEMINI_BASE_URL=<fake>, --model googleai/gemini-2.5-flash, --log-level warn),
// and reads the child's /proc/<pid>/status (VmRSS, VmHWM) and /proc/<pid>/stat
// (utime+stime; the policy phase reads the same sum from the child's CPU-time clock) for
// memory and CPU. Each phase gets a fresh child, so memory figures do
// not depend on what ran before (--fresh=false keeps one child for the whole run). The
// floor phase measures no genui server: run alone, it builds and starts none. The redis,
// policy, rows and transports phases start servers of their own.
//
// With --url it drives a server that is already running. Start that server with
// GOOGLE_GEMINI_BASE_URL pointing at --fake-addr (e.g. --fake-addr 127.0.0.1:7070), and
// pass --pid for RSS and CPU figures; without --pid they are reported as unavailable
// (null in JSON, n/a in the table), never estimated. If the server does not call the
// fake, the report says so and the streams phases are skipped. The policy and transports
// phases compare servers they start themselves: with --url they are skipped, with a note.
//
//	go run ./cmd/genui-bench                                  # every default phase (< 3 min on 2 cores)
//	go run ./cmd/genui-bench --phases latency --turns 2000 --json -
//	go run ./cmd/genui-bench --phases a2ui                    # the A2UI phase alone (about a minute)
//	go run ./cmd/genui-bench --phases conversations           # client tools, held conversations (seconds)
//	go run ./cmd/genui-bench --phases a2a                     # A2A next to /generateA2ui (under a minute)
//	go run ./cmd/genui-bench --phases a2a --a2a-tokens-per-s 0 --a2a-turns 200   # the same, unpaced (seconds)
//	go run ./cmd/genui-bench --phases ws                      # GET /ws: idle connections, prompts next to NDJSON (under a minute)
//	go run ./cmd/genui-bench --phases ws --ws-profile /tmp/ws # the same, keeping the server's heap profiles
//	go run ./cmd/genui-bench --phases redis                   # 2 replicas: one Redis vs a cluster, acknowledgements, limits (about a minute)
//	go run ./cmd/genui-bench --phases floor                   # open streams on net/http alone, no genui server (under a minute)
//	go run ./cmd/genui-bench --phases policy                  # the UI policy on vs off, two servers side by side (about a minute)
//	go run ./cmd/genui-bench --phases policy --policy-rounds 5 --policy-turns 100    # the same, coarser (seconds)
//	go run ./cmd/genui-bench --phases rows --timeout 150s     # a Column of 100 to 20,000 Text rows (about 3 minutes)
//	go run ./cmd/genui-bench --phases rows --rows 100,500     # the same, small lists (seconds)
//	go run ./cmd/genui-bench --phases rows --timeout 150s --rows-baseline-bin /tmp/genui-before   # side by side with an earlier build
//	go run ./cmd/genui-bench --phases transports --transports-baseline-bin /tmp/genui-before      # CPU per turn per transport, after vs before (under a minute)
//	go run ./cmd/genui-bench --phases transports --transports-rounds 20 --transports-turns 200 --transports-baseline-bin /tmp/genui-before   # the same, finer (about 4 minutes on 2 cores)
//	go run ./cmd/genui-bench --fake-addr 127.0.0.1:7070 --url http://127.0.0.1:3400 --pid 1234
//	go run ./cmd/genui-bench --markdown docs/benchmarks.md    # the default phases, the figures of the docs written from the run
//	make bench-server
//
// # The model script
//
// Every model call is answered with one short text (split into --text-chunks events)
// then one addOrUpdateSurface function call holding a small valid surface of the basic
// sample catalog (a Column with a Text and an ElevatedButton). --model-latency delays
// the first event, --pacing each following one. The fake serves pre-encoded events whose
// bytes are captured at start-up from internal/fakegemini (the faithful Gemini fake of the
// tests), so the wire format is the same, but it does not record requests and spends
// almost no CPU, leaving the machine to the server under test.
//
// A request holding genui-bench-tool (which only the conversations phase sends) and no
// function response is answered instead with the client tool script: the text "Let me
// look up where you are." then one function call getLocation with the arguments {}. Once
// the request holds a function response (the continuation carrying the tool's result),
// the usual text and surface answer it.
//
// A user message holding genui-bench-a2ui-v0.9 (or -v0.8), which only the a2ui phase
// sends, is answered instead with a scripted A2UI surface of that version
// (scripts/a2ui-v0.9.txt, scripts/a2ui-v0.8.txt): a line of prose, then an ```a2ui block
// with createSurface (v0.9) or beginRendering (v0.8), a data model update and one
// component update of 29 components of the default catalog (the v0.9 basic catalog, the
// v0.8 standard catalog), written top-down, one per line: a weekly report dashboard with
// a header (Icon, Text), a Card of three label/value Rows, a Divider, a Card with a mail
// Icon, two TextFields and a CheckBox bound to the data model, and two Buttons with Text
// labels. The text is streamed as a model does, in chunks of --a2ui-chunk-tokens tokens
// (default 16; tokens are estimated as bytes/4, so 64 bytes) cut without regard to lines
// or JSON, each sent when the model would have produced it at --a2ui-tokens-per-s
// (default 150) after --a2ui-model-latency (default 0), timed from the request's arrival
// so that timer slack does not add up: about 4.6 s for v0.9 (694 tokens, 44 chunks) and
// 5.6 s for v0.8 (841 tokens, 53 chunks). The fake records when each chunk went out.
//
// A request holding genui-bench-a2a, which only the a2a phase sends, is answered with the
// same v0.9 script in the same chunks, paced the same way at --a2a-tokens-per-s (default
// 2000, so that the phase takes less than a minute: about 0.35 s a turn) after
// --a2ui-model-latency; with --a2a-tokens-per-s 0 (unpaced) every chunk goes out at once,
// as soon as the request arrives, so that the server's own time and CPU are not drowned
// by the model's.
//
// A request holding genui-bench-policy, which only the policy and transports phases
// send, is answered with the same v0.9 script in the same chunks, always unpaced,
// whatever --a2a-tokens-per-s says.
//
// A request holding genui-bench-rows-N-unpaced: or genui-bench-rows-N-paced:, which only
// the rows phase sends (N one of --rows, or 10 for its warm-up turns), is answered with
// a list of N rows as a model writes it: the line "Here is the list you asked for, N rows
// long.", then an ```a2ui block: createSurface of surface "rows" with the basic catalog,
// then updateComponents whose components are written top-down, one per line: a Column
// "root" whose children list all N ids (row-1 … row-N), then the N rows, each
// {"id":"row-i","component":"Text","text":"Row i of the list"}. The script is 7.4 KiB at
// 100 rows, 37 KiB at 500, 151 KiB at 2,000 and 1.5 MiB at 20,000 (its root line alone
// 224 KiB). It is streamed in chunks of --a2ui-chunk-tokens tokens (bytes/4), unpaced
// (every chunk at once, as soon as the request arrives) or paced at --rows-tokens-per-s
// (default 2000) from the request's arrival, without a first-token delay: 0.9 s for 100
// rows, 19 s for 2,000, 3.3 minutes for 20,000. The scripts are built at start-up only when
// the phase runs; their events are fakegemini's for two probe texts, each chunk's text and
// the running token counts put in place (fakegemini itself takes the square of the
// chunks to encode them: half a minute for the 30,000 chunks of 20,000 rows).
//
// # Phases and figures
//
// Percentiles are nearest-rank over all turns of a level. Times are from just before the
// request is sent to the moment the line is read: ttfc = the first toolRequest event,
// end = the result event.
//
//   - latency: --turns turns one after another (concurrency 1), then --turns turns over
//     --latency-concurrency closed-loop clients, through the server; then the same numbers
//     of model calls made directly to the fake with the google.golang.org/genai client
//     (GenerateContentStream; ttfc = the first response holding a function call, end =
//     the iterator's end). added = server percentile minus direct percentile, per
//     percentile (p50, p90, p99). Also the server's CPU per turn at concurrency 1.
//   - throughput: for each --concurrency level, closed-loop clients start turns for
//     --duration; turns/s = completed turns / time until the last one ended. Errors are
//     non-200 answers, transport errors, error events, streams without a tool request or
//     without a result. CPU per turn = Δ(utime+stime) of the server / completed turns.
//     Peak RSS per level = the larger of VmHWM (reset through /proc/<pid>/clear_refs at
//     the level's start when permitted) and VmRSS sampled every 20 ms.
//   - sessions: after one warm-up session (which compiles the shared catalog), RSS (median
//     of 5 samples) before and after creating --sessions sessions with the basic catalog
//     over --session-concurrency clients; bytes per session = Δ / sessions created. RSS
//     is coarse: it includes the garbage collector's headroom.
//   - catalogs: after one warm-up session with a generated catalog (which pays the first
//     compilation's one-time costs), RSS (median of 5 samples) before and after creating
//     --catalogs sessions (default 300) over --catalog-concurrency clients, each with its
//     own catalog of --catalog-bytes bytes of compact JSON (default 16 KiB), so that the
//     server compiles and keeps every one. bytes per catalog = Δ / sessions created (the
//     session's own bytes included); ratio = bytes per catalog / the catalog's JSON size;
//     CPU per catalog = Δ(utime+stime) / sessions created. The catalogs are made by the
//     bench, the same for the same index: valid GenUI catalogs (a JSON Schema whose
//     properties.widgets.items.properties.widget has one anyOf alternative per widget) of
//     layouts with child and children references, text, media, inputs and data widgets
//     with string, number, integer, boolean, enum and array properties, descriptions and
//     required lists, a mix drawn from a generator seeded with the index, the index named
//     in the descriptions, and descriptions lengthened to the exact size. Creation stops at
//     --phase-limit (requests already sent finish, within --timeout).
//   - streams: after one warm-up turn, --streams turns are opened at once with a model
//     that holds its answer for --stream-model-latency; once every response's headers
//     have arrived and the fake holds every model call, bytes per stream = ΔRSS / streams.
//     The streams are then cancelled (POST /generateUi/cancel with X-Genkit-Stream-Id,
//     and the connections closed). --streams-10k adds the same with 10,000 streams (the
//     file descriptor limit is raised when possible; both processes need about two per
//     stream) and reports its errors.
//   - bytes: response body bytes of one simple turn in NDJSON and in SSE (median of 10),
//     and the same on the wire (status line, headers and chunked framing included).
//   - a2ui (opt-in: it runs only when --phases names it, and takes about a minute with
//     the defaults): for each of --a2ui-versions (default v0.9,v0.8), --a2ui-turns turns
//     (default 5) one after another: POST /generateA2ui (NDJSON, default catalog of the
//     version) whose model writes the A2UI script above. The client reads the lines as they
//     arrive and applies each A2UI message to a surface model (components upserted by id).
//     first message = the first A2UI message; first renderable = the first moment the
//     client holds the surface (createSurface, or beginRendering in v0.8), its root and,
//     reachable from the root through components it holds, a component of a visible leaf
//     type (Text, Image, Icon, Video, AudioPlayer, TextField, CheckBox, ChoicePicker or
//     MultipleChoice, Slider, DateTimeInput; a Button through its label); complete = the
//     last A2UI message; result = the result line. A turn fails if it has an error line,
//     no result, takes more than one model call (a repair), reports modelCalls other than
//     1, or ends without the client rendering every scripted component with its type.
//     Reported per version, as median [min-max] over the successful turns: those times,
//     first renderable / complete in % (per turn) against the 25% target, and what the
//     fake model's record bounds: when it had sent the chunk completing the first
//     renderable part and the one completing the surface (model-bound ratio: what any
//     server could do at best; the script has its first renderable part written at 21.5%
//     of its text in v0.9, 19.9% in v0.8), and the server lag: per turn, the largest delay
//     between the moment the model had written what a component needs to be shown (it,
//     its single children such as a Card's or a Button's, its parent) and its arrival. A
//     version passes with no failed turn, 20 or more components and a median ratio of at
//     most 25%.
//   - conversations (opt-in: it runs only when --phases names it; a few seconds with the
//     defaults): every request is POST /generateUi in NDJSON with the basic sample catalog
//     inline. First --conv-turns client tool round trips (default 20), one after another,
//     stateless, declaring "clientTools":[{"name":"getLocation","description":"The user's
//     city","inputSchema":{"type":"object","properties":{}}}]: the call turn (a user text
//     holding genui-bench-tool) must stream a toolCall line for getLocation and end with
//     finishReason "interrupted"; the continuation resends the conversation (the user text,
//     the model message with the turn's text and the toolCall part, a user message with a
//     toolResult of {"city":"Berlin"} for its callId) and must end with finishReason
//     "stop". A round trip fails on an error line or anything missing. Reported: call
//     turn, continuation (each from just before the request to the result line) and whole
//     round trip, median [min-max] over the successful round trips, and the errors. Then,
//     after one warm-up conversation per mode, --conv-rounds rounds (default 5), each
//     running --conv-conversations conversations (default 20) of --conv-length turns
//     (default 10) stateless, then as many held, one turn at a time. Stateless, the client
//     keeps the history as the web playground does (after each turn a model message with
//     the turn's text and one ui part per surface shown, in its latest version) and resends
//     it whole with the next user message; held, each request carries only the new user
//     message and a conversationId unique to the conversation. No user text holds a marker,
//     so every turn is the usual text and surface, and must end with "stop". Per mode: CPU
//     per turn = Δ(utime+stime) of the server / turns, per round, and its median over the
//     rounds (n/a without a pid; utime and stime count 10 ms ticks, 0.05 ms per turn over
//     the 200 turns of a round with the defaults); the bytes the client received (the NDJSON response bodies
//     of its turns) and sent per conversation, median over the conversations; turn times.
//     After the held runs GET /readyz gives the conversations held in memory and their
//     bytes: held bytes per conversation = the growth of conversations.bytes over the held
//     runs / the growth of conversations.held, and its ratio to the bytes the client
//     received per held conversation. A server that reports no conversations object (one
//     holding them in Redis, another implementation) has its held bytes reported as
//     unavailable (null, n/a), never estimated. The CPU ratio is held / stateless CPU per
//     turn.
//   - open: levels of --open-streams turns held at once (default 1,000, 2,000, 6,000 and
//     10,000, ascending), each a stateless POST /generateA2ui whose model answer is the
//     v0.9 A2UI script after --open-model-latency (2 s) at --open-tokens-per-s (150), on
//     one fresh server started with --model-h2c unless --open-h2c=false (the model then
//     one HTTP/2 connection, as over TLS). Requests go out 256 at a time; every turn must
//     end with its whole surface. Per level: the most turns open at once; the server's
//     peak RSS (VmHWM, reset through /proc/<pid>/clear_refs before the level), and the
//     largest goroutines, live heap (go_memstats_heap_inuse_bytes, from /metrics) and
//     open descriptors (/proc/<pid>/fd) sampled every 250 ms; the times of the first A2UI
//     message and of the end, and the first message's lag behind the model's writing it;
//     what is left 10 s after (goroutines, descriptors). Per stream = the growth from
//     the level before (the baseline after a warm-up turn for the first) / the growth in
//     streams at once. A level needing more descriptors than the bench may open is
//     skipped with a note (a descriptor per stream, two without h2c).
//   - floor (opt-in: it runs only when --phases names it; under a minute with the
//     defaults): the open phase's measure on the smallest Go server doing the same
//     plumbing, so that genui's figure has a floor: what net/http itself costs per
//     open stream. No genui server: the bench re-executes itself as a proxy (its child,
//     selected by GENUI_BENCH_FLOOR=proxy, listens on loopback, prints its address and
//     dies with the bench). The proxy, a net/http server with its default settings
//     (HTTP/1.1), reads each request's body, posts it to the bench's fake model with an
//     http.Client whose transport speaks only HTTP/2 without TLS (one shared
//     connection, as genui's --model-h2c; a new one past the fake's 250 concurrent
//     streams, net/http's default), and the fake answers, as in the open phase, with
//     the same SSE events (the Gemini events of the v0.9 A2UI script in chunks of
//     --a2ui-chunk-tokens, with the defaults 44 of about 310 bytes, 13.4 KiB in all)
//     at the same times (after --open-model-latency, paced at --open-tokens-per-s:
//     with the defaults the first at 2.1 s, the last at 6.6 s). The proxy writes each non-empty line of the answer (read with a
//     bufio.Scanner) to its client followed by a blank line, flushed; a client gone
//     cancels the model call. Only the proxy is measured. After a warm-up stream,
//     the baseline (RSS, goroutines, open descriptors); then for each level of
//     --open-streams, N HTTP/1.1 POSTs of 3 KiB at once (dialled 256 at a time), each
//     read to its end, which must hold every event. Per level: the most streams open
//     at once (from response headers to end), the proxy's peak RSS (VmHWM, reset
//     through /proc/<pid>/clear_refs before the level), its largest goroutines and
//     descriptors sampled every 250 ms, the time to each stream's end. Per extra
//     stream = the growth from the level before (the baseline for the first) / the
//     growth in streams (N, noted when fewer were open at once: on a small machine the
//     last ones may start after the first ones end).
//   - a2a (opt-in: it runs only when --phases names it; under a minute with the defaults,
//     seconds unpaced): the same A2UI v0.9 turn, the script above, through three paths, one
//     turn at a time: POST /generateA2ui (NDJSON, the default catalog); the MCP tool:
//     POST /mcp, a stateless Streamable HTTP tools/call of generate_ui at protocol
//     2025-11-25 with the user message as its prompt, which opens a conversation the server
//     holds, its result (on an SSE stream or as JSON) carrying every A2UI message of the
//     turn in structuredContent (MCP has no partial results: first message, last message
//     and end are the result's arrival); and the A2A agent:
//     POST /a2a, A2A v0.3 JSON-RPC message/stream (Accept: text/event-stream) with the
//     header X-A2A-Extensions: https://a2ui.org/a2a-extension/a2ui/v0.9 and a user message
//     without contextId, which starts a task in a new context whose conversation the
//     server holds. So that both paths run the same turn of the core, each /generateA2ui
//     request carries a new conversationId (--a2a-baseline held, the default; stateless
//     drops it, as in the a2ui phase). After a warm-up turn of each path, --a2a-rounds
//     rounds (default 3), each a block of --a2a-turns turns (default 20) of each path, the
//     path going first in turn. The client reads each stream as it
//     arrives (the A2A one event by event: the task, working status updates each carrying
//     one A2UI message in a DataPart of MIME type application/json+a2ui or a text part,
//     then the final status) and applies each A2UI message to a surface model as in the
//     a2ui phase. first message = the first A2UI message; last message = the last one; end
//     = the result line (/generateA2ui) or the final status (A2A). A turn fails on an
//     error line, a JSON-RPC error, an HTTP error, a response that does not activate the
//     extension, an event other than the task first then status updates, anything after
//     the final status, a final status other than input-required (the surface waits for
//     the user), a surface the client does not render whole, more than one model call, or
//     A2UI messages other than those of the warm-up /generateA2ui turn (compared one by one
//     as JSON values, so key order and spacing do not matter). Reported per path, as
//     median [min-max] over the successful turns: those times, the A2UI messages per turn,
//     the response body bytes (median) and the server's CPU per turn = Δ(utime+stime) over
//     the round's block / its turns, per round, and its median over the rounds (n/a
//     without a pid; utime and stime count 10 ms ticks, so a round whose CPU rests on fewer
//     than 20 ticks is noted: unpaced, raise --a2a-turns). Then, A2A against
//     /generateA2ui: the added time (A2A median − /generateA2ui median) to the first
//     message, the last message and the end, and the added CPU per turn; and the ratios
//     A2A / /generateA2ui of the medians for the last message, the end and the CPU per
//     turn, each against the target of 1.2; the same for MCP. The phase passes with no
//     failed turn and every ratio measured within the target.
//   - ws (opt-in: it runs only when --phases names it; under a minute with the defaults):
//     GET /ws, JSON-RPC 2.0 over WebSocket (genui/wsapi), with github.com/coder/websocket
//     as the client. new_session carries the sessionId of a /startSession session with
//     the basic catalog (--ws-session startSession, the default) or the basic catalog
//     inline (--ws-session catalog). Idle connections: --ws-idle-rounds rounds (default
//     3), each on a fresh server in child mode. After one connection with a session opened
//     and closed (the first one's one-time costs), RSS (median of 5 samples) before and 1 s
//     after opening --ws-conns connections (default 2,000; 64 being opened at once), each
//     sending initialize then new_session and then idle; bytes per connection = ΔRSS /
//     connections open, and its median over the rounds against the target. The
//     connections then close with a close handshake, and the round reports how many of
//     their sessions the server still holds 10 s later (GET /readyz conversations.held;
//     n/a when it does not report them). The descriptor limit is raised to --ws-conns +
//     1024 when possible (the child inherits it). In child mode one more round runs on a
//     server started with --pprof-addr: the growth of its goroutines, of runtime.MemStats
//     after a forced GC (HeapAlloc: live heap, HeapInuse, StackInuse: goroutine stacks)
//     and of the conversation store's bytes (/readyz), each per connection;
//     --ws-profile DIR keeps its heap profiles before and with the connections
//     (heap-before.pb.gz, heap-idle.pb.gz: go tool pprof -diff_base) and its goroutines
//     with them (goroutines-idle.txt). Turns, on another fresh server: the turn of the
//     latency phase (the user text "Show me a form", the basic catalog, the fake model's
//     text and surface at --model-latency and --pacing) as a /ws prompt and as POST
//     /generateUi in NDJSON, one turn at a time. So that both run the same turn of the
//     core, each /ws prompt runs on a new session (a conversation the server holds, its
//     first turn) and each /generateUi request carries a new conversationId
//     (--ws-baseline held, the default; stateless drops it) and what new_session
//     carries (the sessionId, or the catalog). The /ws connections and sessions of a
//     block are made before its turns are timed (new_session, up to 50 sessions per
//     connection, under the server's default --ws-sessions of 64), and closed after
//     them, the bench waiting for the server to delete their sessions. After a warm-up
//     block of 20 turns of each path, --ws-rounds rounds (default 5), each a block of
//     --ws-turns turns (default 1,000) of each path, the path going first alternating
//     between rounds. first UI update = the first ui_update notification of the session
//     (/ws) or the first toolRequest line (NDJSON), the same event; end = the prompt's
//     response (/ws), which must have stop_reason "end_turn", or the result line (NDJSON).
//     A turn fails on an error, a JSON-RPC error, no UI update, an unexpected message or
//     more than one model call. Per path, each round's median, and reported: the median of
//     the round medians [min-max of the round medians]; the bytes the client received per
//     turn (median); the server's CPU per turn = Δ(utime+stime) over the round's turns /
//     its turns, per round, and its median over the rounds (a round whose CPU rests on
//     fewer than 20 ticks is noted); the CPU per new_session over the blocks' set-up. Then
//     /ws against NDJSON: the ratios /ws / NDJSON of the medians for the first UI update,
//     the end (each against the target of 1.1) and the CPU per turn, each round's time
//     ratios, and the added times and CPU.
//   - redis (opt-in: it runs only when --phases names it, in child mode only, and needs
//     redis-server and redis-cli on PATH; about a minute with the defaults): two replicas of
//     the server sharing Redis, in four setups: one Redis node (single); a Redis Cluster of
//     3 masters with a replica each (cluster); the cluster with --redis-wait-replicas 1
//     (cluster+acks: every write a client is told of waits until a replica has it); and the
//     cluster with the shared limits counting every turn (cluster+limits: --rate-limit and
//     --caller-streams too high to refuse one). The phase starts the Redis servers itself
//     (child processes on loopback, without persistence) and two fresh children per setup,
//     all running for the whole phase. Every turn is POST /generateUi in NDJSON carrying
//     a sessionId (one /startSession per client, on the first replica) and a conversationId
//     the server holds (a new one every 4 turns), each turn of a client going to the other
//     replica than its last: each turn reads the session, holds and commits the
//     conversation and logs its stream in Redis. After two warm-up turns per client,
//     --redis-rounds rounds (default 3), the setups taking turns within a round (the first
//     setup rotating); per setup and round, --redis-concurrency closed-loop clients
//     (default 16) for --redis-duration (default 3 s), then --redis-latency-turns turns one
//     at a time (default 100). Per setup, median [min-max] over the rounds: turns/s of the
//     block; CPU per turn of the block, the replicas' (Δ(utime+stime) of both children /
//     turns) and Redis's (of every redis-server of the setup's topology); the p50 end
//     (request to result line) of the turns one at a time. Then, as ratios of the medians:
//     cluster / single for turns/s and the replicas' CPU per turn; cluster+acks / cluster
//     for the p50 end (and the added ms) and turns/s; cluster+limits / cluster for the
//     replicas' CPU per turn (and the added ms) and the added p50 end.
//   - policy (opt-in: it runs only when --phases names it, in child mode only; under a
//     minute with the defaults): two servers started side by side with the same flags
//     (the base flags and --server-args), "on" with the default UI policy and "off" with
//     --policy-off all (every rule off: the server runs no policy code), both up for the
//     whole phase. Two kinds of turn, one turn at a time: A2UI, POST /generateA2ui (NDJSON,
//     v0.9, the default catalog, stateless) whose model writes the v0.9 script above,
//     unpaced; and genui, the latency phase's turn (POST /generateUi in NDJSON, a
//     /startSession session with the basic catalog, the fake model's text and surface at
//     --model-latency and --pacing). After 20 warm-up turns of each kind on each server,
//     --policy-rounds rounds (default 20); in each, on each server (on first in the first
//     round, the first server alternating between rounds), a block of --policy-turns A2UI
//     turns (default 200), then a block of as many genui turns. A turn fails on an error
//     line, no tool request (genui), no result, a surface the client does not render
//     whole (A2UI) or more than one model call; an A2UI turn also fails when its A2UI
//     messages (compared one by one as JSON values) are not those of the off server's
//     first turn, and one more genui warm-up turn on each server must give the same
//     surfaces (its tool requests) on both (the benign scripts pass the policy
//     unchanged). A failed turn ends the phase with an error: a CPU figure over failed
//     turns would compare different work. CPU per turn of a block = Δ(utime+stime)
//     of its server / its turns, read in nanoseconds from the server's CPU-time clock
//     (clock_gettime on the clock of its pid, the sum /proc/<pid>/stat splits into utime
//     and stime; the /proc ticks of each block are reported next to it; where the clock
//     cannot be read, the figures come from the ticks, and a round resting on fewer than
//     20 ticks is noted). Reported per kind and server: CPU per turn, each round's and
//     the median over the rounds, and the time to the result line, median [min-max] over
//     the turns; then per kind the ratio on / off = the median of the per-round ratios
//     (each round's on block against its off block, run next to each other, so that the
//     machine's load drifting between rounds cancels out), against the target of 1.05,
//     with each round's ratio, the ratio of the medians and the added CPU per turn (on
//     median − off median) for comparison. The phase passes with both ratios within the
//     target. On a busy machine a round's ratio can stray by 20% or more, which is why the
//     defaults run 20 rounds of 200 turns: five rounds of 100 cannot settle 5%.
//   - rows (opt-in: it runs only when --phases names it; seconds for 100 and 500 rows,
//     about 2 minutes for 20,000 rows paced at the default rate, which then needs
//     --timeout 150s): for each level of --rows (default 100,500,2000,20000) and each
//     pace (unpaced, then paced), one stateless POST /generateA2ui turn (NDJSON, v0.9,
//     the default catalog, the basic one) whose model writes the rows script above. In
//     child mode each turn runs on a fresh child server, started for it and killed after
//     it, which first runs a warm-up turn of 10 rows (it must end with its result and every
//     row); so peak RSS and CPU are the turn's alone. With --url every turn runs on that
//     server, after one warm-up turn. --rows-baseline-bin BIN (child mode only) runs the
//     same turns on a child of BIN (e.g. built from an earlier commit: git worktree add
//     /tmp/before <commit>, then go build -o /tmp/genui-before ./cmd/genui-server in it)
//     with the same flags: for each level and pace, the baseline's turn and the current
//     server's, the baseline first on the first level, the first server alternating
//     between levels. Each turn is bounded by --timeout (not added to the model's time
//     here): a turn still running then is cut, and its figures are those so far. The
//     client reads the lines as they arrive and keeps the A2UI messages whole, decoding
//     them only until the surface shows a row. Per turn: model wrote = the text the fake
//     model had sent when its call ended (all of the script, unless the turn stopped
//     first: then what the server read and what was in flight); the A2UI messages and
//     their bytes (each line without its newline); the whole response body's bytes; the
//     bytes of the surface's final state = the messages compacted with
//     a2ui.Final(a2ui.V09, msgs) (createSurface and one update holding each component's
//     last version); received / final = the A2UI bytes / the final state's; first
//     message = the first A2UI message, first renderable = the first one after which the
//     client holds the surface and a root with a non-empty children list, last message =
//     the last A2UI message (first renderable also in % of last message), end = the
//     result or error line, or the cut, each from just before the request; the server's CPU over the turn
//     = Δ(utime+stime) from its CPU-time clock as in the policy phase (from the /proc
//     ticks where the clock cannot be read); its peak RSS = the larger of VmHWM (reset
//     through /proc/<pid>/clear_refs after the warm-up turn) and VmRSS sampled every
//     20 ms; rows = the root's children that are Text components of the final state; how
//     the turn ended: result, error (the error line's status, and details.limit and
//     details.value: a turn limit ends as RESOURCE_EXHAUSTED, e.g. components=10000 at
//     20,000 rows with the server's default --max-components), cut at --timeout, or
//     failed (an HTTP or transport error, a stream without an end). A turn that ends at a
//     limit or is cut is reported, not a failure of the phase. With a baseline, per level
//     and pace: baseline / current for the A2UI bytes received, the time to the end, the
//     CPU and the peak RSS (lower bounds, marked >, when the baseline's turn was cut).
//     The phase passes when every turn of the current server received at most 3x the
//     bytes of its final state.
//   - transports (opt-in: it runs only when --phases names it, in child mode only; under a
//     minute with the defaults and a baseline on 2 cores): the server's CPU per turn
//     through each of its transports, of two servers started side by side with the same
//     flags (the base flags and --server-args) and both up for the whole phase: "after",
//     the server under test (./cmd/genui-server built from the tree, or --server-bin), and
//     "before", --transports-baseline-bin BIN (e.g. built from an earlier commit: git
//     worktree add /tmp/base <commit>, then go build -o /tmp/genui-before
//     ./cmd/genui-server in it); without it the phase runs the one server and reports its
//     figures alone. Eight transports, one turn at a time, the fake model unpaced (every
//     chunk at once) so that the server's own cost shows: genui NDJSON (the policy phase's
//     genui turn: POST /generateUi, a /startSession session with the basic catalog, "Show
//     me a form"); genui SSE (the same turn, POST /generateUi?stream=true, Accept:
//     text/event-stream); A2UI NDJSON (the policy phase's A2UI turn: POST /generateA2ui,
//     v0.9, the default catalog, stateless, the v0.9 script above); A2A (message/stream at
//     POST /a2a with the A2UI v0.9 extension, a new context per turn, the same script,
//     read as the a2a phase reads it); AG-UI (POST /ag-ui, a RunAgentInput of one user
//     message and no tools, no context: the basic catalog; the SSE stream read to
//     RUN_FINISHED, each a2ui-surface activity's operations kept as @ag-ui/client keeps
//     them, a snapshot replacing them and a delta appending its message; the same script);
//     MCP (tools/call generate_ui at POST /mcp, as the a2a phase's MCP path; the same
//     script); /ws (a prompt over GET /ws, as the ws phase's: a new session per turn on
//     the genui session, the connections, with initialize, and the sessions made before
//     the block, 50 sessions per connection, and closed after it; "Show me a form"); and
//     yield (the yield and resume protocol at GET /session/{id}: per turn a new connection
//     to a new id, opened before the block, then init of graph generateUi with the genui
//     session's sessionId and "Show me a form", read to done; the connections closed after
//     the block). After 20 warm-up turns of each transport on each server,
//     --transports-rounds rounds (default 5); in each, for each transport in the order
//     above, a block of --transports-turns turns (default 100) on each server, the two
//     blocks one right after the other (after first in the first round, the first server
//     alternating between rounds), so that the machine's load drifting between blocks
//     weighs little on their ratio. A turn fails on an error (an error line or event,
//     RUN_ERROR, a JSON-RPC error, an error message), a stream without its end (the result
//     line, the final status of state input-required, RUN_FINISHED, the response, done
//     with a result), no UI (no tool request or UI update for the genui turns, /ws and
//     yield; a surface the client does not render whole for the A2UI ones), or more than
//     one model call; a failed turn ends the phase with an error. CPU per turn of a block
//     = Δ(utime+stime) of its server / its turns, from its CPU-time clock as in the policy
//     phase (the /proc ticks of each block reported next to it; the figures come from the
//     ticks where the clock cannot be read). Reported per transport and server: CPU per
//     turn, each round's and the median over the rounds, and the time to the turn's end
//     (from just before the request, or the prompt or init message), median [min-max] over
//     the turns; then per transport the ratio after / before = the median of the per-round
//     ratios, with each round's ratio, the ratio of the medians and the added CPU per
//     turn, and whether the ratio is within the target of 1.05. A ratio out of the target
//     is reported, not a failure of the run. As in the policy phase, a round's ratio can
//     stray by 10 to 20% on a busy machine: more rounds settle the median.
//
// # Targets
//
// The table shows the service's targets next to the figures they apply to: added latency to
// the first tool chunk p50 <= 0.5 ms at c=1 and p99 <= 10 ms at c=64 (latency phase);
// >= 1,500 turns/s and CPU per turn <= 1.0 ms at c=64, peak RSS <= 100 MiB at c=256
// (throughput); idle session <= 512 B; compiled catalog <= 10x its JSON size; open stream on
// a slow model <= 32 KiB, and 10,000 open streams without errors; simple turn body <= 2048 B;
// with a model streaming at 150 tokens/s and a surface of 20 or more components, the first
// renderable part at <= 25% of the time the complete surface takes (a2ui); a held
// conversation of 10 turns holds less than twice the bytes its client received, and a held
// turn costs the server no more CPU than a stateless one (conversations); an A2UI turn through
// the A2A agent takes no more than 1.2x the time to its last A2UI message, to its end and
// the server CPU of the same turn through /generateA2ui, and so does a call of the MCP tool
// generate_ui (a2a); an idle /ws connection with
// one session costs the server <= 14 KiB of RSS, and a prompt over /ws takes no more than
// 1.1x the time to its first UI update and to its end of the same turn over NDJSON (ws);
// the server with the default UI policy spends no more than 1.05x the CPU per turn of the
// same server with --policy-off all, for unpaced A2UI turns and for genui turns (policy);
// a client receives no more than 3x the bytes of an A2UI surface's final state while a
// list of 100 to 20,000 rows streams in (rows); the server under test spends no more
// than 1.05x the CPU per turn of a baseline binary through each transport
// (transports, reported, not a failure).
// The JSON summary holds these figures (cpu_per_turn_c64_ms for the CPU target;
// cpu_per_turn_ms is over all throughput levels; a2ui_first_renderable_pct and
// a2ui_v08_first_renderable_pct the median ratios; conv_held_bytes_ratio, conv_cpu_ratio
// and client_tool_round_trip_ms, the median round trip, for the conversations phase;
// a2a_last_message_ratio, a2a_end_ratio, a2a_cpu_ratio, a2a_added_end_ms,
// mcp_last_message_ratio and mcp_cpu_ratio for the a2a phase; ws_idle_connection_bytes, ws_first_ui_ratio, ws_end_ratio and ws_cpu_ratio for the
// ws phase; open_rss_per_stream_bytes, open_goroutines_per_stream and
// open_fds_per_stream for the open phase (between its levels of 2,000 and 6,000 streams,
// or its last two); floor_rss_per_stream_bytes for the floor phase (between the same
// levels), which has no target; redis_cluster_turns_ratio, redis_cluster_cpu_ratio, redis_acks_added_end_ms
// and redis_limits_added_cpu_ms for the redis phase, which has no target;
// policy_a2ui_cpu_ratio and policy_genui_cpu_ratio for the policy phase;
// rows_received_per_final_max, the largest received / final of the current server's
// turns, and rows_baseline_received_ratio_2000, baseline / current for the A2UI bytes
// received at 2,000 rows unpaced, for the rows phase; transports_cpu_ratio_max, the
// largest after / before ratio over the transports, for the transports phase).
//
// The report is a table on stdout and, with --json FILE (or --json - for stdout), the
// same figures as JSON with stable field names carrying their units. Progress goes to
// stderr. Run with --help for every flag.
//
// # The Markdown report
//
// --markdown FILE also writes the report as a Markdown page, docs/benchmarks.md being the
// one place the project keeps its figures: other pages link to it and copy none. It is
// written once the phases have run, and only if they all did: a title; a paragraph
// saying that the file is generated by genui-bench and not to be edited by hand; the day
// the run started (YYYY-MM-DD, UTC); the machine (the CPU model from /proc/cpuinfo, the
// logical CPUs, MemTotal from /proc/meminfo, OS/arch), the Go version, and the commit the
// bench was built from when the build recorded it (a go build in a git checkout does,
// unless -buildvcs=false; +dirty for a modified tree); the server under test, the fake
// model, the phases and the wall time; and the exact command line of the run, its
// arguments shell-quoted. Then one section per phase that ran, in the order of --help's
// list of phases whatever the order of --phases: a sentence or two on what the phase
// measures, then what the table prints
// for it, from the same figures, each tab-separated block a Markdown table (its first
// line the header, every row as wide as the widest) and each other line a paragraph (the
// sessions, catalogs and streams phases, which share one table on stdout, get a section
// each, the table's header repeated); a phase that ran without figures (skipped, e.g. the
// streams phases of a server that does not call the fake model) says so. Last, the
// notes. Text is escaped where Markdown would read it as markup. Sections, tables and
// their columns come in a fixed order, so that the diff of a regenerated file shows the
// figures that changed rather than moved text:
//
//	go build -o /tmp/genui-bench ./cmd/genui-bench
//	/tmp/genui-bench --phases latency,throughput,sessions,catalogs,streams,bytes,a2ui,conversations,a2a,ws,open --markdown docs/benchmarks.md
package main
