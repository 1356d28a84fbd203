package reflection

// The actions and values of a Genkit instance, read through Genkit's exported API only.
//
// Genkit Go v1.13.1 exports no way to enumerate every registered action: its own reflection
// servers call the unexported listResolvableActions (genkit/reflection.go:745). What the
// exported API can enumerate is listed here by itself (flows, tools, resources, the
// /util/generate action genkit.Init defines, the default model, and what dynamic plugins can
// resolve); everything else (models defined with genkit.DefineModel, actions returned by a
// plugin's Init, prompts, …) needs its key given with WithActions, and dynamic plugins that
// are not the provider of the default model or of such a key need WithPlugins.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/genkit"
)

// generateKey is the action genkit.Init always defines (ai.DefineGenerateAction).
const generateKey = "/util/generate"

// middlewarePrefix is the prefix of the registry values that hold middleware descriptors
// (ai.MiddlewareDesc.Register); V1's GET /api/values?type=middleware lists them.
const middlewarePrefix = "/middleware/"

// registry reads g through the exported Genkit API.
type registry struct {
	g       *genkit.Genkit
	keys    []string // WithActions
	plugins []string // WithPlugins

	resolveMu sync.Mutex // one resolution through a dynamic plugin at a time
}

func newRegistry(g *genkit.Genkit, keys, plugins []string) (*registry, error) {
	if g == nil {
		return nil, errors.New("reflection: nil *genkit.Genkit")
	}
	for _, k := range keys {
		if !strings.HasPrefix(k, "/") || strings.Count(k, "/") < 2 {
			return nil, fmt.Errorf("reflection: action key %q: expected /<type>/<name>, e.g. /model/genui/offline", k)
		}
	}
	return &registry{g: g, keys: keys, plugins: plugins}, nil
}

// actions lists the actions as Genkit's V1 GET /api/actions describes them
// (handleListActions and listResolvableActions in genkit/reflection.go): the registered
// actions this package can reach, then what each dynamic plugin can resolve under a name not
// listed yet, keyed by key.
func (r *registry) actions(ctx context.Context) map[string]api.ActionDesc {
	m := map[string]api.ActionDesc{}
	names := map[string]bool{}
	add := func(a api.Action) {
		if a == nil {
			return
		}
		d := a.Desc()
		m[d.Key] = d
		names[d.Name] = true
	}
	lookup := func(key string) { add(genkit.LookupAction(r.g, key)) }

	for _, a := range genkit.ListFlows(r.g) {
		add(a)
	}
	for _, t := range genkit.ListTools(r.g) {
		// A tool is registered under /tool.v2/ and, unless multipart, /tool/ too
		// (ToolAction.Register, ai/tools.go:505); both entries describe the same action,
		// whose descriptor is keyed /tool.v2/. Legacy tools may exist under /tool/ only.
		lookup(api.KeyFromName(api.ActionTypeToolV2, t.Name()))
		lookup(api.KeyFromName(api.ActionTypeTool, t.Name()))
	}
	for _, res := range genkit.ListResources(r.g) {
		lookup(api.KeyFromName(api.ActionTypeResource, res.Name()))
	}
	lookup(generateKey)
	if dm := r.defaultModel(); dm != "" {
		lookup(api.KeyFromName(api.ActionTypeModel, dm))
		lookup(api.KeyFromName(api.ActionTypeBackgroundModel, dm))
	}
	for _, k := range r.keys {
		lookup(k)
	}

	// Dynamic plugins, deduplicated by action name as V1 does. Their descriptors are listed
	// as the plugin gives them: a "genkit:" schema reference stays unresolved (V1 resolves it
	// through the registry's schemas, which are not exported).
	var dyn []api.ActionDesc
	seen := map[string]bool{}
	for _, name := range r.pluginNames() {
		dp, ok := genkit.LookupPlugin(r.g, name).(api.DynamicPlugin)
		if !ok {
			continue
		}
		for _, d := range dp.ListActions(ctx) {
			if !names[d.Name] && !seen[d.Name] {
				seen[d.Name] = true
				dyn = append(dyn, d)
			}
		}
	}
	sort.SliceStable(dyn, func(i, j int) bool { return dyn[i].Name < dyn[j].Name })
	for _, d := range dyn {
		if _, ok := m[d.Key]; !ok {
			m[d.Key] = d
		}
	}
	return m
}

