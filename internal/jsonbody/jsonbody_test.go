package jsonbody_test

import (
	"testing"

	"github.com/genuiserver/genui/internal/jsonbody"
)

// A type error names the field at its exact place, as the request's schema locates it.
func TestDecodeNamesTheField(t *testing.T) {
	type part struct {
		Text string `json:"text"`
	}
	type req struct {
		Messages []struct {
			Parts []part `json:"parts"`
		} `json:"messages"`
	}
	s := jsonbody.NewSchema(req{})
	for body, want := range map[string]string{
		`{"messages":[{"parts":[{"text":"a"}]},{"parts":[{"text":5}]}]}`: "messages[1].parts[0].text",
		"{\"messages\":[{\"parts\":[{\"text\":\"caf\xe9\"}]}]}":          "messages[0].parts[0].text",
		`{"messages":{}}`: "messages",
	} {
		var r req
		e := jsonbody.Decode([]byte(body), &r, s)
		if e == nil {
			t.Errorf("%s: decoded", body)
			continue
		}
		if d, _ := e.Details.(map[string]any); d["field"] != want {
			t.Errorf("%s: %+v, want field %s", body, e, want)
		}
	}
}
