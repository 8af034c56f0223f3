package contract

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/activities/localgit"
	"github.com/signoff/signoff/activities/preview"
	"github.com/signoff/signoff/activities/verify"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/contracts/authoring"
	"github.com/signoff/signoff/contracts/authoring/localcheck"
	"github.com/signoff/signoff/internal/sandbox"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workflows"
	"github.com/signoff/signoff/workflows/basecheck"
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

	// Checker replaces the base check (tests); nil chooses one by Check.
	Checker authoring.BaseChecker
	// Now is the clock (tests); nil is time.Now.
	Now func() time.Time
}

// Where `contract new` runs the base check.
const (
	// CheckAuto uses the queues when a Signoff server with workers answers, and this process
	// otherwise (saying why).
	CheckAuto = "auto"
	// CheckQueues builds the base on the execute queue and verifies it on the verify queue,
	// or fails.
	CheckQueues = "queues"
	// CheckLocal builds and verifies in this process.
	CheckLocal = "local"
	// CheckNone skips the base check (--no-check).
	CheckNone = "none"
)

// EnvRateLimit caps `contract new` requests per requester per hour (default DefaultRateLimit;
// 0 turns the limit off). It is an environment setting of the operator, not a flag of the
// requester.
const EnvRateLimit = "SIGNOFF_RATE_LIMIT"

// EnvReadToken holds a read-only token for surveying private https repositories (a GitHub
// fine-grained token with Contents: read). It is sent to the repository's host only, and
// only by the survey's clone.
const EnvReadToken = "SIGNOFF_REPO_READ_TOKEN"

// DefaultRateLimit is the per-requester hourly limit when EnvRateLimit is unset.
const DefaultRateLimit = 20

// DefaultAllow is what `contract new` admits without --allow or SIGNOFF_REPO_ALLOWLIST: the
// prepared fixtures and local repositories without a recognisable remote.
var DefaultAllow = []string{"signoff-fixtures/*", "local/*"}

// EnvAllowlist holds comma-separated owner/name patterns for `contract new`.
const EnvAllowlist = "SIGNOFF_REPO_ALLOWLIST"

