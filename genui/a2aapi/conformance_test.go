package a2aapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/genuiserver/genui/genui/offline"
	"github.com/genuiserver/genui/internal/testkit/a2uitest"
	"github.com/genuiserver/genui/internal/testkit/fakegemini"
)

// The A2A cases of the official A2UI conformance suite, run against the agent over real
// HTTP (see a2ui/CONFORMANCE.md for how each action is run, and the deviations).
func TestConformance(t *testing.T) {
	offlineAgent, _ := newAgent(t, offline.Name, nil)
	var runnerOutput string
	fake := fakegemini.New(fakegemini.WithResponder(func(*fakegemini.Request) fakegemini.Reply {
		return fakegemini.Reply{Chunks: fakegemini.TextChunks(runnerOutput, 4)}
	}))
	t.Cleanup(fake.Close)
	t.Setenv("GOOGLE_GEMINI_BASE_URL", fake.URL())
	t.Setenv("GEMINI_API_KEY", "test-key")
	geminiAgent, _ := newAgent(t, "googleai/gemini-2.5-flash", nil)

	// sendWith sends a message with the extension URIs requested, and returns the
	// response's headers and its result.
	sendWith := func(uris []string, msg map[string]any) (http.Header, map[string]any) {
		hdr := map[string]string{}
		if len(uris) > 0 {
			hdr["X-A2A-Extensions"] = strings.Join(uris, ", ")
		}
		res := send(t, offlineAgent.URL+"/a2a", "message/send", map[string]any{"message": msg}, hdr)
		defer res.Body.Close()
		var out map[string]any
		if err := json.NewDecoder(res.Body).Decode(&out); err != nil {
			t.Fatal(err)
		}
		r, _ := out["result"].(map[string]any)
		return res.Header, r
	}
	activated := func(uris []string) string {
		h, _ := sendWith(uris, message(text("Hello")))
		return h.Get("X-A2A-Extensions")
	}
	extOf := map[string]string{"0.8": extV08, "0.9": extV09, "0.9.1": extV091}

	runners := map[string]a2uitest.Runner{
		// The MIME type of the DataParts of the version the request activates.
		"create_a2ui_part": func(c a2uitest.Case) string {
			args, want := asMap(c["args"]), asMap(c["expect"])["mime_type"]
			var uris []string
			if v, ok := args["version"].(string); ok {
				uris = []string{extOf[v]}
			}
			_, r := sendWith(uris, message(text("Hello")))
			for _, p := range statusParts(r) {
				if p["kind"] == "data" {
					if got := asMap(p["metadata"])["mimeType"]; got != want {
						return fmt.Sprintf("mimeType %v, expected %v", got, want)
					}
					return ""
				}
			}
			return "no DataPart: " + string(mustJSON(r))
		},
		// A DataPart of the MIME type, holding an A2UI action, is read as one.
		"is_a2ui_part": func(c a2uitest.Case) string {
			mime := asMap(c["args"])["mime_type"]
			part := map[string]any{"kind": "data", "metadata": map[string]any{"mimeType": mime}, "data": map[string]any{
				"version": "v0.9", "action": map[string]any{"name": "probe", "surfaceId": "elsewhere", "sourceComponentId": "b", "timestamp": "2026-11-28T00:00:00Z", "context": map[string]any{}}}}
			_, r := sendWith([]string{extV09}, message(part))
			read := strings.Contains(string(mustJSON(r)), `the action \"probe\"`)
			if want, _ := c["expect"].(bool); read != want {
				return fmt.Sprintf("read as an A2UI action: %v, expected %v: %s", read, want, mustJSON(r))
			}
			return ""
		},
		"try_activate_extension": func(c a2uitest.Case) string {
			got := activated(stringsOf(asMap(c["args"])["uris"])) != ""
			if want, _ := c["expect"].(bool); got != want {
				return fmt.Sprintf("activated: %v, expected %v", got, want)
			}
			return ""
		},
		"try_activate": func(c a2uitest.Case) string {
			args, want := asMap(c["args"]), asMap(c["expect"])
			requested := stringsOf(args["requested"])
			got := activated(requested)
			exp, _ := want["activated"].(string)
			if got != exp {
				return fmt.Sprintf("activated %q, expected %q", got, exp)
			}
			if v, ok := want["version"].(string); ok {
				// The turn speaks the activated version (its first message one of v0.8's,
				// or not).
				_, r := sendWith(requested, message(text("Hello")))
				d := dataParts([]event{{Result: r}})
				if len(d) == 0 || (v == "0.8") != (d[0]["beginRendering"] != nil || d[0]["surfaceUpdate"] != nil || d[0]["dataModelUpdate"] != nil) {
					return fmt.Sprintf("version %s: %s", v, mustJSON(d))
				}
			}
			return ""
		},
		"select_newest": func(c a2uitest.Case) string {
			args := asMap(c["args"])
			got := activated(stringsOf(args["requested"]))
			if want := asMap(c["expect"])["newest"]; got != want {
				return fmt.Sprintf("activated %q, expected %v", got, want)
			}
			return ""
		},
		// The case's request, answered by a model that writes the runner's output.
		"handle_rpc": func(c a2uitest.Case) string {
			args := asMap(c["args"])
			runnerOutput, _ = args["runner_output"].(string)
			params := asMap(asMap(args["request"])["params"])
			msg := map[string]any{}
			for k, v := range asMap(params["message"]) {
				msg[k] = v
			}
			msg["role"], msg["kind"], msg["messageId"] = "user", "message", "m-conformance"
			if len(asList(msg["parts"])) == 0 {
				// The agent answers the runner's output, whatever the request says; it
				// refuses a message without parts.
				msg["parts"] = []any{text("Go on.")}
			}
			res := send(t, geminiAgent.URL+"/a2a", "message/send", map[string]any{"message": msg}, nil)
			defer res.Body.Close()
			var out map[string]any
			_ = json.NewDecoder(res.Body).Decode(&out)
			r, _ := out["result"].(map[string]any)
			var got []any
			for _, p := range statusParts(r) {
				q := map[string]any{"kind": p["kind"]}
				switch p["kind"] {
				case "text":
					q["text"] = strings.TrimSpace(p["text"].(string))
				case "data":
					q["data"], q["mimeType"] = p["data"], asMap(p["metadata"])["mimeType"]
				}
				got = append(got, q)
			}
			want := asList(asMap(c["expect"])["parts"])
			for _, w := range want {
				if wm := asMap(w); wm["text"] != nil {
					wm["text"] = strings.TrimSpace(wm["text"].(string))
				}
			}
			if !reflect.DeepEqual(got, want) {
				return fmt.Sprintf("parts %s (state %s), expected %s", mustJSON(got), state(r), mustJSON(want))
			}
			return ""
		},
	}
	a2uitest.RunSuite(t, map[string]map[string]a2uitest.Runner{"extensions/a2a/a2a_integration.yaml": runners})
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func stringsOf(v any) []string {
	var out []string
	for _, e := range asList(v) {
		if s, ok := e.(string); ok {
			out = append(out, s)
		}
	}
	return out
}
