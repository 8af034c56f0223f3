// Package localcheck runs a drafted contract's criteria against a commit on this machine: the
// preview launcher builds and serves the commit, the verifier library drives Chromium against
// it. It is the authoring module's BaseChecker without Temporal, for the command line and for
// tests; a workflow-backed checker would run the same two steps on the execute and verify
// queues.
package localcheck

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/signoff/signoff/activities/preview"
	"github.com/signoff/signoff/activities/verify"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/authoring"
)

// DefaultSlot is the preview slot checks reuse, so rebuilds are incremental.
const DefaultSlot = "authoring"

// LocalChecker implements authoring.BaseChecker with a preview.Launcher and a verify.Verifier.
// One check runs at a time.
type LocalChecker struct {
	Launcher *preview.Launcher
	Verifier *verify.Verifier
	// RepoDir is the repository: a work tree's top level or a bare repository.
	RepoDir string
	// AppDir is the app's folder inside the repository, slash-separated ("" for the root).
	// Such an app is built from a commit whose tree is that folder of the checked commit.
	AppDir string
	// Slot is the preview slot to reuse (default DefaultSlot).
	Slot string
	// OutDir receives screenshots, traces and the app-folder commits. Required.
	OutDir string
	// Keep leaves the preview running after a check, so the next check of the same commit
	// (another contract's criteria) reuses it instead of building again. Close stops it.
	Keep bool

	mu     sync.Mutex
	job    *preview.Job
	jobFor string // the commit the running job serves
}

var _ authoring.BaseChecker = (*LocalChecker)(nil)

// CheckBase runs the criteria against the contract's base commit.
func (l *LocalChecker) CheckBase(ctx context.Context, c contracts.Contract) (*authoring.BaseReport, error) {
	return l.Check(ctx, c, c.Repo.BaseCommitSHA)
}

// Check runs the criteria against commit sha and classifies each one.
func (l *LocalChecker) Check(ctx context.Context, c contracts.Contract, sha string) (*authoring.BaseReport, error) {
	start := time.Now()
	run, err := l.Evidence(ctx, c, sha)
	if err != nil {
		return nil, err
	}
	r := authoring.Classify(c, run.Evidence, run.BuiltSHA)
	r.CommitSHA = sha
	r.BuildMS = run.BuildMS
	r.DurationMS = time.Since(start).Milliseconds()
	r.Where, r.ProofDir = authoring.WhereLocal, run.OutDir
	if run.BuiltSHA != sha {
		r.Notes = append(r.Notes, fmt.Sprintf("the app folder %s/ of %s was built as commit %s (same tree)", l.AppDir, short(sha), short(run.BuiltSHA)))
	}
	return r, nil
}

// Run is one verification of a commit.
type Run struct {
	Evidence *contracts.Evidence
	// BuiltSHA is the commit the preview built and reports on /__verification.
	BuiltSHA string
	Hash     string
	BuildMS  int64
	VerifyMS int64
	URL      string
	// OutDir holds the evidence, screenshots and traces.
	OutDir string
}

// Evidence builds (or reuses) a preview of sha and returns the verifier's signed evidence
// for the contract's criteria. A commit whose build fails is an error: there is nothing to
// measure.
func (l *LocalChecker) Evidence(ctx context.Context, c contracts.Contract, sha string) (*Run, error) {
	if l.Launcher == nil || l.Verifier == nil || l.RepoDir == "" || l.OutDir == "" {
		return nil, errors.New("localcheck: Launcher, Verifier, RepoDir and OutDir are required")
	}
	hash, err := contracts.Hash(c)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	job, buildMS, err := l.preview(ctx, sha)
	if err != nil {
		return nil, err
	}
	if !l.Keep {
		defer l.stop()
	}
	out := filepath.Join(l.OutDir, "evidence", short(sha)+"-"+hash[:12])
	t := time.Now()
	ev, err := l.Verifier.Verify(ctx, verify.Request{
		ContractID:     c.ContractID,
		ContractHash:   hash,
		Attempt:        0,
		Criteria:       c.Criteria,
		EvidencePolicy: c.EvidencePolicy,
		Verifier:       c.Verifier,
		ExpectedSHA:    job.SHA,
		PreviewURL:     job.URL,
		OutDir:         out,
	})
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", short(sha), err)
	}
	return &Run{Evidence: ev, BuiltSHA: job.SHA, Hash: hash, BuildMS: buildMS, VerifyMS: time.Since(t).Milliseconds(), URL: job.URL, OutDir: out}, nil
}

