package a2ui

import (
	"encoding/json"
	"strings"
)

// Final returns the messages that bring a renderer to the state msgs leave it in,
// compacted: for each surface, in the order the surfaces first come, its createSurface
// (v0.9), its data-model updates but those a later one replaces (an update at a path or
// above it), one component update holding the last version of each component in the
// order the components first came, then its beginRendering (v0.8). A surface msgs create
// and delete is left out; a surface they delete without creating it (one the renderer
// had) is its deleteSurface. Messages that do not decode are kept where they are. Every
// v0.9 message carries "version".
//
// A surface streamed component by component is sent as many growing updates; Final is
// what a result that hands a turn's UI over whole carries instead: each component once.
func Final(version string, msgs []json.RawMessage) []json.RawMessage {
	return compact(version, msgs, version)
}

// Compact is [Final] with "version" left out of every message: the shortest form of a
// turn's messages, for a model to read as its own earlier output.
func Compact(version string, msgs []json.RawMessage) []json.RawMessage {
	return compact(version, msgs, "")
}

// finalSurface is what a surface's messages leave a renderer with.
type finalSurface struct {
	id      string
	create  map[string]any // its createSurface (v0.9) body
	begin   map[string]any // its beginRendering (v0.8) body
	data    []dataUpdate
	order   []string
	comps   map[string][]byte
	deleted bool // a deleteSurface of a surface the messages did not create
	created bool // the messages created it
}

type dataUpdate struct {
	path string
	op   string
	body map[string]any
}

// replaces reports whether an update at path replaces one at q: q is path or under it.
// A v0.8 update without a path sets keys at the root, and replaces nothing but what it
// names.
func replaces(path, q string) bool {
	if path == "" || path == "/" {
		return true
	}
	return q == path || strings.HasPrefix(q, strings.TrimSuffix(path, "/")+"/")
}

func compact(version string, msgs []json.RawMessage, outVersion string) []json.RawMessage {
	compsOp, dataOp := UpdateComponents, UpdateDataModel
	if version == V08 {
		compsOp, dataOp = SurfaceUpdate, DataModelUpdate
	}
	// entries are the surfaces and the messages that do not decode, in order.
	type entry struct {
		s   *finalSurface
		raw json.RawMessage
	}
	var entries []entry
	live := map[string]*finalSurface{}
	surface := func(id string) *finalSurface {
		sf := live[id]
		if sf == nil {
			sf = &finalSurface{id: id, comps: map[string][]byte{}}
			live[id] = sf
			entries = append(entries, entry{s: sf})
		}
		return sf
	}
	for _, raw := range msgs {
		m, p := decodeMessage(version, raw)
		if p != nil {
			entries = append(entries, entry{raw: raw})
			continue
		}
		switch m.Op {
		case DeleteSurface:
			sf := surface(m.SurfaceID)
			created := sf.created
			*sf = finalSurface{id: sf.id, comps: map[string][]byte{}, deleted: !created}
			delete(live, m.SurfaceID) // what follows is a new surface
		case CreateSurface:
			sf := surface(m.SurfaceID)
			sf.create, sf.created = m.Body, true
		case BeginRendering:
			sf := surface(m.SurfaceID)
			sf.begin = m.Body
			sf.created = sf.created || version == V08
		case compsOp:
			sf := surface(m.SurfaceID)
			for _, c := range asList(m.Body["components"]) {
				cm := asMap(c)
				id, _ := cm["id"].(string)
				if _, seen := sf.comps[id]; !seen {
					sf.order = append(sf.order, id)
				}
				sf.comps[id] = encodeBody(cm)
			}
		case dataOp:
			sf := surface(m.SurfaceID)
			path, _ := m.Body["path"].(string)
			kept := sf.data[:0]
			for _, u := range sf.data {
				if !dataReplaces(version, m.Body, path, u) {
					kept = append(kept, u)
				}
			}
			sf.data = append(kept, dataUpdate{path: path, op: m.Op, body: m.Body})
		}
	}
	out := make([]json.RawMessage, 0, len(entries)*3)
	for _, e := range entries {
		if e.s == nil {
			out = append(out, e.raw)
			continue
		}
		sf := e.s
		if sf.deleted {
			out = append(out, encodeMessage(outVersion, DeleteSurface, encodeBody(map[string]any{"surfaceId": sf.id})))
			continue
		}
		if sf.create != nil {
			out = append(out, encodeMessage(outVersion, CreateSurface, encodeBody(sf.create)))
		}
		for _, u := range sf.data {
			out = append(out, encodeMessage(outVersion, u.op, encodeBody(u.body)))
		}
		if len(sf.order) > 0 {
			comps := make([][]byte, len(sf.order))
			for i, id := range sf.order {
				comps[i] = sf.comps[id]
			}
			out = append(out, encodeMessage(outVersion, compsOp, componentsBody(sf.id, comps)))
		}
		if sf.begin != nil {
			out = append(out, encodeMessage(outVersion, BeginRendering, encodeBody(sf.begin)))
		}
	}
	return out
}

// dataReplaces reports whether a data-model update (body, at path) replaces an earlier
// one, u: in v0.9 one at its path or under it; in v0.8, whose updates set keys under
// their path, one at the same path setting no other keys.
func dataReplaces(version string, body map[string]any, path string, u dataUpdate) bool {
	if version == V09 {
		return replaces(path, u.path)
	}
	if u.path != path {
		return false
	}
	keys := map[string]bool{}
	for _, e := range asList(body["contents"]) {
		k, _ := asMap(e)["key"].(string)
		keys[k] = true
	}
	for _, e := range asList(u.body["contents"]) {
		if k, _ := asMap(e)["key"].(string); !keys[k] {
			return false
		}
	}
	return true
}
