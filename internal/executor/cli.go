//go:build unix

package executor

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/signoff/signoff/internal/capability"
	"github.com/signoff/signoff/internal/sandbox"
)

// cliRun is what one run of the CLI left: the log text (header, prompt, output, footer).
type cliRun struct {
	log []byte
}

func (c *Command) runCLI(ctx context.Context, req capability.ExecRequest, job, repo, home, tmp, promptFile, prompt string) (cliRun, error) {
	timeout, maxOut, every := c.Timeout, c.MaxOutput, c.ProgressEvery
	if timeout <= 0 {
		timeout = DefaultCommandTimeout
	}
	if maxOut <= 0 {
		maxOut = DefaultMaxOutput
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

	var stdin io.Reader
	if c.Stdin {
		f, err := os.Open(promptFile)
		if err != nil {
			return run("not started"), fmt.Errorf("open prompt: %w", err)
		}
		defer f.Close()
		stdin = f
	}
	ro := append([]string{promptFile}, c.ReadOnly...)
	if filepath.IsAbs(argv[0]) {
		// The CLI itself, when it is not part of the base system the sandbox mounts.
		if real, err := filepath.EvalSymlinks(argv[0]); err == nil && !strings.HasPrefix(real, "/usr/") {
			ro = append(ro, real)
		}
	}
	c.progress(ctx, "running "+filepath.Base(argv[0]))
	proc, err := c.Sandbox.Start(ctx, sandbox.Spec{
		Argv:     argv,
		Dir:      repo,
		Env:      scrubbedEnv(home, tmp, c.PassEnv),
		Writable: append([]string{repo, home, tmp}, c.Writable...),
		ReadOnly: ro,
		Net:      c.Network,
		Limits:   c.Limits,
		UID:      c.RunAs.Uid,
		GID:      c.RunAs.Gid,
		Stdin:    stdin,
		Stdout:   out,
		Stderr:   out,
	})
	if err != nil {
		return run("not started"), fmt.Errorf("start coding CLI %s: %w", filepath.Base(argv[0]), err)
	}
	_ = writeCLIPid(job, proc)
	defer os.Remove(filepath.Join(job, cliPidFile))

	began := time.Now()
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	tick := time.NewTicker(every)
	defer tick.Stop()
	var stopErr error
wait:
	for {
		select {
		case <-proc.Done():
			break wait
		case <-ctx.Done():
			stopErr = fmt.Errorf("coding CLI stopped: %w", ctx.Err())
			proc.Kill()
		case <-timer.C:
			stopErr = fmt.Errorf("coding CLI timed out after %s; its sandbox was ended", timeout)
			proc.Kill()
		case <-tick.C:
			c.progress(ctx, fmt.Sprintf("running %s: %s, %d bytes of output", filepath.Base(argv[0]), time.Since(began).Round(time.Second), out.total.Load()))
		}
	}
	// The sandbox is gone with everything the CLI started in it, however it detached.
	waitErr := proc.Wait()
	code := proc.ExitCode()
	footer := fmt.Sprintf("exit status %d after %s, %d bytes of output", code, time.Since(began).Round(time.Millisecond), out.total.Load())
	if stopErr != nil {
		return run(footer + ", " + stopErr.Error()), stopErr
	}
	if errors.Is(waitErr, sandbox.ErrDiskLimit) {
		return run(footer + ", " + waitErr.Error()), fmt.Errorf("coding CLI %s stopped: %w", filepath.Base(argv[0]), waitErr)
	}
	if waitErr != nil {
		return run(footer), fmt.Errorf("coding CLI %s failed with exit status %d", filepath.Base(argv[0]), code)
	}
	return run(footer), nil
}

// packScript runs inside a sandbox of its own after the CLI's is gone: it stages the work
// tree on the parent, writes a commit and bundles it. Its output is only data for the
// worker to check; whatever the clone's configuration makes git do here stays inside.
const packScript = `set -eu
parent=$1 bundle=$2
git() { command git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c safe.directory='*' -c commit.gpgSign=false "$@"; }
git read-tree "$parent"
git add --all
tree=$(git write-tree)
commit=$(git -c user.name=Signoff -c user.email=executor@signoff.local commit-tree "$tree" -p "$parent" -m "signoff attempt")
git update-ref ` + attemptRef + ` "$commit"
git bundle create --quiet "$bundle" ` + attemptRef + ` "^$parent"
`

// DefaultPackTimeout bounds the packaging step.
const DefaultPackTimeout = 5 * time.Minute

// pack runs packScript in a fresh sandbox with no network.
func (c *Command) pack(ctx context.Context, job, repo, home, tmp, out, bundle, parent string) error {
	ctx, cancel := context.WithTimeout(ctx, DefaultPackTimeout)
	defer cancel()
	var log cappedBuffer
	log.max = 1 << 16
	proc, err := c.Sandbox.Start(ctx, sandbox.Spec{
		Argv:     []string{"/bin/sh", "-c", packScript, "sh", parent, bundle},
		Dir:      repo,
		Env:      []string{"PATH=/usr/bin:/bin", "HOME=" + home, "TMPDIR=" + tmp, "LC_ALL=C", "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0"},
		Writable: []string{repo, home, tmp, out},
		Net:      sandbox.NetNone,
		Limits:   c.Limits,
		UID:      c.RunAs.Uid,
		GID:      c.RunAs.Gid,
		Stdout:   &log,
		Stderr:   &log,
	})
	if err != nil {
		return fmt.Errorf("start the packaging step: %w", err)
	}
	_ = writeCLIPid(job, proc)
	defer os.Remove(filepath.Join(job, cliPidFile))
	select {
	case <-proc.Done():
	case <-ctx.Done():
		proc.Kill()
	}
	if err := proc.Wait(); err != nil || ctx.Err() != nil {
		return fmt.Errorf("exit status %d: %s", proc.ExitCode(), strings.TrimSpace(log.buf.String()))
	}
	return nil
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
