//go:build unix

package executor

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/internal/sandbox"
	"github.com/signoff/signoff/internal/unprivileged"
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
// of the bare remote, on branch signoff/<contract>, inside the sandbox: its own PID, mount
// and network namespaces, only the job's folders writable, a scrubbed environment. The
// change leaves the sandbox as git objects (a bundle made inside, by a second sandboxed
// step), is checked outside in a repository only the worker writes, and is committed there
// under Signoff's identity. The worker never runs git in a tree the CLI touched.
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
	// Timeout is the wall-clock limit of one run; the sandbox is ended then.
	Timeout time.Duration
	// MaxOutput caps the bytes of stdout+stderr kept; the rest is counted and dropped.
	MaxOutput int64
	// KillGrace is how long a leftover process group gets between SIGTERM and SIGKILL when
	// Sweep ends what a crashed worker left.
	KillGrace time.Duration
	// Progress, when set, hears what the run is doing (a heartbeat detail).
	Progress      func(ctx context.Context, detail string)
	ProgressEvery time.Duration
	// Sandbox runs the CLI and the packaging step. Required.
	Sandbox *sandbox.Runner
	// RunAs is the unprivileged user the sandbox runs as; it owns only the clone, HOME,
	// TMPDIR and the bundle folder. Required.
	RunAs *syscall.Credential
	// Network is what the CLI can reach: by default egress without the host's loopback
	// (a coding CLI talks to its model's API); sandbox.NetNone cuts it off entirely.
	Network sandbox.Network
	// ReadOnly are extra host paths the CLI needs (its own installation, when it lives
	// outside /usr); they are bound read-only.
	ReadOnly []string
	// Writable are host folders the CLI may write besides its job (its own cache or state
	// folder); none may hold a secret path.
	Writable []string
	// Limits bound the sandbox's memory and processes.
	Limits sandbox.Limits
	// SecretPaths must stay unreadable by RunAs; Check refuses otherwise (defence in depth:
	// the sandbox does not mount them at all).
	SecretPaths []string
}