// NewCmdNew builds `contract new --repo PATH_OR_URL --goal "..."`; runF replaces the run in tests.
func NewCmdNew(io *iostreams.IO, runF func(*NewOptions) error) *cobra.Command {
	opts := &NewOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "new --repo PATH_OR_URL --goal \"...\"",
		Short: "Draft a contract from a goal: survey the repo, generate criteria, check them on the base commit, quote",
		Long: "Surveys the repository read-only at its base commit, turns the goal into 4-6 objective\n" +
			"criteria, runs them against the base commit in a real browser (a contract the base already\n" +
			"satisfies is vacuous and not offered), prices it, writes the contract file and prints the\n" +
			"hash to approve. Goals that cannot be checked objectively are refused with the reason (exit 2).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			opts.Ctx = cmd.Context()
			if runF != nil {
				return runF(opts)
			}
			return RunNew(opts)
		},
	}
	f := cmd.Flags()
	f.StringVar(&opts.Repo, "repo", "", "local repository (or a folder inside one), or a git URL")
	f.StringVar(&opts.Goal, "goal", "", "what should change, in plain words")
	f.StringSliceVar(&opts.Routes, "route", nil, "page or endpoint the contract is about (repeatable)")
	f.BoolVar(&opts.JSON, "json", false, "print machine-readable output")
	f.StringVar(&opts.Out, "out", "", "contract file to write (default <contract-id>.contract.json)")
	f.BoolVar(&opts.Force, "force", false, "overwrite --out if it holds something else")
	f.BoolVar(&opts.NoCheck, "no-check", false, "skip the discrimination check on the base commit (no build, no browser); same as --check none")
	f.StringVar(&opts.Check, "check", CheckAuto, "where the base check runs: auto (the queues of a running `signoff dev` or worker set, else here), queues, local, none")
	f.StringVar(&opts.Base, "base", "HEAD", "commit the contract is pinned to")
	f.StringVar(&opts.Name, "name", "", "owner/name of the repository, when it has no origin remote to read it from")
	f.StringVar(&opts.Requester, "requester", defaultRequester(), "who asks (rate limits and approval are per requester)")
	f.StringSliceVar(&opts.Allow, "allow", nil, "owner/name patterns that may be quoted (default $"+EnvAllowlist+", else "+strings.Join(DefaultAllow, ",")+")")
	f.StringVar(&opts.Budget, "budget", "", "most you will pay, e.g. 49.00 (the scope must fit; the bar never drops)")
	f.StringVar(&opts.DataDir, "data-dir", cmdutil.DefaultDataDir(), "Signoff data dir (previews, clones, base-check artifacts)")
	f.StringVar(&opts.SharedDeps, "shared-deps", filepath.Join(".cache", "finance-deps"), "installed node_modules to hardlink from")
	f.StringVar(&opts.RunAs, "run-as", "", "user the app runs as in a local check (default signoff-preview when root; - for this user)")
	f.BoolVar(&opts.Unsandboxed, workers.FlagUnsandboxed, false, "run a local check's app WITHOUT the sandbox (where namespaces are unavailable)")
	opts.Conn.AddFlags(cmd, "127.0.0.1:7233")
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
		if env := os.Getenv(EnvAllowlist); env != "" {
			allow = strings.Split(env, ",")
		} else {
			allow = DefaultAllow
		}
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
	limit, err := rateLimit()
	if err != nil {
		return iostreams.BadInput(err)
	}
	src, err := authoring.ResolveSource(ctx, opts.Repo, opts.Base, opts.Name)
	if err != nil {
		return reportNew(opts, nil, "", err)
	}
	author := &authoring.Author{
		Admission: &authoring.Admission{Allow: allow, Limit: limit, Window: time.Hour,
			Store: authoring.FileRates{Path: workers.Paths(dataDir).Rates}},
		Verifier:  verify.Ref(),
		CloneDir:  filepath.Join(dataDir, "authoring", "clones"),
		ReadToken: os.Getenv(EnvReadToken),
		Now:       opts.Now,
	}
	switch {
	case mode == CheckNone:
	case opts.Checker != nil:
		author.Checker = opts.Checker
	default:
		ch := &choosingChecker{opts: opts, mode: mode, dataDir: dataDir, src: src}
		defer ch.close()
		author.Checker = ch
	}
	res, err := author.Draft(ctx, authoring.Request{Requester: opts.Requester, Source: src, Goal: opts.Goal, Routes: opts.Routes, Budget: budget})
	if err != nil {
		return reportNew(opts, res, "", err)
	}
	if mode == CheckNone {
		res.Discrimination.Skipped = "--no-check: the criteria were not run on the base commit"
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

// rateLimit reads EnvRateLimit.
func rateLimit() (int, error) {
	v := strings.TrimSpace(os.Getenv(EnvRateLimit))
	if v == "" {
		return DefaultRateLimit, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("$%s=%q: want a number of requests per hour (0 turns the limit off)", EnvRateLimit, v)
	}
	return n, nil
}

// choosingChecker picks where the base check runs only when one actually runs, so refusals
// never dial Temporal, build, or need a browser. With the queues it registers the repository's
// base commit with the execute queue's bare remote first.
type choosingChecker struct {
	opts    *NewOptions
	mode    string
	dataDir string
	src     *authoring.Source

	once  sync.Once
	inner authoring.BaseChecker
	note  string // why a check in auto mode ran here rather than on the queues
	local *lazyChecker
	cl    client.Client
	err   error
}

func (ch *choosingChecker) CheckBase(ctx context.Context, c contracts.Contract) (*authoring.BaseReport, error) {
	ch.once.Do(func() { ch.inner, ch.err = ch.choose(ctx) })
	if ch.err != nil {
		return nil, ch.err
	}
	where := "in this process"
	if ch.cl != nil {
		where = "through the execute and verify queues at " + ch.opts.Conn.Address
	}
	fmt.Fprintf(ch.opts.IO.ErrOut, "Running %d criteria on base commit %s %s (build + browser)...\n", len(c.Criteria), shortSHA(c.Repo.BaseCommitSHA), where)
	rep, err := ch.inner.CheckBase(ctx, c)
	if err == nil && ch.note != "" {
		rep.Notes = append(rep.Notes, ch.note)
	}
	return rep, err
}

func (ch *choosingChecker) choose(ctx context.Context) (authoring.BaseChecker, error) {
	local := func(why string) (authoring.BaseChecker, error) {
		ch.note = why
		ch.local = &lazyChecker{opts: ch.opts, dataDir: ch.dataDir, src: ch.src}
		return ch.local, nil
	}
	if ch.mode == CheckLocal {
		return local("")
	}
	refuse := func(err error) (authoring.BaseChecker, error) {
		if ch.mode == CheckQueues {
			return nil, err
		}
		return local(fmt.Sprintf("checked in this process, not on the queues: %v", err))
	}
	if ch.opts.Conn.Address == "" {
		return refuse(errors.New("no --temporal-address"))
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cl, err := ch.opts.Conn.Dial(dctx)
	if err != nil {
		return refuse(err)
	}
	if err := basecheck.Ready(dctx, cl); err != nil {
		cl.Close()
		return refuse(fmt.Errorf("the Signoff server at %s cannot run it: %w", ch.opts.Conn.Address, err))
	}
	// The base commit is registered under this data dir: it must be the one the server's
	// workers use, which is where their verifier published its key.
	if _, err := workers.ReadTrust(ch.dataDir); err != nil {
		cl.Close()
		return refuse(fmt.Errorf("%s is not the data dir of the Signoff server at %s (its verifier key is not there); pass that server's --data-dir", ch.dataDir, ch.opts.Conn.Address))
	}
	ch.cl = cl
	remotes := localgit.Remotes{Root: workers.Paths(ch.dataDir).Remotes}
	return &basecheck.Checker{Client: cl, Register: basecheck.RegisterFrom(remotes, ch.src.GitDir)}, nil
}

func (ch *choosingChecker) close() {
	if ch.local != nil {
		ch.local.close()
	}
	if ch.cl != nil {
		ch.cl.Close()
	}
}

// lazyChecker builds the local preview and verifier only when a base check actually runs,
// so refusals never need node, a build or a browser.
type lazyChecker struct {
	opts    *NewOptions
	dataDir string
	src     *authoring.Source

	once  sync.Once
	inner *localcheck.LocalChecker
	err   error
}

func (l *lazyChecker) CheckBase(ctx context.Context, c contracts.Contract) (*authoring.BaseReport, error) {
	l.once.Do(func() { l.inner, l.err = l.build() })
	if l.err != nil {
		return nil, l.err
	}
	return l.inner.CheckBase(ctx, c)
}

func (l *lazyChecker) build() (*localcheck.LocalChecker, error) {
	cfg := verify.DefaultConfig()
	if err := cfg.CheckSetup(true); err != nil {
		return nil, fmt.Errorf("%w (or pass --no-check)", err)
	}
	runAs := workers.RunAsUser(l.opts.RunAs)
	shared := ""
	if l.opts.SharedDeps != "" {
		if abs, err := filepath.Abs(l.opts.SharedDeps); err == nil {
			if _, err := os.Stat(abs); err == nil {
				shared = abs
			}
		}
	}
	// Like the execute queue's previews, outside the data dir: the app runs as the preview
	// user, who must reach its folders but never the keys beside them.
	root, err := workers.PreviewJobsRoot(l.dataDir)
	if err != nil {
		return nil, err
	}
	sb, err := workers.NewSandbox(l.opts.Unsandboxed)
	if err != nil {
		return nil, err
	}
	launcher, err := preview.New(preview.Config{JobsRoot: root + "-authoring", SharedDeps: shared, RunAs: runAs, Sandbox: sb, InstallNetwork: sandbox.NetEgress})
	if err != nil {
		return nil, err
	}
	// The base check is advice for the approver, not proof: an ephemeral key signs it.
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return &localcheck.LocalChecker{
		Launcher: launcher,
		Verifier: &verify.Verifier{Config: cfg, Key: key},
		RepoDir:  l.src.GitDir,
		AppDir:   l.src.AppDir,
		OutDir:   filepath.Join(l.dataDir, "authoring", "base-checks"),
	}, nil
}

func (l *lazyChecker) close() {
	if l.inner != nil {
		_ = l.inner.Close()
	}
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
	q := QuoteFile{Version: 1, ContractID: res.Contract.ContractID, ContractHash: res.Hash, Requester: opts.Requester, Quote: *res.Quote,
		BaseCheck: workflows.DiscriminationOf(res.Discrimination)}
	keys, err := workers.ReadPublishedKeys(opts.DataDir)
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

// newReport is the --json output.
type newReport struct {
	*authoring.Result
	ContractFile string         `json:"contract_file,omitempty"`
	QuoteFile    string         `json:"quote_file,omitempty"`
	Error        map[string]any `json:"error,omitempty"`
}

// reportNew prints the outcome and maps an error to its exit code: refusals of the request
// exit 2, a contract that cannot discriminate or a failure to run exits 1.
func reportNew(opts *NewOptions, res *authoring.Result, file string, err error) error {
	code := iostreams.ExitOK
	if err != nil {
		code = iostreams.ExitFailure
		if authoring.ExitClass(err) == "input" {
			code = iostreams.ExitBadInput
		}
	}
	if opts.JSON {
		rep := newReport{Result: res, ContractFile: file}
		if file != "" {
			rep.QuoteFile = QuotePath(file)
		}
		if rep.Result == nil {
			rep.Result = &authoring.Result{}
		}
		if err != nil {
			rep.Error = errorJSON(err)
		}
		if werr := opts.IO.WriteJSON(rep); werr != nil {
			return iostreams.Failed(werr)
		}
		if code != iostreams.ExitOK {
			return iostreams.SilentExit(code)
		}
		return nil
	}
	printNew(opts.IO, res, file)
	if err != nil {
		fmt.Fprintf(opts.IO.ErrOut, "%v\n", err)
		if verify.IsSetupError(err) {
			fmt.Fprintf(opts.IO.ErrOut, "run `%s` (and `go tool task fixture:setup`), or pass --no-check\n", verify.SetupTask)
		}
		return iostreams.SilentExit(code)
	}
	return nil
}

func errorJSON(err error) map[string]any {
	out := map[string]any{"message": err.Error()}
	var r *authoring.RefusalError
	var a *authoring.AdmissionError
	var b *authoring.BudgetError
	var d *authoring.DiscriminationError
	var i *authoring.InputError
	switch {
	case errors.As(err, &r):
		out["kind"], out["code"], out["reason"], out["hint"] = "refused", r.Code, r.Reason, r.Hint
	case errors.As(err, &a):
		out["kind"], out["code"], out["reason"] = "admission", a.Code, a.Reason
	case errors.As(err, &b):
		out["kind"], out["price"], out["budget"] = "budget", b.Price, b.Budget
	case errors.As(err, &d):
		out["kind"], out["code"], out["reason"] = "discrimination", d.Code, d.Reason
	case errors.As(err, &i):
		out["kind"], out["field"], out["reason"] = "input", i.Field, i.Reason
	default:
		out["kind"] = "failed"
	}
	return out
}

func printNew(io *iostreams.IO, res *authoring.Result, file string) {
	if res == nil {
		return
	}
	if res.Survey != nil {
		io.Printf("Survey\n%s\n\n", indent(res.Survey.Summary(), "  "))
	}
	if res.Contract == nil {
		return
	}
	c := res.Contract
	io.Printf("Contract %s v%d: %d criteria for %q\n", c.ContractID, c.ContractVersion, len(c.Criteria), c.Goal)
	disc := res.Discrimination
	for i, cr := range c.Criteria {
		where := cr.Route
		if vps := cr.Viewports(); len(vps) > 0 {
			var ns []string
			for _, v := range vps {
				ns = append(ns, fmt.Sprintf("%dx%d", v.Width, v.Height))
			}
			where += " " + strings.Join(ns, "+")
		} else {
			where += " (http)"
		}
		io.Printf("  %d. %-22s %-7s %-30s %s\n", i+1, cr.ID, res.Draft.Role(cr.ID), where, cr.Description)
	}
	for _, h := range c.TestHooks {
		io.Printf("  test hook %s: %s\n", h.Selector, h.Description)
	}
	if res.Draft != nil {
		for _, n := range res.Draft.Notes {
			io.Printf("  note: %s\n", n)
		}
	}
	io.Printf("\n")
	if disc != nil {
		switch {
		case !disc.Checked:
			io.Printf("Discrimination: not run (%s)\n", disc.Skipped)
		default:
			rep := disc.Report
			where := "in this process"
			if rep.Where == authoring.WhereQueues {
				where = "on the execute and verify queues"
			}
			io.Printf("Discrimination on base %s, %s (build %s, total %s):\n", shortSHA(rep.CommitSHA), where, seconds(rep.BuildMS), seconds(rep.DurationMS))
			for _, r := range rep.Results {
				switch r.Outcome {
				case authoring.OutcomePass:
					io.Printf("  pass   %-22s already holds: regression guard\n", r.CriterionID)
				case authoring.OutcomeFail, authoring.OutcomeAbsent:
					io.Printf("  FAIL   %-22s %s\n", r.CriterionID, firstFew(r.Failures, 3))
				default:
					io.Printf("  error  %-22s %s\n", r.CriterionID, r.Error)
				}
			}
			for _, n := range rep.Notes {
				io.Printf("  note: %s\n", n)
			}
			for _, p := range disc.Problems {
				io.Printf("  check: %s\n", p)
			}
			if rep.ProofDir != "" {
				io.Printf("  evidence: %s\n", rep.ProofDir)
			}
			if len(disc.Failing) > 0 {
				io.Printf("  not vacuous: %d of %d criteria fail on the base commit; %d are regression guards\n", len(disc.Failing), len(rep.Results), len(disc.Guards))
			}
		}
		io.Printf("\n")
	}
	if q := res.Quote; q != nil {
		io.Printf("Quote: %s, about %d min, expires %s\n", FormatPrice(q.Price), q.EstimatedMinutes, q.ExpiresAt.Format(time.RFC3339))
		for _, f := range q.Factors {
			io.Printf("  %-45s %s\n", f.Name, FormatPrice(contracts.Price{Amount: f.Amount, Currency: q.Price.Currency}))
		}
		io.Printf("\n")
	}
	if file != "" {
		io.Printf("Contract written to %s (quote: %s)\n", file, QuotePath(file))
		io.Printf("Contract hash (approve this): %s\n", res.Hash)
	}
}

// firstFew joins up to n items and counts the rest (the JSON output has them all).
func firstFew(items []string, n int) string {
	if len(items) <= n {
		return strings.Join(items, "; ")
	}
	return fmt.Sprintf("%s; (+%d more)", strings.Join(items[:n], "; "), len(items)-n)
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}

func shortSHA(s string) string {
	if len(s) > 8 {
		return s[:8]
	}
	return s
}

func seconds(ms int64) string { return fmt.Sprintf("%.1f s", float64(ms)/1000) }