// preview returns a running preview of sha, building it unless the kept one serves it.
func (l *LocalChecker) preview(ctx context.Context, sha string) (*preview.Job, int64, error) {
	if l.job != nil && l.jobFor == sha {
		return l.job, 0, nil
	}
	l.stop()
	repo, buildSHA, err := l.target(ctx, sha)
	if err != nil {
		return nil, 0, err
	}
	slot := l.Slot
	if slot == "" {
		slot = DefaultSlot
	}
	t := time.Now()
	job, err := l.Launcher.Prepare(ctx, repo, buildSHA, preview.Options{Slot: slot})
	if err != nil {
		if job != nil {
			_ = l.Launcher.Stop(job)
		}
		return nil, 0, fmt.Errorf("preview of %s: %w", short(sha), err)
	}
	l.job, l.jobFor = job, sha
	return job, time.Since(t).Milliseconds(), nil
}

func (l *LocalChecker) stop() {
	if l.job != nil {
		_ = l.Launcher.Stop(l.job)
		l.job, l.jobFor = nil, ""
	}
}

// Close stops a kept preview.
func (l *LocalChecker) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stop()
	return nil
}

// target is the repository and commit the launcher builds: the commit itself, or for an app
// in a subfolder a commit (in a scratch repository borrowing the objects) whose tree is that
// folder, so the launcher builds the app at its root as it always does.
func (l *LocalChecker) target(ctx context.Context, sha string) (string, string, error) {
	if l.AppDir == "" {
		return l.RepoDir, sha, nil
	}
	tree, err := git(ctx, l.RepoDir, nil, "rev-parse", "--verify", "--end-of-options", sha+":"+l.AppDir)
	if err != nil {
		return "", "", fmt.Errorf("app folder %s at %s: %w", l.AppDir, short(sha), err)
	}
	common, err := git(ctx, l.RepoDir, nil, "rev-parse", "--git-common-dir")
	if err != nil {
		return "", "", err
	}
	if !filepath.IsAbs(common) {
		common = filepath.Join(l.RepoDir, common)
	}
	scratch := filepath.Join(l.OutDir, "app-commits.git")
	if _, err := os.Stat(filepath.Join(scratch, "HEAD")); err != nil {
		if err := os.MkdirAll(l.OutDir, 0o755); err != nil {
			return "", "", err
		}
		if _, err := git(ctx, l.OutDir, nil, "init", "--quiet", "--bare", scratch); err != nil {
			return "", "", err
		}
	}
	alt := filepath.Join(scratch, "objects", "info", "alternates")
	if err := os.WriteFile(alt, []byte(filepath.Join(common, "objects")+"\n"), 0o644); err != nil {
		return "", "", fmt.Errorf("link objects: %w", err)
	}
	env := []string{"GIT_AUTHOR_NAME=Signoff", "GIT_AUTHOR_EMAIL=authoring@signoff.local", "GIT_AUTHOR_DATE=2025-01-01T00:00:00+00:00",
		"GIT_COMMITTER_NAME=Signoff", "GIT_COMMITTER_EMAIL=authoring@signoff.local", "GIT_COMMITTER_DATE=2025-01-01T00:00:00+00:00"}
	commit, err := git(ctx, scratch, env, "commit-tree", tree, "-m", fmt.Sprintf("%s/ of %s", l.AppDir, sha))
	if err != nil {
		return "", "", err
	}
	if _, err := git(ctx, scratch, nil, "update-ref", "refs/heads/app-"+short(sha), commit); err != nil {
		return "", "", err
	}
	return scratch, commit, nil
}

// git runs git with no user or system configuration.
func git(ctx context.Context, dir string, env []string, args ...string) (string, error) {
	full := append([]string{"-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null", "-c", "safe.directory=*"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = dir
	cmd.Env = append([]string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0", "LC_ALL=C",
		"PATH=" + os.Getenv("PATH"), "HOME=" + os.Getenv("HOME")}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(stdout.String()), nil
}

func short(sha string) string {
	if len(sha) > 8 {
		return sha[:8]
	}
	return sha
}
