// Package dev holds `signoff dev` (one process: Temporal, Web UI, every worker, both
// listeners) and `signoff worker` (one queue against any cluster).
package dev

import (
	"context"
	"fmt"
	"os/signal"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/sandbox"
	"github.com/signoff/signoff/internal/settings"
	"github.com/signoff/signoff/temporal"
	"github.com/signoff/signoff/temporal/embedded"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workers/devstack"
)

// Options are the inputs of `dev`.
type Options struct {
	IO           *iostreams.IO
	Conn         cmdutil.Conn
	DataDir      string
	TemporalPort int
	UIPort       int
	UIWrites     bool
	Retention    int
	Loopback     string
	Public       string
	PublicHosts  []string
	// Settings is the process's configuration (from the factory).
	Settings settings.Settings
	ExecuteFlags
	// Chat configures the chat bridge.
	Chat ChatFlags
	// Ready, when set, is called once everything is up (tests).
	Ready func(*devstack.Stack)
}

// NewCmdDev builds `dev`.
func NewCmdDev(f *cmdutil.Factory, runF func(*Options) error) *cobra.Command {
	o := &Options{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "dev",
		Short: "Run everything in one process: Temporal + Web UI, all workers, the listeners",
		Long: "Starts the embedded Temporal server (SQLite under the data dir, history survives a restart) and\n" +
			"its Web UI, workers for the control, execute and verify queues, a loopback listener (contract index,\n" +
			"local checkout, proof pages) and a public listener (webhooks, chat). Ctrl-C stops cleanly.\n" +
			"With --temporal-address no embedded server starts.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.DataDir = f.DataDir
			var err error
			if o.Settings, err = f.Settings(); err != nil {
				return err
			}
			o.Conn.APIKey = o.Settings.TemporalAPIKey
			if runF != nil {
				return runF(o)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return Run(ctx, o)
		},
	}
	fs := cmd.Flags()
	o.Conn.AddFlags(cmd, "")
	fs.IntVar(&o.TemporalPort, "temporal-port", temporal.DefaultFrontendPort, "embedded Temporal frontend port")
	fs.IntVar(&o.UIPort, "ui-port", embedded.DefaultUIPort, "Temporal Web UI port (0 turns the UI off)")
	fs.BoolVar(&o.UIWrites, "ui-write-actions", false, "let the Web UI signal, cancel and reset workflows; its state-changing requests then need the token in the printed URL (default: read-only UI)")
	fs.IntVar(&o.Retention, "retention-days", embedded.DefaultRetentionDays, "workflow history retention of the embedded namespace")
	fs.StringVar(&o.Loopback, "loopback", "127.0.0.1:8480", "loopback listener (index, checkout, proof pages)")
	fs.StringVar(&o.Public, "public", "127.0.0.1:8481", "public listener (webhooks, chat /submit)")
	fs.StringSliceVar(&o.PublicHosts, "public-host", nil, "a name the public listener is reached by through a tunnel or proxy (host or host:port; repeatable); other Host headers are refused")
	o.ExecuteFlags.addFlags(fs, f)
	o.Chat.addFlags(fs)
	return cmd
}

// ExecuteFlags choose the execute queue's capabilities; dev and worker share them.
type ExecuteFlags struct {
	RunsDir    string
	Preview    string
	SharedDeps string
	RunAs      string
	Allow      []string
	Executor   string
	// Unsandboxed runs repository code without the sandbox: the operator's explicit choice,
	// recorded in every build record and shown on proof pages.
	Unsandboxed bool
	// InstallNetwork is what install steps may reach: egress (never the host's loopback)
	// or none.
	InstallNetwork string
	// PreviewListen, PreviewAdvertise and PreviewFirstPort place the previews for a verify
	// worker on another host (`worker --listen --advertise`); empty: loopback.
	PreviewListen, PreviewAdvertise string
	PreviewFirstPort                int
}

// addFlags registers the flags; --allow defaults to the settings' allowlist.
func (e *ExecuteFlags) addFlags(fs *pflag.FlagSet, f *cmdutil.Factory) {
	s, _ := f.Settings() // a bad value is reported when the command runs
	fs.StringVar(&e.RunsDir, "runs-dir", filepath.Join("fixtures", "runs"), "prepared runs for the prepared executor")
	fs.StringVar(&e.Preview, "preview", workers.PreviewNext, "preview kind: next or static")
	fs.StringVar(&e.SharedDeps, "shared-deps", filepath.Join(".cache", "finance-deps"), "installed node_modules to hardlink from")
	fs.StringVar(&e.RunAs, "run-as", "", "user the app runs as (default signoff-preview when root; - for this user)")
	fs.StringSliceVar(&e.Allow, "allow", slices.Clone(s.Authoring.RepoAllowlist), "owner/name patterns contracts may touch (local/* are repositories on this machine without a remote, registered by 'contract new')")
	fs.StringVar(&e.Executor, "executor", "", executorUsage)
	fs.BoolVar(&e.Unsandboxed, sandbox.FlagUnsandboxed, false, "run repository code and the coding CLI WITHOUT the sandbox (where namespaces are unavailable); every proof says so")
	fs.StringVar(&e.InstallNetwork, "install-network", "egress", "what install steps may reach: egress (the package registry, never this host's loopback) or none")
}

