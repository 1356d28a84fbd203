package genui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/firebase/genkit/go/ai"
	"github.com/firebase/genkit/go/core"
	"github.com/firebase/genkit/go/genkit"
	"google.golang.org/genai"

	"github.com/genuiserver/genui/internal/jsonenc"
	"github.com/genuiserver/genui/schemas"
	"github.com/genuiserver/genui/session"
	"github.com/genuiserver/genui/tools"
)

// Service generates UI turns. It is safe for concurrent use.
type Service struct {
	g          *genkit.Genkit
	model      ai.Model
	modelName  string
	store      session.Store
	catalogs   *session.Catalogs
	maxRepairs int
	retry      retryPolicy
	log        *slog.Logger
	stats      Stats

	// StartSession is the startSession flow: it compiles a catalog and returns a new
	// session id.
	StartSession *core.Flow[*schemas.StartSessionRequest, string, struct{}]
	// GenerateUI is the generateUi streaming flow: it runs one turn and streams its events.
	GenerateUI *core.Flow[*schemas.GenerateRequest, *schemas.Result, schemas.Event]
}

// Option configures a Service.
type Option func(*Service)

// WithStore sets the session store (default: an in-memory store of 10,000 sessions with
// a 1 hour idle TTL).
func WithStore(s session.Store) Option { return func(sv *Service) { sv.store = s } }

// WithCatalogs sets the cache of compiled catalogs.
func WithCatalogs(c *session.Catalogs) Option { return func(sv *Service) { sv.catalogs = c } }

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

// WithLogger sets the logger (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(sv *Service) { sv.log = l } }

// New returns a Service generating with the named model, which must be registered in g
// (see [NewGenkit]), and defines its flows in g.
func New(g *genkit.Genkit, model string, opts ...Option) (*Service, error) {
	m := genkit.LookupModel(g, model)
	if m == nil {
		return nil, fmt.Errorf("model %q is not available", model)
	}
	s := &Service{
		g:          g,
		model:      m,
		modelName:  model,
		maxRepairs: 2,
		retry:      retryPolicy{retries: 3, maxWait: 20 * time.Second, base: 500 * time.Millisecond},
		log:        slog.Default(),
	}
	for _, o := range opts {
		o(s)
	}
	if s.store == nil {
		s.store = session.NewMemory(10000, time.Hour)
	}
	if s.catalogs == nil {
		s.catalogs = session.NewCatalogs(1024, 2<<20)
	}
	s.StartSession = genkit.DefineFlow(g, "startSession", s.startSession)
	s.GenerateUI = genkit.DefineStreamingFlow(g, "generateUi", s.generateFlow)
	return s, nil
}

// Model returns the name of the model the service generates with.
func (s *Service) Model() string { return s.modelName }

// Store returns the session store.
func (s *Service) Store() session.Store { return s.store }

// Stats returns counters of the surfaces the service handled.
func (s *Service) Stats() *Stats { return &s.stats }

// Stats counts tool requests by outcome.
type Stats struct {
	// Streamed counts tool requests sent to clients; Rejected those that failed
	// validation; Repaired the rejections the model fixed within the turn; Failed the turns
	// that ended with violations after the last repair.
	Streamed, Rejected, Repaired, Failed atomic.Int64
}

func (s *Service) startSession(ctx context.Context, req *schemas.StartSessionRequest) (string, error) {
	if req == nil || req.Catalog == nil {
		return "", fieldError("catalog", "required: the JSON Schema of the widgets the client can render")
	}
	c, err := s.catalogs.Compile(req.Catalog)
	if err != nil {
		return "", catalogError(err)
	}
	id, err := s.store.Create(ctx, c)
	if err != nil {
		return "", AsError(err)
	}
	return id, nil
}

// Turn is a validated generateUi request, ready to run.
type Turn struct {
	Catalog        *tools.Catalog
	Messages       []*ai.Message
	ClosingMessage bool
	req            *schemas.GenerateRequest
	surfaces       map[string]bool // surfaces the conversation shows
}

