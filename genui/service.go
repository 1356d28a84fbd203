package genui

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/a2ui"
	"github.com/genuiserver/genui/auth"
	"github.com/genuiserver/genui/catalog"
	"github.com/genuiserver/genui/conversation"
	"github.com/genuiserver/genui/genui/durable"
	"github.com/genuiserver/genui/internal/telemetry"
	"github.com/genuiserver/genui/metrics"
	"github.com/genuiserver/genui/policy"
	"github.com/genuiserver/genui/quota"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/session"
	"github.com/genuiserver/genui/tools"
)

// Service generates UI turns. It is the one entry point of every transport: a transport
// decodes its request into a [schemas.GenerateRequest], calls [Service.Stream] (or
// [Service.Generate] for a response that is not streamed), and encodes the items it reads.
// It is safe for concurrent use.
type Service struct {
	model   Model            // serves the turns that name no model
	allowed map[string]Model // the other models a request may name, by name
	// callerModels are the models of the callers that have their own, by caller id.
	callerModels map[string]*modelChoice
	store        session.Store
	convs        conversation.Store
	maxHeld      int // bytes of history a held conversation may reach
	catalogs     *catalog.Cache
	streams      durable.Log
	grace        time.Duration
	maxRepairs   int
	retry        retryPolicy
	log          *slog.Logger
	quota        *quota.Quota
	metrics      *metrics.Metrics
	stats        Stats
	flows        flows
	// The UI policy of each turn: the default one, and those of the callers that have
	// their own; none when policyOff.
	policy    *policy.Policy
	policyOff bool
	policies  map[string]*policy.Policy
	// budget is each caller's token budget per window (0: none), budgets the callers'
	// own, by caller id.
	budget  int64
	budgets map[string]int64
	limits  Limits // what a model may write in a turn

	wg       sync.WaitGroup // running turns and their watch loop
	mu       sync.Mutex
	running  map[string]*running // streamed turns of this process, by stream id
	watching bool                // the watch loop runs
	idle     chan struct{}       // tells the watch loop that no turn runs
	unread   atomic.Int64        // running turns no client read at the watch loop's last look
}

// Option configures a Service.
type Option func(*Service)

// WithStore sets the session store (default: an in-memory store of 10,000 sessions with
// a 1 hour idle TTL).
func WithStore(s session.Store) Option { return func(sv *Service) { sv.store = s } }

// WithConversations sets the store of the conversations the server holds (default: in
// memory, at most 10,000 conversations holding 64 MiB, each expiring an hour after its last
// turn).
func WithConversations(c conversation.Store) Option { return func(sv *Service) { sv.convs = c } }

// WithMaxConversationBytes sets how much history a conversation the server holds may
// reach (default 16 MiB, about 4 million tokens: more than any model reads); a turn of a
// conversation past it is refused, naming conversationId.
func WithMaxConversationBytes(n int) Option {
	return func(sv *Service) {
		if n > 0 {
			sv.maxHeld = n
		}
	}
}

// WithCatalogs sets the cache of compiled catalogs (default: 1,024 catalogs of at most
// 2 MiB each, 64 MiB in all).
func WithCatalogs(c *catalog.Cache) Option { return func(sv *Service) { sv.catalogs = c } }

// WithStreams sets the log of durable streams (default: in memory, keeping finished
// streams 5 minutes).
func WithStreams(l durable.Log) Option { return func(sv *Service) { sv.streams = l } }

// WithGrace sets how long a streamed turn goes on while no client reads its stream
// (default 30 s).
func WithGrace(d time.Duration) Option { return func(sv *Service) { sv.grace = d } }

// WithMaxRepairs sets how many times the model may repair invalid tool requests in one
// turn (default 2).
func WithMaxRepairs(n int) Option { return func(sv *Service) { sv.maxRepairs = max(n, 0) } }

// WithRetry sets how often a model call that failed with 429/503 before anything was
// streamed is retried, and the longest total wait (defaults: 3 retries, 20 s).
func WithRetry(retries int, maxWait time.Duration) Option {
	return func(sv *Service) {
		sv.retry = retryPolicy{retries: max(retries, 0), maxWait: maxWait, base: sv.retry.base}
	}
}

