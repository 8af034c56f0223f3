// Package signoffproc runs the signoff CLI for the server-backed test packages (e2e and
// e2e/chat): built once per test binary, run as a command to its end, or started as a process
// (`signoff dev`, a worker) that a test may SIGKILL by its PID and start again. It also dials
// the embedded server such a process leaves in its data dir. It is test support, imported only
// by _test.go files.
package signoffproc

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
	"syscall"
	"testing"
	"time"

	"go.temporal.io/sdk/client"

	"github.com/signoff/signoff/internal/datadir"
	"github.com/signoff/signoff/internal/spareport"
	"github.com/signoff/signoff/temporal"
)

// RepoRoot is the module's root, found from this file's place in it.
func RepoRoot() string {
	_, f, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(filepath.Dir(f)))
}

// RequireSetup fails the test, naming the task that makes it, when path is missing.
func RequireSetup(t testing.TB, path, task string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("missing %s: run `%s`", path, task)
	}
}

var (
	binOnce sync.Once
	binPath string
	binErr  error
)

// Binary builds the CLI once per test binary, for the tests that run workers and `signoff dev`
// as separate processes so they can be SIGKILLed.
func Binary(t testing.TB) string {
	t.Helper()
	p, err := BinaryPath()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// BinaryPath builds the CLI once per test binary.
func BinaryPath() (string, error) {
	binOnce.Do(func() {
		dir, err := os.MkdirTemp("", "signoff-bin-")
		if err != nil {
			binErr = err
			return
		}
		binPath = filepath.Join(dir, "signoff")
		cmd := exec.Command("go", "build", "-o", binPath, "./cmd/signoff")
		cmd.Dir = RepoRoot()
		out, err := cmd.CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	return binPath, binErr
}

// RemoveBinary removes the CLI BinaryPath built, if it did (a quarter of a gigabyte per test
// binary otherwise); a package's TestMain calls it after its tests.
func RemoveBinary() {
	if binPath != "" {
		_ = os.RemoveAll(filepath.Dir(binPath))
	}
}

// Proc is a signoff subprocess this test started and may SIGKILL by PID.
type Proc struct {
	t    testing.TB
	args []string
	env  []string
	cmd  *exec.Cmd
	log  *os.File
}

// Start runs `signoff args...` with env added to the test's own, its output kept in a file
// under the test's temp dir; the process is killed at cleanup.
func Start(t testing.TB, env []string, args ...string) *Proc {
	t.Helper()
	p := &Proc{t: t, args: args, env: env}
	p.Start()
	t.Cleanup(func() { p.Kill() })
	return p
}

// Start starts the process again (after Kill), with a new output file.
func (p *Proc) Start() {
	p.t.Helper()
	p.cmd = exec.Command(Binary(p.t), p.args...)
	p.cmd.Dir = RepoRoot()
	p.cmd.Env = append(os.Environ(), p.env...)
	var err error
	p.log, err = os.CreateTemp(p.t.TempDir(), "proc-*.log")
	if err != nil {
		p.t.Fatal(err)
	}
	p.cmd.Stdout, p.cmd.Stderr = p.log, p.log
	if err := p.cmd.Start(); err != nil {
		p.t.Fatal(err)
	}
}

// Kill SIGKILLs the process by its PID and reaps it.
func (p *Proc) Kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = syscall.Kill(p.cmd.Process.Pid, syscall.SIGKILL)
	_ = p.cmd.Wait()
	p.cmd = nil
}

// Output is what the process (since its last Start) has written to stdout and stderr.
func (p *Proc) Output() string {
	if p.log == nil {
		return ""
	}
	b, _ := os.ReadFile(p.log.Name())
	return string(b)
}

// patience stretches every wait on another process's output. Those waits only catch hangs:
// a loaded machine may take several times what a quiet one does.
const patience = 4

// HangLimit is how long a wait that a quiet machine finishes within d may take.
func HangLimit(d time.Duration) time.Duration { return d * patience }

// WaitOutput waits until the process has printed want; it fails after HangLimit(d).
func WaitOutput(t testing.TB, p *Proc, want string, d time.Duration) {
	t.Helper()
	d = HangLimit(d)
	deadline := time.Now().Add(d)
	for time.Now().Before(deadline) {
		if strings.Contains(p.Output(), want) {
			return
		}
		time.Sleep(50 * time.Millisecond) // waiting for another process's output
	}
	t.Fatalf("no %q within %s:\n%s", want, d, p.Output())
}

// FreePort chooses a port for a process the test starts, outside the range outgoing
// connections take theirs from (see internal/spareport).
func FreePort(t testing.TB) string {
	t.Helper()
	p, err := spareport.One()
	if err != nil {
		t.Fatal(err)
	}
	return strconv.Itoa(p)
}

// CLIHang is how long one signoff command may run in a test: a deadline against a hang (a
// watch on a contract that never ends), far beyond what any command takes on a loaded machine.
const CLIHang = 10 * time.Minute

// CLI runs a signoff command to completion and returns its stdout.
func CLI(t testing.TB, args ...string) string {
	t.Helper()
	out, err := CLIRun(args...)
	if err != nil {
		t.Fatalf("%v", err)
	}
	return out
}

// CLIRun runs a signoff command, killed if it hangs past CLIHang.
func CLIRun(args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), CLIHang)
	defer cancel()
	bin, err := BinaryPath()
	if err != nil {
		return "", err
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = RepoRoot()
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("still running after %s: %w", CLIHang, err)
		}
		return out.String(), fmt.Errorf("signoff %s: %w\n%s%s", strings.Join(args, " "), err, out.String(), errb.String())
	}
	return out.String(), nil
}

// DialDev dials the embedded server of the `signoff dev` process on dataDir, with the client
// certificate it left there; the client is closed at cleanup.
func DialDev(t testing.TB, dataDir, addr string) client.Client {
	t.Helper()
	tc, ok, err := temporal.EmbeddedClientTLS(datadir.Paths(dataDir).Temporal, addr)
	if err != nil || !ok {
		t.Fatalf("the client certificate of the server at %s in %s: found %v, %v", addr, dataDir, ok, err)
	}
	c, err := temporal.Dial(context.Background(), temporal.DialConfig{Address: addr, Namespace: temporal.DefaultNamespace, TLS: tc})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c
}
