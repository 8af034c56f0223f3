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
