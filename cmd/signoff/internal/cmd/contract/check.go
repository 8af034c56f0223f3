package contract

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/authoring"
	"github.com/signoff/signoff/authoring/basecheck"
	"github.com/signoff/signoff/authoring/criteria"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/internal/sandbox"
	"github.com/signoff/signoff/internal/settings"
)

// CheckOptions are the inputs of `contract check`.
type CheckOptions struct {
	IO *iostreams.IO
	// Conn, with an address, routes the check through the queues: the base commit builds on
	// the execute queue and is verified on the verify queue. Without one it runs here.
	Conn       cmdutil.Conn
	File       string
	Base       bool
	Repo       string
	DataDir    string
	SharedDeps string
	RunAs      string
	// Unsandboxed runs the app without the sandbox (the operator's choice).
	Unsandboxed bool
	JSON        bool
	// Artifacts is the store the server's workers share, when they run on other hosts.
	Artifacts string
	// Settings is the process's configuration (from the factory): a local check's browser.
	Settings settings.Settings
}

// NewCmdCheck builds `contract check FILE --base`: the base check before approval.
func NewCmdCheck(f *cmdutil.Factory, runF func(*CheckOptions) error) *cobra.Command {
	o := &CheckOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "check FILE --base",
		Short: "Run a contract's criteria on its base commit and report which already pass",
		Long: "A contract the unchanged app already satisfies is vacuous. This builds the base commit, runs\n" +
			"every criterion in real Chromium and reports each as failing (the change must fix it) or\n" +
			"already passing (a regression guard). Exits 1 when the contract is vacuous.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.DataDir = f.DataDir
			o.File = args[0]
			var err error
			if o.Settings, err = f.Settings(); err != nil {
				return err
			}
			o.Conn.APIKey = o.Settings.TemporalAPIKey
			if runF != nil {
				return runF(o)
			}
			return RunCheck(cmd.Context(), o)
		},
	}
	fs := cmd.Flags()
	fs.BoolVar(&o.Base, "base", true, "check the base commit (the only mode so far)")
	fs.StringVar(&o.Repo, "repo", "", "local repository holding the base commit (default: the prepared runs' fixture)")
	fs.StringVar(&o.SharedDeps, "shared-deps", filepath.Join(".cache", "finance-deps"), "installed node_modules to hardlink from")
	fs.StringVar(&o.RunAs, "run-as", "", "user the app runs as (default signoff-preview when root; - for this user)")
	fs.BoolVar(&o.Unsandboxed, sandbox.FlagUnsandboxed, false, "run the app WITHOUT the sandbox (where namespaces are unavailable)")
	fs.BoolVar(&o.JSON, "json", false, "print machine-readable output")
	o.Conn.AddFlags(cmd, "")
	fs.StringVar(&o.Artifacts, "artifacts", "", artifactsUsage)
	return cmd
}

// RunCheck checks the contract's criteria against its base commit.
func RunCheck(ctx context.Context, o *CheckOptions) error {
	c, err := cmdutil.LoadFile(o.IO, o.File, o.JSON, contracts.LoadOptions{AllowMoreCriteria: true})
	if err != nil {
		return err
	}
	disc, rep, derr, err := checkBase(ctx, o, c)
	if err != nil {
		return err
	}
	if o.JSON {
		if err := o.IO.WriteJSON(disc); err != nil {
			return err
		}
	} else {
		o.IO.Printf("%s on base %s (%s):\n", c.ContractID, contracts.ShortSHA(c.Repo.BaseCommitSHA), rep.Browser)
		for _, r := range rep.Results {
			o.IO.Printf("  %-24s %s\n", r.CriterionID, r.Outcome)
			for _, f := range r.Failures {
				o.IO.Printf("      %s\n", f)
			}
			if r.Error != "" {
				o.IO.Printf("      %s\n", r.Error)
			}
		}
		o.IO.Printf("failing on base (the change must fix): %v\nalready passing (regression guards): %v\n", disc.Failing, disc.Guards)
	}
	for _, p := range disc.Problems {
		fmt.Fprintln(o.IO.ErrOut, "note:", p)
	}
	if derr != nil {
		fmt.Fprintln(o.IO.ErrOut, derr)
		return iostreams.SilentExit(iostreams.ExitFailure)
	}
	return nil
}