// WithQuota bounds what each caller may ask: turns per second, turns at once, new
// catalogs and conversations per hour. A turn over a limit is a RESOURCE_EXHAUSTED *Error
// whose RetryAfter says when to try again. Default: no limits.
func WithQuota(q *quota.Quota) Option { return func(sv *Service) { sv.quota = q } }

// WithMetrics records the service's work in m (default: nowhere).
func WithMetrics(m *metrics.Metrics) Option { return func(sv *Service) { sv.metrics = m } }

// WithPolicy sets the UI policy every turn's UI must follow besides the catalog (default:
// [policy.Default]); nil turns it off. What breaks it is not sent: the model is asked to
// repair it, as UI that breaks the catalog.
func WithPolicy(p *policy.Policy) Option {
	return func(sv *Service) { sv.policy, sv.policyOff = p, p == nil }
}

// WithCallerPolicy sets the UI policy of the turns of one caller (its [auth.Caller] ID:
// "key:<name>", "jwt:<iss>|<sub>"), instead of WithPolicy's.
func WithCallerPolicy(callerID string, p *policy.Policy) Option {
	return func(sv *Service) {
		if sv.policies == nil {
			sv.policies = map[string]*policy.Policy{}
		}
		sv.policies[callerID] = p
	}
}

// WithTokenBudget sets the model tokens (input and output, as the model reports them)
// each caller may use in a window of the quota (quota.WithTokenWindow; an hour by
// default): a turn starts while the caller's tokens are below it, and the next is
// RESOURCE_EXHAUSTED until the window ends. 0, the default, is no budget. The tokens are
// counted with the quota of WithQuota, shared through Redis when it is.
func WithTokenBudget(tokens int64) Option { return func(sv *Service) { sv.budget = tokens } }

// WithCallerTokenBudget sets the token budget of one caller (by auth.Caller.ID), in place
// of WithTokenBudget's; 0 is none.
func WithCallerTokenBudget(callerID string, tokens int64) Option {
	return func(sv *Service) {
		if sv.budgets == nil {
			sv.budgets = map[string]int64{}
		}
		sv.budgets[callerID] = tokens
	}
}

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(sv *Service) { sv.log = l } }

// New returns a Service generating with m, and defines its flows (startSession and
// generateUi) in g, so that Genkit tooling lists, runs and traces them. In the Genkit
// development environment (GENKIT_ENV=dev), or when GENKIT_TELEMETRY_SERVER names a trace
// store, every call of a model that Genkit does not trace itself is recorded as a model
// span of the flow; otherwise model calls cost no tracing at all.
func New(g *genkit.Genkit, m Model, opts ...Option) (*Service, error) {
	if g == nil || m == nil {
		return nil, errors.New("genui.New: a Genkit instance and a model are required")
	}
	s := &Service{
		model:      m,
		grace:      30 * time.Second,
		maxRepairs: 2,
		limits:     DefaultLimits(),
		retry:      retryPolicy{retries: 3, maxWait: 20 * time.Second, base: 500 * time.Millisecond},
		maxHeld:    16 << 20,
		log:        slog.Default(),
		running:    map[string]*running{},
		idle:       make(chan struct{}, 1),
	}
	for _, o := range opts {
		o(s)
	}
	if s.store == nil {
		s.store = session.NewMemory(10000, time.Hour)
	}
	if s.policy == nil && !s.policyOff {
		s.policy = policy.Default()
	}
	if s.catalogs == nil {
		s.catalogs = catalog.NewCache(1024, 2<<20, 64<<20)
	}
	if s.convs == nil {
		s.convs = conversation.NewMemory(10000, 64<<20, time.Hour)
	}
	if s.streams == nil {
		s.streams = durable.NewMemoryLog(5 * time.Minute)
	}
	if tracingOn() {
		s.model = withTrace(s.model)
		for n, m := range s.allowed {
			s.allowed[n] = withTrace(m)
		}
		for _, c := range s.callerModels {
			if c.def != nil {
				c.def = withTrace(c.def)
			}
			for n, m := range c.allowed {
				c.allowed[n] = withTrace(m)
			}
		}
	}
	s.flows = defineFlows(g, s)
	return s, nil
}

