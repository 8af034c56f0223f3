package dev

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/workers"
	"github.com/signoff/signoff/workers/devstack"
)

// WorkerOptions are the inputs of `worker`.
type WorkerOptions struct {
	IO      *iostreams.IO
	Conn    cmdutil.Conn
	Queue   string
	DataDir string
	ExecuteFlags
}

// NewCmdWorker builds `worker --queue control|execute|verify`.
func NewCmdWorker(f *cmdutil.Factory, runF func(*WorkerOptions) error) *cobra.Command {
	o := &WorkerOptions{IO: f.IO}
	cmd := &cobra.Command{
		Use:   "worker --queue control|execute|verify",
		Short: "Run one queue's worker against any Temporal cluster",
		Long: "Each queue carries its own authority: control holds the payment and deliverable credentials and\n" +
			"the bundle key; execute runs repository code and holds nothing secret; verify holds the verifier key.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.DataDir = f.DataDir
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
	o.ExecuteFlags.addFlags(fs)
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
	runsDir, _ := filepath.Abs(o.RunsDir)
	report, err := workers.StartSelfReporting(os.Getenv)
	if err != nil {
		return iostreams.Failed(err)
	}
	defer report.Close()
	interceptors, err := workers.BarrierFromEnv(os.Getenv)
	if err != nil {
		return iostreams.BadInput(err)
	}
	// Each queue carries its own authority: only this queue's clients are built.
	so := devstack.Options{DataDir: dataDir, Dial: o.Conn.DialConfig(), RunsDir: runsDir, Allow: o.Allow, Headless: true,
		Getenv: os.Getenv, Interceptors: interceptors}
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
			execute, err = o.newExecute(cfg, nil)
			return execute, err
		}
	case "verify":
		so.Verify = true
		so.BuildVerify = func(cfg workers.Config) (*activities.Verify, func(), error) {
			gate, err := workers.NewGate(os.Getenv)
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
	fmt.Fprintf(o.IO.ErrOut, "worker for the %s queue (%s) on %s, pid %d\n", o.Queue, workers.Queues[o.Queue], o.Conn.Address, os.Getpid())
	<-ctx.Done()
	return nil
}
