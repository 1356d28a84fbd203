// Package policytest holds a hostile corpus of model output for tests of the UI policy:
// surfaces, each valid against its catalog, that a model led by a prompt injection could
// write, each with one thing the policy must keep from the client, and the model's
// repair.
package policytest

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/genuiserver/genui/a2ui/spec"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
	"github.com/genuiserver/genui/policy"
	"github.com/genuiserver/genui/schemas"
)

//go:embed corpus.json
var corpusJSON []byte

// Needle is in everything the policy must keep from the client, and in nothing else.
const Needle = "PWN"

// Vector is one model output of the corpus.
type Vector struct {
	Name string `json:"name"`
	// Version is the A2UI version, or "genui" for a surface of a genui widget catalog.
	Version string `json:"version"`
	// Catalog names the sample genui catalog ("basic", "rich").
	Catalog string `json:"catalog,omitempty"`
	// Code is the code of the violation the policy reports.
	Code string `json:"code"`
	// Components of surface "s" besides its root, which shows "x".
	Components []json.RawMessage `json:"components,omitempty"`
	// Raw: the components are strings holding the JSON as the model writes it.
	Raw bool `json:"raw,omitempty"`
	// Data: the bodies of data-model messages (without surfaceId), sent before the
	// components, or after them when DataAfter.
	Data      []map[string]any `json:"data,omitempty"`
	DataAfter bool             `json:"dataAfter,omitempty"`
	// Theme of the v0.9 createSurface.
	Theme map[string]any `json:"theme,omitempty"`
	// Widgets of a genui surface besides its root, which shows "x".
	Widgets []any `json:"widgets,omitempty"`
}

// Corpus returns the vectors.
func Corpus() []Vector {
	var vs []Vector
	if err := json.Unmarshal(corpusJSON, &vs); err != nil {
		panic("policytest: corpus.json: " + err.Error())
	}
	for i := range vs {
		if vs[i].Raw {
			for j, c := range vs[i].Components {
				var s string
				if err := json.Unmarshal(c, &s); err != nil {
					panic(fmt.Sprintf("policytest: %s: %v", vs[i].Name, err))
				}
				vs[i].Components[j] = json.RawMessage(s)
			}
		}
	}
	return vs
}

// Policy is the policy the corpus is judged by: the default one, with hosts listed and
// every function of the basic catalog but formatDate.
func Policy() *policy.Policy {
	p, err := policy.New(policy.WithHosts("example.com", "*.example.com"),
		policy.WithFunctions("required", "regex", "length", "numeric", "email", "formatString", "formatNumber", "formatCurrency", "pluralize", "openUrl", "and", "or", "not"))
	if err != nil {
		panic(err)
	}
	return p
}

// PolicyFile is [Policy] as a policy file.
const PolicyFile = `{"urlHosts":["example.com","*.example.com"],"functions":["required","regex","length","numeric","email","formatString","formatNumber","formatCurrency","pluralize","openUrl","and","or","not"]}`

// PolicySettings are the server settings of [Policy].
var PolicySettings = []string{"--url-hosts", "example.com,*.example.com",
	"--policy-functions", "required,regex,length,numeric,email,formatString,formatNumber,formatCurrency,pluralize,openUrl,and,or,not"}

// A2UI reports whether the vector is A2UI (else a genui surface).
func (v *Vector) A2UI() bool { return v.Version != "genui" }

// Messages returns the A2UI messages of the vector, as a model writes them (v0.9
// messages carry their version).
func (v *Vector) Messages() []string {
	if v.Version == "v0.8" {
		comps := append([]json.RawMessage{json.RawMessage(`{"id":"root","component":{"Column":{"children":{"explicitList":["x"]}}}}`)}, v.Components...)
		update := `{"surfaceUpdate":{"surfaceId":"s","components":[` + join(comps) + `]}}`
		var data []string
		for _, d := range v.Data {
			body := map[string]any{"surfaceId": "s"}
			for k, x := range d {
				body[k] = x
			}
			data = append(data, marshal(map[string]any{"dataModelUpdate": body}))
		}
		out := []string{update}
		if v.DataAfter {
			out = append(out, `{"beginRendering":{"surfaceId":"s","root":"root"}}`)
			return append(out, data...)
		}
		out = append(data, out...)
		return append(out, `{"beginRendering":{"surfaceId":"s","root":"root"}}`)
	}
	create := map[string]any{"surfaceId": "s", "catalogId": spec.BasicCatalogID}
	if v.Theme != nil {
		create["theme"] = v.Theme
	}
	out := []string{marshal(map[string]any{"version": "v0.9", "createSurface": create})}
	var data []string
	for _, d := range v.Data {
		body := map[string]any{"surfaceId": "s"}
		for k, x := range d {
			body[k] = x
		}
		data = append(data, marshal(map[string]any{"version": "v0.9", "updateDataModel": body}))
	}
	comps := append([]json.RawMessage{json.RawMessage(`{"id":"root","component":"Column","children":["x"]}`)}, v.Components...)
	update := `{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[` + join(comps) + `]}}`
	if v.DataAfter {
		return append(append(out, update), data...)
	}
	return append(append(out, data...), update)
}

