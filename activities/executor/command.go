//go:build unix

package executor

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
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/signoff/signoff/activities"
	"github.com/signoff/signoff/activities/localgit"
	"github.com/signoff/signoff/activities/procstat"
	"github.com/signoff/signoff/activities/unprivileged"
)

// Placeholders a command template may use. They are replaced inside each argument, so
// "--prompt-file={prompt_file}" works as well as a bare "{prompt_file}".
const (
	PlaceholderPromptFile = "{prompt_file}"
	PlaceholderPrompt     = "{prompt}"
	PlaceholderWorkdir    = "{workdir}"
)

// Signoff's identity on every commit the command executor makes: the CLI's own identity, if
// it has one, never reaches the deliverable.
const (
	CommitName  = "Signoff"
	CommitEmail = "executor@signoff.local"
)

// Defaults for a Command that leaves the limits unset.
const (
	DefaultCommandTimeout = 30 * time.Minute
	DefaultMaxOutput      = 4 << 20
	DefaultKillGrace      = 5 * time.Second
	DefaultProgressEvery  = 15 * time.Second
)

// Command runs a black-box coding CLI (codex exec, claude -p, any command) in a fresh clone
// of the bare remote, on branch signoff/<contract>, with a scrubbed environment, and commits
// what it changed under Signoff's identity. The CLI never commits or pushes on Signoff's
// behalf, and never sees a key the execute queue must not hold.
type Command struct {
	// Argv is the command template: the program and its arguments, no shell. The prompt
	// reaches the CLI through {prompt_file}, {prompt} or, with Stdin, standard input.
	Argv []string
	// Stdin feeds the prompt on the CLI's standard input (otherwise it reads /dev/null).
	Stdin bool
	// JobsDir holds one job directory per attempt (clone, HOME, TMPDIR, prompt, log).
	JobsDir string
	// LogDir keeps each run's log as <sha256>.log: the digest is ExecResult.OutputDigest.
	LogDir  string
	Remotes localgit.Remotes
	Allow   Allowlist
	// PassEnv names worker variables the CLI may see besides the fixed allowlist (its own
	// model key, a proxy). Names of Signoff's secrets are refused even when listed.
	PassEnv []string
	// Timeout is the wall-clock limit of one run; the CLI's process group is killed then.
	Timeout time.Duration
	// MaxOutput caps the bytes of stdout+stderr kept; the rest is counted and dropped.
	MaxOutput int64
	// KillGrace is how long the group gets between SIGTERM and SIGKILL.
	KillGrace time.Duration
	// Progress, when set, hears what the run is doing (a heartbeat detail).
	Progress      func(ctx context.Context, detail string)
	ProgressEvery time.Duration
	// RunAs, when set, is the user the CLI runs as (see package unprivileged): it owns only
	// its clone, HOME and TMPDIR, so the worker's keys and the bare remotes stay out of its
	// reach even by absolute path. JobsDir must be traversable by it; nil runs the CLI as
	// the worker's own user.
	RunAs *syscall.Credential
	// SecretPaths must stay unreadable by RunAs; Check refuses otherwise.
	SecretPaths []string
}

