package a2ui

import (
	"fmt"
)

// Surfaces follows what a client shows after a sequence of v0.9 server messages, surface
// by surface, and gives each surface as the shortest list of messages that builds it from
// nothing: its createSurface, its data model updates (the last one of each path, a whole
// model dropping those before it), and one updateComponents holding the latest version
// of each component, in the order the components first came. A deleted surface is its
// deleteSurface message. Every message it gives carries "version".
type Surfaces struct {
	byID map[string]*shownSurface
}

type shownSurface struct {
	create  []byte
	model   []modelUpdate
	order   []string
	comps   map[string][]byte
	deleted []byte
}

type modelUpdate struct {
	path string
	msg  []byte
}

// NewSurfaces returns Surfaces that show nothing.
func NewSurfaces() *Surfaces { return &Surfaces{byID: map[string]*shownSurface{}} }

// Apply applies one v0.9 server message, and returns the id of the surface it changed.
func (s *Surfaces) Apply(raw []byte) (string, error) {
	m, err := DecodeMessage(V09, raw)
	if err != nil {
		return "", err
	}
	sf := s.byID[m.SurfaceID]
	if sf == nil || sf.deleted != nil {
		sf = &shownSurface{comps: map[string][]byte{}}
		s.byID[m.SurfaceID] = sf
	}
	msg := func() []byte { return encodeMessage(V09, m.Op, encodeBody(m.Body)) }
	switch m.Op {
	case CreateSurface:
		*sf = shownSurface{create: msg(), comps: map[string][]byte{}}
	case DeleteSurface:
		*sf = shownSurface{deleted: msg()}
	case UpdateDataModel:
		path, _ := m.Body["path"].(string)
		if path == "" {
			path = "/"
		}
		kept := sf.model[:0]
		for _, u := range sf.model {
			if path != "/" && u.path != path {
				kept = append(kept, u)
			}
		}
		sf.model = append(kept, modelUpdate{path: path, msg: msg()})
	case UpdateComponents:
		for i, c := range asList(m.Body["components"]) {
			cm := asMap(c)
			id, _ := cm["id"].(string)
			if cm == nil || id == "" {
				return m.SurfaceID, fmt.Errorf("updateComponents.components[%d]: a component is an object with an id", i)
			}
			if _, seen := sf.comps[id]; !seen {
				sf.order = append(sf.order, id)
			}
			sf.comps[id] = encodeBody(cm)
		}
	}
	return m.SurfaceID, nil
}

// Messages returns the messages that build the surface as it is now; none for a surface
// the messages never named.
func (s *Surfaces) Messages(id string) [][]byte {
	sf := s.byID[id]
	switch {
	case sf == nil:
		return nil
	case sf.deleted != nil:
		return [][]byte{sf.deleted}
	}
	out := make([][]byte, 0, 2+len(sf.model))
	if sf.create != nil {
		out = append(out, sf.create)
	}
	for _, u := range sf.model {
		out = append(out, u.msg)
	}
	if len(sf.order) > 0 {
		comps := make([][]byte, len(sf.order))
		for i, cid := range sf.order {
			comps[i] = sf.comps[cid]
		}
		out = append(out, encodeMessage(V09, UpdateComponents, componentsBody(id, comps)))
	}
	return out
}
