package sandbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// The environment is exactly Spec.Env (and the PWD bwrap sets); no_new_privs holds; no capabilities; the
// uid is the unprivileged one, on the host too (a created file's owner).
func TestEnvironmentCredentials(t *testing.T) {
	t.Setenv("SIGNOFF_WORKER_SECRET", "must-not-leak")
	uid, gid := sandboxUser(t)
	job := jobDir(t, uid, gid)
	s := probeSpec(t, "env", filepath.Join(job, "owned"))
	s.Writable = []string{job}
	s.Env = append(s.Env, "EMPTY=", "WITH_EQUALS=a=b")
	out, _, err := run(t, s)
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var got []string
	if err := json.Unmarshal([]byte(lines[0]), &got); err != nil {
		t.Fatalf("env line %q: %v", lines[0], err)
	}
	want := append(slices.Clone(s.Env), "PWD="+s.Dir)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("environment inside:\n%q\nwant exactly Spec.Env:\n%q", got, want)
	}
	ids := fmt.Sprintf("%d %d %d %d", uid, uid, uid, uid)
	for _, w := range []string{
		"Uid: " + ids,
		fmt.Sprintf("Gid: %d %d %d %d", gid, gid, gid, gid),
		"NoNewPrivs: 1",
		"CapEff: 0000000000000000", "CapPrm: 0000000000000000",
		"CapBnd: 0000000000000000", "CapAmb: 0000000000000000",
	} {
		if !slices.Contains(lines, w) {
			t.Errorf("status lacks %q:\n%s", w, out)
		}
	}
	st, err := os.Stat(filepath.Join(job, "owned"))
	if err != nil {
		t.Fatal(err)
	}
	sys := st.Sys().(*syscall.Stat_t)
	if sys.Uid != uid || sys.Gid != gid {
		t.Errorf("file made inside is owned by %d:%d on the host, want %d:%d", sys.Uid, sys.Gid, uid, gid)
	}
}

// A daemon that detaches (setsid, double fork, ignoring SIGHUP and SIGTERM) is gone
// when Wait returns, whether the command exits, is killed, or its context ends.
func TestDetachedDaemonDiesWithSandbox(t *testing.T) {
	for _, how := range []string{"exit", "kill", "cancel"} {
		t.Run(how, func(t *testing.T) {
			ctx, cancel := context.WithCancel(testCtx(t))
			defer cancel()
			s := probeSpec(t, "daemon")
			tok := envValue(s.Env, "SANDBOX_TOKEN")
			l := startLive(t, ctx, s)
			l.expect(t, "ready ")
			// Control: while it runs, the scan does find the daemon and its parent.
			if before := hostPidsWith(t, tok); len(before) < 2 {
				t.Fatalf("scan found %v before the end; it cannot see the daemon", before)
			}
			switch how {
			case "exit":
				l.stdin.Close()
			case "kill":
				l.p.Kill()
			case "cancel":
				cancel()
			}
			err := l.p.Wait()
			t.Logf("Wait: %v (exit %d)", err, l.p.ExitCode())
			if how == "exit" && err != nil {
				t.Errorf("Wait after a clean exit: %v", err)
			}
			if how != "exit" && err == nil {
				t.Errorf("Wait after %s returned nil", how)
			}
			if left := hostPidsWith(t, tok); len(left) > 0 {
				t.Fatalf("after Wait, processes %v from the sandbox are alive", left)
			}
		})
	}
}

