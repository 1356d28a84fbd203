package a2uitest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Layouts of the schema files: the specification's and @a2ui/web_core's.
var layouts = []map[string]string{
	{
		"v0.9/server_to_client": "v0_9/json/server_to_client.json",
		"v0.9/client_to_server": "v0_9/json/client_to_server.json",
		"v0.9/common_types":     "v0_9/json/common_types.json",
		"v0.9/basic":            "v0_9/catalogs/basic/catalog.json",
		"v0.9/minimal":          "v0_9/catalogs/minimal/catalog.json",
		"v0.9/capabilities":     "v0_9/json/client_capabilities.json",
		"v0.8/server_to_client": "v0_8/json/server_to_client.json",
		"v0.8/client_to_server": "v0_8/json/client_to_server.json",
		"v0.8/standard":         "v0_8/json/standard_catalog_definition.json",
	},
	{
		"v0.9/server_to_client": "v0_9/schemas/server_to_client.json",
		"v0.9/client_to_server": "v0_9/schemas/client_to_server.json",
		"v0.9/common_types":     "v0_9/schemas/common_types.json",
		"v0.9/basic":            "v0_9/schemas/catalogs/basic/catalog.json",
		"v0.9/minimal":          "v0_9/schemas/catalogs/minimal/catalog.json",
		"v0.9/capabilities":     "v0_9/schemas/client_capabilities.json",
		"v0.8/server_to_client": "v0_8/schemas/server_to_client.json",
		"v0.8/client_to_server": "v0_8/schemas/client_to_server.json",
		"v0.8/standard":         "v0_8/schemas/standard_catalog_definition.json",
	},
}

// Spec is the specification's schema files, found once.
type Spec struct {
	Dir   string
	files map[string]string
}

var (
	specOnce sync.Once
	spec     *Spec
	specErr  error
)

// root is the module's root directory.
func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..", "..")
}

// Find locates the specification's schemas.
func Find() (*Spec, error) {
	specOnce.Do(func() {
		var dirs []string
		if d := os.Getenv("A2UI_SPEC_DIR"); d != "" {
			dirs = append(dirs, d)
		}
		dirs = append(dirs, filepath.Join(root(), "internal", "testkit", "a2uitest", "spec"))
		for _, d := range dirs {
			for _, l := range layouts {
				if _, err := os.Stat(filepath.Join(d, l["v0.9/server_to_client"])); err == nil {
					spec = &Spec{Dir: d, files: l}
					return
				}
			}
		}
		specErr = fmt.Errorf("the A2UI specification schemas are missing: looked in %v", dirs)
	})
	return spec, specErr
}

// File returns the contents of one schema file: "v0.9/server_to_client",
// "v0.9/basic", "v0.8/standard", ….
func (s *Spec) File(name string) ([]byte, error) {
	rel, ok := s.files[name]
	if !ok {
		return nil, fmt.Errorf("a2uitest: no schema file %q", name)
	}
	return os.ReadFile(filepath.Join(s.Dir, rel))
}

// FormResponse is what a model writes for a form: a sentence, then a valid v0.9 surface
// of the basic catalog (a title, an email field, a button) in an a2ui block, a message
// or component a line.
const FormResponse = "Here is the form.\n```a2ui\n" +
	`{"createSurface":{"surfaceId":"form","catalogId":"` + BasicCatalogID + `"}}` + "\n" +
	`{"updateComponents":{"surfaceId":"form","components":[` + "\n" +
	`{"id":"root","component":"Column","children":["title","email","submit"]},` + "\n" +
	`{"id":"title","component":"Text","text":"Join us","variant":"h2"},` + "\n" +
	`{"id":"email","component":"TextField","label":"Email","value":{"path":"/form/email"}},` + "\n" +
	`{"id":"submit","component":"Button","child":"submit-label","action":{"event":{"name":"join","context":{"email":{"path":"/form/email"}}}}},` + "\n" +
	`{"id":"submit-label","component":"Text","text":"Join"}` + "\n" +
	"]}}\n```\n"

