// Package preview starts a repository's web app at an exact commit so the
// verifier can drive it: check out, install, build, run the repo's own
// lint/test scripts, then serve it on a loopback port with
// SIGNOFF_COMMIT_SHA set to the commit actually built (read back with
// `git rev-parse HEAD`, never copied from the expected value).
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
//   - no network, except egress (never the host's loopback) for an install
//     when Config.InstallNetwork allows it; the verifier reaches the app only
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
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/signoff/signoff/activities/procstat"
	"github.com/signoff/signoff/activities/unprivileged"
	"github.com/signoff/signoff/internal/sandbox"
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
	// RunAs is the user repository code runs as, inside the sandbox; empty
	// runs it as the worker's own user, which must then not be root.
	RunAs string
	// Sandbox runs every step of repository code and the app. Required.
	Sandbox *sandbox.Runner
	// InstallNetwork is what an install step may reach (sandbox.NetEgress: the
	// package registry, never the host's loopback). Every other step, and the
	// app, has no network but the forward Signoff makes to the app's port.
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
}

// Options select how one preview is prepared.
type Options struct {
	// Slot names a persistent work tree to reuse ([a-z0-9-], up to 32).
	// A slot keeps node_modules and .next between commits, so rebuilds are
	// incremental. Empty: a fresh directory, removed on Stop.
	Slot string
	// AppDir is the app's folder inside the repository ("" for the root). Only that folder
	// of the commit is checked out and built; the app is still told the commit's own SHA.
	AppDir string
	// Release and Environment are what the app reports to its error tracker, as
	// SENTRY_RELEASE and SENTRY_ENVIRONMENT at build and start: the verify queue's Sentry
	// gate asks for exactly this attempt's events by them.
	Release, Environment string
	// Faults are deliberate failures for prepared run W5 and tests.
	Faults Faults
}

// Faults inject the failures the verifier must catch. Never set in a real
// run: they exist so run W5 can show a verification_error.
type Faults struct {
	// OmitRuntimeSHA starts the app without SIGNOFF_COMMIT_SHA, so
	// /__verification serves no SHA.
	OmitRuntimeSHA bool `json:"omit_runtime_sha,omitempty"`
	// StaleBuildOf builds and serves this commit instead of the requested
	// one (for example the base commit); the app then truthfully reports
	// the stale SHA and the verifier must refuse it.
	StaleBuildOf string `json:"stale_build_of,omitempty"`
}

// Step status values.
const (
	StatusPassed  = "passed"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
)

