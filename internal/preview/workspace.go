package preview

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/sandbox"
)

// workspace is where one job runs: a root-owned directory holding a git
// directory (root only), the work tree and HOME (owned by the preview user).
type workspace struct {
	id, slot string
	root     string   // jobs/<id> or slots/<slot>
	git      string   // root/git: bare repository borrowing the source's objects
	src      string   // root/src: the work tree that is built and served
	home     string   // root/home: HOME for repository code
	npmCache string   // root/npm-cache: this workspace's own npm cache
	pmRoot   string   // a fetched package manager release, bound read-only ("" for a pinned one)
	logs     string   // <jobs root>/logs/<id>
	services []string // the job's service folders (its database and socket), bound into every step after them
}

// kept survive in a slot between jobs: they are the incremental-build cache.
var kept = map[string]bool{"node_modules": true, ".next": true}

// claim takes a fresh folder, or the slot when no other job holds it. With a reuse key, a slot
// whose last started build is of that key comes back as it was left, with the record of the
// build (reuse.go); any other slot is cleaned for a new build.
func (l *Launcher) claim(slot, key string) (*workspace, *slotBuild, error) {
	ws := &workspace{slot: slot}
	var prior *slotBuild
	if slot == "" {
		ws.id = newID("job-")
		ws.root = filepath.Join(l.cfg.JobsRoot, jobsDir, ws.id)
	} else {
		ws.id = newID("slot-" + slot + "-")
		ws.root = filepath.Join(l.cfg.JobsRoot, slotsDir, slot)
		l.mu.Lock()
		if holder := l.slots[slot]; holder != "" {
			l.mu.Unlock()
			return nil, nil, fmt.Errorf("%w: %s holds %s", ErrSlotBusy, holder, slot)
		}
		l.slots[slot] = ws.id
		prior = l.takeBuild(slot, key)
		if _, err := os.Lstat(ws.root); errors.Is(err, fs.ErrNotExist) {
			l.pruneSlots()
		}
		l.mu.Unlock()
	}
	ws.git = filepath.Join(ws.root, "git")
	ws.src = filepath.Join(ws.root, "src")
	ws.home = filepath.Join(ws.root, "home")
	ws.npmCache = filepath.Join(ws.root, "npm-cache")
	ws.logs = filepath.Join(l.cfg.JobsRoot, logsDir, ws.id)
	if err := l.layout(ws, prior != nil); err != nil {
		l.release(ws)
		return nil, nil, err
	}
	return ws, prior, nil
}

func (l *Launcher) layout(ws *workspace, keepTree bool) error {
	for _, d := range []struct {
		path string
		mode os.FileMode
	}{{ws.root, 0o711}, {ws.git, 0o700}, {ws.logs, 0o755}} {
		if err := os.MkdirAll(d.path, d.mode); err != nil {
			return fmt.Errorf("preview: create %s: %w", d.path, err)
		}
	}
	// HOME starts empty for every job; no state leaks between attempts.
	if err := os.RemoveAll(ws.home); err != nil {
		return fmt.Errorf("preview: reset home: %w", err)
	}
	if err := os.Mkdir(ws.home, 0o700); err != nil {
		return fmt.Errorf("preview: create home: %w", err)
	}
	if err := l.ownDir(ws.home); err != nil {
		return err
	}
	// The npm cache is the workspace's own: a cache shared between jobs would let one
	// repository's install leave files for another's.
	if err := os.Mkdir(ws.npmCache, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("preview: create npm cache: %w", err)
	}
	if err := l.ownDir(ws.npmCache); err != nil {
		return err
	}
	if err := os.Mkdir(ws.src, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("preview: create work tree: %w", err)
	}
	if err := l.ownDir(ws.src); err != nil {
		return err
	}
	if keepTree {
		return nil // the app starts again from the build this slot made
	}
	// A reused slot: remove everything the previous commit left except the
	// caches. os.RemoveAll does not follow symlinks.
	entries, err := os.ReadDir(ws.src)
	if err != nil {
		return fmt.Errorf("preview: read work tree: %w", err)
	}
	for _, e := range entries {
		if ws.slot != "" && kept[e.Name()] {
			continue
		}
		if err := os.RemoveAll(filepath.Join(ws.src, e.Name())); err != nil {
			return fmt.Errorf("preview: clean work tree: %w", err)
		}
	}
	return nil
}