// Catalogs: the ids under which tests name the catalogs of the specification.
const (
	BasicCatalogID        = "https://a2ui.org/specification/v0_9/catalogs/basic/catalog.json"
	FlutterBasicCatalogID = "https://a2ui.org/specification/v0_9/basic_catalog.json"
	MinimalCatalogID      = "https://a2ui.org/specification/v0_9/catalogs/minimal/catalog.json"
	StandardCatalogID     = "https://a2ui.org/specification/v0_8/standard_catalog_definition.json"
)

// Validator checks the messages of one version against the specification, and the
// components of surfaces against the catalogs their surfaces were created with.
type Validator struct {
	version  string
	messages *jsonschema.Schema            // server_to_client.json, v0.8; v0.9 is per catalog
	client   *jsonschema.Schema            // client_to_server.json
	byID     map[string]*jsonschema.Schema // v0.9: server_to_client.json with each catalog
	catalogs map[string]map[string]*jsonschema.Schema
	surfaces map[string]string // surface id → catalog id, from the messages seen
	// pending holds v0.8 surfaceUpdates of surfaces whose beginRendering (which names the
	// catalog) has not come yet, when more than one catalog is known.
	pending map[string][]map[string]any
}

// New returns a validator for a version ("v0.9" or "v0.8") knowing the specification's
// catalogs (the v0.9 basic catalog also under Flutter's id), plus extra catalogs in the
// specification's document form, by id.
func New(t testing.TB, version string, extra map[string][]byte) *Validator {
	t.Helper()
	v, err := newValidator(version, extra)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func newValidator(version string, extra map[string][]byte) (*Validator, error) {
	s, err := Find()
	if err != nil {
		return nil, err
	}
	v := &Validator{version: version, byID: map[string]*jsonschema.Schema{}, catalogs: map[string]map[string]*jsonschema.Schema{},
		surfaces: map[string]string{}, pending: map[string][]map[string]any{}}
	cats := map[string][]byte{}
	read := func(id, name string) error {
		b, err := s.File(name)
		if err != nil {
			return err
		}
		cats[id] = b
		return nil
	}
	if version == "v0.9" {
		for id, name := range map[string]string{BasicCatalogID: "v0.9/basic", FlutterBasicCatalogID: "v0.9/basic", MinimalCatalogID: "v0.9/minimal"} {
			if err := read(id, name); err != nil {
				return nil, err
			}
		}
	} else if err := read(StandardCatalogID, "v0.8/standard"); err != nil {
		return nil, err
	}
	for id, b := range extra {
		cats[id] = b
	}
	if version == "v0.9" {
		for id, doc := range cats {
			sch, err := compile09(s, doc)
			if err != nil {
				return nil, fmt.Errorf("catalog %s: %w", id, err)
			}
			v.byID[id] = sch
		}
		if v.client, err = compileOne(s, "v0.9/client_to_server"); err != nil {
			return nil, err
		}
		return v, nil
	}
	if v.messages, err = compileOne(s, "v0.8/server_to_client"); err != nil {
		return nil, err
	}
	if v.client, err = compileOne(s, "v0.8/client_to_server"); err != nil {
		return nil, err
	}
	for id, doc := range cats {
		comps, err := compile08(doc)
		if err != nil {
			return nil, fmt.Errorf("catalog %s: %w", id, err)
		}
		v.catalogs[id] = comps
	}
	return v, nil
}

func unmarshal(b []byte) (any, error) {
	return jsonschema.UnmarshalJSON(bytes.NewReader(b))
}

// compile09 compiles server_to_client.json with doc as "catalog.json".
func compile09(s *Spec, doc []byte) (*jsonschema.Schema, error) {
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	for name, url := range map[string]string{
		"v0.9/server_to_client": "https://a2ui.org/specification/v0_9/server_to_client.json",
		"v0.9/common_types":     "https://a2ui.org/specification/v0_9/common_types.json",
	} {
		b, err := s.File(name)
		if err != nil {
			return nil, err
		}
		d, err := unmarshal(b)
		if err != nil {
			return nil, err
		}
		if err := c.AddResource(url, d); err != nil {
			return nil, err
		}
	}
	d, err := unmarshal(doc)
	if err != nil {
		return nil, err
	}
	if m, ok := d.(map[string]any); ok {
		m["$id"] = "https://a2ui.org/specification/v0_9/catalog.json"
	}
	if err := c.AddResource("https://a2ui.org/specification/v0_9/catalog.json", d); err != nil {
		return nil, err
	}
	return c.Compile("https://a2ui.org/specification/v0_9/server_to_client.json")
}

func compileOne(s *Spec, name string) (*jsonschema.Schema, error) {
	b, err := s.File(name)
	if err != nil {
		return nil, err
	}
	d, err := unmarshal(b)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.AssertFormat()
	if name == "v0.9/client_to_server" {
		ct, err := s.File("v0.9/common_types")
		if err != nil {
			return nil, err
		}
		cd, err := unmarshal(ct)
		if err != nil {
			return nil, err
		}
		if err := c.AddResource("https://a2ui.org/specification/v0_9/common_types.json", cd); err != nil {
			return nil, err
		}
	}
	url := "urn:a2uitest:" + name
	if m, ok := d.(map[string]any); ok {
		if id, ok := m["$id"].(string); ok {
			url = id
		}
	}
	if err := c.AddResource(url, d); err != nil {
		return nil, err
	}
	return c.Compile(url)
}

// compile08 compiles each component of a v0.8 catalog ({components, styles}).
func compile08(doc []byte) (map[string]*jsonschema.Schema, error) {
	d, err := unmarshal(doc)
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	const url = "urn:a2uitest:v0.8:catalog"
	if err := c.AddResource(url, d); err != nil {
		return nil, err
	}
	out := map[string]*jsonschema.Schema{}
	m, _ := d.(map[string]any)
	comps, _ := m["components"].(map[string]any)
	for name := range comps {
		sch, err := c.Compile(url + "#/components/" + name)
		if err != nil {
			return nil, err
		}
		out[name] = sch
	}
	return out, nil
}

// Check validates one server message, and remembers the catalog of the surface it
// creates.
func (v *Validator) Check(msg []byte) error {
	d, err := unmarshal(msg)
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	m, _ := d.(map[string]any)
	if v.version == "v0.9" {
		var surface, catalogID string
		for _, op := range []string{"createSurface", "updateComponents", "updateDataModel", "deleteSurface"} {
			if body, ok := m[op].(map[string]any); ok {
				surface, _ = body["surfaceId"].(string)
				if op == "createSurface" {
					catalogID, _ = body["catalogId"].(string)
					v.surfaces[surface] = catalogID
				}
			}
		}
		if catalogID == "" {
			catalogID = v.surfaces[surface]
		}
		sch := v.byID[catalogID]
		if sch == nil {
			sch = v.byID[BasicCatalogID]
			if catalogID != "" {
				return fmt.Errorf("surface %q: catalog %q is not one the validator knows", surface, catalogID)
			}
		}
		return sch.Validate(d)
	}
	if err := v.messages.Validate(d); err != nil {
		return err
	}
	if br, ok := m["beginRendering"].(map[string]any); ok {
		sid, _ := br["surfaceId"].(string)
		id, _ := br["catalogId"].(string)
		if id == "" {
			id = StandardCatalogID
		}
		v.surfaces[sid] = id
		// The components that came before it.
		var errs []error
		for _, su := range v.pending[sid] {
			errs = append(errs, v.components08(su, id))
		}
		delete(v.pending, sid)
		return errors.Join(errs...)
	}
	su, ok := m["surfaceUpdate"].(map[string]any)
	if !ok {
		return nil
	}
	sid, _ := su["surfaceId"].(string)
	id := v.surfaces[sid]
	if id == "" {
		if len(v.catalogs) > 1 {
			v.pending[sid] = append(v.pending[sid], su) // checked when beginRendering names the catalog
			return nil
		}
		id = StandardCatalogID
	}
	return v.components08(su, id)
}

// components08 checks the components of a v0.8 surfaceUpdate against a catalog.
func (v *Validator) components08(su map[string]any, id string) error {
	comps := v.catalogs[id]
	sid, _ := su["surfaceId"].(string)
	if comps == nil {
		return fmt.Errorf("surface %q: catalog %q is not one the validator knows", sid, id)
	}
	var errs []error
	list, _ := su["components"].([]any)
	for i, e := range list {
		entry, _ := e.(map[string]any)
		w, _ := entry["component"].(map[string]any)
		for typ, props := range w {
			sch := comps[typ]
			if sch == nil {
				errs = append(errs, fmt.Errorf("components[%d]: %q is not a component of %s", i, typ, id))
				continue
			}
			if err := sch.Validate(props); err != nil {
				errs = append(errs, fmt.Errorf("components[%d] (%s): %w", i, typ, err))
			}
		}
	}
	return errors.Join(errs...)
}

// Done checks what is still held: the v0.8 components of surfaces that never got a
// beginRendering, against the standard catalog.
func (v *Validator) Done() error {
	var errs []error
	for sid, list := range v.pending {
		for _, su := range list {
			errs = append(errs, v.components08(su, StandardCatalogID))
		}
		delete(v.pending, sid)
	}
	return errors.Join(errs...)
}

// CheckClient validates one client message against client_to_server.json.
func (v *Validator) CheckClient(msg []byte) error {
	d, err := unmarshal(msg)
	if err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return v.client.Validate(d)
}

// CheckAll validates each message, failing t with every invalid one.
func (v *Validator) CheckAll(t testing.TB, msgs ...[]byte) {
	t.Helper()
	for i, m := range msgs {
		if err := v.Check(m); err != nil {
			t.Errorf("A2UI message %d is not valid against the specification: %v\n%s", i, err, m)
		}
	}
	if err := v.Done(); err != nil {
		t.Errorf("A2UI messages are not valid against the specification: %v", err)
	}
}

// Lines returns the A2UI messages among NDJSON lines: the objects without a "type" key
// (the service's own lines, text, result, error and keepalive, have one).
func Lines(ndjson []byte) [][]byte {
	var out [][]byte
	for _, l := range bytes.Split(ndjson, []byte("\n")) {
		l = bytes.TrimSpace(l)
		if len(l) == 0 {
			continue
		}
		var head struct {
			Type *string `json:"type"`
		}
		if json.Unmarshal(l, &head) == nil && head.Type == nil {
			out = append(out, l)
		}
	}
	return out
}

// Embedded returns the v0.9 A2UI server messages held anywhere in a JSON document (a
// transport's frame: a JSON-RPC notification, an SSE event, a task), in document order,
// each re-encoded.
func Embedded(doc []byte) [][]byte {
	var v any
	if json.Unmarshal(doc, &v) != nil {
		return nil
	}
	var out [][]byte
	var walk func(v any)
	walk = func(v any) {
		switch t := v.(type) {
		case map[string]any:
			if t["version"] == "v0.9" {
				for _, op := range []string{"createSurface", "updateComponents", "updateDataModel", "deleteSurface"} {
					if _, ok := t[op]; ok {
						b, _ := json.Marshal(t)
						out = append(out, b)
						return
					}
				}
			}
			keys := make([]string, 0, len(t))
			for k := range t {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(t[k])
			}
		case []any:
			for _, e := range t {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}
