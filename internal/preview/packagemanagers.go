package preview

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/modroot"
)

// The pinned package managers `go tool task pm:setup` installs into .cache/pm (tasks/pm.yml
// holds the same versions; a test keeps them equal). npm is the one that comes with Node.
const (
	PNPMVersion = "12.23.0"
	YarnVersion = "1.22.22"
	BunVersion  = "1.4.5"
)

// EnvPackageManagersDir overrides where the pinned package managers are found.
const EnvPackageManagersDir = "SIGNOFF_PM_DIR"

// pmBinaries is where each pinned package manager's binary sits under its install folder.
func pmBinaries() map[string]string {
	bunArch, pnpmArch := "x64", "x64"
	if runtime.GOARCH == "arm64" {
		bunArch, pnpmArch = "aarch64", "arm64"
	}
	return map[string]string{
		contracts.PackageManagerPNPM: filepath.Join("pnpm-"+PNPMVersion, "node_modules", "@pnpm", "exe.linux-"+pnpmArch, "pnpm"),
		contracts.PackageManagerYarn: filepath.Join("yarn-"+YarnVersion, "node_modules", ".bin", "yarn"),
		contracts.PackageManagerBun:  filepath.Join("bun-"+BunVersion, "node_modules", "@oven", "bun-linux-"+bunArch, "bin", "bun"),
	}
}

// FindPackageManagers returns the pinned package managers installed under dir ("" is
// $SIGNOFF_PM_DIR, else .cache/pm of the repository holding the working directory), by name.
// Missing ones are left out: a commit that needs one is refused naming the setup task.
func FindPackageManagers(dir string) map[string]string {
	if dir == "" {
		dir = os.Getenv(EnvPackageManagersDir)
	}
	if dir == "" {
		root, err := modroot.FromWD()
		if err != nil {
			return nil
		}
		dir = filepath.Join(root, ".cache", "pm")
	}
	out := map[string]string{}
	for name, rel := range pmBinaries() {
		p := filepath.Join(dir, rel)
		if real, err := filepath.EvalSymlinks(p); err == nil {
			if fi, err := os.Stat(real); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
				out[name] = real
			}
		}
	}
	return out
}

// packageManager is how one commit is installed, built and started: the contract's words,
// with the binary resolved and Signoff's cache and address arguments added.
type packageManager struct {
	name, lockfile string
	bin            string // absolute path of the binary the words start with
}

// resolvePM picks the package manager: the contract's (what the signed stack says), else
// the lockfile's at the commit.
func (l *Launcher) resolvePM(want, lockfile string) (*packageManager, error) {
	name := want
	if name == "" {
		name = lockfilePM(lockfile)
	}
	pm := &packageManager{name: name, lockfile: lockfile}
	switch name {
	case contracts.PackageManagerNPM:
		pm.bin = l.npm
	default:
		bin, ok := l.cfg.PackageManagers[name]
		if !ok {
			if _, _, _, known := contracts.StackCommands(name, true); !known {
				return nil, &InputError{Field: "package manager", Reason: fmt.Sprintf("%q is not one Signoff runs (npm, pnpm, yarn, bun)", name)}
			}
			return nil, &InputError{Field: "package manager", Reason: fmt.Sprintf("%s is not installed for previews: run `go tool task pm:setup` (or set %s)", name, EnvPackageManagersDir)}
		}
		pm.bin = bin
	}
	return pm, nil
}

func lockfilePM(lockfile string) string {
	for _, lf := range contracts.Lockfiles {
		if lf.File == lockfile {
			return lf.PackageManager
		}
	}
	return contracts.PackageManagerNPM
}

// words are the contract's command words, with the binary's absolute path first.
func (pm *packageManager) words(w []string) []string {
	return append([]string{pm.bin}, w[1:]...)
}

// install is the contract's install command, with the workspace's own cache.
func (pm *packageManager) install(cache string) (argv, env []string) {
	i, _, _, _ := contracts.StackCommands(pm.name, pm.lockfile != "")
	argv = pm.words(i)
	switch pm.name {
	case contracts.PackageManagerNPM:
		argv = append(argv, "--no-audit", "--no-fund", "--prefer-offline", "--cache", cache)
	case contracts.PackageManagerPNPM:
		argv = append(argv, "--store-dir", filepath.Join(cache, "pnpm-store"))
		env = append(env, "CI=1")
	case contracts.PackageManagerYarn:
		argv = append(argv, "--non-interactive", "--cache-folder", filepath.Join(cache, "yarn"))
	case contracts.PackageManagerBun:
		env = append(env, "BUN_INSTALL_CACHE_DIR="+filepath.Join(cache, "bun"))
	}
	return argv, append(env, "npm_config_update_notifier=false")
}

// run is `<pm> run <script>` (the contract's build command for "build").
func (pm *packageManager) run(script string) []string {
	_, b, _, _ := contracts.StackCommands(pm.name, pm.lockfile != "")
	if script == "build" {
		return pm.words(b)
	}
	return []string{pm.bin, "run", script}
}

// start is the contract's start command, told the loopback host and port to serve on.
func (pm *packageManager) start(port int) []string {
	_, _, s, _ := contracts.StackCommands(pm.name, pm.lockfile != "")
	argv := pm.words(s)
	if pm.name == contracts.PackageManagerNPM {
		argv = append(argv, "--") // npm passes on only what follows --
	}
	return append(argv, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
}

// command is argv as a step records it: the binary by name.
func command(argv []string) string {
	return strings.Join(append([]string{filepath.Base(argv[0])}, argv[1:]...), " ")
}

// InstallRoot is the folder a package manager was installed into, which a sandbox binds
// read-only for it to run: the parent of the outermost node_modules above its binary (all
// of its files), else the binary's folder.
func InstallRoot(bin string) string {
	dir := filepath.Dir(bin)
	for d := dir; d != filepath.Dir(d); d = filepath.Dir(d) {
		if filepath.Base(d) == "node_modules" {
			dir = filepath.Dir(d)
		}
	}
	return dir
}
