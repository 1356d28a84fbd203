package reflection

// This file is the package's only coupling to Genkit internals. Genkit Go v1.4.0 does not export
// its registry, nor the listing its own reflection server (V1, genkit/reflection.go) does. But
// genkit.RegisterAction hands the registry, as the api.Registry interface, to the Register method
// of whatever it is given: a value whose Register only keeps that interface captures it. The
// interface is documented "for internal use only", so the module pins Genkit v1.4.0; revisit this
// file when upgrading (Genkit releases after v1.4.0 ship their own V2 client).

import (
	"context"
	"errors"
	"sort"

	"github.com/firebase/genkit/go/core/api"
	"github.com/firebase/genkit/go/genkit"
)

// registry is the subset of the Genkit registry that the runtime client needs.
type registry struct{ r api.Registry }

// capture receives the registry from genkit.RegisterAction and registers nothing.
type capture struct{ r *api.Registry }

func (c capture) Register(r api.Registry) { *c.r = r }

func newRegistry(g *genkit.Genkit) (*registry, error) {
	if g == nil {
		return nil, errors.New("reflection: nil *genkit.Genkit")
	}
	var r api.Registry
	genkit.RegisterAction(g, capture{&r})
	if r == nil {
		return nil, errors.New("reflection: could not reach the Genkit registry")
	}
	return &registry{r: r}, nil
}

// actions lists every action as Genkit v1.4.0's GET /api/actions does (listResolvableActions
// and handleListActions in genkit/reflection.go): the registered actions, plus what each
// dynamic plugin can resolve (deduplicated by name), sorted by name, keyed by key.
func (g *registry) actions(ctx context.Context) map[string]api.ActionDesc {
	var ads []api.ActionDesc
	for _, a := range g.r.ListActions() {
		ads = append(ads, a.Desc())
	}
	seen := map[string]bool{}
	for _, p := range g.r.ListPlugins() {
		dp, ok := p.(api.DynamicPlugin)
		if !ok {
			continue
		}
		for _, d := range dp.ListActions(ctx) {
			if !seen[d.Name] {
				seen[d.Name] = true
				ads = append(ads, d)
			}
		}
	}
	sort.SliceStable(ads, func(i, j int) bool { return ads[i].Name < ads[j].Name })
	m := make(map[string]api.ActionDesc, len(ads))
	for _, d := range ads {
		m[d.Key] = d
	}
	return m
}

// resolve finds a registered action, or has a dynamic plugin define it; nil if neither can.
func (g *registry) resolve(key string) api.Action { return g.r.ResolveAction(key) }

// defaultModel is the model given to genkit.WithDefaultModel, or "".
func (g *registry) defaultModel() string {
	s, _ := g.r.LookupValue(api.DefaultModelKey).(string)
	return s
}
