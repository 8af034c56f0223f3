package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// ErrWallLimit is the cause of a kill by Limits.Wall.
var ErrWallLimit = errors.New("sandbox: wall limit reached")

// setupTimeout bounds the steps before the command runs (bwrap building the mounts,
// slirp4netns attaching); a hang there is a broken machine, not slow code.
const setupTimeout = 30 * time.Second

// Process is one running sandbox.
type Process struct {
	cmd     *exec.Cmd
	childFD int // pidfd of bwrap's child, pid 1 inside: its exit is the namespace's end
	child   int // that child's host pid
	cg      *cgroup
	reap    *reaper // empties cg if this worker dies (reaper.go)
	slirp   *exec.Cmd
	slirpX  *os.File // slirp4netns --exit-fd: closing it stops slirp

	childMu sync.Mutex // guards childFD against reuse of the number after close

	netMu sync.RWMutex
	netns int // fd of the sandbox's network namespace; -1 once closed

	done     chan struct{}
	err      error
	exitCode int
	killOnce sync.Once
	off      bool // started by an unsandboxed Runner
}

// Start builds a sandbox for s and starts s.Argv in it. Memory and pid limits, and
// the network, are in place before the command's first instruction: bwrap's child
// waits on --block-fd until this process has moved it into the cgroup and attached
// slirp4netns. Ending ctx kills the sandbox.
func (r *Runner) Start(ctx context.Context, s Spec) (*Process, error) {
	if err := r.check(&s); err != nil {
		return nil, err
	}
	s.Limits = s.Limits.withDefaults()
	p := &Process{childFD: -1, netns: -1, done: make(chan struct{}), exitCode: -1}
	if r.off {
		if err := p.startOff(ctx, s); err != nil {
			return nil, err
		}
		return p, nil
	}
	if err := p.start(ctx, r, s); err != nil {
		p.teardown()
		return nil, err
	}
	go p.wait(ctx, s.Limits, s.Writable)
	return p, nil
}

func (p *Process) start(ctx context.Context, r *Runner, s Spec) (err error) {
	if r.cg != nil {
		if p.cg, err = r.cg.create(s.Limits); err != nil {
			return err
		}
		if p.reap, err = startReaper(p.cg.dirs); err != nil {
			return err
		}
	}
	// parent/child ends of the four descriptors bwrap reads or writes.
	var ours, theirs [4]*os.File
	defer func() {
		for _, f := range append(ours[:], theirs[:]...) {
			if f != nil {
				f.Close()
			}
		}
	}()
	for i := range ours {
		r, w, err := os.Pipe()
		if err != nil {
			return fmt.Errorf("sandbox: pipe: %w", err)
		}
		if i == fdInfo-3 { // bwrap writes the info fd; we read it
			ours[i], theirs[i] = r, w
		} else {
			ours[i], theirs[i] = w, r
		}
	}
	if err := closeInheritedOnExec(); err != nil {
		return err
	}
	cmd := exec.Command(r.bwrap, append([]string{"--args", strconv.Itoa(fdArgs), "--"}, s.Argv...)...)
	// bwrap itself runs with no environment: a LD_PRELOAD in Spec.Env must reach only
	// the sandboxed command (through --setenv), never the host-side bwrap.
	cmd.Env = []string{}
	cmd.Dir = "/"
	cmd.Stdin, cmd.Stdout, cmd.Stderr = s.Stdin, s.Stdout, s.Stderr
	cmd.ExtraFiles = theirs[:]
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: credential(s.UID, s.GID), Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("sandbox: starting %s: %w", r.bwrap, err)
	}
	p.cmd = cmd
	for i, f := range theirs {
		f.Close()
		theirs[i] = nil
	}
	if p.cg != nil {
		if err := p.cg.add(cmd.Process.Pid); err != nil {
			return err
		}
	}
	args := strings.Join(bwrapArgs(s), "\x00") + "\x00"
	go func(w *os.File) {
		defer w.Close()
		_, _ = w.WriteString(args)
	}(ours[fdArgs-3])
	ours[fdArgs-3] = nil
	if _, err := ours[fdResolv-3].WriteString(resolvConf); err != nil {
		return fmt.Errorf("sandbox: writing resolv.conf to bwrap: %w", err)
	}
	ours[fdResolv-3].Close()
	ours[fdResolv-3] = nil

	deadline := time.Now().Add(setupTimeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	child, err := readChildPid(ours[fdInfo-3], deadline)
	if err != nil {
		return err
	}
	p.child = child
	if p.childFD, err = unix.PidfdOpen(child, 0); err != nil {
		return fmt.Errorf("sandbox: pidfd of bwrap's child %d: %w", child, err)
	}
	if p.cg != nil {
		if err := p.cg.add(child); err != nil {
			return err
		}
	}
	if p.netns, err = unix.Open(fmt.Sprintf("/proc/%d/ns/net", child), unix.O_RDONLY|unix.O_CLOEXEC, 0); err != nil {
		return fmt.Errorf("sandbox: opening the sandbox's network namespace: %w", err)
	}
	// The pid was ours when the pidfd was opened; it still is if it can be signalled.
	if err := unix.PidfdSendSignal(p.childFD, 0, nil, 0); err != nil {
		return fmt.Errorf("sandbox: bwrap's child %d ended during setup: %w", child, err)
	}
	if s.Net == NetEgress {
		if err := p.attachSlirp(r.slirp, s.UID, s.GID, deadline); err != nil {
			return err
		}
		if err := p.denyHost(r.nft); err != nil {
			return err
		}
	}
	if holdRelease != nil {
		holdRelease(child)
	}
	if _, err := ours[fdBlock-3].Write([]byte{1}); err != nil {
		return fmt.Errorf("sandbox: releasing the command: %w", err)
	}
	return nil
}

