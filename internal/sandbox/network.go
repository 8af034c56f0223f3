package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// attachSlirp gives the (still blocked) child's network namespace a route out through
// slirp4netns. slirp runs as the sandbox's uid too, entering the child's user
// namespace, so a bug in its packet handling yields that uid, never root; and
// --disable-host-loopback keeps 10.0.2.2 from reaching the host's 127.0.0.1.
func (p *Process) attachSlirp(slirp string, uid, gid uint32, deadline time.Time) error {
	if err := p.waitLoopbackUp(deadline); err != nil {
		return err
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("sandbox: pipe: %w", err)
	}
	defer readyR.Close()
	exitR, exitW, err := os.Pipe()
	if err != nil {
		readyW.Close()
		return fmt.Errorf("sandbox: pipe: %w", err)
	}
	// slirp joins the user namespace that owns the network namespace, asked of the
	// namespace itself: /proc/<child>/ns/user would race bwrap's child, which moves
	// into a nested user namespace (--disable-userns) that cannot enter it.
	owner, err := unix.IoctlRetInt(p.netns, unix.NS_GET_USERNS)
	if err != nil {
		readyW.Close()
		exitR.Close()
		exitW.Close()
		return fmt.Errorf("sandbox: owner of the sandbox's network namespace: %w", err)
	}
	userns := os.NewFile(uintptr(owner), "userns")
	defer userns.Close()
	netns, err := unix.FcntlInt(uintptr(p.netns), unix.F_DUPFD_CLOEXEC, 0)
	if err != nil {
		readyW.Close()
		exitR.Close()
		exitW.Close()
		return fmt.Errorf("sandbox: duplicating the network namespace fd: %w", err)
	}
	netnsFile := os.NewFile(uintptr(netns), "netns")
	defer netnsFile.Close()
	cmd := exec.Command(slirp,
		"--configure", "--mtu=65520", "--disable-host-loopback",
		// --enable-sandbox needs root (it setegid(0)s); seccomp works as any uid.
		"--enable-seccomp",
		"--ready-fd=3", "--exit-fd=4",
		"--userns-path=/proc/self/fd/5", "--netns-type=path", "/proc/self/fd/6", "tap0")
	cmd.Env = []string{}
	cmd.Dir = "/"
	var stderr limitedBuffer
	cmd.Stderr = &stderr
	cmd.ExtraFiles = []*os.File{readyW, exitR, userns, netnsFile}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: credential(uid, gid), Pdeathsig: syscall.SIGKILL}
	cmd.WaitDelay = time.Second
	err = cmd.Start()
	readyW.Close()
	exitR.Close()
	if err != nil {
		exitW.Close()
		return fmt.Errorf("sandbox: starting %s: %w", slirp, err)
	}
	p.slirp, p.slirpX = cmd, exitW
	if err := readyR.SetReadDeadline(deadline); err != nil {
		return fmt.Errorf("sandbox: slirp4netns ready fd: %w", err)
	}
	var b [1]byte
	if _, err := io.ReadFull(readyR, b[:]); err != nil {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		return fmt.Errorf("sandbox: slirp4netns did not attach to the sandbox: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return nil
}

// limitedBuffer keeps the first 4 KiB of slirp4netns's diagnostics for an error.
type limitedBuffer struct {
	mu sync.Mutex
	b  []byte
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if room := 4096 - len(l.b); room > 0 {
		l.b = append(l.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (l *limitedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return string(l.b)
}

// DialContext connects from inside the sandbox's network namespace, e.g. ("tcp",
// "127.0.0.1:3000") to reach a server the sandboxed app started. addr must be a
// literal IP and port: a name would be resolved on other threads, in the host's
// namespace.
func (p *Process) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	if p.off {
		return nil, errOffDial
	}
	if _, err := netip.ParseAddrPort(addr); err != nil {
		return nil, fmt.Errorf("sandbox: dial %s: want a literal ip:port: %w", addr, err)
	}
	var c net.Conn
	err := p.inNetns(func() error {
		var d net.Dialer
		var err error
		c, err = d.DialContext(ctx, network, addr)
		return err
	})
	if err != nil {
		if c != nil {
			c.Close()
		}
		return nil, fmt.Errorf("sandbox: dial %s inside the sandbox: %w", addr, err)
	}
	return c, nil
}

// inNetns runs fn on a thread of its own inside the sandbox's network namespace
// (a socket keeps the namespace it was made in). If getting the thread back out
// fails it stays locked, so the runtime discards it rather than reuse a thread
// stuck in the sandbox's namespace.
func (p *Process) inNetns(fn func() error) error {
	// A duplicate of the namespace fd, so that teardown never waits for fn.
	p.netMu.RLock()
	target := -1
	var err error
	if p.netns >= 0 {
		target, err = unix.FcntlInt(uintptr(p.netns), unix.F_DUPFD_CLOEXEC, 0)
	}
	p.netMu.RUnlock()
	if target < 0 {
		return fmt.Errorf("the sandbox has ended (%v)", err)
	}
	defer unix.Close(target)
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("own network namespace: %w", err)
			return
		}
		defer unix.Close(orig)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			runtime.UnlockOSThread()
			done <- fmt.Errorf("entering the sandbox's network namespace: %w", err)
			return
		}
		ferr := fn()
		if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
			done <- errors.Join(ferr, fmt.Errorf("leaving the sandbox's network namespace: %w", err))
			return // still locked: the thread ends with this goroutine
		}
		runtime.UnlockOSThread()
		done <- ferr
	}()
	return <-done
}