// Isolation says who the CLI runs as, for the worker's status lines.
func (c *Command) Isolation() string {
	if c.RunAs == nil {
		return "as the worker's own user"
	}
	return fmt.Sprintf("as uid %d, no supplementary groups", c.RunAs.Uid)
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Names the CLI never sees, whatever PassEnv says: payment, GitHub write, Temporal, error
// tracker and browser keys, Signoff's own configuration (agent seed, key files), SSH agents.
var (
	secretPrefixes = []string{"STRIPE_", "SIGNOFF_", "TEMPORAL_", "GITHUB_", "GH_", "SENTRY_",
		"BROWSERBASE_", "AGENTVERSE_", "AGENT_", "SSH_", "GIT_"}
	secretParts = []string{"SEED", "SIGNING", "PRIVATE_KEY", "WEBHOOK"}
)

// SecretEnvName reports whether a variable name belongs to a credential the execute queue
// must never hand to repository code or a coding CLI.
func SecretEnvName(name string) bool {
	n := strings.ToUpper(name)
	for _, p := range secretPrefixes {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	for _, p := range secretParts {
		if strings.Contains(n, p) {
			return true
		}
	}
	return false
}

// ParseTemplate splits a command line ("codex exec --full-auto -") into arguments, honouring
// single and double quotes. No shell runs it: no expansion, no pipes.
func ParseTemplate(s string) ([]string, error) {
	var args []string
	var cur strings.Builder
	inArg := false
	var quote rune
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '\'' || r == '"':
			quote, inArg = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inArg {
				args = append(args, cur.String())
				cur.Reset()
				inArg = false
			}
		default:
			cur.WriteRune(r)
			inArg = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("command template %q: unterminated quote", s)
	}
	if inArg {
		args = append(args, cur.String())
	}
	if len(args) == 0 {
		return nil, errors.New("command template is empty")
	}
	return args, nil
}

// Check validates the configuration; Run calls it first.
func (c *Command) Check() error {
	if len(c.Argv) == 0 || c.Argv[0] == "" {
		return errors.New("no command template")
	}
	if c.JobsDir == "" || c.LogDir == "" {
		return errors.New("jobs and log directories are required")
	}
	usesPrompt := c.Stdin
	for _, a := range c.Argv {
		if strings.Contains(a, PlaceholderPromptFile) || strings.Contains(a, PlaceholderPrompt) {
			usesPrompt = true
		}
	}
	if !usesPrompt {
		return fmt.Errorf("command template %q never receives the prompt: use %s, %s or stdin", strings.Join(c.Argv, " "), PlaceholderPromptFile, PlaceholderPrompt)
	}
	if c.RunAs != nil {
		if err := os.MkdirAll(c.JobsDir, 0o711); err != nil {
			return fmt.Errorf("jobs directory: %w", err)
		}
		if !unprivileged.Traversable(c.JobsDir, c.RunAs) {
			return fmt.Errorf("uid %d cannot reach %s (every parent directory needs o+x)", c.RunAs.Uid, c.JobsDir)
		}
		for _, p := range c.SecretPaths {
			if unprivileged.Readable(p, c.RunAs) {
				return fmt.Errorf("uid %d could read %s: make it mode 0600 in a 0700 directory owned by the worker", c.RunAs.Uid, p)
			}
		}
	}
	for _, n := range c.PassEnv {
		if !envName.MatchString(n) {
			return fmt.Errorf("pass-through variable %q is not a variable name", n)
		}
		if SecretEnvName(n) {
			return fmt.Errorf("pass-through variable %s names a credential the execute queue must not hand to a coding CLI", n)
		}
	}
	return nil
}

var commitSHA = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)

