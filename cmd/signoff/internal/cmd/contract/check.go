package contract

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/activities/localgit"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/authoring"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workflows/basecheck"
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
}

// NewCmdCheck builds `contract check FILE --base`: discrimination before approval.
func NewCmdCheck(io *iostreams.IO, runF func(*CheckOptions) error) *cobra.Command {
	o := &CheckOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "check FILE --base",
		Short: "Run a contract's criteria on its base commit and report which already pass",
		Long: "A contract the unchanged app already satisfies is vacuous. This builds the base commit, runs\n" +
			"every criterion in real Chromium and reports each as failing (the change must fix it) or\n" +
			"already passing (a regression guard). Exits 1 when the contract is vacuous.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.File = args[0]
			if runF != nil {
				return runF(o)
			}
			return RunCheck(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.BoolVar(&o.Base, "base", true, "check the base commit (the only mode so far)")
	f.StringVar(&o.Repo, "repo", "", "local repository holding the base commit (default: the prepared runs' fixture)")
	f.StringVar(&o.DataDir, "data-dir", cmdutil.DefaultDataDir(), "Signoff data dir")
	f.StringVar(&o.SharedDeps, "shared-deps", filepath.Join(".cache", "finance-deps"), "installed node_modules to hardlink from")
	f.StringVar(&o.RunAs, "run-as", "", "user the app runs as (default signoff-preview when root; - for this user)")
	f.BoolVar(&o.Unsandboxed, workers.FlagUnsandboxed, false, "run the app WITHOUT the sandbox (where namespaces are unavailable)")
	f.BoolVar(&o.JSON, "json", false, "print machine-readable output")
	o.Conn.AddFlags(cmd, "")
	return cmd
}

// RunCheck checks the contract's criteria against its base commit.
func RunCheck(ctx context.Context, o *CheckOptions) error {
	c, err := LoadFile(o.IO, o.File, o.JSON, contracts.LoadOptions{AllowMoreCriteria: true})
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
		o.IO.Printf("%s on base %s (%s):\n", c.ContractID, short(c.Repo.BaseCommitSHA), rep.Browser)
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

// checkBase runs the contract's criteria on its base commit. The third result is the
// discrimination verdict (vacuous or inconclusive); the fourth a failure to check at all.
func checkBase(ctx context.Context, o *CheckOptions, c *contracts.Contract) (authoring.Discrimination, *authoring.BaseReport, error, error) {
	var none authoring.Discrimination
	if o.Conn.Address != "" {
		return checkBaseOnQueues(ctx, o, c)
	}
	dataDir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return none, nil, nil, iostreams.BadInput(err)
	}
	repo := o.Repo
	if repo == "" {
		if c.Repo.Owner != "signoff-fixtures" {
			return none, nil, nil, iostreams.BadInput(fmt.Errorf("--repo is required for %s/%s", c.Repo.Owner, c.Repo.Name))
		}
		remotes := localgit.Remotes{Root: workers.Paths(dataDir).Remotes}
		if err := runs.Materialize(ctx, remotes, dataDir, *c); err != nil {
			return none, nil, nil, iostreams.Failed(err)
		}
		if repo, err = remotes.Path(c.Repo.Owner, c.Repo.Name); err != nil {
			return none, nil, nil, iostreams.Failed(err)
		}
	}
	src, err := authoring.ResolveSource(ctx, repo, c.Repo.BaseCommitSHA, c.Repo.Owner+"/"+c.Repo.Name)
	if err != nil {
		return none, nil, nil, iostreams.BadInput(err)
	}
	lc := &lazyChecker{opts: &NewOptions{RunAs: o.RunAs, SharedDeps: o.SharedDeps, Unsandboxed: o.Unsandboxed}, dataDir: dataDir, src: src}
	defer lc.close()
	rep, err := lc.CheckBase(ctx, *c)
	if err != nil {
		return none, nil, nil, iostreams.Failed(err)
	}
	// A hand-written contract has no planned roles: every criterion is judged by its outcome.
	disc, derr := authoring.Discriminate(&authoring.Draft{Criteria: c.Criteria}, rep)
	return disc, rep, derr, nil
}

// checkBaseOnQueues runs DiscriminateWorkflow: the base commit is built by the execute queue
// and verified by the verify queue, exactly as an attempt would be. The base commit is
// registered with the execute queue's bare remote first: the prepared fixture, or --repo.
func checkBaseOnQueues(ctx context.Context, o *CheckOptions, c *contracts.Contract) (authoring.Discrimination, *authoring.BaseReport, error, error) {
	var none authoring.Discrimination
	dataDir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return none, nil, nil, iostreams.BadInput(err)
	}
	remotes := localgit.Remotes{Root: workers.Paths(dataDir).Remotes}
	register := func(ctx context.Context, c contracts.Contract) error {
		if o.Repo == "" {
			if c.Repo.Owner == "signoff-fixtures" {
				return runs.Materialize(ctx, remotes, dataDir, c)
			}
			return nil // the cluster's remote is expected to hold it
		}
		src, err := authoring.ResolveSource(ctx, o.Repo, c.Repo.BaseCommitSHA, c.Repo.Owner+"/"+c.Repo.Name)
		if err != nil {
			return err
		}
		return basecheck.RegisterFrom(remotes, src.GitDir)(ctx, c)
	}
	cl, err := o.Conn.Dial(ctx)
	if err != nil {
		return none, nil, nil, iostreams.Failed(err)
	}
	defer cl.Close()
	if err := basecheck.Ready(ctx, cl); err != nil {
		return none, nil, nil, iostreams.Failed(fmt.Errorf("the Signoff server at %s cannot run the base check: %w", o.Conn.Address, err))
	}
	rep, err := (&basecheck.Checker{Client: cl, Register: register}).CheckBase(ctx, *c)
	if err != nil {
		return none, nil, nil, iostreams.Failed(err)
	}
	if rep.ProofDir != "" {
		rep.Notes = append(rep.Notes, "proof in "+rep.ProofDir)
	}
	disc, derr := authoring.Discriminate(&authoring.Draft{Criteria: c.Criteria}, rep)
	return disc, rep, derr, nil
}
