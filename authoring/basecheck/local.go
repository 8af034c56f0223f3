// Local is the base check on this machine: the preview launcher builds and serves the commit,
// the verifier library drives Chromium against it. A Choice uses it when the check is not to
// run on the queues (NewLocal builds it), and tests use it to judge commits without queues.

package basecheck

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
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
	jobFor string // the commit the running job serves, and the environment it runs with
}

var _ authoring.BaseChecker = (*Local)(nil)

// CheckBase runs the criteria against the contract's base commit.
func (l *Local) CheckBase(ctx context.Context, c contracts.Contract) (*authoring.BaseReport, error) {
	return l.Check(ctx, c, c.Repo.BaseCommitSHA)
}

// Check runs the criteria against commit sha and classifies each one, then runs them on
// the contract's lazy variants of that commit (authoring.LazyVariants) on the same preview.
func (l *Local) Check(ctx context.Context, c contracts.Contract, sha string) (*authoring.BaseReport, error) {
	start := time.Now()
	var r *authoring.BaseReport
	run, err := l.evidence(ctx, c, sha, func(v VerifyFunc) error {
		run, err := v(nil, c.Criteria, "")
		if err != nil {
			return err
		}
		r = authoring.Classify(c, run.Evidence, run.BuiltSHA)
		r.CommitSHA = sha
		r.Variants = RunLazyVariants(ctx, c, r, v)
		return nil
	})
	if err != nil {
		return nil, err
	}
	r.BuildMS, r.FailingChecks = run.BuildMS, run.FailingChecks
	r.DurationMS = time.Since(start).Milliseconds()
	r.Where, r.ProofDir = authoring.WhereLocal, run.OutDir
	if l.AppDir != "" {
		r.Notes = append(r.Notes, fmt.Sprintf("built the app folder %s/ of %s", l.AppDir, contracts.ShortSHA(sha)))
	}
	return r, nil
}

// VerifyFunc verifies criteria of the contract on the running preview, with a lazy variant
// applied when v is set; sub names the output folder under the check's.
type VerifyFunc func(v *contracts.Variant, criteria []contracts.Criterion, sub string) (*Run, error)

// RunLazyVariants runs the criteria on each of c's lazy variants: first those the base fails
// (a lazy variant is usually rejected there), the rest unless one of those rejected it. A
// base that fails nothing is refused as vacuous anyway, and has none run.
func RunLazyVariants(ctx context.Context, c contracts.Contract, base *authoring.BaseReport, verify VerifyFunc) []authoring.VariantReport {
	var first, rest []contracts.Criterion
	for _, cr := range c.Criteria {
		if res := base.Result(cr.ID); res != nil && res.Outcome == authoring.OutcomePass {
			rest = append(rest, cr)
		} else {
			first = append(first, cr)
		}
	}
	if len(first) == 0 || base.RuntimeSHA == "" {
		return nil
	}
	var out []authoring.VariantReport
	for _, v := range authoring.LazyVariants(c) {
		if ctx.Err() != nil {
			break
		}
		t := time.Now()
		vr := authoring.VariantReport{Variant: v}
		for i, part := range [][]contracts.Criterion{first, rest} {
			if len(part) == 0 {
				continue
			}
			run, err := verify(&v, part, fmt.Sprintf("variant-%s-%d", v.Name, i+1))
			if err != nil {
				vr.Error = err.Error()
				break
			}
			got := authoring.Classify(contracts.Contract{Repo: c.Repo, Verifier: c.Verifier, Criteria: part}, run.Evidence, run.BuiltSHA)
			vr.Results = append(vr.Results, got.Results...)
			if vr.ProofDir == "" {
				vr.ProofDir = run.OutDir
			}
			if slices.ContainsFunc(got.Results, func(r authoring.BaseResult) bool { return rejects(r, base.Result(r.CriterionID)) }) {
				break
			}
		}
		vr.MS = time.Since(t).Milliseconds()
		out = append(out, vr)
	}
	return out
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
	// FailingChecks are the repository's checks (lint, test) that failed on the commit; the
	// preview went on past them to measure the criteria.
	FailingChecks []contracts.PreexistingFailure
}

