// Package preview starts a repository's web app at an exact commit so the
// verifier can drive it: check out, install, build, run the repo's own
// lint/test scripts, then serve it on a loopback port behind Signoff's own
// reverse proxy, which answers /__verification with the commit actually built
// (read back with `git rev-parse HEAD`, never copied from the expected value)
// and passes every other path to the app. The app needs no route of its own;
// it is also told SIGNOFF_COMMIT_SHA, and if it answers /__verification with
// another commit the proxy states none (see verificationProxy).
//
// It runs on the execute side and is Temporal-free; the workers package
// wraps it in an activity.
//
// Isolation. Repository code (install scripts, build, lint, test, the app)
// runs only inside the sandbox (package internal/sandbox): its own PID, mount
// and network namespaces, as the unprivileged user Config.RunAs
// (DefaultUser, created by `go tool task fixture:setup`), with
//   - only the work tree, HOME and, for an install, the workspace's own npm
//     cache writable, the toolchain read-only, and nothing else mounted: no
//     data dir, keys, other jobs or worker /proc;
//   - no network, except egress (never the host's loopback) for the install
//     and build steps when Config.InstallNetwork allows it; the verifier reaches the app only
//     through a forward the launcher makes to the app's port;
//   - an allowlisted environment only (PATH, HOME in the job, NODE_ENV,
//     PORT, SIGNOFF_COMMIT_SHA, NEXT_TELEMETRY_DISABLED=1);
//   - nothing surviving its step: the sandbox's PID namespace ends with it,
//     and a pid file lets Stop and Sweep end a sandbox after a crash.
//
// The git directory, logs and pid files stay root-owned and outside the
// sandbox; the shared node_modules is hardlinked in, root-owned, so the
// preview user can read but not change its inodes.
package preview

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/procstat"
	"github.com/signoff/signoff/internal/sandbox"
	"github.com/signoff/signoff/internal/unprivileged"
)

// DefaultUser is the account previews run as when Config.RunAs names it.
const DefaultUser = "signoff-preview"

// Layout under Config.JobsRoot.
const (
	pidsDir  = "pids"  // one pid file per running process
	jobsDir  = "jobs"  // fresh per-job directories, removed on Stop
	slotsDir = "slots" // persistent slots, reused for their build cache
	logsDir  = "logs"  // step logs, kept after Stop
)

// Config configures a Launcher.
type Config struct {
	// JobsRoot holds job directories, slots, logs and pid files. Absolute.
	JobsRoot string
	// SharedDeps is a directory holding package.json, package-lock.json
	// and node_modules installed from them (the fixture setup fills
	// .cache/finance-deps). A commit with identical package files gets a
	// hardlinked copy; any other commit gets its own `npm ci`. Empty: always
	// `npm ci`.
	SharedDeps string
	// Node and NPM are the binaries to use; found in PATH when empty.
	Node, NPM string
	// PackageManagers are the other package managers' binaries by name (pnpm, yarn, bun);
	// nil finds the pinned ones `go tool task pm:setup` installs (FindPackageManagers). A
	// commit whose contract or lockfile names a missing one is refused naming that task.
	PackageManagers map[string]string
	// PackageManagersDir is where FindPackageManagers looks when PackageManagers is nil, and
	// holds ReleasesDir's default; "": .cache/pm of the repository (settings' SIGNOFF_PM_DIR).
	PackageManagersDir string
	// ReleasesDir keeps the package manager releases repositories declare (package.json's
	// packageManager) other than the pinned ones, fetched from the npm registry by the host's
	// npm; empty is a releases folder beside the pinned package managers.
	ReleasesDir string
	// RunAs is the user repository code runs as, inside the sandbox; empty
	// runs it as the worker's own user, which must then not be root.
	RunAs string
	// Sandbox runs every step of repository code and the app. Required.
	Sandbox *sandbox.Runner
	// InstallNetwork is what the install and build steps may reach (sandbox.NetEgress:
	// the package registry, and what a build fetches, such as the Google Fonts that
	// create-next-app's template loads through next/font/google; never the host's
	// loopback). Lint, test and the app have no network but the forward Signoff makes to
	// the app's port.
	InstallNetwork sandbox.Network
	// Limits bound each step's memory and processes.
	Limits sandbox.Limits
	// SecretPaths are files or directories RunAs must not be able to read
	// (the verifier's key directory). New refuses a configuration where
	// file modes would let it.
	SecretPaths []string
	// StepTimeout bounds each install/build/lint/test step (default 10m).
	StepTimeout time.Duration
	// StartTimeout bounds the wait for /__verification to answer (default 60s).
	StartTimeout time.Duration
	// StopGrace is the time between SIGTERM and SIGKILL (default 5s).
	StopGrace time.Duration
	// Listen is the host (an IP address) the verification proxy in front of each preview
	// listens on; default 127.0.0.1. A verify worker on another host needs one it can
	// reach; the app itself stays in its own network namespace either way.
	Listen string
	// Advertise is the host (a name or an address) preview URLs name for the verify queue;
	// default the Listen host.
	Advertise string
	// FirstPort, when set, keeps the proxies on ports FirstPort to FirstPort+PortSpan-1
	// (so a firewall can open that range); 0 takes any free port.
	FirstPort int
	// Postgres is the folder of PostgreSQL's server programs for contracts that start one
	// (stack.services); "" finds Debian's newest (FindPostgres).
	Postgres string
	// MaxSlots is how many slots stay on disk; a new one removes the least recently used
	// that no preview holds. Zero: DefaultMaxSlots.
	MaxSlots int
}

