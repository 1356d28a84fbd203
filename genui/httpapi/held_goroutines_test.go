package httpapi_test

import (
	"net/http"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/genuiserver/genui/genui/offline"
)

// heldInterrupt finds the call id of a pending getLocation call in a result.
var heldInterrupt = regexp.MustCompile(`\{"toolRequest":\{"name":"getLocation","input":\{\},"ref":"([^"]+)"\},"metadata":\{"interrupt":true\}\}`)

// settled waits (up to 2 s) until the number of goroutines stays the same for 100 ms,
// and returns it.
func settled() int {
	n := runtime.NumGoroutine()
	for deadline, still := time.Now().Add(2*time.Second), 0; time.Now().Before(deadline) && still < 10; {
		time.Sleep(10 * time.Millisecond)
		if m := runtime.NumGoroutine(); m != n {
			n, still = m, 0
		} else {
			still++
		}
	}
	return n
}

// TestWaitingHeldTurnHoldsNoGoroutine: a turn of a conversation the server holds that
// ends waiting for a client tool leaves nothing running once its response is read and
// the idle connections are closed; the continuation, only the tool's result, is a new
// model call from the stored state and succeeds.
func TestWaitingHeldTurnHoldsNoGoroutine(t *testing.T) {
	for _, framing := range []struct {
		name   string
		header map[string]string
	}{
		{"ndjson", nil},
		{"json", map[string]string{"Accept": "application/json"}},
	} {
		t.Run(framing.name, func(t *testing.T) {
			srv, svc := newServer(t, offline.Name)
			// A client of its own, so that closing its idle connections closes every
			// connection of this test.
			tr := &http.Transport{}
			client := &http.Client{Transport: tr}
			t.Cleanup(tr.CloseIdleConnections)
			send := func(id, extra, conv string) response {
				t.Helper()
				return postWith(t, client, srv.URL+"/generateUi", framing.header,
					genuiBody(t, `,"conversationId":"`+id+`"`+extra, conv))
			}
			call := func(id string) string {
				t.Helper()
				r := send(id, `,"clientTools":`+clientTools, userText("Where am I? Use getLocation"))
				var ids []string
				if framing.header == nil {
					ids = callIDsOf(t, r.body)
				} else {
					for _, m := range heldInterrupt.FindAllStringSubmatch(r.body, -1) {
						ids = append(ids, m[1])
					}
				}
				if r.status != 200 || len(ids) != 1 || strings.Count(r.body, `"finishReason":"interrupted"`) != 1 ||
					!strings.Contains(r.body, `{"toolRequest":{"name":"getLocation","input":{},"ref":"`+ids[0]+`"},"metadata":{"interrupt":true}}`) {
					t.Fatalf("the call: %d %v\n%s", r.status, ids, r.body)
				}
				return ids[0]
			}
			answer := func(id, callID, city string) {
				t.Helper()
				r := send(id, "", `[{"role":"user","parts":[{"type":"toolResult","callId":"`+callID+`","name":"getLocation","output":{"city":"`+city+`"}}]}]`)
				if r.status != 200 || !strings.Contains(r.body, `getLocation returned city: `+city) || !strings.Contains(r.body, `"finishReason":"stop"`) {
					t.Fatalf("the continuation: %d\n%s", r.status, r.body)
				}
			}

			// A whole round trip first, so that what starts once (lazily, for the
			// process or the service) runs before the baseline.
			answer("warm-up-"+framing.name, call("warm-up-"+framing.name), "Paris")
			tr.CloseIdleConnections()
			before := settled()
			baseline := goleak.IgnoreCurrent()

			conv := "waiting-" + framing.name
			callID := call(conv)
			tr.CloseIdleConnections()
			// goleak retries until the goroutines that are ending have ended.
			if err := goleak.Find(baseline); err != nil {
				t.Fatalf("a turn waiting for the client holds goroutines (%d before the request, %d after):\n%v", before, runtime.NumGoroutine(), err)
			}
			t.Logf("goroutines: %d before the request, %d after", before, runtime.NumGoroutine())
			if n, held, ok := svc.Conversations(); !ok || n != 2 || held == 0 {
				t.Fatalf("the service holds %d conversations (%d bytes), want 2", n, held)
			}

			// The continuation: only the result.
			answer(conv, callID, "Oslo")
			tr.CloseIdleConnections()
			if err := goleak.Find(baseline); err != nil {
				t.Fatalf("goroutines left after the continuation:\n%v", err)
			}
		})
	}
}
