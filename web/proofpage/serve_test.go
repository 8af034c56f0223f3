package proofpage

import (
	"bytes"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/signoff/signoff/internal/proofstore"
)

func TestHandler(t *testing.T) {
	r := buildRuns(t, nil)
	h, err := NewHandler(Config{Root: r.root, Options: keys()})
	if err != nil {
		t.Fatal(err)
	}
	// A secret beside the store and a symlink pointing at it.
	secret := filepath.Join(filepath.Dir(r.root), "secret.key")
	_ = os.WriteFile(secret, []byte("s"), 0o600)
	t.Cleanup(func() { os.Remove(secret) })
	_ = os.Symlink(secret, filepath.Join(r.w1.Dirs[0], "leak.png"))
	srv := httptest.NewServer(h)
	defer srv.Close()
	get := func(path string) (int, string, http.Header) {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		req.URL.Opaque = path // send the path as written, dot segments included
		client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp.StatusCode, b.String(), resp.Header
	}
	w1 := r.w1.Contract.ContractID
	shot := r.w1.Evidence[0].Artifacts[0].Name
	for _, c := range []struct {
		path string
		code int
		ct   string
	}{
		{"/proofs/", 200, "text/html; charset=utf-8"},
		{"/proofs/" + w1 + "/", 200, "text/html; charset=utf-8"},
		{"/proofs/" + w1, 301, ""},
		{"/proofs/" + w1 + "/attempt-1/try-1/" + shot, 200, "image/png"},
		{"/proofs/" + w1 + "/attempt-1/try-1/trace-loads-mobile.zip", 200, "application/zip"},
		{"/proofs/" + w1 + "/attempt-1/try-1/bundle.json", 200, "application/json"},
		{"/proofs/" + w1 + "/base/" + shot, 200, "image/png"},
		{"/proofs/" + w1 + "/attempt-1/try-1/leak.png", 404, ""},
		{"/proofs/" + w1 + "/attempt-1/try-1/../../../secret.key", 404, ""},
		{"/proofs/" + w1 + "/attempt-1/try-1/.bundle.json.tmp", 404, ""},
		{"/proofs/" + w1 + "/attempt-1/", 404, ""},
		{"/proofs/" + w1 + "/jobs/x.png", 404, ""},
		{"/proofs/nope/", 404, ""},
		{"/proofs/..%2f/", 404, ""},
		{"/proofs/_trace/index.html", 404, ""},
	} {
		code, _, hdr := get(c.path)
		if code != c.code {
			t.Errorf("GET %s: %d, want %d", c.path, code, c.code)
		}
		if c.ct != "" && hdr.Get("Content-Type") != c.ct {
			t.Errorf("GET %s: content type %q, want %q", c.path, hdr.Get("Content-Type"), c.ct)
		}
	}
	_, list, _ := get("/proofs/")
	if !strings.Contains(list, `href="`+w1+`/"`) || !strings.Contains(list, `href="`+w2ID+`/"`) {
		t.Errorf("proof list does not link both contracts")
	}
	resp, err := http.Post(srv.URL+"/proofs/", "text/plain", nil)
	if err == nil {
		resp.Body.Close()
		if resp.StatusCode != http.StatusMethodNotAllowed {
			t.Errorf("POST: %d", resp.StatusCode)
		}
	}
	// Limited to one contract, the other is not served.
	h2, _ := NewHandler(Config{Root: r.root, Contracts: []string{w1}})
	rec := httptest.NewRecorder()
	h2.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/proofs/"+w2ID+"/", nil))
	if rec.Code != 404 {
		t.Errorf("a contract outside the allow-list is served: %d", rec.Code)
	}
}

// TestStaticSite renders the static folder and checks that every link and image on every page
// resolves to a file in it.
func TestStaticSite(t *testing.T) {
	r := buildRuns(t, nil)
	out := filepath.Join(t.TempDir(), "site")
	res, err := RenderSite(r.root, []string{r.w1.Contract.ContractID, w2ID}, out, keys())
	if err != nil {
		t.Fatal(err)
	}
	if res.Verified == nil || !*res.Verified {
		t.Fatalf("static render of intact proofs not verified: %+v", res)
	}
	ref := regexp.MustCompile(`(?:src|href)="([^"#:]+)"`)
	checked := 0
	for _, page := range res.Pages {
		html, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range ref.FindAllStringSubmatch(string(html), -1) {
			target := filepath.Join(filepath.Dir(page), filepath.FromSlash(strings.ReplaceAll(m[1], "&#43;", "+")))
			if _, err := os.Stat(target); err != nil {
				t.Errorf("%s links %s, which the site does not hold", page, m[1])
			}
			checked++
		}
		if strings.Contains(string(html), "_trace/") {
			t.Errorf("%s links the trace viewer, which a static folder cannot serve", page)
		}
	}
	if checked < 30 {
		t.Fatalf("only %d links checked", checked)
	}
	// The copied proof verifies on its own.
	cr, err := proofstore.VerifyContractDir(filepath.Join(out, w2ID), keys().VerifierKey, keys().ControlKey)
	if err != nil || !cr.OK {
		t.Fatalf("the static site's copy does not verify: %v %+v", err, cr.Checks)
	}
	t.Logf("static site: %d pages, %d files copied, %d links resolved", len(res.Pages), res.Files, checked)
}

func TestResolve(t *testing.T) {
	r := buildRuns(t, nil)
	w1 := r.w1.Contract.ContractID
	for _, c := range []struct {
		dir   string
		slugs []string
	}{
		{r.root, []string{w1, w2ID}},
		{filepath.Join(r.root, w1), []string{w1}},
		{r.w2.Dirs[1], []string{w2ID}},
	} {
		root, slugs, err := Resolve(c.dir)
		if err != nil {
			t.Fatalf("%s: %v", c.dir, err)
		}
		if root != r.root || strings.Join(slugs, ",") != strings.Join(c.slugs, ",") {
			t.Errorf("%s: root %s slugs %v", c.dir, root, slugs)
		}
	}
	if _, _, err := Resolve(t.TempDir()); err == nil {
		t.Error("an empty folder resolved")
	}
}

// A proof folder whose artifact was swapped for a symlink leading out of it is still rendered:
// the link is not followed or copied, and the page says the proof does not verify.
func TestStaticSiteFlagsASymlinkedArtifact(t *testing.T) {
	r := buildRuns(t, nil)
	w1 := r.w1.Contract.ContractID
	var shot string
	_ = filepath.WalkDir(filepath.Join(r.root, w1), func(p string, d fs.DirEntry, err error) error {
		if err == nil && shot == "" && strings.HasSuffix(p, ".png") {
			shot = p
		}
		return nil
	})
	if shot == "" {
		t.Fatal("no screenshot in the proof")
	}
	outside := filepath.Join(t.TempDir(), "secret.png")
	if err := os.WriteFile(outside, []byte("not the proof's"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(shot); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, shot); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "site")
	res, err := RenderSite(r.root, []string{w1}, out, keys())
	if err != nil {
		t.Fatalf("render aborted on a symlinked artifact: %v", err)
	}
	if res.Verified == nil || *res.Verified {
		t.Fatalf("a proof with an artifact leading outside it rendered as verified: %+v", res)
	}
	rel, _ := filepath.Rel(r.root, shot)
	if _, err := os.Lstat(filepath.Join(out, rel)); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the symlinked artifact reached the site: %v", err)
	}
	page, err := os.ReadFile(filepath.Join(out, w1, "index.html"))
	if err != nil || !strings.Contains(string(page), "outside the proof directory") {
		t.Errorf("the page does not name the problem (%v)", err)
	}
}