// rejects says whether a criterion's result on a variant tells it from the base: it did not
// pass, and not merely failed as it does on the base (a failure the base already has may be
// one the contract leaves out, and says nothing of the variant).
func rejects(r authoring.BaseResult, onBase *authoring.BaseResult) bool {
	if r.Outcome == authoring.OutcomePass {
		return false
	}
	return onBase == nil || onBase.Outcome != r.Outcome || !slices.Equal(onBase.Failures, r.Failures)
}

// Evidence builds (or reuses) a preview of sha and returns the verifier's signed evidence
// for the contract's criteria. A commit whose build fails is an error: there is nothing to
// measure.
func (l *Local) Evidence(ctx context.Context, c contracts.Contract, sha string) (*Run, error) {
	return l.evidence(ctx, c, sha, func(v VerifyFunc) error {
		_, err := v(nil, c.Criteria, "")
		return err
	})
}

// evidence holds one preview of sha for the verifications use makes; the Run returned is
// the first of them.
func (l *Local) evidence(ctx context.Context, c contracts.Contract, sha string, use func(VerifyFunc) error) (*Run, error) {
	if l.Launcher == nil || l.Verifier == nil || l.RepoDir == "" || l.OutDir == "" {
		return nil, errors.New("basecheck: Launcher, Verifier, RepoDir and OutDir are required")
	}
	hash, err := contracts.Hash(c)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	job, buildMS, err := l.preview(ctx, c.Stack, sha)
	if err != nil {
		return nil, err
	}
	if !l.Keep {
		defer l.stop()
	}
	var first *Run
	err = use(func(variant *contracts.Variant, criteria []contracts.Criterion, sub string) (*Run, error) {
		out := filepath.Join(l.OutDir, "evidence", contracts.ShortSHA(sha)+"-"+contracts.ShortSHA(hash))
		if sub != "" {
			out = filepath.Join(out, "variants", sub)
		}
		t := time.Now()
		ev, err := l.Verifier.Verify(ctx, verify.Request{
			ContractID:     c.ContractID,
			ContractHash:   hash,
			Attempt:        0,
			Criteria:       criteria,
			EvidencePolicy: c.EvidencePolicy,
			Verifier:       c.Verifier,
			ExpectedSHA:    job.SHA,
			PreviewURL:     job.URL,
			AllowedOrigins: c.AllowedOrigins,
			Variant:        variant,
			OutDir:         out,
		})
		if err != nil {
			return nil, fmt.Errorf("verify %s: %w", contracts.ShortSHA(sha), err)
		}
		run := &Run{Evidence: ev, BuiltSHA: job.SHA, Hash: hash, BuildMS: buildMS, VerifyMS: time.Since(t).Milliseconds(), URL: job.URL, OutDir: out,
			FailingChecks: job.Result().Preexisting()}
		if first == nil {
			first = run
		}
		return run, nil
	})
	if err != nil {
		return nil, err
	}
	return first, nil
}

// preview returns a running preview of sha with the stack's environment and services,
// building it unless the kept one serves it.
func (l *Local) preview(ctx context.Context, stack contracts.Stack, sha string) (*preview.Job, int64, error) {
	key := strings.Join(append(append([]string{sha}, stack.PreviewEnvWords("")...), stack.Services...), "\x00")
	if l.job != nil && l.jobFor == key {
		return l.job, 0, nil
	}
	l.stop()
	slot := l.Slot
	if slot == "" {
		slot = DefaultSlot
	}
	t := time.Now()
	// A failing lint or test does not stop the check: the quote names it.
	job, err := l.Launcher.Prepare(ctx, l.RepoDir, sha, preview.Options{Slot: slot, AppDir: l.AppDir, BaseCheck: true, Env: stack.Env, Services: stack.Services})
	if err != nil {
		if job != nil {
			_ = l.Launcher.Stop(job)
		}
		return nil, 0, fmt.Errorf("preview of %s: %w", contracts.ShortSHA(sha), err)
	}
	l.job, l.jobFor = job, key
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