// checkBase runs the contract's criteria on its base commit: with a Temporal address on the
// queues of that server (the execute queue builds it, the verify queue verifies it, exactly as
// for an attempt), else in this process. The third result is the base check's verdict
// (vacuous or inconclusive); the fourth a failure to check at all.
func checkBase(ctx context.Context, o *CheckOptions, c *contracts.Contract) (authoring.BaseJudgment, *authoring.BaseReport, error, error) {
	var none authoring.BaseJudgment
	dataDir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return none, nil, nil, iostreams.BadInput(err)
	}
	remotes := localgit.Remotes{Root: datadir.Paths(dataDir).Remotes}
	ch := &basecheck.Choice{Mode: basecheck.ModeLocal, DataDir: dataDir, Artifacts: o.Artifacts}
	if o.Conn.Address != "" {
		ch.Mode, ch.Address, ch.Dial, ch.Register = basecheck.ModeQueues, o.Conn.Address, o.Conn.In(dataDir).Dial, queueRegister(o, remotes, dataDir, c)
	} else {
		src, err := localSource(ctx, o, remotes, dataDir, c)
		if err != nil {
			return none, nil, nil, err
		}
		ch.Source = src
		ch.Local = localChecker(basecheck.LocalOptions{DataDir: dataDir, Source: src, SharedDeps: o.SharedDeps, RunAs: o.RunAs, Unsandboxed: o.Unsandboxed,
			Browser: o.Settings.Browser, PackageManagersDir: o.Settings.PackageManagersDir}, "")
	}
	defer ch.Close()
	rep, err := ch.CheckBase(ctx, *c)
	if err != nil {
		return none, nil, nil, iostreams.Failed(err)
	}
	if rep.Where == authoring.WhereQueues && rep.ProofDir != "" {
		rep.Notes = append(rep.Notes, "proof in "+rep.ProofDir)
	}
	// A hand-written contract has no planned roles: every criterion is judged by its outcome.
	disc, derr := authoring.JudgeBase(&criteria.Draft{Criteria: c.Criteria}, rep)
	return disc, rep, derr, nil
}

// localSource is the repository a check in this process builds: --repo, or the prepared
// fixture materialized into the data dir.
func localSource(ctx context.Context, o *CheckOptions, remotes localgit.Remotes, dataDir string, c *contracts.Contract) (*survey.Source, error) {
	repo := o.Repo
	if repo == "" {
		if c.Repo.Owner != "signoff-fixtures" {
			return nil, iostreams.BadInput(fmt.Errorf("--repo is required for %s", c.Repo.Key()))
		}
		if err := runs.Materialize(ctx, remotes, dataDir, *c); err != nil {
			return nil, iostreams.Failed(err)
		}
		var err error
		if repo, err = remotes.Path(c.Repo.Owner, c.Repo.Name); err != nil {
			return nil, iostreams.Failed(err)
		}
	}
	src, err := survey.ResolveSource(ctx, repo, c.Repo.BaseCommitSHA, c.Repo.Key())
	if err != nil {
		return nil, iostreams.BadInput(err)
	}
	return src, nil
}

// queueRegister makes the base commit available to the execute queue's bare remote: the
// prepared fixture, or --repo. nil when there is nothing to register: the cluster's remote is
// expected to hold the commit.
func queueRegister(o *CheckOptions, remotes localgit.Remotes, dataDir string, c *contracts.Contract) func(context.Context, contracts.Contract) error {
	switch {
	case o.Repo != "":
		return func(ctx context.Context, c contracts.Contract) error {
			src, err := survey.ResolveSource(ctx, o.Repo, c.Repo.BaseCommitSHA, c.Repo.Key())
			if err != nil {
				return err
			}
			return basecheck.RegisterFrom(remotes, src.GitDir)(ctx, c)
		}
	case c.Repo.Owner == "signoff-fixtures":
		return func(ctx context.Context, c contracts.Contract) error {
			return runs.Materialize(ctx, remotes, dataDir, c)
		}
	}
	return nil
}