// holdRelease, when a test sets it, runs just before bwrap's child is released: a test
// stops the child there to hold open the moment when it belongs to no one but its cgroup.
var holdRelease func(child int)

// closeInheritedOnExec marks close-on-exec every descriptor above stderr that the
// worker inherited without it (its own are all close-on-exec: Go opens them so).
// bwrap passes on whatever it is given, and os/exec closes nothing, so otherwise a
// pipe the worker's parent left open would reach repository code.
func closeInheritedOnExec() error {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("sandbox: listing own descriptors: %w", err)
	}
	for _, e := range ents {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil || flags&unix.FD_CLOEXEC != 0 {
			continue // closed since the listing, or already close-on-exec
		}
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err != nil {
			return fmt.Errorf("sandbox: marking inherited fd %d close-on-exec: %w", fd, err)
		}
	}
	return nil
}

// credential drops the worker to the sandbox's uid before bwrap runs, so the user
// namespace maps to that unprivileged host uid, never to root. A root worker also
// clears supplementary groups; any other worker can only be itself.
func credential(uid, gid uint32) *syscall.Credential {
	if os.Geteuid() == 0 {
		return &syscall.Credential{Uid: uid, Gid: gid, Groups: []uint32{}}
	}
	return &syscall.Credential{Uid: uid, Gid: gid, NoSetGroups: true}
}

// readChildPid reads bwrap's --info-fd document; EOF means bwrap failed setup.
func readChildPid(f *os.File, deadline time.Time) (int, error) {
	if err := f.SetReadDeadline(deadline); err != nil {
		return 0, fmt.Errorf("sandbox: info fd: %w", err)
	}
	var info struct {
		ChildPid int `json:"child-pid"`
	}
	if err := json.NewDecoder(f).Decode(&info); err != nil {
		return 0, fmt.Errorf("sandbox: bwrap did not report its sandbox (its stderr says why): %w", err)
	}
	if info.ChildPid <= 0 {
		return 0, fmt.Errorf("sandbox: bwrap reported child pid %d", info.ChildPid)
	}
	return info.ChildPid, nil
}

// wait reaps bwrap, then makes sure the namespace is gone before Done closes.
func (p *Process) wait(ctx context.Context, l Limits, writable []string) {
	ended := p.guard(ctx, l, writable)
	err := p.cmd.Wait()
	p.exitCode = p.cmd.ProcessState.ExitCode()
	terr := p.teardown()
	p.err = errors.Join(ended(p.cmd.Args[0], err), terr)
	close(p.done)
}

