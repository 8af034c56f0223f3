package preview

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/internal/realapps"
	"github.com/signoff/signoff/internal/sandbox"
	"github.com/signoff/signoff/internal/sandbox/sandboxtest"
	"github.com/signoff/signoff/internal/unprivileged"
	"github.com/signoff/signoff/internal/verify"
)

// Real apps (internal/realapps), made at test time from registry packages and never edited
// for Signoff: no /__verification route, the lockfile their tool wrote. The preview slots
// keep node_modules and .next under .cache/realapps/jobs, so only a first run builds cold.

// realAppMaker generates the recipes' trees as the preview user, in the sandbox.
func realAppMaker(t *testing.T, sb *sandbox.Runner) *realapps.Maker {
	t.Helper()
	cache, err := realapps.CacheDir(moduleRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	cred := &syscall.Credential{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid())}
	if u := previewUser(t); u != "" {
		if cred, err = unprivileged.Lookup(u); err != nil {
			t.Fatal(err)
		}
	}
	tools := FindPackageManagers("")
	var roots []string
	for _, bin := range tools {
		roots = append(roots, InstallRoot(bin))
	}
	return &realapps.Maker{Sandbox: sb, Cred: cred, Cache: cache, Tools: tools, ToolRoots: roots, Logf: t.Logf}
}

// TestRealAppsWithoutVerificationRoute builds apps nobody on the project wrote, unchanged,
// and verifies a criterion on each through Signoff's proxy: the runtime-SHA check passes
// and the criteria are measured, not refused.
func TestRealAppsWithoutVerificationRoute(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and builds real Next.js apps from the npm registry (minutes cold, under a minute warm); skipped in -short")
	}
	sb := sandboxtest.Runner(t)
	maker := realAppMaker(t, sb)
	for _, r := range realapps.Recipes {
		t.Run(r.Name, func(t *testing.T) {
			begin := time.Now()
			if r.PM != "npm" {
				if _, ok := FindPackageManagers("")[r.PM]; !ok {
					t.Fatalf("%s is not installed: run `go tool task pm:setup`", r.PM)
				}
			}
			tree, err := maker.Make(context.Background(), r)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(tree, "app", "api", "verification")); err == nil {
				t.Fatal("the generated app has a verification route of its own")
			}
			repo := filepath.Join(testRoot(t), "repo")
			sha, err := fixturerepo.Materialize(tree, repo)
			if err != nil {
				t.Fatal(err)
			}
			l := realAppLauncher(t, sb)
			job, err := l.Prepare(context.Background(), repo, sha, Options{Slot: r.Name})
			if err != nil {
				logFailedSteps(t, job)
				t.Fatalf("prepare: %v", err)
			}
			defer l.Stop(job)
			logSteps(t, r.Name, job)
			if deps := stepByName(job, "deps"); job.PackageManager != r.PM || (deps.Command != "" && !strings.HasPrefix(deps.Command, r.PM+" ")) {
				t.Errorf("installed with %s (%q), want %s as the lockfile says", job.PackageManager, deps.Command, r.PM)
			}
			if code, _ := getText(t, job.AppURL+VerificationPath); code == 200 {
				t.Fatalf("the app itself answers %s: this test needs an app without the route", VerificationPath)
			}
			if job.RuntimeSHA != sha {
				t.Fatalf("runtime SHA through the proxy %q, want %s", job.RuntimeSHA, sha)
			}
			verifyMeasured(t, job.URL, sha)
			t.Logf("%s: %s in all", r.Name, time.Since(begin).Round(100*time.Millisecond))
		})
	}
}

// logFailedSteps shows the end of each failed step's log.
func logFailedSteps(t *testing.T, job *Job) {
	t.Helper()
	if job == nil {
		return
	}
	for _, s := range job.Build.Steps {
		if s.Status == StatusFailed {
			log, _ := os.ReadFile(s.Log)
			t.Logf("%s log:\n%s", s.Name, tail(log, 4000))
		}
	}
}

