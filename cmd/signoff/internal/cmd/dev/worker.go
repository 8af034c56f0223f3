package dev

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/fixtures/runs"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/internal/preview"
	"github.com/signoff/signoff/internal/settings"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workers/devstack"
)

// WorkerOptions are the inputs of `worker`.
type WorkerOptions struct {
	IO      *iostreams.IO
	Conn    cmdutil.Conn
	Queue   string
	DataDir string
	// Artifacts is the artifact store's URL the queues share ("": the data dir's folder).
	Artifacts string
	// Advertise is HOST or HOST:PORT: the host execute's preview URLs name for the verify
	// queue, and the first port of their range. Listen is the address they listen on.
	Advertise, Listen string
	// Settings is the process's configuration (from the factory).
	Settings settings.Settings
	ExecuteFlags
}

// NewCmdWorker builds `worker --queue control|execute|verify`.
func NewCmdWorker(f *cmdutil.Factory, runF func(*WorkerOptions) error) *cobra.Command {
	o := &WorkerOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "worker --queue control|execute|verify",
		Short: "Run one queue's worker against any Temporal cluster",
		Long: "Each queue carries its own authority: control holds the payment and deliverable credentials and\n" +
			"the bundle key; execute runs repository code and holds nothing secret; verify holds the verifier key.\n\n" +
			"On several hosts, give every worker the same --artifacts store (s3://...): proofs and commits\n" +
			"travel through it, and no worker reads another's disk. An execute worker whose previews a verify\n" +
			"worker on another host must reach needs --advertise HOST[:PORT] (and --listen when HOST is a name).",
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
			return RunWorker(ctx, o)
		},
	}
	fs := cmd.Flags()
	o.Conn.AddFlags(cmd, "127.0.0.1:7233")
	fs.StringVar(&o.Queue, "queue", "", "control, execute or verify")
	fs.StringVar(&o.Artifacts, "artifacts", "", "artifact store shared by every worker: file:///abs/path or s3://bucket?endpoint=...&region=...&use_path_style=true, credentials from AWS_* variables (default: file://<data-dir>/artifacts, one machine only)")
	fs.StringVar(&o.Advertise, "advertise", "", "execute: HOST[:PORT] the verify queue reaches previews at; PORT starts a range of "+strconv.Itoa(preview.PortSpan)+" (default: loopback, any port)")
	fs.StringVar(&o.Listen, "listen", "", "execute: IP address previews listen on (default: --advertise's host when it is an IP, else 0.0.0.0 with --advertise, 127.0.0.1 without)")
	o.ExecuteFlags.addFlags(fs, f)
	return cmd
}