// tracingOn reports whether spans are exported anywhere: in the Genkit development
// environment (the Dev UI's trace store) or to GENKIT_TELEMETRY_SERVER.
func tracingOn() bool {
	return api.CurrentEnvironment() == api.EnvironmentDev || os.Getenv("GENKIT_TELEMETRY_SERVER") != "" || telemetry.Enabled(os.Getenv)
}

// Model returns the name of the model that serves the turns that name none.
func (s *Service) Model() string { return s.model.Name() }

// Conversations reports how many conversations the server holds in process and the
// bytes they hold; ok is false when the store does not say (Redis).
func (s *Service) Conversations() (count, bytes int, ok bool) {
	if m, isMem := s.convs.(interface{ Len() (int, int) }); isMem {
		count, bytes = m.Len()
		return count, bytes, true
	}
	return 0, 0, false
}

// Stats returns counters of the surfaces the service handled.
func (s *Service) Stats() *Stats { return &s.stats }

// Running returns the number of streamed turns running in this process.
func (s *Service) Running() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.running)
}

// Unread returns the number of streamed turns running in this process that no client
// reads: in their grace period (WithGrace), after which they are cancelled. It is what
// the watch loop saw at its last look, at most a second ago.
func (s *Service) Unread() int { return int(s.unread.Load()) }

// Stats counts tool requests by outcome.
type Stats struct {
	// Streamed counts tool requests sent to clients; Rejected those that failed
	// validation; Repaired the rejections the model fixed within the turn; Failed the turns
	// that ended with violations after the last repair.
	Streamed, Rejected, Repaired, Failed atomic.Int64
}

// Ready reports whether the session store, the conversation store and the stream log can
// serve requests.
func (s *Service) Ready(ctx context.Context) error {
	if err := s.store.Ready(ctx); err != nil {
		return err
	}
	if err := s.convs.Ready(ctx); err != nil {
		return err
	}
	return s.streams.Ready(ctx)
}

// StartSession compiles the request's catalog and returns a new session id for it. It runs
// the startSession flow.
func (s *Service) StartSession(ctx context.Context, req *schemas.StartSessionRequest) (string, error) {
	id, err := s.flows.startSession.Run(ctx, req)
	if err != nil {
		return "", AsError(err)
	}
	return id.(string), nil
}

func (s *Service) startSession(ctx context.Context, req *schemas.StartSessionRequest) (string, error) {
	if err := validateStartSession(req); err != nil {
		return "", err
	}
	var c *catalog.Catalog
	if req.A2UI() {
		version, fe := a2ui.CheckVersion(req.Version)
		if fe != nil {
			return "", fieldError(fe.Field, "%s", fe.Message)
		}
		var e *Error
		if c, e = s.a2uiCatalog(ctx, version, req.A2UIClientCapabilities); e != nil {
			return "", e
		}
	} else {
		var err error
		if c, err = s.compile(ctx, req.Catalog); err != nil {
			return "", err
		}
	}
	if e := s.newSession(ctx); e != nil {
		return "", e
	}
	id := session.NewID()
	if err := s.store.Create(ctx, auth.Scope(ctx, id), c); err != nil {
		return "", AsError(err)
	}
	return id, nil
}

// turn is a validated generateUi request, ready to run.
type turn struct {
	catalog  *catalog.Catalog
	a2ui     *a2uiTurn        // set for an A2UI turn
	tools    *tools.ClientSet // the client tools the request declares; nil when none
	held     *held            // the conversation the server holds for the turn; nil when stateless
	messages []*ai.Message
	closing  bool            // a closing message was asked for
	req      any             // the request: *schemas.GenerateRequest, or *schemas.GenerateA2UIRequest
	surfaces map[string]bool // surfaces the conversation shows
	policy   *policy.Policy  // the UI policy of the turn's caller; nil: none
	model    Model           // the model of the turn
}