// Run makes one attempt: clone, run the CLI, check and commit what changed, push to the bare
// remote. An exit status other than 0 is an error; exit 0 with no change is an empty attempt.
func (c *Command) Run(ctx context.Context, req activities.ExecRequest) (activities.ExecResult, error) {
	if err := c.Check(); err != nil {
		return activities.ExecResult{}, activities.NotConfigured("command executor (" + err.Error() + ")")
	}
	if !c.Allow.Allows(req.Repo.Owner, req.Repo.Name) {
		return activities.ExecResult{}, activities.Refused(fmt.Errorf("repository %s/%s is not on the allowlist", req.Repo.Owner, req.Repo.Name))
	}
	if !safeID.MatchString(req.ContractID) {
		return activities.ExecResult{}, activities.Refused(fmt.Errorf("contract id %q is not a safe name", req.ContractID))
	}
	branch := Branch(req.ContractID)
	if !strings.HasPrefix(branch, BranchPrefix) {
		return activities.ExecResult{}, activities.Refused(fmt.Errorf("branch %q is outside %s", branch, BranchPrefix))
	}
	if !commitSHA.MatchString(req.ParentSHA) {
		return activities.ExecResult{}, activities.Refused(fmt.Errorf("parent %q is not a commit SHA", req.ParentSHA))
	}
	if req.Attempt < 1 {
		return activities.ExecResult{}, activities.Refused(fmt.Errorf("attempt %d", req.Attempt))
	}
	remote, err := c.Remotes.Path(req.Repo.Owner, req.Repo.Name)
	if err != nil {
		return activities.ExecResult{}, activities.Refused(err)
	}

	job := filepath.Join(c.JobsDir, fmt.Sprintf("cmd-%s-attempt-%d", req.ContractID, req.Attempt))
	if err := os.RemoveAll(job); err != nil {
		return activities.ExecResult{}, fmt.Errorf("clear job directory: %w", err)
	}
	defer os.RemoveAll(job)
	repo, home, tmp := filepath.Join(job, "repo"), filepath.Join(job, "home"), filepath.Join(job, "tmp")
	for _, d := range []string{home, tmp} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return activities.ExecResult{}, fmt.Errorf("job directory: %w", err)
		}
	}
	c.progress(ctx, "cloning "+req.Repo.Owner+"/"+req.Repo.Name)
	clone := []string{"clone", "--quiet", "--no-checkout"}
	if c.RunAs != nil {
		// A local clone hardlinks the remote's objects: handed to the CLI's user, they
		// would be the remote's files too.
		clone = append(clone, "--no-hardlinks")
	}
	if _, err := localgit.Git(ctx, job, append(clone, remote, repo)...); err != nil {
		return activities.ExecResult{}, fmt.Errorf("clone from the bare remote: %w", err)
	}
	if _, err := localgit.Git(ctx, repo, "checkout", "--quiet", "-B", branch, req.ParentSHA); err != nil {
		return activities.ExecResult{}, fmt.Errorf("check out parent %s: %w", req.ParentSHA, err)
	}
	if err := c.handOver(job, repo, home, tmp); err != nil {
		return activities.ExecResult{}, err
	}
	before, err := gitControlState(repo)
	if err != nil {
		return activities.ExecResult{}, err
	}

	prompt := BuildPrompt(req, branch)
	promptFile := filepath.Join(job, "prompt.md")
	// The prompt holds the goal and the criteria, nothing secret: the CLI's user reads it.
	if err := os.WriteFile(promptFile, []byte(prompt), 0o644); err != nil {
		return activities.ExecResult{}, fmt.Errorf("write prompt: %w", err)
	}
	run, runErr := c.runCLI(ctx, req, job, repo, home, tmp, promptFile, prompt)
	digest, logErr := c.keepLog(run.log)
	if logErr != nil {
		return activities.ExecResult{}, fmt.Errorf("keep executor output: %w", logErr)
	}
	if runErr != nil {
		return activities.ExecResult{}, fmt.Errorf("%w (output sha256 %s)", runErr, digest)
	}

	c.progress(ctx, "checking the change")
	after, err := gitControlState(repo)
	if err != nil {
		return activities.ExecResult{}, activities.Refused(fmt.Errorf("the coding CLI damaged the clone's git directory: %w", err))
	}
	if changed := diffControlState(before, after); len(changed) > 0 {
		return activities.ExecResult{}, activities.Refused(fmt.Errorf("the coding CLI changed the clone's git control files (%s); nothing was committed", strings.Join(changed, ", ")))
	}
	// Whatever the CLI did with HEAD, the index or its own commits, the attempt is the work
	// tree it left, committed on the parent by Signoff.
	for _, args := range [][]string{
		{"symbolic-ref", "HEAD", "refs/heads/" + branch},
		{"update-ref", "refs/heads/" + branch, req.ParentSHA},
		{"read-tree", req.ParentSHA},
		{"add", "--all"},
	} {
		if _, err := localgit.Git(ctx, repo, args...); err != nil {
			return activities.ExecResult{}, fmt.Errorf("stage the change: %w", err)
		}
	}
	if problems, err := checkStaged(ctx, repo, req.ParentSHA); err != nil {
		return activities.ExecResult{}, err
	} else if len(problems) > 0 {
		return activities.ExecResult{}, activities.Refused(fmt.Errorf("refused to commit the coding CLI's change: %s", strings.Join(problems, "; ")))
	}
	if _, err := localgit.Git(ctx, repo, "diff", "--cached", "--quiet", req.ParentSHA); err == nil {
		return activities.ExecResult{Empty: true, CommitSHA: req.ParentSHA, Branch: branch, DiffSummary: "no change", OutputDigest: digest}, nil
	}
	msg := fmt.Sprintf("Signoff attempt %d: %s\n\nSignoff-Contract: %s\nSignoff-Contract-Hash: %s\nSignoff-Executor-Output: sha256:%s\n",
		req.Attempt, firstLine(req.Goal), req.ContractID, req.ContractHash, digest)
	c.progress(ctx, "committing")
	if _, err := localgit.Git(ctx, repo, "-c", "user.name="+CommitName, "-c", "user.email="+CommitEmail,
		"commit", "--quiet", "--no-verify", "-m", msg); err != nil {
		return activities.ExecResult{}, fmt.Errorf("commit: %w", err)
	}
	out, err := localgit.Git(ctx, repo, "rev-parse", "HEAD")
	if err != nil {
		return activities.ExecResult{}, err
	}
	res, err := finish(ctx, repo, remote, branch, req.ParentSHA, strings.TrimSpace(out))
	if err != nil {
		return activities.ExecResult{}, err
	}
	res.OutputDigest = digest
	return res, nil
}