// pruneSlots removes the least recently used slots no preview holds until fewer than
// MaxSlots remain, to make room for a new one. l.mu is held: no slot being removed can be
// claimed meanwhile.
func (l *Launcher) pruneSlots() {
	limit := l.cfg.MaxSlots
	if limit <= 0 {
		limit = DefaultMaxSlots
	}
	dir := filepath.Join(l.cfg.JobsRoot, slotsDir)
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) < limit {
		return
	}
	type slotAge struct {
		name string
		used time.Time
	}
	var idle []slotAge
	for _, e := range entries {
		if !e.IsDir() || l.slots[e.Name()] != "" || !slotPattern.MatchString(e.Name()) {
			continue
		}
		if fi, err := os.Lstat(filepath.Join(dir, e.Name())); err == nil {
			idle = append(idle, slotAge{e.Name(), fi.ModTime()})
		}
	}
	slices.SortFunc(idle, func(a, b slotAge) int { return a.used.Compare(b.used) })
	for n := len(entries); n >= limit && len(idle) > 0; n-- {
		delete(l.built, idle[0].name)
		_ = os.RemoveAll(filepath.Join(dir, idle[0].name))
		idle = idle[1:]
	}
}

// release frees a slot, or deletes a fresh job's directory (logs stay).
func (l *Launcher) release(ws *workspace) {
	if ws == nil {
		return
	}
	if ws.slot != "" {
		l.mu.Lock()
		if l.slots[ws.slot] == ws.id {
			delete(l.slots, ws.slot)
		}
		l.mu.Unlock()
		return
	}
	_ = os.RemoveAll(ws.root)
}

var idPattern = regexp.MustCompile(`^(job|slot-[a-z0-9-]+)-[0-9a-f]{12}$`)

// workspaceOf rebuilds a Job's workspace; the ID is checked so a decoded
// Job cannot point release at another directory.
func (l *Launcher) workspaceOf(job *Job) *workspace {
	if !idPattern.MatchString(job.ID) || (job.Slot != "" && !slotPattern.MatchString(job.Slot)) {
		return nil
	}
	ws := &workspace{id: job.ID, slot: job.Slot}
	if job.Slot != "" {
		ws.root = filepath.Join(l.cfg.JobsRoot, slotsDir, job.Slot)
	} else {
		ws.root = filepath.Join(l.cfg.JobsRoot, jobsDir, job.ID)
	}
	return ws
}

// checkout points the workspace's own git directory at the source
// repository's objects (no git command ever runs inside the source
// repository, whose config the coding agent may have written), records sha
// as HEAD and extracts HEAD's tree into the work tree as the preview user.
func (l *Launcher) checkout(ctx context.Context, ws *workspace, objects, sha, appDir string) (Step, error) {
	if _, err := os.Stat(filepath.Join(ws.git, "HEAD")); errors.Is(err, fs.ErrNotExist) {
		if _, err := gitOut(ws.git, "", "init", "--bare", "--quiet"); err != nil {
			return Step{}, err
		}
	}
	if err := os.WriteFile(filepath.Join(ws.git, "objects", "info", "alternates"), []byte(objects+"\n"), 0o600); err != nil {
		return Step{}, fmt.Errorf("preview: link objects: %w", err)
	}
	// info/attributes outranks the tree's .gitattributes: a commit cannot
	// hide files from the build with export-ignore or rewrite them with
	// export-subst.
	if err := os.MkdirAll(filepath.Join(ws.git, "info"), 0o700); err != nil {
		return Step{}, fmt.Errorf("preview: git info dir: %w", err)
	}
	if err := os.WriteFile(filepath.Join(ws.git, "info", "attributes"), []byte("* -export-ignore -export-subst\n"), 0o600); err != nil {
		return Step{}, fmt.Errorf("preview: git attributes: %w", err)
	}
	if _, err := gitOut(ws.git, "", "cat-file", "-e", sha+"^{commit}"); err != nil {
		return Step{}, &InputError{Field: "commit", Reason: sha + " is not a commit in the repository"}
	}
	// HEAD is always the commit (its SHA is what the app serves); the index and the work
	// tree hold the app's folder of it, so the dirty check compares like with like.
	tree := "HEAD"
	if appDir != "" {
		tree = "HEAD:" + appDir
		// (A path after the colon takes no ^{tree} suffix: the type is asked instead.)
		if typ, err := gitOut(ws.git, "", "cat-file", "-t", sha+":"+appDir); err != nil || strings.TrimSpace(typ) != "tree" {
			return Step{}, &InputError{Field: "app dir", Reason: fmt.Sprintf("%s has no folder %s", sha, appDir)}
		}
	}
	for _, args := range [][]string{{"update-ref", "--no-deref", "HEAD", sha}, {"read-tree", tree}} {
		if _, err := gitOut(ws.git, "", args...); err != nil {
			return Step{}, err
		}
	}
	archive := gitCmd(ws.git, "", "archive", "--format=tar", tree)
	tarStream, err := archive.StdoutPipe()
	if err != nil {
		return Step{}, fmt.Errorf("preview: git archive: %w", err)
	}
	var archiveErr bytes.Buffer
	archive.Stderr = &archiveErr
	if err := archive.Start(); err != nil {
		return Step{}, fmt.Errorf("preview: git archive: %w", err)
	}
	// -m: fresh mtimes. Fixture commits share one date, and a build cache
	// keyed on mtime and size could otherwise miss a changed file.
	st := l.runStep(ctx, ws, "checkout", ws.src, l.env(ws), tarStream, l.tool("tar"), "-x", "-m", "-f", "-", "-C", ws.src)
	st.Detail = "git archive " + sha + " | tar -x (as the preview user)"
	if appDir != "" {
		st.Detail = "git archive " + sha + ":" + appDir + " | tar -x (as the preview user)"
	}
	if err := archive.Wait(); err != nil {
		return st, fmt.Errorf("preview: git archive: %w: %s", err, strings.TrimSpace(archiveErr.String()))
	}
	if st.Status == StatusFailed {
		return st, fmt.Errorf("preview: extract %s: exit %d (log %s)", sha, st.ExitCode, st.Log)
	}
	return st, nil
}