// policyFor returns the UI policy of the caller of ctx.
func (s *Service) policyFor(ctx context.Context) *policy.Policy {
	if p, ok := s.policies[auth.FromContext(ctx).ID]; ok && s.policies != nil {
		return p
	}
	return s.policy
}

// end releases what a prepared turn holds, when it does not run or did not commit.
func (t *turn) end() { t.held.release() }

// prepare validates a request, resolves its catalog (from the session store, or compiling
// the one it carries) and maps its conversation. Errors are *Error values: INVALID_ARGUMENT
// naming the field, NOT_FOUND for an unknown session, or the store's failure.
func (s *Service) prepare(ctx context.Context, req *schemas.GenerateRequest) (*turn, error) {
	if err := validateGenerate(req); err != nil {
		return nil, err
	}
	var c *catalog.Catalog
	var err error
	if req.SessionID != "" {
		c, err = s.store.Catalog(ctx, auth.Scope(ctx, req.SessionID))
		if errors.Is(err, session.ErrNotFound) {
			return nil, (&Error{Status: StatusNotFound, Message: "sessionId: unknown or expired session; call /startSession again", Details: map[string]any{"field": "sessionId"}}).WithCause(err)
		}
		if err != nil {
			return nil, AsError(err)
		}
		if c.A2UI != nil {
			return nil, fieldError("sessionId", "the session was started with A2UI capabilities: use /generateA2ui")
		}
	} else {
		if c, err = s.compile(ctx, req.Catalog); err != nil {
			return nil, err
		}
	}
	t := &turn{catalog: c, closing: req.ClosingMessage, req: req, policy: s.policyFor(ctx)}
	conv, err := s.prepareConversation(ctx, t, req.ClientTools, req.ConversationID, req.Conversation, "", req.Model)
	if err != nil {
		return nil, err
	}
	if t.messages, err = toMessages(conv); err != nil {
		t.end()
		return nil, err
	}
	t.surfaces = map[string]bool{}
	for _, m := range conv {
		for _, p := range m.Parts {
			if p.Type == schemas.PartUI && p.Definition != nil {
				t.surfaces[p.Definition.SurfaceID] = true
			} else if p.Type == schemas.PartUIDeleted && p.Definition != nil {
				delete(t.surfaces, p.Definition.SurfaceID)
			}
		}
	}
	return t, nil
}

// prepareConversation resolves the client tools of a validated request, checks its calls
// and results, and returns the conversation the model reads: the request's, or, for a
// conversation the server holds, the stored history and the request's messages (t.held
// then holds it). a2uiVersion is the A2UI version of an A2UI turn, "" for a genui turn.
func (s *Service) prepareConversation(ctx context.Context, t *turn, decls []schemas.ClientTool, id string, conv []schemas.Message, a2uiVersion, model string) ([]schemas.Message, error) {
	var e *Error
	if t.tools, e = s.clientTools(decls); e != nil {
		return nil, e
	}
	if id == "" {
		if t.model, e = s.modelFor(ctx, model, ""); e != nil {
			return nil, e
		}
		if e := checkCalls(conv, callRules{}); e != nil {
			return nil, e
		}
		return conv, nil
	}
	if _, e := s.modelFor(ctx, model, ""); e != nil {
		return nil, e // before the conversation is held
	}
	if t.held, e = s.holdConversation(ctx, id, heldKind(a2uiVersion), a2uiVersion); e != nil {
		return nil, e
	}
	t.model, _ = s.modelFor(ctx, model, t.held.model)
	t.held.model = t.model.Name()
	if e := checkCalls(conv, t.held.rules()); e != nil {
		t.end()
		return nil, e
	}
	return t.held.merge(conv), nil
}

func catalogError(err error) *Error {
	return fieldError("catalog", "%v", err).WithCause(err)
}

