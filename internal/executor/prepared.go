// Package executor makes an attempt's change in a fresh clone on branch signoff/<slug> and
// hands the commit to the control queue through the local bare remote. The prepared executor
// applies stored patches (the prepared runs); the command executor (a coding CLI) comes
// behind the same interface.
package executor

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/localgit"
)

// BranchPrefix is the only branch prefix Signoff writes to.
const BranchPrefix = "signoff/"

// Branch is the contract's work branch.
func Branch(contractID string) string { return BranchPrefix + contractID }

// Allowlist holds owner/name patterns (path.Match syntax, e.g. "acme/*") a contract may
// touch; a repository outside it is refused before anything is cloned.
type Allowlist []string

// Allows reports whether owner/name matches a pattern.
func (a Allowlist) Allows(owner, name string) bool {
	for _, p := range a {
		if ok, err := path.Match(p, owner+"/"+name); err == nil && ok {
			return true
		}
	}
	return false
}

// Prepared applies fixtures/runs/<RUN>/patches/attempt-<n>.patch. It finds the run by the
// contract id in fixtures/runs/<RUN>/contract.json.
type Prepared struct {
	RunsDir string
	JobsDir string
	Remotes localgit.Remotes
	Allow   Allowlist
}

// RunDir returns the prepared run directory holding a contract.
func (p *Prepared) RunDir(contractID string) (string, error) {
	entries, err := os.ReadDir(p.RunsDir)
	if err != nil {
		return "", err
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(p.RunsDir, e.Name(), "contract.json"))
		if err != nil {
			continue
		}
		var c struct {
			ID string `json:"contract_id"`
		}
		if json.Unmarshal(b, &c) == nil && c.ID == contractID {
			return filepath.Join(p.RunsDir, e.Name()), nil
		}
	}
	return "", fmt.Errorf("no prepared run holds contract %q", contractID)
}

// Run makes attempt n's commit: the base tree plus the attempt's patch, committed on top of
// the parent, pushed to the bare remote on branch signoff/<contract>. A missing patch is an
// executor that changed nothing: an empty attempt.
func (p *Prepared) Run(ctx context.Context, req capability.ExecRequest) (capability.ExecResult, error) {
	if !p.Allow.Allows(req.Repo.Owner, req.Repo.Name) {
		return capability.ExecResult{}, capability.Refused(fmt.Errorf("repository %s is not on the allowlist", req.Repo.Key()))
	}
	if !contracts.ValidContractID(req.ContractID) {
		return capability.ExecResult{}, capability.Refused(fmt.Errorf("contract id %q is not a safe name", req.ContractID))
	}
	run, err := p.RunDir(req.ContractID)
	if err != nil {
		return capability.ExecResult{}, capability.Refused(err)
	}
	remote, err := p.Remotes.Path(req.Repo.Owner, req.Repo.Name)
	if err != nil {
		return capability.ExecResult{}, capability.Refused(err)
	}
	job := filepath.Join(p.JobsDir, fmt.Sprintf("exec-%s-attempt-%d", req.ContractID, req.Attempt))
	if err := os.RemoveAll(job); err != nil {
		return capability.ExecResult{}, err
	}
	if err := os.MkdirAll(p.JobsDir, 0o755); err != nil {
		return capability.ExecResult{}, err
	}
	defer os.RemoveAll(job)
	if _, err := localgit.Git(ctx, p.JobsDir, "clone", "--quiet", "--no-checkout", remote, job); err != nil {
		return capability.ExecResult{}, err
	}
	branch := Branch(req.ContractID)
	if _, err := localgit.Git(ctx, job, "checkout", "--quiet", "-B", branch, req.ParentSHA); err != nil {
		return capability.ExecResult{}, fmt.Errorf("check out parent %s: %w", req.ParentSHA, err)
	}
	patch := filepath.Join(run, "patches", fmt.Sprintf("attempt-%d.patch", req.Attempt))
	if _, err := os.Stat(patch); errors.Is(err, os.ErrNotExist) {
		return capability.ExecResult{Empty: true, CommitSHA: req.ParentSHA, Branch: branch, DiffSummary: "no change"}, nil
	}
	if err := fixturerepo.RestoreTree(job, req.Repo.BaseCommitSHA); err != nil {
		return capability.ExecResult{}, err
	}
	if err := fixturerepo.ApplyPatch(job, patch); err != nil {
		return capability.ExecResult{}, err
	}
	if _, err := localgit.Git(ctx, job, "diff", "--cached", "--quiet", req.ParentSHA); err == nil {
		return capability.ExecResult{Empty: true, CommitSHA: req.ParentSHA, Branch: branch, DiffSummary: "no change"}, nil
	}
	sha, err := fixturerepo.CommitAll(job, fmt.Sprintf("Signoff attempt %d: %s", req.Attempt, firstLine(req.Goal)))
	if err != nil {
		return capability.ExecResult{}, err
	}
	return finish(ctx, job, remote, branch, req.ParentSHA, sha)
}

// finish pushes the commit from the repository at dir to the bare remote and measures the
// change.
func finish(ctx context.Context, dir, remote, branch, parent, sha string) (capability.ExecResult, error) {
	if _, err := localgit.Git(ctx, dir, "push", "--quiet", "--force", remote, sha+":refs/heads/"+branch); err != nil {
		return capability.ExecResult{}, fmt.Errorf("hand the commit to the control queue: %w", err)
	}
	res := capability.ExecResult{CommitSHA: sha, Branch: branch}
	out, err := localgit.Git(ctx, dir, "diff", "--numstat", parent, sha)
	if err != nil {
		return capability.ExecResult{}, err
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var add, del int
		var name string
		if n, _ := fmt.Sscanf(line, "%d\t%d\t%s", &add, &del, &name); n == 3 {
			res.FilesChanged++
			res.Insertions += add
			res.Deletions += del
		}
	}
	res.DiffSummary = fmt.Sprintf("%d file(s), +%d -%d", res.FilesChanged, res.Insertions, res.Deletions)
	return res, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	if len(s) > 72 {
		s = s[:72]
	}
	return s
}
