package wsapi

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"testing"
	"time"

	"github.com/genuiserver/genui/genui"
)

// statuses are the canonical statuses genui/errors.go lists: the constants of type
// Status.
func statuses(t *testing.T) []genui.Status {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), "../errors.go", nil, 0)
	if err != nil {
		t.Fatalf("reading the statuses: %v", err)
	}
	var out []genui.Status
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			v := spec.(*ast.ValueSpec)
			if id, ok := v.Type.(*ast.Ident); !ok || id.Name != "Status" {
				continue
			}
			for _, val := range v.Values {
				lit, ok := val.(*ast.BasicLit)
				if !ok {
					t.Fatalf("a status that is no literal: %#v", val)
				}
				var s string
				if err := json.Unmarshal([]byte(lit.Value), &s); err != nil {
					t.Fatalf("status %s: %v", lit.Value, err)
				}
				out = append(out, genui.Status(s))
			}
		}
	}
	if len(out) < 12 {
		t.Fatalf("%d statuses in genui/errors.go, want at least 12", len(out))
	}
	return out
}

// waits are the RetryAfter of the table's cases: none, and waits that round up.
var waits = []struct {
	after time.Duration
	want  int
}{{0, 0}, {time.Nanosecond, 1}, {time.Second, 1}, {1500 * time.Millisecond, 2}, {30 * time.Second, 30}}

// Every status is a JSON-RPC code of its own row, its data names the status, and a wait
// is retryAfter, in whole seconds, at least 1.
func TestJSONRPCErrorTable(t *testing.T) {
	for _, st := range statuses(t) {
		code, ok := rpcCodes[st]
		if !ok {
			t.Errorf("%s: no JSON-RPC code", st)
			continue
		}
		for _, w := range waits {
			e := fromService(&genui.Error{Status: st, Message: "m", RetryAfter: w.after}, sameField)
			enc, _ := json.Marshal(e)
			var got struct {
				Code int `json:"code"`
				Data struct {
					Status     string `json:"status"`
					RetryAfter *int   `json:"retryAfter"`
				} `json:"data"`
			}
			if err := json.Unmarshal(enc, &got); err != nil {
				t.Fatalf("%s: %s: %v", st, enc, err)
			}
			if got.Code != code || got.Data.Status != string(st) {
				t.Errorf("%s: %s, want code %d", st, enc, code)
			}
			switch {
			case w.after > 0 && (got.Data.RetryAfter == nil || *got.Data.RetryAfter != w.want || *got.Data.RetryAfter < 1):
				t.Errorf("%s, RetryAfter %v: %s, want retryAfter %d", st, w.after, enc, w.want)
			case w.after == 0 && got.Data.RetryAfter != nil:
				t.Errorf("%s without a wait: %s", st, enc)
			}
		}
	}
}

// Every status is an error frame of its own row: recoverable ones name the session, a
// limit says when to retry; a failed effect's error carries any wait, at least 1 s.
func TestYieldErrorFrames(t *testing.T) {
	for _, st := range statuses(t) {
		kind, ok := yieldFrames[st]
		if !ok {
			t.Errorf("%s: no error frame", st)
			continue
		}
		for _, w := range waits {
			e := &genui.Error{Status: st, Message: "m", RetryAfter: w.after}
			b := appendServiceFrame(nil, e, e.Message, "session-1")
			var got struct {
				Type        string `json:"type"`
				Message     string `json:"message"`
				Recoverable *bool  `json:"recoverable"`
				SessionID   string `json:"sessionId"`
				RetryAfter  *int   `json:"retryAfter"`
			}
			if err := json.Unmarshal(b, &got); err != nil {
				t.Fatalf("%s: %s: %v", st, b, err)
			}
			if got.Type != "error" || got.Message != "m" || got.Recoverable == nil || *got.Recoverable != (kind != frameFatal) ||
				(got.SessionID == "session-1") != (kind != frameFatal) || (got.RetryAfter != nil) != (kind == frameWait) {
				t.Errorf("%s: %s (kind %d)", st, b, kind)
			}
			if w.after > 0 && got.RetryAfter != nil && *got.RetryAfter != w.want {
				t.Errorf("%s, RetryAfter %v: %s, want retryAfter %d", st, w.after, b, w.want)
			}

			b = appendEffectError(nil, e)
			var eff struct {
				Status     string `json:"status"`
				RetryAfter *int   `json:"retryAfter"`
			}
			if err := json.Unmarshal(b, &eff); err != nil {
				t.Fatalf("%s: %s: %v", st, b, err)
			}
			if eff.Status != string(st) || (w.after > 0) != (eff.RetryAfter != nil) || (eff.RetryAfter != nil && *eff.RetryAfter != w.want) {
				t.Errorf("%s, RetryAfter %v: the effect's error %s", st, w.after, b)
			}
		}
	}
}

// The frames are exactly what clients read.
func TestYieldFrameBytes(t *testing.T) {
	for _, tc := range []struct {
		e    *genui.Error
		want string
	}{
		{&genui.Error{Status: genui.StatusInvalidArgument, Message: `input.catalog: "x"`}, `{"type":"error","message":"input.catalog: \"x\"","recoverable":false}`},
		{&genui.Error{Status: genui.StatusUnavailable, Message: "retry", RetryAfter: time.Second}, `{"type":"error","message":"retry","recoverable":true,"sessionId":"session-1"}`},
		{&genui.Error{Status: genui.StatusResourceExhausted, Message: "limit", RetryAfter: 2500 * time.Millisecond}, `{"type":"error","message":"limit","recoverable":true,"sessionId":"session-1","retryAfter":3}`},
		{&genui.Error{Status: genui.StatusResourceExhausted, Message: "limit"}, `{"type":"error","message":"limit","recoverable":true,"sessionId":"session-1","retryAfter":0}`},
	} {
		if got := string(appendServiceFrame(nil, tc.e, tc.e.Message, "session-1")); got != tc.want {
			t.Errorf("%s:\n got %s\nwant %s", tc.e.Status, got, tc.want)
		}
	}
	e := &genui.Error{Status: genui.StatusResourceExhausted, Message: "too many components", RetryAfter: 100 * time.Millisecond,
		Details: map[string]any{"limit": "components"}}
	if got, want := string(appendEffectError(nil, e)), `{"status":"RESOURCE_EXHAUSTED","message":"too many components","retryAfter":1,"limit":"components"}`; got != want {
		t.Errorf("the effect's error:\n got %s\nwant %s", got, want)
	}
}