// DefaultMaxSlots bounds the slots kept: slots are per contract, so they would otherwise
// grow with every contract the host has built.
const DefaultMaxSlots = 8

// Options select how one preview is prepared.
type Options struct {
	// Slot names a persistent work tree to reuse ([a-z0-9-], up to 32).
	// A slot keeps node_modules and .next between commits, so rebuilds are
	// incremental. Empty: a fresh directory, removed on Stop.
	Slot string
	// PackageManager is the contract's stack.package_manager; "" follows the lockfile at the
	// commit. Install, build and start run that manager's commands, the contract's words.
	PackageManager string
	// PackageManagerVersion is the contract's stack.package_manager_version: the release the
	// repository declares, fetched when it is not the pinned one; "" runs the pinned release.
	PackageManagerVersion string
	// AppDir is the app's folder inside the repository ("" for the root). Only that folder
	// of the commit is checked out and built; the app is still told the commit's own SHA.
	AppDir string
	// Release and Environment are what the app reports to its error tracker, as
	// SENTRY_RELEASE and SENTRY_ENVIRONMENT at build and start: the verify queue's Sentry
	// gate asks for exactly this attempt's events by them.
	Release, Environment string
	// Preexisting are the checks (lint, test) the contract records as failing on the base
	// commit: a failure of one that is no worse than there (contracts.Stack.Tolerates) is
	// recorded and the build goes on. Any other failed step fails the build.
	Preexisting []contracts.PreexistingFailure
	// Env and Services are the contract's preview environment and throwaway services
	// (stack.preview_env, stack.services): every step after the install, and the app, get
	// the variables, with the services' addresses filled in.
	Env      map[string]string
	Services []string
	// BaseCheck is a base commit's check before a quote: a failed check step is recorded
	// (with its cause and error count) and the build goes on, so the quote can name it.
	BaseCheck bool
}

// Launcher prepares, runs and stops previews.
type Launcher struct {
	cfg       Config
	npm       string
	path      string
	sb        *sandbox.Runner
	cred      *syscall.Credential
	isolation string
	toolRoots []string // package managers' install folders, bound read-only into every step
	releases  *Releases
	// npmVersion is the host npm's release; caFile the CA bundle its configuration names
	// (npm, pnpm and Yarn 1 read it from there; Yarn Berry is told through its environment).
	npmVersion, caFile string

	mu       sync.Mutex
	slots    map[string]string    // slot -> job ID holding it
	running  map[string]*proc     // job ID -> app server
	built    map[string]slotBuild // slot -> the build its app was last started from (reuse.go)
	services map[string]*proc     // job ID -> its database server
}