type pkgFiles struct {
	packageJSON, lock []byte
	lockfile          string // its name at the commit, "" for none
	pm                *packageManager
	Scripts           map[string]string `json:"scripts"`
}

// readPackage reads package.json and the lockfile (the first of contracts.Lockfiles) from the committed
// tree (not the work tree, where a symlink could point anywhere).
func readPackage(gitDir, appDir string) (*pkgFiles, error) {
	at := "HEAD:"
	if appDir != "" {
		at += appDir + "/"
	}
	pj, err := gitOut(gitDir, "", "cat-file", "blob", at+"package.json")
	if err != nil {
		return nil, &InputError{Field: "repository", Reason: "no package.json in " + orRoot(appDir) + " at the commit"}
	}
	p := &pkgFiles{packageJSON: []byte(pj)}
	if err := json.Unmarshal(p.packageJSON, p); err != nil {
		return nil, &InputError{Field: "package.json", Reason: err.Error()}
	}
	for _, lf := range contracts.Lockfiles {
		if lock, err := gitOut(gitDir, "", "cat-file", "blob", at+lf.File); err == nil {
			p.lock, p.lockfile = []byte(lock), lf.File
			break
		}
	}
	return p, nil
}

func (p *pkgFiles) hash() string {
	h := sha256.New()
	if p.pm != nil && p.pm.name != contracts.PackageManagerNPM {
		h.Write([]byte(p.pm.name + "\x00" + p.pm.version + "\x00" + p.lockfile + "\x00"))
	}
	h.Write(p.packageJSON)
	h.Write([]byte{0})
	h.Write(p.lock)
	return hex.EncodeToString(h.Sum(nil))
}

type slotState struct {
	Deps string `json:"deps"` // "shared:<hash>" or "own:<hash>"
}