// The host's 127.0.0.1 listeners (Temporal, the Web UI, other previews) are out of
// reach in both modes, and so are 10.0.2.2, slirp's alias for the host, the host's own
// external address (a service bound to 0.0.0.0) and private addresses (a VPC, metadata) in
// NetEgress. Egress still routes off the box: a listener on a test host's public-range
// address, in a network namespace this test makes, answers; one on the same host's private
// address does not.
func TestHostLoopbackUnreachable(t *testing.T) {
	ln, accepted := hostListener(t, "127.0.0.1:0")
	p := port(ln)
	targets := []string{"127.0.0.1:" + p, "10.0.2.2:" + p}
	var extAccepted *int64
	if ext := hostIPv4(); ext != "" {
		l, n := hostListener(t, ext+":0")
		targets = append(targets, ext+":"+port(l))
		extAccepted = n
	}
	remote, private := testHost(t)
	targets = append(targets, private)
	for _, mode := range []Network{NetNone, NetEgress} {
		t.Run(mode.String(), func(t *testing.T) {
			s := probeSpec(t, "dial", append(targets, remote)...)
			s.Net = mode
			out, _, err := run(t, s)
			if err != nil {
				t.Fatalf("probe: %v\n%s", err, out)
			}
			t.Logf("probe:\n%s", out)
			for _, a := range targets {
				if l := lineFor(t, out, a); !strings.Contains(l, " fail: ") {
					t.Errorf("reached the host: %s", l)
				}
			}
			// Control: egress routes off the box, so the probe can succeed.
			l := lineFor(t, out, remote)
			if mode == NetEgress && !strings.HasSuffix(l, " ok") {
				t.Errorf("egress cannot reach the test host %s: %s", remote, l)
			}
			if mode == NetNone && strings.HasSuffix(l, " ok") {
				t.Errorf("NetNone reached %s", remote)
			}
		})
	}
	if *accepted != 0 {
		t.Errorf("the host loopback listener accepted %d connections", *accepted)
	}
	if extAccepted != nil && *extAccepted != 0 {
		t.Errorf("the host's external listener accepted %d connections", *extAccepted)
	}
}

// testHost makes a network namespace joined to this host by a veth pair, with two addresses
// on each side: 198.18.0.0/30 (the benchmarking range, routed like a public one) and
// 10.218.0.0/30 (RFC 1918, as a VPC's). It returns the address of a listener on each.
func testHost(t *testing.T) (public, private string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("making a test host needs root")
	}
	name := fmt.Sprintf("sbx-%d", os.Getpid())
	ipCmd := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(args, " "), err, out)
		}
	}
	ipCmd("netns", "add", name)
	t.Cleanup(func() { _ = exec.Command("ip", "netns", "delete", name).Run() })
	host, peer := name+"h", name+"n"
	ipCmd("link", "add", host, "type", "veth", "peer", "name", peer, "netns", name)
	t.Cleanup(func() { _ = exec.Command("ip", "link", "delete", host).Run() })
	ipCmd("addr", "add", "198.18.0.1/30", "dev", host)
	ipCmd("addr", "add", "10.218.0.1/30", "dev", host)
	ipCmd("link", "set", host, "up")
	ipCmd("-n", name, "addr", "add", "198.18.0.2/30", "dev", peer)
	ipCmd("-n", name, "addr", "add", "10.218.0.2/30", "dev", peer)
	ipCmd("-n", name, "link", "set", peer, "up")
	ipCmd("-n", name, "link", "set", "lo", "up")

	f, err := os.Open("/var/run/netns/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lnCh := make(chan []net.Listener, 1)
	errCh := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked if restoring fails: the thread is discarded
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errCh <- err
			return
		}
		defer unix.Close(orig)
		if err := unix.Setns(int(f.Fd()), unix.CLONE_NEWNET); err != nil {
			errCh <- err
			return
		}
		var lns []net.Listener
		var lerr error
		for _, addr := range []string{"198.18.0.2:0", "10.218.0.2:0"} {
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				lerr = err
				break
			}
			lns = append(lns, ln)
		}
		if err := unix.Setns(orig, unix.CLONE_NEWNET); err != nil {
			errCh <- err
			return
		}
		runtime.UnlockOSThread()
		if lerr != nil {
			for _, ln := range lns {
				ln.Close()
			}
			errCh <- lerr
			return
		}
		lnCh <- lns
	}()
	select {
	case err := <-errCh:
		t.Fatalf("listener in the test host: %v", err)
	case lns := <-lnCh:
		for _, ln := range lns {
			t.Cleanup(func() { ln.Close() })
			go func() {
				for {
					c, err := ln.Accept()
					if err != nil {
						return
					}
					c.Close()
				}
			}()
		}
		return lns[0].Addr().String(), lns[1].Addr().String()
	}
	return "", ""
}

