package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/authoring"
	"github.com/signoff/signoff/authoring/basecheck"
	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/sandbox"
	"github.com/signoff/signoff/internal/settings"
	"github.com/signoff/signoff/workers"
)

// NewOptions are the inputs of `contract new`.
type NewOptions struct {
	IO  *iostreams.IO
	Ctx context.Context

	Repo      string
	Goal      string
	Routes    []string
	JSON      bool
	Out       string
	Force     bool
	NoCheck   bool
	Base      string
	Name      string
	Requester string
	Allow     []string
	Budget    string

	DataDir    string
	SharedDeps string
	RunAs      string
	// Unsandboxed runs a local check's app without the sandbox (the operator's choice).
	Unsandboxed bool
	// Check says where the base check runs: CheckAuto, CheckQueues, CheckLocal or CheckNone.
	Check string
	// Conn reaches the Signoff server whose queues run the base check.
	Conn cmdutil.Conn
	// Artifacts is the store the server's workers share, when they run on other hosts.
	Artifacts string
	// Settings is the process's configuration (from the factory): the operator's rate limit
	// and allowlist (not flags of the requester), the read token for private repositories,
	// and the browser of a local check.
	Settings settings.Settings

	// Checker replaces the base check (tests); nil chooses one by Check.
	Checker authoring.BaseChecker
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// Where `contract new` runs the base check (--check): the first three are basecheck.Choice's
// modes.
const (
	// CheckAuto uses the queues when a Signoff server with workers answers, and this process
	// otherwise (saying why).
	CheckAuto = string(basecheck.ModeAuto)
	// CheckQueues builds the base on the execute queue and verifies it on the verify queue,
	// or fails.
	CheckQueues = string(basecheck.ModeQueues)
	// CheckLocal builds and verifies in this process.
	CheckLocal = string(basecheck.ModeLocal)
	// CheckNone skips the base check (--no-check).
	CheckNone = "none"
)

// NewCmdNew builds `contract new --repo PATH_OR_URL --goal "..."`; runF replaces the run in tests.
func NewCmdNew(f *cmdutil.Factory, runF func(*NewOptions) error) *cobra.Command {
	opts := &NewOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "new --repo PATH_OR_URL --goal \"...\"",
		Short: "Draft a contract from a goal: survey the repo, generate criteria, check them on the base commit, quote",
		Long: "Surveys the repository read-only at its base commit, turns the goal into 4-6 objective\n" +
			"criteria, runs them against the base commit in a real browser (a contract the base already\n" +
			"satisfies is vacuous and not offered), prices it, writes the contract file and prints the\n" +
			"hash to approve. Goals that cannot be checked objectively are refused with the reason (exit 2).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.DataDir = f.DataDir
			opts.Ctx = cmd.Context()
			var err error
			if opts.Settings, err = f.Settings(); err != nil {
				return err
			}
			opts.Conn.APIKey = opts.Settings.TemporalAPIKey
			if runF != nil {
				return runF(opts)
			}
			return RunNew(opts)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&opts.Repo, "repo", "", "local repository (or a folder inside one), or a git URL")
	fs.StringVar(&opts.Goal, "goal", "", "what should change, in plain words")
	fs.StringSliceVar(&opts.Routes, "route", nil, "page or endpoint the contract is about (repeatable)")
	fs.BoolVar(&opts.JSON, "json", false, "print machine-readable output")
	fs.StringVar(&opts.Out, "out", "", "contract file to write (default <contract-id>.contract.json)")
	fs.BoolVar(&opts.Force, "force", false, "overwrite --out if it holds something else")
	fs.BoolVar(&opts.NoCheck, "no-check", false, "skip the base check (no build, no browser); same as --check none")
	fs.StringVar(&opts.Check, "check", CheckAuto, "where the base check runs: auto (the queues of a running 'signoff dev' or worker set, else here), queues, local, none")
	fs.StringVar(&opts.Base, "base", "HEAD", "commit the contract is pinned to")
	fs.StringVar(&opts.Name, "name", "", "owner/name of the repository, when it has no origin remote to read it from")
	fs.StringVar(&opts.Requester, "requester", defaultRequester(), "who asks (rate limits and approval are per requester)")
	fs.StringSliceVar(&opts.Allow, "allow", nil, "owner/name patterns that may be quoted (default $SIGNOFF_REPO_ALLOWLIST, else "+strings.Join(workers.DefaultAllow, ",")+")")
	fs.StringVar(&opts.Budget, "budget", "", "most you will pay, e.g. 49.00 (the scope must fit; the bar never drops)")
	fs.StringVar(&opts.SharedDeps, "shared-deps", filepath.Join(".cache", "finance-deps"), "installed node_modules to hardlink from")
	fs.StringVar(&opts.RunAs, "run-as", "", "user the app runs as in a local check (default signoff-preview when root; - for this user)")
	fs.BoolVar(&opts.Unsandboxed, sandbox.FlagUnsandboxed, false, "run a local check's app WITHOUT the sandbox (where namespaces are unavailable)")
	opts.Conn.AddFlags(cmd, "127.0.0.1:7233")
	fs.StringVar(&opts.Artifacts, "artifacts", "", artifactsUsage)
	return cmd
}

var budgetRe = regexp.MustCompile(`^(\d{1,7})(?:\.(\d{1,2}))?$`)

