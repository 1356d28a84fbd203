package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/firebase/genkit/go/genkit"

	"github.com/genuiserver/genui/genui"
	"github.com/genuiserver/genui/genui/httpapi"
	"github.com/genuiserver/genui/genui/models"
	"github.com/genuiserver/genui/internal/testkit/leaktest"
	"github.com/genuiserver/genui/schemas"
)

// Anything still running after the tests, apart from what lives as long as the process, is
// a leak.
func TestMain(m *testing.M) { leaktest.VerifyTestMain(m) }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// newServer serves the API with the given model over real HTTP on loopback.
func newServer(t testing.TB, model string, opts ...genui.Option) (*httptest.Server, *genui.Service) {
	t.Helper()
	return newServerWith(t, model, opts, nil)
}

// newServerWith is newServer with options for the HTTP API too.
func newServerWith(t testing.TB, model string, opts []genui.Option, hopts []httpapi.Option) (*httptest.Server, *genui.Service) {
	t.Helper()
	svc := newService(t, model, opts...)
	hopts = append([]httpapi.Option{httpapi.WithLogger(quiet), httpapi.WithBodyLimit(1 << 20)}, hopts...)
	srv := httptest.NewServer(httpapi.New(svc, hopts...))
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		http.DefaultClient.CloseIdleConnections()
	})
	return srv, svc
}

// newService returns a service generating with the named model, wired as the server wires
// it.
func newService(t testing.TB, model string, opts ...genui.Option) *genui.Service {
	t.Helper()
	plugins, err := models.Plugins(model)
	if err != nil {
		t.Fatal(err)
	}
	g := genkit.Init(context.Background(), genkit.WithPlugins(plugins...))
	m, err := models.Open(context.Background(), g, model, quiet)
	if err != nil {
		t.Fatal(err)
	}
	svc, err := genui.New(g, m, append([]genui.Option{genui.WithLogger(quiet)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

func basicCatalog(t testing.TB) map[string]any {
	t.Helper()
	c, err := schemas.SampleCatalog("basic")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustJSON(t testing.TB, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

type response struct {
	status int
	header http.Header
	body   string
}

func post(t testing.TB, u string, header map[string]string, body string) response {
	t.Helper()
	return postWith(t, http.DefaultClient, u, header, body)
}

// postWith is post through client, reading the whole body; a header given as "" is
// removed (Content-Type is application/json unless the header says otherwise).
func postWith(t testing.TB, client *http.Client, u string, header map[string]string, body string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, u, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		if v == "" {
			req.Header.Del(k)
			continue
		}
		req.Header.Set(k, v)
	}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{res.StatusCode, res.Header, string(b)}
}

func startSession(t testing.TB, base string) string {
	t.Helper()
	r := post(t, base+"/startSession", nil, `{"data":{"protocolVersion":"0.1.0","catalog":`+mustJSON(t, basicCatalog(t))+`}}`)
	if r.status != 200 {
		t.Fatalf("startSession: %d %s", r.status, r.body)
	}
	var out struct{ Result string }
	if err := json.Unmarshal([]byte(r.body), &out); err != nil {
		t.Fatal(err)
	}
	return out.Result
}

func userText(text string) string {
	return `[{"role":"user","parts":[{"type":"text","text":` + strconv.Quote(text) + `}]}]`
}

// rawChunks sends a request over a fresh connection and returns the HTTP/1.1 chunks of
// the response body exactly as the server wrote them.
func rawChunks(t testing.TB, base, path string, header map[string]string, body string) (status string, chunks []string) {
	t.Helper()
	u, _ := url.Parse(base)
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var req bytes.Buffer
	fmt.Fprintf(&req, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n", path, u.Host, len(body))
	for k, v := range header {
		fmt.Fprintf(&req, "%s: %s\r\n", k, v)
	}
	req.WriteString("\r\n" + body)
	if _, err := conn.Write(req.Bytes()); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(conn)
	status, _ = r.ReadString('\n')
	chunked := false
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == "\r\n" {
			break
		}
		if strings.EqualFold(strings.TrimSpace(line), "Transfer-Encoding: chunked") {
			chunked = true
		}
	}
	if !chunked {
		t.Fatalf("response is not chunked")
	}
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(line), 16, 64)
		if err != nil {
			t.Fatalf("bad chunk size %q", line)
		}
		if n == 0 {
			return strings.TrimSpace(status), chunks
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			t.Fatal(err)
		}
		chunks = append(chunks, string(buf[:n]))
	}
}

func TestMainEnvUntouched(t *testing.T) {
	// The offline tests must not depend on model keys of the machine.
	for _, k := range []string{"GEMINI_API_KEY", "GOOGLE_API_KEY"} {
		if os.Getenv(k) != "" {
			t.Logf("%s is set; tests pin their model explicitly", k)
		}
	}
}

func newRequest(method, u string, header map[string]string) (*http.Request, error) {
	req, err := http.NewRequest(method, u, nil)
	if err != nil {
		return nil, err
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	return req, nil
}