// deps gives the work tree a node_modules: kept from the slot's previous
// job when the package files are unchanged, hardlinked from the shared
// install when they match it, else a real `npm ci` as the preview user.
// The hardlinked copy stays root-owned: the preview can read but not
// change the shared inodes.
func (l *Launcher) deps(ctx context.Context, ws *workspace, pkg *pkgFiles) (Step, error) {
	begin := time.Now()
	mode := "own"
	if l.cfg.SharedDeps != "" && pkg.pm.name == contracts.PackageManagerNPM && pkg.lockfile == "package-lock.json" && l.sharedMatches(pkg) {
		mode = "shared"
	}
	want := mode + ":" + pkg.hash()
	statePath := filepath.Join(ws.root, "state.json")
	var state slotState
	if data, err := os.ReadFile(statePath); err == nil {
		_ = json.Unmarshal(data, &state)
	}
	nm := filepath.Join(ws.src, "node_modules")
	if fi, err := os.Lstat(nm); err == nil && fi.IsDir() && ws.slot != "" && state.Deps == want {
		return Step{Name: "deps", Status: StatusPassed, Duration: time.Since(begin), Detail: "kept the slot's node_modules (" + mode + ")"}, nil
	}
	if err := os.RemoveAll(nm); err != nil {
		return Step{}, fmt.Errorf("preview: remove node_modules: %w", err)
	}
	// Forget the old state first: a failure below must not leave a stale claim.
	_ = os.Remove(statePath)
	var st Step
	if mode == "shared" {
		staging := filepath.Join(ws.root, "deps-staging")
		if err := os.RemoveAll(staging); err != nil {
			return Step{}, fmt.Errorf("preview: deps staging: %w", err)
		}
		if err := os.Mkdir(staging, 0o700); err != nil {
			return Step{}, fmt.Errorf("preview: deps staging: %w", err)
		}
		defer os.RemoveAll(staging)
		out, err := exec.CommandContext(ctx, l.tool("cp"), "-al", filepath.Join(l.cfg.SharedDeps, "node_modules"), filepath.Join(staging, "node_modules")).CombinedOutput()
		if err != nil {
			return Step{}, fmt.Errorf("preview: hardlink shared node_modules: %w: %s", err, bytes.TrimSpace(out))
		}
		// Built in a root-owned staging dir and renamed in, so nothing is
		// ever written through a path the preview user controls.
		if err := os.Rename(filepath.Join(staging, "node_modules"), nm); err != nil {
			return Step{}, fmt.Errorf("preview: place node_modules: %w", err)
		}
		st = Step{Name: "deps", Command: "cp -al " + filepath.Join(l.cfg.SharedDeps, "node_modules"), Status: StatusPassed, Duration: time.Since(begin), Detail: "hardlinked the shared install"}
	} else {
		argv, env := pkg.pm.install(ws.npmCache)
		st = l.runStepNet(ctx, ws, "deps", ws.src, l.env(ws, env...), nil, l.cfg.InstallNetwork, argv...)
		st.Detail = command(argv) + " (" + orNone(pkg.lockfile) + "), " + pkg.pm.ran
		if l.cfg.SharedDeps != "" {
			st.Detail += ": package files differ from the shared install"
		}
		if err := ctx.Err(); err != nil {
			return st, fmt.Errorf("preview: deps: %w", err)
		}
		if st.Status != StatusPassed {
			return st, nil
		}
	}
	data, _ := json.Marshal(slotState{Deps: want})
	if err := os.WriteFile(statePath, data, 0o600); err != nil {
		return st, fmt.Errorf("preview: write slot state: %w", err)
	}
	return st, nil
}

func (l *Launcher) sharedMatches(pkg *pkgFiles) bool {
	pj, err := os.ReadFile(filepath.Join(l.cfg.SharedDeps, "package.json"))
	if err != nil || !bytes.Equal(pj, pkg.packageJSON) {
		return false
	}
	lock, err := os.ReadFile(filepath.Join(l.cfg.SharedDeps, "package-lock.json"))
	if err != nil || !bytes.Equal(lock, pkg.lock) {
		return false
	}
	fi, err := os.Stat(filepath.Join(l.cfg.SharedDeps, "node_modules"))
	return err == nil && fi.IsDir()
}

// runStep runs one command of repository code in the sandbox, logging to
// <logs>/<name>.log, bounded by ctx and StepTimeout. Only the work tree and HOME (and, for
// an install, the workspace's npm cache) are writable; only an install may reach the
// network, and only if the launcher allows it. Nothing the command started survives it.
func (l *Launcher) runStep(ctx context.Context, ws *workspace, name, dir string, env []string, stdin io.Reader, args ...string) (st Step) {
	return l.runStepNet(ctx, ws, name, dir, env, stdin, sandbox.NetNone, args...)
}

func (l *Launcher) runStepNet(ctx context.Context, ws *workspace, name, dir string, env []string, stdin io.Reader, network sandbox.Network, args ...string) (st Step) {
	st = Step{Name: name, Command: command(args), Status: StatusFailed, ExitCode: -1}
	st.Log = filepath.Join(ws.logs, name+".log")
	begin := time.Now()
	defer func() { st.Duration = time.Since(begin) }()
	logFile, err := os.OpenFile(st.Log, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		st.Detail = err.Error()
		return st
	}
	defer logFile.Close()
	p, err := spawn(l.sb, l.spec(ws, dir, env, stdin, logFile, network, args...), l.pidDir(), ws.id, name)
	if err != nil {
		fmt.Fprintln(logFile, err)
		st.Detail = err.Error()
		return st
	}
	timer := time.NewTimer(l.cfg.StepTimeout)
	defer timer.Stop()
	select {
	case <-p.done:
	case <-ctx.Done():
		st.Detail = "canceled: " + ctx.Err().Error()
	case <-timer.C:
		st.TimedOut = true
		st.Detail = fmt.Sprintf("timed out after %s", l.cfg.StepTimeout)
	}
	finished := p.exited()
	p.stop()
	if finished {
		st.ExitCode = p.exitCode()
		if p.err == nil && !st.TimedOut && ctx.Err() == nil {
			st.Status = StatusPassed
		}
		if errors.Is(p.err, sandbox.ErrDiskLimit) {
			st.Detail, st.Cause = p.err.Error(), p.err.Error()
			st.Next = fmt.Sprintf("the %s step was stopped for filling the preview's folders past its quota: a build that needs more is refused here, not judged", name)
		}
	}
	return st
}