type turnKey struct{}

// Prepare validates a request, resolves its catalog and maps its conversation. Errors are
// *Error values with status INVALID_ARGUMENT or NOT_FOUND (or the store's failure).
func (s *Service) Prepare(ctx context.Context, req *schemas.GenerateRequest) (*Turn, error) {
	if err := validateGenerate(req); err != nil {
		return nil, err
	}
	var c *tools.Catalog
	var err error
	if req.SessionID != "" {
		c, err = s.store.Catalog(ctx, req.SessionID)
		if errors.Is(err, session.ErrNotFound) {
			return nil, &Error{Status: StatusNotFound, Message: "sessionId: unknown or expired session; call /startSession again", Details: map[string]any{"field": "sessionId"}, cause: err}
		}
		if err != nil {
			return nil, AsError(err)
		}
	} else {
		c, err = s.catalogs.Compile(req.Catalog)
		if err != nil {
			return nil, catalogError(err)
		}
	}
	msgs, err := toMessages(req.Conversation)
	if err != nil {
		return nil, err
	}
	surfaces := map[string]bool{}
	for _, m := range req.Conversation {
		for _, p := range m.Parts {
			if p.Type == schemas.PartUI && p.Definition != nil {
				surfaces[p.Definition.SurfaceID] = true
			}
		}
	}
	return &Turn{Catalog: c, Messages: msgs, ClosingMessage: req.ClosingMessage, req: req, surfaces: surfaces}, nil
}

// WithTurn returns a context carrying a prepared turn, so that the generateUi flow run
// with the same request does not prepare it again.
func WithTurn(ctx context.Context, t *Turn) context.Context {
	return context.WithValue(ctx, turnKey{}, t)
}

func (s *Service) generateFlow(ctx context.Context, req *schemas.GenerateRequest, send core.StreamCallback[schemas.Event]) (*schemas.Result, error) {
	t, _ := ctx.Value(turnKey{}).(*Turn)
	if t == nil || t.req != req {
		var err error
		if t, err = s.Prepare(ctx, req); err != nil {
			return nil, err
		}
	}
	return s.Generate(ctx, t, send)
}

// uiTools returns the catalog's tools, built once per catalog: the full catalog as the
// addOrUpdateSurface schema, or the simplified schema once the model rejected the full one.
func (s *Service) uiTools(c *tools.Catalog) []ai.ToolRef {
	if simplified(c).Load() {
		return c.Memo(simplifiedToolsKey{}, func() any {
			return []ai.ToolRef{newAddTool(c.SimplifiedSurfaceSchema()), deleteTool}
		}).([]ai.ToolRef)
	}
	return c.Memo(toolsKey{}, func() any {
		return []ai.ToolRef{newAddTool(c.AddOrUpdateSurfaceSchema()), deleteTool}
	}).([]ai.ToolRef)
}

// geminiTool returns the catalog's tools as Gemini function declarations, built once per
// catalog (and schema variant).
func (s *Service) geminiTool(c *tools.Catalog) *genai.Tool {
	key := any(geminiToolKey{})
	if simplified(c).Load() {
		key = geminiSimplifiedToolKey{}
	}
	return c.Memo(key, func() any { return geminiTool(s.uiTools(c)) }).(*genai.Tool)
}

type (
	geminiToolKey           struct{}
	geminiSimplifiedToolKey struct{}
)

func newAddTool(schema map[string]any) ai.ToolRef {
	return ai.NewTool(schemas.ToolAddOrUpdateSurface, tools.AddOrUpdateSurfaceDescription,
		func(*ai.ToolContext, any) (any, error) { return ackUpdated, nil },
		ai.WithInputSchema(schema))
}

type (
	toolsKey           struct{}
	simplifiedToolsKey struct{}
	simplifiedKey      struct{}
)

// simplified is the per-catalog decision to send the simplified tool schema.
func simplified(c *tools.Catalog) *atomic.Bool {
	return c.Memo(simplifiedKey{}, func() any { return new(atomic.Bool) }).(*atomic.Bool)
}

