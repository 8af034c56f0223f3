// Package localcheck runs a drafted contract's criteria against a commit on this machine: the
// preview launcher builds and serves the commit, the verifier library drives Chromium against
// it. It is the authoring module's BaseChecker without Temporal, for the command line and for
// tests; a workflow-backed checker would run the same two steps on the execute and verify
// queues.
package localcheck

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
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
	// AppDir is the app's folder inside the repository, slash-separated ("" for the root):
	// the launcher builds that folder of the commit.
	AppDir string
	// Slot is the preview slot to reuse (default DefaultSlot).
	Slot string
	// OutDir receives the evidence, screenshots and traces. Required.
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
	if l.AppDir != "" {
		r.Notes = append(r.Notes, fmt.Sprintf("built the app folder %s/ of %s", l.AppDir, short(sha)))
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
	slot := l.Slot
	if slot == "" {
		slot = DefaultSlot
	}
	t := time.Now()
	job, err := l.Launcher.Prepare(ctx, l.RepoDir, sha, preview.Options{Slot: slot, AppDir: l.AppDir})
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

func short(sha string) string {
	if len(sha) > 8 {
		return sha[:8]
	}
	return sha
}
