package localstripe

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// StripeMockVersion is the stripe-mock release `go tool task stripe:setup` installs.
const StripeMockVersion = "v0.203.0"

// SetupHint tells a person how to install stripe-mock; used in every "not found" error.
const SetupHint = "run `go tool task stripe:setup` from the repository root (installs stripe-mock " +
	StripeMockVersion + " into .bin/)"

// StripeMock is a stripe-mock child process listening on loopback only. The double forwards
// every API request to it first, so request shapes are checked against Stripe's own OpenAPI
// spec before any state changes.
type StripeMock struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{}
	err  error // exit status, valid once done is closed
}

// FindStripeMock locates the stripe-mock binary: path when set (settings' SIGNOFF_STRIPE_MOCK), then .bin/stripe-mock
// beside the running executable (signoff is built into .bin/), then .bin/stripe-mock in the
// nearest parent directory holding go.mod, then $PATH.
func FindStripeMock(path string) (string, error) {
	if p := path; p != "" {
		if isExecutable(p) {
			return p, nil
		}
		return "", fmt.Errorf("SIGNOFF_STRIPE_MOCK=%q is not an executable file; unset it or %s", p, SetupHint)
	}
	if exe, err := os.Executable(); err == nil {
		if p := filepath.Join(filepath.Dir(exe), "stripe-mock"); isExecutable(p) {
			return p, nil
		}
	}
	if wd, err := os.Getwd(); err == nil {
		for dir := wd; ; dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				if p := filepath.Join(dir, ".bin", "stripe-mock"); isExecutable(p) {
					return p, nil
				}
				break
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	if p, err := exec.LookPath("stripe-mock"); err == nil {
		return p, nil
	}
	return "", fmt.Errorf("stripe-mock not found: %s", SetupHint)
}

func isExecutable(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// StartStripeMock starts stripe-mock at path with both its HTTP and HTTPS listeners on
// 127.0.0.1 and system-chosen ports (given only -http-addr it would open HTTPS on every
// interface), and waits until it reports its HTTP address.
func StartStripeMock(ctx context.Context, path string, logger *slog.Logger) (*StripeMock, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	cmd := exec.Command(path, "-http-addr", "127.0.0.1:", "-https-addr", "127.0.0.1:")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")} // it needs no secrets
	setChildAttrs(cmd)
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("stripe-mock pipe: %w", err)
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		pr.Close()
		pw.Close()
		return nil, fmt.Errorf("start stripe-mock %s: %w (%s)", path, err, SetupHint)
	}
	pw.Close() // the child holds its own copy

	m := &StripeMock{cmd: cmd, done: make(chan struct{})}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			line := sc.Text()
			if a, ok := strings.CutPrefix(line, "Listening for HTTP at address: "); ok {
				select {
				case addr <- strings.TrimSpace(a):
				default:
				}
			}
			logger.Debug(logPrefix+"stripe-mock output", "line", line)
		}
		_, _ = io.Copy(io.Discard, pr)
		pr.Close()
	}()
	go func() {
		m.err = cmd.Wait()
		close(m.done)
	}()

	timer := time.NewTimer(30 * time.Second)
	defer timer.Stop()
	select {
	case a := <-addr:
		if !strings.HasPrefix(a, "127.0.0.1:") {
			_ = m.Stop()
			return nil, fmt.Errorf("stripe-mock listens on %q, expected loopback 127.0.0.1", a)
		}
		m.url = "http://" + a
		logger.Info(logPrefix+"stripe-mock started", "pid", cmd.Process.Pid, "url", m.url)
		return m, nil
	case <-m.done:
		return nil, fmt.Errorf("stripe-mock exited before listening: %v", m.err)
	case <-timer.C:
		_ = m.Stop()
		return nil, errors.New("stripe-mock did not report a listening address within 30s")
	case <-ctx.Done():
		_ = m.Stop()
		return nil, fmt.Errorf("start stripe-mock: %w", ctx.Err())
	}
}

// URL is the mock's loopback HTTP base URL.
func (m *StripeMock) URL() string { return m.url }

// PID is the child's process id.
func (m *StripeMock) PID() int { return m.cmd.Process.Pid }

// Stop ends the child by its PID (SIGTERM, then SIGKILL after 5 s) and waits for it.
func (m *StripeMock) Stop() error {
	select {
	case <-m.done:
		return nil
	default:
	}
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("stop stripe-mock pid %d: %w", m.cmd.Process.Pid, err)
	}
	select {
	case <-m.done:
		return nil
	case <-time.After(5 * time.Second):
	}
	if err := m.cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("kill stripe-mock pid %d: %w", m.cmd.Process.Pid, err)
	}
	<-m.done
	return nil
}
