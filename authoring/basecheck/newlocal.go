package basecheck

import (
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"

	"github.com/signoff/signoff/authoring/survey"
	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/preview"
	"github.com/signoff/signoff/internal/sandbox"
	"github.com/signoff/signoff/internal/settings"
	"github.com/signoff/signoff/internal/verify"
)

// LocalOptions say how this process checks a base commit: like the execute queue's previews,
// but with an ephemeral verifier key.
type LocalOptions struct {
	// DataDir receives the evidence (under authoring/base-checks) and names the previews'
	// folder outside it.
	DataDir string
	// Source is the repository and the app's folder in it.
	Source *survey.Source
	// SharedDeps is installed node_modules to hardlink from; a path that does not exist is
	// ignored.
	SharedDeps string
	// RunAs is the user the app runs as, in preview.RunAsUser's terms.
	RunAs string
	// Unsandboxed runs the app without the sandbox (the operator's choice).
	Unsandboxed bool
	// Browser and PackageManagersDir are the process's settings for the verifier's browser
	// and the pinned package managers; zero values take their defaults.
	Browser            settings.Browser
	PackageManagersDir string
}

// NewLocal builds the local checker for o. It fails first, with a verify.SetupError, when
// the browser setup is missing.
func NewLocal(o LocalOptions) (*Local, error) {
	if o.Source == nil {
		return nil, errors.New("basecheck: LocalOptions.Source is required")
	}
	cfg := verify.ConfigFrom(o.Browser)
	if err := cfg.CheckSetup(true); err != nil {
		return nil, err
	}
	shared := ""
	if o.SharedDeps != "" {
		if abs, err := filepath.Abs(o.SharedDeps); err == nil {
			if _, err := os.Stat(abs); err == nil {
				shared = abs
			}
		}
	}
	// Like the execute queue's previews, outside the data dir: the app runs as the preview
	// user, who must reach its folders but never the keys beside them.
	root, err := datadir.AuthoringPreviewJobsRoot(o.DataDir)
	if err != nil {
		return nil, err
	}
	sb, err := sandbox.Default(o.Unsandboxed)
	if err != nil {
		return nil, err
	}
	launcher, err := preview.New(preview.Config{JobsRoot: root, SharedDeps: shared, RunAs: preview.RunAsUser(o.RunAs),
		Sandbox: sb, InstallNetwork: sandbox.NetEgress, PackageManagersDir: o.PackageManagersDir})
	if err != nil {
		return nil, err
	}
	// The base check is advice for the approver, not proof: an ephemeral key signs it.
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return nil, err
	}
	return &Local{
		Launcher: launcher,
		Verifier: &verify.Verifier{Config: cfg, Key: key},
		RepoDir:  o.Source.GitDir,
		AppDir:   o.Source.AppDir,
		OutDir:   filepath.Join(o.DataDir, "authoring", "base-checks"),
	}, nil
}
