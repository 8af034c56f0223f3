// Package replay holds `signoff replay RUN`: a prepared run through the real workflow.
package replay

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/cmd/signoff/internal/progress"
	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/proofstore"
	"github.com/signoff/signoff/internal/sandbox"
	"github.com/signoff/signoff/internal/settings"
	"github.com/signoff/signoff/temporal/embedded"
	"github.com/signoff/signoff/web"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workers/devstack"
	"github.com/signoff/signoff/workflows/contractapi"
)

// Options are the inputs of `replay`.
type Options struct {
	IO         *iostreams.IO
	Conn       cmdutil.Conn
	Runs       []string
	RunsDir    string
	DataDir    string
	ProofDir   string
	Preview    string
	SharedDeps string
	RunAs      string
	// InstallNetwork is what install and build steps may reach ("egress" or "none").
	InstallNetwork string
	JSON           bool
	// Settings is the process's configuration (from the factory); only its paths and browser
	// apply (replaySettings).
	Settings settings.Settings
	// Queues are the queues this process works; the others' workers run elsewhere
	// (`signoff worker`), against the same Temporal and artifact store.
	Queues []string
	// Artifacts is the artifact store's URL ("": the data dir's folder).
	Artifacts string
	// Parallel runs that many runs at once (each on its own repository, or the repository
	// lock serialises them); 1 runs them one after another.
	Parallel int
}

// NewCmdReplay builds `replay RUN...`.
func NewCmdReplay(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "replay RUN [RUN...]",
		Short: "Re-run prepared runs (W1-W5, G1, P1, P2) for real and check their verdicts",
		Long: "Runs each prepared contract through the real workflow on the embedded Temporal server (or\n" +
			"--temporal-address), in a fresh data dir under <data-dir>/replays unless --data-dir is given:\n" +
			"the prepared executor's patches, a real build, a real Chromium, the policy,\n" +
			"the local Stripe test double (test mode, no money moves). Prints live progress, the verdict per attempt, the\n" +
			"payment state and the proof directory, and exits 1 when the outcome differs from run.json.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Runs = args
			// A replay gets a fresh data dir of its own under the data dir's replays/, unless
			// --data-dir names one.
			if cmd.Flags().Changed("data-dir") {
				o.DataDir = f.DataDir
			} else {
				o.DataDir = filepath.Join(f.DataDir, "replays", time.Now().UTC().Format("20060102-150405"))
			}
			var err error
			if o.Settings, err = f.Settings(); err != nil {
				return err
			}
			o.Conn.APIKey = o.Settings.TemporalAPIKey
			// The embedded server a replay dials runs on the root data dir, not the replay's own.
			o.Conn = o.Conn.In(f.DataDir)
			if runF != nil {
				return runF(o)
			}
			return Run(cmd.Context(), o)
		},
	}
	fs := cmd.Flags()
	o.Conn.AddFlags(cmd, "")
	fs.StringVar(&o.RunsDir, "runs-dir", filepath.Join("fixtures", "runs"), "folder of prepared runs")
	fs.StringVar(&o.ProofDir, "proof-dir", "", "write proofs here instead of the data dir")
	fs.StringVar(&o.Preview, "preview", workers.PreviewNext, "preview kind: next (build and start the app) or static")
	fs.StringVar(&o.SharedDeps, "shared-deps", filepath.Join(".cache", "finance-deps"), "installed node_modules to hardlink from")
	fs.StringVar(&o.RunAs, "run-as", "", "user the app runs as (default signoff-preview when root; - for this user)")
	fs.StringVar(&o.InstallNetwork, "install-network", "none", "what install and build steps may reach: none (a replay is hermetic: the prepared runs hardlink the shared install) or egress, as dev and worker default to")
	fs.BoolVar(&o.JSON, "json", false, "JSON lines for progress and a JSON summary")
	fs.StringSliceVar(&o.Queues, "queues", []string{"control", "execute", "verify"}, "queues this process works; with --temporal-address the others may run as signoff worker processes on other hosts (control must be here: it holds the local Stripe test double the replay pays through)")
	fs.IntVar(&o.Parallel, "parallel", 1, "runs at once (runs on one repository still take turns: it is locked per contract)")
	fs.StringVar(&o.Artifacts, "artifacts", "", "artifact store shared with workers elsewhere (default: file://<data-dir>/artifacts)")
	return cmd
}

