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
	"time"

	"github.com/spf13/cobra"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/cmd/signoff/internal/cmdutil"
	"github.com/signoff/signoff/cmd/signoff/internal/iostreams"
	"github.com/signoff/signoff/workers"
)

// EnvTestBarrier names a folder a test uses to stop a worker at an exact point: at each
// hook point the worker writes <point>.reached and waits for <point>.release. Unset in
// production.
const EnvTestBarrier = "SIGNOFF_TEST_BARRIER_DIR"

// WorkerOptions are the inputs of `worker`.
type WorkerOptions struct {
	IO      *iostreams.IO
	Conn    cmdutil.Conn
	Queue   string
	DataDir string
	ExecuteFlags
}

// NewCmdWorker builds `worker --queue control|execute|verify`.
func NewCmdWorker(io *iostreams.IO, runF func(*WorkerOptions) error) *cobra.Command {
	o := &WorkerOptions{IO: io}
	cmd := &cobra.Command{
		Use:   "worker --queue control|execute|verify",
		Short: "Run one queue's worker against any Temporal cluster",
		Long: "Each queue carries its own authority: control holds the payment and deliverable credentials and\n" +
			"the bundle key; execute runs repository code and holds nothing secret; verify holds the verifier key.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if runF != nil {
				return runF(o)
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return RunWorker(ctx, o)
		},
	}
	f := cmd.Flags()
	o.Conn.AddFlags(cmd, "127.0.0.1:7233")
	f.StringVar(&o.Queue, "queue", "", "control, execute or verify")
	f.StringVar(&o.DataDir, "data-dir", cmdutil.DefaultDataDir(), "Signoff data dir")
	o.ExecuteFlags.addFlags(f)
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
	c, err := o.Conn.Dial(ctx)
	if err != nil {
		return iostreams.Failed(err)
	}
	defer c.Close()
	cfg := workers.Config{DataDir: dataDir, RunsDir: runsDir, Allow: o.Allow, Hooks: barrier(os.Getenv(EnvTestBarrier))}
	var set workers.Set
	switch o.Queue {
	case "control":
		// No public listener here: the local Stripe test double sends no webhooks and the
		// workflow polls; a local PR head watcher runs beside the worker.
		var svc *workers.Services
		if svc, err = workers.OpenServices(ctx, cfg, workers.ServiceOptions{Getenv: os.Getenv}); err == nil {
			defer svc.Close()
			local := workers.NewLocal(cfg)
			svc.Apply(local)
			set.Control, err = workers.NewControl(cfg, c, local, nil)
			defer svc.WatchHeads(c, local)()
			fmt.Fprintf(o.IO.ErrOut, "%s\n", strings.Join(svc.Describe(cfg), "\n"))
		}
	case "execute":
		if set.Execute, err = o.newExecute(cfg, &activities.FaultPlan{}); err == nil {
			fmt.Fprintf(o.IO.ErrOut, "%s\n", workers.DescribeExecutor(set.Execute.Executor))
		}
	case "verify":
		var stop func()
		var gate activities.Gate
		if gate, err = workers.NewGate(os.Getenv); err == nil {
			set.Verify, stop, err = workers.NewVerify(cfg, gate)
		}
		if stop != nil {
			defer stop()
		}
	}
	if err != nil {
		report.Report(err)
		return iostreams.Failed(err)
	}
	fmt.Fprintf(o.IO.ErrOut, "worker for the %s queue (%s) on %s, pid %d\n", o.Queue, workers.Queues[o.Queue], o.Conn.Address, os.Getpid())
	err = workers.Run(ctx, c, set)
	report.Report(err)
	return err
}

// barrier returns the test hook for dir, or nil.
func barrier(dir string) func(string) {
	if dir == "" {
		return nil
	}
	return func(point string) {
		name := strings.ReplaceAll(point, ":", "_")
		_ = os.WriteFile(filepath.Join(dir, name+".reached"), []byte(fmt.Sprint(os.Getpid())), 0o644)
		for {
			if _, err := os.Stat(filepath.Join(dir, name+".release")); err == nil {
				return
			}
			time.Sleep(20 * time.Millisecond) // waiting for a file the test writes
		}
	}
}
