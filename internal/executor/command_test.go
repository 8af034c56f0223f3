//go:build unix

package executor_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/signoff/signoff/contracts"
	"github.com/signoff/signoff/fixtures/fixturerepo"
	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/executor"
	"github.com/signoff/signoff/internal/hostiletest"
	"github.com/signoff/signoff/internal/localgit"
	"github.com/signoff/signoff/internal/sandbox/sandboxtest"
	"github.com/signoff/signoff/internal/unprivileged"
)

// cmdEnv is one test's world: a bare remote holding the small test app, a command executor
// and a directory the scripts write what they saw into.
type cmdEnv struct {
	exec   *executor.Command
	remote string
	repo   contracts.Repo
	dump   string
}

func script(name string) string {
	p, err := filepath.Abs(filepath.Join("testdata", "cli", name))
	if err != nil {
		panic(err)
	}
	return p
}

func newCmdEnv(t testing.TB, argv ...string) *cmdEnv {
	t.Helper()
	cred := requireRunAs(t)
	dir := t.TempDir()
	base, err := fixturerepo.Materialize(filepath.Join("testdata", "app"), filepath.Join(dir, "src"))
	if err != nil {
		t.Fatal(err)
	}
	remotes := localgit.Remotes{Root: filepath.Join(dir, "remotes")}
	remote, err := remotes.Ensure(context.Background(), "acme", "web", filepath.Join(dir, "src"))
	if err != nil {
		t.Fatal(err)
	}
	// The CLI's user reaches the jobs folder and the dump; the remote, the logs and any key
	// stay in the test's private folder.
	shared, dump := hostiletest.Reachable(t, "executor-test-")
	for i, a := range argv {
		argv[i] = strings.ReplaceAll(a, "{dump}", dump)
	}
	return &cmdEnv{
		exec: &executor.Command{Argv: argv, JobsDir: filepath.Join(shared, "jobs"), LogDir: filepath.Join(dir, "logs"),
			Remotes: remotes, Allow: executor.Allowlist{"acme/*"}, Timeout: 20 * time.Second, KillGrace: time.Second,
			Sandbox: sandboxtest.Runner(t), RunAs: cred, Writable: []string{dump}, ReadOnly: []string{script("")}},
		remote: remote,
		repo:   contracts.Repo{Owner: "acme", Name: "web", BaseCommitSHA: base},
		dump:   dump,
	}
}

func (e *cmdEnv) request(attempt int) capability.ExecRequest {
	return capability.ExecRequest{
		ContractID: "c-watchlist", ContractHash: strings.Repeat("ab", 32), Attempt: attempt,
		Goal: "Show the watchlist as cards on mobile", Repo: e.repo, ParentSHA: e.repo.BaseCommitSHA,
		Criteria: []contracts.Criterion{{ID: "cards-visible", Description: "Watchlist cards are visible", Route: "/",
			Viewport: &contracts.Viewport{Width: 390, Height: 844},
			Assert:   contracts.Assertion{Kind: contracts.KindElementPresent, Selector: `[data-testid="watchlist-card"]`, State: contracts.StateVisible}}},
		TestHooks: []contracts.TestHook{{Selector: `data-testid="watchlist-card"`, Description: "one card per watched symbol"}},
	}
}

