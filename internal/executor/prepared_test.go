package executor_test

import (
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/executor"
	"github.com/signoff/signoff/internal/localgit"
)

func repoRoot() string {
	_, f, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(f), "..", "..")
}

// setup materializes the finance fixture into a bare remote, as a prepared run does.
func setup(t *testing.T) (*executor.Prepared, *localgit.Deliverer, contracts.Repo) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	base, err := fixturerepo.Materialize(filepath.Join(repoRoot(), "fixtures", "finance"), filepath.Join(dir, "src"))
	if err != nil {
		t.Fatal(err)
	}
	remotes := localgit.Remotes{Root: filepath.Join(dir, "remotes")}
	if _, err := remotes.Ensure(ctx, "signoff-fixtures", "finance", filepath.Join(dir, "src")); err != nil {
		t.Fatal(err)
	}
	p := &executor.Prepared{RunsDir: filepath.Join(repoRoot(), "fixtures", "runs"), JobsDir: filepath.Join(dir, "jobs"),
		Remotes: remotes, Allow: executor.Allowlist{"signoff-fixtures/*"}}
	d := &localgit.Deliverer{Remotes: remotes, Store: filepath.Join(dir, "prs")}
	return p, d, contracts.Repo{Owner: "signoff-fixtures", Name: "finance", BaseCommitSHA: base}
}

func TestPreparedAttemptsAreDeterministicAndPublished(t *testing.T) {
	ctx := context.Background()
	var shas []string
	for i := 0; i < 2; i++ {
		p, d, repo := setup(t)
		req := capability.ExecRequest{ContractID: "w1-watchlist-mobile", Attempt: 1, Goal: "cards", Repo: repo, ParentSHA: repo.BaseCommitSHA}
		res, err := p.Run(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if res.Empty || res.FilesChanged == 0 || res.Branch != "signoff/w1-watchlist-mobile" {
			t.Fatalf("%+v", res)
		}
		shas = append(shas, res.CommitSHA)
		pr, err := d.Publish(ctx, capability.PublishRequest{ContractID: req.ContractID, Goal: "cards", Repo: repo, Branch: res.Branch, CommitSHA: res.CommitSHA})
		if err != nil {
			t.Fatal(err)
		}
		head, err := d.Head(ctx, capability.HeadRequest{Repo: repo, Branch: pr.Branch})
		if err != nil || head != res.CommitSHA {
			t.Fatalf("head %s err %v, want %s", head, err, res.CommitSHA)
		}
		rec, _ := d.Record(req.ContractID)
		if rec.Title != "Verified contract: cards" || rec.Statuses[head].State != "pending" {
			t.Fatalf("record %+v", rec)
		}
		// Attempt 2 of W1 has no patch: the executor changed nothing.
		res2, err := p.Run(ctx, capability.ExecRequest{ContractID: req.ContractID, Attempt: 2, Repo: repo, ParentSHA: res.CommitSHA})
		if err != nil || !res2.Empty {
			t.Fatalf("attempt 2: %+v %v", res2, err)
		}
	}
	if shas[0] != shas[1] {
		t.Fatalf("the same attempt gave two SHAs: %v", shas)
	}
}

func TestAllowlistRefusesBeforeCloning(t *testing.T) {
	p, _, repo := setup(t)
	repo.Owner = "someone-else"
	_, err := p.Run(context.Background(), capability.ExecRequest{ContractID: "w1-watchlist-mobile", Attempt: 1, Repo: repo, ParentSHA: repo.BaseCommitSHA})
	if !errors.Is(err, capability.ErrRefused) {
		t.Fatalf("%v", err)
	}
}

func TestPublishRefusesACommitNotOnTheBranch(t *testing.T) {
	_, d, repo := setup(t)
	_, err := d.Publish(context.Background(), capability.PublishRequest{ContractID: "x-contract", Repo: repo, Branch: "signoff/x-contract", CommitSHA: repo.BaseCommitSHA})
	if err == nil {
		t.Fatal("published a branch the executor never pushed")
	}
}
