package verify

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/signoff/signoff/internal/unprivileged"
)

// The browser launcher. Playwright's driver runs as the worker (root, with the worker's whole
// environment) and spawns the browser executable it is given, with the DevTools pipe on fds 3
// and 4. Local gives it this very executable with launcherEnv set: the process then never gets
// past package init. It hands the fresh profile directory to the browser user, drops to that
// user with no groups, no capabilities and no_new_privs, replaces the environment with
// browserEnv, and execs Chromium with the same arguments and fds. Chromium's own namespace
// sandbox then confines the renderers that run the app under test.

// launcherEnv turns any binary that links this package into the browser launcher. Its value is
// a JSON launchSpec, or usernsProbeValue.
const launcherEnv = "SIGNOFF_BROWSER_LAUNCHER"

// usernsProbeValue marks the child the sandbox probe starts in fresh namespaces: it only has
// to exist to prove they can be created.
const usernsProbeValue = "userns-probe"

// launchSpec is what the worker tells its launcher.
type launchSpec struct {
	Chromium string `json:"chromium"`
	// Switch: become UID/GID. False when the worker is not root (it cannot switch, and is
	// already not root).
	Switch bool   `json:"switch"`
	UID    uint32 `json:"uid"`
	GID    uint32 `json:"gid"`
	// Sandbox: refuse any argument that turns Chromium's sandbox off.
	Sandbox bool `json:"sandbox"`
	// Probe: check that the user can create the namespaces Chromium's sandbox uses, and exit.
	Probe bool `json:"probe"`
}

// sandboxOffSwitches are the Chromium switches that disable a sandbox layer or put the
// renderer into the browser process.
var sandboxOffSwitches = []string{
	"--no-sandbox", "--disable-namespace-sandbox", "--disable-seccomp-filter-sandbox",
	"--disable-gpu-sandbox", "--single-process", "--in-process-gpu",
}

// sandboxOffSwitch returns the first argument that would turn a sandbox layer off.
func sandboxOffSwitch(args []string) string {
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		for _, s := range sandboxOffSwitches {
			if name == s {
				return a
			}
		}
	}
	return ""
}

// featureSwitches are the Chromium switches that take a list of features. Chromium keeps only
// the last of each, and Playwright passes its own --disable-features before LaunchArgs.
var featureSwitches = []string{"--disable-features", "--enable-features"}

// mergeFeatures returns args with every feature switch given once, at its first place, with
// the features of all its occurrences in order and without repeats.
func mergeFeatures(args []string) []string {
	lists := map[string][]string{}
	for _, a := range args {
		name, val, _ := strings.Cut(a, "=")
		if slices.Contains(featureSwitches, name) {
			for _, f := range strings.Split(val, ",") {
				if f != "" && !slices.Contains(lists[name], f) {
					lists[name] = append(lists[name], f)
				}
			}
		}
	}
	out := make([]string, 0, len(args))
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		if !slices.Contains(featureSwitches, name) {
			out = append(out, a)
			continue
		}
		if fs, ok := lists[name]; ok {
			out = append(out, name+"="+strings.Join(fs, ","))
			delete(lists, name)
		}
	}
	return out
}

// userDataDir returns the profile directory Playwright passes.
func userDataDir(args []string) (string, error) {
	for _, a := range args {
		if dir, ok := strings.CutPrefix(a, "--user-data-dir="); ok {
			if !filepath.IsAbs(dir) {
				return "", fmt.Errorf("profile directory %q is not absolute", dir)
			}
			return filepath.Clean(dir), nil
		}
	}
	return "", errors.New("no --user-data-dir among the arguments")
}

// browserEnv is Chromium's whole environment: the private profile as home and XDG dirs
// (fontconfig keeps its cache there), a fixed PATH and locale. Nothing comes from the worker.
func browserEnv(home string) []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"LANG=C.UTF-8",
	}
}

// launchPlan is how Local starts Chromium on this machine.
type launchPlan struct {
	launcher string // this executable
	spec     launchSpec
}

// env is what Playwright is told to give the launcher: the spec and nothing else, so not even
// a launcher that failed to clear it would pass on the worker's variables.
func (p launchPlan) env() (map[string]string, error) {
	raw, err := json.Marshal(p.spec)
	if err != nil {
		return nil, fmt.Errorf("browser launcher spec: %w", err)
	}
	return map[string]string{launcherEnv: string(raw)}, nil
}

// planLaunch resolves the browser user and whether Chromium's sandbox can run. A root worker
// without the browser user, or a machine without user namespaces (unless allowNoSandbox), is a
// SetupError.
func planLaunch(ctx context.Context, chromium, user string, allowNoSandbox bool) (launchPlan, error) {
	self, err := os.Executable()
	if err != nil {
		return launchPlan{}, fmt.Errorf("browser launcher: locate this executable: %w", err)
	}
	p := launchPlan{launcher: self, spec: launchSpec{Chromium: chromium, Sandbox: true}}
	if os.Geteuid() == 0 {
		if user == "" {
			user = DefaultBrowserUser
		}
		cred, err := unprivileged.Lookup(user)
		if err != nil {
			return launchPlan{}, &SetupError{Missing: "the unprivileged browser user " + user, Err: err}
		}
		p.spec.Switch, p.spec.UID, p.spec.GID = true, cred.Uid, cred.Gid
	}
	if err := sandboxProbe(ctx, p); err != nil {
		if !allowNoSandbox {
			return launchPlan{}, &SetupError{
				Missing: "user namespaces for Chromium's sandbox (or set " + EnvAllowNoBrowserSandbox + "=1 to run it without)",
				Err:     err,
			}
		}
		p.spec.Sandbox = false
	}
	return p, nil
}

// sandboxProbe is probeSandbox; tests replace it to stand for a machine without namespaces.
var sandboxProbe = probeSandbox

// probes caches probeSandbox per spec: whether namespaces work does not change while a
// worker runs, and the probe costs two process starts.
var probes sync.Map // launchSpec -> error (nil stored as probeOK)

type probeOK struct{}

// probeSandbox runs the launcher in probe mode: as the browser user, under no_new_privs, it
// starts a child in new user, PID and network namespaces, as Chromium's sandbox does.
func probeSandbox(ctx context.Context, p launchPlan) error {
	spec := p.spec
	spec.Probe, spec.Sandbox = true, true
	if v, ok := probes.Load(spec); ok {
		if err, isErr := v.(error); isErr {
			return err
		}
		return nil
	}
	raw, err := json.Marshal(spec)
	if err != nil {
		return fmt.Errorf("sandbox probe spec: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, p.launcher)
	cmd.Env = []string{launcherEnv + "=" + string(raw)}
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		return fmt.Errorf("sandbox probe: %w", ctx.Err()) // not cached: say nothing about the machine
	}
	if err != nil {
		err = fmt.Errorf("sandbox probe: %w: %s", err, strings.TrimSpace(string(out)))
		probes.Store(spec, err)
		return err
	}
	probes.Store(spec, probeOK{})
	return nil
}
