// Local is the base check on this machine: the preview launcher builds and serves the commit,
// the verifier library drives Chromium against it. A Choice uses it when the check is not to
// run on the queues (NewLocal builds it), and tests use it to judge commits without queues.

package basecheck

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/signoff/signoff/authoring"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/preview"
	"github.com/signoff/signoff/internal/verify"
)

// DefaultSlot is the preview slot checks reuse, so rebuilds are incremental.
const DefaultSlot = "authoring"

// Local implements authoring.BaseChecker with a preview.Launcher and a verify.Verifier.
// One check runs at a time.
type Local struct {
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

var _ authoring.BaseChecker = (*Local)(nil)

// CheckBase runs the criteria against the contract's base commit.
func (l *Local) CheckBase(ctx context.Context, c contracts.Contract) (*authoring.BaseReport, error) {
	return l.Check(ctx, c, c.Repo.BaseCommitSHA)
}

// Check runs the criteria against commit sha and classifies each one.
func (l *Local) Check(ctx context.Context, c contracts.Contract, sha string) (*authoring.BaseReport, error) {
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
		r.Notes = append(r.Notes, fmt.Sprintf("built the app folder %s/ of %s", l.AppDir, contracts.ShortSHA(sha)))
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
func (l *Local) Evidence(ctx context.Context, c contracts.Contract, sha string) (*Run, error) {
	if l.Launcher == nil || l.Verifier == nil || l.RepoDir == "" || l.OutDir == "" {
		return nil, errors.New("basecheck: Launcher, Verifier, RepoDir and OutDir are required")
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
	out := filepath.Join(l.OutDir, "evidence", contracts.ShortSHA(sha)+"-"+contracts.ShortSHA(hash))
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
		AllowedOrigins: c.AllowedOrigins,
		OutDir:         out,
	})
	if err != nil {
		return nil, fmt.Errorf("verify %s: %w", contracts.ShortSHA(sha), err)
	}
	return &Run{Evidence: ev, BuiltSHA: job.SHA, Hash: hash, BuildMS: buildMS, VerifyMS: time.Since(t).Milliseconds(), URL: job.URL, OutDir: out}, nil
}

// preview returns a running preview of sha, building it unless the kept one serves it.
func (l *Local) preview(ctx context.Context, sha string) (*preview.Job, int64, error) {
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
		return nil, 0, fmt.Errorf("preview of %s: %w", contracts.ShortSHA(sha), err)
	}
	l.job, l.jobFor = job, sha
	return job, time.Since(t).Milliseconds(), nil
}

func (l *Local) stop() {
	if l.job != nil {
		_ = l.Launcher.Stop(l.job)
		l.job, l.jobFor = nil, ""
	}
}

// Close stops a kept preview.
func (l *Local) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stop()
	return nil
}