// Isolation says how the CLI is contained, for the worker's status lines.
func (c *Command) Isolation() string {
	if c.Sandbox == nil || c.RunAs == nil {
		return "not configured"
	}
	return fmt.Sprintf("%s, as uid %d", c.Sandbox.Describe(), c.RunAs.Uid)
}

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Names the CLI never sees, whatever PassEnv says: payment, GitHub write, Temporal, error
// tracker and browser keys, the artifact store's credentials (AWS_*: with them a CLI could
// publish or delete proof parts), Signoff's own configuration (agent seed, key files), SSH
// agents.
var (
	secretPrefixes = []string{"STRIPE_", "SIGNOFF_", "TEMPORAL_", "GITHUB_", "GH_", "SENTRY_",
		"BROWSERBASE_", "AGENTVERSE_", "AGENT_", "SSH_", "GIT_", "AWS_"}
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
	if c.Sandbox == nil {
		return errors.New("no sandbox: repository code and coding CLIs run only inside one")
	}
	if c.RunAs == nil {
		return errors.New("no unprivileged user for the sandbox")
	}
	for _, p := range append(append([]string{}, c.ReadOnly...), c.Writable...) {
		if !filepath.IsAbs(p) {
			return fmt.Errorf("sandbox path %q is not absolute", p)
		}
		for _, secret := range c.SecretPaths {
			if rel, err := filepath.Rel(p, secret); err == nil && !strings.HasPrefix(rel, "..") {
				return fmt.Errorf("sandbox path %s holds %s, which the CLI must never see", p, secret)
			}
		}
	}
	{
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
func (c *Command) Run(ctx context.Context, req capability.ExecRequest) (capability.ExecResult, error) {
	// Refused before anything is made for it, not even a job directory.
	if !c.Allow.Allows(req.Repo.Owner, req.Repo.Name) {
		return capability.ExecResult{}, capability.Refused(fmt.Errorf("repository %s is not on the allowlist", req.Repo.Key()))
	}
	if err := c.Check(); err != nil {
		return capability.ExecResult{}, capability.NotConfigured("command executor (" + err.Error() + ")")
	}
	if !contracts.ValidContractID(req.ContractID) {
		return capability.ExecResult{}, capability.Refused(fmt.Errorf("contract id %q is not a safe name", req.ContractID))
	}
	branch := Branch(req.ContractID)
	if !strings.HasPrefix(branch, BranchPrefix) {
		return capability.ExecResult{}, capability.Refused(fmt.Errorf("branch %q is outside %s", branch, BranchPrefix))
	}
	if !commitSHA.MatchString(req.ParentSHA) {
		return capability.ExecResult{}, capability.Refused(fmt.Errorf("parent %q is not a commit SHA", req.ParentSHA))
	}
	if req.Attempt < 1 {
		return capability.ExecResult{}, capability.Refused(fmt.Errorf("attempt %d", req.Attempt))
	}
	remote, err := c.Remotes.Path(req.Repo.Owner, req.Repo.Name)
	if err != nil {
		return capability.ExecResult{}, capability.Refused(err)
	}

	job := filepath.Join(c.JobsDir, fmt.Sprintf("cmd-%s-attempt-%d", req.ContractID, req.Attempt))
	if err := os.RemoveAll(job); err != nil {
		return capability.ExecResult{}, fmt.Errorf("clear job directory: %w", err)
	}
	defer os.RemoveAll(job)
	repo, home, tmp, out := filepath.Join(job, "repo"), filepath.Join(job, "home"), filepath.Join(job, "tmp"), filepath.Join(job, "out")
	for _, d := range []string{home, tmp, out} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return capability.ExecResult{}, fmt.Errorf("job directory: %w", err)
		}
	}
	c.progress(ctx, "cloning "+req.Repo.Key())
	// --no-hardlinks: a local clone hardlinks the remote's objects, and handed to the
	// sandbox's user they would be the remote's files too.
	if _, err := localgit.Git(ctx, job, "clone", "--quiet", "--no-checkout", "--no-hardlinks", remote, repo); err != nil {
		return capability.ExecResult{}, fmt.Errorf("clone from the bare remote: %w", err)
	}
	// The last git command the worker runs in the clone: the CLI has not touched it yet.
	if _, err := localgit.Git(ctx, repo, "checkout", "--quiet", "-B", branch, req.ParentSHA); err != nil {
		return capability.ExecResult{}, fmt.Errorf("check out parent %s: %w", req.ParentSHA, err)
	}
	if err := c.handOver(job, repo, home, tmp, out); err != nil {
		return capability.ExecResult{}, err
	}

	prompt := BuildPrompt(req, branch)
	promptFile := filepath.Join(job, "prompt.md")
	// The prompt holds the goal and the criteria, nothing secret: the CLI's user reads it.
	if err := os.WriteFile(promptFile, []byte(prompt), 0o644); err != nil {
		return capability.ExecResult{}, fmt.Errorf("write prompt: %w", err)
	}
	run, runErr := c.runCLI(ctx, req, job, repo, home, tmp, promptFile, prompt)
	digest, logErr := c.keepLog(run.log)
	if logErr != nil {
		return capability.ExecResult{}, fmt.Errorf("keep executor output: %w", logErr)
	}
	if runErr != nil {
		return capability.ExecResult{}, fmt.Errorf("%w (output sha256 %s)", runErr, digest)
	}

	// Whatever the CLI did with HEAD, the index, its own commits or the clone's git
	// configuration, the attempt is the work tree it left. Git reads that configuration
	// only inside a second sandbox, and the result leaves it as objects.
	c.progress(ctx, "packaging the change")
	bundle := filepath.Join(out, "attempt.bundle")
	if err := c.pack(ctx, job, repo, home, tmp, out, bundle, req.ParentSHA); err != nil {
		return capability.ExecResult{}, capability.Refused(fmt.Errorf("the coding CLI's clone could not be packaged (it may have damaged its git directory): %w", err))
	}
	c.progress(ctx, "checking the change")
	scratch := filepath.Join(job, "import.git")
	imp, problems, err := importAttempt(ctx, scratch, remote, bundle, req.ParentSHA)
	if err != nil {
		return capability.ExecResult{}, err
	}
	if len(problems) > 0 {
		return capability.ExecResult{}, capability.Refused(fmt.Errorf("refused to commit the coding CLI's change: %s", strings.Join(problems, "; ")))
	}
	if imp.Empty {
		return capability.ExecResult{Empty: true, CommitSHA: req.ParentSHA, Branch: branch, DiffSummary: "no change", OutputDigest: digest}, nil
	}
	msg := fmt.Sprintf("Signoff attempt %d: %s\n\nSignoff-Contract: %s\nSignoff-Contract-Hash: %s\nSignoff-Executor-Output: sha256:%s\n",
		req.Attempt, firstLine(req.Goal), req.ContractID, req.ContractHash, digest)
	c.progress(ctx, "committing")
	sha, err := localgit.Git(ctx, scratch, "-c", "user.name="+CommitName, "-c", "user.email="+CommitEmail,
		"commit-tree", imp.Tree, "-p", req.ParentSHA, "-m", msg)
	if err != nil {
		return capability.ExecResult{}, fmt.Errorf("commit: %w", err)
	}
	res, err := finish(ctx, scratch, remote, branch, req.ParentSHA, strings.TrimSpace(sha))
	if err != nil {
		return capability.ExecResult{}, err
	}
	res.OutputDigest = digest
	return res, nil
}

// handOver gives the CLI's user its clone, HOME, TMPDIR and bundle folder. The job
// directory itself stays the worker's (traversable, not writable): the pid file the sweep
// trusts, the prompt and the scratch repository live there.
func (c *Command) handOver(job string, dirs ...string) error {
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

// Compile-time check: Command is an capability.Executor.
var _ capability.Executor = (*Command)(nil)
