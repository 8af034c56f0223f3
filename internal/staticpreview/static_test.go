package staticpreview

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/localgit"
)

// commitWithSymlink makes a bare remote whose one commit holds index.html, a symlink to a
// secret outside the repository, and a symlink to index.html inside it.
func commitWithSymlink(t *testing.T, secret string) (localgit.Remotes, string) {
	t.Helper()
	ctx := context.Background()
	src := t.TempDir()
	if err := os.WriteFile(filepath.Join(src, "index.html"), []byte("<h1>hello</h1>"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"key.pem": secret, "home.html": "index.html"} {
		if err := os.Symlink(target, filepath.Join(src, name)); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"init", "--quiet"}, {"add", "."},
		{"-c", "user.name=t", "-c", "user.email=t@example.org", "commit", "--quiet", "-m", "site"}} {
		if _, err := localgit.Git(ctx, src, args...); err != nil {
			t.Fatal(err)
		}
	}
	sha, err := localgit.Git(ctx, src, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	remotes := localgit.Remotes{Root: t.TempDir()}
	if _, err := remotes.Ensure(ctx, "local", "site", src); err != nil {
		t.Fatal(err)
	}
	return remotes, strings.TrimSpace(sha)
}

func fetch(t *testing.T, rawURL, host string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, rawURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func TestPreviewServesNoSymlinkOutOfTheCheckout(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "control.key")
	if err := os.WriteFile(secret, []byte("CONTROL PRIVATE KEY"), 0o600); err != nil {
		t.Fatal(err)
	}
	remotes, sha := commitWithSymlink(t, secret)
	p := &Previews{Remotes: remotes, JobsDir: t.TempDir()}
	res, err := p.Start(context.Background(), capability.PreviewRequest{ContractID: "c1", Attempt: 1, Try: 1,
		Repo: contracts.Repo{Owner: "local", Name: "site"}, CommitSHA: sha})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Stop(context.Background(), res.PreviewID) })

	if code, body := fetch(t, res.URL+"/key.pem", ""); code == http.StatusOK || strings.Contains(body, "PRIVATE KEY") {
		t.Fatalf("served the secret through a committed symlink: %d %q", code, body)
	}
	if code, body := fetch(t, res.URL+"/home.html", ""); code != http.StatusOK || !strings.Contains(body, "hello") {
		t.Fatalf("a symlink inside the checkout: %d %q", code, body)
	}
	if code, _ := fetch(t, res.URL+"/__verification", ""); code != http.StatusOK {
		t.Fatalf("/__verification: %d", code)
	}
	u, _ := url.Parse(res.URL)
	if code, _ := fetch(t, res.URL+"/index.html", "evil.example:"+u.Port()); code != http.StatusMisdirectedRequest {
		t.Fatalf("foreign Host: %d, want 421", code)
	}
	if code, _ := fetch(t, res.URL+"/index.html", "localhost:"+u.Port()); code != http.StatusOK {
		t.Fatalf("localhost Host: %d, want 200", code)
	}
}