// RunWorker runs the queue until ctx ends.
func RunWorker(ctx context.Context, o *WorkerOptions) error {
	if _, ok := workers.Queues[o.Queue]; !ok {
		names := make([]string, 0, len(workers.Queues))
		for n := range workers.Queues {
			names = append(names, n)
		}
		sort.Strings(names)
		return iostreams.BadInput(fmt.Errorf("--queue %q: want one of %s", o.Queue, strings.Join(names, ", ")))
	}
	dataDir, err := filepath.Abs(o.DataDir)
	if err != nil {
		return iostreams.BadInput(err)
	}
	if err := o.previewAddress(); err != nil {
		return iostreams.BadInput(err)
	}
	runsDir, _ := filepath.Abs(o.RunsDir)
	report, err := workers.StartSelfReporting(o.Settings.Sentry)
	if err != nil {
		return iostreams.Failed(err)
	}
	defer report.Close()
	interceptors, err := workers.NewBarrier(o.Settings.TestBarrier)
	if err != nil {
		return iostreams.BadInput(err)
	}
	// Each queue carries its own authority: only this queue's clients are built.
	dial, err := o.Conn.In(dataDir).DialConfig()
	if err != nil {
		return iostreams.Failed(err)
	}
	so := devstack.Options{DataDir: dataDir, Dial: dial, RunsDir: runsDir, Allow: o.Allow, Headless: true,
		Settings: o.Settings, Interceptors: interceptors, Artifacts: o.Artifacts}
	var execute *activities.Execute
	switch o.Queue {
	case "control":
		// No public listener here: the local Stripe test double sends no webhooks and the
		// workflow polls; a local PR head watcher runs beside the worker.
		so.Control = true
	case "execute":
		so.Execute = true
		so.BuildExecute = func(cfg workers.Config) (*activities.Execute, error) {
			var err error
			if execute, err = o.newExecute(cfg, nil); err != nil {
				return nil, err
			}
			if workers.IsPrepared(execute.Executor) {
				// The prepared runs change the finance fixture: this host holds its own copy
				// of the base, as the control host does (no queue reads another's disk).
				if err := materializeRuns(ctx, cfg, runsDir); err != nil {
					return nil, err
				}
			}
			return execute, nil
		}
	case "verify":
		so.Verify = true
		so.BuildVerify = func(cfg workers.Config) (*activities.Verify, func(), error) {
			gate, err := workers.NewGate(o.Settings.Sentry)
			if err != nil {
				return nil, nil, err
			}
			return workers.NewVerify(cfg, gate)
		}
	}
	st, err := devstack.Start(ctx, so)
	if err != nil {
		report.Report(err)
		return iostreams.Failed(err)
	}
	defer st.Close()
	switch {
	case st.Services != nil:
		fmt.Fprintf(o.IO.ErrOut, "%s\n", strings.Join(st.Services.Describe(st.Config), "\n"))
	case execute != nil:
		fmt.Fprintf(o.IO.ErrOut, "%s\n", workers.DescribeExecutor(execute.Executor))
	}
	store := o.Artifacts
	if store == "" {
		store = datadir.DefaultArtifactsURL(dataDir) + " (one machine: every queue on this data dir)"
	}
	fmt.Fprintf(o.IO.ErrOut, "Artifacts:        %s\n", store)
	if o.Queue == "execute" {
		fmt.Fprintf(o.IO.ErrOut, "Previews:         listen on %s, reached at %s\n", o.ExecuteFlags.PreviewListen, o.ExecuteFlags.PreviewAdvertise)
	}
	fmt.Fprintf(o.IO.ErrOut, "worker for the %s queue (%s) on %s, pid %d\n", o.Queue, workers.Queues[o.Queue], o.Conn.Address, os.Getpid())
	<-ctx.Done()
	return nil
}

// previewAddress reads --advertise and --listen into the execute flags.
func (o *WorkerOptions) previewAddress() error {
	if (o.Advertise != "" || o.Listen != "") && o.Preview == workers.PreviewStatic {
		return fmt.Errorf("--advertise and --listen place next previews; static previews serve this host's loopback only")
	}
	host, port := o.Advertise, 0
	if h, p, err := net.SplitHostPort(o.Advertise); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535-preview.PortSpan {
			return fmt.Errorf("--advertise %q: the port must be a number from 1 to %d", o.Advertise, 65535-preview.PortSpan)
		}
		host, port = h, n
	}
	listen := o.Listen
	switch {
	case listen != "":
		if net.ParseIP(listen) == nil {
			return fmt.Errorf("--listen %q: want an IP address", listen)
		}
	case host == "":
		listen = "127.0.0.1"
	case net.ParseIP(host) != nil:
		listen = host
	default:
		listen = "0.0.0.0"
	}
	if host == "" {
		host = listen
	}
	if err := preview.CheckHost(host); err != nil {
		return fmt.Errorf("--advertise: %w", err)
	}
	o.ExecuteFlags.PreviewListen, o.ExecuteFlags.PreviewAdvertise, o.ExecuteFlags.PreviewFirstPort = listen, host, port
	return nil
}

// materializeRuns makes the prepared runs' repositories on this host's remotes.
func materializeRuns(ctx context.Context, cfg workers.Config, runsDir string) error {
	remotes := localgit.Remotes{Root: cfg.Layout().Remotes}
	done := map[string]bool{}
	for _, name := range runs.List(runsDir) {
		r, err := runs.Load(runsDir, name)
		if err != nil {
			return err
		}
		if key := r.Contract.Repo.Key(); !done[key] {
			if err := runs.Materialize(ctx, remotes, cfg.DataDir, r.Contract); err != nil {
				return fmt.Errorf("prepared run %s: %w", name, err)
			}
			done[key] = true
		}
	}
	return nil
}