// ModelText is what the model writes for an A2UI vector: a sentence and the messages in
// an ```a2ui block.
func (v *Vector) ModelText() string {
	return "Here it is.\n```a2ui\n" + strings.Join(v.Messages(), "\n") + "\n```\n"
}

// Repair is the model's repair of an A2UI vector: "x" as a safe image (the surface
// created again when the policy kept its createSurface from the client).
func (v *Vector) Repair() string {
	var msgs []string
	if v.Version == "v0.8" {
		msgs = []string{`{"surfaceUpdate":{"surfaceId":"s","components":[{"id":"x","component":{"Image":{"url":{"literalString":"https://images.example.com/ok.png"},"altText":{"literalString":"A safe picture"}}}}]}}`}
	} else {
		if v.Theme != nil {
			msgs = append(msgs, `{"version":"v0.9","createSurface":{"surfaceId":"s","catalogId":"`+spec.BasicCatalogID+`","theme":{"iconUrl":"https://images.example.com/icon.png"}}}`,
				`{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"root","component":"Column","children":["x"]}]}}`)
		}
		msgs = append(msgs, `{"version":"v0.9","updateComponents":{"surfaceId":"s","components":[{"id":"x","component":"Image","url":"https://images.example.com/ok.png","description":"A safe picture"}]}}`)
	}
	return "Fixed.\n```a2ui\n" + strings.Join(msgs, "\n") + "\n```\n"
}

// Safe is what only a repair shows: the safe image's URL.
const Safe = "https://images.example.com/ok.png"

// Surface returns the addOrUpdateSurface input of a genui vector.
func (v *Vector) Surface() map[string]any {
	widgets := append([]any{map[string]any{"id": "root", "widget": map[string]any{"Column": map[string]any{"children": []any{"x"}}}}}, v.Widgets...)
	return map[string]any{"surfaceId": "s", "definition": map[string]any{"root": "root", "widgets": widgets}}
}

// RepairSurface returns the addOrUpdateSurface input of a genui vector's repair.
func (v *Vector) RepairSurface() map[string]any {
	img := map[string]any{"url": Safe}
	if v.Catalog == "rich" {
		img["alt"] = "A safe picture"
	}
	widgets := []any{
		map[string]any{"id": "root", "widget": map[string]any{"Column": map[string]any{"children": []any{"x"}}}},
		map[string]any{"id": "x", "widget": map[string]any{"Image": img}},
	}
	return map[string]any{"surfaceId": "s", "definition": map[string]any{"root": "root", "widgets": widgets}}
}

func join(list []json.RawMessage) string {
	parts := make([]string, len(list))
	for i, c := range list {
		parts[i] = string(c)
	}
	return strings.Join(parts, ",")
}

func marshal(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// CheckRepair checks the model calls of a vector's turn: two, the second telling the
// model of the vector's violation (for A2UI, its code in the last user message; for a
// genui surface, a rejected addOrUpdateSurface whose violations carry the code).
func (v *Vector) CheckRepair(reqs []*fakegemini.Request) error {
	if len(reqs) != 2 {
		return fmt.Errorf("%d model calls, want 2 (the output, its repair)", len(reqs))
	}
	if v.A2UI() {
		if text := reqs[1].LastUserText(); !strings.Contains(text, " ["+v.Code+"]") {
			return fmt.Errorf("the repair request does not name [%s]:\n%s", v.Code, text)
		}
		return nil
	}
	frs := reqs[1].FunctionResponses()
	for _, fr := range frs {
		if fr.Name != "addOrUpdateSurface" || fr.Response["status"] != "rejected" {
			continue
		}
		vs, _ := fr.Response["violations"].([]any)
		for _, x := range vs {
			if m, ok := x.(map[string]any); ok && m["code"] == v.Code {
				return nil
			}
		}
	}
	b, _ := json.Marshal(frs)
	return fmt.Errorf("no rejected addOrUpdateSurface with a %s violation in the repair request: %s", v.Code, b)
}

// CheckReceived checks what a client received of a vector's turn: nothing with the
// Needle, and the repair's Safe image.
func CheckReceived(received string) error {
	if i := strings.Index(received, Needle); i >= 0 {
		return fmt.Errorf("what the policy refuses reached the client: …%s…", received[max(i-300, 0):min(i+100, len(received))])
	}
	if !strings.Contains(received, Safe) {
		return fmt.Errorf("the repair (%s) did not reach the client:\n%s", Safe, received)
	}
	return nil
}

// Replies are the model's two answers of a vector's turn, for the fake Gemini: what the
// policy refuses, then its repair.
func (v *Vector) Replies() []fakegemini.Reply {
	if v.A2UI() {
		return []fakegemini.Reply{fakegemini.Respond(fakegemini.TextChunks(v.ModelText(), 5)...),
			fakegemini.Respond(fakegemini.TextChunks(v.Repair(), 3)...)}
	}
	return []fakegemini.Reply{fakegemini.Respond(fakegemini.FunctionCall("addOrUpdateSurface", v.Surface())),
		fakegemini.Respond(fakegemini.FunctionCall("addOrUpdateSurface", v.RepairSurface()))}
}

// CatalogJSON returns the sample catalog of a genui vector, as a request carries it.
func (v *Vector) CatalogJSON() string {
	c, err := schemas.SampleCatalog(v.Catalog)
	if err != nil {
		panic(err)
	}
	return marshal(c)
}