// realAppLauncher keeps its slots under .cache/realapps/jobs, so a second run reuses the
// installed node_modules and the .next build cache.
func realAppLauncher(t *testing.T, sb *sandbox.Runner) *Launcher {
	t.Helper()
	l, err := New(Config{
		Sandbox:        sb,
		JobsRoot:       filepath.Join(realAppMaker(t, sb).Cache, "jobs"),
		RunAs:          previewUser(t),
		InstallNetwork: sandbox.NetEgress,
		StepTimeout:    10 * time.Minute,
		StartTimeout:   2 * time.Minute,
	})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// verifyMeasured runs the verifier over an http and a browser criterion at the preview: the
// runtime SHA is the built one and both criteria are measured.
func verifyMeasured(t *testing.T, previewURL, sha string) {
	t.Helper()
	cfg := verify.DefaultConfig()
	if err := cfg.CheckSetup(true); err != nil {
		t.Fatalf("the verifier's browser is not set up (run `go tool task setup`): %v", err)
	}
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	vp := contracts.Viewport{Width: 390, Height: 844}
	criteria := []contracts.Criterion{
		{ID: "home-answers", Description: "the home page answers 200", Route: "/", MaxRuntimeMS: 15000,
			RequiredArtifacts: []string{contracts.ArtifactObserved}, Assert: contracts.Assertion{Kind: contracts.KindHTTP, Status: 200}},
		{ID: "home-fits-mobile", Description: "the home page does not overflow on a phone", Route: "/", Viewport: &vp, MaxRuntimeMS: 30000,
			RequiredArtifacts: []string{contracts.ArtifactObserved, contracts.ArtifactScreenshot}, Assert: contracts.Assertion{Kind: contracts.KindNoHorizontalOverflow}},
	}
	v := &verify.Verifier{Config: cfg, Key: key}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ev, err := v.Verify(ctx, verify.Request{
		ContractID: "c-realapp", ContractHash: strings.Repeat("2", 64), Attempt: 1, Criteria: criteria,
		EvidencePolicy: contracts.EvidencePolicy{Required: []string{contracts.ArtifactObserved}},
		Verifier:       verify.Ref(), ExpectedSHA: sha, PreviewURL: previewURL, OutDir: t.TempDir(),
	})
	if err != nil {
		t.Fatalf("verify: %v", err)
	}
	if ev.RuntimeSHA != sha {
		t.Fatalf("the verifier read runtime SHA %q, want %s", ev.RuntimeSHA, sha)
	}
	if len(ev.Results) != len(criteria) {
		t.Fatalf("%d of %d criteria measured", len(ev.Results), len(criteria))
	}
	for _, res := range ev.Results {
		t.Logf("%s: %s %s", res.CriterionID, res.Status, res.Error)
		if res.Status != contracts.StatusPass && res.Status != contracts.StatusFail {
			t.Errorf("%s was not measured: %s %s", res.CriterionID, res.Status, res.Error)
		}
	}
	if res := ev.Results[0]; res.Status != contracts.StatusPass {
		t.Errorf("the home page through the proxy: %s %s", res.Status, res.Error)
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// TestDeclaredReleases builds apps whose package.json pins a package manager release other
// than Signoff's (pnpm 9 where pnpm 12 is pinned; Yarn 4, which refuses Yarn 1's flags), each
// with the lockfile that release wrote: the preview installs, builds and starts them with the
// declared release, fetched from the registry, and says which ran.
func TestDeclaredReleases(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and builds real Next.js apps from the npm registry; skipped in -short")
	}
	dir := DefaultPackageManagersDir()
	if dir == "" {
		t.Fatal("no package manager folder: run `go tool task pm:setup`")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatal(err)
	}
	releases := &Releases{Dir: filepath.Join(dir, "releases"), NPM: npm}
	sb := sandboxtest.Runner(t)
	for _, tc := range []struct{ name, pm, version, install string }{
		{"cna-pnpm9-declared", "pnpm", "9.15.9", "pnpm install --frozen-lockfile"},
		{"cna-yarn4-declared", "yarn", "4.9.2", "yarn install --immutable"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			begin := time.Now()
			rel := contracts.Release{Name: tc.pm, Version: tc.version}
			bin, err := releases.Bin(context.Background(), rel)
			if err != nil {
				t.Fatal(err)
			}
			maker := realAppMaker(t, sb)
			maker.ToolRoots = append(maker.ToolRoots, InstallRoot(bin))
			tree, err := maker.Make(context.Background(), realapps.DeclaredRelease(tc.name, tc.pm, rel.String(), bin))
			if err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(filepath.Join(tree, "package.json"))
			if err != nil {
				t.Fatal(err)
			}
			var pkg struct {
				PackageManager string `json:"packageManager"`
			}
			if err := json.Unmarshal(data, &pkg); err != nil {
				t.Fatal(err)
			}
			declared, err := contracts.ParseRelease(pkg.PackageManager)
			if err != nil || declared != rel {
				t.Fatalf("the tree declares %q (%v), want %s", pkg.PackageManager, err, rel)
			}
			repo := filepath.Join(testRoot(t), "repo")
			sha, err := fixturerepo.Materialize(tree, repo)
			if err != nil {
				t.Fatal(err)
			}
			l, err := New(Config{Sandbox: sb, JobsRoot: filepath.Join(maker.Cache, "jobs"), RunAs: previewUser(t), InstallNetwork: sandbox.NetEgress,
				ReleasesDir: releases.Dir, StepTimeout: 10 * time.Minute, StartTimeout: 2 * time.Minute})
			if err != nil {
				t.Fatal(err)
			}
			job, err := l.Prepare(context.Background(), repo, sha, Options{Slot: tc.name, PackageManager: declared.Name, PackageManagerVersion: declared.Version})
			if err != nil {
				logFailedSteps(t, job)
				t.Fatalf("prepare: %v", err)
			}
			defer l.Stop(job)
			logSteps(t, tc.name, job)
			want := tc.pm + " " + tc.version
			if job.PackageManagerRan != want || job.Result().PackageManager != want {
				t.Errorf("ran %q (build result %q), want %q", job.PackageManagerRan, job.Result().PackageManager, want)
			}
			if deps := stepByName(job, "deps"); deps.Status == StatusPassed && !strings.HasPrefix(deps.Command, tc.install) && !strings.Contains(deps.Detail, "kept the slot") {
				t.Errorf("installed with %q, want %q", deps.Command, tc.install)
			}
			if job.RuntimeSHA != sha {
				t.Fatalf("runtime SHA through the proxy %q, want %s", job.RuntimeSHA, sha)
			}
			verifyMeasured(t, job.URL, sha)
			t.Logf("%s: %s in all", tc.name, time.Since(begin).Round(100*time.Millisecond))
		})
	}
}
