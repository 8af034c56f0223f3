package multihost_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestHostSeesTheRepositoryAnywhere: a host sees the repository read-only, as its working
// directory, at the path the test names it by and at its real path, wherever the clone lives:
// under /tmp (which every host has its own of), with a space in its path, through a symlink
// under /tmp, through one outside it. It runs hostScript's mounts alone, without a network.
func TestHostSeesTheRepositoryAnywhere(t *testing.T) {
	if testing.Short() {
		t.Skip("makes mount namespaces")
	}
	if os.Geteuid() != 0 {
		t.Fatal("the multi-host rig makes mount namespaces: run the tests as root (the test task does)")
	}
	tmp, err := os.MkdirTemp("/tmp", "rig path ")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(tmp) })
	clone := filepath.Join(tmp, "a clone")
	if err := os.Mkdir(clone, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(clone, "go.mod"), []byte("module x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	root, err := os.MkdirTemp("/var/tmp", "signoff-rig-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(root) })
	for _, d := range []string{"bin", "mnt", "other"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	inTmp, outside := filepath.Join(tmp, "link"), filepath.Join(root, "link")
	for _, l := range []string{inTmp, outside} {
		if err := os.Symlink(clone, l); err != nil {
			t.Fatal(err)
		}
	}
	// The host checks, as its program: it is in the repository, sees it at both paths, cannot
	// write it, and sees another host's folder empty.
	const check = `set -e
test "$(pwd)" = "$1"
test -f go.mod && test -f "$2/go.mod"
if touch written 2>/dev/null || touch "$2/written" 2>/dev/null; then echo "the repository is writable"; exit 1; fi
test -z "$(ls -A "$3")"
echo ok`
	for _, repo := range []string{clone, inTmp, outside} {
		r := &rig{t: t, repo: repo, real: clone, root: root, names: []string{"this", "other"}, bin: filepath.Join(root, "bin", "signoff")}
		if err := os.WriteFile(filepath.Join(root, "other", "file"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("unshare", "--mount", "--propagation", "private", "--", "/bin/sh", "-c", hostScript, "sh",
			"/bin/sh", "-c", check, "sh", repo, clone, filepath.Join(root, "other"))
		cmd.Dir = repo
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, r.mountEnv("this")...)
		cmd.Stdin = strings.NewReader("go\n")
		out, err := cmd.CombinedOutput()
		if err != nil || strings.TrimSpace(string(out)) != "ok" {
			t.Errorf("repository named %s: %v\n%s", repo, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(clone, "written")); err == nil {
		t.Error("a host wrote into the repository")
	}
}