// isSchemaRejection reports whether the model refused the request because of the tool
// schema (Gemini: "too many states for serving", or an invalid parameters schema).
func isSchemaRejection(e *Error) bool {
	if e.Status != StatusInvalidArgument {
		return false
	}
	m := strings.ToLower(e.Message)
	return strings.Contains(m, "too many states") || strings.Contains(m, "schema")
}

var deleteTool = ai.NewTool(schemas.ToolDeleteSurface, tools.DeleteSurfaceDescription,
	func(*ai.ToolContext, any) (any, error) { return ackDeleted, nil },
	ai.WithInputSchema(tools.DeleteSurfaceSchema()))

// Generate runs one turn. It emits each valid tool request and each piece of model text
// as soon as the model produces it, and returns the turn's result. The model is called
// once; it is called again only to repair invalid tool requests (at most the configured
// number of times) or, when the turn asks for it, for a closing message.
func (s *Service) Generate(ctx context.Context, t *Turn, emit core.StreamCallback[schemas.Event]) (*schemas.Result, error) {
	start := time.Now()
	msgs := append([]*ai.Message(nil), t.Messages...)
	result := &schemas.Result{Message: schemas.ResultMessage{Role: "model", Content: []schemas.TextContent{}}, Usage: &schemas.Usage{}}
	var text strings.Builder
	index, repairs, rejectedTotal := 0, 0, 0
	closing := false
	for {
		c := &modelCall{s: s, turn: t, emit: emit, index: index, closing: closing}
		resp, err := s.callModel(ctx, c, msgs)
		if err != nil {
			return nil, err
		}
		result.Usage.ModelCalls++
		addUsage(result.Usage, resp.Usage)
		result.FinishReason = string(resp.FinishReason)
		result.ToolRequests = append(result.ToolRequests, c.accepted...)
		text.WriteString(c.text.String())
		rejected := c.rejectedCount()
		rejectedTotal += rejected
		s.stats.Streamed.Add(int64(len(c.accepted)))
		s.stats.Rejected.Add(int64(rejected))
		switch {
		case rejected > 0 && repairs < s.maxRepairs:
			repairs++
		case rejected > 0:
			s.stats.Failed.Add(1)
			return nil, c.failure(repairs)
		case t.ClosingMessage && !closing && len(c.verdicts) > 0:
			closing = true
		default:
			if rejectedTotal > 0 {
				s.stats.Repaired.Add(int64(rejectedTotal))
			}
			if result.FinishReason == "" {
				result.FinishReason = string(ai.FinishReasonStop)
			}
			if text.Len() > 0 {
				result.Message.Content = append(result.Message.Content, schemas.TextContent{Text: text.String()})
			}
			s.log.LogAttrs(ctx, slog.LevelInfo, "turn",
				slog.String("model", s.modelName), slog.Int("modelCalls", result.Usage.ModelCalls),
				slog.Int("surfaces", len(result.ToolRequests)), slog.Int("rejected", rejectedTotal),
				slog.Int("repairs", repairs), slog.Duration("took", time.Since(start)))
			return result, nil
		}
		// Answer the model's tool requests (with the violations of the invalid ones) and
		// let it continue.
		msgs = append(msgs, resp.Message, &ai.Message{Role: ai.RoleTool, Content: c.toolResponses(resp.Message)})
		index += 2
	}
}

func addUsage(u *schemas.Usage, g *ai.GenerationUsage) {
	if g == nil {
		return
	}
	u.InputTokens += g.InputTokens
	u.OutputTokens += g.OutputTokens
	u.TotalTokens += g.TotalTokens
	u.CachedTokens += g.CachedContentTokens
}

// modelCall tracks one model response while it streams.
type modelCall struct {
	s       *Service
	turn    *Turn
	emit    core.StreamCallback[schemas.Event]
	index   int
	closing bool

	emitted  bool                // anything sent to the client during this call
	verdicts [][]tools.Violation // per tool request of the response, in order
	accepted []schemas.ToolRequest
	text     strings.Builder
}