// Run replays each run in one process, one after another.
func Run(ctx context.Context, o *Options) error {
	var loaded []*runs.Run
	for _, name := range o.Runs {
		r, err := runs.Load(o.RunsDir, name)
		if err != nil {
			return iostreams.BadInput(err)
		}
		loaded = append(loaded, r)
	}
	if o.DataDir == "" {
		base := o.Settings.DataDir
		if base == "" {
			base = settings.Defaults().DataDir
		}
		o.DataDir = filepath.Join(base, "replays", time.Now().UTC().Format("20060102-150405"))
	}
	dataDir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return iostreams.BadInput(err)
	}
	shared := o.SharedDeps
	if shared != "" {
		if shared, err = filepath.Abs(shared); err != nil {
			return iostreams.BadInput(err)
		}
	}
	runsDir, err := filepath.Abs(o.RunsDir)
	if err != nil {
		return iostreams.BadInput(err)
	}
	if o.Parallel < 1 {
		return iostreams.BadInput(fmt.Errorf("--parallel %d: want 1 or more", o.Parallel))
	}
	queues, err := replayQueues(o.Queues)
	if err != nil {
		return iostreams.BadInput(err)
	}
	if o.InstallNetwork == "" {
		o.InstallNetwork = "none"
	}
	installNet, err := sandbox.ParseNetwork(o.InstallNetwork)
	if err != nil {
		return iostreams.BadInput(fmt.Errorf("--install-network %w", err))
	}
	dial, err := o.Conn.DialConfig()
	if err != nil {
		return iostreams.Failed(err)
	}
	faults := &runs.FaultPlan{}
	st, err := devstack.Start(ctx, devstack.Options{
		DataDir: dataDir, Dial: dial, ProofDir: o.ProofDir, TemporalPort: embedded.AnyPort, Artifacts: o.Artifacts,
		RunsDir: runsDir, Allow: slices.Clone(workers.DefaultAllow), Control: true, Execute: queues["execute"], Verify: queues["verify"],
		BuildExecute: func(cfg workers.Config) (*activities.Execute, error) {
			return workers.NewExecute(cfg, workers.ExecuteOptions{Executor: workers.NewPreparedExecutor(cfg),
				Preview: o.Preview, SharedDeps: shared, RunAs: o.RunAs, InstallNetwork: installNet, WrapPreviews: faults.Decorator()})
		},
		BuildVerify: func(cfg workers.Config) (*activities.Verify, func(), error) { return workers.NewVerify(cfg, nil) },
		Log:         nil,
		Settings:    replaySettings(o.Settings),
	})
	if err != nil {
		return iostreams.Failed(err)
	}
	defer st.Close()
	trust, err := workers.ReadTrust(dataDir)
	if err != nil {
		return iostreams.Failed(err)
	}
	replayOne := func(r *runs.Run, out io.Writer, tty bool) (contractapi.Status, []string, error) {
		p := &progress.Printer{Out: out, TTY: tty, JSON: o.JSON}
		return r.Replay(ctx, runs.Env{Client: st.Client, Remotes: st.ControlPlane.Deliverer.Remotes, DataDir: dataDir,
			Trust: trust, Faults: faults, OnStatus: p.Update, Timeouts: cmdutil.ContractTimeouts(o.Settings),
			Pay: func(ctx context.Context, id string) error {
				_, err := web.CompleteTestCheckout(ctx, st.Client, id)
				return err
			}})
	}
	failed := 0
	var summaries []map[string]any
	report := func(r *runs.Run, final contractapi.Status, mismatches []string) {
		if len(mismatches) > 0 {
			failed++
		}
		if o.JSON {
			summaries = append(summaries, map[string]any{"run": r.Name, "status": final, "mismatches": mismatches, "ok": len(mismatches) == 0})
			return
		}
		printSummary(o.IO, r, final, mismatches, proofstore.Store{Root: st.Config.Layout().Proofs})
	}
	if o.Parallel > 1 {
		if err := replayParallel(o, loaded, replayOne, report); err != nil {
			return iostreams.Failed(err)
		}
	} else {
		for _, r := range loaded {
			if !o.JSON {
				o.IO.Printf("== %s: %s\n", r.Name, r.Spec.Description)
			}
			final, mismatches, err := replayOne(r, o.IO.Out, o.IO.IsTTY)
			if err != nil {
				return iostreams.Failed(fmt.Errorf("run %s: %w", r.Name, err))
			}
			report(r, final, mismatches)
		}
	}
	if o.JSON {
		_ = o.IO.WriteJSON(summaries)
	} else {
		// The proofs sit in the replay's data dir, so its keys are named explicitly (--keys):
		// found implicitly beside a proof they would be refused as possibly the proof's own.
		proofs, keys := st.Config.Layout().Proofs, st.Config.Layout().Keys
		o.IO.Printf("\nproofs: %s\n", proofs)
		pins := ""
		if k, err := datadir.ReadPublishedKeys(dataDir); err == nil && k.VerifierFingerprint != "" && k.ControlFingerprint != "" {
			o.IO.Printf("signed by: verifier %s, control %s\n", k.VerifierFingerprint, k.ControlFingerprint)
			pins = fmt.Sprintf(" --verifier-fingerprint %s --control-fingerprint %s", k.VerifierFingerprint, k.ControlFingerprint)
		}
		o.IO.Printf("  check one offline:  signoff proof verify %s/<contract>/attempt-1/try-1 --keys %s%s\n", proofs, keys, pins)
		o.IO.Printf("  read them:          signoff proof serve %s/<contract> --keys %s\n", proofs, keys)
	}
	if failed > 0 {
		return iostreams.SilentExit(iostreams.ExitFailure)
	}
	return nil
}

