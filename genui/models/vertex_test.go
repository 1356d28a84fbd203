package models_test

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"sync"
	"testing"

	"github.com/genuiserver/genui/internal/testkit/fakegemini"
)

// Vertex AI speaks Gemini's request and response bodies on another URL and with another
// credential: the genai client (v1.77.0) posts to
// {base}/v1beta1/projects/{p}/locations/{l}/publishers/google/models/{m}:streamGenerateContent?alt=sse
// with an OAuth access token from Application Default Credentials, not an API key.
// vertexFront is that endpoint in front of fakegemini: it refuses any other path or
// credential, and passes the rest on as the Gemini API's. The credential is a service
// account whose token_uri is a local token endpoint.

var vertexPath = regexp.MustCompile(`^/v1beta1/projects/test-project/locations/europe-west4/publishers/google/models/([^/:]+):(streamGenerateContent|generateContent)$`)

// seenRequest is what vertexFront saw of a request.
type seenRequest struct{ method, path, auth, quotaProject, apiKey string }

type vertexFake struct {
	geminiFake
	mu     sync.Mutex
	seen   []seenRequest
	tokens int
}

var (
	saKeyOnce sync.Once
	saKey     []byte
)

// serviceAccount writes a service account key file whose tokens come from tokenURL.
func serviceAccount(t *testing.T, tokenURL string) string {
	saKeyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		saKey = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: must(x509.MarshalPKCS8PrivateKey(k))})
	})
	b, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "test-project",
		"private_key_id": "key-1", "private_key": string(saKey), "client_email": "genui@test-project.iam.gserviceaccount.com",
		"client_id": "1", "token_uri": tokenURL, "quota_project_id": "test-project"})
	path := filepath.Join(t.TempDir(), "sa.json")
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func startVertex(t *testing.T) scripted {
	gem := fakegemini.New()
	t.Cleanup(gem.Close)
	f := &vertexFake{geminiFake: geminiFake{gem}}
	token := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = r.ParseForm()
		if r.Form.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" || r.Form.Get("assertion") == "" {
			http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		f.tokens++
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"access_token":"ya29.fake-token","token_type":"Bearer","expires_in":3600}`)
	}))
	t.Cleanup(token.Close)
	target, _ := url.Parse(gem.URL())
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.FlushInterval = -1
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.seen = append(f.seen, seenRequest{r.Method, r.URL.Path, r.Header.Get("Authorization"),
			r.Header.Get("X-Goog-User-Project"), r.URL.Query().Get("key") + r.Header.Get("X-Goog-Api-Key")})
		f.mu.Unlock()
		m := vertexPath.FindStringSubmatch(r.URL.Path)
		switch {
		case m == nil:
			http.Error(w, `{"error":{"code":404,"message":"not a Vertex AI path","status":"NOT_FOUND"}}`, http.StatusNotFound)
		case r.Header.Get("Authorization") != "Bearer ya29.fake-token":
			http.Error(w, `{"error":{"code":401,"message":"no access token","status":"UNAUTHENTICATED"}}`, http.StatusUnauthorized)
		default:
			r.URL.Path = "/v1beta/models/" + m[1] + ":" + m[2]
			r.Header.Del("Authorization")
			r.Header.Set("X-Goog-Api-Key", "vertex-front")
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(front.Close)
	t.Setenv("GOOGLE_VERTEX_BASE_URL", front.URL)
	t.Setenv("GOOGLE_CLOUD_PROJECT", "test-project")
	t.Setenv("GOOGLE_CLOUD_LOCATION", "europe-west4")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", serviceAccount(t, token.URL+"/token"))
	for _, k := range []string{"GEMINI_API_KEY", "GOOGLE_API_KEY", "GOOGLE_GEMINI_BASE_URL", "GOOGLE_GENAI_USE_VERTEXAI"} {
		t.Setenv(k, "")
	}
	return f
}

func (f *vertexFake) check(t *testing.T) {
	f.geminiFake.check(t)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, r := range f.seen {
		if r.method != http.MethodPost || !vertexPath.MatchString(r.path) || r.auth != "Bearer ya29.fake-token" ||
			r.quotaProject != "test-project" || r.apiKey != "" {
			t.Errorf("a Vertex AI request: %+v", r)
		}
	}
	if f.tokens != 1 || len(f.seen) != f.calls() {
		t.Errorf("%d tokens fetched, %d requests, %d served", f.tokens, len(f.seen), f.calls())
	}
}
