package gemini

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/firebase/genkit/go/ai"
	"google.golang.org/genai"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/internal/providererr"
	"github.com/genuiserver/genui/tools"
)

// Config configures a Gemini model.
type Config struct {
	// Name is the model's name as the service reports it: "googleai/<model>" for the Gemini
	// API, "vertexai/<model>" for Vertex AI.
	Name string
	// APIKey is the Gemini API key (or a Vertex AI Express Mode key).
	APIKey string
	// Project and Location select Vertex AI (Location default: us-central1); Application
	// Default Credentials authenticate.
	Project, Location string
	// BaseURL replaces the endpoint (default: the genai client's, which honours
	// GOOGLE_GEMINI_BASE_URL and GOOGLE_VERTEX_BASE_URL).
	BaseURL string
	// HTTPClient makes the requests (default: a client keeping up to 1,024 idle
	// connections to the endpoint, so that concurrent turns reuse them; over TLS it
	// speaks HTTP/2, as the Gemini API and Vertex AI do, and every turn shares one
	// connection).
	HTTPClient *http.Client
	// UnencryptedHTTP2 makes the default client speak HTTP/2 without TLS (h2c, with
	// prior knowledge) to an http:// endpoint, such as a local proxy or a test server:
	// every turn then shares one connection, as over TLS. The endpoint must speak it.
	UnencryptedHTTP2 bool
	// Logger receives the adapter's warnings (default slog.Default()).
	Logger *slog.Logger
}

