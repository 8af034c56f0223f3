package datadir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestSandboxRootsGoWithTheirDataDir: a root whose data dir is gone is removed the next time
// any root of the same kind is named, unless it was named recently, has a process on record,
// or has no owner record; a root whose data dir exists is kept however old.
func TestSandboxRootsGoWithTheirDataDir(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	old := time.Now().Add(-2 * orphanGrace)
	dirs := t.TempDir()

	mk := func(name string, age time.Time) (dataDir, root string) {
		t.Helper()
		dataDir = filepath.Join(dirs, name)
		if err := os.Mkdir(dataDir, 0o700); err != nil {
			t.Fatal(err)
		}
		root, err := PreviewJobsRoot(dataDir)
		if err != nil {
			t.Fatal(err)
		}
		// What a build leaves behind, to see that the whole tree goes.
		if err := os.MkdirAll(filepath.Join(root, "slots", "app", "node_modules"), 0o711); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(filepath.Join(root, ownerFile), age, age); err != nil {
			t.Fatal(err)
		}
		return dataDir, root
	}
	_, live := mk("live", old)
	goneDir, gone := mk("gone", old)
	recentDir, recent := mk("recent", time.Now())
	busyDir, busy := mk("busy", old)
	if err := os.MkdirAll(filepath.Join(busy, "pids"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(busy, "pids", "job-1"), []byte("123"), 0o600); err != nil {
		t.Fatal(err)
	}
	foreign := filepath.Join(filepath.Dir(live), "0123456789ab")
	if err := os.MkdirAll(foreign, 0o711); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{goneDir, recentDir, busyDir} {
		if err := os.RemoveAll(d); err != nil {
			t.Fatal(err)
		}
	}

	owner, err := os.ReadFile(filepath.Join(live, ownerFile))
	if err != nil || strings.TrimSpace(string(owner)) != filepath.Join(dirs, "live") {
		t.Fatalf("owner record %q, %v", owner, err)
	}
	if fi, err := os.Stat(filepath.Join(live, ownerFile)); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("owner record mode %v, %v: want 0600 (the unprivileged user must not read the data dir's path)", fi.Mode(), err)
	}

	if _, err := PreviewJobsRoot(filepath.Join(dirs, "another")); err != nil {
		t.Fatal(err)
	}
	for root, want := range map[string]bool{live: true, gone: false, recent: true, busy: true, foreign: true} {
		_, err := os.Stat(root)
		if exists := err == nil; exists != want {
			t.Errorf("%s exists %v, want %v", filepath.Base(root), exists, want)
		}
	}

	// The executor's roots and the CLI's own previews follow the same rule.
	exec, err := sandboxRoot(filepath.Join(dirs, "live"), executorBase, "")
	if err != nil || filepath.Dir(exec) != filepath.Join(os.TempDir(), executorBase) {
		t.Fatalf("executor root %s, %v", exec, err)
	}
	auth, err := AuthoringPreviewJobsRoot(filepath.Join(dirs, "live"))
	if err != nil || auth != live+"-authoring" {
		t.Fatalf("authoring root %s, %v (want beside %s)", auth, err, live)
	}
}
