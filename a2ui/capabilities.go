package a2ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Capabilities is what a client can render, from its a2uiClientCapabilities.
type Capabilities struct {
	// SupportedCatalogIDs lists the catalogs the client has, by id.
	SupportedCatalogIDs []string
	// InlineCatalogs are catalogs the client describes in full.
	InlineCatalogs []InlineCatalog
}

// InlineCatalog is a catalog a client sends in its capabilities.
type InlineCatalog struct {
	ID string
	// Doc is the catalog's JSON, as sent.
	Doc json.RawMessage
}

// ParseCapabilities decodes a client's a2uiClientCapabilities for a protocol version:
// {"v0.9": {"supportedCatalogIds": […], "inlineCatalogs": […]}} for v0.9 (a "v0.9.1"
// key is read too), and the same object without the version key for v0.8. Errors name
// the field, under field (the name the capabilities have in the request).
func ParseCapabilities(version string, raw json.RawMessage, field string) (*Capabilities, *FieldError) {
	raw = bytes.TrimSpace(raw)
	var top map[string]json.RawMessage
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &top) != nil {
		return nil, fieldErr(field, "must be an object, e.g. {\"v0.9\":{\"supportedCatalogIds\":[…]}}")
	}
	inner, key := raw, field
	switch version {
	case V09:
		switch {
		case top["v0.9"] != nil:
			inner, key = top["v0.9"], field+".v0.9"
		case top["v0.9.1"] != nil:
			inner, key = top["v0.9.1"], field+".v0.9.1"
		default:
			var has []string
			for k := range top {
				has = append(has, k)
			}
			return nil, fieldErr(field, "has no \"v0.9\" capabilities (keys: %s); a v0.9 client sends {\"v0.9\":{\"supportedCatalogIds\":[…]}}", strings.Join(has, ", "))
		}
	case V08:
		if top["v0.8"] != nil {
			inner, key = top["v0.8"], field+".v0.8"
		}
	}
	var c struct {
		SupportedCatalogIDs json.RawMessage   `json:"supportedCatalogIds"`
		InlineCatalogs      []json.RawMessage `json:"inlineCatalogs"`
	}
	if err := json.Unmarshal(inner, &c); err != nil {
		return nil, fieldErr(key, "must be an object {\"supportedCatalogIds\":[…],\"inlineCatalogs\":[…]}: %v", err)
	}
	out := &Capabilities{}
	if len(c.SupportedCatalogIDs) > 0 && string(c.SupportedCatalogIDs) != "null" {
		if err := json.Unmarshal(c.SupportedCatalogIDs, &out.SupportedCatalogIDs); err != nil {
			return nil, fieldErr(key+".supportedCatalogIds", "must be an array of catalog ids (strings)")
		}
	}
	for i, id := range out.SupportedCatalogIDs {
		if id == "" {
			return nil, fieldErr(fmt.Sprintf("%s.supportedCatalogIds[%d]", key, i), "must not be empty")
		}
	}
	for i, ic := range c.InlineCatalogs {
		f := fmt.Sprintf("%s.inlineCatalogs[%d]", key, i)
		var head struct {
			CatalogID  json.RawMessage `json:"catalogId"`
			Components json.RawMessage `json:"components"`
		}
		if ic = bytes.TrimSpace(ic); len(ic) == 0 || ic[0] != '{' || json.Unmarshal(ic, &head) != nil {
			return nil, fieldErr(f, "must be a catalog object {\"catalogId\",\"components\",…}")
		}
		var id string
		if json.Unmarshal(head.CatalogID, &id) != nil || id == "" {
			return nil, fieldErr(f+".catalogId", "required: the id the client knows the catalog by")
		}
		if len(head.Components) == 0 || head.Components[0] != '{' {
			return nil, fieldErr(f+".components", "required: an object mapping each component name to its JSON Schema")
		}
		out.InlineCatalogs = append(out.InlineCatalogs, InlineCatalog{ID: id, Doc: ic})
	}
	if len(out.SupportedCatalogIDs) == 0 && len(out.InlineCatalogs) == 0 {
		return nil, fieldErr(key+".supportedCatalogIds", "lists no catalog, and no inline catalog is sent")
	}
	return out, nil
}

// ChooseOption configures [Capabilities.Choose].
type ChooseOption func(*chooser)

type chooser struct {
	catalogs []string // the agent's catalogs; nil: the built-in ones
	noInline bool
}

// WithCatalogs names the catalogs the agent composes with, by id, in its order of
// preference. Without it, the agent has the built-in catalogs of the version.
func WithCatalogs(ids ...string) ChooseOption {
	return func(c *chooser) { c.catalogs = append(c.catalogs, ids...) }
}

// WithoutInlineCatalogs makes capabilities that send catalogs inline an error: the agent
// does not accept them (its capabilities say "acceptsInlineCatalogs": false).
func WithoutInlineCatalogs() ChooseOption {
	return func(c *chooser) { c.noInline = true }
}

// Choose picks the catalog a turn composes with: the first catalog the client supports,
// in the client's order, that the client also sends inline or that the agent has (see
// [WithCatalogs]); else the first catalog the client sends inline. A catalog the agent has
// comes back with a nil doc. field names the capabilities in errors.
func (c *Capabilities) Choose(version, field string, opts ...ChooseOption) (id string, doc json.RawMessage, err *FieldError) {
	var ch chooser
	for _, o := range opts {
		o(&ch)
	}
	sub := field
	if version == V09 {
		sub += ".v0.9"
	}
	if ch.noInline && len(c.InlineCatalogs) > 0 {
		return "", nil, fieldErr(sub+".inlineCatalogs", "the agent does not accept inline catalogs: name the catalogs in supportedCatalogIds")
	}
	inline := func(id string) json.RawMessage {
		for _, ic := range c.InlineCatalogs {
			if ic.ID == id {
				return ic.Doc
			}
		}
		return nil
	}
	has := func(id string) bool {
		if ch.catalogs == nil {
			return IsBuiltin(version, id)
		}
		for _, a := range ch.catalogs {
			if a == id {
				return true
			}
		}
		return false
	}
	for _, id := range c.SupportedCatalogIDs {
		if d := inline(id); d != nil {
			return id, d, nil
		}
		if has(id) {
			return id, nil, nil
		}
	}
	if len(c.InlineCatalogs) > 0 {
		return c.InlineCatalogs[0].ID, c.InlineCatalogs[0].Doc, nil
	}
	known := ch.catalogs
	if known == nil {
		known = BuiltinIDs(version)
	}
	return "", nil, fieldErr(sub+".supportedCatalogIds", "none of %q is a catalog this server knows (%s); send the catalog in inlineCatalogs",
		c.SupportedCatalogIDs, strings.Join(known, ", "))
}

func decodeDoc(b []byte) map[string]any {
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		panic("a2ui: a built-in catalog is not JSON: " + err.Error())
	}
	return m
}
