package streamresp_test

import (
	"bufio"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/genuiserver/genui/internal/streamresp"
)

// Each write reaches the client at once, a silent stream gets keepalives, and Close
// writes the last bytes.
func TestWriter(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		sw, err := streamresp.Start(w, 30*time.Millisecond, []byte(": keepalive\n\n"))
		if err != nil {
			t.Error(err)
			return
		}
		_ = sw.Write([]byte("data: 1\n\n"))
		<-release
		_ = sw.Close([]byte("data: 2\n\n"))
	}))
	defer srv.Close()
	res, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	r := bufio.NewReader(res.Body)
	line, _ := r.ReadString('\n')
	if line != "data: 1\n" {
		t.Fatalf("first line %q", line)
	}
	r.ReadString('\n')
	line, _ = r.ReadString('\n')
	if !strings.HasPrefix(line, ": keepalive") {
		t.Fatalf("no keepalive while silent: %q", line)
	}
	close(release)
	var rest strings.Builder
	for {
		l, err := r.ReadString('\n')
		rest.WriteString(l)
		if err != nil {
			break
		}
	}
	if !strings.Contains(rest.String(), "data: 2\n\n") {
		t.Fatalf("rest %q", rest.String())
	}
}