// pluginNames are the plugins whose resolvable actions are listed: those of WithPlugins,
// and the providers of the default model and of the WithActions keys, once each.
func (r *registry) pluginNames() []string {
	var out []string
	seen := map[string]bool{}
	addName := func(n string) {
		if n != "" && !seen[n] {
			seen[n] = true
			out = append(out, n)
		}
	}
	for _, n := range r.plugins {
		addName(n)
	}
	if dm := r.defaultModel(); dm != "" {
		p, _ := api.ParseName(dm)
		addName(p)
	}
	for _, k := range r.keys {
		_, p, _ := api.ParseKey(k)
		addName(p)
	}
	return out
}

// resolve returns the action registered under key or, as Genkit's registry does
// (ResolveAction in internal/registry/registry.go), has the dynamic plugin named by the key's
// provider define it; nil if neither can.
func (r *registry) resolve(key string) api.Action {
	if a := genkit.LookupAction(r.g, key); a != nil {
		return a
	}
	typ, provider, id := api.ParseKey(key)
	if typ == "" || id == "" {
		return nil
	}
	dp, ok := genkit.LookupPlugin(r.g, provider).(api.DynamicPlugin)
	if !ok {
		return nil
	}
	// The typed lookups resolve through Genkit's own registry, which serialises resolution
	// with Genkit's other callers (genkit.Generate resolving a model, for instance).
	if r.resolveTyped(typ, api.NewName(provider, id)) {
		if a := genkit.LookupAction(r.g, key); a != nil {
			return a
		}
	}
	// No exported lookup resolves this type: ask the plugin and register what it returns,
	// as the registry would.
	r.resolveMu.Lock()
	defer r.resolveMu.Unlock()
	if a := genkit.LookupAction(r.g, key); a != nil {
		return a
	}
	a := dp.ResolveAction(typ, id)
	if a == nil {
		return nil
	}
	register(r.g, a)
	return genkit.LookupAction(r.g, key)
}

// resolveTyped resolves name through the exported lookup of its action type, if there is
// one, and reports whether there was.
func (r *registry) resolveTyped(typ api.ActionType, name string) (found bool) {
	// A typed lookup panics when the action resolved is not of the Go type it expects
	// (core.ResolveActionFor); the registration it made is what matters here.
	defer func() {
		if recover() != nil {
			found = true
		}
	}()
	switch typ {
	case api.ActionTypeModel:
		genkit.LookupModel(r.g, name)
	case api.ActionTypeBackgroundModel:
		genkit.LookupBackgroundModel(r.g, name)
	case api.ActionTypeEmbedder:
		genkit.LookupEmbedder(r.g, name)
	case api.ActionTypeRetriever:
		genkit.LookupRetriever(r.g, name)
	case api.ActionTypeEvaluator:
		genkit.LookupEvaluator(r.g, name)
	case api.ActionTypeTool, api.ActionTypeToolV2:
		genkit.LookupTool(r.g, name)
	case api.ActionTypeExecutablePrompt:
		genkit.LookupPrompt(r.g, name)
	default:
		return false
	}
	return true
}

// register registers a resolved action; one that another caller registered meanwhile (the
// registry panics on a duplicate key) is left as it is.
func register(g *genkit.Genkit, a api.Action) {
	defer func() { _ = recover() }()
	genkit.RegisterAction(g, a)
}

// defaultModel is the model given to genkit.WithDefaultModel, or "".
func (r *registry) defaultModel() string {
	s, _ := genkit.LookupValue(r.g, api.DefaultModelKey).(string)
	return s
}

// middleware lists the middleware descriptors by name, as V1's GET /api/values?type=middleware.
func (r *registry) middleware() map[string]any {
	out := map[string]any{}
	for k, v := range genkit.ListValues(r.g) {
		if name, ok := strings.CutPrefix(k, middlewarePrefix); ok {
			out[name] = v
		}
	}
	return out
}