// compile compiles a catalog a request carries, counting a new one against its caller's
// quota of new catalogs.
func (s *Service) compile(ctx context.Context, raw []byte) (*catalog.Catalog, error) {
	var over *Error
	c, err := s.catalogs.CompileAdmit(raw, func() error {
		if e := s.limitError(s.quota.AdmitCatalog(ctx, auth.FromContext(ctx).LimitKey()), "catalog"); e != nil {
			over = e
			return over
		}
		return nil
	})
	if over != nil {
		return nil, over
	}
	if err != nil {
		return nil, catalogError(err)
	}
	return c, nil
}

// newSession counts a new /startSession session against its caller's quota. (The
// conversations a caller has stored are counted by the conversation store.)
func (s *Service) newSession(ctx context.Context) *Error {
	return s.limitError(s.quota.AdmitSession(ctx, auth.FromContext(ctx).LimitKey()), "")
}

// startTurn admits a turn of the caller of ctx; release ends it.
func (s *Service) startTurn(ctx context.Context) (release func(), err *Error) {
	key := auth.FromContext(ctx).LimitKey()
	release, e := s.quota.Admit(ctx, key)
	if e := s.limitError(e, ""); e != nil {
		return nil, e
	}
	if e := s.limitError(s.quota.AdmitTokens(ctx, key, s.budgetOf(ctx)), ""); e != nil {
		release()
		return nil, e
	}
	return release, nil
}

// callerLabel names the caller of ctx in metrics: its id when configuration names it (an
// API key's name; a caller with a policy, a budget or models of its own), "anonymous"
// without authentication, "other" for any other caller, so that the label stays bounded.
func (s *Service) callerLabel(ctx context.Context) string {
	c := auth.FromContext(ctx)
	switch {
	case c.Anonymous():
		return "anonymous"
	case c.Method == auth.MethodAPIKey:
		return c.ID
	}
	if _, ok := s.policies[c.ID]; ok {
		return c.ID
	}
	if _, ok := s.budgets[c.ID]; ok {
		return c.ID
	}
	if _, ok := s.callerModels[c.ID]; ok {
		return c.ID
	}
	return "other"
}

// budgetOf is the token budget of the caller of ctx: 0 for none.
func (s *Service) budgetOf(ctx context.Context) int64 {
	if b, ok := s.budgets[auth.FromContext(ctx).ID]; ok {
		return b
	}
	return s.budget
}

// countTokens counts a turn's tokens to its caller's budget, whether the turn succeeded
// or not (the provider counted them), even when its client is gone.
func (s *Service) countTokens(ctx context.Context, u *schemas.Usage) {
	if s.quota == nil || u == nil || (u.InputTokens == 0 && u.OutputTokens == 0) {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := s.quota.AddTokens(ctx, auth.FromContext(ctx).LimitKey(), int64(u.InputTokens), int64(u.OutputTokens)); err != nil {
		s.log.WarnContext(ctx, "counting a turn's tokens failed", "err", err)
	}
}

// Usage returns what the caller of ctx used of its token budget in the current window.
func (s *Service) Usage(ctx context.Context) (quota.Usage, error) {
	return s.quota.TokenUsage(ctx, auth.FromContext(ctx).LimitKey(), s.budgetOf(ctx))
}

// limitError is the *Error of a quota's answer: RESOURCE_EXHAUSTED for a limit (counted),
// UNAVAILABLE when the shared limits cannot be read, nil when admitted.
func (s *Service) limitError(err error, field string) *Error {
	if err == nil {
		return nil
	}
	if e := quota.IsExceeded(err); e != nil {
		s.metrics.Limited(e.Limit)
		return exhausted(e, field)
	}
	return AsError(err)
}

// exhausted is the RESOURCE_EXHAUSTED error of a limit.
func exhausted(e *quota.Exceeded, field string) *Error {
	err := (&Error{Status: StatusResourceExhausted, Message: e.Error(), RetryAfter: e.RetryAfter}).WithCause(e)
	d := map[string]any{"limit": e.Limit, "retryAfter": err.RetryAfterSeconds()}
	if field != "" {
		d["field"] = field
	}
	err.Details = d
	return err
}