// replayParallel runs up to o.Parallel runs at once; each progress line is prefixed with its
// run's name, and each summary printed when its run ends.
func replayParallel(o *Options, loaded []*runs.Run, one func(*runs.Run, io.Writer, bool) (contractapi.Status, []string, error),
	report func(*runs.Run, contractapi.Status, []string)) error {
	var mu sync.Mutex // orders progress lines and summaries
	sem := make(chan struct{}, o.Parallel)
	errs := make([]error, len(loaded))
	var wg sync.WaitGroup
	for i, r := range loaded {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			final, mismatches, err := one(r, &prefixLines{mu: &mu, out: o.IO.Out, prefix: "[" + r.Name + "] "}, false)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs[i] = fmt.Errorf("run %s: %w", r.Name, err)
				return
			}
			report(r, final, mismatches)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// prefixLines writes whole lines, each with a prefix, under a lock shared with other runs.
type prefixLines struct {
	mu     *sync.Mutex
	out    io.Writer
	prefix string
	buf    []byte
}

func (w *prefixLines) Write(p []byte) (int, error) {
	w.buf = append(w.buf, p...)
	for {
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 {
			return len(p), nil
		}
		w.mu.Lock()
		_, err := fmt.Fprintf(w.out, "%s%s\n", w.prefix, w.buf[:i])
		w.mu.Unlock()
		w.buf = w.buf[i+1:]
		if err != nil {
			return len(p), err
		}
	}
}

// replayQueues reads --queues: control always, since the replay pays through the local Stripe
// test double that the control queue's process runs.
func replayQueues(names []string) (map[string]bool, error) {
	out := map[string]bool{}
	for _, n := range names {
		if _, ok := workers.Queues[n]; !ok {
			return nil, fmt.Errorf("--queues: %q is not a queue (control, execute, verify)", n)
		}
		out[n] = true
	}
	if !out["control"] {
		return nil, fmt.Errorf("--queues must include control: the replay pays through the local Stripe test double the control queue runs")
	}
	return out, nil
}

// printSummary prints a run's outcome. Proof folders are named in this process's own proof
// store, where the control queue keeps each attempt whole; the verify queue's folder, which
// the status names, may be on another host.
func printSummary(io *iostreams.IO, r *runs.Run, st contractapi.Status, mismatches []string, proofs proofstore.Store) {
	io.Printf("-- %s result\n", r.Name)
	for _, a := range st.Attempts {
		io.Printf("   attempt %d (try %d): %s", a.Attempt, a.Try, a.Verdict)
		if len(a.Reasons) > 0 {
			io.Printf(" — %s", a.Reasons[0].Message)
		}
		io.Printf("\n")
		dir := a.ProofDir
		if d, err := proofs.Dir(r.Contract.ContractID, a.Attempt, max(a.Try, 1)); err == nil {
			if _, err := os.Stat(d); err == nil {
				dir = d
			}
		}
		if dir != "" {
			io.Printf("     proof: %s\n", dir)
		}
	}
	label := ""
	if st.Payment.Local {
		label = " (local Stripe test double: test mode, no money moves)"
	}
	io.Printf("   payment: %s%s; final state: %s\n", st.Payment.State, label, st.State)
	for _, e := range st.Timeline {
		if e.Type == contracts.EventMergeEligibilityRevoked {
			io.Printf("   merge eligibility revoked: %s (head %s, verified %s)\n", e.Data[contracts.DataWhy], contracts.ShortSHA(e.Data[contracts.DataHead]), contracts.ShortSHA(e.Data[contracts.DataVerified]))
		}
	}
	if len(mismatches) == 0 {
		io.Printf("   matches run.json: %s\n", strings.Join(r.Spec.Expected.Verdicts, ", "))
		return
	}
	fmt.Fprintf(io.ErrOut, "   MISMATCH with run.json:\n")
	for _, m := range mismatches {
		fmt.Fprintf(io.ErrOut, "     - %s\n", m)
	}
}

// replaySettings keeps what places the tools and the browser and drops every service: a
// replay reproduces a prepared run on local services only (the local Stripe test double, the
// bare remote, the prepared executor), whatever keys the shell holds.
func replaySettings(s settings.Settings) settings.Settings {
	local := settings.Defaults()
	local.DataDir, local.Browser, local.PackageManagersDir, local.StripeMock = s.DataDir, s.Browser, s.PackageManagersDir, s.StripeMock
	return local
}