func (e *cmdEnv) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(e.dump, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func refused(err error) bool {
	return errors.Is(err, capability.ErrRefused)
}

func branchHead(t *testing.T, remote string) (string, bool) {
	t.Helper()
	sha, err := localgit.Head(context.Background(), remote, "signoff/c-watchlist")
	return sha, err == nil
}

func TestCommandEnvironmentHoldsNoSecrets(t *testing.T) {
	secrets := map[string]string{
		"STRIPE_SECRET_KEY": "sk_test_must_not_leak", "STRIPE_WEBHOOK_SECRET": "whsec_must_not_leak",
		"GITHUB_TOKEN": "ghp_must_not_leak", "GH_TOKEN": "gho_must_not_leak",
		"TEMPORAL_API_KEY": "temporal_must_not_leak", "SIGNOFF_AGENT_SEED": "seed_must_not_leak",
		"SIGNOFF_VERIFIER_KEY_FILE": "/keys/verifier.key", "SENTRY_AUTH_TOKEN": "sntrys_must_not_leak",
		"UNLISTED_WORKER_VARIABLE": "not_passed_through",
	}
	for k, v := range secrets {
		t.Setenv(k, v)
	}
	t.Setenv("OPENAI_API_KEY", "the_cli_may_have_its_own_key")
	e := newCmdEnv(t, "/bin/sh", script("dumpenv.sh"), "{dump}", "{prompt_file}")
	e.exec.PassEnv = []string{"OPENAI_API_KEY"}
	res, err := e.exec.Run(context.Background(), e.request(1))
	if err != nil {
		t.Fatal(err)
	}
	env := e.read(t, "env.txt")
	for k, v := range secrets {
		if strings.Contains(env, k+"=") || strings.Contains(env, v) {
			t.Errorf("the CLI saw %s", k)
		}
	}
	if !strings.Contains(env, "OPENAI_API_KEY=the_cli_may_have_its_own_key") {
		t.Errorf("the configured pass-through variable is missing:\n%s", env)
	}
	home := ""
	for _, line := range strings.Split(env, "\n") {
		if v, ok := strings.CutPrefix(line, "HOME="); ok {
			home = v
		}
	}
	if home == "" || home == os.Getenv("HOME") || !strings.HasPrefix(home, e.exec.JobsDir) {
		t.Errorf("HOME %q is not job-local", home)
	}
	if pwd := strings.TrimSpace(e.read(t, "pwd.txt")); !strings.HasPrefix(pwd, e.exec.JobsDir) {
		t.Errorf("the CLI ran in %s, not in the job directory", pwd)
	}
	// It changed nothing: an empty attempt that still keeps its output.
	if !res.Empty || res.CommitSHA != e.repo.BaseCommitSHA || res.Branch != "signoff/c-watchlist" {
		t.Fatalf("%+v", res)
	}
	if _, ok := branchHead(t, e.remote); ok {
		t.Error("an empty attempt pushed a branch")
	}
	checkLog(t, e.exec, res.OutputDigest, "looked around, changed nothing")
}

func checkLog(t *testing.T, c *executor.Command, digest, want string) string {
	t.Helper()
	p, err := c.LogPath(digest)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("output log: %v", err)
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != digest {
		t.Fatal("the output log does not match its digest")
	}
	if !strings.Contains(string(data), want) {
		t.Fatalf("output log lacks %q:\n%s", want, data)
	}
	return string(data)
}

func TestCommandRefusesSecretPassThrough(t *testing.T) {
	for _, name := range []string{"STRIPE_SECRET_KEY", "GITHUB_TOKEN", "TEMPORAL_API_KEY", "SIGNOFF_AGENT_SEED", "MY_SIGNING_KEY", "bad-name"} {
		e := newCmdEnv(t, "/bin/sh", script("dumpenv.sh"), "{dump}", "{prompt_file}")
		e.exec.PassEnv = []string{name}
		if _, err := e.exec.Run(context.Background(), e.request(1)); err == nil || !strings.Contains(err.Error(), "pass-through variable") {
			t.Errorf("%s: %v", name, err)
		}
		if _, err := os.Stat(filepath.Join(e.dump, "env.txt")); err == nil {
			t.Errorf("%s: the CLI ran", name)
		}
	}
}

func TestCommandCommitsAndPushesTheChange(t *testing.T) {
	e := newCmdEnv(t, "/bin/sh", script("edit.sh"), "{prompt_file}")
	var mu sync.Mutex
	var details []string
	e.exec.Progress = func(_ context.Context, d string) { mu.Lock(); details = append(details, d); mu.Unlock() }
	res, err := e.exec.Run(context.Background(), e.request(1))
	if err != nil {
		t.Fatal(err)
	}
	if res.Empty || res.FilesChanged != 2 || res.Insertions < 2 {
		t.Fatalf("%+v", res)
	}
	head, ok := branchHead(t, e.remote)
	if !ok || head != res.CommitSHA {
		t.Fatalf("remote branch at %q, want %s", head, res.CommitSHA)
	}
	show, err := localgit.Git(context.Background(), e.remote, "show", "-s", "--format=%an <%ae>|%cn|%P|%B", res.CommitSHA)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(show, "Signoff <executor@signoff.local>|Signoff|"+e.repo.BaseCommitSHA+"|Signoff attempt 1:") ||
		!strings.Contains(show, "Signoff-Executor-Output: sha256:"+res.OutputDigest) {
		t.Fatalf("commit:\n%s", show)
	}
	if files, _ := localgit.Git(context.Background(), e.remote, "show", res.CommitSHA+":src/card.txt"); files != "card\n" {
		t.Fatalf("src/card.txt = %q", files)
	}
	checkLog(t, e.exec, res.OutputDigest, "edited index.html, added src/card.txt")
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(strings.Join(details, "|"), "running sh") {
		t.Errorf("progress: %v", details)
	}
	if entries, _ := os.ReadDir(e.exec.JobsDir); len(entries) != 0 {
		t.Errorf("job directory left behind: %v", entries)
	}
}

func TestCommandFoldsTheCLIsOwnCommits(t *testing.T) {
	e := newCmdEnv(t, "/bin/sh", script("selfcommit.sh"), "{prompt_file}")
	res, err := e.exec.Run(context.Background(), e.request(1))
	if err != nil {
		t.Fatal(err)
	}
	show, err := localgit.Git(context.Background(), e.remote, "log", "--format=%an|%P", e.repo.BaseCommitSHA+".."+res.CommitSHA)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(show) != "Signoff|"+e.repo.BaseCommitSHA {
		t.Fatalf("history since base:\n%s", show)
	}
	if res.FilesChanged != 2 {
		t.Fatalf("%+v", res)
	}
}

func TestCommandPromptCarriesFeedbackOnRepair(t *testing.T) {
	e := newCmdEnv(t, "/bin/sh", script("dumpenv.sh"), "{dump}", "{prompt_file}")
	req := e.request(2)
	req.Feedback = []contracts.Reason{{Rule: 3, Code: "criterion_failed", Criterion: "no-overflow", Check: "scrollWidth",
		Observed: 927, Expected: 390, Message: "criterion no-overflow: scrollWidth = 927, innerWidth = 390"}}
	if _, err := e.exec.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	prompt := e.read(t, "prompt.md")
	for _, want := range []string{"Show the watchlist as cards on mobile", "cards-visible", `data-testid="watchlist-card"`,
		"one card per watched symbol", "not satisfied", "criterion `no-overflow` (scrollWidth)", "scrollWidth = 927, innerWidth = 390",
		"[observed 927, expected 390]", "attempt 2"} {
		if !strings.Contains(prompt, want) {
			t.Errorf("prompt lacks %q:\n%s", want, prompt)
		}
	}
	// Attempt 1 has no feedback section.
	e2 := newCmdEnv(t, "/bin/sh", script("dumpenv.sh"), "{dump}", "{prompt_file}")
	if _, err := e2.exec.Run(context.Background(), e2.request(1)); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(e2.read(t, "prompt.md"), "not satisfied") {
		t.Error("a first attempt's prompt speaks of a failed attempt")
	}
}

func TestCommandPromptOnStdin(t *testing.T) {
	e := newCmdEnv(t, "/bin/sh", script("stdin.sh"), "{dump}")
	e.exec.Stdin = true
	req := e.request(1)
	if _, err := e.exec.Run(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got, want := e.read(t, "stdin.txt"), executor.BuildPrompt(req, "signoff/c-watchlist"); got != want {
		t.Fatalf("stdin:\n%s\nwant:\n%s", got, want)
	}
	// Without stdin or a prompt placeholder the CLI would never hear the task.
	e.exec.Stdin = false
	if _, err := e.exec.Run(context.Background(), req); err == nil || !strings.Contains(err.Error(), "never receives the prompt") {
		t.Fatal(err)
	}
}

func TestCommandTimeoutEndsEverythingTheCLIStarted(t *testing.T) {
	e := newCmdEnv(t, "/bin/sh", script("sleep.sh"), "{dump}", "{prompt_file}")
	e.exec.Timeout = 1500 * time.Millisecond
	_, err := e.exec.Run(context.Background(), e.request(1))
	if err == nil || !strings.Contains(err.Error(), "timed out") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(e.dump, "started")); err != nil {
		t.Fatal("the CLI never started its children")
	}
	if left := hostiletest.Running(e.dump); len(left) > 0 {
		t.Errorf("still running after the timeout: %v", left)
	}
	if _, ok := branchHead(t, e.remote); ok {
		t.Error("a timed-out attempt pushed a branch")
	}
}

func TestCommandCancelEndsEverythingTheCLIStarted(t *testing.T) {
	e := newCmdEnv(t, "/bin/sh", script("sleep.sh"), "{dump}", "{prompt_file}")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := e.exec.Run(ctx, e.request(1)); done <- err }()
	waitFor(t, filepath.Join(e.dump, "started"))
	cancel()
	if err := <-done; err == nil || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if left := hostiletest.Running(e.dump); len(left) > 0 {
		t.Errorf("survived the cancel: %v", left)
	}
}