// Files outside the binds do not exist inside; nothing outside Writable (and /tmp,
// which is private) can be written; ReadOnly binds stay read-only; a root-owned file
// in the Writable dir (a hardlinked shared node_modules) stays unwritable.
func TestFilesystemConfined(t *testing.T) {
	uid, gid := sandboxUser(t)
	secretDir, err := os.MkdirTemp("", "sandbox-secret-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(secretDir)
	os.Chmod(secretDir, 0o755)
	secret := filepath.Join(secretDir, "secret")
	if err := os.WriteFile(secret, []byte("s3cret"), 0o644); err != nil {
		t.Fatal(err)
	}
	ro := jobDir(t, uid, gid)
	roFile := filepath.Join(ro, "tool")
	os.WriteFile(roFile, []byte("x"), 0o666)
	os.Chown(roFile, int(uid), int(gid))
	job := jobDir(t, uid, gid)
	shared := filepath.Join(job, "shared.js")
	os.WriteFile(shared, []byte("module.exports = 1"), 0o644) // root-owned
	tmpName := "/tmp/" + token(t)

	ops := []string{
		"read:" + secret, "ls:" + secretDir, "ls:/root", "ls:/work", "read:/etc/shadow",
		"ls:/etc/ssl/private", "ls:/sys", "ls:/run",
		"write:/usr/pwned", "write:/etc/pwned", "write:/pwned", "write:/proc/pwned",
		"write:" + filepath.Join(ro, "new"), "append:" + roFile, "append:" + shared,
		"write:" + secret,
		// Controls: what the sandbox must be able to do.
		"read:" + roFile, "read:/etc/passwd", "ls:/usr/bin", "read:/etc/ssl/certs/ca-certificates.crt",
		"write:" + filepath.Join(job, "new"), "write:" + tmpName,
	}
	s := probeSpec(t, "fs", ops...)
	s.Writable, s.ReadOnly = []string{job}, append(s.ReadOnly, ro)
	s.Dir = job
	out, _, err := run(t, s)
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	controls := len(ops) - 6
	for i, op := range ops {
		l := lineFor(t, out, op)
		ok := strings.HasSuffix(l, " ok")
		if i < controls && ok {
			t.Errorf("sandbox could: %s", l)
		}
		if i >= controls && !ok {
			t.Errorf("sandbox could not (control): %s", l)
		}
	}
	if b, _ := os.ReadFile(secret); string(b) != "s3cret" {
		t.Errorf("secret changed: %q", b)
	}
	if _, err := os.Stat(tmpName); err == nil {
		t.Errorf("%s written inside appeared in the host's /tmp", tmpName)
	}
}

// /proc inside lists the sandbox's own processes only: bwrap's init and the probe.
func TestProcShowsOnlySandbox(t *testing.T) {
	out, _, err := run(t, probeSpec(t, "proc"))
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	self := strings.TrimPrefix(lines[len(lines)-1], "self ")
	want := []string{"1 bwrap", self + " probe"}
	if !slices.Equal(lines[:len(lines)-1], want) {
		t.Errorf("/proc inside shows %q, want only %q", lines[:len(lines)-1], want)
	}
	if slices.Contains(lines, fmt.Sprint(os.Getpid())) {
		t.Errorf("the test's own pid %d is visible", os.Getpid())
	}
}

// Two sandboxes at once: B cannot see A's processes, signal them (by host pid or
// kill -1), or write A's Writable dir; A carries on.
func TestSandboxesIsolatedFromEachOther(t *testing.T) {
	uid, gid := sandboxUser(t)
	dirA := jobDir(t, uid, gid)
	sA := probeSpec(t, "echo")
	sA.Writable, sA.Dir = []string{dirA}, dirA
	a := startLive(t, testCtx(t), sA)
	a.expect(t, "ready")
	pidsA := hostPidsWith(t, envValue(sA.Env, "SANDBOX_TOKEN"))
	pidsA = append(pidsA, a.p.Pid())
	targets := make([]string, len(pidsA))
	for i, p := range pidsA {
		targets[i] = fmt.Sprint(p)
	}

	dirB := jobDir(t, uid, gid)
	sB := probeSpec(t, "signal", targets...)
	sB.Writable, sB.Dir = []string{dirB}, dirB
	out, _, err := run(t, sB)
	if err != nil {
		t.Fatalf("signal probe: %v\n%s", err, out)
	}
	for _, p := range targets {
		if l := lineFor(t, out, "kill "+p+":"); !strings.Contains(l, "no such process") {
			t.Errorf("B can reach A's pid: %s", l)
		}
	}
	sB = probeSpec(t, "fs", "write:"+filepath.Join(dirA, "from-b"), "ls:"+dirA, "write:"+filepath.Join(dirB, "mine"))
	sB.Writable, sB.Dir = []string{dirB}, dirB
	out, _, err = run(t, sB)
	if err != nil {
		t.Fatalf("fs probe: %v\n%s", err, out)
	}
	if l := lineFor(t, out, "write:"+filepath.Join(dirA, "from-b")); strings.HasSuffix(l, " ok") {
		t.Errorf("B wrote A's dir: %s", l)
	}
	if l := lineFor(t, out, "ls:"+dirA); strings.HasSuffix(l, " ok") {
		t.Errorf("B lists A's dir: %s", l)
	}
	if l := lineFor(t, out, "write:"+filepath.Join(dirB, "mine")); !strings.HasSuffix(l, " ok") {
		t.Errorf("control: B cannot write its own dir: %s", l)
	}
	fmt.Fprintln(a.stdin, "still-here")
	a.expect(t, "echo still-here")
	a.stdin.Close()
	if err := a.p.Wait(); err != nil {
		t.Errorf("A after B's attacks: %v", err)
	}
}

// A setuid-root binary inside gains nothing: no_new_privs and nosuid binds.
func TestSetuidGainsNothing(t *testing.T) {
	dir, err := os.MkdirTemp("", "sandbox-suid-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	id, err := os.ReadFile("/usr/bin/id")
	if err != nil {
		t.Fatal(err)
	}
	suid := filepath.Join(dir, "id")
	if err := os.WriteFile(suid, id, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(suid, 0o4755|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(suid); st.Mode()&os.ModeSetuid == 0 || os.Geteuid() != 0 {
		t.Skip("cannot make a setuid-root file here (needs root)")
	}
	uid, _ := sandboxUser(t)
	s := probeSpec(t, "exec", suid, "-u")
	s.ReadOnly = append(s.ReadOnly, dir)
	out, _, err := run(t, s)
	if err != nil {
		t.Fatalf("probe: %v\n%s", err, out)
	}
	if strings.TrimSpace(out) != fmt.Sprint(uid) {
		t.Errorf("setuid-root id -u inside says %q, want %d", out, uid)
	}
}

// A fork bomb stops at Limits.Pids; an allocation over Limits.Memory is killed.
// Each has a control run that shows the probe can succeed under a looser limit.
func TestLimitsBite(t *testing.T) {
	r := newRunner(t)
	if r.cg == nil {
		t.Fatalf("limits not enforced here: %s", r.Describe())
	}
	t.Run("pids", func(t *testing.T) {
		const limit = 48
		s := probeSpec(t, "fork")
		s.Env = append(s.Env, "GOMAXPROCS=1")
		s.Limits.Pids = limit
		out, _, err := run(t, s)
		t.Logf("%s (err %v)", strings.TrimSpace(out), err)
		var n int
		var why string
		fmt.Sscanf(out, "started %d, then: %s", &n, &why)
		if !strings.Contains(out, "resource temporarily unavailable") || n >= limit || n < limit/2 {
			t.Errorf("fork bomb under pids %d: %q; want refusal (EAGAIN) after fewer than %d", limit, out, limit)
		}
	})
	t.Run("memory", func(t *testing.T) {
		s := probeSpec(t, "alloc", "192")
		s.Limits.Memory = 64 << 20
		out, p, err := run(t, s)
		t.Logf("over: %q exit %d err %v", out, p.ExitCode(), err)
		if strings.Contains(out, "allocated") || err == nil {
			t.Errorf("192 MiB under a 64 MiB limit: %q, err %v; want killed", out, err)
		}
		s.Limits.Memory = 512 << 20
		out, _, err = run(t, s)
		if !strings.Contains(out, "allocated 192") || err != nil {
			t.Errorf("control, 192 MiB under 512 MiB: %q, err %v", out, err)
		}
	})
	// The quota kills a job whose folders grow past it, whether by bytes or by files, and
	// says which; what it wrote up to then stays for the caller to remove.
	for _, q := range []struct {
		what  string
		limit Limits
		says  string
	}{
		{"bytes", Limits{Disk: 16 << 20}, "more than 16 MiB"},
		{"files", Limits{Files: 2000}, "more than 2000 files"},
		{"deep", Limits{Disk: 16 << 20}, "could not be measured"},
	} {
		t.Run("disk-"+q.what, func(t *testing.T) {
			uid, gid := sandboxUser(t)
			dir := jobDir(t, uid, gid)
			s := probeSpec(t, "fill", dir, q.what)
			s.Writable, s.Limits = []string{dir}, q.limit
			out, _, err := run(t, s)
			t.Logf("%s: %q, err %v", q.what, strings.TrimSpace(out), err)
			if !errors.Is(err, ErrDiskLimit) || !strings.Contains(err.Error(), q.says) {
				t.Errorf("filling its folder under %+v: %v, want ErrDiskLimit saying %q", q.limit, err, q.says)
			}
		})
	}
	t.Run("wall", func(t *testing.T) {
		s := probeSpec(t, "echo")
		s.Limits.Wall = 200 * time.Millisecond
		l := startLive(t, testCtx(t), s) // echo waits on stdin forever
		if err := l.p.Wait(); !errors.Is(err, ErrWallLimit) {
			t.Errorf("Wait past the wall limit: %v, want ErrWallLimit", err)
		}
	})
}

// Every process of a sandbox is in its own cgroup from the start (bwrap too), the
// descriptors bwrap was handed do not reach the command, and the cgroup is removed
// once Wait returns.
func TestCgroupAndDescriptors(t *testing.T) {
	r := newRunner(t)
	if r.cg == nil {
		t.Fatalf("limits not enforced here: %s", r.Describe())
	}
	// A descriptor the worker inherited without close-on-exec, as from its parent.
	leakR, leakW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer leakR.Close()
	defer leakW.Close()
	if _, err := unix.FcntlInt(leakW.Fd(), unix.F_SETFD, 0); err != nil {
		t.Fatal(err)
	}
	s := probeSpec(t, "exec")
	s.Argv = []string{"/usr/bin/sh", "-c", "ls /proc/self/fd; exec " + testBin}
	s.Env = append(s.Env[1:], probeEnv+"=echo")
	l := startLive(t, testCtx(t), s)
	fds := []string{l.expect(t, ""), l.expect(t, ""), l.expect(t, ""), l.expect(t, "")}
	l.expect(t, "ready")
	// ls's own fds: 0, 1, 2 and the one it reads /proc/self/fd through.
	if want := []string{"0", "1", "2", "3"}; !slices.Equal(fds, want) {
		t.Errorf("the command holds fds %v, want %v: bwrap's pipes leaked", fds, want)
	}
	var cgroups []string
	for _, pid := range append(hostPidsWith(t, envValue(s.Env, "SANDBOX_TOKEN")), l.p.Pid()) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cgroup", pid))
		if err != nil {
			continue // sh's ls, already gone
		}
		for _, line := range strings.Split(string(b), "\n") {
			if strings.Contains(line, ":memory:") || strings.Contains(line, ":pids:") || strings.HasPrefix(line, "0::") && r.cg.v2 {
				if !strings.Contains(line, "/signoff/sbx-") {
					t.Errorf("pid %d is outside the sandbox's cgroup: %s", pid, line)
				}
				cgroups = append(cgroups, line)
			}
		}
	}
	if len(cgroups) == 0 {
		t.Fatal("found no sandbox process to check")
	}
	l.p.Kill()
	_ = l.p.Wait()
	for _, parent := range r.cg.parents {
		ents, err := os.ReadDir(parent)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range ents {
			for _, line := range cgroups {
				if e.IsDir() && strings.HasSuffix(line, "/"+e.Name()) {
					t.Errorf("cgroup %s/%s left after Wait", parent, e.Name())
				}
			}
		}
	}
}