// handOver gives the CLI's user its clone, HOME and TMPDIR. The job directory itself stays
// the worker's (traversable, not writable): the pid file the sweep trusts lives there.
func (c *Command) handOver(job string, dirs ...string) error {
	if c.RunAs == nil {
		return nil
	}
	if err := os.Chmod(job, 0o711); err != nil {
		return fmt.Errorf("job directory: %w", err)
	}
	for _, d := range dirs {
		err := filepath.WalkDir(d, func(p string, _ fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return os.Lchown(p, int(c.RunAs.Uid), int(c.RunAs.Gid))
		})
		if err != nil {
			return fmt.Errorf("hand %s to uid %d: %w", d, c.RunAs.Uid, err)
		}
	}
	return nil
}

func (c *Command) progress(ctx context.Context, detail string) {
	if c.Progress != nil {
		c.Progress(ctx, detail)
	}
}

// BuildPrompt is what the CLI is told: the goal, the criteria it will be judged by, the
// test hooks it must add, and on a repair what failed with the observed values.
func BuildPrompt(req activities.ExecRequest, branch string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "# Task (Signoff contract %s, attempt %d)\n\n%s\n\n", req.ContractID, req.Attempt, strings.TrimSpace(req.Goal))
	fmt.Fprintf(&b, "You are working in a clone of %s/%s on branch %s, at commit %s.\n", req.Repo.Owner, req.Repo.Name, branch, req.ParentSHA)
	b.WriteString("Edit the files in this directory. Do not commit, push or change git configuration: Signoff commits what you leave.\n")
	b.WriteString("An independent browser verifier will run every criterion below against the built app; the criteria cannot be changed.\n\n")
	b.WriteString("## Acceptance criteria\n\n")
	for i, cr := range req.Criteria {
		fmt.Fprintf(&b, "%d. %s (id `%s`, route `%s`", i+1, cr.Description, cr.ID, cr.Route)
		for _, v := range cr.Viewports() {
			fmt.Fprintf(&b, ", viewport %dx%d", v.Width, v.Height)
		}
		b.WriteString(")\n")
	}
	if len(req.Criteria) > 0 {
		if data, err := json.MarshalIndent(req.Criteria, "", "  "); err == nil {
			b.WriteString("\nThe criteria exactly as the verifier runs them:\n\n```json\n")
			b.Write(data)
			b.WriteString("\n```\n")
		}
	}
	if len(req.TestHooks) > 0 {
		b.WriteString("\n## Test hooks the change must provide\n\n")
		for _, h := range req.TestHooks {
			fmt.Fprintf(&b, "- `%s`: %s\n", h.Selector, h.Description)
		}
	}
	if len(req.Feedback) > 0 {
		b.WriteString("\n## The previous attempt was not satisfied\n\nFix these failures; every criterion is checked again:\n\n")
		for _, r := range req.Feedback {
			b.WriteString("- ")
			if r.Criterion != "" {
				fmt.Fprintf(&b, "criterion `%s`", r.Criterion)
				if r.Check != "" {
					fmt.Fprintf(&b, " (%s)", r.Check)
				}
				b.WriteString(": ")
			}
			b.WriteString(r.Message)
			if r.Observed != nil || r.Expected != nil {
				fmt.Fprintf(&b, " [observed %s, expected %s]", jsonText(r.Observed), jsonText(r.Expected))
			}
			b.WriteString("\n")
		}
	}
	return b.String()
}

