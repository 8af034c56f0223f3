package workers

import (
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/executor"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/internal/preview"
	"github.com/signoff/signoff/internal/sandbox"
	"github.com/signoff/signoff/internal/settings"
	"github.com/signoff/signoff/internal/unprivileged"
)

// Executor kinds (`--executor`).
const (
	ExecutorPrepared = "prepared" // stored patches of the prepared runs
	ExecutorCommand  = "command"  // a coding CLI from SIGNOFF_EXECUTOR_COMMAND
)

// Environment variables of the command executor.
const (
	// EnvExecutorCommand is the coding CLI's command template, e.g.
	// `codex exec --full-auto {prompt}` or `claude -p {prompt}`; setting it switches the
	// execute queue to the command executor (see executor.Command for the placeholders).
	EnvExecutorCommand = "SIGNOFF_EXECUTOR_COMMAND"
	// EnvExecutorStdin ("1") feeds the prompt on the CLI's standard input instead.
	EnvExecutorStdin = "SIGNOFF_EXECUTOR_STDIN"
	// EnvExecutorPassEnv lists (comma or space separated) variables the CLI may see besides
	// PATH, LANG and TERM, such as its own model key. Signoff's secrets are refused.
	EnvExecutorPassEnv = "SIGNOFF_EXECUTOR_PASS_ENV"
	// EnvExecutorTimeout is one run's wall-clock limit (a Go duration, default 25m, below
	// the RunExecutor activity's 30 min).
	EnvExecutorTimeout = "SIGNOFF_EXECUTOR_TIMEOUT"
	// EnvExecutorNetwork is what the coding CLI may reach from its sandbox: "egress" (the
	// default: its model's API, never this host's loopback or own addresses) or "none".
	EnvExecutorNetwork = "SIGNOFF_EXECUTOR_NETWORK"
	// EnvExecutorRunAs is the user the coding CLI runs as, inside the sandbox (default
	// signoff-preview when the worker runs as root; "-" keeps the worker's own user, which
	// then must not be root).
	EnvExecutorRunAs = "SIGNOFF_EXECUTOR_RUN_AS"
)

// DefaultExecutorTimeout is a command executor run's limit when EnvExecutorTimeout is unset:
// the settings' default.
var DefaultExecutorTimeout = settings.Defaults().Executor.Timeout

// maxExecutorTimeout keeps the CLI's own limit inside the RunExecutor activity's 30 min
// start-to-close timeout (workflows/contract_attempts.go), so the executor, not Temporal, ends a run
// that is too long, and its log is kept.
const maxExecutorTimeout = 29 * time.Minute

// NewExecutor picks the execute queue's executor: kind "prepared" or "command", or "" for
// the command executor when cfg.Settings names a coding CLI (SIGNOFF_EXECUTOR_COMMAND) and
// the prepared one otherwise. A command executor first sweeps what a crashed worker left (CLI
// process groups, job directories).
func NewExecutor(cfg Config, kind string) (capability.Executor, error) {
	if kind == "" {
		kind = ExecutorPrepared
		if cfg.Settings.Executor.Command != "" {
			kind = ExecutorCommand
		}
	}
	switch kind {
	case ExecutorPrepared:
		return NewPreparedExecutor(cfg), nil
	case ExecutorCommand:
		c, err := NewCommandExecutor(cfg)
		if err != nil {
			return nil, err
		}
		if err := c.Sweep(); err != nil {
			return nil, fmt.Errorf("sweep command executor jobs left by a previous worker: %w", err)
		}
		return c, nil
	}
	return nil, fmt.Errorf("unknown executor %q (want %s or %s)", kind, ExecutorPrepared, ExecutorCommand)
}

// IsPrepared reports whether ex is the prepared runs' executor, shared or not.
func IsPrepared(ex capability.Executor) bool {
	if s, ok := ex.(sharedExecutor); ok {
		ex = s.Executor
	}
	_, ok := ex.(*executor.Prepared)
	return ok
}

// DescribeExecutor is the line a person starting the execute queue reads: which executor
// runs, and as whom.
func DescribeExecutor(ex capability.Executor) string {
	if s, ok := ex.(sharedExecutor); ok {
		ex = s.Executor
	}
	switch e := ex.(type) {
	case *executor.Command:
		return fmt.Sprintf("Executor:         coding CLI %s, %s, scrubbed environment", filepath.Base(e.Argv[0]), e.Isolation())
	case *executor.Prepared:
		return "Executor:         prepared (stored patches: changes code only for the prepared runs)"
	}
	return fmt.Sprintf("Executor:         %T", ex)
}

// NewCommandExecutor builds the coding-CLI executor from cfg.Settings.Executor (the
// SIGNOFF_EXECUTOR_* variables); zero fields take their defaults.
func NewCommandExecutor(cfg Config) (*executor.Command, error) {
	s := cfg.Settings.Executor
	tmpl := s.Command
	if tmpl == "" {
		return nil, fmt.Errorf("the command executor needs %s (e.g. %q)", EnvExecutorCommand, "claude -p {prompt}")
	}
	argv, err := executor.ParseTemplate(tmpl)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", EnvExecutorCommand, err)
	}
	timeout := s.Timeout
	if timeout == 0 {
		timeout = DefaultExecutorTimeout
	}
	if timeout < 0 || timeout > maxExecutorTimeout {
		return nil, fmt.Errorf("%s=%s: want a duration up to %s", EnvExecutorTimeout, timeout, maxExecutorTimeout)
	}
	p := cfg.Layout()
	runAs := preview.RunAsUser(s.RunAs)
	cred := &syscall.Credential{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid())}
	switch {
	case runAs != "":
		if cred, err = unprivileged.Lookup(runAs); err != nil {
			return nil, fmt.Errorf("%s: the coding CLI runs as %s: %w (run `go tool task fixture:setup` to create %s)",
				EnvExecutorRunAs, runAs, err, preview.DefaultUser)
		}
	case os.Geteuid() == 0:
		return nil, fmt.Errorf("%s: the coding CLI never runs as root; name an unprivileged user (default %s)", EnvExecutorRunAs, preview.DefaultUser)
	}
	// Like previews, outside the data dir: the CLI's user must reach its job folders but
	// never the keys beside them.
	jobs, err := datadir.ExecutorJobsRoot(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	network := sandbox.NetEgress
	if s.Network != "" {
		if network, err = sandbox.ParseNetwork(s.Network); err != nil {
			return nil, fmt.Errorf("%s=%w", EnvExecutorNetwork, err)
		}
	}
	sb, err := cfg.sandbox()
	if err != nil {
		return nil, err
	}
	c := &executor.Command{Argv: argv, Stdin: s.Stdin, JobsDir: jobs, LogDir: p.ExecutorLogs, RunAs: cred, SecretPaths: []string{p.Keys},
		Sandbox: sb, Network: network,
		Remotes: localgit.Remotes{Root: p.Remotes}, Allow: executor.Allowlist(cfg.Allow),
		PassEnv: s.PassEnv,
		Timeout: timeout, Progress: capability.Progress}
	if err := c.Check(); err != nil {
		return nil, fmt.Errorf("command executor: %w", err)
	}
	return c, nil
}