var (
	slotPattern = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)
	shaPattern  = regexp.MustCompile(`^([0-9a-f]{40}|[0-9a-f]{64})$`)
	// appDirPattern: slash-separated names, none starting with a dot (so no . or ..), the
	// same rule as a contract's stack.app_dir.
	tagPattern    = regexp.MustCompile(`^[A-Za-z0-9._-]{1,200}$`)
	appDirPattern = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$`)
)

// New checks cfg and creates the jobs root layout.
func New(cfg Config) (*Launcher, error) {
	if !filepath.IsAbs(cfg.JobsRoot) {
		return nil, &InputError{Field: "jobs root", Reason: "must be an absolute path"}
	}
	if cfg.StepTimeout <= 0 {
		cfg.StepTimeout = 10 * time.Minute
	}
	if cfg.StartTimeout <= 0 {
		cfg.StartTimeout = 60 * time.Second
	}
	if cfg.StopGrace <= 0 {
		cfg.StopGrace = 5 * time.Second
	}
	if cfg.Postgres == "" {
		cfg.Postgres = FindPostgres()
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1"
	}
	if net.ParseIP(cfg.Listen) == nil {
		return nil, &InputError{Field: "listen", Reason: fmt.Sprintf("%q is not an IP address", cfg.Listen)}
	}
	if cfg.Advertise == "" {
		cfg.Advertise = cfg.Listen
	}
	if cfg.FirstPort < 0 || cfg.FirstPort > 65535 {
		return nil, &InputError{Field: "first port", Reason: fmt.Sprintf("%d is not a port", cfg.FirstPort)}
	}
	if err := CheckHost(cfg.Advertise); err != nil {
		return nil, &InputError{Field: "advertise", Reason: err.Error()}
	}
	l := &Launcher{cfg: cfg, slots: map[string]string{}, running: map[string]*proc{}, services: map[string]*proc{}, built: map[string]slotBuild{}}
	node, err := lookBin(cfg.Node, "node")
	if err != nil {
		return nil, err
	}
	if l.npm, err = lookBin(cfg.NPM, "npm"); err != nil {
		return nil, err
	}
	if cfg.PackageManagers == nil {
		l.cfg.PackageManagers = FindPackageManagers(cfg.PackageManagersDir)
	}
	pmDir := cfg.PackageManagersDir
	if pmDir == "" {
		pmDir = DefaultPackageManagersDir()
	}
	l.npmVersion, l.caFile = npmFacts(l.npm)
	if dir := cfg.ReleasesDir; dir != "" || pmDir != "" {
		if dir == "" {
			dir = filepath.Join(pmDir, "releases")
		}
		l.releases = &Releases{Dir: dir, NPM: l.npm}
	}
	// A fixed PATH: the parent's may name directories the preview user
	// cannot read or that a repo could write.
	dirs := []string{filepath.Dir(node), filepath.Dir(l.npm)}
	for _, name := range []string{contracts.PackageManagerPNPM, contracts.PackageManagerYarn, contracts.PackageManagerBun} {
		if bin, ok := l.cfg.PackageManagers[name]; ok {
			if !filepath.IsAbs(bin) {
				return nil, &InputError{Field: "package managers", Reason: name + ": " + bin + " is not an absolute path"}
			}
			dirs = append(dirs, filepath.Dir(bin))
			l.toolRoots = append(l.toolRoots, InstallRoot(bin))
		}
	}
	l.path = strings.Join(uniq(append(dirs, "/usr/local/bin", "/usr/bin", "/bin")...), ":")

	if cfg.Sandbox == nil {
		return nil, &InputError{Field: "sandbox", Reason: "repository code runs only inside a sandbox, and none was given"}
	}
	l.sb = cfg.Sandbox
	if cfg.RunAs != "" {
		cred, err := unprivileged.Lookup(cfg.RunAs)
		if err != nil {
			return nil, &InputError{Field: "run as", Reason: fmt.Sprintf("%v (run `go tool task fixture:setup` to create %s)", err, DefaultUser)}
		}
		l.cred = cred
		l.isolation = fmt.Sprintf("%s, as uid %d (%s)", cfg.Sandbox.Describe(), cred.Uid, cfg.RunAs)
	} else {
		if os.Geteuid() == 0 {
			return nil, &InputError{Field: "run as", Reason: "the worker is root: name an unprivileged user for repository code (" + DefaultUser + ")"}
		}
		l.cred = &syscall.Credential{Uid: uint32(os.Getuid()), Gid: uint32(os.Getgid())}
		l.isolation = fmt.Sprintf("%s, as the worker's own uid %d", cfg.Sandbox.Describe(), os.Getuid())
	}
	if err := l.makeLayout(); err != nil {
		return nil, err
	}
	{
		for _, p := range append(append([]string{cfg.JobsRoot}, nonEmpty(cfg.SharedDeps)...), l.toolRoots...) {
			if !unprivileged.Traversable(p, l.cred) {
				return nil, &InputError{Field: "permissions", Reason: fmt.Sprintf("%s cannot reach %s (every parent directory needs o+x)", cfg.RunAs, p)}
			}
		}
		for _, p := range cfg.SecretPaths {
			if unprivileged.Readable(p, l.cred) {
				return nil, &InputError{Field: "secret paths", Reason: fmt.Sprintf("%s could read %s: make it mode 0600 in a 0700 directory owned by the worker", cfg.RunAs, p)}
			}
		}
	}
	return l, nil
}

func (l *Launcher) makeLayout() error {
	root := l.cfg.JobsRoot
	dirs := []struct {
		path string
		mode os.FileMode
	}{
		{root, 0o711},
		{filepath.Join(root, pidsDir), 0o700},
		{filepath.Join(root, jobsDir), 0o711},
		{filepath.Join(root, slotsDir), 0o711},
		{filepath.Join(root, logsDir), 0o755},
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d.path, d.mode); err != nil {
			return fmt.Errorf("preview: create %s: %w", d.path, err)
		}
		if err := os.Chmod(d.path, d.mode); err != nil {
			return fmt.Errorf("preview: chmod %s: %w", d.path, err)
		}
	}
	return nil
}

// Prepare checks out commitSHA from the git repository at repoDir, installs,
// builds, runs the repo's lint and test scripts, and starts the app. On a
// failed step it returns the Job (with its build result) and a
// *BuildFailedError; nothing is left running. On success the caller must
// call Stop.
func (l *Launcher) Prepare(ctx context.Context, repoDir, commitSHA string, opts Options) (*Job, error) {
	if !shaPattern.MatchString(commitSHA) {
		return nil, &InputError{Field: "commit", Reason: fmt.Sprintf("%q is not a full lowercase hex SHA", commitSHA)}
	}
	if opts.Slot != "" && !slotPattern.MatchString(opts.Slot) {
		return nil, &InputError{Field: "slot", Reason: fmt.Sprintf("%q must match %s", opts.Slot, slotPattern)}
	}
	for _, v := range []string{opts.Release, opts.Environment} {
		if v != "" && !tagPattern.MatchString(v) {
			return nil, &InputError{Field: "release", Reason: fmt.Sprintf("%q must match %s", v, tagPattern)}
		}
	}
	if opts.AppDir != "" && !appDirPattern.MatchString(opts.AppDir) {
		return nil, &InputError{Field: "app dir", Reason: fmt.Sprintf("%q is not a folder inside the repository (want a relative path like web or apps/shop)", opts.AppDir)}
	}
	objects, err := objectsDir(repoDir)
	if err != nil {
		return nil, err
	}
	key := ""
	if reusable(opts) {
		key = reuseKey(commitSHA, opts)
	}
	ws, prior, err := l.claim(opts.Slot, key)
	if err != nil {
		return nil, err
	}
	job := &Job{
		ID: ws.id, Slot: opts.Slot, Dir: ws.src, AppDir: opts.AppDir, PackageManager: opts.PackageManager, PackageManagerVersion: opts.PackageManagerVersion, Release: opts.Release, Environment: opts.Environment, RequestedSHA: commitSHA,
		Isolation: l.isolation,
	}
	started := false
	defer func() {
		if !started {
			if prior != nil {
				l.forget(opts.Slot, prior.jobID)
			}
			l.stopServices(job)
			l.release(ws)
		}
	}()

	ok := true
	if prior != nil && !l.unchangedSince(ws, prior) {
		// The first try's app changed the work tree it was built from: build anew.
		l.forget(opts.Slot, prior.jobID)
		prior = nil
		if err := l.layout(ws, false); err != nil {
			return job, err
		}
	}
	if prior != nil {
		prior.reuse(job)
	} else {
		ok, err = l.build(ctx, ws, objects, commitSHA, job, opts)
		if err != nil {
			return job, err
		}
	}
	if !ok {
		last := &job.Build.Steps[len(job.Build.Steps)-1]
		if last.TimedOut {
			last.Next = fmt.Sprintf("the %s step ran past the preview's limit of %s: a step that waits for input, or for a host it cannot reach, never ends", last.Name, l.cfg.StepTimeout)
		} else if last.Cause == "" && last.Log != "" {
			last.Cause, last.Next = diagnoseFile(last.Name, last.Log)
		}
		return job, &BuildFailedError{Step: last.Name, ExitCode: last.ExitCode, TimedOut: last.TimedOut, Log: last.Log, Cause: last.Cause, Next: last.Next}
	}
	if err := l.start(ctx, ws, job); err != nil {
		return job, err
	}
	started = true
	l.remember(ws, key, job)
	return job, nil
}

// build runs every step up to a started app. It returns false when one of
// the repository's steps failed, and an error for anything else.
func (l *Launcher) build(ctx context.Context, ws *workspace, objects, sha string, job *Job, opts Options) (bool, error) {
	steps := &job.Build.Steps
	checkout, err := l.checkout(ctx, ws, objects, sha, job.AppDir)
	*steps = append(*steps, checkout)
	if err != nil {
		return false, err
	}
	if checkout.Status == StatusFailed {
		return false, nil
	}
	pkg, err := readPackage(ws.git, job.AppDir)
	if err != nil {
		return false, err
	}
	pm, err := l.resolvePM(ctx, job.PackageManager, job.PackageManagerVersion, pkg.lockfile)
	if err != nil {
		return false, err
	}
	pkg.pm = pm
	ws.pmRoot = pm.root
	job.PackageManager, job.PackageManagerRan = pm.name, pm.ran
	deps, err := l.deps(ctx, ws, pkg)
	*steps = append(*steps, deps)
	if err != nil || deps.Status == StatusFailed {
		return false, err
	}
	svc, err := l.startServices(ctx, ws, job, opts.Services)
	*steps = append(*steps, svc...)
	if err != nil {
		return false, err
	}
	if n := len(svc); n > 0 && svc[n-1].Status == StatusFailed {
		return false, nil
	}
	job.env = (contracts.Stack{Env: opts.Env}).PreviewEnvWords(job.postgresURL)
	if job.postgresURL != "" {
		job.env = append(job.env, contracts.PostgresURLVar+"="+job.postgresURL)
	}
	scripts := []struct {
		name, script string
		env          []string
		net          sandbox.Network
		check        bool // a check step, which may fail on the base commit too
	}{
		{"build", "build", []string{"NODE_ENV=production"}, l.cfg.InstallNetwork, false},
		{contracts.StepLint, "lint", nil, sandbox.NetNone, true},
		{contracts.StepTest, "test", nil, sandbox.NetNone, true},
	}
	for _, s := range scripts {
		if _, ok := pkg.Scripts[s.script]; !ok {
			*steps = append(*steps, Step{Name: s.name, Status: StatusSkipped, Detail: "no " + s.script + " script in package.json"})
			continue
		}
		env := append(append(append(append(slices.Clip(job.env), s.env...), "npm_config_update_notifier=false"), pm.env()...), job.sentryEnv()...)
		st := l.runStepNet(ctx, ws, s.name, ws.src, l.env(ws, env...), nil, s.net, pm.run(s.script)...)
		*steps = append(*steps, st)
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("preview: %s: %w", s.name, err)
		}
		if st.Status == StatusFailed && s.check {
			st := &(*steps)[len(*steps)-1]
			log := readTail(st.Log)
			st.Errors = CountErrors(log)
			recorded := contracts.Stack{Preexisting: opts.Preexisting}
			if opts.BaseCheck || recorded.Tolerates(st.Name, st.Errors) {
				st.Preexisting = true
				st.Cause, _ = Diagnose(st.Name, log)
				continue
			}
			if p := recorded.Recorded(st.Name); p != nil {
				st.Cause, st.Next = Diagnose(st.Name, log)
				st.Next = fmt.Sprintf("%s fails worse than on the base commit (%s where the base had %d): %s", st.Name, errorsWord(st.Errors), p.Errors, st.Next)
			}
		}
		if st.Status == StatusFailed {
			return false, nil
		}
	}
	lines, err := dirtyFiles(ws, job.AppDir)
	if err != nil {
		return false, err
	}
	job.Build.DirtyFiles = lines
	head, err := gitOut(ws.git, "", "rev-parse", "HEAD")
	if err != nil {
		return false, err
	}
	job.SHA = strings.TrimSpace(head)
	job.Build.Passed = true
	return true, nil
}

// dirtyFiles lists the work tree's `git status --porcelain` lines against the built commit.
func dirtyFiles(ws *workspace, appDir string) ([]string, error) {
	dirty, err := gitOut(ws.git, ws.src, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return nil, err
	}
	lines := nonEmpty(strings.Split(strings.TrimRight(dirty, "\n"), "\n")...)
	if appDir == "" {
		return lines, nil
	}
	// The index holds the app's folder, HEAD the whole commit: every path differs between
	// those two (the first column). Only the work tree against the index counts.
	var kept []string
	for _, ln := range lines {
		if strings.HasPrefix(ln, "??") || (len(ln) > 1 && ln[1] != ' ') {
			kept = append(kept, ln)
		}
	}
	return kept, nil
}

// Stop ends the job's app (its whole process group) and frees its slot or
// deletes its fresh directory; logs are kept. It also works for a Job
// prepared by another Launcher (after a worker restart): the recorded PID
// is killed only if it is still the same process.
func (l *Launcher) Stop(job *Job) error {
	if job == nil {
		return nil
	}
	l.mu.Lock()
	p := l.running[job.ID]
	delete(l.running, job.ID)
	l.mu.Unlock()
	switch {
	case p != nil:
		p.stop()
	case job.PID > 1:
		l.killRecorded(job.PID, job.StartTicks)
	}
	l.stopServices(job)
	if p == nil {
		files, _ := filepath.Glob(filepath.Join(l.pidDir(), job.ID+"-*.json"))
		for _, f := range files {
			os.Remove(f)
		}
	}
	l.release(l.workspaceOf(job))
	return nil
}

func (l *Launcher) pidDir() string { return filepath.Join(l.cfg.JobsRoot, pidsDir) }

// killRecorded kills the process group a job recorded, if its leader is still that process
// (a recycled PID is another's).
func (l *Launcher) killRecorded(pid int, ticks uint64) {
	if st, err := readStat(pid); err == nil && st.StartTicks == ticks && st.Pgrp == pid {
		procstat.KillGroup(pid, l.cfg.StopGrace)
	}
}

// HasProcesses reports whether a jobs root has processes on record (a pid file each), so a
// caller cleaning up roots leaves one that may still be serving alone.
func HasProcesses(jobsRoot string) bool {
	pids, err := os.ReadDir(filepath.Join(jobsRoot, pidsDir))
	return err == nil && len(pids) > 0
}

func lookBin(configured, name string) (string, error) {
	if configured == "" {
		configured = name
	}
	p, err := exec.LookPath(configured)
	if err != nil {
		return "", &InputError{Field: name, Reason: err.Error()}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("preview: %s path: %w", name, err)
	}
	return abs, nil
}

func newID(prefix string) string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return prefix + hex.EncodeToString(b)
}

func uniq(items ...string) []string {
	seen := map[string]bool{}
	var out []string
	for _, s := range items {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

func nonEmpty(items ...string) []string {
	var out []string
	for _, s := range items {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}
