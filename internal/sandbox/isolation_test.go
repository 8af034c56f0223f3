package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
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
// reach in both modes, and so is 10.0.2.2, slirp's alias for the host, in NetEgress.
func TestHostLoopbackUnreachable(t *testing.T) {
	ln, accepted := hostListener(t, "127.0.0.1:0")
	p := port(ln)
	ext := hostIPv4()
	var extLn string
	if ext != "" {
		l, _ := hostListener(t, ext+":0")
		extLn = ext + ":" + port(l)
	}
	for _, mode := range []Network{NetNone, NetEgress} {
		t.Run(mode.String(), func(t *testing.T) {
			targets := []string{"127.0.0.1:" + p, "10.0.2.2:" + p}
			if extLn != "" {
				targets = append(targets, extLn)
			}
			s := probeSpec(t, "dial", targets...)
			s.Net = mode
			out, _, err := run(t, s)
			if err != nil {
				t.Fatalf("probe: %v\n%s", err, out)
			}
			t.Logf("probe:\n%s", out)
			for _, a := range targets[:2] {
				if l := lineFor(t, out, a); !strings.Contains(l, " fail: ") {
					t.Errorf("reached the host's loopback listener: %s", l)
				}
			}
			// Control: egress does route off the box (here to the host's own external
			// address, the nearest thing to the registry), so the probe can succeed.
			if extLn != "" {
				l := lineFor(t, out, extLn)
				if mode == NetEgress && !strings.HasSuffix(l, " ok") {
					t.Errorf("egress cannot reach %s: %s", extLn, l)
				}
				if mode == NetNone && strings.HasSuffix(l, " ok") {
					t.Errorf("NetNone reached %s", extLn)
				}
			}
		})
	}
	if *accepted != 0 {
		t.Errorf("the host loopback listener accepted %d connections", *accepted)
	}
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