// Step is one timed part of preparing a preview.
type Step struct {
	Name     string        `json:"name"`
	Command  string        `json:"command,omitempty"`
	Status   string        `json:"status"`
	ExitCode int           `json:"exit_code"`
	TimedOut bool          `json:"timed_out,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	Log      string        `json:"log,omitempty"`
	Detail   string        `json:"detail,omitempty"`
}

// BuildResult is the outcome of checkout, install, build, lint and test.
type BuildResult struct {
	Passed bool   `json:"passed"`
	Steps  []Step `json:"steps"`
	// DirtyFiles lists `git status --porcelain` lines after the build: a
	// build that rewrites tracked files serves code that is not the commit.
	DirtyFiles []string `json:"dirty_files,omitempty"`
}

// Job is a prepared (and, if the build passed, running) preview.
type Job struct {
	ID   string `json:"id"`
	Slot string `json:"slot,omitempty"`
	// Dir is the work tree that was built.
	Dir string `json:"dir"`
	// AppDir is the folder of the commit that was built ("" for the root).
	AppDir string `json:"app_dir,omitempty"`
	// Release and Environment are the app's SENTRY_RELEASE and SENTRY_ENVIRONMENT.
	Release     string `json:"release,omitempty"`
	Environment string `json:"environment,omitempty"`
	// RequestedSHA is the commit asked for; SHA is `git rev-parse HEAD` of
	// the built directory and is what the app was told to serve. They
	// differ only under Faults.StaleBuildOf.
	RequestedSHA string `json:"requested_sha"`
	SHA          string `json:"sha"`
	URL          string `json:"url,omitempty"`
	Port         int    `json:"port,omitempty"`
	PID          int    `json:"pid,omitempty"`
	StartTicks   uint64 `json:"start_ticks,omitempty"`
	// RuntimeSHA is what /__verification served when the app came up ("" if
	// it served none). The verifier checks it again itself.
	RuntimeSHA string      `json:"runtime_sha,omitempty"`
	Build      BuildResult `json:"build"`
	Start      Step        `json:"start"`
	Isolation  string      `json:"isolation"`
	Faults     Faults      `json:"faults"`
}

// sentryEnv is the error tracker's view of this build: empty when no release was given.
func (j *Job) sentryEnv() []string {
	var env []string
	if j.Release != "" {
		env = append(env, "SENTRY_RELEASE="+j.Release)
	}
	if j.Environment != "" {
		env = append(env, "SENTRY_ENVIRONMENT="+j.Environment)
	}
	return env
}

// InputError reports a bad argument or configuration; retrying cannot help.
type InputError struct {
	Field, Reason string
}

func (e *InputError) Error() string { return "preview: " + e.Field + ": " + e.Reason }

// BuildFailedError means the repository's own install, build, lint or test
// step failed: the attempt is not satisfied. The Job is still returned.
type BuildFailedError struct {
	Step     string
	ExitCode int
	TimedOut bool
	Log      string
}

func (e *BuildFailedError) Error() string {
	if e.TimedOut {
		return fmt.Sprintf("preview: %s timed out (log %s)", e.Step, e.Log)
	}
	return fmt.Sprintf("preview: %s failed with exit code %d (log %s)", e.Step, e.ExitCode, e.Log)
}

// StartError means the built app did not answer on /__verification in time
// or exited: the preview is down.
type StartError struct {
	Reason string
	Log    string
}

func (e *StartError) Error() string {
	return fmt.Sprintf("preview: app did not start: %s (log %s)", e.Reason, e.Log)
}

// ErrSlotBusy is returned when a slot still holds a preview that was not stopped.
var ErrSlotBusy = errors.New("preview: slot is busy")

// Launcher prepares, runs and stops previews.
type Launcher struct {
	cfg       Config
	npm       string
	path      string
	sb        *sandbox.Runner
	cred      *syscall.Credential
	isolation string

	mu      sync.Mutex
	slots   map[string]string // slot -> job ID holding it
	running map[string]*proc  // job ID -> app server
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
	l := &Launcher{cfg: cfg, slots: map[string]string{}, running: map[string]*proc{}}
	node, err := lookBin(cfg.Node, "node")
	if err != nil {
		return nil, err
	}
	if l.npm, err = lookBin(cfg.NPM, "npm"); err != nil {
		return nil, err
	}
	// A fixed PATH: the parent's may name directories the preview user
	// cannot read or that a repo could write.
	l.path = strings.Join(uniq(filepath.Dir(node), filepath.Dir(l.npm), "/usr/local/bin", "/usr/bin", "/bin"), ":")

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
		for _, p := range append([]string{cfg.JobsRoot}, nonEmpty(cfg.SharedDeps)...) {
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
	buildSHA := commitSHA
	if s := opts.Faults.StaleBuildOf; s != "" {
		if !shaPattern.MatchString(s) {
			return nil, &InputError{Field: "stale build commit", Reason: fmt.Sprintf("%q is not a full lowercase hex SHA", s)}
		}
		buildSHA = s
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
	ws, err := l.claim(opts.Slot)
	if err != nil {
		return nil, err
	}
	job := &Job{
		ID: ws.id, Slot: opts.Slot, Dir: ws.src, AppDir: opts.AppDir, Release: opts.Release, Environment: opts.Environment, RequestedSHA: commitSHA,
		Isolation: l.isolation, Faults: opts.Faults,
	}
	started := false
	defer func() {
		if !started {
			l.release(ws)
		}
	}()

	ok, err := l.build(ctx, ws, objects, buildSHA, job)
	if err != nil {
		return job, err
	}
	if !ok {
		last := job.Build.Steps[len(job.Build.Steps)-1]
		return job, &BuildFailedError{Step: last.Name, ExitCode: last.ExitCode, TimedOut: last.TimedOut, Log: last.Log}
	}
	if err := l.start(ctx, ws, job); err != nil {
		return job, err
	}
	started = true
	return job, nil
}

// build runs every step up to a started app. It returns false when one of
// the repository's steps failed, and an error for anything else.
func (l *Launcher) build(ctx context.Context, ws *workspace, objects, sha string, job *Job) (bool, error) {
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
	deps, err := l.deps(ctx, ws, pkg)
	*steps = append(*steps, deps)
	if err != nil || deps.Status == StatusFailed {
		return false, err
	}
	scripts := []struct {
		name, script string
		env          []string
	}{
		{"build", "build", []string{"NODE_ENV=production"}},
		{"lint", "lint", nil},
		{"test", "test", nil},
	}
	for _, s := range scripts {
		if _, ok := pkg.Scripts[s.script]; !ok {
			*steps = append(*steps, Step{Name: s.name, Status: StatusSkipped, Detail: "no " + s.script + " script in package.json"})
			continue
		}
		st := l.runStep(ctx, ws, s.name, ws.src, l.env(ws, append(s.env, job.sentryEnv()...)...), nil, l.npm, "--no-update-notifier", "run", s.script)
		*steps = append(*steps, st)
		if err := ctx.Err(); err != nil {
			return false, fmt.Errorf("preview: %s: %w", s.name, err)
		}
		if st.Status == StatusFailed {
			return false, nil
		}
	}
	dirty, err := gitOut(ws.git, ws.src, "status", "--porcelain", "--untracked-files=all")
	if err != nil {
		return false, err
	}
	lines := nonEmpty(strings.Split(strings.TrimRight(dirty, "\n"), "\n")...)
	if job.AppDir != "" {
		// The index holds the app's folder, HEAD the whole commit: every path differs between
		// those two (the first column). Only the work tree against the index counts.
		var kept []string
		for _, ln := range lines {
			if strings.HasPrefix(ln, "??") || (len(ln) > 1 && ln[1] != ' ') {
				kept = append(kept, ln)
			}
		}
		lines = kept
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

// start launches `npm start` on a free loopback port and waits until
// /__verification answers (any HTTP status: a missing SHA is the
// verifier's finding, not a start failure).
func (l *Launcher) start(ctx context.Context, ws *workspace, job *Job) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	extra := append([]string{"NODE_ENV=production", "PORT=" + strconv.Itoa(port)}, job.sentryEnv()...)
	if !job.Faults.OmitRuntimeSHA {
		extra = append(extra, "SIGNOFF_COMMIT_SHA="+job.SHA)
	}
	logPath := filepath.Join(ws.logs, "start.log")
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return fmt.Errorf("preview: start log: %w", err)
	}
	defer logFile.Close()
	args := []string{l.npm, "--no-update-notifier", "start", "--", "-H", "127.0.0.1", "-p", strconv.Itoa(port)}
	begin := time.Now()
	p, err := spawn(l.sb, l.spec(ws, ws.src, l.env(ws, extra...), nil, logFile, sandbox.NetNone, args...), l.pidDir(), ws.id, "start")
	if err != nil {
		return err
	}
	job.Start = Step{Name: "start", Command: strings.Join(args[1:], " "), Log: logPath, Status: StatusFailed, ExitCode: -1}
	job.PID = p.sp.Pid()
	job.StartTicks, _ = startTicks(job.PID)
	// The app listens on its own loopback, in its own network namespace; the forward is the
	// one way in, and it leads to that port only.
	addr, unhook, err := p.sp.Forward(port)
	if err != nil {
		p.stop()
		return &StartError{Reason: "forward the app's port: " + err.Error(), Log: logPath}
	}
	p.unhook = unhook
	job.Port = port
	job.URL = "http://" + addr

	runtimeSHA, err := waitReady(ctx, job.URL, p, l.cfg.StartTimeout)
	job.Start.Duration = time.Since(begin)
	if err != nil {
		exited := p.exited()
		p.stop()
		if exited {
			job.Start.ExitCode = p.exitCode()
		}
		return &StartError{Reason: err.Error(), Log: logPath}
	}
	job.Start.Status, job.Start.ExitCode = StatusPassed, 0
	job.RuntimeSHA = runtimeSHA
	l.mu.Lock()
	l.running[job.ID] = p
	l.mu.Unlock()
	return nil
}

func waitReady(ctx context.Context, base string, p *proc, limit time.Duration) (string, error) {
	client := &http.Client{Timeout: 2 * time.Second}
	deadline := time.Now().Add(limit)
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/__verification", nil)
		if err != nil {
			return "", err
		}
		resp, err := client.Do(req)
		if err == nil {
			defer resp.Body.Close()
			var body struct {
				CommitSHA string `json:"commit_sha"`
			}
			if resp.StatusCode == http.StatusOK {
				_ = json.NewDecoder(io.LimitReader(resp.Body, 1<<16)).Decode(&body)
			}
			return body.CommitSHA, nil
		}
		switch {
		case ctx.Err() != nil:
			return "", ctx.Err()
		case p.exited():
			return "", fmt.Errorf("exited before answering (%v)", p.err)
		case time.Now().After(deadline):
			return "", fmt.Errorf("no answer on /__verification within %s", limit)
		}
		select {
		case <-ctx.Done():
		case <-p.done:
		case <-time.After(100 * time.Millisecond):
		}
	}
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
		if st, err := readStat(job.PID); err == nil && st.StartTicks == job.StartTicks && st.Pgrp == job.PID {
			procstat.KillGroup(job.PID, l.cfg.StopGrace)
		}
		files, _ := filepath.Glob(filepath.Join(l.pidDir(), job.ID+"-*.json"))
		for _, f := range files {
			os.Remove(f)
		}
	}
	l.release(l.workspaceOf(job))
	return nil
}

func (l *Launcher) pidDir() string { return filepath.Join(l.cfg.JobsRoot, pidsDir) }

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

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("preview: find a free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
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
