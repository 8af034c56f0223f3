package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"syscall"
	"time"
)

// offDescription is what an unsandboxed Runner says of itself, in every build record.
const offDescription = "NOT SANDBOXED (the operator passed --unsandboxed): repository code runs on the host " +
	"as its unprivileged uid, in its own process group, sharing the host's network, files and processes"

// startOff runs s without namespaces: the operator's explicit choice where none can be made.
// Only the uid drop, the environment and the process group remain; a process that leaves
// the group can outlive the command.
func (p *Process) startOff(ctx context.Context, s Spec) error {
	cmd := exec.Command(s.Argv[0], s.Argv[1:]...)
	cmd.Env, cmd.Dir = s.Env, s.Dir
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.Stdin, s.Stdout, s.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: credential(s.UID, s.GID), Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("sandbox: starting %s unsandboxed: %w", s.Argv[0], err)
	}
	p.cmd, p.off = cmd, true
	ended := p.guard(ctx, s.Limits, s.Writable)
	go func() {
		err := cmd.Wait()
		p.exitCode = cmd.ProcessState.ExitCode()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what stayed in the group
		p.err = ended(s.Argv[0], err)
		close(p.done)
	}()
	return nil
}

// killOff ends the command's process group.
func (p *Process) killOff() { _ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL) }

// offForward needs no relay: an unsandboxed app listens on the host's own loopback.
func offForward(port int) (string, func(), error) {
	if port <= 0 || port > 65535 {
		return "", nil, fmt.Errorf("sandbox: forward: bad port %d", port)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), func() {}, nil
}

var errOffDial = errors.New("sandbox: unsandboxed commands share the host's network; dial it directly")