// newExecute builds the execute queue's activities from the flags. With faults, the previews
// are decorated with the prepared runs' faults (W5), which this process's chat arms.
func (e *ExecuteFlags) newExecute(cfg workers.Config, faults *runs.FaultPlan) (*activities.Execute, error) {
	installNet, err := sandbox.ParseNetwork(e.InstallNetwork)
	if err != nil {
		return nil, iostreams.BadInput(fmt.Errorf("--install-network %w", err))
	}
	// One sandbox for the executor and the previews, made if either runs repository code.
	cfg.Sandbox = &sandbox.Lazy{Unsandboxed: e.Unsandboxed}
	ex, err := workers.NewExecutor(cfg, e.Executor)
	if err != nil {
		return nil, err
	}
	shared, _ := filepath.Abs(e.SharedDeps)
	o := workers.ExecuteOptions{Executor: ex, Preview: e.Preview, SharedDeps: shared, RunAs: e.RunAs, InstallNetwork: installNet,
		Listen: e.PreviewListen, Advertise: e.PreviewAdvertise, FirstPort: e.PreviewFirstPort}
	if faults != nil {
		o.WrapPreviews = faults.Decorator()
	}
	return workers.NewExecute(cfg, o)
}

// executorUsage documents --executor for dev and worker.
const executorUsage = "executor: prepared (the prepared runs' patches) or command (the coding CLI in " +
	workers.EnvExecutorCommand + "); default: command when " + workers.EnvExecutorCommand + " is set"

// Run starts the stack and blocks until ctx ends.
func Run(ctx context.Context, o *Options) error {
	dataDir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return iostreams.BadInput(err)
	}
	runsDir, _ := filepath.Abs(o.RunsDir)
	faults := &runs.FaultPlan{}
	report, err := workers.StartSelfReporting(o.Settings.Sentry)
	if err != nil {
		return iostreams.Failed(err)
	}
	defer report.Close()
	gate, err := workers.NewGate(o.Settings.Sentry)
	if err != nil {
		return iostreams.Failed(err)
	}
	barrier, err := workers.NewBarrier(o.Settings.TestBarrier)
	if err != nil {
		return iostreams.BadInput(err)
	}
	dial, err := o.Conn.In(dataDir).DialConfig()
	if err != nil {
		return iostreams.Failed(err)
	}
	var execute *activities.Execute
	st, err := devstack.Start(ctx, devstack.Options{
		DataDir: dataDir, Dial: dial, TemporalPort: o.TemporalPort, UIPort: o.UIPort, UIWriteActions: o.UIWrites, RetentionDays: o.Retention,
		LoopbackAddr: o.Loopback, PublicAddr: o.Public, PublicHosts: o.PublicHosts, RunsDir: runsDir, Allow: o.Allow, Control: true, Execute: true, Verify: true,
		Interceptors: barrier,
		BuildExecute: func(cfg workers.Config) (*activities.Execute, error) {
			e, err := o.newExecute(cfg, faults)
			execute = e
			return e, err
		},
		BuildVerify: func(cfg workers.Config) (*activities.Verify, func(), error) { return workers.NewVerify(cfg, gate) },
		Log:         o.IO.ErrOut,
		Settings:    o.Settings,
		Chat:        o.Chat.options(o.Settings, o.Executor, faults),
	})
	if err != nil {
		report.Report(err)
		return iostreams.Failed(err)
	}
	defer st.Close()
	// The prepared runs' repository (the finance fixture) gets its bare remote once.
	for _, name := range runs.List(runsDir) {
		if r, err := runs.Load(runsDir, name); err == nil {
			if err := runs.Materialize(ctx, st.ControlPlane.Deliverer.Remotes, dataDir, r.Contract); err != nil {
				fmt.Fprintf(o.IO.ErrOut, "prepared run %s: %v\n", name, err)
			}
		}
	}
	if st.Server != nil {
		o.IO.Printf("Temporal (embedded, SQLite %s): %s, namespace %s, retention %d days\n",
			st.Server.DBPath(), st.Server.FrontendAddress(), st.Namespace, st.Server.RetentionDays())
		o.IO.Printf("                  mutual TLS only: commands with --data-dir %s use its client certificate\n", dataDir)
		if st.Server.UIURL() != "" {
			o.IO.Printf("Temporal Web UI:  %s\n", st.Server.UIOpenURL())
		}
	} else {
		o.IO.Printf("Temporal (external): %s, namespace %s\n", o.Conn.Address, st.Namespace)
	}
	o.IO.Printf("Loopback:         %s  (contract index, local checkout, proof pages)\n", st.LoopbackURL)
	o.IO.Printf("Public:           %s  (webhooks, chat /submit)\n", st.PublicURL)
	o.IO.Printf("Workers:          control, execute, verify\n")
	if execute != nil {
		o.IO.Printf("%s\n", workers.DescribeExecutor(execute.Executor))
	}
	for _, line := range st.Services.Describe(st.Config) {
		o.IO.Printf("%s\n", line)
	}
	printChat(o.IO, st)
	o.IO.Printf("Data dir:         %s\nCtrl-C stops.\n", dataDir)
	if o.Ready != nil {
		o.Ready(st)
	}
	<-ctx.Done()
	o.IO.Printf("stopping...\n")
	return nil
}
