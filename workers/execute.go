package workers

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/executor"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/internal/preview"
	"github.com/signoff/signoff/internal/sandbox"
	"github.com/signoff/signoff/internal/staticpreview"
)

// Preview kinds.
const (
	PreviewNext   = "next"   // build and start the app (repository code runs, as the preview user)
	PreviewStatic = "static" // serve the checked-out files; no build step
)

// ExecuteOptions choose the execute queue's capabilities.
type ExecuteOptions struct {
	Executor capability.Executor // nil: not configured
	Preview  string
	// SharedDeps is an installed node_modules to hardlink from (the fixture's).
	SharedDeps string
	// RunAs is the --run-as setting, read by preview.RunAsUser.
	RunAs string
	// InstallNetwork is what an install step may reach: sandbox.NetEgress (the package
	// registry; never the host's loopback) or sandbox.NetNone.
	InstallNetwork sandbox.Network
	// WrapPreviews, when set, decorates the previews (prepared runs: runs.WithFaults).
	WrapPreviews func(capability.Previews) capability.Previews
	// Listen, Advertise and FirstPort place the previews where the verify queue reaches
	// them (preview.Config); empty keeps them on this host's loopback.
	Listen, Advertise string
	FirstPort         int
}

// NewExecute builds the execute queue's activities. A restarted worker first sweeps preview
// processes a crashed one left behind, by the PIDs it recorded.
func NewExecute(cfg Config, o ExecuteOptions) (*activities.Execute, error) {
	p := cfg.Layout()
	remotes := localgit.Remotes{Root: p.Remotes}
	e := &activities.Execute{Executor: o.Executor, Allows: executor.Allowlist(cfg.Allow).Allows}
	switch o.Preview {
	case PreviewStatic:
		e.Previews = &staticpreview.Previews{Remotes: remotes, JobsDir: filepath.Join(p.Jobs, "static")}
	case PreviewNext, "":
		root, err := datadir.PreviewJobsRoot(cfg.DataDir)
		if err != nil {
			return nil, err
		}
		if _, err := preview.Sweep(root); err != nil && !os.IsNotExist(err) {
			return nil, fmt.Errorf("sweep previews left by a previous worker: %w", err)
		}
		runAs := preview.RunAsUser(o.RunAs)
		keys, err := filepath.Abs(p.Keys)
		if err != nil {
			return nil, err
		}
		sb, err := cfg.sandbox()
		if err != nil {
			return nil, err
		}
		l, err := preview.New(preview.Config{JobsRoot: root, SharedDeps: o.SharedDeps, RunAs: runAs, SecretPaths: []string{keys},
			Sandbox: sb, InstallNetwork: o.InstallNetwork, Listen: o.Listen, Advertise: o.Advertise, FirstPort: o.FirstPort,
			PackageManagersDir: cfg.Settings.PackageManagersDir})
		if err != nil {
			return nil, fmt.Errorf("preview: %w", err)
		}
		e.Previews = &preview.Previews{Launcher: l, Remotes: remotes, BaseLinger: preview.DefaultBaseLinger}
	default:
		return nil, fmt.Errorf("unknown preview kind %q (want %s or %s)", o.Preview, PreviewNext, PreviewStatic)
	}
	if o.WrapPreviews != nil {
		e.Previews = o.WrapPreviews(e.Previews)
	}
	if cfg.Artifacts != nil {
		git := cfg.gitShare()
		e.Previews = sharedPreviews{Previews: e.Previews, git: git}
		if e.Executor != nil {
			logs := ""
			if _, ok := e.Executor.(*executor.Command); ok {
				logs = p.ExecutorLogs
			}
			e.Executor = sharedExecutor{Executor: e.Executor, git: git, logs: logs}
		}
	}
	return e, nil
}
