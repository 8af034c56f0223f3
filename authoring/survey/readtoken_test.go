package survey

import (
	"context"
	"encoding/base64"
	"encoding/pem"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const gitHTTPBackend = "/usr/lib/git-core/git-http-backend"

// privateGitServer serves one bare repository over https (git's smart HTTP through
// git-http-backend) to requests that carry the token, and records every Authorization
// header it is sent.
type privateGitServer struct {
	srv   *httptest.Server
	token string

	mu   sync.Mutex
	seen []string
}

func newPrivateGitServer(t *testing.T, token string) (*privateGitServer, string) {
	t.Helper()
	if _, err := os.Stat(gitHTTPBackend); err != nil {
		t.Skipf("git-http-backend not installed: %v", err)
	}
	root := t.TempDir()
	work := filepath.Join(t.TempDir(), "shop")
	for _, args := range [][]string{
		{"init", "--quiet", "-b", "main", work},
		{"-C", work, "-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "--quiet", "--allow-empty", "-m", "base"},
		{"clone", "--quiet", "--bare", work, filepath.Join(root, "acme", "shop.git")},
	} {
		if out, err := exec.Command("git", args...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	p := &privateGitServer{token: token}
	backend := &cgi.Handler{Path: gitHTTPBackend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	want := "Basic " + base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token))
	p.srv = httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got := r.Header.Get("Authorization")
		p.mu.Lock()
		p.seen = append(p.seen, got)
		p.mu.Unlock()
		if got != want {
			w.Header().Set("WWW-Authenticate", `Basic realm="private"`)
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	}))
	t.Cleanup(p.srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: p.srv.Certificate().Raw}), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_SSL_CAINFO", ca)
	return p, p.srv.URL + "/acme/shop.git"
}

// A private https repository is read with the read token and refused without it; the token
// never lands in the clone's config, and a token is never sent over anything but https.
func TestFetchPrivateRepositoryWithReadToken(t *testing.T) {
	const token = "ghp_readonly_test_token_not_a_secret"
	p, repoURL := newPrivateGitServer(t, token)
	ctx := context.Background()

	src, err := ResolveSource(ctx, repoURL, "HEAD", "")
	if err != nil {
		t.Fatal(err)
	}
	if err := src.Fetch(ctx, t.TempDir(), ""); err == nil {
		t.Fatal("a private repository was cloned without a token")
	}

	src, _ = ResolveSource(ctx, repoURL, "HEAD", "")
	cache := t.TempDir()
	if err := src.Fetch(ctx, cache, token); err != nil {
		t.Fatalf("clone with the read token: %v", err)
	}
	if _, err := src.resolveBase(ctx); err != nil {
		t.Fatalf("the clone has no base commit: %v", err)
	}
	// Fetching again (an existing clone) sends it too.
	if err := src.Fetch(ctx, cache, token); err != nil {
		t.Fatalf("second fetch: %v", err)
	}
	err = filepath.WalkDir(cache, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err == nil && (strings.Contains(string(b), token) || strings.Contains(string(b), base64.StdEncoding.EncodeToString([]byte("x-access-token:"+token)))) {
			t.Errorf("the token was written to %s", path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	authorized := 0
	for _, h := range p.seen {
		if h != "" {
			authorized++
		}
	}
	p.mu.Unlock()
	if authorized == 0 {
		t.Fatal("the server never saw the token")
	}

	for _, bad := range []string{"ssh://git@example.com/acme/shop.git", "file:///tmp/acme/shop.git"} {
		if _, err := readCredential(bad, token); err == nil {
			t.Errorf("a token would be sent to %s", bad)
		}
	}
	if _, err := readCredential(repoURL, "tok\nen"); err == nil {
		t.Error("a token with a line break was accepted")
	}
	env, err := readCredential(repoURL, token)
	if err != nil || len(env) != 3 || !strings.HasSuffix(env[1], strings.TrimPrefix(p.srv.URL, "https://")+"/acme/shop.git.extraHeader") {
		t.Errorf("credential scoped as %v (%v), want to %s only", env, err, repoURL)
	}
}