func (c *modelCall) rejectedCount() int {
	n := 0
	for _, v := range c.verdicts {
		if len(v) > 0 {
			n++
		}
	}
	return n
}

// onChunk handles one streamed chunk of the model response.
func (c *modelCall) onChunk(ctx context.Context, chunk *ai.ModelResponseChunk) error {
	if chunk.Role != "" && chunk.Role != ai.RoleModel {
		return nil
	}
	for _, p := range chunk.Content {
		if err := c.onPart(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

func (c *modelCall) onPart(ctx context.Context, p *ai.Part) error {
	switch {
	case p.IsToolRequest() && p.ToolRequest != nil && !p.ToolRequest.Partial:
		return c.onToolRequest(ctx, p.ToolRequest)
	case p.IsText() && p.Text != "":
		c.text.WriteString(p.Text)
		c.emitted = true
		return c.emit(ctx, schemas.Event{Type: schemas.EventText, Index: c.index, Text: p.Text})
	}
	return nil
}

func (c *modelCall) onToolRequest(ctx context.Context, tr *ai.ToolRequest) error {
	ref := strconv.Itoa(len(c.verdicts))
	report := c.turn.Catalog.Check(tr.Name, tr.Input)
	vs := report.Violations
	c.verdicts = append(c.verdicts, vs)
	for _, w := range report.Warnings {
		c.s.log.LogAttrs(ctx, slog.LevelWarn, "tool request warning", slog.String("tool", tr.Name), slog.String("warning", w.String()))
	}
	if len(vs) > 0 {
		c.s.log.LogAttrs(ctx, slog.LevelWarn, "rejected tool request", slog.String("tool", tr.Name),
			slog.Int("violations", len(vs)), slog.String("first", vs[0].String()))
		return nil
	}
	if in, _ := tr.Input.(map[string]any); in != nil {
		sid, _ := in["surfaceId"].(string)
		switch tr.Name {
		case schemas.ToolDeleteSurface:
			if !c.turn.surfaces[sid] {
				c.s.log.LogAttrs(ctx, slog.LevelWarn, "deleteSurface names a surface the conversation did not create", slog.String("surfaceId", sid))
			}
			delete(c.turn.surfaces, sid)
		case schemas.ToolAddOrUpdateSurface:
			if c.turn.surfaces != nil {
				c.turn.surfaces[sid] = true
			}
		}
	}
	input, err := jsonenc.Marshal(tr.Input)
	if err != nil {
		return fmt.Errorf("encoding tool input: %w", err)
	}
	req := schemas.ToolRequest{Name: tr.Name, Input: input, Ref: ref}
	c.accepted = append(c.accepted, req)
	c.emitted = true
	return c.emit(ctx, schemas.Event{Type: schemas.EventToolRequest, Index: c.index, ToolRequest: &req})
}

// finish handles what the stream did not show: models that do not stream, or stream tool
// requests only in the final response.
func (c *modelCall) finish(ctx context.Context, resp *ai.ModelResponse) error {
	if resp.Message == nil {
		return nil
	}
	n, sawText := 0, c.text.Len() > 0
	for _, p := range resp.Message.Content {
		switch {
		case p.IsToolRequest() && p.ToolRequest != nil:
			if n >= len(c.verdicts) {
				if err := c.onToolRequest(ctx, p.ToolRequest); err != nil {
					return err
				}
			}
			n++
		case p.IsText() && !sawText && p.Text != "":
			if err := c.onPart(ctx, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// toolResponses answers each tool request of the model message: an acknowledgement for a
// valid request, the list of violations for an invalid one.
func (c *modelCall) toolResponses(m *ai.Message) []*ai.Part {
	var out []*ai.Part
	n := 0
	for _, p := range m.Content {
		if !p.IsToolRequest() || p.ToolRequest == nil {
			continue
		}
		var output any = ackUpdated
		if p.ToolRequest.Name == schemas.ToolDeleteSurface {
			output = ackDeleted
		}
		if n < len(c.verdicts) && len(c.verdicts[n]) > 0 {
			output = map[string]any{
				"status":     "rejected",
				"error":      "This request was not shown to the user because it does not conform to the tool's schema and the widget catalog. Fix every violation below and call the tool again with the complete corrected input.",
				"violations": c.verdicts[n],
			}
		}
		n++
		out = append(out, ai.NewToolResponsePart(&ai.ToolResponse{Name: p.ToolRequest.Name, Ref: p.ToolRequest.Ref, Output: output}))
	}
	return out
}

func (c *modelCall) failure(repairs int) *Error {
	var all []tools.Violation
	for _, v := range c.verdicts {
		all = append(all, v...)
	}
	msgs := make([]string, 0, len(all))
	for _, v := range all {
		msgs = append(msgs, v.String())
	}
	return &Error{
		Status:  StatusFailedPrecondition,
		Message: fmt.Sprintf("the model produced UI that does not conform to the catalog (after %d repair attempts): %s", repairs, strings.Join(msgs, "; ")),
		Details: map[string]any{"violations": all},
	}
}

// callModel makes one model call, retrying on rate limits and unavailability while
// nothing of it has been streamed.
func (s *Service) callModel(ctx context.Context, c *modelCall, msgs []*ai.Message) (*ai.ModelResponse, error) {
	cat := c.turn.Catalog
	options := func() []ai.GenerateOption {
		opts := []ai.GenerateOption{
			ai.WithModel(s.model),
			ai.WithSystem(systemPrompt(cat)),
			ai.WithMessages(msgs...),
			ai.WithTools(s.uiTools(cat)...),
			ai.WithReturnToolRequests(true),
			ai.WithStreaming(c.onChunk),
		}
		if c.closing {
			opts = append(opts, ai.WithToolChoice(ai.ToolChoiceNone))
		}
		if isGemini(s.modelName) {
			opts = append(opts, ai.WithMiddleware(jsonSchemaTools(s.geminiTool(cat))))
		}
		return opts
	}
	opts := options()
	var waited time.Duration
	for attempt := 0; ; attempt++ {
		resp, err := genkit.Generate(ctx, s.g, opts...)
		if err == nil && ctx.Err() != nil {
			// The genai client ends a cancelled stream quietly; it was not complete.
			err = context.Cause(ctx)
		}
		if err == nil && resp.FinishReason == "" && isGemini(s.modelName) {
			err = &Error{Status: StatusUnavailable, Message: "the model's response stream ended before it finished"}
		}
		if err == nil {
			if err := c.finish(ctx, resp); err != nil {
				return nil, err
			}
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, AsError(context.Cause(ctx))
		}
		e := AsError(err)
		if !c.emitted && isSchemaRejection(e) && simplified(cat).CompareAndSwap(false, true) {
			// The provider cannot serve the catalog as a tool schema ("too many states"):
			// from now on this catalog gets a simplified tool schema, and the full catalog
			// stays in the system prompt.
			s.log.LogAttrs(ctx, slog.LevelWarn, "model rejected the catalog as a tool schema; using a simplified schema for this catalog",
				slog.String("catalog", cat.Hash), slog.String("error", e.Message))
			opts = options()
			attempt--
			continue
		}
		delay, ok := s.retry.next(attempt, e, waited)
		if c.emitted || !ok {
			return nil, e
		}
		s.log.LogAttrs(ctx, slog.LevelWarn, "model call failed; retrying", slog.String("status", e.Status),
			slog.Duration("after", delay), slog.Int("attempt", attempt+1))
		timer := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil, AsError(context.Cause(ctx))
		case <-timer.C:
		}
		waited += delay
		c.verdicts, c.accepted = nil, nil
		c.text.Reset()
	}
}

func catalogError(err error) *Error {
	e := fieldError("catalog", "%v", err)
	var tl *session.TooLargeError
	if errors.As(err, &tl) {
		e.HTTP = 413
	}
	return e
}