func jsonText(v any) string {
	data, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(data)
}

// cliRun is what one run of the CLI left: the log text (header, prompt, output, footer).
type cliRun struct {
	log []byte
}

func (c *Command) runCLI(ctx context.Context, req activities.ExecRequest, job, repo, home, tmp, promptFile, prompt string) (cliRun, error) {
	timeout, maxOut, grace, every := c.Timeout, c.MaxOutput, c.KillGrace, c.ProgressEvery
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	if maxOut <= 0 {
		maxOut = DefaultMaxOutput
	}
	if grace <= 0 {
		grace = DefaultKillGrace
	}
	if every <= 0 {
		every = DefaultProgressEvery
	}
	argv := make([]string, len(c.Argv))
	for i, a := range c.Argv {
		a = strings.ReplaceAll(a, PlaceholderPromptFile, promptFile)
		a = strings.ReplaceAll(a, PlaceholderWorkdir, repo)
		argv[i] = strings.ReplaceAll(a, PlaceholderPrompt, prompt)
	}
	var head bytes.Buffer
	sum := sha256.Sum256([]byte(prompt))
	fmt.Fprintf(&head, "signoff executor log\ncontract: %s\nattempt: %d\ncommand: %s\nstarted: %s\nprompt sha256: %s\n--- prompt ---\n%s\n--- output ---\n",
		req.ContractID, req.Attempt, strings.Join(c.Argv, " "), time.Now().UTC().Format(time.RFC3339), hex.EncodeToString(sum[:]), prompt)

	out := &cappedBuffer{max: maxOut}
	run := func(footer string) cliRun {
		log := append(append([]byte{}, head.Bytes()...), out.buf.Bytes()...)
		if dropped := out.total.Load() - int64(out.buf.Len()); dropped > 0 {
			log = append(log, fmt.Sprintf("\n[signoff: output truncated, %d of %d bytes kept]\n", out.buf.Len(), out.total.Load())...)
		}
		return cliRun{log: append(log, "\n--- "+footer+" ---\n"...)}
	}

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = repo
	cmd.Env = scrubbedEnv(home, tmp, c.PassEnv)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Credential: c.RunAs}
	if c.Stdin {
		f, err := os.Open(promptFile)
		if err != nil {
			return run("not started"), fmt.Errorf("open prompt: %w", err)
		}
		defer f.Close()
		cmd.Stdin = f
	}
	// A pipe we drain ourselves: the cap holds however much the CLI writes, and the leader's
	// exit is seen even while a stray child still holds the pipe open.
	pr, pw, err := os.Pipe()
	if err != nil {
		return run("not started"), err
	}
	defer pr.Close()
	cmd.Stdout, cmd.Stderr = pw, pw
	c.progress(ctx, "running "+filepath.Base(argv[0]))
	if err := cmd.Start(); err != nil {
		pw.Close()
		return run("not started"), fmt.Errorf("start coding CLI %s: %w", filepath.Base(argv[0]), err)
	}
	pw.Close()
	pgid := cmd.Process.Pid
	_ = writeCLIPid(job, pgid)
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		_, _ = io.Copy(out, pr)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	began := time.Now()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	tick := time.NewTicker(every)
	defer tick.Stop()
	var waitErr, stopErr error