// waitFor waits for a file a sandboxed script writes; the deadline only catches a hang.
func waitFor(t *testing.T, path string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never appeared", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestCommandNonZeroExitIsAnError(t *testing.T) {
	e := newCmdEnv(t, "/bin/sh", script("fail.sh"), "{prompt_file}")
	_, err := e.exec.Run(context.Background(), e.request(1))
	if err == nil || !strings.Contains(err.Error(), "exit status 3") || refused(err) {
		t.Fatalf("err = %v", err)
	}
	if _, ok := branchHead(t, e.remote); ok {
		t.Error("a failed CLI's work was pushed")
	}
	// The output is kept as evidence even so.
	digest := err.Error()[strings.LastIndex(err.Error(), "sha256 ")+len("sha256 "):]
	checkLog(t, e.exec, strings.TrimSuffix(digest, ")"), "model quota exceeded")
}

func TestCommandRefusesRepoOutsideAllowlistBeforeCloning(t *testing.T) {
	e := newCmdEnv(t, "/bin/sh", script("dumpenv.sh"), "{dump}", "{prompt_file}")
	req := e.request(1)
	req.Repo.Owner = "someone-else"
	_, err := e.exec.Run(context.Background(), req)
	if !refused(err) {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(e.exec.JobsDir); !errors.Is(err, os.ErrNotExist) {
		t.Error("a job directory was made for a refused repository")
	}
	if _, err := os.Stat(filepath.Join(e.dump, "env.txt")); err == nil {
		t.Error("the CLI ran for a refused repository")
	}
	for _, bad := range []func(*capability.ExecRequest){
		func(r *capability.ExecRequest) { r.ContractID = "../escape" },
		func(r *capability.ExecRequest) { r.ParentSHA = "--upload-pack=evil" },
	} {
		r := e.request(1)
		bad(&r)
		if _, err := e.exec.Run(context.Background(), r); !refused(err) {
			t.Errorf("err = %v", err)
		}
	}
}

func TestCommandRefusesASymlinkOutOfTheClone(t *testing.T) {
	e := newCmdEnv(t, "/bin/sh", script("symlink.sh"), "{prompt_file}")
	_, err := e.exec.Run(context.Background(), e.request(1))
	if !refused(err) || !strings.Contains(err.Error(), "leak: a symlink to /etc/passwd, outside the repository") {
		t.Fatalf("err = %v", err)
	}
	if _, ok := branchHead(t, e.remote); ok {
		t.Error("a refused change was pushed")
	}
}

// The CLI rewires its clone's git configuration, hooks and fsmonitor. Git reads them only
// inside the packaging sandbox, where the dump is not mounted: nothing runs outside, and the
// work tree the CLI left is still what is committed.
func TestCommandRunsNothingFromTheClonesGitConfig(t *testing.T) {
	e := newCmdEnv(t, "/bin/sh", script("gitconfig.sh"), "{dump}", "{prompt_file}")
	res, err := e.exec.Run(context.Background(), e.request(1))
	if err != nil {
		t.Fatal(err)
	}
	if pwned, _ := filepath.Glob(filepath.Join(e.dump, "pwned-*")); len(pwned) > 0 {
		t.Errorf("git ran the CLI's programs outside its sandbox: %v", pwned)
	}
	if got, _ := localgit.Git(context.Background(), e.remote, "show", res.CommitSHA+":fine.txt"); got != "ok\n" {
		t.Fatalf("pushed fine.txt = %q (%+v)", got, res)
	}
	if _, err := localgit.Git(context.Background(), e.remote, "cat-file", "-e", res.CommitSHA+":.git/config"); err == nil {
		t.Error("the clone's git directory reached the commit")
	}
}

func TestCommandCapsOutput(t *testing.T) {
	e := newCmdEnv(t, "/bin/sh", script("noisy.sh"), "{prompt_file}")
	e.exec.MaxOutput = 1000
	res, err := e.exec.Run(context.Background(), e.request(1))
	if err != nil {
		t.Fatal(err)
	}
	log := checkLog(t, e.exec, res.OutputDigest, "[signoff: output truncated, 1000 of")
	if strings.Contains(log, "line 1999") {
		t.Error("output past the cap was kept")
	}
}

func TestCommandSweepEndsAnOrphanedCLI(t *testing.T) {
	e := newCmdEnv(t, "/bin/sh", script("sleep.sh"), "{dump}", "{prompt_file}")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Stand-in for a crashed worker: the run is abandoned mid-way by a second executor
	// sweeping the same jobs directory as a restarted worker would.
	done := make(chan struct{})
	go func() { defer close(done); _, _ = e.exec.Run(ctx, e.request(1)) }()
	waitFor(t, filepath.Join(e.dump, "started"))
	matches, _ := filepath.Glob(filepath.Join(e.exec.JobsDir, "cmd-*", "cli.pid"))
	if len(matches) != 1 {
		t.Fatalf("pid files: %v", matches)
	}
	job := filepath.Dir(matches[0])
	var rec struct {
		Init      int    `json:"init"`
		InitTicks uint64 `json:"init_start_ticks"`
	}
	if b, err := os.ReadFile(matches[0]); err != nil || json.Unmarshal(b, &rec) != nil || rec.Init <= 1 || rec.InitTicks == 0 {
		t.Errorf("the pid file does not name the sandbox's pid 1: %s (%v)", b, err)
	}
	restarted := *e.exec
	if err := restarted.Sweep(); err != nil {
		t.Fatal(err)
	}
	// Killing the sandbox's bwrap ends its namespace, but the kernel reaps what ran inside
	// after Sweep returns: wait for them to go, the deadline only catching a hang.
	if left := hostiletest.WaitGone(e.dump, 30*time.Second); len(left) > 0 {
		t.Errorf("sweep left running: %v", left)
	}
	<-done
	if _, err := os.Stat(job); !errors.Is(err, os.ErrNotExist) {
		t.Error("sweep left the job directory")
	}
}

// A sandbox's pid 1 that outlived its bwrap (a worker without cgroups killed before pid 1
// bound its life to bwrap's) is killed by the sweep; a recorded pid 1 that is now another
// process is left alone.
func TestCommandSweepKillsAnOrphanedPid1(t *testing.T) {
	jobs := t.TempDir()
	orphan, ticks := hostiletest.OrphanedInit(t)
	gone := exec.Command("true")
	if err := gone.Run(); err != nil {
		t.Fatal(err)
	}
	record := func(name string, init int, ticks uint64) {
		dir := filepath.Join(jobs, name)
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		b := fmt.Sprintf(`{"pid":%d,"start_ticks":1,"init":%d,"init_start_ticks":%d}`, gone.Process.Pid, init, ticks)
		if err := os.WriteFile(filepath.Join(dir, "cli.pid"), []byte(b), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	record("cmd-orphaned", orphan.Process.Pid, ticks)
	record("cmd-reused", os.Getpid(), 1) // this test, by a wrong start time
	if err := (&executor.Command{JobsDir: jobs}).Sweep(); err != nil {
		t.Fatal(err)
	}
	hostiletest.WaitKilled(t, orphan)
	if left, _ := os.ReadDir(jobs); len(left) != 0 {
		t.Errorf("sweep left job directories: %v", left)
	}
}

func TestParseTemplate(t *testing.T) {
	got, err := executor.ParseTemplate(`claude -p "{prompt}" --allowedTools 'Edit Write'`)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"claude", "-p", "{prompt}", "--allowedTools", "Edit Write"}
	if strings.Join(got, "\x00") != strings.Join(want, "\x00") {
		t.Fatalf("%q", got)
	}
	for _, bad := range []string{"", "   ", `codex "exec`} {
		if _, err := executor.ParseTemplate(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// The CLI runs as the unprivileged user in its sandbox: it can read its prompt and write its
// clone, HOME and TMPDIR, but not read a key file or write the bare remote, and its change
// is still committed and pushed by the worker.
func TestCommandRunsTheCLIAsAnotherUser(t *testing.T) {
	e := newCmdEnv(t, "/bin/sh", script("asuser.sh"), "{dump}", "{prompt_file}", "{secret}", "{remote}")
	keys := filepath.Join(t.TempDir(), "keys")
	if err := os.Mkdir(keys, 0o700); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(keys, "agent.seed")
	if err := os.WriteFile(secret, []byte("seed"), 0o600); err != nil {
		t.Fatal(err)
	}
	for i, a := range e.exec.Argv {
		a = strings.ReplaceAll(a, "{secret}", secret)
		e.exec.Argv[i] = strings.ReplaceAll(a, "{remote}", e.remote)
	}
	e.exec.SecretPaths = []string{secret}
	cred := e.exec.RunAs

	res, err := e.exec.Run(context.Background(), e.request(1))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(e.read(t, "uid.txt")); got != strconv.Itoa(int(cred.Uid)) {
		t.Fatalf("the CLI ran as uid %s, want %d", got, cred.Uid)
	}
	for _, leak := range []string{"secret-read.txt", "remote-written.txt"} {
		if _, err := os.Stat(filepath.Join(e.dump, leak)); err == nil {
			t.Errorf("the CLI could %s", e.read(t, leak))
		}
	}
	if e.read(t, "prompt-read.txt") != "ok\n" || e.read(t, "home.txt") != "ok\n" {
		t.Fatal("the CLI could not read its prompt or write its HOME and TMPDIR")
	}
	if res.Empty {
		t.Fatalf("the change was not committed: %+v", res)
	}
	if got, _ := localgit.Git(context.Background(), e.remote, "show", res.CommitSHA+":index.html"); got != "as another user\n" {
		t.Fatalf("pushed index.html = %q", got)
	}
	// The remote's objects were copied into the clone, not hardlinked and handed over.
	err = filepath.WalkDir(filepath.Join(e.remote, "objects"), func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(p, &st); err != nil {
			return err
		}
		if st.Uid == cred.Uid {
			t.Errorf("%s belongs to the CLI's user", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	// A key the CLI's user could read stops the executor before anything runs.
	open := filepath.Join(filepath.Dir(e.dump), "open.key")
	if err := os.WriteFile(open, []byte("k"), 0o644); err != nil {
		t.Fatal(err)
	}
	e.exec.SecretPaths = []string{open}
	if _, err := e.exec.Run(context.Background(), e.request(2)); err == nil || !strings.Contains(err.Error(), "could read "+open) {
		t.Fatalf("a readable key was not refused: %v", err)
	}
}

// requireRunAs returns the preview user's credential, or skips (-short) / fails with the
// setup task that creates it.
func requireRunAs(t testing.TB) *syscall.Credential {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("switching users needs root")
	}
	cred, err := unprivileged.Lookup("signoff-preview")
	if err != nil {
		if testing.Short() {
			t.Skipf("no signoff-preview user: %v", err)
		}
		t.Fatalf("%v: run `go tool task fixture:setup` to create the signoff-preview user", err)
	}
	return cred
}