// guard kills p when ctx ends, at the wall limit, or when its Writable folders go over the
// disk quota. Once the command has ended, ended stops the guards and says which one killed
// it, if any (else the command's own exit error).
func (p *Process) guard(ctx context.Context, l Limits, writable []string) (ended func(name string, err error) error) {
	stop := context.AfterFunc(ctx, p.Kill)
	var walled atomic.Bool
	var wall *time.Timer
	if l.Wall > 0 {
		wall = time.AfterFunc(l.Wall, func() { walled.Store(true); p.Kill() })
	}
	var overDisk atomic.Pointer[error]
	watching := make(chan struct{})
	if len(writable) > 0 {
		go watchDisk(writable, l, watching, func(err error) {
			overDisk.Store(&err)
			p.Kill()
		})
	}
	return func(name string, err error) error {
		stop()
		if wall != nil {
			wall.Stop()
		}
		close(watching)
		var disk error
		if e := overDisk.Load(); e != nil {
			disk = *e
		}
		return endError(ctx, walled.Load(), disk, name, err)
	}
}

// endError is what Wait reports of a command that ended: killed by its context, by the wall
// limit, by the disk quota, or its own exit error.
func endError(ctx context.Context, walled bool, disk error, name string, err error) error {
	switch {
	case ctx.Err() != nil:
		return fmt.Errorf("sandbox: killed: %w", context.Cause(ctx))
	case walled:
		return ErrWallLimit
	case disk != nil:
		return disk
	case err != nil:
		return fmt.Errorf("sandbox: %s: %w", name, err)
	}
	return nil
}

// teardown ends and waits for bwrap's child (pid 1 inside; the kernel kills every
// other process in the namespace before that pid is released), then removes the
// cgroup, stops slirp4netns and closes the namespace descriptor.
func (p *Process) teardown() error {
	var errs []error
	if p.cmd != nil && p.cmd.ProcessState == nil {
		_ = p.cmd.Process.Kill()
		_ = p.cmd.Wait()
	}
	if p.childFD >= 0 {
		_ = unix.PidfdSendSignal(p.childFD, unix.SIGKILL, nil, 0)
		if err := waitPidfd(p.childFD); err != nil {
			errs = append(errs, err)
		}
		p.childMu.Lock()
		unix.Close(p.childFD)
		p.childFD = -1
		p.childMu.Unlock()
	}
	if p.reap != nil {
		p.reap.stop()
	}
	if p.cg != nil {
		errs = append(errs, p.cg.destroy())
	}
	if p.slirp != nil {
		p.slirpX.Close()
		_ = p.slirp.Process.Kill()
		_ = p.slirp.Wait()
	}
	p.netMu.Lock()
	if p.netns >= 0 {
		unix.Close(p.netns)
		p.netns = -1
	}
	p.netMu.Unlock()
	return errors.Join(errs...)
}

// waitPidfd blocks until the process behind fd has exited.
func waitPidfd(fd int) error {
	fds := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
	for {
		_, err := unix.Poll(fds, -1)
		if err == nil {
			return nil
		}
		if !errors.Is(err, unix.EINTR) {
			return fmt.Errorf("sandbox: waiting for the sandbox's pid 1: %w", err)
		}
	}
}

// Pid is bwrap's host pid, for pid files and sweeps after a worker crash.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// InitPid is the host pid of the sandbox's pid 1 (0 unsandboxed), for pid files: killing it
// ends everything in the sandbox, and a sweep needs it where pid 1 outlived bwrap (a worker
// without cgroups, killed before pid 1 bound its life to bwrap's; see reaper.go).
func (p *Process) InitPid() int { return p.child }

// Wait waits for the command. When it returns, nothing started inside survives,
// however it detached. The error wraps *exec.ExitError for a non-zero exit, the
// context's cause for a kill by ctx, ErrWallLimit, or ErrDiskLimit.
func (p *Process) Wait() error {
	<-p.done
	return p.err
}

// Done is closed once Wait would return.
func (p *Process) Done() <-chan struct{} { return p.done }

// ExitCode is the command's exit status (bwrap passes it on), or -1 while it runs
// or if bwrap was killed.
func (p *Process) ExitCode() int {
	select {
	case <-p.done:
		return p.exitCode
	default:
		return -1
	}
}

// Kill ends everything inside now: SIGKILL to bwrap and to pid 1 inside, whose
// death makes the kernel kill the rest of the namespace. Wait still reports.
func (p *Process) Kill() {
	p.killOnce.Do(func() {
		if p.off {
			p.killOff()
			return
		}
		_ = p.cmd.Process.Kill()
		p.childMu.Lock()
		defer p.childMu.Unlock()
		if p.childFD >= 0 {
			_ = unix.PidfdSendSignal(p.childFD, unix.SIGKILL, nil, 0)
		}
	})
}