// waitLoopbackUp returns once bwrap's child has brought up lo, the last step of
// its network setup. slirp4netns --configure also sets lo up, and doing so first
// makes the kernel add 127.0.0.1 itself, which fails bwrap's own RTM_NEWADDR
// ("loopback: Failed RTM_NEWADDR"): a race the egress test hit. bwrap offers no
// event for it, so this polls, briefly and bounded by the setup deadline.
func (p *Process) waitLoopbackUp(deadline time.Time) error {
	for delay := 100 * time.Microsecond; ; delay = min(2*delay, 20*time.Millisecond) {
		var up bool
		err := p.inNetns(func() error {
			lo, err := net.InterfaceByName("lo")
			if err == nil {
				up = lo.Flags&net.FlagUp != 0
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("sandbox: watching the sandbox's loopback: %w", err)
		}
		if up {
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("sandbox: bwrap did not bring up the sandbox's loopback in time")
		}
		time.Sleep(delay)
	}
}

// Forward listens on host 127.0.0.1 (a fresh port) and relays each connection to
// 127.0.0.1:port inside the sandbox: the only way into it from the host. stop closes
// the listener and every relayed connection; the sandbox ending does too.
func (p *Process) Forward(port int) (hostAddr string, stop func(), err error) {
	if p.off {
		return offForward(port)
	}
	if port <= 0 || port > 65535 {
		return "", nil, fmt.Errorf("sandbox: forward: bad port %d", port)
	}
	target := netip.AddrPortFrom(netip.AddrFrom4([4]byte{127, 0, 0, 1}), uint16(port)).String()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, fmt.Errorf("sandbox: forward: %w", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		select {
		case <-ctx.Done():
		case <-p.done:
			cancel()
		}
		ln.Close()
	}()
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				in, err := p.DialContext(ctx, "tcp", target)
				if err != nil {
					return
				}
				defer in.Close()
				relay(ctx, c, in)
			}()
		}
	}()
	stop = sync.OnceFunc(func() {
		cancel()
		wg.Wait()
	})
	return ln.Addr().String(), stop, nil
}

// relay copies both ways, passing each side's end of stream on as a half close.
func relay(ctx context.Context, a, b net.Conn) {
	unhook := context.AfterFunc(ctx, func() { a.Close(); b.Close() })
	defer unhook()
	var wg sync.WaitGroup
	wg.Add(2)
	copyHalf := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			dst.Close()
		}
	}
	go copyHalf(a, b)
	go copyHalf(b, a)
	wg.Wait()
}
