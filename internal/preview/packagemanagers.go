package preview

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/modroot"
	"github.com/signoff/signoff/internal/unprivileged"
)

// The pinned package managers `go tool task pm:setup` installs into .cache/pm (tasks/pm.yml
// holds the same versions; a test keeps them equal). npm is the one that comes with Node.
const (
	PNPMVersion = "12.23.0"
	YarnVersion = "1.22.22"
	BunVersion  = "1.4.5"
)

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
// DefaultPackageManagersDir), by name.
// Missing ones are left out: a commit that needs one is refused naming the setup task.
func FindPackageManagers(dir string) map[string]string {
	if dir == "" {
		dir = DefaultPackageManagersDir()
	}
	if dir == "" {
		return nil
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

// DefaultPackageManagersDir is where `go tool task pm:setup` installs the pinned package
// managers: .cache/pm of the repository holding the working directory; "" outside one.
func DefaultPackageManagersDir() string {
	root, err := modroot.FromWD()
	if err != nil {
		return ""
	}
	return filepath.Join(root, ".cache", "pm")
}

// packageManager is how one commit is installed, built and started: the contract's words,
// with the binary resolved and Signoff's cache and address arguments added.
type packageManager struct {
	name, lockfile string
	version        string // the declared release ("" for the pinned one)
	bin            string // absolute path of the binary the words start with
	ran            string // what runs, by name and version: "pnpm 9.15.9"
	root           string // a fetched release's folder, bound read-only into the sandbox
	caFile         string // the CA bundle the host's npm trusts ("" for the system's)
}

// resolvePM picks the package manager: the contract's (what the signed stack says), else
// the lockfile's at the commit; at the release the contract states (version, with its hash),
// else the pinned one.
func (l *Launcher) resolvePM(ctx context.Context, want, version, lockfile string) (*packageManager, error) {
	name := want
	if name == "" {
		name = lockfilePM(lockfile)
	}
	pm := &packageManager{name: name, lockfile: lockfile, caFile: l.caFile}
	var rel contracts.Release // the declared release, read once
	if version != "" {
		var err error
		if rel, err = contracts.ParseRelease(name + "@" + version); err != nil {
			return nil, &InputError{Field: "package manager", Reason: err.Error()}
		}
		if rel.Version != l.pinnedVersion(name) {
			if _, fetchable := releasePackageFor(rel); fetchable {
				if l.releases == nil {
					return nil, &InputError{Field: "package manager", Reason: fmt.Sprintf("%s@%s is declared, and no releases folder is configured to fetch it into", name, rel.Version)}
				}
				bin, err := l.releases.Bin(ctx, rel)
				if err != nil {
					return nil, err
				}
				pm.version, pm.bin, pm.root, pm.ran = rel.Version, bin, InstallRoot(bin), name+" "+rel.Version
				if !unprivileged.Traversable(pm.root, l.cred) {
					return nil, &InputError{Field: "permissions", Reason: fmt.Sprintf("the preview user cannot reach %s (every parent directory needs o+x)", pm.root)}
				}
				return pm, nil
			}
		}
	}
	switch name {
	case contracts.PackageManagerNPM:
		pm.bin = l.npm
	default:
		bin, ok := l.cfg.PackageManagers[name]
		if !ok {
			if _, _, _, known := contracts.StackCommands(name, "", true); !known {
				return nil, &InputError{Field: "package manager", Reason: fmt.Sprintf("%q is not one Signoff runs (npm, pnpm, yarn, bun)", name)}
			}
			return nil, &InputError{Field: "package manager", Reason: fmt.Sprintf("%s is not installed for previews: run `go tool task pm:setup` (or set SIGNOFF_PM_DIR)", name)}
		}
		pm.bin = bin
	}
	pm.ran = name
	if v := l.pinnedVersion(name); v != "" {
		pm.ran += " " + v
	}
	if rel.Version != "" && rel.Version != l.pinnedVersion(name) {
		pm.ran += " (the repository declares " + rel.Version + "; Signoff runs " + name + " only at its pinned release)"
	}
	return pm, nil
}

// pinnedVersion is the release Signoff keeps of a package manager ("" for npm: Node's own).
func (l *Launcher) pinnedVersion(name string) string {
	switch name {
	case contracts.PackageManagerPNPM:
		return PNPMVersion
	case contracts.PackageManagerYarn:
		return YarnVersion
	case contracts.PackageManagerBun:
		return BunVersion
	}
	return l.npmVersion
}

func lockfilePM(lockfile string) string {
	for _, lf := range contracts.Lockfiles {
		if lf.File == lockfile {
			return lf.PackageManager
		}
	}
	return contracts.PackageManagerNPM
}

func (pm *packageManager) berry() bool {
	return pm.name == contracts.PackageManagerYarn && contracts.YarnBerry(pm.version)
}

// env is what every step of this package manager gets. Yarn Berry keeps its cache in the
// work tree (.yarn/cache, where Plug'n'Play reads packages from at build and start, which
// see no other writable folder), and asks nothing and reports nothing.
func (pm *packageManager) env() []string {
	if !pm.berry() {
		return nil
	}
	env := []string{"YARN_ENABLE_GLOBAL_CACHE=false", "YARN_ENABLE_TELEMETRY=0", "YARN_ENABLE_PROGRESS_BARS=false"}
	if pm.caFile != "" {
		env = append(env, "YARN_HTTPS_CA_FILE_PATH="+pm.caFile)
	}
	return env
}

var (
	npmFactsMu    sync.Mutex
	npmFactsCache = map[string][2]string{}
)

// npmFacts are the release of an npm binary and the CA file its configuration names, asked
// once per binary.
func npmFacts(npm string) (version, caFile string) {
	npmFactsMu.Lock()
	defer npmFactsMu.Unlock()
	if f, ok := npmFactsCache[npm]; ok {
		return f[0], f[1]
	}
	if v, err := exec.Command(npm, "--version").Output(); err == nil {
		version = strings.TrimSpace(string(v))
	}
	if c, err := exec.Command(npm, "config", "get", "cafile").Output(); err == nil {
		if p := strings.TrimSpace(string(c)); filepath.IsAbs(p) {
			if _, err := os.Stat(p); err == nil {
				caFile = p
			}
		}
	}
	npmFactsCache[npm] = [2]string{version, caFile}
	return version, caFile
}

// words are the contract's command words, with the binary's absolute path first.
func (pm *packageManager) words(w []string) []string {
	return append([]string{pm.bin}, w[1:]...)
}

// install is the contract's install command, with the workspace's own cache.
func (pm *packageManager) install(cache string) (argv, env []string) {
	i, _, _, _ := contracts.StackCommands(pm.name, pm.version, pm.lockfile != "")
	argv = pm.words(i)
	switch {
	case pm.berry():
		// Berry takes its settings from the environment (it refuses Yarn 1's flags).
		return argv, append(pm.env(), "npm_config_update_notifier=false")
	}
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
	_, b, _, _ := contracts.StackCommands(pm.name, pm.version, pm.lockfile != "")
	if script == "build" {
		return pm.words(b)
	}
	return []string{pm.bin, "run", script}
}

// start is the contract's start command, told the loopback host and port to serve on.
func (pm *packageManager) start(port int) []string {
	_, _, s, _ := contracts.StackCommands(pm.name, pm.version, pm.lockfile != "")
	argv := pm.words(s)
	if pm.name == contracts.PackageManagerNPM {
		argv = append(argv, "--") // npm passes on only what follows --
	}
	return append(argv, "-H", "127.0.0.1", "-p", strconv.Itoa(port))
}

// command is argv as a step records it: the binary by name (a fetched release's entry point,
// pnpm.cjs or npm-cli.js, by its package manager's name).
func command(argv []string) string {
	name := filepath.Base(argv[0])
	for _, suffix := range []string{".cjs", ".js"} {
		name = strings.TrimSuffix(name, suffix)
	}
	name = strings.TrimSuffix(name, "-cli")
	return strings.Join(append([]string{name}, argv[1:]...), " ")
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