wait:
	for {
		select {
		case waitErr = <-exited:
			break wait
		case <-ctx.Done():
			stopErr = fmt.Errorf("coding CLI stopped: %w", ctx.Err())
			procstat.KillGroup(pgid, grace)
			waitErr = <-exited
			break wait
		case <-timer.C:
			stopErr = fmt.Errorf("coding CLI timed out after %s; its process group was killed", timeout)
			procstat.KillGroup(pgid, grace)
			waitErr = <-exited
			break wait
		case <-tick.C:
			c.progress(ctx, fmt.Sprintf("running %s: %s, %d bytes of output", filepath.Base(argv[0]), time.Since(began).Round(time.Second), out.total.Load()))
		}
	}
	// Whatever the CLI left running in its group goes with it.
	procstat.KillGroup(pgid, grace)
	select {
	case <-drained:
	case <-time.After(2 * time.Second):
		pr.Close() // a process that left the group still holds the pipe
		<-drained
	}
	_ = os.Remove(filepath.Join(job, cliPidFile))

	code := -1
	if cmd.ProcessState != nil {
		code = cmd.ProcessState.ExitCode()
	}
	footer := fmt.Sprintf("exit status %d after %s, %d bytes of output", code, time.Since(began).Round(time.Millisecond), out.total.Load())
	if stopErr != nil {
		return run(footer + ", " + stopErr.Error()), stopErr
	}
	if waitErr != nil {
		return run(footer), fmt.Errorf("coding CLI %s failed with exit status %d", filepath.Base(argv[0]), code)
	}
	return run(footer), nil
}

// scrubbedEnv is the whole environment the CLI gets: an allowlist, nothing else copied from
// the worker.
func scrubbedEnv(home, tmp string, pass []string) []string {
	env := []string{"HOME=" + home, "TMPDIR=" + tmp}
	for _, k := range []string{"PATH", "LANG", "TERM"} {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	seen := map[string]bool{"HOME": true, "TMPDIR": true, "PATH": true, "LANG": true, "TERM": true}
	for _, k := range pass {
		if seen[k] || !envName.MatchString(k) || SecretEnvName(k) {
			continue
		}
		seen[k] = true
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	return env
}

// cappedBuffer keeps the first max bytes written and counts the rest.
type cappedBuffer struct {
	max   int64
	buf   bytes.Buffer
	total atomic.Int64
}

func (w *cappedBuffer) Write(p []byte) (int, error) {
	w.total.Add(int64(len(p)))
	if room := w.max - int64(w.buf.Len()); room > 0 {
		if int64(len(p)) > room {
			w.buf.Write(p[:room])
		} else {
			w.buf.Write(p)
		}
	}
	return len(p), nil
}

// keepLog stores the run's log under its sha256 and returns the digest.
func (c *Command) keepLog(log []byte) (string, error) {
	sum := sha256.Sum256(log)
	digest := hex.EncodeToString(sum[:])
	if err := os.MkdirAll(c.LogDir, 0o755); err != nil {
		return "", err
	}
	dst := filepath.Join(c.LogDir, digest+".log")
	if _, err := os.Stat(dst); err == nil {
		return digest, nil
	}
	tmp, err := os.CreateTemp(c.LogDir, ".log-*")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(log); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", err
	}
	return digest, os.Rename(tmp.Name(), dst)
}

// LogPath is where the log with a given OutputDigest is kept.
func (c *Command) LogPath(digest string) (string, error) {
	if len(digest) != 64 || strings.Trim(digest, "0123456789abcdef") != "" {
		return "", fmt.Errorf("%q is not a sha256 digest", digest)
	}
	return filepath.Join(c.LogDir, digest+".log"), nil
}

// gitControlState fingerprints the parts of a clone's .git that decide what git runs or
// reads (config, hooks, info, alternates), so a CLI that rewires them is caught before
// Signoff runs git in that clone again.
func gitControlState(repo string) (map[string]string, error) {
	gitDir := filepath.Join(repo, ".git")
	fi, err := os.Lstat(gitDir)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a directory", gitDir)
	}
	state := map[string]string{}
	add := func(p string, d fs.DirEntry) error {
		rel, _ := filepath.Rel(gitDir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			t, err := os.Readlink(p)
			if err != nil {
				return err
			}
			state[rel] = "symlink:" + t
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(data)
			state[rel] = hex.EncodeToString(sum[:])
		case d.IsDir():
			state[rel] = "dir"
		default:
			state[rel] = "special"
		}
		return nil
	}
	for _, name := range []string{"config", "commondir", "hooks", "info", "objects/info", "modules", "worktrees"} {
		root := filepath.Join(gitDir, name)
		if _, err := os.Lstat(root); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			return add(p, d)
		})
		if err != nil {
			return nil, fmt.Errorf("read git control files: %w", err)
		}
	}
	return state, nil
}