// spec is the sandbox for one command of repository code in ws.
func (l *Launcher) spec(ws *workspace, dir string, env []string, stdin io.Reader, out io.Writer, network sandbox.Network, args ...string) sandbox.Spec {
	writable := append([]string{ws.src, ws.home}, ws.services...)
	if network != sandbox.NetNone {
		writable = append(writable, ws.npmCache)
	}
	return sandbox.Spec{
		Argv: args, Dir: dir, Env: env, Writable: writable, ReadOnly: append(slices.Clip(l.toolRoots), nonEmpty(ws.pmRoot)...), Net: network, Limits: l.cfg.Limits,
		UID: l.cred.Uid, GID: l.cred.Gid, Stdin: stdin, Stdout: out, Stderr: out,
	}
}

// env is the whole environment repository code gets: an allowlist, with
// nothing copied from the worker's own environment.
func (l *Launcher) env(ws *workspace, extra ...string) []string {
	return append([]string{
		"PATH=" + l.path,
		"HOME=" + ws.home,
		"NEXT_TELEMETRY_DISABLED=1",
	}, extra...)
}

func (l *Launcher) tool(name string) string {
	for _, dir := range filepath.SplitList(l.path) {
		p := filepath.Join(dir, name)
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return name
}

func (l *Launcher) ownDir(path string) error {
	if err := os.Lchown(path, int(l.cred.Uid), int(l.cred.Gid)); err != nil {
		return fmt.Errorf("preview: chown %s: %w", path, err)
	}
	return nil
}

// objectsDir finds the object store of the repository at repoDir (a work
// tree, a linked worktree or a bare repository) by reading files only.
func objectsDir(repoDir string) (string, error) {
	abs, err := filepath.Abs(repoDir)
	if err != nil {
		return "", &InputError{Field: "repository", Reason: err.Error()}
	}
	gitDir := filepath.Join(abs, ".git")
	fi, err := os.Stat(gitDir)
	switch {
	case err == nil && fi.Mode().IsRegular():
		data, err := os.ReadFile(gitDir)
		if err != nil {
			return "", fmt.Errorf("preview: read %s: %w", gitDir, err)
		}
		target, ok := strings.CutPrefix(strings.TrimSpace(string(data)), "gitdir: ")
		if !ok {
			return "", &InputError{Field: "repository", Reason: gitDir + " is not a gitdir link"}
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(abs, target)
		}
		gitDir = target
		if common, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
			c := strings.TrimSpace(string(common))
			if !filepath.IsAbs(c) {
				c = filepath.Join(gitDir, c)
			}
			gitDir = c
		}
	case err == nil && fi.IsDir():
	default:
		gitDir = abs // maybe bare
	}
	objects := filepath.Join(gitDir, "objects")
	if fi, err := os.Stat(objects); err != nil || !fi.IsDir() {
		return "", &InputError{Field: "repository", Reason: repoDir + " is not a git repository"}
	}
	return filepath.Clean(objects), nil
}

// gitCmd builds a git command for our own git directory, with machine and
// user config, hooks and fsmonitor off.
func gitCmd(gitDir, workTree string, args ...string) *exec.Cmd {
	full := []string{
		"-c", "safe.directory=*",
		"-c", "core.hooksPath=/dev/null",
		"-c", "core.fsmonitor=false",
		"-c", "core.untrackedCache=false",
		"-c", "init.templateDir=",
		"--git-dir=" + gitDir,
	}
	if workTree != "" {
		full = append(full, "--work-tree="+workTree)
	}
	cmd := exec.Command("git", append(full, args...)...)
	cmd.Env = []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"LC_ALL=C",
	}
	return cmd
}

func gitOut(gitDir, workTree string, args ...string) (string, error) {
	cmd := gitCmd(gitDir, workTree, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("preview: git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return stdout.String(), nil
}

func orNone(lockfile string) string {
	if lockfile == "" {
		return "no lockfile"
	}
	return lockfile
}

func orRoot(dir string) string {
	if dir == "" {
		return "the repository root"
	}
	return dir + "/"
}