// parseBudget reads "49" or "49.50" as minor units.
func parseBudget(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	m := budgetRe.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("--budget %q: want an amount like 49 or 49.50", s)
	}
	whole, _ := strconv.ParseInt(m[1], 10, 64)
	cents := int64(0)
	if m[2] != "" {
		frac := m[2]
		if len(frac) == 1 {
			frac += "0"
		}
		cents, _ = strconv.ParseInt(frac, 10, 64)
	}
	return whole*100 + cents, nil
}

// RunNew drafts, checks and writes a contract.
func RunNew(opts *NewOptions) error {
	ctx := opts.Ctx
	if ctx == nil {
		ctx = context.Background()
	}
	if strings.TrimSpace(opts.Repo) == "" || strings.TrimSpace(opts.Goal) == "" {
		return iostreams.BadInput(errors.New("--repo and --goal are required"))
	}
	budget, err := parseBudget(opts.Budget)
	if err != nil {
		return iostreams.BadInput(err)
	}
	allow := opts.Allow
	if len(allow) == 0 {
		allow = slices.Clone(opts.Settings.Authoring.RepoAllowlist)
	}
	if len(allow) == 0 {
		allow = slices.Clone(workers.DefaultAllow)
	}
	if err := authoring.CheckPatterns(allow); err != nil {
		return iostreams.BadInput(err)
	}
	dataDir, err := filepath.Abs(opts.DataDir)
	if err != nil {
		return iostreams.BadInput(err)
	}
	mode := opts.Check
	switch {
	case opts.NoCheck:
		mode = CheckNone
	case mode == "":
		mode = CheckAuto
	}
	if mode != CheckAuto && mode != CheckQueues && mode != CheckLocal && mode != CheckNone {
		return iostreams.BadInput(fmt.Errorf("--check %q: want auto, queues, local or none", opts.Check))
	}
	limit := opts.Settings.Authoring.RateLimit // 0: off
	src, err := survey.ResolveSource(ctx, opts.Repo, opts.Base, opts.Name)
	if err != nil {
		return reportNew(opts, nil, "", err)
	}
	author := workers.NewAuthor(workers.AuthorOptions{DataDir: dataDir, Allow: allow, Limit: limit,
		ReadToken: opts.Settings.Authoring.RepoReadToken, Now: opts.Now})
	switch {
	case mode == CheckNone:
	case opts.Checker != nil:
		author.Checker = opts.Checker
	default:
		ch := newChoice(opts, mode, dataDir, src)
		defer ch.Close()
		author.Checker = ch
	}
	res, err := author.Draft(ctx, authoring.Request{Requester: opts.Requester, Source: src, Goal: opts.Goal, Routes: opts.Routes, Budget: budget,
		Progress: func(msg string) { fmt.Fprintln(opts.IO.ErrOut, msg) }})
	if err != nil {
		return reportNew(opts, res, "", err)
	}
	if mode == CheckNone {
		res.BaseCheck.Skipped = "--no-check: the criteria were not run on the base commit"
	}
	file, err := writeContract(opts, res)
	if err != nil {
		return err
	}
	if err := writeQuote(opts, res, file); err != nil {
		return err
	}
	return reportNew(opts, res, file, nil)
}

// writeContract writes the contract file atomically. An existing file with other content is
// left alone unless --force.
func writeContract(opts *NewOptions, res *authoring.Result) (string, error) {
	file := opts.Out
	if file == "" {
		file = res.Contract.ContractID + ".contract.json"
	}
	data, err := json.MarshalIndent(res.Contract, "", "  ")
	if err != nil {
		return "", iostreams.Failed(err)
	}
	return file, writeAtomic(file, append(data, '\n'), opts.Force)
}

// writeQuote writes the quote beside the contract: `contract start` reads its expiry and
// base check from there.
func writeQuote(opts *NewOptions, res *authoring.Result, contractFile string) error {
	q := QuoteFile{Version: 1, ContractID: res.Contract.ContractID, ContractHash: res.Hash, Requester: opts.Requester, Estimate: *res.Estimate,
		BaseCheck: res.BaseCheck.Record()}
	keys, err := datadir.ReadPublishedKeys(opts.DataDir)
	if err != nil {
		return iostreams.Failed(fmt.Errorf("quote: the data dir's public keys: %w", err))
	}
	q.VerifierKeyFingerprint, q.ControlKeyFingerprint = keys.VerifierFingerprint, keys.ControlFingerprint
	data, err := json.MarshalIndent(q, "", "  ")
	if err != nil {
		return iostreams.Failed(err)
	}
	// The quote follows its contract: --force on the contract replaces a stale quote too.
	return writeAtomic(QuotePath(contractFile), append(data, '\n'), true)
}

// writeAtomic writes file through a temporary file and a rename. An existing file with other
// content is left alone unless force.
func writeAtomic(file string, data []byte, force bool) error {
	if old, err := os.ReadFile(file); err == nil && !bytes.Equal(old, data) && !force {
		return iostreams.BadInput(fmt.Errorf("%s exists with other content: pass --force to replace it, or --out another file", file))
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".signoff-*.json")
	if err != nil {
		return iostreams.Failed(fmt.Errorf("write %s: %w", file, err))
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return iostreams.Failed(fmt.Errorf("write %s: %w", file, err))
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return iostreams.Failed(err)
	}
	if err := tmp.Close(); err != nil {
		return iostreams.Failed(err)
	}
	if err := os.Rename(tmp.Name(), file); err != nil {
		return iostreams.Failed(fmt.Errorf("write %s: %w", file, err))
	}
	return nil
}