func diffControlState(before, after map[string]string) []string {
	var changed []string
	for k, v := range before {
		if after[k] != v {
			changed = append(changed, ".git/"+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			changed = append(changed, ".git/"+k)
		}
	}
	sort.Strings(changed)
	return changed
}

// checkStaged refuses what must not reach a commit: symlinks pointing outside the clone,
// embedded repositories, anything under a .git path, and hard links (a way to pull a file
// from outside the job directory into the change).
func checkStaged(ctx context.Context, repo, parent string) ([]string, error) {
	out, err := localgit.Git(ctx, repo, "diff", "--cached", "--raw", "-z", "--no-renames", parent)
	if err != nil {
		return nil, fmt.Errorf("list the change: %w", err)
	}
	var problems []string
	fields := strings.Split(out, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		meta, name := fields[i], fields[i+1]
		parts := strings.Fields(strings.TrimPrefix(meta, ":"))
		if len(parts) < 5 {
			return nil, fmt.Errorf("unexpected git diff line %q", meta)
		}
		newMode, status := parts[1], parts[4]
		for _, el := range strings.Split(name, "/") {
			if strings.EqualFold(el, ".git") {
				problems = append(problems, name+": inside a .git directory")
			}
		}
		if status == "D" {
			continue
		}
		p := filepath.Join(repo, filepath.FromSlash(name))
		switch newMode {
		case "160000":
			problems = append(problems, name+": an embedded git repository")
		case "120000":
			target, err := os.Readlink(p)
			if err != nil {
				return nil, err
			}
			if escapes(repo, p, target) {
				problems = append(problems, fmt.Sprintf("%s: a symlink to %s, outside the clone", name, target))
			}
		default:
			fi, err := os.Lstat(p)
			if err != nil {
				return nil, err
			}
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
				problems = append(problems, name+": a hard link (it may share a file outside the clone)")
			}
		}
	}
	return problems, nil
}

// escapes reports whether a symlink at link with the given target resolves outside root.
func escapes(root, link, target string) bool {
	if filepath.IsAbs(target) {
		return true
	}
	resolved := filepath.Join(filepath.Dir(link), target)
	rel, err := filepath.Rel(root, resolved)
	return err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

const cliPidFile = "cli.pid"

// cliPid lets a restarted worker find a CLI a crashed one left running.
type cliPid struct {
	PID        int    `json:"pid"`
	StartTicks uint64 `json:"start_ticks"`
}

func writeCLIPid(job string, pid int) error {
	rec := cliPid{PID: pid}
	if st, err := procstat.Read(pid); err == nil {
		rec.StartTicks = st.StartTicks
	}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(job, cliPidFile), data, 0o600)
}

// Sweep ends what a crashed worker left: the process group of every CLI recorded in a job
// directory (by its recorded PID, checked against the process start time, never by name),
// then the job directories themselves. Call it when the worker starts, before any Run.
func (c *Command) Sweep() error {
	entries, err := os.ReadDir(c.JobsDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	grace := c.KillGrace
	if grace <= 0 {
		grace = DefaultKillGrace
	}
	var errs []error
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), "cmd-") {
			continue
		}
		job := filepath.Join(c.JobsDir, e.Name())
		if data, err := os.ReadFile(filepath.Join(job, cliPidFile)); err == nil {
			var rec cliPid
			if json.Unmarshal(data, &rec) == nil && rec.PID > 1 {
				st, err := procstat.Read(rec.PID)
				leaderIsOurs := err == nil && st.StartTicks == rec.StartTicks
				leaderGone := err != nil
				if leaderIsOurs || leaderGone {
					procstat.KillGroup(rec.PID, grace)
				}
			}
		}
		if err := os.RemoveAll(job); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Compile-time check: Command is an activities.Executor.
var _ activities.Executor = (*Command)(nil)
