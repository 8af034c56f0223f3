package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// An unsandboxed Runner says so, still drops the uid and ends the command's group, and
// needs no forward: the app is on the host's loopback.
func TestUnsandboxedSaysSoAndDropsTheUID(t *testing.T) {
	r, err := New(Config{Off: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := r.Describe(); !strings.Contains(d, "NOT SANDBOXED") {
		t.Fatalf("Describe = %q", d)
	}
	uid, gid := sandboxUser(t)
	dir := jobDir(t, uid, gid)
	var out strings.Builder
	p, err := r.Start(context.Background(), Spec{
		Argv: []string{"/bin/sh", "-c", "id -u; touch made"}, Dir: dir, Env: []string{"PATH=/usr/bin:/bin"},
		UID: uid, GID: gid, Stdout: &out,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Wait(); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	var st syscall.Stat_t
	if err := syscall.Stat(filepath.Join(dir, "made"), &st); err != nil || st.Uid != uid {
		t.Fatalf("file owner %d (%v), want %d; output %q", st.Uid, err, uid, out.String())
	}
	if addr, stop, err := p.Forward(3000); err != nil || addr != "127.0.0.1:3000" {
		t.Fatalf("Forward = %q, %v", addr, err)
	} else {
		stop()
	}
	if _, err := r.Start(context.Background(), Spec{Argv: []string{"/bin/true"}, Dir: "/", UID: 0, GID: 0}); err == nil {
		t.Fatal("an unsandboxed Runner ran a command as root")
	}
	_ = os.Remove(filepath.Join(dir, "made"))
}