// New returns the Gemini model described by cfg.
func New(ctx context.Context, cfg Config) (_ genui.Model, err error) {
	provider, model, ok := strings.Cut(cfg.Name, "/")
	if !ok || model == "" || (provider != "googleai" && provider != "vertexai") {
		return nil, fmt.Errorf("gemini: model %q: expected googleai/<model> or vertexai/<model>", cfg.Name)
	}
	cc := &genai.ClientConfig{HTTPOptions: genai.HTTPOptions{BaseURL: cfg.BaseURL}}
	var base http.RoundTripper
	if cfg.HTTPClient != nil && cfg.HTTPClient.Transport != nil {
		base = cfg.HTTPClient.Transport
	} else {
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConns, t.MaxIdleConnsPerHost = 1024, 1024
		if cfg.UnencryptedHTTP2 {
			// HTTP/2 over TLS for https://, and over plain TCP for http:// (leaving
			// HTTP/1 out is what selects it).
			t.Protocols = new(http.Protocols)
			t.Protocols.SetHTTP2(true)
			t.Protocols.SetUnencryptedHTTP2(true)
		}
		base = t
	}
	hc := &http.Client{Transport: splicer{next: base}}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient
		c.Transport = hc.Transport
		hc = &c
	}
	cc.HTTPClient = hc
	if provider == "vertexai" {
		cc.Backend = genai.BackendVertexAI
		cc.Project, cc.Location, cc.APIKey = cfg.Project, cfg.Location, cfg.APIKey
		if cc.Location == "" && cc.APIKey == "" {
			cc.Location = "us-central1"
		}
		if cc.Project == "" && cc.APIKey == "" {
			return nil, fmt.Errorf("gemini: model %q needs a Google Cloud project (GOOGLE_CLOUD_PROJECT)", cfg.Name)
		}
		if cc.APIKey == "" && (cfg.BaseURL == "" || cfg.Project != "") {
			// genai authenticates with Application Default Credentials only the clients it
			// makes itself: this one gets them here.
			if cc.HTTPClient, err = adcClient(ctx, hc); err != nil {
				return nil, fmt.Errorf("gemini: %w", err)
			}
		}
	} else {
		cc.Backend = genai.BackendGeminiAPI
		cc.APIKey = cfg.APIKey
		if cc.APIKey == "" {
			return nil, fmt.Errorf("gemini: model %q needs an API key (GEMINI_API_KEY or GOOGLE_API_KEY)", cfg.Name)
		}
	}
	client, err := genai.NewClient(ctx, cc)
	if err != nil {
		return nil, fmt.Errorf("gemini: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Model{client: client, name: cfg.Name, model: model, log: log}, nil
}

// Model is a Gemini model called through google.golang.org/genai.
type Model struct {
	client *genai.Client
	name   string
	model  string
	log    *slog.Logger
}

// Name implements genui.Model.
func (m *Model) Name() string { return m.name }

// prepared is what the adapter keeps per catalog: the declarations of both variants of
// its UI tools as the pieces of their encoding (the schemas themselves are the catalog's,
// not copied), and the decision to send the simplified variant.
type prepared struct {
	full       [][]byte
	simplified [][]byte
	simplify   atomic.Bool
}

type preparedKey struct{}

// noTools is what a request without UI tools (an A2UI turn) declares of them: none.
var noTools = &prepared{}

func (m *Model) prepare(req *genui.ModelRequest) *prepared {
	if req.Tools == nil {
		return noTools
	}
	return req.Tools.Catalog.Memo(preparedKey{}, func() any {
		return &prepared{full: encodeDecls(req.Tools.Full), simplified: encodeDecls(req.Tools.Simplified)}
	}).(*prepared)
}

type clientKey struct{}

// clientDecls returns the declarations of the request's client tools, encoded once per
// set of client tools.
func clientDecls(req *genui.ModelRequest) [][]byte {
	if req.ClientTools == nil {
		return nil
	}
	return req.ClientTools.Memo(clientKey{}, func() any { return encodeDecls(req.ClientTools.Tools) }).([][]byte)
}

// system returns the pieces of the request's "systemInstruction": the prompt as encoded
// once, in a user content.
func system(p genui.Prompt) [][]byte {
	return [][]byte{systemHead, p.JSON(), systemTail}
}

var (
	systemHead = []byte(`{"parts":[{"text":`)
	systemTail = []byte(`}],"role":"user"}`)
	toolsHead  = []byte(`[{"functionDeclarations":[`)
	toolsTail  = []byte(`]}]`)
	comma      = []byte(`,`)
)

// encodeDecls returns the pieces of the encoding of function declarations, comma
// separated: each schema as parametersJsonSchema (Gemini's own Schema type cannot express
// anyOf, oneOf, $ref or type arrays, which catalogs use).
func encodeDecls(ts []tools.Tool) [][]byte {
	var parts [][]byte
	var glue []byte
	for i, t := range ts {
		if i > 0 {
			glue = append(glue, ',')
		}
		name, _ := json.Marshal(t.Name)
		desc, _ := json.Marshal(t.Description)
		glue = fmt.Appendf(glue, `{"name":%s,"description":%s,"parametersJsonSchema":`, name, desc)
		parts = append(parts, glue, t.Schema)
		glue = []byte(`}`)
	}
	if glue != nil {
		parts = append(parts, glue)
	}
	return parts
}

// toolPieces returns the pieces of the request's "tools": the UI tools' declarations,
// then the client tools'; nil when there are none.
func toolPieces(ui, client [][]byte) [][]byte {
	if len(ui) == 0 && len(client) == 0 {
		return nil
	}
	out := make([][]byte, 0, len(ui)+len(client)+3)
	out = append(append(out, toolsHead), ui...)
	if len(ui) > 0 && len(client) > 0 {
		out = append(out, comma)
	}
	return append(append(out, client...), toolsTail)
}

// Generate implements genui.Model.
func (m *Model) Generate(ctx context.Context, req *genui.ModelRequest, onPart func(context.Context, *ai.Part) error) (*ai.ModelResponse, error) {
	p := m.prepare(req)
	contents, err := toContents(req.Messages)
	if err != nil {
		return nil, err
	}
	for {
		simplified := p.simplify.Load()
		resp, streamed, err := m.stream(ctx, req, p, simplified, contents, onPart)
		if err == nil || streamed || simplified || req.Tools == nil || !schemaRejected(err) {
			return resp, err
		}
		if p.simplify.CompareAndSwap(false, true) {
			// Gemini cannot serve the catalog as a tool schema ("too many states for
			// serving"): from now on this catalog gets the simplified tool schema, and the
			// full catalog stays in the system prompt.
			m.log.LogAttrs(ctx, slog.LevelWarn, "model rejected the catalog as a tool schema; using a simplified schema for this catalog",
				slog.String("catalog", req.Tools.Catalog.Hash), slog.String("error", err.Error()))
		}
	}
}

// stream makes one request and reads its stream; streamed reports whether any part was
// passed on.
func (m *Model) stream(ctx context.Context, req *genui.ModelRequest, p *prepared, simplified bool, contents []*genai.Content, onPart func(context.Context, *ai.Part) error) (_ *ai.ModelResponse, streamed bool, _ error) {
	ui := p.full
	if simplified {
		ui = p.simplified
	}
	toolParts := toolPieces(ui, clientDecls(req))
	cfg := &genai.GenerateContentConfig{
		// The system instruction and the tools are sent as encoded once per catalog (see
		// transport.go); the genai client would otherwise convert and encode them on every
		// request.
		HTTPOptions: &genai.HTTPOptions{ExtrasRequestProvider: func(body map[string]any) map[string]any {
			body["systemInstruction"] = systemPlaceholder
			if toolParts != nil {
				body["tools"] = toolsPlaceholder
			}
			return body
		}},
	}
	if req.MaxOutputTokens > 0 {
		cfg.MaxOutputTokens = int32(min(req.MaxOutputTokens, math.MaxInt32))
	}
	ctx = withSplices(ctx, &splices{system: system(req.System), tools: toolParts})
	if req.NoTools && toolParts != nil {
		cfg.ToolConfig = &genai.ToolConfig{FunctionCallingConfig: &genai.FunctionCallingConfig{Mode: genai.FunctionCallingConfigModeNone}}
	}
	msg := &ai.Message{Role: ai.RoleModel}
	out := &ai.ModelResponse{Message: msg}
	var finish genai.FinishReason
	var usage *genai.GenerateContentResponseUsageMetadata
	for resp, err := range m.client.Models.GenerateContentStream(ctx, m.model, contents, cfg) {
		if err != nil {
			return nil, streamed, m.mapError(ctx, err)
		}
		if resp.UsageMetadata != nil {
			usage = resp.UsageMetadata
		}
		if len(resp.Candidates) == 0 {
			if fb := resp.PromptFeedback; fb != nil && fb.BlockReason != "" && fb.BlockReason != genai.BlockedReasonUnspecified {
				finish = genai.FinishReasonProhibitedContent
				out.FinishMessage = fb.BlockReasonMessage
			}
			continue
		}
		cand := resp.Candidates[0]
		if cand.FinishReason != "" {
			finish = cand.FinishReason
			out.FinishMessage = cand.FinishMessage
		}
		if cand.Content == nil {
			continue
		}
		for _, gp := range cand.Content.Parts {
			part := fromPart(gp)
			if part == nil {
				continue
			}
			msg.Content = append(msg.Content, part)
			if part.IsReasoning() {
				continue
			}
			streamed = true
			if err := onPart(ctx, part); err != nil {
				return nil, streamed, err
			}
		}
	}
	if err := ctx.Err(); err != nil {
		// The stream ends quietly when its request is cancelled.
		return nil, streamed, genui.AsError(context.Cause(ctx))
	}
	if finish == "" || finish == genai.FinishReasonUnspecified {
		return nil, streamed, &genui.Error{Status: genui.StatusUnavailable, Message: "the model's response stream ended before it finished"}
	}
	out.FinishReason = finishReason(finish)
	if usage != nil {
		out.Usage = &ai.GenerationUsage{
			InputTokens:         int(usage.PromptTokenCount),
			OutputTokens:        int(usage.CandidatesTokenCount),
			TotalTokens:         int(usage.TotalTokenCount),
			CachedContentTokens: int(usage.CachedContentTokenCount),
			ThoughtsTokens:      int(usage.ThoughtsTokenCount),
		}
	}
	return out, streamed, nil
}

// Metadata keys of parts that must go back to Gemini with them.
const (
	metaSignature = genui.SignatureKey // a thought signature (Gemini 3)
	metaCallID    = "functionCallId"   // the id Gemini gave a function call
)

// fromPart converts a part of a response; nil for parts a turn does not use.
func fromPart(gp *genai.Part) *ai.Part {
	var p *ai.Part
	switch {
	case gp.FunctionCall != nil:
		p = ai.NewToolRequestPart(&ai.ToolRequest{Name: gp.FunctionCall.Name, Input: gp.FunctionCall.Args, Ref: gp.FunctionCall.ID})
		if gp.FunctionCall.ID != "" {
			p.Metadata = map[string]any{metaCallID: gp.FunctionCall.ID}
		}
	case gp.Thought:
		p = ai.NewReasoningPart(gp.Text, gp.ThoughtSignature)
	case gp.Text != "":
		p = ai.NewTextPart(gp.Text)
	default:
		return nil
	}
	if len(gp.ThoughtSignature) > 0 {
		if p.Metadata == nil {
			p.Metadata = map[string]any{}
		}
		p.Metadata[metaSignature] = gp.ThoughtSignature
	}
	return p
}

// toContents converts the conversation to Gemini contents. System messages are left out
// (the system instruction is sent apart); tool responses go in user contents.
func toContents(msgs []*ai.Message) ([]*genai.Content, error) {
	out := make([]*genai.Content, 0, len(msgs))
	ids := map[string]bool{} // refs of function calls that carry Gemini's own id
	for _, m := range msgs {
		if m.Role == ai.RoleSystem {
			continue
		}
		role := "user"
		if m.Role == ai.RoleModel {
			role = "model"
		}
		parts := make([]*genai.Part, 0, len(m.Content))
		for _, p := range m.Content {
			gp, err := toPart(p, ids)
			if err != nil {
				return nil, err
			}
			if gp != nil {
				parts = append(parts, gp)
			}
		}
		if len(parts) > 0 {
			if role == "model" {
				signFirstCall(parts)
			}
			out = append(out, &genai.Content{Role: role, Parts: parts})
		}
	}
	return out, nil
}

// signFirstCall moves a thought signature to the first function call of a model content
// when that call has none and a later one has: Gemini requires it on the first call of
// each step, and a history rebuilt by a client may carry it with another call.
func signFirstCall(parts []*genai.Part) {
	first := -1
	for i, p := range parts {
		if p.FunctionCall == nil {
			continue
		}
		if first < 0 {
			if len(p.ThoughtSignature) > 0 {
				return
			}
			first = i
			continue
		}
		if len(p.ThoughtSignature) > 0 {
			parts[first].ThoughtSignature, p.ThoughtSignature = p.ThoughtSignature, nil
			return
		}
	}
}

func toPart(p *ai.Part, ids map[string]bool) (*genai.Part, error) {
	var gp *genai.Part
	switch {
	case p.IsReasoning():
		gp = &genai.Part{Text: p.Text, Thought: true}
	case p.IsText():
		gp = &genai.Part{Text: p.Text}
	case p.IsMedia():
		if rest, ok := strings.CutPrefix(p.Text, "data:"); ok {
			meta, data, _ := strings.Cut(rest, ",")
			b, err := base64.StdEncoding.DecodeString(data)
			if err != nil || !strings.HasSuffix(meta, ";base64") {
				return nil, &genui.Error{Status: genui.StatusInvalidArgument, Message: "an image's data URL must be base64"}
			}
			gp = &genai.Part{InlineData: &genai.Blob{MIMEType: strings.TrimSuffix(meta, ";base64"), Data: b}}
		} else {
			gp = &genai.Part{FileData: &genai.FileData{FileURI: p.Text, MIMEType: p.ContentType}}
		}
	case p.IsToolRequest():
		args, ok := p.ToolRequest.Input.(map[string]any)
		if !ok {
			args = map[string]any{"input": p.ToolRequest.Input}
		}
		fc := &genai.FunctionCall{Name: p.ToolRequest.Name, Args: args}
		if id, _ := p.Metadata[metaCallID].(string); id != "" {
			fc.ID = id
			ids[p.ToolRequest.Ref] = true
		}
		gp = &genai.Part{FunctionCall: fc}
	case p.IsToolResponse():
		resp, ok := p.ToolResponse.Output.(map[string]any)
		if !ok {
			resp = map[string]any{"name": p.ToolResponse.Name, "content": p.ToolResponse.Output}
		}
		fr := &genai.FunctionResponse{Name: p.ToolResponse.Name, Response: resp}
		if ids[p.ToolResponse.Ref] {
			fr.ID = p.ToolResponse.Ref
		}
		gp = &genai.Part{FunctionResponse: fr}
	default:
		return nil, nil
	}
	if sig, ok := p.Metadata[metaSignature].([]byte); ok {
		gp.ThoughtSignature = sig
	}
	return gp, nil
}

func finishReason(r genai.FinishReason) ai.FinishReason {
	switch r {
	case genai.FinishReasonStop:
		return ai.FinishReasonStop
	case genai.FinishReasonMaxTokens:
		return ai.FinishReasonLength
	case genai.FinishReasonSafety, genai.FinishReasonRecitation, genai.FinishReasonLanguage,
		genai.FinishReasonBlocklist, genai.FinishReasonProhibitedContent, genai.FinishReasonSPII,
		genai.FinishReasonImageSafety, genai.FinishReasonImageProhibitedContent, genai.FinishReasonImageRecitation:
		return ai.FinishReasonBlocked
	}
	return ai.FinishReasonOther
}

// mapError maps a failure of the genai client to a status: the provider's HTTP status
// keeps its meaning (a 429 stays RESOURCE_EXHAUSTED, with the delay Gemini asked for), a
// request that could not be sent is UNAVAILABLE.
func (m *Model) mapError(ctx context.Context, err error) *genui.Error {
	if ctx.Err() != nil {
		return genui.AsError(context.Cause(ctx))
	}
	var api genai.APIError
	if errors.As(err, &api) {
		return apiError(api)
	}
	var ue *url.Error
	var ne net.Error
	switch {
	case errors.As(err, &ue) || errors.As(err, &ne):
		// The cause names the endpoint's address: logs get it, clients do not.
		return (&genui.Error{Status: genui.StatusUnavailable, Message: "the model could not be reached (" + providererr.Unreachable(err) + "); try again"}).WithCause(err)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return (&genui.Error{Status: genui.StatusUnavailable, Message: "the model's response stream broke off: " + err.Error()}).WithCause(err)
	}
	return genui.AsError(err)
}

func apiError(api genai.APIError) *genui.Error {
	status := providererr.Status(api.Code)
	msg := api.Message
	if msg == "" {
		msg = http.StatusText(api.Code)
	}
	e := (&genui.Error{Status: status, Message: fmt.Sprintf("model error (HTTP %d %s): %s", api.Code, api.Status, msg)}).WithCause(api)
	if d := retryDelay(api); d > 0 {
		e.RetryAfter = d
		e.Details = map[string]any{"retryDelay": d.String()}
	}
	return e
}

// retryDelay reads the google.rpc.RetryInfo detail of a Gemini error ("retryDelay": "2s").
func retryDelay(api genai.APIError) time.Duration {
	for _, d := range api.Details {
		if t, _ := d["@type"].(string); !strings.HasSuffix(t, "google.rpc.RetryInfo") {
			continue
		}
		if s, ok := d["retryDelay"].(string); ok {
			if v, err := time.ParseDuration(s); err == nil {
				return v
			}
		}
	}
	return 0
}

// schemaRejected reports whether Gemini refused the request because of the tool schema
// ("too many states for serving", or an invalid parameters schema).
func schemaRejected(err error) bool {
	var e *genui.Error
	if !errors.As(err, &e) || e.Status != genui.StatusInvalidArgument {
		return false
	}
	var api genai.APIError
	if !errors.As(err, &api) {
		return false
	}
	m := strings.ToLower(api.Message)
	return strings.Contains(m, "too many states") || strings.Contains(m, "schema")
}
