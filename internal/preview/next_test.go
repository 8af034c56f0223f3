package preview

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/internal/sandbox/sandboxtest"
)

// moduleRoot is the repository root, found from this file's path.
func moduleRoot(t testing.TB) string {
	t.Helper()
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("cannot locate test file")
	}
	return filepath.Dir(filepath.Dir(filepath.Dir(file)))
}

// financeDeps returns the shared install made by `go tool task
// fixture:setup`, failing when it is missing or older than the lockfile.
func financeDeps(t testing.TB, root string) string {
	t.Helper()
	deps := filepath.Join(root, ".cache", "finance-deps")
	h := sha256.New()
	for _, f := range []string{"package.json", "package-lock.json"} {
		data, err := os.ReadFile(filepath.Join(root, "fixtures", "finance", f))
		if err != nil {
			t.Fatal(err)
		}
		h.Write(data)
	}
	stamp, err := os.ReadFile(filepath.Join(deps, ".stamp"))
	if err != nil || strings.TrimSpace(string(stamp)) != hex.EncodeToString(h.Sum(nil)) {
		t.Fatalf("shared finance node_modules missing or stale: run `go tool task fixture:setup` (%v)", err)
	}
	return deps
}

// financeW1 materializes the finance fixture as a repository under root, with W1's first
// attempt committed on its base.
func financeW1(t testing.TB, root string) (repo, base, w1 string) {
	t.Helper()
	mod := moduleRoot(t)
	repo = filepath.Join(root, "finance")
	base, err := fixturerepo.Materialize(filepath.Join(mod, "fixtures", "finance"), repo)
	if err != nil {
		t.Fatal(err)
	}
	if err := fixturerepo.ApplyPatch(repo, filepath.Join(mod, "fixtures", "runs", "W1", "patches", "attempt-1.patch")); err != nil {
		t.Fatal(err)
	}
	w1, err = fixturerepo.CommitAll(repo, "W1 attempt 1")
	if err != nil {
		t.Fatal(err)
	}
	return repo, base, w1
}

func getText(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(body)
}

var cssLink = regexp.MustCompile(`href="(/_next/static/[^"]+\.css)"`)

// pageCSS returns the stylesheets linked from a page.
func pageCSS(t *testing.T, base, page string) string {
	t.Helper()
	_, html := getText(t, base+page)
	var css strings.Builder
	for _, m := range cssLink.FindAllStringSubmatch(html, -1) {
		_, body := getText(t, base+m[1])
		css.WriteString(body)
	}
	return css.String()
}

func logSteps(t *testing.T, label string, job *Job) {
	t.Helper()
	var b strings.Builder
	for _, s := range append(job.Build.Steps, job.Start) {
		b.WriteString(" " + s.Name + "=" + s.Duration.Round(10*time.Millisecond).String())
	}
	t.Logf("%s:%s", label, b.String())
}

// TestNextFixture builds the real Next.js finance app: the base commit and
// then W1's first attempt in the same slot (an incremental build).
func TestNextFixture(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the Next.js fixture (tens of seconds); skipped in -short")
	}
	deps := financeDeps(t, moduleRoot(t))
	root := testRoot(t)
	repo, base, w1 := financeW1(t, root)
	l, err := New(Config{
		Sandbox:      sandboxtest.Runner(t),
		JobsRoot:     filepath.Join(root, "jobs"),
		SharedDeps:   deps,
		RunAs:        previewUser(t),
		StepTimeout:  5 * time.Minute,
		StartTimeout: 2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	job, err := l.Prepare(ctx, repo, base, Options{Slot: "next"})
	if err != nil {
		t.Fatalf("prepare base: %v", err)
	}
	logSteps(t, "base (clean build)", job)
	if code, sha := servedSHA(t, job.URL); code != 200 || sha != base {
		l.Stop(job)
		t.Fatalf("/__verification = %d %q, want %s", code, sha, base)
	}
	if len(job.Build.DirtyFiles) != 0 {
		t.Errorf("build left the work tree dirty: %v", job.Build.DirtyFiles)
	}
	if code, html := getText(t, job.URL+"/watchlist"); code != 200 || !strings.Contains(html, `data-testid="loading"`) {
		t.Errorf("/watchlist = %d, want 200 with the loading placeholder", code)
	}
	if code, body := getText(t, job.URL+"/api/quotes"); code != 200 || strings.Count(body, `"symbol"`) != 4 {
		t.Errorf("/api/quotes = %d %s", code, body)
	}
	if strings.Contains(pageCSS(t, job.URL, "/watchlist"), "watchlist-cards") {
		t.Error("base CSS already has the W1 cards")
	}
	l.Stop(job)
	if processAlive(job.PID) {
		t.Fatalf("next server %d alive after Stop", job.PID)
	}

	job, err = l.Prepare(ctx, repo, w1, Options{Slot: "next"})
	if err != nil {
		t.Fatalf("prepare W1: %v", err)
	}
	defer l.Stop(job)
	logSteps(t, "W1 (same slot)", job)
	if code, sha := servedSHA(t, job.URL); code != 200 || sha != w1 {
		t.Fatalf("/__verification = %d %q, want %s", code, sha, w1)
	}
	if !strings.Contains(pageCSS(t, job.URL, "/watchlist"), "watchlist-cards") {
		t.Error("W1 build serves CSS without the cards: stale build output")
	}
}

// TestAllRunPatchesBuild builds every prepared run's patch (opt-in: about a
// minute). Run it after changing the fixture or a patch:
//
//	SIGNOFF_BUILD_ALL_PATCHES=1 go test -run TestAllRunPatchesBuild ./internal/preview/
func TestAllRunPatchesBuild(t *testing.T) {
	if os.Getenv("SIGNOFF_BUILD_ALL_PATCHES") != "1" {
		t.Skip("set SIGNOFF_BUILD_ALL_PATCHES=1 to build every run patch")
	}
	mod := moduleRoot(t)
	deps := financeDeps(t, mod)
	root := testRoot(t)
	repo := filepath.Join(root, "finance")
	base, err := fixturerepo.Materialize(filepath.Join(mod, "fixtures", "finance"), repo)
	if err != nil {
		t.Fatal(err)
	}
	patches, err := filepath.Glob(filepath.Join(mod, "fixtures", "runs", "*", "patches", "attempt-*.patch"))
	if err != nil || len(patches) == 0 {
		t.Fatalf("no patches: %v", err)
	}
	l, err := New(Config{Sandbox: sandboxtest.Runner(t), JobsRoot: filepath.Join(root, "jobs"), SharedDeps: deps, RunAs: previewUser(t), StepTimeout: 5 * time.Minute, StartTimeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range patches {
		name, _ := filepath.Rel(filepath.Join(mod, "fixtures", "runs"), p)
		if err := fixturerepo.RestoreTree(repo, base); err != nil {
			t.Fatal(err)
		}
		if err := fixturerepo.ApplyPatch(repo, p); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		sha, err := fixturerepo.CommitAll(repo, name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		job, err := l.Prepare(context.Background(), repo, sha, Options{Slot: "all"})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		logSteps(t, name, job)
		code, served := servedSHA(t, job.URL)
		l.Stop(job)
		if code != 200 || served != sha || len(job.Build.DirtyFiles) != 0 {
			t.Errorf("%s: /__verification %d %q (want %s), dirty %v", name, code, served, sha, job.Build.DirtyFiles)
		}
	}
}
